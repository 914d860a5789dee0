//! Shared helpers for the engine's tests (and the workspace's, which include this file):
//! a store with a pinned clock and terse constructors for entities, facts and times.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use mnemo_engine::core::{
    Cardinality, EntityId, FactId, Interval, Literal, Namespace, Polarity, PredicateDef, Seq, Status,
    TimeZone, Timestamp, ValueType,
};
use mnemo_engine::{
    Change, EntityRef, FactFilter, FactView, MemStorage, NewEntity, NewFact, ObjectRef, ReadAt, Receipt,
    Scope, Store,
};

/// A time from text (RFC 3339, date or partial date), in UTC.
pub fn t(s: &str) -> Timestamp {
    Timestamp::parse("t", s, &TimeZone::Utc).unwrap()
}

/// `[from, to)`; `to` may be `None`.
pub fn iv(from: &str, to: Option<&str>) -> Interval {
    Interval::new("valid", t(from), to.map(t)).unwrap()
}

/// A manual clock that only moves when told to.
#[derive(Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn set(&self, at: &str) {
        self.0.store(t(at).as_micros(), Ordering::SeqCst);
    }

    pub fn advance_seconds(&self, seconds: i64) {
        self.0.fetch_add(seconds * 1_000_000, Ordering::SeqCst);
    }
}

/// A store in memory with a manual clock starting at 2030-01-01, and one namespace.
pub struct Fixture {
    pub store: Store,
    pub storage: MemStorage,
    pub clock: ManualClock,
    pub ns: Namespace,
}

impl Fixture {
    pub fn new() -> Self {
        let storage = MemStorage::new();
        let clock = ManualClock(Arc::new(AtomicI64::new(t("2030-01-01").as_micros())));
        let c = clock.clone();
        let store = Store::with_storage(
            Arc::new(storage.clone()),
            Arc::new(move || Timestamp::from_micros(c.0.load(Ordering::SeqCst))),
        )
        .unwrap();
        Fixture { store, storage, clock, ns: Namespace::new("ns", "test").unwrap() }
    }

    /// Reopens the same storage: every index rebuilt from the log.
    pub fn reopen(&self) -> Store {
        let c = self.clock.clone();
        Store::with_storage(
            Arc::new(self.storage.clone()),
            Arc::new(move || Timestamp::from_micros(c.0.load(Ordering::SeqCst))),
        )
        .unwrap()
    }

    pub fn append(&self, changes: Vec<Change>) -> Receipt {
        self.store.append(&self.ns, changes).unwrap()
    }

    pub fn entity(&self, name: &str) -> EntityId {
        self.append(vec![Change::DeclareEntity(NewEntity { name: name.into(), ..NewEntity::default() })])
            .entity(0)
            .unwrap()
    }

    pub fn define(&self, predicate: &str, cardinality: Cardinality) {
        self.append(vec![Change::DefinePredicate(PredicateDef {
            name: predicate.into(),
            cardinality,
            value_type: ValueType::Any,
            description: None,
            decay: None,
        })]);
    }

    /// Asserts one fact in its own batch; returns its id and batch.
    pub fn assert(&self, fact: NewFact) -> (FactId, Seq) {
        let r = self.append(vec![Change::AssertFact(fact)]);
        (r.fact(0).unwrap(), r.seq)
    }

    /// Values of `subject.predicate` in force at (T, S), as display strings, sorted.
    pub fn values(&self, subject: EntityId, predicate: &str, at: ReadAt) -> Vec<String> {
        let filter = FactFilter { subject: Some(subject), predicate: Some(predicate.into()), object: None };
        let mut v: Vec<String> = self
            .store
            .facts(&self.ns, &filter, at, Scope::InForce)
            .unwrap()
            .value
            .iter()
            .map(|f| self.show(&f.fact.object))
            .collect();
        v.sort();
        v
    }

    /// Every version of a slot with its status at (T, S).
    pub fn history(&self, subject: EntityId, predicate: &str, at: ReadAt) -> Vec<FactView> {
        self.store.history(&self.ns, subject, predicate, at).unwrap().value
    }

    pub fn status_of(&self, subject: EntityId, predicate: &str, fact: FactId, at: ReadAt) -> Status {
        self.history(subject, predicate, at).into_iter().find(|f| f.fact.id == fact).unwrap().status
    }

    /// An entity's name, or a literal's text.
    pub fn show(&self, v: &mnemo_engine::core::Value) -> String {
        match v {
            mnemo_engine::core::Value::Entity(id) => {
                self.store.inspect(&self.ns, |i| i.entity(*id).map(|e| e.name.clone())).unwrap()
            }
            mnemo_engine::core::Value::Literal(Literal::String(s)) => s.clone(),
            mnemo_engine::core::Value::Literal(l) => l.to_string(),
        }
    }
}

/// `subject predicate object` over `valid`, positive, confidence 1.
pub fn fact(subject: EntityId, predicate: &str, object: EntityId, valid: Interval) -> NewFact {
    NewFact::new(EntityRef::Id(subject), predicate, ObjectRef::Entity(EntityRef::Id(object)), valid)
}

/// A literal-valued fact.
pub fn prop(subject: EntityId, predicate: &str, value: Literal, valid: Interval) -> NewFact {
    NewFact::new(EntityRef::Id(subject), predicate, ObjectRef::Literal(value), valid)
}

/// The negation of `subject predicate object` over `valid`.
pub fn denial(subject: EntityId, predicate: &str, object: EntityId, valid: Interval) -> NewFact {
    NewFact { polarity: Polarity::Negated, ..fact(subject, predicate, object, valid) }
}
