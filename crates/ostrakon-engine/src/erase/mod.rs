//! Destroying on purpose: erasing records from a namespace's past, and dropping a namespace.

pub(crate) mod drop;
pub(crate) mod records;
