//! The `ERASED` answer: a record asked for by id that an erasure removed reads as an
//! error saying where it was and when it went, never as "unknown", so that a story's
//! shape stays explainable without its content.

use async_graphql::{ErrorExtensions, ID, Result, SimpleObject};
use ostrakon_core::{EpisodeId, ErasedRef, Namespace};
use ostrakon_engine::Store;

use crate::error::{code, coded};
use crate::exec::context::engine;
use crate::types::scalars::DateTime;

/// What stands in an answer where an erased record was: its kind and id, the batch that
/// held it and when it went — never its content.
#[derive(SimpleObject)]
pub(crate) struct ErasedMarker {
    /// `ENTITY`, `FACT`, `EPISODE` or `INTENTION`.
    pub kind: String,
    /// Its id.
    pub id: ID,
    /// The batch that held it (null until compaction has run).
    pub record_seq: Option<u64>,
    /// The batch that erased it.
    pub erased_in_seq: u64,
    /// When it was erased.
    pub erased_at: DateTime,
}

/// A record's kind, as the API names it, and its id.
pub(crate) fn kind_and_id(record: ErasedRef) -> (&'static str, u64) {
    match record {
        ErasedRef::Entity(id) => ("ENTITY", id.0),
        ErasedRef::Fact(id) => ("FACT", id.0),
        ErasedRef::Episode(id) => ("EPISODE", id.0),
        ErasedRef::Intention(id) => ("INTENTION", id.0),
    }
}

/// The markers of the episodes among `ids` that were erased (the first `first`).
pub(crate) fn erased_episodes(
    store: &Store,
    ns: &Namespace,
    ids: &[EpisodeId],
    first: usize,
) -> Result<Vec<ErasedMarker>> {
    let mut out = Vec::new();
    for id in ids {
        if out.len() >= first {
            break;
        }
        if let Some(mark) = store.erased(ns, ErasedRef::Episode(*id)).map_err(engine)? {
            let (kind, id) = kind_and_id(mark.record);
            out.push(ErasedMarker {
                kind: kind.into(),
                id: ID(id.to_string()),
                record_seq: mark.seq.map(|s| s.0),
                erased_in_seq: mark.erased_in.0,
                erased_at: mark.erased_at.into(),
            });
        }
    }
    Ok(out)
}

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
