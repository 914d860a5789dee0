//! Prospective memory over GraphQL: intentions, their triggers and firings.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, InputObject, Object, Result, SimpleObject};
use ostrakon_core::Trigger;
use ostrakon_engine::{Store, change::NewTrigger, views::Due, views::DueBecause, views::IntentionView};

use crate::exec::context::{Pin, store};
use crate::objects::graph::{EntityObject, EpisodeObject};
use crate::types::input::{EntityRefInput, entity_ref, invalid};
use crate::types::scalars::DateTime;

/// Something the agent means to do later.
pub(crate) struct IntentionObject {
    pub(crate) pin: Arc<Pin>,
    pub(crate) view: IntentionView,
}

/// Where an intention stands at the read's clock.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum IntentionStatus {
    /// It can still fire.
    Pending,
    /// It fired and does not repeat.
    Fired,
    /// It was cancelled.
    Cancelled,
    /// Its expiry has passed.
    Expired,
}

/// What makes an intention due.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum TriggerKind {
    /// A time.
    At,
    /// A mention of one of its entities.
    Mentions,
    /// Closeness in meaning to a cue.
    Cue,
}

/// One firing of an intention.
#[derive(SimpleObject)]
pub(crate) struct Firing {
    /// The batch that recorded it.
    pub seq: u64,
    /// When it fired (the episode's occurrence, or the trigger's time).
    pub at: DateTime,
    /// The episode that triggered it, if one did.
    pub episode: Option<EpisodeObject>,
}

#[Object(name = "Intention")]
impl IntentionObject {
    /// Its id.
    async fn id(&self) -> ID {
        ID(self.view.intention.id.0.to_string())
    }

    /// What to do.
    async fn payload(&self) -> &str {
        &self.view.intention.payload
    }

    /// The kind of its trigger.
    async fn trigger(&self) -> TriggerKind {
        match self.view.intention.trigger {
            Trigger::At(_) => TriggerKind::At,
            Trigger::Mentions(_) => TriggerKind::Mentions,
            Trigger::Cue { .. } => TriggerKind::Cue,
        }
    }

    /// For a time trigger, the time.
    async fn at(&self) -> Option<DateTime> {
        match self.view.intention.trigger {
            Trigger::At(t) => Some(t.into()),
            _ => None,
        }
    }

    /// For a mention trigger, the entities.
    async fn entities(&self, ctx: &Context<'_>) -> Result<Vec<EntityObject>> {
        let store = store(ctx)?;
        Ok(match &self.view.intention.trigger {
            Trigger::Mentions(es) => es
                .iter()
                .filter_map(|e| EntityObject::load(store, &self.pin, *e).transpose())
                .collect::<Result<_>>()?,
            _ => Vec::new(),
        })
    }

    /// For a cue trigger, the cue and its threshold.
    async fn cue(&self) -> Option<&str> {
        match &self.view.intention.trigger {
            Trigger::Cue { text, .. } => Some(text),
            _ => None,
        }
    }

    /// For a cue trigger, the similarity at or above which it fires.
    async fn threshold(&self) -> Option<f64> {
        match &self.view.intention.trigger {
            Trigger::Cue { threshold, .. } => Some((f64::from(*threshold) * 1e6).round() / 1e6),
            _ => None,
        }
    }

    /// After this it is never due.
    async fn expires_at(&self) -> Option<DateTime> {
        self.view.intention.expires_at.map(Into::into)
    }

    /// Higher first.
    async fn priority(&self) -> i32 {
        self.view.intention.priority
    }

    /// Whether it stays after firing.
    async fn repeat(&self) -> bool {
        self.view.intention.repeat
    }

    /// Where it stands at the read's clock (`at`).
    async fn status(&self) -> IntentionStatus {
        let v = &self.view;
        if v.cancelled.is_some() {
            IntentionStatus::Cancelled
        } else if !v.intention.repeat && !v.fired.is_empty() {
            IntentionStatus::Fired
        } else if v.intention.expires_at.is_some_and(|x| self.pin.basis.at >= x) {
            IntentionStatus::Expired
        } else {
            IntentionStatus::Pending
        }
    }

    /// The batch that added it.
    async fn added_seq(&self) -> u64 {
        self.view.added.0
    }

    /// Its firings, in the order they were recorded (the first `first`).
    async fn firings(&self, ctx: &Context<'_>, #[graphql(default = 100)] first: i32) -> Result<Vec<Firing>> {
        let first = crate::types::paging::page_size(ctx, Some(first))?;
        let store = store(ctx)?;
        self.view
            .fired
            .iter()
            .take(first)
            .map(|(seq, episode, at)| {
                let episode =
                    episode.map(|e| EpisodeObject::load(store, &self.pin, e)).transpose()?.flatten();
                Ok(Firing { seq: seq.0, at: (*at).into(), episode })
            })
            .collect::<Result<_>>()
    }
}

/// Why an intention is due.
#[derive(Enum, Copy, Clone, Eq, PartialEq, Debug)]
pub enum DueReason {
    /// Its time has come.
    Time,
    /// The message names one of its entities.
    Mention,
    /// The message is close in meaning to its cue.
    Cue,
}

/// A pending intention that is due now.
#[derive(SimpleObject)]
pub(crate) struct DueIntention {
    /// The intention.
    pub intention: IntentionObject,
    /// Why it is due.
    pub reason: DueReason,
    /// For a mention, the entity named.
    pub entity: Option<EntityObject>,
    /// For a cue, the similarity.
    pub similarity: Option<f64>,
}

pub(crate) fn due(store: &Store, pin: &Arc<Pin>, due: Vec<Due>) -> Result<Vec<DueIntention>> {
    due.into_iter()
        .map(|d| {
            let (reason, entity, similarity) = match d.because {
                DueBecause::Time => (DueReason::Time, None, None),
                DueBecause::Mentioned(e) => (DueReason::Mention, EntityObject::load(store, pin, e)?, None),
                DueBecause::Cue(s) => (DueReason::Cue, None, Some((f64::from(s) * 1e6).round() / 1e6)),
            };
            Ok(DueIntention {
                intention: IntentionObject { pin: Arc::clone(pin), view: d.intention },
                reason,
                entity,
                similarity,
            })
        })
        .collect()
}

/// A trigger: exactly one of `at`, `entities` or `cue`.
#[derive(InputObject)]
pub(crate) struct TriggerInput {
    /// Due when this time comes.
    pub at: Option<DateTime>,
    /// Due when an episode (or message) mentions one of these entities.
    pub entities: Option<Vec<EntityRefInput>>,
    /// Due when an episode (or message) is close in meaning to this cue.
    pub cue: Option<String>,
    /// The cue's vector, for namespaces whose clients send vectors.
    pub cue_vector: Option<Vec<f64>>,
    /// Cosine similarity at or above which a cue trigger fires, in (0, 1] (default 0.6).
    pub threshold: Option<f64>,
}

/// Default similarity for cue triggers.
pub(crate) const DEFAULT_CUE_THRESHOLD: f32 = 0.6;

impl TriggerInput {
    pub(crate) fn resolve(
        &self,
        store: &Store,
        ns: &ostrakon_core::Namespace,
        time: impl Fn(&DateTime) -> Result<ostrakon_core::Timestamp>,
    ) -> Result<NewTrigger> {
        let given =
            [self.at.is_some(), self.entities.is_some(), self.cue.is_some()].iter().filter(|x| **x).count();
        if given != 1 {
            return Err(invalid("trigger", given, "give exactly one of at, entities and cue"));
        }
        if let Some(at) = &self.at {
            return Ok(NewTrigger::At(time(at)?));
        }
        if let Some(es) = &self.entities {
            let refs = es
                .iter()
                .enumerate()
                .map(|(i, e)| entity_ref(format_args!("trigger.entities[{i}]"), e))
                .collect::<Result<Vec<_>>>()?;
            return Ok(NewTrigger::Mentions(refs));
        }
        let text = self.cue.clone().unwrap_or_default();
        let threshold = self.threshold.map_or(DEFAULT_CUE_THRESHOLD, |t| t as f32);
        let vector = match &self.cue_vector {
            Some(v) => v.iter().map(|x| *x as f32).collect(),
            None => store.cue_vector(ns, &text).map_err(crate::exec::context::engine)?,
        };
        Ok(NewTrigger::Cue { text, vector, threshold })
    }
}

/// What `fireDueIntentions` recorded.
#[derive(SimpleObject)]
pub(crate) struct FiringPayload {
    /// The batch; null if nothing fired.
    pub seq: Option<u64>,
    /// The intentions that fired, as they stand after.
    pub fired: Vec<IntentionObject>,
}
