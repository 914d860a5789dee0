//! A Jepsen-style history: clients record every operation they send to a memory (which
//! node, when it was invoked and when it completed by the wall clock, and how it ended:
//! ok, failed with a code that says nothing was written, or unknown), and a checker
//! reads the history against what every node holds afterwards.
//!
//! The workload varies what its writers do, so that no two nodes' counters agree by
//! chance: batches with different numbers of new entities, facts and episodes; register
//! writes to shared slots (a `ONE` predicate whose facts all start at one instant, so
//! that the latest live statement in the log's order is the slot's value); restatements
//! of a value written before (another statement of the same fact); withdrawals of a
//! statement; erasures of an episode; and reads of a slot, half of them pinned to the
//! last batch the client has seen.
//!
//! The checker verifies that every node holds the same records; that every acknowledged
//! write is there exactly once, at the batch and with the ids its acknowledgement named;
//! that a write whose outcome is unknown is there whole or not at all, and a refused one
//! not at all; that nothing is there that nobody wrote; that no entity carries a name
//! other than the one it was created with; that the log's order respects real time (a
//! write that began after another was acknowledged comes after it); and that every read
//! answered the register's value in that order at the batch it says it read at, never
//! below what the client had seen (read-your-writes) nor below what its node had
//! acknowledged before it began.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Draw;
use super::cluster::post;

/// Where every slot's facts start: the same instant, so the log's order decides.
const VALID_FROM: &str = "2030-01-01T00:00:00Z";
/// When slots are read.
const READ_AT: &str = "2031-01-01T00:00:00Z";

/// What an operation asked.
#[derive(Clone, Debug)]
pub(crate) enum What {
    /// One batch: an episode (by its external id), new entities, and facts on slots
    /// (slot, value; a value written before to the slot is a restatement).
    Write { episode: Option<String>, entities: Vec<String>, facts: Vec<(String, String)> },
    /// Withdraws one statement (by its id).
    Retract { statement: String },
    /// Erases one episode (by its id; its external id to find it).
    Erase { id: String, external: String },
    /// Reads a slot, pinned to a batch or at the node's latest.
    Read { slot: String, pinned: Option<u64> },
}

/// How it ended.
#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    /// Acknowledged, at this batch (a read: its basis), with what came back.
    Ok { seq: u64, answer: Answer },
    /// Refused with a code that says nothing was written.
    Fail(String),
    /// Not known: no answer, or a code that leaves it open.
    Unknown(String),
}

/// What an acknowledged operation answered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Answer {
    /// A write's statements, one per fact in the order asked.
    pub statements: Vec<String>,
    /// A write's episode id.
    pub episode: Option<String>,
    /// The entities a write created, as (id, name).
    pub created: Vec<(String, String)>,
    /// A read's value (none: the slot holds nothing).
    pub value: Option<String>,
}

/// One operation of the history.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub client: usize,
    pub node: usize,
    pub invoked: Duration,
    pub completed: Duration,
    pub what: What,
    pub outcome: Outcome,
}

/// The history being recorded.
pub(crate) struct History {
    pub started: Instant,
    pub ops: Mutex<Vec<Op>>,
}

impl Default for History {
    fn default() -> Self {
        History { started: Instant::now(), ops: Mutex::default() }
    }
}

/// The namespace's slots.
pub(crate) fn slot(i: usize) -> String {
    format!("slot-{i}")
}

/// Makes the namespace: the register predicate and its slots.
pub(crate) fn prepare(addr: SocketAddr, ns: &str, slots: usize) {
    let define = "mutation($ns: String!) { definePredicate(namespace: $ns, name: \"value\", cardinality: ONE, valueType: STRING) { seq } }";
    let answer = post(addr, define, json!({ "ns": ns })).expect("defining the register");
    assert!(answer.get("errors").is_none(), "{answer}");
    let entities: Vec<Value> = (0..slots).map(|i| json!({ "name": slot(i) })).collect();
    let declare = "mutation($ns: String!, $e: [EntityInput!]!) { recordEpisode(namespace: $ns, episode: {text: \"slots\", externalId: \"slots\", occurredAt: \"2030-01-01T00:00:00Z\"}, entities: $e) { seq } }";
    let answer = post(addr, declare, json!({ "ns": ns, "e": entities })).expect("declaring the slots");
    assert!(answer.get("errors").is_none(), "{answer}");
}

/// What a client keeps of its own acknowledged writes, to withdraw or erase later.
#[derive(Default)]
struct Mine {
    statements: Vec<String>,
    episodes: Vec<(String, String)>,
    /// Values acknowledged per slot, to restate.
    values: BTreeMap<String, Vec<String>>,
    seen: u64,
}

const WRITE_EPISODE: &str = "mutation($ns: String!, $ep: EpisodeInput!, $e: [EntityInput!]!, $f: [FactInput!]!) {
  recordEpisode(namespace: $ns, episode: $ep, entities: $e, facts: $f) { seq episode { id } createdEntities { id name } statements { id } }
}";
const WRITE_FACTS: &str = "mutation($ns: String!, $f: [FactInput!]!) {
  assertFacts(namespace: $ns, facts: $f) { seq createdEntities { id name } statements { id } }
}";
const RETRACT: &str =
    "mutation($ns: String!, $s: ID!) { retractFact(namespace: $ns, fact: $s, reason: \"history\") { seq } }";
const ERASE: &str = "mutation($ns: String!, $id: ID!) { eraseEpisodes(namespace: $ns, ids: [$id], reason: \"history\") { seq } }";
const READ: &str = "query($ns: String!, $slot: String!, $pin: Int) {
  facts(namespace: $ns, subject: {name: $slot}, predicate: \"value\", validAt: \"2031-01-01T00:00:00Z\", knownAtSeq: $pin, first: 5) {
    nodes { object { string } } basis { seq }
  }
}";

fn fact(slot: &str, value: &str) -> Value {
    json!({ "subject": { "name": slot }, "predicate": "value", "object": { "string": value }, "validFrom": VALID_FROM })
}

/// The codes that say a request wrote nothing (`LIMIT_EXCEEDED` does for a read only: a
/// mutation stopped at its deadline may have written).
const NOTHING_WRITTEN: [&str; 7] = [
    "WRITE_CONFLICT",
    "DUPLICATE_EXTERNAL_ID",
    "ALREADY_RETRACTED",
    "UNKNOWN_EPISODE",
    "UNKNOWN_FACT",
    "NOT_YET_KNOWN",
    "INVALID_VALUE",
];

/// Sends one operation to the node at `addr`: `None` when the node could not be reached
/// (nothing was sent), else how it ended.
fn send(
    addr: SocketAddr,
    query: &str,
    variables: Value,
    pick: impl Fn(&Value) -> Option<(u64, Answer)>,
) -> Option<Outcome> {
    match post(addr, query, variables) {
        Err(false) => None,
        Err(true) => Some(Outcome::Unknown("no answer".into())),
        Ok(answer) => {
            if let Some((seq, answer)) = answer.get("data").filter(|d| !d.is_null()).and_then(&pick) {
                return Some(Outcome::Ok { seq, answer });
            }
            let code =
                answer.pointer("/errors/0/extensions/code").and_then(Value::as_str).unwrap_or("").to_owned();
            if code == "ERASURE_UNFINISHED" {
                // Recorded and acknowledged; its batch is in the message.
                let message = answer.pointer("/errors/0/message").and_then(Value::as_str).unwrap_or("");
                let seq = message.split("at batch ").nth(1).and_then(|r| r.split_whitespace().next());
                if let Some(seq) = seq.and_then(|s| s.parse().ok()) {
                    return Some(Outcome::Ok { seq, answer: Answer::default() });
                }
            }
            let read = query.trim_start().starts_with("query");
            if NOTHING_WRITTEN.contains(&code.as_str()) || (read && code == "LIMIT_EXCEEDED") {
                Some(Outcome::Fail(code))
            } else if ["LIMIT_EXCEEDED", "UNAVAILABLE", "ERASURE_UNFINISHED"].contains(&code.as_str()) {
                Some(Outcome::Unknown(code))
            } else {
                panic!("an answer the history cannot read: {answer}")
            }
        }
    }
}

fn ids(list: &Value, field: &str) -> Vec<String> {
    list.as_array().into_iter().flatten().filter_map(|v| v[field].as_str().map(str::to_owned)).collect()
}

/// One client: until `stop`, operations on the nodes in turn (a node that cannot be
/// reached is skipped: nothing was sent), each recorded. A client never sends an
/// operation again: an unknown outcome stays unknown.
/// What a client does besides writing and reading.
#[derive(Clone, Copy)]
pub(crate) struct Mix {
    /// Whether it erases episodes it wrote (each erasure also has the stream's Raft logs
    /// compacted: 10 MiB of filler, which loads the servers).
    pub erasures: bool,
}

pub(crate) fn client(
    id: usize,
    nodes: Vec<Arc<Mutex<SocketAddr>>>,
    ns: String,
    (slots, mix): (usize, Mix),
    stop: Arc<AtomicBool>,
    history: Arc<History>,
) {
    let mut draw = Draw(0x2545_F491_4F6C_DD1D ^ ((id as u64 + 1) * 0x9E37_79B9));
    let mut mine = Mine::default();
    let mut turn = id;
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let roll = draw.below(100);
        let (what, query, variables) = if roll < 35 {
            let slot = slot(draw.below(slots as u64) as usize);
            // Half pinned to the last batch this client saw (none before it saw one).
            let pinned = (mine.seen > 0 && draw.below(2) == 0).then_some(mine.seen);
            let variables = json!({ "ns": ns, "slot": slot, "pin": pinned });
            (What::Read { slot, pinned }, READ, variables)
        } else if roll < 45 && !mine.statements.is_empty() {
            let statement = mine.statements.swap_remove(draw.below(mine.statements.len() as u64) as usize);
            let variables = json!({ "ns": ns, "s": statement });
            (What::Retract { statement }, RETRACT, variables)
        } else if roll < 50 && mix.erasures && !mine.episodes.is_empty() {
            let (id, external) = mine.episodes.swap_remove(draw.below(mine.episodes.len() as u64) as usize);
            let variables = json!({ "ns": ns, "id": id });
            (What::Erase { id, external }, ERASE, variables)
        } else {
            // A batch: facts on distinct slots, at least one with a new value (it names
            // the batch); some restate a value this client wrote before.
            let mut chosen = BTreeSet::new();
            let mut facts = Vec::new();
            for k in 0..1 + draw.below(3) {
                let slot = slot(draw.below(slots as u64) as usize);
                if !chosen.insert(slot.clone()) {
                    continue;
                }
                let earlier = mine.values.get(&slot).filter(|v| !v.is_empty() && k > 0 && draw.below(3) == 0);
                let value = match earlier {
                    Some(values) => values[draw.below(values.len() as u64) as usize].clone(),
                    None => format!("c{id}-{i}-f{k}"),
                };
                facts.push((slot, value));
            }
            if roll < 75 {
                let external = format!("c{id}-{i}");
                let entities: Vec<String> = (0..draw.below(4)).map(|k| format!("c{id}-{i}-e{k}")).collect();
                let variables = json!({
                    "ns": ns,
                    "ep": { "text": format!("client {id} says {i}"), "externalId": external, "occurredAt": "2030-01-02T00:00:00Z" },
                    "e": entities.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>(),
                    "f": facts.iter().map(|(s, v)| fact(s, v)).collect::<Vec<_>>(),
                });
                (What::Write { episode: Some(external), entities, facts }, WRITE_EPISODE, variables)
            } else {
                let variables =
                    json!({ "ns": ns, "f": facts.iter().map(|(s, v)| fact(s, v)).collect::<Vec<_>>() });
                (What::Write { episode: None, entities: Vec::new(), facts }, WRITE_FACTS, variables)
            }
        };
        let pick = |data: &Value| -> Option<(u64, Answer)> {
            match &what {
                What::Read { .. } => {
                    let facts = &data["facts"];
                    let seq = facts["basis"]["seq"].as_u64()?;
                    let value = facts["nodes"][0]["object"]["string"].as_str().map(str::to_owned);
                    assert!(
                        facts["nodes"].as_array().is_none_or(|n| n.len() <= 1),
                        "a slot in force twice: {data}"
                    );
                    Some((seq, Answer { value, ..Answer::default() }))
                }
                What::Write { episode, .. } => {
                    let payload =
                        if episode.is_some() { &data["recordEpisode"] } else { &data["assertFacts"] };
                    let seq = payload["seq"].as_u64()?;
                    let created = payload["createdEntities"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|e| Some((e["id"].as_str()?.to_owned(), e["name"].as_str()?.to_owned())))
                        .collect();
                    let statements = ids(&payload["statements"], "id");
                    let episode = payload["episode"]["id"].as_str().map(str::to_owned);
                    Some((seq, Answer { statements, episode, created, value: None }))
                }
                What::Retract { .. } => Some((data["retractFact"]["seq"].as_u64()?, Answer::default())),
                What::Erase { .. } => Some((data["eraseEpisodes"]["seq"].as_u64()?, Answer::default())),
            }
        };
        // The nodes in turn; one that cannot be reached is skipped (nothing was sent).
        let mut sent = None;
        for _ in 0..nodes.len() {
            turn = (turn + 1) % nodes.len();
            let addr = *nodes[turn].lock().unwrap();
            let invoked = history.started.elapsed();
            if let Some(outcome) = send(addr, query, variables.clone(), pick) {
                sent = Some((turn, invoked, history.started.elapsed(), outcome));
                break;
            }
        }
        let Some((node, invoked, completed, outcome)) = sent else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if let Outcome::Ok { seq, answer } = &outcome {
            mine.seen = mine.seen.max(*seq);
            if let What::Write { facts, .. } = &what {
                mine.statements.extend(answer.statements.iter().cloned());
                for (slot, value) in facts {
                    mine.values.entry(slot.clone()).or_default().push(value.clone());
                }
                if let (Some(id), What::Write { episode: Some(external), .. }) = (&answer.episode, &what) {
                    mine.episodes.push((id.clone(), external.clone()));
                }
            }
        }
        history.ops.lock().unwrap().push(Op { client: id, node, invoked, completed, what, outcome });
        // A moment between operations, as a client has: the machine's cores are shared
        // with the servers and nodes under test.
        std::thread::sleep(THINK);
    }
}

/// The pause between two operations of a client.
const THINK: Duration = Duration::from_millis(5);

/// What a node holds of the namespace, read at one batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Held {
    pub seq: u64,
    /// External id → (episode id, batch).
    pub episodes: BTreeMap<String, (String, u64)>,
    /// Entity id → name.
    pub entities: BTreeMap<String, String>,
    /// Per slot: value → its statements.
    pub slots: BTreeMap<String, BTreeMap<String, Vec<Stated>>>,
}

/// A statement as held: its id, its batch, and the batch that withdrew it.
pub(crate) type Stated = (String, u64, Option<u64>);

/// A value with one of its statements: the batch, and the batch that withdrew it.
type Register<'a> = BTreeMap<&'a str, Vec<(&'a str, u64, Option<u64>)>>;

fn pages(addr: SocketAddr, query: &str, mut variables: Value, list: &str) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let answer =
            post(addr, query, variables.clone()).unwrap_or_else(|_| panic!("reading {list} on {addr}"));
        assert!(answer.get("errors").is_none(), "{answer}");
        let connection = &answer["data"][list];
        out.extend(connection["nodes"].as_array().cloned().unwrap_or_default());
        if connection["pageInfo"]["hasNextPage"] != true {
            return out;
        }
        variables["after"] = connection["pageInfo"]["endCursor"].clone();
    }
}

/// What the node at `addr` holds of `ns` at batch `seq`.
pub(crate) fn held(addr: SocketAddr, ns: &str, seq: u64, slots: usize) -> Held {
    let episodes = pages(
        addr,
        "query($ns: String!, $s: Int, $after: String) { episodes(namespace: $ns, knownAtSeq: $s, first: 1000, after: $after) { nodes { id externalId recordedSeq } pageInfo { hasNextPage endCursor } } }",
        json!({ "ns": ns, "s": seq }),
        "episodes",
    );
    let entities = pages(
        addr,
        "query($ns: String!, $s: Int, $after: String) { entities(namespace: $ns, knownAtSeq: $s, first: 1000, after: $after) { nodes { id name } pageInfo { hasNextPage endCursor } } }",
        json!({ "ns": ns, "s": seq }),
        "entities",
    );
    let mut held = Held {
        seq,
        episodes: BTreeMap::new(),
        entities: entities
            .iter()
            .map(|e| (e["id"].as_str().unwrap().to_owned(), e["name"].as_str().unwrap().to_owned()))
            .collect(),
        slots: BTreeMap::new(),
    };
    for e in &episodes {
        let Some(external) = e["externalId"].as_str() else { continue };
        let prior = held.episodes.insert(
            external.to_owned(),
            (e["id"].as_str().unwrap().to_owned(), e["recordedSeq"].as_u64().unwrap()),
        );
        assert!(prior.is_none(), "episode {external} held twice");
    }
    for i in 0..slots {
        let facts = pages(
            addr,
            "query($ns: String!, $slot: String!, $s: Int, $after: String) { facts(namespace: $ns, subject: {name: $slot}, predicate: \"value\", includeAll: true, validAt: \"2031-01-01T00:00:00Z\", knownAtSeq: $s, first: 200, after: $after) { nodes { object { string } statements(first: 50) { id seq withdrawnSeq } } pageInfo { hasNextPage endCursor } } }",
            json!({ "ns": ns, "slot": slot(i), "s": seq }),
            "facts",
        );
        let values = held.slots.entry(slot(i)).or_default();
        for f in facts {
            let value = f["object"]["string"].as_str().unwrap().to_owned();
            let statements = values.entry(value).or_default();
            for s in f["statements"].as_array().into_iter().flatten() {
                statements.push((
                    s["id"].as_str().unwrap().to_owned(),
                    s["seq"].as_u64().unwrap(),
                    s["withdrawnSeq"].as_u64(),
                ));
            }
        }
    }
    held
}

/// What the history came to.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub ops: usize,
    pub acknowledged_writes: usize,
    pub unknown: usize,
    pub refused: usize,
    pub conflicts: usize,
    /// Refusals and unknown outcomes by code.
    pub codes: BTreeMap<String, usize>,
    pub reads: usize,
    pub lost: Vec<String>,
    pub duplicated: Vec<String>,
    pub renamed: Vec<String>,
    pub phantom: Vec<String>,
    pub partial: Vec<String>,
    pub stale_reads: Vec<String>,
    pub order: Vec<String>,
    /// Longest stretch without an acknowledged write (by completion time), and when it
    /// began (since the history began).
    pub gap: Duration,
    pub gap_from: Duration,
    pub write_p50: Duration,
    pub write_p99: Duration,
    /// Operations that took over two seconds, one line each (to read a failure by).
    pub slow: Vec<String>,
}

impl Verdict {
    /// Whatever broke a promise, one line each.
    pub(crate) fn violations(&self) -> Vec<String> {
        [
            &self.lost,
            &self.duplicated,
            &self.renamed,
            &self.phantom,
            &self.partial,
            &self.stale_reads,
            &self.order,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }

    /// One line for a report.
    pub(crate) fn summary(&self) -> String {
        format!(
            "{} operations: {} writes acknowledged, {} unknown, {} refused ({} conflicts; {:?}), {} reads checked; \
             lost {}, duplicated {}, renamed {}, phantom {}, partial {}, stale reads {}, out of order {}; \
             longest gap {} ms (from {} ms), write p50 {} ms, p99 {} ms",
            self.ops,
            self.acknowledged_writes,
            self.unknown,
            self.refused,
            self.conflicts,
            self.codes,
            self.reads,
            self.lost.len(),
            self.duplicated.len(),
            self.renamed.len(),
            self.phantom.len(),
            self.partial.len(),
            self.stale_reads.len(),
            self.order.len(),
            self.gap.as_millis(),
            self.gap_from.as_millis(),
            self.write_p50.as_millis(),
            self.write_p99.as_millis()
        )
    }
}

/// Where a write of the history took effect, if it did: the batch of the first
/// statement of its first value (always new: it names the batch), else `None`.
fn landed_at(op: &Op, held: &Held) -> Option<u64> {
    let What::Write { facts, .. } = &op.what else { return None };
    let (slot, value) = facts.first()?;
    held.slots.get(slot)?.get(value)?.iter().map(|(_, seq, _)| *seq).min()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Reads the history against what the nodes hold (`held`, read from one node: the
/// caller checks that every node holds the same).
pub(crate) fn check(history: &History, held: &Held) -> Verdict {
    let ops = history.ops.lock().unwrap().clone();
    let mut v = Verdict { ops: ops.len(), ..Verdict::default() };
    // Where each write took effect, and what the history says is there.
    let mut at: HashMap<usize, u64> = HashMap::new();
    let mut claimed: BTreeSet<(String, String, u64)> = BTreeSet::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    let mut externals: BTreeSet<&str> = BTreeSet::new();
    let mut erased: BTreeMap<&str, Option<u64>> = BTreeMap::new();
    let mut withdrawals: HashMap<&str, u64> = HashMap::new();
    for (n, op) in ops.iter().enumerate() {
        match (&op.outcome, &op.what) {
            (Outcome::Fail(code), _) => {
                v.refused += 1;
                v.conflicts += usize::from(code == "WRITE_CONFLICT");
                *v.codes.entry(code.clone()).or_default() += 1;
            }
            (Outcome::Unknown(code), _) => {
                v.unknown += 1;
                *v.codes.entry(code.clone()).or_default() += 1;
            }
            (Outcome::Ok { .. }, What::Read { .. }) => v.reads += 1,
            (Outcome::Ok { .. }, _) => v.acknowledged_writes += 1,
        }
        match &op.what {
            What::Write { episode, entities, facts } => {
                names.extend(entities.iter().map(String::as_str));
                externals.extend(episode.as_deref());
                let found = landed_at(op, held);
                let seq = match (&op.outcome, found) {
                    (Outcome::Ok { seq, .. }, Some(found)) if found == *seq => Some(*seq),
                    (Outcome::Ok { seq, .. }, found) => {
                        v.lost.push(format!(
                            "write {n} (client {}) acknowledged at {seq}, found at {found:?}",
                            op.client
                        ));
                        None
                    }
                    (Outcome::Fail(code), Some(found)) => {
                        v.phantom.push(format!("write {n} refused ({code}) but there at {found}"));
                        None
                    }
                    (_, found) => found,
                };
                let Some(seq) = seq else { continue };
                at.insert(n, seq);
                for (slot, value) in facts {
                    claimed.insert((slot.clone(), value.clone(), seq));
                }
                if let Outcome::Ok { answer, .. } = &op.outcome {
                    for (id, name) in &answer.created {
                        match held.entities.get(id) {
                            Some(held_name) if held_name == name => {}
                            other => {
                                v.renamed.push(format!("entity {id} created as {name:?}, holds {other:?}"))
                            }
                        }
                    }
                }
            }
            What::Retract { statement } => {
                if let Outcome::Ok { seq, .. } = op.outcome {
                    withdrawals.insert(statement.as_str(), seq);
                }
            }
            What::Erase { external, .. } => {
                let seq = match op.outcome {
                    Outcome::Ok { seq, .. } => Some(seq),
                    _ => None,
                };
                if !matches!(op.outcome, Outcome::Fail(_)) {
                    erased.insert(external.as_str(), seq);
                }
            }
            What::Read { .. } => {}
        }
    }
    // Each write whole, once, where it took effect; nothing of one that did not.
    for (n, op) in ops.iter().enumerate() {
        let What::Write { episode, entities, facts } = &op.what else { continue };
        let seq = at.get(&n).copied();
        if let Some(external) = episode {
            let there = held.episodes.get(external.as_str());
            let gone = erased.contains_key(external.as_str());
            match (seq, there) {
                (Some(seq), Some((id, found))) => {
                    if *found != seq {
                        v.partial.push(format!("write {n}: its episode is at {found}, the write at {seq}"));
                    }
                    if let Outcome::Ok { answer, .. } = &op.outcome
                        && answer.episode.as_deref() != Some(id.as_str())
                    {
                        v.renamed.push(format!(
                            "write {n}: episode {external} is {id}, acknowledged as {:?}",
                            answer.episode
                        ));
                    }
                }
                (Some(seq), None) if !gone => {
                    v.lost.push(format!("write {n}: episode {external} (batch {seq}) is not there"))
                }
                (None, Some((_, found))) => {
                    v.partial.push(format!("write {n} did not take effect, its episode is at {found}"))
                }
                _ => {}
            }
        }
        for name in entities {
            let count = held.entities.values().filter(|held| *held == name).count();
            match (seq.is_some(), count) {
                (true, 1) | (false, 0) => {}
                (true, 0) => v.lost.push(format!("write {n}: entity {name} is not there")),
                (false, _) => {
                    v.partial.push(format!("write {n} did not take effect, entity {name} is there"))
                }
                (true, _) => v.duplicated.push(format!("write {n}: entity {name} is there {count} times")),
            }
        }
        if let (Some(seq), Outcome::Ok { answer, .. }) = (seq, &op.outcome) {
            for ((slot, value), id) in facts.iter().zip(&answer.statements) {
                let statement = held.slots.get(slot).and_then(|s| s.get(value)).and_then(|list| {
                    list.iter().find(|(held_id, held_seq, _)| held_id == id && *held_seq == seq)
                });
                if statement.is_none() {
                    v.lost.push(format!(
                        "write {n}: statement {id} of {value} in {slot} at {seq} is not there"
                    ));
                }
            }
        }
    }
    // Nothing nobody wrote: episodes, entities, statements, withdrawals.
    for external in held.episodes.keys() {
        if external != "slots" && !externals.contains(external.as_str()) {
            v.phantom.push(format!("episode {external} nobody wrote"));
        }
    }
    for (id, name) in &held.entities {
        if !name.starts_with("slot-") && !names.contains(name.as_str()) {
            v.phantom.push(format!("entity {id} {name:?} nobody wrote"));
        }
    }
    let mut model: Register<'_> = BTreeMap::new();
    for (slot, values) in &held.slots {
        for (value, list) in values {
            for (id, seq, withdrawn) in list {
                if !claimed.contains(&(slot.clone(), value.clone(), *seq)) {
                    v.phantom.push(format!(
                        "statement {id} of {value} in {slot} at {seq}: no write took effect there"
                    ));
                }
                if list.iter().filter(|(_, s, _)| s == seq).count() > 1 {
                    v.duplicated.push(format!("{value} in {slot} stated twice at {seq}"));
                }
                let expected = withdrawals.get(id.as_str()).copied();
                let retract_unknown = ops.iter().any(|op| {
                    matches!((&op.what, &op.outcome), (What::Retract { statement }, Outcome::Unknown(_)) if statement == id)
                });
                match (expected, *withdrawn) {
                    (Some(e), Some(w)) if e == w => {}
                    (None, None) => {}
                    (None, Some(_)) if retract_unknown => {}
                    (e, w) => {
                        v.lost.push(format!("statement {id}: withdrawn at {w:?}, the history says {e:?}"))
                    }
                }
                model.entry(slot.as_str()).or_default().push((value.as_str(), *seq, *withdrawn));
            }
        }
    }
    // The register, in the log's order: the value whose latest live statement is latest.
    let register = |slot: &str, at: u64| -> Option<&str> {
        let mut best: Option<(u64, &str)> = None;
        for (value, seq, withdrawn) in model.get(slot).into_iter().flatten() {
            if *seq <= at && withdrawn.is_none_or(|w| w > at) && best.is_none_or(|(b, _)| *seq > b) {
                best = Some((*seq, value));
            }
        }
        best.map(|(_, value)| value)
    };
    // Writes in real-time order, and reads against them.
    let mut writes: Vec<(Duration, Duration, u64, usize)> = ops
        .iter()
        .filter(|op| !matches!(op.what, What::Read { .. }))
        .filter_map(|op| match op.outcome {
            Outcome::Ok { seq, .. } => Some((op.invoked, op.completed, seq, op.node)),
            _ => None,
        })
        .collect();
    writes.sort_by_key(|w| w.1);
    for pair in writes.windows(2) {
        let gap = pair[1].1.saturating_sub(pair[0].1);
        if gap > v.gap {
            (v.gap, v.gap_from) = (gap, pair[0].1);
        }
    }
    let mut latencies: Vec<Duration> = writes.iter().map(|w| w.1.saturating_sub(w.0)).collect();
    latencies.sort();
    v.write_p50 = percentile(&latencies, 0.5);
    v.write_p99 = percentile(&latencies, 0.99);
    for b in &writes {
        if let Some(a) = writes.iter().filter(|a| a.1 < b.0).max_by_key(|a| a.2)
            && a.2 >= b.2
        {
            v.order.push(format!(
                "a write acknowledged at {} ms (batch {}) before another began at {} ms (batch {})",
                a.1.as_millis(),
                a.2,
                b.0.as_millis(),
                b.2
            ));
        }
    }
    for op in &ops {
        let took = op.completed.saturating_sub(op.invoked);
        if took > Duration::from_secs(2) {
            let what = match &op.what {
                What::Write { .. } => "write".to_owned(),
                What::Retract { .. } => "retract".to_owned(),
                What::Erase { .. } => "erase".to_owned(),
                What::Read { pinned, .. } => format!("read pinned at {pinned:?}"),
            };
            v.slow.push(format!(
                "client {} on node {}: {what} from {} ms took {} ms: {:?}",
                op.client,
                op.node,
                op.invoked.as_millis(),
                took.as_millis(),
                op.outcome
            ));
        }
    }
    for (n, op) in ops.iter().enumerate() {
        let (What::Read { slot, pinned }, Outcome::Ok { seq, answer }) = (&op.what, &op.outcome) else {
            continue;
        };
        let expected = register(slot, *seq);
        if expected != answer.value.as_deref() {
            v.stale_reads.push(format!(
                "read {n} of {slot} at batch {seq} on node {}: {:?}, the log's order gives {expected:?}",
                op.node, answer.value
            ));
        }
        if pinned.is_some_and(|p| *seq < p) {
            v.stale_reads.push(format!("read {n} pinned at {pinned:?} read at {seq}"));
        }
        // A read at the node's latest sees every write that node acknowledged before the
        // read began (a pinned one reads at its pin, in the past on purpose).
        let known = writes.iter().filter(|w| w.3 == op.node && w.1 < op.invoked).map(|w| w.2).max();
        if pinned.is_none() && known.is_some_and(|k| *seq < k) {
            v.stale_reads.push(format!(
                "read {n} on node {} at batch {seq}, below {known:?} its node acknowledged before it began",
                op.node
            ));
        }
    }
    v
}
