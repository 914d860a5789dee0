//! Counts in force carried forward batch by batch: after every write (facts asserted,
//! ended, retracted, withdrawn; now and then a merge or a predicate's cardinality, after
//! which the count is made whole), the count in force at the latest S — read from the
//! sweep carried forward from the previous one — equals the count resolved slot by slot,
//! at many T, for one predicate and for all; so does the number of subjects holding a
//! predicate at each step of a series; and a kept older S still answers as it did.

use crate::common::{Fixture, iv, prop, t};
use ostrakon_engine::core::{Cardinality, EntityId, FactId, GroupBy, Literal, Seq, Step};
use ostrakon_engine::views::SeriesQuery;
use ostrakon_engine::{Change, KnownAt, ReadAt};

/// The count read from the sweeps.
fn count(fx: &Fixture, predicate: Option<&str>, at: ReadAt) -> u64 {
    fx.store.at(&fx.ns, at).and_then(|r| r.aggregate(predicate, GroupBy::Nothing)).unwrap().value[0].count
}

/// The same count resolved slot by slot: the per-subject groups, summed.
fn resolved(fx: &Fixture, predicate: Option<&str>, at: ReadAt) -> u64 {
    fx.store
        .at(&fx.ns, at)
        .and_then(|r| r.aggregate(predicate, GroupBy::Subject))
        .unwrap()
        .value
        .iter()
        .map(|g| g.count)
        .sum()
}

fn at(year: u64, seq: Option<Seq>) -> ReadAt {
    let valid = t(&format!("{year}-06-01"));
    match seq {
        Some(s) => ReadAt { known_at: KnownAt::Seq(s), ..ReadAt::valid(valid) },
        None => ReadAt::valid(valid),
    }
}

#[test]
fn counts_carried_forward_through_writes_equal_counts_resolved_whole() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let people: Vec<EntityId> =
        ["Ada", "Bob", "Cy", "Dee", "Eve", "Fay"].iter().map(|n| fx.entity(n)).collect();
    let mut seed = 11u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut facts: Vec<FactId> = Vec::new();
    let mut kept: Vec<(Seq, u64)> = Vec::new();
    for step in 0..400 {
        let who = people[next(people.len() as u64) as usize];
        let predicate = ["livesIn", "likes", "worksAt"][next(3) as usize];
        let from = 2000 + next(20);
        let to = (next(3) == 0).then(|| from + 1 + next(8));
        let change = match next(20) {
            0..=11 => {
                let value = Literal::String(["tea", "Lyon", "Oslo", "chess"][next(4) as usize].into());
                let (from, to) = (from.to_string(), to.map(|y| y.to_string()));
                Change::AssertFact(prop(who, predicate, value, iv(&from, to.as_deref())))
            }
            12..=13 if !facts.is_empty() => Change::EndFact {
                fact: facts[next(facts.len() as u64) as usize],
                valid_to: t(&format!("{}-01-01", 2005 + next(20))),
            },
            14..=15 if !facts.is_empty() => {
                Change::RetractFact { fact: facts[next(facts.len() as u64) as usize], reason: None }
            }
            16 if !facts.is_empty() => Change::WithdrawStatement {
                statement: facts[next(facts.len() as u64) as usize],
                reason: None,
            },
            17 => {
                let other = people[next(people.len() as u64) as usize];
                if other == who {
                    continue;
                }
                Change::MergeEntities { from: other, into: who }
            }
            18 => {
                let cardinality = if next(2) == 0 { Cardinality::One } else { Cardinality::Many };
                Change::DefinePredicate(ostrakon_engine::core::PredicateDef {
                    cardinality,
                    ..ostrakon_engine::core::PredicateDef::undeclared(predicate)
                })
            }
            _ => Change::RecordEpisode(ostrakon_engine::NewEpisode {
                text: format!("step {step}"),
                occurred_at: t("2020-01-01"),
                ..ostrakon_engine::NewEpisode::default()
            }),
        };
        // Some changes are refused (an end before a start, a retracted fact retracted
        // again, a merged entity merged again): nothing is written then.
        let Ok(receipt) = fx.store.append(&fx.ns, vec![change]) else { continue };
        facts.extend(receipt.fact(0));
        for predicate in [None, Some("livesIn"), Some("likes")] {
            for year in [1999, 2003, 2008, 2015, 2030] {
                let latest = at(year, None);
                assert_eq!(
                    count(&fx, predicate, latest),
                    resolved(&fx, predicate, latest),
                    "step {step}, {predicate:?} in {year}"
                );
            }
        }
        // Subjects in force each year, from the subjects' sweep, against the subjects
        // that have a fact of the predicate in force that year, resolved slot by slot.
        for predicate in ["livesIn", "likes"] {
            let series = fx
                .store
                .at(&fx.ns, ReadAt::latest())
                .and_then(|r| {
                    r.in_force_series(&SeriesQuery {
                        predicate,
                        value: None,
                        from: t("1998-06-01"),
                        to: t("2031-01-01"),
                        step: Step::parse("step", "P1Y").unwrap(),
                        by_value: false,
                    })
                })
                .unwrap()
                .value;
            for (point, counted) in series.points.iter().zip(&series.groups[0].counts) {
                let at = ReadAt::valid(*point);
                let groups = fx
                    .store
                    .at(&fx.ns, at)
                    .and_then(|r| r.aggregate(Some(predicate), GroupBy::Subject))
                    .unwrap()
                    .value;
                assert_eq!(*counted, groups.len() as u64, "step {step}, {predicate} subjects at {point}");
            }
        }
        if step % 50 == 0 {
            kept.push((receipt.seq, count(&fx, None, at(2008, Some(receipt.seq)))));
        }
    }
    // Older read points answer as they did.
    for (seq, counted) in kept {
        assert_eq!(count(&fx, None, at(2008, Some(seq))), counted, "at {seq}");
        assert_eq!(resolved(&fx, None, at(2008, Some(seq))), counted, "at {seq}");
    }
}
