//! The applier's last guard: a batch that gives a new record an id the namespace already
//! gave is damage, refused whole before any of it is applied.
//!
//! Ids are a function of the log: a writer numbers a batch's new records after the
//! highest ids of exactly the records before it, so every new record's id is above every
//! id the namespace held when the batch began. A record that reuses an id (a writer that
//! numbered on a state the log never had) would otherwise be skipped — an acknowledged
//! write lost — or read as a new version of another entity — an entity renamed. Versions
//! of an entity ([`Event::EntityDeclared`]) name an existing id on purpose and are not
//! checked here; in logs written before [`Event::EntityCreated`] they also created
//! entities, and still do.

use std::collections::HashSet;

use ostrakon_core::{Event, Seq, Timestamp};

use crate::state::NamespaceIndex;

/// Why a batch cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// Batches must come in order; this one does not follow the last applied.
    #[error("batch {seq} does not follow batch {last}")]
    OutOfOrder {
        /// The batch offered.
        seq: Seq,
        /// The last batch applied.
        last: Seq,
    },
    /// A new record takes an id the namespace had given before (or the batch gives
    /// twice): the log is damaged for this namespace.
    #[error("batch {seq} creates {kind} {id}, an id the namespace had given before (its highest was {high})")]
    IdReused {
        /// The batch.
        seq: Seq,
        /// What kind of record: `entity`, `fact`, `episode` or `intention`.
        kind: &'static str,
        /// The id.
        id: u64,
        /// The highest id of that kind before the batch.
        high: u64,
    },
}

impl NamespaceIndex {
    /// Folds in batch `seq`, committed at `system_time`. Batches must come in order, and
    /// a batch that creates a record under an id given before is damage
    /// ([`NamespaceIndex::admit`]): either is refused whole, and nothing of it applied.
    pub fn apply(&mut self, seq: Seq, system_time: Timestamp, events: &[Event]) -> Result<(), ApplyError> {
        self.admit(seq, events)?;
        self.batches.push(system_time);
        for event in events {
            self.apply_event(seq, event);
        }
        Ok(())
    }

    /// Checks batch `seq` before it is applied: it follows the last batch, and every
    /// record it creates has an id above every id of its kind so far, given once.
    pub fn admit(&self, seq: Seq, events: &[Event]) -> Result<(), ApplyError> {
        let last = self.last_seq();
        if seq.0 != last.0 + 1 {
            return Err(ApplyError::OutOfOrder { seq, last });
        }
        let high = self.high_water();
        let mut given: HashSet<(&'static str, u64)> = HashSet::new();
        let mut check = |kind: &'static str, id: u64, high: u64| {
            if id <= high || !given.insert((kind, id)) {
                return Err(ApplyError::IdReused { seq, kind, id, high });
            }
            Ok(())
        };
        for event in events {
            match event {
                Event::EntityCreated(e) => check("entity", e.id.0, high.entity)?,
                Event::FactAsserted(f) => check("fact", f.id.0, high.fact)?,
                Event::EpisodeRecorded(e) => check("episode", e.id.0, high.episode)?,
                Event::IntentionAdded(i) => check("intention", i.id.0, self.max_intention())?,
                _ => {}
            }
        }
        Ok(())
    }
}
