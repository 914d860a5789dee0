//! Real temporal data: all of YAGO11k through the public API. Bad rows are rejected
//! with errors that name the field and value; then thousands of "what was `relation`
//! of X in year Y" questions must equal a naive scan of the accepted rows.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ostrakon_engine::core::OverlapQuery;
use ostrakon_engine::core::{
    Allen, CoreError, EntityId, Interval, Namespace, PartialTime, Side, Step, TimeZone, Timestamp, Value,
};
use ostrakon_engine::views::SeriesQuery;
use ostrakon_engine::{
    Change, EntityRef, NewEntity, NewFact, ObjectRef, ReadAt, Store, views::FactFilter, views::Scope,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn data(file: &str) -> String {
    let path = crate::common::project_root().join("tests/data/yago11k").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `<Name>\tid…` lines as id → name.
fn id_map(file: &str) -> HashMap<usize, String> {
    data(file)
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            let name = f.next().unwrap().trim_matches(['<', '>']).to_owned();
            (f.next().unwrap().parse().unwrap(), name)
        })
        .collect()
}

/// An accepted row: subject, relation, object, valid interval.
struct Row {
    subject: usize,
    relation: String,
    object: usize,
    valid: Interval,
}

/// YAGO's intervals are closed at the precision they are given in: `[1952, 1964]`
/// means from the start of 1952 to the end of 1964. An unknown end means open-ended.
fn interval(start: &str, end: &str) -> Result<Interval, CoreError> {
    let from = match PartialTime::parse("start", start, &TimeZone::Utc)? {
        PartialTime::Known { start, .. } => start,
        PartialTime::Unknown => {
            return Err(CoreError::invalid_value(
                "start",
                start,
                "an unknown start cannot be placed in time",
            ));
        }
    };
    let to = match PartialTime::parse("end", end, &TimeZone::Utc)? {
        PartialTime::Known { end, .. } => Some(end),
        PartialTime::Unknown => None,
    };
    Interval::new("start..end", from, to)
}

#[test]
fn yago11k_loads_rejects_bad_rows_and_answers_like_a_naive_scan() {
    let names = id_map("entity2id.txt");
    let relations = id_map("relation2id.txt");
    assert_eq!((names.len(), relations.len()), (10_623, 10));

    let mut rows = Vec::new();
    let mut malformed = Vec::new();
    let mut inverted = Vec::new();
    let mut total = 0;
    for file in ["train.txt", "valid.txt", "test.txt"] {
        for (n, line) in data(file).lines().enumerate() {
            total += 1;
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 5, "{file}:{}", n + 1);
            match interval(f[3], f[4]) {
                Ok(valid) => rows.push(Row {
                    subject: f[0].parse().unwrap(),
                    relation: relations[&f[1].parse::<usize>().unwrap()].clone(),
                    object: f[2].parse().unwrap(),
                    valid,
                }),
                Err(e @ CoreError::InvalidTime { .. }) => malformed.push(e),
                Err(e @ CoreError::InvalidInterval { .. }) => inverted.push(e),
                Err(e) => panic!("{file}:{}: unexpected {e}", n + 1),
            }
        }
    }
    // The malformed dates, each named with its field and value.
    let malformed: Vec<String> = malformed.iter().map(ToString::to_string).collect();
    assert_eq!(
        malformed,
        [
            "invalid time in `start`: \"307-13047-09\": the month \"13047\" is not a number from 1 to 12",
            "invalid time in `start`: \"1963-64-65\": the month 64 is not from 1 to 12",
        ]
    );
    // Rows ending before they start (closed intervals at their own precision).
    assert!(inverted.iter().all(|e| e.to_string().starts_with("invalid interval in `start..end`: from ")));
    assert_eq!(inverted.len(), 70);
    assert_eq!(total, 20_509);
    assert_eq!(rows.len(), total - malformed.len() - inverted.len());

    let store = Store::in_memory();
    let ns = Namespace::new("namespace", "yago").unwrap();
    let mut ids: Vec<(usize, &String)> = names.iter().map(|(k, v)| (*k, v)).collect();
    ids.sort();
    let declare = ids
        .iter()
        .map(|(_, name)| Change::DeclareEntity(NewEntity { name: (*name).clone(), ..NewEntity::default() }))
        .collect();
    let receipt = store.append(&ns, declare).unwrap();
    let entity: HashMap<usize, EntityId> =
        ids.iter().enumerate().map(|(n, (yago, _))| (*yago, receipt.entity(n).unwrap())).collect();
    for chunk in rows.chunks(1000) {
        let changes = chunk
            .iter()
            .map(|r| {
                Change::AssertFact(NewFact::new(
                    EntityRef::Id(entity[&r.subject]),
                    r.relation.clone(),
                    ObjectRef::Entity(EntityRef::Id(entity[&r.object])),
                    r.valid,
                ))
            })
            .collect();
        store.append(&ns, changes).unwrap();
    }
    // Identical rows (the same fact listed twice) are corroborations of one fact.
    let distinct: BTreeSet<_> =
        rows.iter().map(|r| (r.subject, &r.relation, r.object, r.valid.from(), r.valid.to())).collect();
    assert_eq!(store.counts(&ns).unwrap().facts, distinct.len() as u64);

    // "What was `relation` of X in year Y?", at the middle of the year.
    let mut rng = StdRng::seed_from_u64(11_000);
    let mut with_answer = 0;
    for _ in 0..6_000 {
        let probe = &rows[rng.random_range(0..rows.len())];
        let year = match rng.random_range(0..3) {
            0 => rng.random_range(1800..2030),
            _ => {
                let y = probe.valid.from().to_datetime().format("%Y").to_string().parse::<i32>().unwrap();
                y + rng.random_range(-3..12)
            }
        };
        let t = Timestamp::parse("t", &format!("{year:04}-07-01"), &TimeZone::Utc).unwrap();
        let expected: BTreeSet<String> = rows
            .iter()
            .filter(|r| r.subject == probe.subject && r.relation == probe.relation && r.valid.contains(t))
            .map(|r| names[&r.object].clone())
            .collect();
        let filter = FactFilter {
            subject: Some(entity[&probe.subject]),
            predicate: Some(probe.relation.clone()),
            object: None,
        };
        let answer = store.at(&ns, ReadAt::valid(t)).and_then(|r| r.facts(&filter, Scope::InForce)).unwrap();
        let actual: BTreeSet<String> = answer
            .value
            .iter()
            .map(|f| match f.fact.object {
                Value::Entity(e) => store.inspect(&ns, |i| i.entity(e).unwrap().name.clone()).unwrap(),
                Value::Literal(_) => panic!("YAGO objects are entities"),
            })
            .collect();
        assert_eq!(actual, expected, "{} {} in {year}", names[&probe.subject], probe.relation);
        with_answer += usize::from(!expected.is_empty());
    }
    // Many questions are about a time the fact held, so they are not all empty answers.
    assert!(with_answer > 2_500, "{with_answer} of 6000 questions had an answer");

    // Analytics equal naive computations over the accepted rows (no predicate is
    // declared, so every fact holds over its own interval).
    let at = ReadAt::latest();
    // How many people were affiliated with each organisation at the start of each decade.
    let decade = Step::parse("step", "P10Y").unwrap();
    let (from, to) = (year(1900), year(2030));
    let series = store
        .at(&ns, at)
        .and_then(|r| {
            r.in_force_series(&SeriesQuery {
                predicate: "isAffiliatedTo",
                value: None,
                from,
                to,
                step: decade,
                by_value: true,
            })
        })
        .unwrap()
        .value;
    let points = series.points.clone();
    assert_eq!(points.len(), 13);
    let got: BTreeMap<String, Vec<u64>> = series
        .groups
        .into_iter()
        .map(|g| match g.value {
            Some(Value::Entity(e)) => {
                (store.inspect(&ns, |i| i.entity(e).unwrap().name.clone()).unwrap(), g.counts)
            }
            other => panic!("{other:?}"),
        })
        .filter(|(_, counts)| counts.iter().any(|c| *c > 0))
        .collect();
    let mut want: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (k, t) in points.iter().enumerate() {
        let mut people: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for r in rows.iter().filter(|r| r.relation == "isAffiliatedTo" && r.valid.contains(*t)) {
            people.entry(r.object).or_default().insert(r.subject);
        }
        for (org, who) in people {
            want.entry(names[&org].clone()).or_insert_with(|| vec![0; points.len()])[k] = who.len() as u64;
        }
    }
    assert!(want.len() > 20, "{} organisations", want.len());
    assert_eq!(got, want);
    // Who played for the same club at the same time as the player with most clubs.
    let mut clubs: HashMap<usize, usize> = HashMap::new();
    for r in rows.iter().filter(|r| r.relation == "playsFor") {
        *clubs.entry(r.subject).or_default() += 1;
    }
    let x = *clubs.iter().max_by_key(|(who, n)| (**n, std::cmp::Reverse(**who))).unwrap().0;
    let a = Side { subject: None, predicate: "playsFor".into(), value: None };
    let b = Side { subject: Some(entity[&x]), predicate: "playsFor".into(), value: None };
    let query = OverlapQuery { a, b, relation: Allen::Intersects, same_value: true, limit: 1000 };
    let answer = store.at(&ns, at).and_then(|r| r.overlaps(&query)).unwrap().value;
    assert!(!answer.truncated);
    let got: BTreeSet<(EntityId, Value)> = answer
        .pairs
        .iter()
        .filter(|(p, _)| p.subject != entity[&x])
        .map(|(p, _)| (p.subject, p.value.clone()))
        .collect();
    let mine: Vec<&Row> = rows.iter().filter(|r| r.relation == "playsFor" && r.subject == x).collect();
    let want: BTreeSet<(EntityId, Value)> = rows
        .iter()
        .filter(|r| r.relation == "playsFor" && r.subject != x)
        .filter(|r| mine.iter().any(|m| m.object == r.object && Allen::Intersects.holds(&m.valid, &r.valid)))
        .map(|r| (entity[&r.subject], Value::Entity(entity[&r.object])))
        .collect();
    assert!(!want.is_empty(), "{} shares no club and time with anyone", names[&x]);
    assert_eq!(got, want, "team-mates of {}", names[&x]);
}

fn year(y: i32) -> Timestamp {
    Timestamp::parse("t", &format!("{y:04}"), &TimeZone::Utc).unwrap()
}
