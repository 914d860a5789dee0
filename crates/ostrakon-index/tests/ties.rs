//! Many values at one instant on a cardinality-one slot cost linear work, counted by the
//! allocator rather than timed: folding them in, and reading the slot's history with
//! every fact's contradictions. They contradict each other pairwise (n·(n − 1) pairs),
//! which each fact used to list, and its reason named them all: 19,500 tied values took
//! 8 GB and half a minute.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::System;

use ostrakon_core::{
    Cardinality, Entity, EntityId, Event, Fact, FactId, Interval, Literal, Polarity, PredicateDef, Seq,
    Status, Timestamp, Value, ValueType, View,
};
use ostrakon_index::NamespaceIndex;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static ALLOC: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes asked of the allocator so far.
fn allocated() -> usize {
    ALLOC.stats().bytes_allocated
}

/// A slot of `n` values all valid from one instant, in one batch.
fn tied(n: u64) -> NamespaceIndex {
    let mut index = NamespaceIndex::new();
    let define = PredicateDef {
        cardinality: Cardinality::One,
        value_type: ValueType::Any,
        ..PredicateDef::undeclared("p")
    };
    let entity = Entity {
        id: EntityId(1),
        name: "A".into(),
        aliases: vec![],
        kind: None,
        properties: Default::default(),
    };
    index
        .apply(
            Seq(1),
            Timestamp::from_micros(1),
            &[Event::PredicateDefined(define), Event::EntityCreated(entity)],
        )
        .expect("batch 1 applies");
    let from = Timestamp::from_micros(1_000);
    let facts: Vec<Event> = (0..n)
        .map(|i| {
            Event::FactAsserted(Fact {
                id: FactId(i + 1),
                subject: EntityId(1),
                predicate: "p".into(),
                object: Value::Literal(Literal::Integer(i as i64)),
                valid: Interval::open(from),
                confidence: 1.0,
                polarity: Polarity::Asserted,
                provenance: vec![],
                supersedes: None,
                importance: None,
                correction: false,
            })
        })
        .collect();
    index.apply(Seq(2), Timestamp::from_micros(2), &facts).expect("batch 2 applies");
    index
}

/// Bytes allocated to fold `n` tied values, and to read their slot's history.
fn work(n: u64) -> (usize, usize) {
    let before = allocated();
    let index = tied(n);
    let folded = allocated() - before;
    let view = View { valid_at: Timestamp::from_micros(5_000), known_at: Seq(2) };
    let before = allocated();
    let history = index.history(EntityId(1), "p", view);
    let read = allocated() - before;
    assert_eq!(history.len() as u64, n);
    // The highest-ranked stands; each of the others is contradicted by it; every one
    // contradicts all the others, and says so in a reason of bounded length.
    let current: Vec<_> = history.iter().filter(|f| f.status == Status::Current).collect();
    assert_eq!(current.len(), 1);
    for f in &history {
        assert_eq!(f.contradicts.len() as u64, n - 1);
        assert!(f.reason.len() < 300, "{}", f.reason);
    }
    let first = history[0].contradicts.first(3);
    assert_eq!(first, vec![FactId(2), FactId(3), FactId(4)]);
    (folded, read)
}

#[test]
fn tied_values_cost_linear_work() {
    let (small, large) = (2_000, 8_000);
    let (fold_small, read_small) = work(small);
    let (fold_large, read_large) = work(large);
    // Four times the values: about four times the bytes (quadratic work would be
    // sixteen times).
    let ratio = |a: usize, b: usize| b as f64 / a as f64;
    assert!(ratio(fold_small, fold_large) < 6.0, "folding: {fold_small} then {fold_large} bytes");
    assert!(ratio(read_small, read_large) < 6.0, "reading: {read_small} then {read_large} bytes");
}
