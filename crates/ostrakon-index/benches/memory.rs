//! Resident bytes of a namespace's state, counted by the allocator: per fact, per entity
//! and per episode, for the shapes of the peer workload (`benches/peer/` at the root).
//!
//! Run with `cargo bench -p ostrakon-index --bench memory` (`OSTRAKON_BENCH_SUBJECTS` sets the
//! number of subjects, 200,000 by default as in the peer workload; 2,000 under
//! `cargo test`). It prints one table; nothing is asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::alloc::System;
use std::time::Instant;

use ostrakon_core::{
    Cardinality, Entity, EntityId, Episode, EpisodeId, Event, Fact, FactId, Interval, Literal, MentionSource,
    Polarity, PredicateDef, Seq, Timestamp, Value, ValueType,
};
use ostrakon_index::NamespaceIndex;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static ALLOC: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes the allocator holds now (as asked for, without its own overhead).
fn live() -> usize {
    let s = ALLOC.stats();
    // A reallocation's growth or shrinkage is already in `bytes_allocated` or
    // `bytes_deallocated`; `bytes_reallocated` repeats it.
    s.bytes_allocated - s.bytes_deallocated
}

const DAY: i64 = 86_400_000_000;
const HOUR: i64 = 3_600_000_000;
/// 2020-01-01T00:00:00Z.
const BASE: i64 = 1_577_836_800_000_000;

fn subjects() -> usize {
    let test = std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench");
    std::env::var("OSTRAKON_BENCH_SUBJECTS").ok().and_then(|s| s.parse().ok()).unwrap_or(if test {
        2_000
    } else {
        200_000
    })
}

/// Folds `batches` into a fresh state, one batch per element, a second apart, with the
/// lookups built on first use built (as an open namespace has them).
fn fold(batches: &[Vec<Event>]) -> NamespaceIndex {
    let mut index = NamespaceIndex::new();
    for (i, events) in batches.iter().enumerate() {
        let seq = Seq(i as u64 + 1);
        if let Err(e) = index.apply(seq, Timestamp::from_micros(BASE + 1_000_000 * i as i64), events) {
            panic!("batch {seq}: {e}");
        }
    }
    index.warm();
    index
}

fn entity(e: usize) -> Entity {
    Entity {
        id: EntityId(e as u64),
        name: format!("e{e}"),
        aliases: vec![],
        kind: None,
        properties: Default::default(),
    }
}

/// The peer workload: `n` entities, ten successive integer values of one ONE predicate
/// each, and for every tenth entity the sixth value corrected. Batches of 10,000 facts.
fn peer(n: usize) -> (Vec<Vec<Event>>, usize) {
    let mut batches = vec![vec![Event::PredicateDefined(PredicateDef {
        name: "attr1".into(),
        cardinality: Cardinality::One,
        value_type: ValueType::Integer,
        description: None,
        decay: None,
    })]];
    for chunk in (1..=n).collect::<Vec<_>>().chunks(10_000) {
        batches.push(chunk.iter().map(|&e| Event::EntityDeclared(entity(e))).collect());
    }
    let mut next = 0u64;
    let mut facts = 0;
    let mut batch = Vec::new();
    for k in 0..10i64 {
        for e in 1..=n {
            let from = BASE + k * 30 * DAY + (e as i64 % 97) * HOUR;
            let v = e as i64 * 100 + k;
            next += 1;
            let fact = |id: u64, v: i64, supersedes: Option<FactId>, to: Option<i64>| Fact {
                id: FactId(id),
                subject: EntityId(e as u64),
                predicate: "attr1".into(),
                object: Value::Literal(Literal::Integer(v)),
                valid: Interval::new("valid", Timestamp::from_micros(from), to.map(Timestamp::from_micros))
                    .unwrap(),
                confidence: 1.0,
                polarity: Polarity::Asserted,
                provenance: vec![],
                supersedes,
                importance: None,
                correction: false,
            };
            batch.push(Event::FactAsserted(fact(next, v, None, None)));
            facts += 1;
            if e % 10 == 0 && k == 5 {
                let to = BASE + (k + 1) * 30 * DAY + (e as i64 % 97) * HOUR;
                let original = FactId(next);
                next += 1;
                batch.push(Event::FactAsserted(fact(next, -v, Some(original), Some(to))));
                facts += 1;
            }
            if batch.len() >= 10_000 {
                batches.push(std::mem::take(&mut batch));
            }
        }
    }
    batches.push(batch);
    (batches, facts)
}

/// `n` declared entities with a name, an alias and a kind.
fn entities(n: usize) -> Vec<Vec<Event>> {
    (1..=n)
        .collect::<Vec<_>>()
        .chunks(10_000)
        .map(|chunk| {
            chunk
                .iter()
                .map(|&e| {
                    Event::EntityDeclared(Entity {
                        aliases: vec![format!("alias {e}")],
                        kind: Some("person".into()),
                        name: format!("person {e}"),
                        ..entity(e)
                    })
                })
                .collect()
        })
        .collect()
}

/// `n` episodes of a chat turn's length on four threads, each mentioning one of 100
/// entities.
fn episodes(n: usize) -> Vec<Vec<Event>> {
    let mut batches = vec![entities(100).concat()];
    for chunk in (1..=n).collect::<Vec<_>>().chunks(1_000) {
        let mut events = Vec::new();
        for &i in chunk {
            let id = EpisodeId(i as u64);
            events.push(Event::EpisodeRecorded(Episode {
                id,
                text: format!(
                    "Speaker {}: turn {i} of the conversation, about the weekend and the new job.",
                    i % 2
                ),
                occurred_at: Timestamp::from_micros(BASE + i as i64 * 60_000_000),
                thread: Some(format!("session {}", i % 4)),
                source: None,
                role: None,
                external_id: Some(format!("D{}:{}", i / 100, i % 100)),
                importance: None,
            }));
            events.push(Event::Mentioned {
                episode: id,
                entities: vec![EntityId((i % 100) as u64 + 1)],
                source: MentionSource::NameMatch,
            });
        }
        batches.push(events);
    }
    batches
}

/// Folds the batches and returns (resident bytes, seconds). The events stay alive
/// until the state is counted, so that only what the state holds is counted. Prints the
/// state's own estimate beside the count.
fn measure(batches: Vec<Vec<Event>>) -> (usize, f64) {
    let before = live();
    let started = Instant::now();
    let index = fold(&batches);
    let secs = started.elapsed().as_secs_f64();
    let bytes = live() - before;
    let estimate = index.heap_bytes();
    eprintln!(
        "counted {bytes} B, estimated {estimate} B ({:+.1} %)",
        (estimate as f64 / bytes as f64 - 1.0) * 100.0
    );
    drop(index);
    (bytes, secs)
}

fn main() {
    let n = subjects();
    let (batches, facts) = peer(n);
    let (entities_only, _) = measure(entities_from(&batches));
    let (with_facts, secs) = measure(batches);
    let per_fact = (with_facts - entities_only) as f64 / facts as f64;
    println!("| state of | count | resident bytes | bytes each | fold |");
    println!("|---|---|---|---|---|");
    println!(
        "| peer workload: facts beyond their entities | {facts} | {} | {per_fact:.0} | {secs:.2} s |",
        with_facts - entities_only
    );
    let (bytes, secs) = measure(entities(n));
    println!(
        "| entities (name, alias, kind) | {n} | {bytes} | {:.0} | {secs:.2} s |",
        bytes as f64 / n as f64
    );
    let m = n / 2;
    let base = measure(entities(100)).0;
    let (bytes, secs) = measure(episodes(m));
    println!(
        "| episodes (chat turn, thread, external id, one mention) | {m} | {} | {:.0} | {secs:.2} s |",
        bytes - base,
        (bytes - base) as f64 / m as f64
    );
}

/// The entity declarations of the peer workload alone.
fn entities_from(batches: &[Vec<Event>]) -> Vec<Vec<Event>> {
    batches
        .iter()
        .map(|b| {
            b.iter()
                .filter(|e| matches!(e, Event::EntityDeclared(_) | Event::PredicateDefined(_)))
                .cloned()
                .collect()
        })
        .filter(|b: &Vec<Event>| !b.is_empty())
        .collect()
}
