//! The engine's errors, one type per operation, as a caller meets them: opening a store
//! ([`open::OpenError`]), reading at a read point ([`read::ReadError`]), writing a batch
//! or erasing ([`write::WriteError`]), and the store's own failures that any of them can
//! meet ([`storage::StorageError`]). Each operation's type holds only what that operation
//! can say, so a caller's `match` over it is short and exhaustive.

pub(crate) mod open;
pub(crate) mod read;
pub(crate) mod storage;
pub(crate) mod write;
