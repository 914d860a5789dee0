//! What an episode stated that no longer holds, as a GraphQL object: the fact, its status,
//! since when, what holds instead, and the mark in the words a context block uses.

use std::sync::Arc;

use async_graphql::{Context, Object, Result};
use ostrakon_engine::views::Outdated;

use crate::exec::context::Pin;
use crate::exec::context::store;
use crate::objects::graph::FactObject;
use crate::objects::records::OutdatedMark;
use crate::types::enums::FactStatus;
use crate::types::scalars::DateTime;

#[Object(name = "OutdatedStatement")]
impl OutdatedMark {
    /// The fact the episode stated, as it stands at the read's point.
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        Ok(FactObject::load(store(ctx)?, &self.pin, self.mark.fact))
    }

    /// Why it does not hold: SUPERSEDED, NEGATED, CONTRADICTED, RETRACTED or ENDED.
    async fn status(&self) -> FactStatus {
        self.mark.status.into()
    }

    /// Whether a correction replaced it (with RETRACTED).
    async fn corrected(&self) -> bool {
        self.mark.corrected
    }

    /// The valid time from which it stopped holding (none for a retraction: it never held).
    async fn since(&self) -> Option<DateTime> {
        self.mark.since.map(Into::into)
    }

    /// What holds instead: the fact that beat or corrected it, else the facts in force in
    /// its slot (at most three).
    async fn replaced_by(&self, ctx: &Context<'_>) -> Result<Vec<FactObject>> {
        Ok(FactObject::load_many(store(ctx)?, &self.pin, &self.mark.replaced_by))
    }

    /// The mark in words, as the context block shows it after the episode.
    async fn note(&self) -> &str {
        &self.mark.note
    }
}

impl OutdatedMark {
    pub(crate) fn new(pin: &Arc<Pin>, mark: Outdated) -> Self {
        OutdatedMark { pin: Arc::clone(pin), mark }
    }
}
