//! The `ERASED` answer: a record asked for by id that an erasure removed reads as an
//! error saying where it was and when it went, never as "unknown", so that a story's
//! shape stays explainable without its content.

use async_graphql::{ErrorExtensions, Result};
use mnemo_core::{ErasedRef, Namespace};
use mnemo_engine::Store;

use crate::context::engine;
use crate::error::{code, coded};

/// `Err(ERASED)` when `record` was erased, with its batch and the erasure's in the
/// error's extensions.
pub(crate) fn refuse_erased(store: &Store, ns: &Namespace, record: ErasedRef) -> Result<()> {
    let Some(mark) = store.erased(ns, record).map_err(engine)? else { return Ok(()) };
    let message = format!(
        "{record} was erased in batch {} at {}{}",
        mark.erased_in.0,
        mark.erased_at,
        mark.seq.map(|s| format!(" (it was recorded in batch {})", s.0)).unwrap_or_default()
    );
    Err(coded(code::ERASED, message).extend_with(|_, e| {
        e.set("erasedInSeq", mark.erased_in.0);
        e.set("erasedAt", mark.erased_at.to_string());
        if let Some(seq) = mark.seq {
            e.set("recordSeq", seq.0);
        }
    }))
}
