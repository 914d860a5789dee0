//! The schema's scalars, enums, inputs and the plain output types that name no other object.

pub(crate) mod enums;
pub(crate) mod info;
pub(crate) mod input;
pub(crate) mod paging;
pub(crate) mod retention;
pub(crate) mod scalars;
