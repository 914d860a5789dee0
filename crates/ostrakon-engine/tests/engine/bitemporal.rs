//! One named test per bitemporal query form, each with its expected answer written out.

use crate::common;

use common::{Fixture, denial, fact, iv, prop, t};
use ostrakon_engine::core::{Cardinality, FactId, Interval, Literal, Status, Timestamp};
use ostrakon_engine::{Change, KnownAt, ReadAt, WriteError, views::FactFilter, views::Scope};

/// Which change of a refused batch an error is about, and the field it names there.
fn place(e: &WriteError) -> (Option<usize>, Option<&str>) {
    let change = match e {
        WriteError::InChange { change, .. } => Some(*change),
        _ => None,
    };
    (change, e.field())
}

fn at(s: &str) -> ReadAt {
    ReadAt::valid(t(s))
}

fn iv_list(f: &ostrakon_engine::views::FactView) -> Vec<String> {
    f.effective.iter().map(Interval::to_string).collect()
}

#[test]
fn current_value() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (alice, paris, london) = (fx.entity("Alice"), fx.entity("Paris"), fx.entity("London"));
    let (p, _) = fx.assert(fact(alice, "livesIn", paris, iv("2010", None)));
    let (l, _) = fx.assert(fact(alice, "livesIn", london, iv("2015", None)));
    // The clock reads 2030: "now".
    assert_eq!(fx.values(alice, "livesIn", ReadAt::latest()), ["London"]);
    let h = fx.history(alice, "livesIn", ReadAt::latest());
    assert_eq!(h.len(), 2);
    assert_eq!((h[0].fact.id, h[0].status, h[0].beaten_by), (p, Status::Superseded, Some(l)));
    assert_eq!(iv_list(&h[0]), ["[2010-01-01T00:00:00.000000Z, 2015-01-01T00:00:00.000000Z)"]);
    assert_eq!((h[1].fact.id, h[1].status, h[1].beaten_by), (l, Status::Current, None));
    assert_eq!(iv_list(&h[1]), ["[2015-01-01T00:00:00.000000Z, ∞)"]);
    assert!(h[0].reason.contains("superseded by fact:"), "{}", h[0].reason);
}

#[test]
fn as_of_valid_time() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (alice, paris, london) = (fx.entity("Alice"), fx.entity("Paris"), fx.entity("London"));
    fx.assert(fact(alice, "livesIn", paris, iv("2010", None)));
    fx.assert(fact(alice, "livesIn", london, iv("2015", None)));
    assert_eq!(fx.values(alice, "livesIn", at("2009")), Vec::<String>::new());
    assert_eq!(fx.values(alice, "livesIn", at("2012-06-01")), ["Paris"]);
    assert_eq!(fx.values(alice, "livesIn", at("2015")), ["London"]);
    assert_eq!(fx.values(alice, "livesIn", at("2024")), ["London"]);
}

#[test]
fn as_of_system_time_audit_hides_later_corrections() {
    let fx = Fixture::new();
    fx.define("worksAt", Cardinality::One);
    let (bob, acme, globex) = (fx.entity("Bob"), fx.entity("Acme"), fx.entity("Globex"));
    fx.clock.set("2030-01-01T10:00:00Z");
    let (wrong, s1) = fx.assert(fact(bob, "worksAt", acme, iv("2018", None)));
    fx.clock.set("2030-02-01T10:00:00Z");
    let (right, s2) = fx.assert(ostrakon_engine::NewFact {
        supersedes: Some(wrong),
        ..fact(bob, "worksAt", globex, iv("2018", None))
    });
    // What we believed after s1: Acme. After s2: Globex.
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2020"), s1)), ["Acme"]);
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2020"), s2)), ["Globex"]);
    // knownAt as a system time between the two writes sees the first belief.
    let mid = ReadAt { valid_at: Some(t("2020")), known_at: KnownAt::Time(t("2030-01-15")), at: None };
    assert_eq!(fx.values(bob, "worksAt", mid), ["Acme"]);
    // The audit trail at s1 shows no trace of the correction.
    let before = fx.history(bob, "worksAt", ReadAt::bitemporal(t("2020"), s1));
    assert_eq!(before.len(), 1);
    assert_eq!((before[0].fact.id, before[0].status), (wrong, Status::Current));
    // Now both are there: the wrong one retracted, naming its correction.
    let now = fx.history(bob, "worksAt", at("2020"));
    assert_eq!(now.len(), 2);
    let w = now.iter().find(|f| f.fact.id == wrong).unwrap();
    assert_eq!((w.status, w.beaten_by), (Status::Retracted, Some(right)));
    assert_eq!(w.retraction.as_ref().unwrap().seq, s2);
    assert!(w.effective.is_empty());
    assert_eq!(now.iter().find(|f| f.fact.id == right).unwrap().status, Status::Current);
}

#[test]
fn full_bitemporal_point_where_s_predates_the_correction() {
    let fx = Fixture::new();
    fx.define("worksAt", Cardinality::One);
    let (bob, acme, globex) = (fx.entity("Bob"), fx.entity("Acme"), fx.entity("Globex"));
    let (wrong, s1) = fx.assert(fact(bob, "worksAt", acme, iv("2018", None)));
    let (_, s2) = fx.assert(ostrakon_engine::NewFact {
        supersedes: Some(wrong),
        ..fact(bob, "worksAt", globex, iv("2016", None))
    });
    // (T = 2017, S = s1): Acme had not started; (T = 2019, S = s1): Acme.
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2017"), s1)), Vec::<String>::new());
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2019"), s1)), ["Acme"]);
    // (T = 2017, S = s2): Globex, corrected retroactively to 2016.
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2017"), s2)), ["Globex"]);
    assert_eq!(fx.values(bob, "worksAt", ReadAt::bitemporal(t("2019"), s2)), ["Globex"]);
    // A knownAt past the log is refused, not silently clamped.
    let err = fx
        .store
        .at(&fx.ns, ReadAt::bitemporal(t("2019"), ostrakon_engine::core::Seq(s2.0 + 1)))
        .and_then(|r| r.history(bob, "worksAt"));
    assert!(matches!(err, Err(ostrakon_engine::ReadError::NotYetKnown { .. })));
}

#[test]
fn boundaries_start_included_end_excluded_and_meeting_intervals() {
    let fx = Fixture::new();
    fx.define("employedBy", Cardinality::One);
    let (carol, acme, globex) = (fx.entity("Carol"), fx.entity("Acme"), fx.entity("Globex"));
    let (a, _) = fx.assert(fact(carol, "employedBy", acme, iv("2020-01-01", Some("2021-01-01"))));
    fx.assert(fact(carol, "employedBy", globex, iv("2021-01-01", Some("2022-01-01"))));
    let v = |s: &str| fx.values(carol, "employedBy", at(s));
    assert_eq!(v("2019-12-31T23:59:59.999999Z"), Vec::<String>::new());
    assert_eq!(v("2020-01-01T00:00:00Z"), ["Acme"]);
    assert_eq!(v("2020-12-31T23:59:59.999999Z"), ["Acme"]);
    assert_eq!(v("2021-01-01T00:00:00Z"), ["Globex"]);
    assert_eq!(v("2021-12-31T23:59:59.999999Z"), ["Globex"]);
    assert_eq!(v("2022-01-01T00:00:00Z"), Vec::<String>::new());
    let end_minus_1 = ReadAt::valid(Timestamp::from_micros(t("2021").as_micros() - 1));
    assert_eq!(fx.values(carol, "employedBy", end_minus_1), ["Acme"]);
    assert_eq!(fx.status_of(carol, "employedBy", a, at("2021-01-01")), Status::Ended);
    assert_eq!(fx.status_of(carol, "employedBy", a, at("2019")), Status::NotYetValid);
    // Meeting intervals do not overlap, so neither supersedes the other.
    let h = fx.history(carol, "employedBy", at("2020-06"));
    assert_eq!(iv_list(&h[0]), ["[2020-01-01T00:00:00.000000Z, 2021-01-01T00:00:00.000000Z)"]);
    assert_eq!(iv_list(&h[1]), ["[2021-01-01T00:00:00.000000Z, 2022-01-01T00:00:00.000000Z)"]);
}

#[test]
fn open_ended_and_future_dated_facts() {
    let fx = Fixture::new();
    let (dan, city, mars) = (fx.entity("Dan"), fx.entity("Lyon"), fx.entity("Mars base"));
    let (_, _) = fx.assert(fact(dan, "livesIn", city, iv("2020", None)));
    let (future, _) = fx.assert(fact(dan, "plansToLiveIn", mars, iv("2035", None)));
    // The clock reads 2030: the open-ended fact holds now and in any far future.
    assert_eq!(fx.values(dan, "livesIn", ReadAt::latest()), ["Lyon"]);
    assert_eq!(fx.values(dan, "livesIn", at("9999-12-31")), ["Lyon"]);
    assert_eq!(fx.values(dan, "plansToLiveIn", ReadAt::latest()), Vec::<String>::new());
    assert_eq!(fx.status_of(dan, "plansToLiveIn", future, ReadAt::latest()), Status::NotYetValid);
    assert_eq!(fx.values(dan, "plansToLiveIn", at("2035-01-01")), ["Mars base"]);
    let h = fx.history(dan, "plansToLiveIn", ReadAt::latest());
    assert_eq!(h[0].valid.to(), None);
    assert!(h[0].reason.contains("valid from 2035-01-01T00:00:00.000000Z"), "{}", h[0].reason);
}

#[test]
fn retroactive_correction_vs_update_vs_end_vs_retraction() {
    let fx = Fixture::new();
    fx.define("worksAt", Cardinality::One);
    let (acme, globex, initech) = (fx.entity("Acme"), fx.entity("Globex"), fx.entity("Initech"));
    let people: Vec<_> =
        ["Corrected", "Updated", "Ended", "Retracted"].iter().map(|n| fx.entity(n)).collect();
    let first: Vec<(FactId, _)> =
        people.iter().map(|&p| fx.assert(fact(p, "worksAt", acme, iv("2010", None)))).collect();
    let s0 = first[3].1;
    // Correction: it was Globex all along.
    fx.assert(ostrakon_engine::NewFact {
        supersedes: Some(first[0].0),
        ..fact(people[0], "worksAt", globex, iv("2010", None))
    });
    // Update: a new employer from 2015.
    fx.assert(fact(people[1], "worksAt", initech, iv("2015", None)));
    // End: stopped working at Acme in 2015.
    fx.append(vec![Change::EndFact { fact: first[2].0, valid_to: t("2015") }]);
    // Retraction: never worked there.
    fx.append(vec![Change::RetractFact { fact: first[3].0, reason: Some("mistaken identity".into()) }]);

    let v = |i: usize, s: &str| fx.values(people[i], "worksAt", at(s));
    assert_eq!((v(0, "2012"), v(0, "2016")), (vec!["Globex".to_owned()], vec!["Globex".to_owned()]));
    assert_eq!((v(1, "2012"), v(1, "2016")), (vec!["Acme".to_owned()], vec!["Initech".to_owned()]));
    assert_eq!((v(2, "2012"), v(2, "2016")), (vec!["Acme".to_owned()], vec![]));
    assert_eq!((v(3, "2012"), v(3, "2016")), (vec![], vec![]));

    assert_eq!(fx.status_of(people[0], "worksAt", first[0].0, at("2012")), Status::Retracted);
    assert_eq!(fx.status_of(people[1], "worksAt", first[1].0, at("2016")), Status::Superseded);
    assert_eq!(fx.status_of(people[1], "worksAt", first[1].0, at("2012")), Status::Current);
    assert_eq!(fx.status_of(people[2], "worksAt", first[2].0, at("2016")), Status::Ended);
    assert_eq!(fx.status_of(people[3], "worksAt", first[3].0, at("2012")), Status::Retracted);
    let r = fx.history(people[3], "worksAt", at("2012"));
    assert_eq!(
        r[0].reason,
        format!("retracted in batch {}: mistaken identity", r[0].retraction.as_ref().unwrap().seq)
    );
    let ended = &fx.history(people[2], "worksAt", at("2016"))[0];
    assert_eq!(ended.valid.to(), Some(t("2015")));
    assert_eq!(ended.fact.valid.to(), None, "the asserted fact is unchanged; the end is a later event");

    // As of before all four changes, every one of them still worked at Acme in 2016.
    for p in &people {
        assert_eq!(fx.values(*p, "worksAt", ReadAt::bitemporal(t("2016"), s0)), ["Acme"]);
    }
}

#[test]
fn narrower_period_inside_a_wider_one_splits_it_in_three() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (eve, paris, london) = (fx.entity("Eve"), fx.entity("Paris"), fx.entity("London"));
    let (p, _) = fx.assert(fact(eve, "livesIn", paris, iv("2010", None)));
    let (l, _) = fx.assert(fact(eve, "livesIn", london, iv("2015", Some("2017"))));
    assert_eq!(fx.values(eve, "livesIn", at("2012")), ["Paris"]);
    assert_eq!(fx.values(eve, "livesIn", at("2016")), ["London"]);
    assert_eq!(fx.values(eve, "livesIn", at("2018")), ["Paris"]);
    let h = fx.history(eve, "livesIn", at("2016"));
    let paris_view = h.iter().find(|f| f.fact.id == p).unwrap();
    assert_eq!((paris_view.status, paris_view.beaten_by), (Status::Superseded, Some(l)));
    assert_eq!(
        iv_list(paris_view),
        ["[2010-01-01T00:00:00.000000Z, 2015-01-01T00:00:00.000000Z)", "[2017-01-01T00:00:00.000000Z, ∞)"]
    );
}

#[test]
fn late_arriving_fact_splits_a_closed_interval_and_earlier_snapshots_stay() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (fay, paris, london) = (fx.entity("Fay"), fx.entity("Paris"), fx.entity("London"));
    let (p, s1) = fx.assert(fact(fay, "livesIn", paris, iv("2010", Some("2020"))));
    let before =
        fx.store.at(&fx.ns, ReadAt::bitemporal(t("2015"), s1)).and_then(|r| r.snapshot(None, 100)).unwrap();
    assert_eq!(before.value.facts.len(), 1);
    let (_, s2) = fx.assert(fact(fay, "livesIn", london, iv("2014", Some("2016"))));
    assert_eq!(fx.values(fay, "livesIn", at("2015")), ["London"]);
    assert_eq!(fx.values(fay, "livesIn", at("2017")), ["Paris"]);
    assert_eq!(fx.values(fay, "livesIn", ReadAt::bitemporal(t("2015"), s1)), ["Paris"]);
    let now = fx.history(fay, "livesIn", ReadAt::bitemporal(t("2015"), s2));
    assert_eq!(
        iv_list(now.iter().find(|f| f.fact.id == p).unwrap()),
        [
            "[2010-01-01T00:00:00.000000Z, 2014-01-01T00:00:00.000000Z)",
            "[2016-01-01T00:00:00.000000Z, 2020-01-01T00:00:00.000000Z)"
        ]
    );
    let then = fx.history(fay, "livesIn", ReadAt::bitemporal(t("2015"), s1));
    assert_eq!(iv_list(&then[0]), ["[2010-01-01T00:00:00.000000Z, 2020-01-01T00:00:00.000000Z)"]);
    // The earlier snapshot, re-read at its basis, is unchanged.
    let again = fx.store.at(&fx.ns, before.basis.point()).and_then(|r| r.snapshot(None, 100)).unwrap();
    assert_eq!(again.value, before.value);
}

#[test]
fn late_arriving_older_fact_only_fills_the_time_before() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (gus, paris, london) = (fx.entity("Gus"), fx.entity("Paris"), fx.entity("London"));
    fx.assert(fact(gus, "livesIn", london, iv("2015", None)));
    let (p, _) = fx.assert(fact(gus, "livesIn", paris, iv("2010", None)));
    assert_eq!(fx.values(gus, "livesIn", at("2016")), ["London"]);
    assert_eq!(fx.values(gus, "livesIn", at("2012")), ["Paris"]);
    assert_eq!(fx.status_of(gus, "livesIn", p, at("2016")), Status::Superseded);
}

#[test]
fn cardinality_one_supersedes_while_cardinality_many_accumulates() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (hal, paris, london) = (fx.entity("Hal"), fx.entity("Paris"), fx.entity("London"));
    fx.assert(fact(hal, "livesIn", paris, iv("2010", None)));
    fx.assert(fact(hal, "livesIn", london, iv("2015", None)));
    // `speaks` was never declared: it is cardinality many.
    fx.assert(prop(hal, "speaks", Literal::String("French".into()), iv("2010", None)));
    fx.assert(prop(hal, "speaks", Literal::String("English".into()), iv("2015", None)));
    assert_eq!(fx.values(hal, "livesIn", at("2016")), ["London"]);
    assert_eq!(fx.values(hal, "speaks", at("2016")), ["English", "French"]);
    assert_eq!(fx.values(hal, "speaks", at("2012")), ["French"]);
}

#[test]
fn same_fact_in_two_disjoint_periods_rehired() {
    let fx = Fixture::new();
    fx.define("worksAt", Cardinality::One);
    let (ivy, acme) = (fx.entity("Ivy"), fx.entity("Acme"));
    let (first, _) = fx.assert(fact(ivy, "worksAt", acme, iv("2010", Some("2012"))));
    let (second, _) = fx.assert(fact(ivy, "worksAt", acme, iv("2015", None)));
    assert_ne!(first, second);
    assert_eq!(fx.values(ivy, "worksAt", at("2011")), ["Acme"]);
    assert_eq!(fx.values(ivy, "worksAt", at("2013")), Vec::<String>::new());
    assert_eq!(fx.values(ivy, "worksAt", at("2016")), ["Acme"]);
    let h = fx.history(ivy, "worksAt", at("2013"));
    assert_eq!(
        h.iter().map(|f| (f.fact.id, f.status)).collect::<Vec<_>>(),
        [(first, Status::Ended), (second, Status::NotYetValid)]
    );
    assert!(h.iter().all(|f| f.corroborations == 1));
}

#[test]
fn same_batch_conflict_is_resolved_deterministically_and_flagged() {
    let fx = Fixture::new();
    fx.define("bornIn", Cardinality::One);
    let (jo, paris, rome) = (fx.entity("Jo"), fx.entity("Paris"), fx.entity("Rome"));
    let r = fx.append(vec![
        Change::AssertFact(fact(jo, "bornIn", paris, iv("1990-05-01", None))),
        Change::AssertFact(fact(jo, "bornIn", rome, iv("1990-05-01", None))),
    ]);
    let (p, ro) = (r.fact(0).unwrap(), r.fact(1).unwrap());
    // Same valid start, batch and confidence: the higher id ranks above.
    assert_eq!(fx.values(jo, "bornIn", at("2000")), ["Rome"]);
    let h = fx.history(jo, "bornIn", at("2000"));
    let rv = h.iter().find(|f| f.fact.id == ro).unwrap();
    let pv = h.iter().find(|f| f.fact.id == p).unwrap();
    assert_eq!((rv.status, rv.contradicts.to_vec()), (Status::Current, vec![p]));
    assert_eq!(
        (pv.status, pv.beaten_by, pv.contradicts.to_vec()),
        (Status::Contradicted, Some(ro), vec![ro])
    );
    assert!(rv.reason.contains("contradicts"), "{}", rv.reason);
    // A rebuilt store resolves it the same way.
    let reopened = fx.reopen();
    let again = reopened.at(&fx.ns, at("2000")).and_then(|r| r.history(jo, "bornIn")).unwrap();
    assert_eq!(again.value, h);

    // With different confidences, confidence decides whatever the order.
    let (kim, oslo, lima) = (fx.entity("Kim"), fx.entity("Oslo"), fx.entity("Lima"));
    fx.append(vec![
        Change::AssertFact(ostrakon_engine::NewFact {
            confidence: Some(0.9),
            ..fact(kim, "bornIn", oslo, iv("1980", None))
        }),
        Change::AssertFact(ostrakon_engine::NewFact {
            confidence: Some(0.6),
            ..fact(kim, "bornIn", lima, iv("1980", None))
        }),
    ]);
    assert_eq!(fx.values(kim, "bornIn", at("2000")), ["Oslo"]);
}

#[test]
fn negation_removes_a_value_and_a_later_restatement_brings_it_back() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (lea, paris) = (fx.entity("Lea"), fx.entity("Paris"));
    let (p, _) = fx.assert(fact(lea, "livesIn", paris, iv("2010", None)));
    let (n, _) = fx.assert(denial(lea, "livesIn", paris, iv("2015", None)));
    assert_eq!(fx.values(lea, "livesIn", at("2012")), ["Paris"]);
    assert_eq!(fx.values(lea, "livesIn", at("2016")), Vec::<String>::new());
    let h = fx.history(lea, "livesIn", at("2016"));
    let pv = h.iter().find(|f| f.fact.id == p).unwrap();
    assert_eq!((pv.status, pv.beaten_by), (Status::Negated, Some(n)));
    assert_eq!(h.iter().find(|f| f.fact.id == n).unwrap().status, Status::Current);
    let (back, _) = fx.assert(fact(lea, "livesIn", paris, iv("2018", None)));
    assert_eq!(fx.values(lea, "livesIn", at("2019")), ["Paris"]);
    assert_eq!(fx.values(lea, "livesIn", at("2016")), Vec::<String>::new());
    let h = fx.history(lea, "livesIn", at("2019"));
    assert_eq!(h.iter().find(|f| f.fact.id == n).unwrap().beaten_by, Some(back));
}

#[test]
fn a_superseded_value_is_not_revived_by_negating_its_successor() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (max, paris, london) = (fx.entity("Max"), fx.entity("Paris"), fx.entity("London"));
    let (p, _) = fx.assert(fact(max, "livesIn", paris, iv("2010", None)));
    fx.assert(fact(max, "livesIn", london, iv("2015", None)));
    fx.assert(denial(max, "livesIn", london, iv("2018", None)));
    assert_eq!(fx.values(max, "livesIn", at("2016")), ["London"]);
    assert_eq!(fx.values(max, "livesIn", at("2019")), Vec::<String>::new());
    assert_eq!(fx.status_of(max, "livesIn", p, at("2019")), Status::Superseded);
}

#[test]
fn reassertion_is_corroboration_not_a_new_version() {
    let fx = Fixture::new();
    let (ned, oslo) = (fx.entity("Ned"), fx.entity("Oslo"));
    let r = fx.append(vec![
        Change::RecordEpisode(ostrakon_engine::NewEpisode {
            text: "I live in Oslo".into(),
            occurred_at: t("2020"),
            ..Default::default()
        }),
        Change::RecordEpisode(ostrakon_engine::NewEpisode {
            text: "Oslo is home".into(),
            occurred_at: t("2021"),
            ..Default::default()
        }),
    ]);
    let (e1, e2) = (r.episode(0).unwrap(), r.episode(1).unwrap());
    let first = ostrakon_engine::NewFact {
        confidence: Some(0.5),
        provenance: vec![ostrakon_engine::change::EpisodeRef::Id(e1)],
        ..fact(ned, "livesIn", oslo, iv("2019", None))
    };
    let (a, s1) = fx.assert(first.clone());
    let (b, _) = fx.assert(ostrakon_engine::NewFact {
        provenance: vec![ostrakon_engine::change::EpisodeRef::Id(e2)],
        ..first
    });
    assert_ne!(a, b);
    let h = fx.history(ned, "livesIn", at("2022"));
    assert_eq!(h.len(), 1, "one fact, stated twice");
    assert_eq!(h[0].fact.id, a);
    assert_eq!(h[0].corroborations, 2);
    assert!((h[0].confidence - 0.75).abs() < 1e-12);
    assert_eq!(h[0].provenance, vec![e1, e2]);
    let then = fx.history(ned, "livesIn", ReadAt::bitemporal(t("2022"), s1));
    assert_eq!((then[0].corroborations, then[0].confidence), (1, 0.5));
    // The restatement is a statement of its own: ending it alone is refused (its validity
    // is its fact's) and writes nothing; withdrawing it takes it alone, and the fact stands
    // as the first statement says.
    let ended = fx.store.append(&fx.ns, vec![Change::EndFact { fact: b, valid_to: t("2023") }]).unwrap_err();
    assert!(matches!(ended.root(), WriteError::NotAFact { .. }), "{ended}");
    fx.append(vec![Change::WithdrawStatement { statement: b, reason: None }]);
    let h = fx.history(ned, "livesIn", at("2024"));
    assert_eq!((h[0].fact.id, h[0].status, h[0].corroborations), (a, Status::Current, 1));
    assert_eq!((h[0].confidence, h[0].provenance.clone()), (0.5, vec![e1]));
    assert_eq!(h[0].valid.to(), None);
    // A withdrawn statement cannot be withdrawn again; the fact's own id retracts it all.
    let again = fx.store.append(&fx.ns, vec![Change::RetractFact { fact: b, reason: None }]).unwrap_err();
    assert!(matches!(again.root(), WriteError::AlreadyRetracted { .. }), "{again}");
    fx.append(vec![Change::RetractFact { fact: a, reason: None }]);
    let h = fx.history(ned, "livesIn", at("2022"));
    assert_eq!((h[0].fact.id, h[0].status), (a, Status::Retracted));
    let again = fx.store.append(&fx.ns, vec![Change::RetractFact { fact: a, reason: None }]).unwrap_err();
    assert!(matches!(again.root(), WriteError::AlreadyRetracted { .. }), "{again}");
}

#[test]
fn a_fact_restated_after_its_denial_holds_again() {
    // "I like Paris" (S1), "I don't like Paris" (S2), "actually I do" (S3).
    let fx = Fixture::new();
    let (ann, paris) = (fx.entity("Ann"), fx.entity("Paris"));
    let (like, s1) = fx.assert(fact(ann, "likes", paris, iv("2020", None)));
    let (dislike, s2) = fx.assert(denial(ann, "likes", paris, iv("2020", None)));
    let (again, s3) = fx.assert(fact(ann, "likes", paris, iv("2020", None)));
    let statuses = |s| -> Vec<(FactId, Status)> {
        fx.history(ann, "likes", ReadAt::bitemporal(t("2021"), s))
            .iter()
            .map(|f| (f.fact.id, f.status))
            .collect()
    };
    assert_eq!(statuses(s1), [(like, Status::Current)]);
    assert_eq!(statuses(s2), [(like, Status::Negated), (dislike, Status::Current)]);
    // S3 is a statement of the fact of S1, which now ranks by S3: above the denial.
    assert_ne!(again, like);
    assert_eq!(statuses(s3), [(like, Status::Current), (dislike, Status::Negated)]);
    assert_eq!(fx.values(ann, "likes", ReadAt::bitemporal(t("2021"), s3)), ["Paris"]);
    let h = fx.history(ann, "likes", ReadAt::bitemporal(t("2021"), s3));
    assert_eq!(h[0].corroborations, 2);
    assert_eq!(
        h[1].reason,
        "overridden by fact:1, which restates the value from 2020-01-01T00:00:00.000000Z"
    );
    // Withdrawing the restatement puts the denial back on top.
    let s4 = fx.append(vec![Change::RetractFact { fact: again, reason: Some("misheard".into()) }]).seq;
    assert_eq!(statuses(s4), [(like, Status::Negated), (dislike, Status::Current)]);
}

#[test]
fn one_source_taking_back_its_statement_leaves_the_others() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (bo, rome) = (fx.entity("Bo"), fx.entity("Rome"));
    let from = |c: f64| ostrakon_engine::NewFact {
        confidence: Some(c),
        ..fact(bo, "livesIn", rome, iv("2018", None))
    };
    let (first, _) = fx.assert(from(0.6));
    let (second, _) = fx.assert(from(0.5));
    let (third, _) = fx.assert(from(0.2));
    let h = fx.history(bo, "livesIn", at("2020"));
    assert_eq!((h.len(), h[0].corroborations), (1, 3));
    assert!((h[0].confidence - 0.84).abs() < 1e-12, "{}", h[0].confidence); // 1 − 0.4·0.5·0.8
    // The second source retracts its statement: the fact stands on the other two.
    fx.append(vec![Change::RetractFact { fact: second, reason: None }]);
    let h = fx.history(bo, "livesIn", at("2020"));
    assert_eq!((h[0].fact.id, h[0].status, h[0].corroborations), (first, Status::Current, 2));
    assert!((h[0].confidence - 0.68).abs() < 1e-12, "{}", h[0].confidence); // 1 − 0.4·0.8
    // The two others each correct their own statement in one batch: both corrections
    // are taken, and the old fact, with no statement left, reads as corrected.
    let paris = fx.entity("Paris");
    let r = fx.append(vec![
        Change::AssertFact(ostrakon_engine::NewFact {
            supersedes: Some(first),
            ..fact(bo, "livesIn", paris, iv("2018", None))
        }),
        Change::AssertFact(ostrakon_engine::NewFact {
            supersedes: Some(third),
            ..fact(bo, "livesIn", paris, iv("2018", None))
        }),
    ]);
    let corrected = r.fact(0).unwrap();
    assert_eq!(fx.values(bo, "livesIn", at("2020")), ["Paris"]);
    let h = fx.history(bo, "livesIn", at("2020"));
    let old = h.iter().find(|f| f.fact.id == first).unwrap();
    assert_eq!(old.status, Status::Retracted);
    let new = h.iter().find(|f| f.fact.id == corrected).unwrap();
    assert_eq!((new.status, new.corroborations), (Status::Current, 2));
}

#[test]
fn facts_by_subject_predicate_and_object() {
    let fx = Fixture::new();
    let (a, b, c, x) = (fx.entity("A"), fx.entity("B"), fx.entity("C"), fx.entity("X"));
    fx.assert(fact(a, "likes", x, iv("2010", None)));
    fx.assert(fact(b, "likes", x, iv("2010", Some("2011"))));
    fx.assert(fact(c, "hates", x, iv("2010", None)));
    fx.assert(fact(a, "hates", c, iv("2010", None)));
    let names = |filter: FactFilter| -> Vec<String> {
        fx.store
            .at(&fx.ns, at("2015"))
            .and_then(|r| r.facts(&filter, Scope::InForce))
            .unwrap()
            .value
            .iter()
            .map(|f| {
                format!(
                    "{} {} {}",
                    fx.show(&f.fact.subject.into()),
                    f.fact.predicate,
                    fx.show(&f.fact.object)
                )
            })
            .collect()
    };
    let by_object = FactFilter { object: Some(x.into()), ..Default::default() };
    assert_eq!(names(by_object), ["A likes X", "C hates X"]);
    let by_predicate = FactFilter { predicate: Some("hates".into()), ..Default::default() };
    assert_eq!(names(by_predicate), ["A hates C", "C hates X"]);
    let by_subject = FactFilter { subject: Some(a), ..Default::default() };
    assert_eq!(names(by_subject), ["A hates C", "A likes X"]);
    let all_of_b = FactFilter { subject: Some(b), ..Default::default() };
    let all = fx.store.at(&fx.ns, at("2015")).and_then(|r| r.facts(&all_of_b, Scope::All)).unwrap().value;
    assert_eq!(all.iter().map(|f| f.status).collect::<Vec<_>>(), [Status::Ended]);
}

#[test]
fn three_hop_traversal_at_a_fixed_point() {
    let fx = Fixture::new();
    fx.define("worksAt", Cardinality::One);
    let [a, b, c, d, e, acme, globex] = ["A", "B", "C", "D", "E", "Acme", "Globex"].map(|n| fx.entity(n));
    fx.assert(fact(a, "knows", b, iv("2010", None)));
    fx.assert(fact(b, "knows", c, iv("2010", Some("2020"))));
    let (_, before_cd) = fx.assert(fact(a, "worksAt", acme, iv("2010", None)));
    fx.assert(fact(d, "knows", c, iv("2015", None)));
    fx.assert(fact(d, "knows", e, iv("2015", None)));
    fx.assert(fact(a, "worksAt", globex, iv("2015", None)));
    let hood = |at: ReadAt| {
        let n = fx.store.at(&fx.ns, at).and_then(|r| r.neighbors(a, 3)).unwrap().value;
        let nodes: Vec<(String, u32)> = n.nodes.iter().map(|(id, d)| (fx.show(&(*id).into()), *d)).collect();
        (nodes, n.edges.len())
    };
    let s = |v: &[(&str, u32)]| v.iter().map(|(n, d)| (n.to_string(), *d)).collect::<Vec<_>>();
    // Nodes come by distance, then by id. At 2016: A→B→C←D in three hops (D→E would be a fourth); A works at Globex, not Acme.
    assert_eq!(hood(at("2016")), (s(&[("A", 0), ("B", 1), ("Globex", 1), ("C", 2), ("D", 3)]), 4));
    // At 2012: D's links have not started; A still works at Acme.
    assert_eq!(hood(at("2012")), (s(&[("A", 0), ("B", 1), ("Acme", 1), ("C", 2)]), 3));
    // At 2021: B no longer knows C.
    assert_eq!(hood(at("2021")), (s(&[("A", 0), ("B", 1), ("Globex", 1)]), 2));
    // At 2016 as known before D's links and Globex were written.
    assert_eq!(
        hood(ReadAt::bitemporal(t("2016"), before_cd)),
        (s(&[("A", 0), ("B", 1), ("Acme", 1), ("C", 2)]), 3)
    );
}

#[test]
fn answers_are_repeatable_under_a_pinned_basis() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (oz, paris, london) = (fx.entity("Oz"), fx.entity("Paris"), fx.entity("London"));
    fx.assert(fact(oz, "livesIn", paris, iv("2010", None)));
    let first = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.snapshot(None, 100)).unwrap();
    let hist = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.history(oz, "livesIn")).unwrap();
    assert_eq!(first.basis.valid_at, t("2030"), "validAt defaults to the clock");
    fx.clock.set("2031-01-01");
    fx.assert(fact(oz, "livesIn", london, iv("2011", None)));
    fx.append(vec![Change::EndFact { fact: hist.value[0].fact.id, valid_to: t("2012") }]);
    let again = fx.store.at(&fx.ns, first.basis.point()).and_then(|r| r.snapshot(None, 100)).unwrap();
    assert_eq!(format!("{:?}", again.value), format!("{:?}", first.value));
    assert_eq!(
        (again.basis.known_at, again.basis.system_time),
        (first.basis.known_at, first.basis.system_time)
    );
    let hist_again = fx.store.at(&fx.ns, hist.basis.point()).and_then(|r| r.history(oz, "livesIn")).unwrap();
    assert_eq!(format!("{:?}", hist_again.value), format!("{:?}", hist.value));
    // And the unpinned read has moved on.
    let now = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.snapshot(None, 100)).unwrap();
    assert_ne!(now.value, first.value);
}

#[test]
fn rejected_batches_store_nothing_and_name_the_field() {
    let fx = Fixture::new();
    fx.append(vec![Change::DefinePredicate(ostrakon_engine::core::PredicateDef {
        name: "age".into(),
        cardinality: Cardinality::One,
        value_type: ostrakon_engine::core::ValueType::Integer,
        description: None,
        decay: None,
    })]);
    let (pia, oslo) = (fx.entity("Pia"), fx.entity("Oslo"));
    let (f, _) = fx.assert(fact(pia, "livesIn", oslo, iv("2010", None)));
    let before = (fx.store.counts(&fx.ns).unwrap(), fx.store.log_size(&fx.ns).unwrap());
    let fail = |changes: Vec<Change>| fx.store.append(&fx.ns, changes).unwrap_err();
    let ok_change = Change::AssertFact(fact(pia, "visited", oslo, iv("2011", None)));

    let e = fail(vec![
        ok_change.clone(),
        Change::AssertFact(fact(ostrakon_engine::core::EntityId(999), "x", oslo, iv("2010", None))),
    ]);
    assert!(matches!(e.root(), WriteError::UnknownEntity { .. }), "{e}");
    assert_eq!(place(&e), (Some(1), Some("subject")));
    let e = fail(vec![
        ok_change.clone(),
        Change::AssertFact(prop(pia, "age", Literal::String("old".into()), iv("2010", None))),
    ]);
    assert!(matches!(e.root(), WriteError::WrongValueType { .. }), "{e}");
    assert_eq!(place(&e), (Some(1), Some("object")));
    let e = fail(vec![ok_change.clone(), Change::EndFact { fact: f, valid_to: t("2009") }]);
    assert!(
        matches!(e.root(), WriteError::Invalid(ostrakon_engine::core::CoreError::InvalidInterval { .. })),
        "{e}"
    );
    assert_eq!(place(&e), (Some(1), Some("validTo")));
    let e = fail(vec![
        Change::RetractFact { fact: f, reason: None },
        Change::RetractFact { fact: f, reason: None },
    ]);
    assert!(matches!(e.root(), WriteError::AlreadyRetracted { .. }), "{e}");
    assert_eq!(place(&e), (Some(1), Some("fact")));
    let e = fail(vec![ok_change.clone(), Change::EndFact { fact: FactId(12345), valid_to: t("2020") }]);
    assert!(matches!(e.root(), WriteError::UnknownFact { .. }), "{e}");
    let e = fail(vec![Change::AssertFact(ostrakon_engine::NewFact {
        confidence: Some(1.5),
        ..fact(pia, "x", oslo, iv("2010", None))
    })]);
    assert_eq!(place(&e), (Some(0), Some("confidence")), "{e}");
    let e = fail(vec![Change::AssertFact(prop(pia, "height", Literal::Float(f64::NAN), iv("2010", None)))]);
    assert_eq!(place(&e), (Some(0), Some("object")), "{e}");
    let e = fail(vec![Change::AssertFact(ostrakon_engine::NewFact {
        provenance: vec![ostrakon_engine::change::EpisodeRef::External("nope".into())],
        ..fact(pia, "x", oslo, iv("2010", None))
    })]);
    assert!(matches!(e.root(), WriteError::UnknownEpisode { .. }), "{e}");
    let e = fail(vec![
        Change::AssertFact(fact(pia, "x", oslo, iv("2010", None))),
        Change::AssertFact(ostrakon_engine::NewFact {
            subject: ostrakon_engine::EntityRef::New(0),
            ..fact(pia, "x", oslo, iv("2010", None))
        }),
    ]);
    assert!(matches!(e.root(), WriteError::UnknownEntity { .. }), "{e}");
    assert_eq!((fx.store.counts(&fx.ns).unwrap(), fx.store.log_size(&fx.ns).unwrap()), before);
    assert_eq!(fx.values(pia, "livesIn", at("2020")), ["Oslo"]);
}

#[test]
fn dates_are_read_in_the_namespace_time_zone() {
    let fx = Fixture::new();
    assert_eq!(fx.store.parse_time(&fx.ns, "validFrom", "2024-07-01").unwrap(), t("2024-07-01"));
    let paris = ostrakon_engine::core::TimeZone::parse("timeZone", "Europe/Paris").unwrap();
    fx.append(vec![Change::ConfigureNamespace(ostrakon_engine::change::NamespacePatch {
        time_zone: Some(paris),
        ..Default::default()
    })]);
    assert_eq!(fx.store.parse_time(&fx.ns, "validFrom", "2024-07-01").unwrap(), t("2024-06-30T22:00:00Z"));
    assert_eq!(fx.store.parse_time(&fx.ns, "validFrom", "2024-07-01T00:00:00Z").unwrap(), t("2024-07-01"));
    let err = fx.store.parse_time(&fx.ns, "validFrom", "2024-13-01").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid time in `validFrom`: \"2024-13-01\": the month 13 is not from 1 to 12"
    );
    // The setting survives a rebuild from the log.
    assert_eq!(fx.reopen().time_zone(&fx.ns).unwrap(), paris);
}

#[test]
fn edge_inputs_are_refused_or_normalised() {
    let fx = Fixture::new();
    // A fixed offset that could not be written back is refused.
    let bad = Change::ConfigureNamespace(ostrakon_engine::change::NamespacePatch {
        time_zone: Some(ostrakon_engine::core::TimeZone::Fixed(90_000)),
        ..Default::default()
    });
    let e = fx.store.append(&fx.ns, vec![bad]).unwrap_err();
    assert_eq!(place(&e), (Some(0), Some("timeZone")), "{e}");
    // Instants beyond the calendar are refused.
    let far = ostrakon_engine::core::Interval::open(Timestamp::MAX);
    let x = fx.entity("X");
    let e = fx
        .store
        .append(&fx.ns, vec![Change::AssertFact(prop(x, "p", Literal::Integer(1), far))])
        .unwrap_err();
    assert_eq!(place(&e), (Some(0), Some("validFrom")), "{e}");
    // -0.0 and 0.0 are one value: the negation of one removes the other.
    fx.assert(prop(x, "temperature", Literal::Float(-0.0), iv("2010", None)));
    fx.assert(ostrakon_engine::NewFact {
        polarity: ostrakon_engine::core::Polarity::Negated,
        ..prop(x, "temperature", Literal::Float(0.0), iv("2015", None))
    });
    assert_eq!(fx.values(x, "temperature", at("2016")), Vec::<String>::new());
    assert_eq!(fx.values(x, "temperature", at("2012")), ["0.0"]);
    // A page of nothing is refused rather than read as the last page.
    let e = fx.store.at(&fx.ns, ReadAt::latest()).and_then(|r| r.snapshot(None, 0)).unwrap_err();
    assert!(matches!(e, ostrakon_engine::ReadError::LimitExceeded { .. }), "{e}");
    // A renamed entity is found by its new name only.
    fx.append(vec![Change::DeclareEntity(ostrakon_engine::NewEntity {
        id: Some(x),
        name: "Xavier".into(),
        ..Default::default()
    })]);
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.entities_named("X")).unwrap(), vec![]);
    assert_eq!(fx.store.inspect(&fx.ns, |i| i.entities_named("xavier")).unwrap(), vec![x]);
    // A refused first batch leaves no namespace behind.
    let other = ostrakon_engine::core::Namespace::new("ns", &format!("{}-other", fx.ns.as_str())).unwrap();
    let e = fx.store.append(&other, vec![Change::RetractFact { fact: FactId(1), reason: None }]).unwrap_err();
    assert!(matches!(e.root(), WriteError::UnknownFact { .. }), "{e}");
    assert!(fx.store.namespaces().contains(&fx.ns));
    assert!(!fx.store.namespaces().contains(&other));
    assert!(fx.reopen().namespaces().iter().all(|ns| *ns != other), "a refused first batch left a log");
}

/// Memory storage whose fsync takes a while, so that concurrent batches overlap.
struct SlowSync(ostrakon_engine::log::MemStorage);

struct SlowFile(Box<dyn ostrakon_engine::log::LogFile>);

impl ostrakon_engine::log::Storage for SlowSync {
    fn open(
        &self,
        name: &str,
    ) -> Result<Box<dyn ostrakon_engine::log::LogFile>, ostrakon_engine::log::LogError> {
        Ok(Box::new(SlowFile(self.0.open(name)?)))
    }
    fn list(&self) -> Result<Vec<String>, ostrakon_engine::log::LogError> {
        self.0.list()
    }
}

impl ostrakon_engine::log::LogFile for SlowFile {
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_at(offset, buf)
    }
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.append(bytes)
    }
    fn sync(&mut self) -> std::io::Result<()> {
        std::thread::sleep(std::time::Duration::from_millis(3));
        self.0.sync()
    }
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.0.truncate(len)
    }
}

#[test]
fn concurrent_batches_cannot_both_pass_a_check_only_one_may_pass() {
    let store = ostrakon_engine::Store::with_storage(
        std::sync::Arc::new(SlowSync(ostrakon_engine::log::MemStorage::new())),
        ostrakon_engine::log::system_clock(),
    )
    .unwrap();
    let ns = ostrakon_engine::core::Namespace::new("ns", "race").unwrap();
    let declare = |name: &str| {
        store
            .append(
                &ns,
                vec![Change::DeclareEntity(ostrakon_engine::NewEntity {
                    name: name.into(),
                    ..Default::default()
                })],
            )
            .unwrap()
            .entity(0)
            .unwrap()
    };
    let (a, b) = (declare("A"), declare("B"));
    let f = store
        .append(&ns, vec![Change::AssertFact(fact(a, "knows", b, iv("2010", None)))])
        .unwrap()
        .fact(0)
        .unwrap();
    for round in 0..10 {
        let ext = format!("turn-{round}");
        let results: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|w| {
                    let (store, ns, ext) = (&store, &ns, ext.clone());
                    s.spawn(move || {
                        let mut changes = vec![Change::RecordEpisode(ostrakon_engine::NewEpisode {
                            text: format!("writer {w}"),
                            external_id: Some(ext),
                            ..Default::default()
                        })];
                        if round == 0 {
                            changes.push(Change::RetractFact { fact: f, reason: None });
                        }
                        store.append(ns, changes).is_ok()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(results.iter().filter(|ok| **ok).count(), 1, "round {round}: {results:?}");
    }
    assert_eq!(store.counts(&ns).unwrap().episodes, 10);
}

#[test]
fn a_correction_of_another_slot_is_refused_and_withdraws_nothing() {
    let fx = Fixture::new();
    fx.define("livesIn", Cardinality::One);
    let (ana, bo) = (fx.entity("Ana"), fx.entity("Bo"));
    let (lyon, acme, berlin) = (fx.entity("Lyon"), fx.entity("Acme"), fx.entity("Berlin"));
    let (home, _) = fx.assert(fact(ana, "livesIn", lyon, iv("2008", None)));
    let (job, _) = fx.assert(fact(ana, "worksAt", acme, iv("2014", None)));
    let batches = fx.store.counts(&fx.ns).unwrap().batches;
    // Another predicate of the same subject; the same predicate of another subject.
    for (subject, named) in [(ana, job), (bo, home)] {
        let correction = ostrakon_engine::NewFact {
            supersedes: Some(named),
            ..fact(subject, "livesIn", berlin, iv("2014", None))
        };
        match fx.store.append(&fx.ns, vec![Change::AssertFact(correction)]) {
            Err(e) => assert!(matches!(e.root(), WriteError::SupersedesOtherSlot { .. }), "{e}"),
            Ok(r) => panic!("a correction of another slot was written at {}", r.seq),
        }
    }
    assert_eq!(fx.store.counts(&fx.ns).unwrap().batches, batches, "nothing was written");
    let in_2015 = ReadAt { valid_at: Some(t("2015")), ..ReadAt::latest() };
    assert_eq!(fx.values(ana, "livesIn", in_2015), ["Lyon"]);
    assert_eq!(fx.values(ana, "worksAt", in_2015), ["Acme"]);
}
