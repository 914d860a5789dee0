//! Records listed with their retention, as the `recall` mutation and the `recallable` /
//! `forecast` queries answer them.

use std::sync::Arc;

use async_graphql::{Context, Object, Result, SimpleObject};
use ostrakon_core::RecordRef;

use crate::exec::context::{Pin, engine, store};
use crate::objects::graph::{EntityObject, EpisodeObject, FactObject};
use crate::types::paging::Basis;
use crate::types::retention::RecordKind;
use crate::types::scalars::DateTime;

/// One record with its retention, as `recallable` and `forecast` list them.
pub(crate) struct RecordItem {
    pub(crate) pin: Arc<Pin>,
    pub(crate) record: RecordRef,
    pub(crate) dormant_at: Option<ostrakon_core::Timestamp>,
}

#[Object]
impl RecordItem {
    /// Its kind.
    async fn kind(&self) -> RecordKind {
        match self.record {
            RecordRef::Fact(_) => RecordKind::Fact,
            RecordRef::Entity(_) => RecordKind::Entity,
            RecordRef::Episode(_) => RecordKind::Episode,
        }
    }

    /// Its retention at the read's clock (for a forecast: at the window's start).
    async fn retention(&self, ctx: &Context<'_>) -> Result<f64> {
        let state = self.pin.reader(store(ctx)?).trace(self.record).map_err(engine)?.value;
        Ok(state.map_or(0.0, |s| s.retention))
    }

    /// When it turns dormant (forecasts only).
    async fn dormant_at(&self) -> Option<DateTime> {
        self.dormant_at.map(DateTime::from)
    }

    /// The fact, when it is one.
    async fn fact(&self, ctx: &Context<'_>) -> Result<Option<FactObject>> {
        Ok(match self.record {
            RecordRef::Fact(id) => FactObject::load(store(ctx)?, &self.pin, id),
            _ => None,
        })
    }

    /// The entity, when it is one.
    async fn entity(&self, ctx: &Context<'_>) -> Result<Option<EntityObject>> {
        Ok(match self.record {
            RecordRef::Entity(id) => EntityObject::load(store(ctx)?, &self.pin, id)?,
            _ => None,
        })
    }

    /// The episode, when it is one.
    async fn episode(&self, ctx: &Context<'_>) -> Result<Option<EpisodeObject>> {
        Ok(match self.record {
            RecordRef::Episode(id) => EpisodeObject::load(store(ctx)?, &self.pin, id)?,
            _ => None,
        })
    }
}

/// A list of records with the point it was read at.
#[derive(SimpleObject)]
pub(crate) struct RecordList {
    /// The point it was read at.
    pub basis: Basis,
    /// The records.
    pub items: Vec<RecordItem>,
}
