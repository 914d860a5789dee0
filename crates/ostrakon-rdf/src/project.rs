//! A namespace as RDF 1.2 statements at one read point, read through the `Store`'s
//! typed pages.

use ostrakon_core::{EntityId, EpisodeId, FactId, Literal as OstrakonLiteral, Namespace, Timestamp, Value};
use ostrakon_engine::{
    Basis, ReadAt, Store, views::EntityFilter, views::EpisodeFilter, views::FactView, views::SnapshotCursor,
};
use oxigraph::model::vocab::{rdf, rdfs, xsd};
use oxigraph::model::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term, Triple};

use crate::error::RdfError;

/// The vocabulary of Ostrakon's own terms (`mn:`): the annotations of a fact's reifier and
/// the descriptions of entities.
pub const VOCAB: &str = "urn:ostrakon:vocab:";

/// Facts and entities read per page while projecting.
const PAGE: usize = 1_000;

/// Which statements a projection holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum View {
    /// The facts in force at (T, S) as plain triples, with the entities known at S: the
    /// graph most SPARQL users expect.
    #[default]
    InForce,
    /// The in-force triples, and for every fact visible at S (whatever its status at T,
    /// retracted ones included) a reifier carrying its validity, status at T, confidence,
    /// provenance, assertion and supersession; and the episodes known at S. The reifier
    /// names its triple as an RDF 1.2 triple term (`f:7 rdf:reifies <<( s p o )>>`).
    History,
    /// [`View::History`] for tools that read RDF 1.1 only (rdflib, most stores): the
    /// reifier is a standard reification of the triple (`f:7 a rdf:Statement;
    /// rdf:subject s; rdf:predicate p; rdf:object o`), with the same annotations.
    HistoryStandard,
}

impl View {
    /// Its name in APIs: `in-force` or `history`.
    pub fn as_str(self) -> &'static str {
        match self {
            View::InForce => "in-force",
            View::History => "history",
            View::HistoryStandard => "history-standard",
        }
    }
}

/// The IRIs of one namespace: everything of namespace `ns` lives under `urn:ostrakon:{ns}:`,
/// so that the memories of two namespaces never share a node.
#[derive(Clone, Debug)]
pub struct Iris {
    base: String,
}

impl Iris {
    /// The IRIs of `ns`.
    pub fn new(ns: &Namespace) -> Self {
        // Namespace names are `[A-Za-z0-9_.-]`: safe in an IRI as they are.
        Iris { base: format!("urn:ostrakon:{}:", ns.as_str()) }
    }

    /// The namespace's base, `urn:ostrakon:{ns}:`.
    pub fn base(&self) -> &str {
        &self.base
    }

    fn under(&self, kind: &str, local: impl std::fmt::Display) -> NamedNode {
        NamedNode::new_unchecked(format!("{}{kind}:{local}", self.base))
    }

    /// An entity: `e:{id}`.
    pub fn entity(&self, id: EntityId) -> NamedNode {
        self.under("entity", id.0)
    }

    /// A predicate: `p:{name}`, the name percent-encoded outside `[A-Za-z0-9._~-]`.
    pub fn predicate(&self, name: &str) -> NamedNode {
        self.under("predicate", Encoded(name))
    }

    /// An entity's property (not a fact): `prop:{name}`.
    pub fn property(&self, name: &str) -> NamedNode {
        self.under("property", Encoded(name))
    }

    /// A fact, the reifier of its triple: `f:{id}`.
    pub fn fact(&self, id: FactId) -> NamedNode {
        self.under("fact", id.0)
    }

    /// An episode: `ep:{id}`.
    pub fn episode(&self, id: EpisodeId) -> NamedNode {
        self.under("episode", id.0)
    }

    /// The graph a namespace's statements are in when several namespaces share a file
    /// (N-Quads): `urn:ostrakon:{ns}:graph`.
    pub fn graph(&self) -> NamedNode {
        NamedNode::new_unchecked(format!("{}graph", self.base))
    }

    /// The prefixes queries may use without declaring them, and exports declare.
    pub fn prefixes(&self) -> Vec<(&'static str, String)> {
        vec![
            ("e", format!("{}entity:", self.base)),
            ("p", format!("{}predicate:", self.base)),
            ("prop", format!("{}property:", self.base)),
            ("f", format!("{}fact:", self.base)),
            ("ep", format!("{}episode:", self.base)),
            ("mn", VOCAB.to_owned()),
            ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#".to_owned()),
            ("rdfs", "http://www.w3.org/2000/01/rdf-schema#".to_owned()),
            ("xsd", "http://www.w3.org/2001/XMLSchema#".to_owned()),
        ]
    }
}

/// A name percent-encoded for an IRI's last segment.
struct Encoded<'a>(&'a str);

impl std::fmt::Display for Encoded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "%{b:02X}")?;
            }
        }
        Ok(())
    }
}

fn mn(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{VOCAB}{local}"))
}

/// An instant as an `xsd:dateTime` in UTC. Years outside 0..=9999 are written as XSD
/// wants them: no `+`, at least four digits.
pub fn date_time(t: Timestamp) -> Literal {
    let text = t.to_string();
    let text = match text.as_bytes().first() {
        Some(b'+' | b'-') => {
            let negative = text.starts_with('-');
            let rest = &text[1..];
            let (year, tail) = rest.split_at(rest.find('-').unwrap_or(rest.len()));
            let year = year.trim_start_matches('0');
            format!("{}{year:0>4}{tail}", if negative { "-" } else { "" })
        }
        _ => text,
    };
    Literal::new_typed_literal(text, xsd::DATE_TIME)
}

/// A literal value as a typed RDF literal.
pub fn literal(value: &OstrakonLiteral) -> Literal {
    match value {
        OstrakonLiteral::String(s) => Literal::new_simple_literal(s.as_str()),
        OstrakonLiteral::Integer(i) => Literal::from(*i),
        OstrakonLiteral::Float(x) => Literal::from(*x),
        OstrakonLiteral::Boolean(b) => Literal::from(*b),
        OstrakonLiteral::Time(t) => date_time(*t),
    }
}

/// The triple a fact states.
pub fn triple(iris: &Iris, fact: &ostrakon_core::Fact) -> Triple {
    let object: Term = match &fact.object {
        Value::Entity(e) => iris.entity(*e).into(),
        Value::Literal(l) => literal(l).into(),
    };
    Triple::new(iris.entity(fact.subject), iris.predicate(&fact.predicate), object)
}

/// Where statements go: counted against a cap, each handed to a sink.
struct Sink<'a> {
    graph: GraphName,
    count: usize,
    max: usize,
    out: &'a mut dyn FnMut(Quad) -> Result<(), RdfError>,
}

impl Sink<'_> {
    fn put(
        &mut self,
        subject: impl Into<NamedOrBlankNode>,
        predicate: NamedNode,
        object: impl Into<Term>,
    ) -> Result<(), RdfError> {
        self.count += 1;
        if self.count > self.max {
            return Err(RdfError::TooLarge { max: self.max });
        }
        (self.out)(Quad::new(subject, predicate, object, self.graph.clone()))
    }
}

/// The span of valid time around a read's T over which its view holds the same
/// statements (at the same S): no fact's validity or stretch in force starts or ends
/// inside it, so no status, no stretch and no triple in force changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Its start (inclusive).
    pub from: Timestamp,
    /// Its end (exclusive); `None` for no end.
    pub to: Option<Timestamp>,
}

impl Window {
    fn all() -> Self {
        Window { from: Timestamp::MIN, to: None }
    }

    /// Narrows the window around `t` to one side of `boundary`.
    fn cut(&mut self, t: Timestamp, boundary: Timestamp) {
        if boundary <= t {
            self.from = self.from.max(boundary);
        } else {
            self.to = Some(self.to.map_or(boundary, |to| to.min(boundary)));
        }
    }

    /// Whether `t` is inside.
    pub fn contains(&self, t: Timestamp) -> bool {
        self.from <= t && self.to.is_none_or(|to| t < to)
    }
}

/// What [`statements`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Projected {
    /// The point it was read at.
    pub basis: Basis,
    /// How many statements.
    pub statements: usize,
    /// The valid times at which the same S gives the same statements.
    pub window: Window,
}

/// Hands every statement of `view` of namespace `ns` at `at` to `out`, at most `max` of
/// them (past it, [`RdfError::TooLarge`]), in a fixed order: entities by id, then facts
/// by (subject, predicate, id). `graph` is the graph they are put in. Every page is read
/// at the one point `at` is pinned to first, so the statements form one consistent state.
pub fn statements(
    store: &Store,
    ns: &Namespace,
    at: ReadAt,
    view: View,
    graph: GraphName,
    max: usize,
    out: &mut dyn FnMut(Quad) -> Result<(), RdfError>,
) -> Result<Projected, RdfError> {
    let basis = store.basis(ns, at)?;
    let at = basis.point();
    let iris = Iris::new(ns);
    let mut sink = Sink { graph, count: 0, max, out };

    let entity_class = mn("Entity");
    let (alias, kind) = (mn("alias"), mn("kind"));
    let mut after = None;
    loop {
        let page = store.at(ns, at).and_then(|r| r.entities(&EntityFilter::default(), after, PAGE))?;
        for (_, e) in &page.value.items {
            let node = iris.entity(e.id);
            sink.put(node.clone(), rdf::TYPE.into_owned(), entity_class.clone())?;
            sink.put(node.clone(), rdfs::LABEL.into_owned(), Literal::new_simple_literal(e.name.as_str()))?;
            for a in &e.aliases {
                sink.put(node.clone(), alias.clone(), Literal::new_simple_literal(a.as_str()))?;
            }
            if let Some(k) = &e.kind {
                sink.put(node.clone(), kind.clone(), Literal::new_simple_literal(k.as_str()))?;
            }
            for (name, value) in &e.properties {
                sink.put(node.clone(), iris.property(name), literal(value))?;
            }
        }
        match (page.value.more, page.value.items.last()) {
            (true, Some((_, last))) => after = Some(last.id),
            _ => break,
        }
    }

    // The history view describes the episodes known at S, what the facts' provenance
    // points at.
    if view != View::InForce {
        let (class, text, occurred, thread, role, source, external) = (
            mn("Episode"),
            mn("text"),
            mn("occurredAt"),
            mn("thread"),
            mn("role"),
            mn("source"),
            mn("externalId"),
        );
        let mut after = None;
        loop {
            let page = store.at(ns, at).and_then(|r| r.episodes(&EpisodeFilter::default(), after, PAGE))?;
            for (_, e) in &page.value.items {
                let node = iris.episode(e.id);
                sink.put(node.clone(), rdf::TYPE.into_owned(), class.clone())?;
                sink.put(node.clone(), text.clone(), Literal::new_simple_literal(e.text.as_str()))?;
                sink.put(node.clone(), occurred.clone(), date_time(e.occurred_at))?;
                for (p, v) in [
                    (&thread, &e.thread),
                    (&role, &e.role),
                    (&source, &e.source),
                    (&external, &e.external_id),
                ] {
                    if let Some(v) = v {
                        sink.put(node.clone(), p.clone(), Literal::new_simple_literal(v.as_str()))?;
                    }
                }
            }
            match (page.value.more, page.value.items.last()) {
                (true, Some((_, last))) => after = Some((last.occurred_at, last.id)),
                _ => break,
            }
        }
    }

    // Both views read every visible fact: the in-force view keeps those in force, and
    // every fact's boundaries bound the window in which the view stays the same.
    let terms = Terms::new();
    let mut window = Window::all();
    let t = basis.valid_at;
    let mut after: Option<SnapshotCursor> = None;
    loop {
        let page = store.at(ns, at).and_then(|r| r.all_facts(after, PAGE))?;
        for f in &page.value.facts {
            window.cut(t, f.valid.from());
            if let Some(to) = f.valid.to() {
                window.cut(t, to);
            }
            for stretch in &f.effective {
                window.cut(t, stretch.from());
                if let Some(to) = stretch.to() {
                    window.cut(t, to);
                }
            }
            fact(&mut sink, &iris, &terms, view, f)?;
        }
        match page.value.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    Ok(Projected { basis, statements: sink.count, window })
}

/// The annotation predicates, made once.
struct Terms {
    status: NamedNode,
    negated: NamedNode,
    valid_from: NamedNode,
    valid_to: NamedNode,
    confidence: NamedNode,
    asserted_at: NamedNode,
    asserted_seq: NamedNode,
    episode: NamedNode,
    corrects: NamedNode,
    beaten_by: NamedNode,
    contradicts: NamedNode,
    retracted_seq: NamedNode,
    in_force: NamedNode,
    from: NamedNode,
    to: NamedNode,
}

impl Terms {
    fn new() -> Self {
        Terms {
            status: mn("status"),
            negated: mn("negated"),
            valid_from: mn("validFrom"),
            valid_to: mn("validTo"),
            confidence: mn("confidence"),
            asserted_at: mn("assertedAt"),
            asserted_seq: mn("assertedSeq"),
            episode: mn("episode"),
            corrects: mn("corrects"),
            beaten_by: mn("beatenBy"),
            contradicts: mn("contradicts"),
            retracted_seq: mn("retractedSeq"),
            in_force: mn("inForce"),
            from: mn("from"),
            to: mn("to"),
        }
    }
}

fn seq_literal(seq: ostrakon_core::Seq) -> Literal {
    Literal::from(i64::try_from(seq.0).unwrap_or(i64::MAX))
}

/// A fact's statements: its triple when it is in force, and in the history view its
/// reifier and annotations.
fn fact(sink: &mut Sink<'_>, iris: &Iris, t: &Terms, view: View, f: &FactView) -> Result<(), RdfError> {
    let triple = triple(iris, &f.fact);
    if f.in_force() {
        sink.put(triple.subject.clone(), triple.predicate.clone(), triple.object.clone())?;
    }
    if view == View::InForce {
        return Ok(());
    }
    let r = iris.fact(f.fact.id);
    if view == View::HistoryStandard {
        sink.put(r.clone(), rdf::TYPE.into_owned(), rdf::STATEMENT.into_owned())?;
        sink.put(r.clone(), rdf::SUBJECT.into_owned(), triple.subject)?;
        sink.put(r.clone(), rdf::PREDICATE.into_owned(), triple.predicate)?;
        sink.put(r.clone(), rdf::OBJECT.into_owned(), triple.object)?;
    } else {
        sink.put(r.clone(), rdf::REIFIES.into_owned(), triple)?;
    }
    sink.put(r.clone(), t.status.clone(), Literal::new_simple_literal(f.status.as_str()))?;
    if f.fact.polarity == ostrakon_core::Polarity::Negated {
        sink.put(r.clone(), t.negated.clone(), Literal::from(true))?;
    }
    if f.valid.from() != Timestamp::MIN {
        sink.put(r.clone(), t.valid_from.clone(), date_time(f.valid.from()))?;
    }
    if let Some(to) = f.valid.to() {
        sink.put(r.clone(), t.valid_to.clone(), date_time(to))?;
    }
    sink.put(r.clone(), t.confidence.clone(), Literal::from(f.confidence))?;
    sink.put(r.clone(), t.asserted_at.clone(), date_time(f.asserted_at))?;
    sink.put(r.clone(), t.asserted_seq.clone(), seq_literal(f.asserted_seq))?;
    for e in &f.provenance {
        sink.put(r.clone(), t.episode.clone(), iris.episode(*e))?;
    }
    if let Some(old) = f.fact.supersedes {
        sink.put(r.clone(), t.corrects.clone(), iris.fact(old))?;
    }
    if let Some(winner) = f.beaten_by {
        sink.put(r.clone(), t.beaten_by.clone(), iris.fact(winner))?;
    }
    for other in f.contradicts.iter() {
        sink.put(r.clone(), t.contradicts.clone(), iris.fact(other))?;
    }
    if let Some(retraction) = &f.retraction {
        sink.put(r.clone(), t.retracted_seq.clone(), seq_literal(retraction.seq))?;
    }
    for (i, stretch) in f.effective.iter().enumerate() {
        // Named from the fact and the stretch's rank, so that the same history always
        // projects to the same statements.
        let node = BlankNode::new_unchecked(format!("f{}s{i}", f.fact.id.0));
        sink.put(r.clone(), t.in_force.clone(), node.clone())?;
        if stretch.from() != Timestamp::MIN {
            sink.put(node.clone(), t.from.clone(), date_time(stretch.from()))?;
        }
        if let Some(to) = stretch.to() {
            sink.put(node.clone(), t.to.clone(), date_time(to))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn times_are_xsd_date_times_in_every_year() {
        let at = |s: &str| {
            date_time(Timestamp::parse("t", s, &ostrakon_core::TimeZone::Utc).unwrap()).value().to_owned()
        };
        assert_eq!(at("2024-03-01T12:00:00Z"), "2024-03-01T12:00:00.000000Z");
        assert_eq!(date_time(Timestamp::MIN).value().chars().next(), Some('-'));
        let max = date_time(Timestamp::MAX).value().to_owned();
        let digits = max.chars().take_while(char::is_ascii_digit).count();
        assert!(digits >= 5 && !max.starts_with('0') && max[digits..].starts_with('-'), "{max}");
        let ancient = date_time(Timestamp::from_micros(-62_198_755_200_000_000)).value().to_owned();
        assert!(ancient.starts_with("-0001-") || ancient.starts_with("0000-"), "{ancient}");
    }

    #[test]
    fn names_are_encoded_into_iris() {
        let iris = Iris::new(&Namespace::new("n", "demo").unwrap());
        assert_eq!(iris.predicate("lives_in").as_str(), "urn:ostrakon:demo:predicate:lives_in");
        assert_eq!(
            iris.predicate("works at/for é").as_str(),
            "urn:ostrakon:demo:predicate:works%20at%2Ffor%20%C3%A9"
        );
        assert!(NamedNode::new(iris.predicate("a b<>\"{}|\\^`").as_str()).is_ok());
    }
}
