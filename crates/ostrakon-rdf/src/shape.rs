//! Bounds on a SPARQL query's shape, checked before any of it runs.
//!
//! The parser (spargebra, a recursive-descent `peg` grammar) recurses once per bracket,
//! about 2–3 KB of stack a level: about a thousand nested groups or parentheses overflow
//! a 2 MB thread stack and abort the process. The optimizer and the evaluator recurse once
//! per node of the algebra, and the optimizer's work grows as a high power of the number
//! of triple patterns (100 patterns: 0.75 s; 400: minutes) without looking at the
//! query's cancellation. So, in order:
//!
//! 1. the text is at most [`MAX_QUERY_BYTES`] long;
//! 2. its brackets (`(`, `[`, `{`, `<<`) nest at most [`MAX_NESTING`] deep, and it holds
//!    at most [`MAX_OPERATORS`] operator characters, counted by a scan that skips strings,
//!    comments and IRIs ([`scan`]): a chain without a bracket — a path of 6,000 steps
//!    `p:a/p:a/…`, 6,000 `^` or `!` or `+` — parses into an algebra as deep as it is long,
//!    which every walk over it (the checks, the optimizer, the evaluator, its drop)
//!    recurses through, and overflowed the stack at about 5,000;
//! 3. once parsed, its algebra is at most [`MAX_DEPTH`] nodes deep and [`MAX_NODES`]
//!    large ([`Measure`]);
//! 4. the optimizer runs only on queries of at most [`OPTIMIZE_MAX_PATTERNS`] triple
//!    patterns and path steps (and [`OPTIMIZE_MAX_DEPTH`] deep); larger ones run as
//!    written, under the join and memory budgets and the deadline.
//!
//! The scan of step 2 reads SPARQL's terminals the way the grammar does, but a scanner
//! cannot always tell an IRI from a `<` comparison the way the parser does in context.
//! So the thread a query is parsed on gets a stack sized by the count of every bracket
//! character in the text, strings and IRIs included ([`stack_size`]): an upper bound of
//! the parser's recursion whatever the scan concluded.

use spargebra::Query;
use spargebra::algebra::{
    AggregateExpression, Expression, GraphPattern, OrderExpression, PropertyPathExpression,
};
use spargebra::term::{TermPattern, TriplePattern};

use crate::error::RdfError;

/// Longest query text.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// Deepest nesting of brackets in the text.
pub const MAX_NESTING: usize = 64;

/// Most operator characters in the text (`/ | ^ ! + - * = & < >` outside strings, IRIs
/// and comments): a query written by a person or a program holds a few dozen.
pub const MAX_OPERATORS: usize = 1_000;

/// Deepest nesting of the parsed algebra (graph patterns, expressions, paths, triple
/// terms).
pub const MAX_DEPTH: usize = 128;

/// Most nodes of the parsed algebra.
pub const MAX_NODES: usize = 20_000;

/// Most triple patterns and path steps of a query the optimizer reorders; past it the
/// query runs in the order written (the optimizer took 0.13 s at 64 patterns).
pub(crate) const OPTIMIZE_MAX_PATTERNS: usize = 40;

/// Deepest algebra the optimizer sees (its type inference is cubic in a chain of
/// `OPTIONAL`s).
pub(crate) const OPTIMIZE_MAX_DEPTH: usize = 48;

/// Stack of the thread a query runs on, beyond what its brackets need.
const STACK_BASE: usize = 8 * 1024 * 1024;

/// Stack allowed per bracket character of the text (the parser took about 3 KB a level).
const STACK_PER_BRACKET: usize = 8 * 1024;

fn exceeded(what: &str, value: usize, max: usize) -> RdfError {
    RdfError::QueryTooComplex { what: what.to_owned(), value, max }
}

/// Checks the text of a query before it is parsed: its length and how deep its brackets
/// nest.
pub(crate) fn check_text(query: &str) -> Result<(), RdfError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(exceeded("bytes", query.len(), MAX_QUERY_BYTES));
    }
    let scanned = scan(query);
    if scanned.deepest > MAX_NESTING {
        return Err(exceeded("levels of nested brackets", scanned.deepest, MAX_NESTING));
    }
    if scanned.operators > MAX_OPERATORS {
        return Err(exceeded("operators", scanned.operators, MAX_OPERATORS));
    }
    Ok(())
}

/// The stack a thread needs to parse and run `query`: the base, plus a level's worth for
/// every bracket or operator character anywhere in it.
pub(crate) fn stack_size(query: &str) -> usize {
    let levels = query.bytes().filter(|b| matches!(b, b'(' | b'[' | b'{' | b'<') || is_operator(*b)).count();
    STACK_BASE.saturating_add(levels.saturating_mul(STACK_PER_BRACKET))
}

fn is_operator(b: u8) -> bool {
    matches!(b, b'/' | b'|' | b'^' | b'!' | b'+' | b'-' | b'*' | b'=' | b'&' | b'<' | b'>')
}

/// What [`scan`] finds in a query's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// How deep its brackets nest.
    pub deepest: usize,
    /// How many operator characters it holds.
    pub operators: usize,
}

/// How deep the brackets of `query` nest — `(`, `[`, `{` and `<<` open, `)`, `]`, `}` and
/// `>>` close — and how many operator characters it holds, outside string literals,
/// comments and IRIs (`<…>` with no character an IRI cannot hold); a backslash outside
/// strings (a prefixed name's escape) hides the next character.
pub(crate) fn scan(query: &str) -> Scanned {
    let b = query.as_bytes();
    let (mut i, mut depth, mut deepest, mut operators) = (0, 0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'#' => {
                while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                    i += 1;
                }
            }
            quote @ (b'"' | b'\'') => i = skip_string(b, i, quote),
            b'\\' => i += 2,
            b'<' if b.get(i + 1) == Some(&b'<') => {
                depth += 1;
                deepest = deepest.max(depth);
                i += 2;
            }
            b'<' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| {
                        c <= b' '
                            || matches!(c, b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\')
                    })
                    .map(|p| i + 1 + p);
                // An IRI ends at its `>`; anything else makes the `<` a comparison.
                i = match end {
                    Some(e) if b[e] == b'>' => e + 1,
                    _ => {
                        operators += 1;
                        i + 1
                    }
                };
            }
            b'>' if b.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 2;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            c => {
                operators += usize::from(is_operator(c));
                i += 1;
            }
        }
    }
    Scanned { deepest, operators }
}

/// The position after the string literal opening at `start` with `quote` (long form when
/// the quote is tripled); the end of the text when it never closes.
fn skip_string(b: &[u8], start: usize, quote: u8) -> usize {
    let long = b.get(start + 1) == Some(&quote) && b.get(start + 2) == Some(&quote);
    let mut i = start + if long { 3 } else { 1 };
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => {
                if !long {
                    return i + 1;
                }
                if b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote) {
                    return i + 3;
                }
                i += 1;
            }
            b'\n' | b'\r' if !long => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The size of a parsed query's algebra.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Measure {
    /// Nodes: graph patterns, triple patterns, expressions, path steps.
    pub nodes: usize,
    /// Triple patterns and path steps: what the optimizer's join ordering works on.
    pub patterns: usize,
    /// Deepest nesting.
    pub depth: usize,
}

/// Too deep or too large: the walk stops there, so it never recurses past [`MAX_DEPTH`].
struct Stop;

impl Measure {
    /// Measures `query`, refusing it when it is deeper than [`MAX_DEPTH`] or larger than
    /// [`MAX_NODES`].
    pub(crate) fn of(query: &Query) -> Result<Measure, RdfError> {
        let mut m = Measure::default();
        let walked = match query {
            Query::Select { pattern, .. } | Query::Describe { pattern, .. } | Query::Ask { pattern, .. } => {
                m.graph(pattern, 1)
            }
            Query::Construct { template, pattern, .. } => {
                template.iter().try_for_each(|t| m.triple(t, 1)).and_then(|()| m.graph(pattern, 1))
            }
        };
        match walked {
            Ok(()) => Ok(m),
            Err(Stop) if m.depth > MAX_DEPTH => Err(exceeded("levels of nesting", m.depth, MAX_DEPTH)),
            Err(Stop) => Err(exceeded("parts", m.nodes, MAX_NODES)),
        }
    }

    /// Whether the optimizer may reorder this query.
    pub(crate) fn optimizable(&self) -> bool {
        self.patterns <= OPTIMIZE_MAX_PATTERNS && self.depth <= OPTIMIZE_MAX_DEPTH
    }

    fn enter(&mut self, depth: usize) -> Result<(), Stop> {
        self.nodes += 1;
        self.depth = self.depth.max(depth);
        if depth > MAX_DEPTH || self.nodes > MAX_NODES { Err(Stop) } else { Ok(()) }
    }

    fn graph(&mut self, p: &GraphPattern, depth: usize) -> Result<(), Stop> {
        self.enter(depth)?;
        let d = depth + 1;
        match p {
            GraphPattern::Bgp { patterns } => patterns.iter().try_for_each(|t| self.triple(t, d)),
            GraphPattern::Path { subject, path, object } => {
                self.term(subject, d)?;
                self.path(path, d)?;
                self.term(object, d)
            }
            GraphPattern::Join { left, right }
            | GraphPattern::Lateral { left, right }
            | GraphPattern::Union { left, right }
            | GraphPattern::Minus { left, right } => {
                self.graph(left, d)?;
                self.graph(right, d)
            }
            GraphPattern::LeftJoin { left, right, expression } => {
                self.graph(left, d)?;
                self.graph(right, d)?;
                expression.iter().try_for_each(|e| self.expression(e, d))
            }
            GraphPattern::Filter { expr, inner } => {
                self.expression(expr, d)?;
                self.graph(inner, d)
            }
            GraphPattern::Extend { inner, expression, .. } => {
                self.expression(expression, d)?;
                self.graph(inner, d)
            }
            GraphPattern::Values { bindings, .. } => {
                self.nodes = self.nodes.saturating_add(bindings.len());
                self.enter(d)
            }
            GraphPattern::OrderBy { inner, expression } => {
                for e in expression {
                    match e {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => self.expression(e, d)?,
                    }
                }
                self.graph(inner, d)
            }
            GraphPattern::Group { inner, aggregates, .. } => {
                for (_, a) in aggregates {
                    if let AggregateExpression::FunctionCall { expr, .. } = a {
                        self.expression(expr, d)?;
                    }
                }
                self.graph(inner, d)
            }
            GraphPattern::Graph { inner, .. }
            | GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. }
            | GraphPattern::Service { inner, .. } => self.graph(inner, d),
        }
    }

    fn triple(&mut self, t: &TriplePattern, depth: usize) -> Result<(), Stop> {
        self.patterns += 1;
        self.enter(depth)?;
        self.term(&t.subject, depth + 1)?;
        self.term(&t.object, depth + 1)
    }

    fn term(&mut self, t: &TermPattern, depth: usize) -> Result<(), Stop> {
        match t {
            TermPattern::Triple(t) => self.triple(t, depth),
            _ => Ok(()),
        }
    }

    fn path(&mut self, p: &PropertyPathExpression, depth: usize) -> Result<(), Stop> {
        self.patterns += 1;
        self.enter(depth)?;
        let d = depth + 1;
        match p {
            PropertyPathExpression::NamedNode(_) | PropertyPathExpression::NegatedPropertySet(_) => Ok(()),
            PropertyPathExpression::Reverse(p)
            | PropertyPathExpression::ZeroOrMore(p)
            | PropertyPathExpression::OneOrMore(p)
            | PropertyPathExpression::ZeroOrOne(p) => self.path(p, d),
            PropertyPathExpression::Sequence(a, b) | PropertyPathExpression::Alternative(a, b) => {
                self.path(a, d)?;
                self.path(b, d)
            }
        }
    }

    fn expression(&mut self, e: &Expression, depth: usize) -> Result<(), Stop> {
        self.enter(depth)?;
        let d = depth + 1;
        match e {
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_) => Ok(()),
            Expression::Or(a, b)
            | Expression::And(a, b)
            | Expression::Equal(a, b)
            | Expression::SameTerm(a, b)
            | Expression::Greater(a, b)
            | Expression::GreaterOrEqual(a, b)
            | Expression::Less(a, b)
            | Expression::LessOrEqual(a, b)
            | Expression::Add(a, b)
            | Expression::Subtract(a, b)
            | Expression::Multiply(a, b)
            | Expression::Divide(a, b) => {
                self.expression(a, d)?;
                self.expression(b, d)
            }
            Expression::In(a, list) => {
                self.expression(a, d)?;
                list.iter().try_for_each(|e| self.expression(e, d))
            }
            Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => {
                self.expression(a, d)
            }
            Expression::Exists(p) => self.graph(p, d),
            Expression::If(a, b, c) => {
                self.expression(a, d)?;
                self.expression(b, d)?;
                self.expression(c, d)
            }
            Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
                list.iter().try_for_each(|e| self.expression(e, d))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn nesting_counts_brackets_outside_strings_comments_and_iris() {
        assert_eq!(scan("SELECT * WHERE { ?s ?p ?o }").deepest, 1);
        assert_eq!(scan("SELECT * WHERE { { ?s ?p [ ?q ( 1 2 ) ] } }").deepest, 4);
        assert_eq!(scan("ASK { FILTER(\"((((\" = '{{{{' && \"\"\"[[[\n(((\"\"\" != '''(((''') }").deepest, 2);
        assert_eq!(scan("ASK { # ((((((\n ?s ?p ?o }").deepest, 1);
        assert_eq!(scan("ASK { <http://x/a(b)> ?p <http://x/#(((> }").deepest, 1);
        // A comparison is not an IRI.
        assert_eq!(scan("ASK { FILTER(1 < (2)) }").deepest, 3);
        assert_eq!(scan("ASK { << ?s ?p << ?a ?b ?c >> >> ?q ?o }").deepest, 3);
        assert_eq!(scan("ASK { ?s p:a\\(\\( ?o }").deepest, 1);
        assert_eq!(scan(&format!("ASK {}{}", "{".repeat(1000), "}".repeat(1000))).deepest, 1000);
        // Unbalanced closes never make the count negative.
        assert_eq!(scan(")))))) { ( ) }").deepest, 2);
    }

    #[test]
    fn operators_are_counted_outside_strings_comments_and_iris() {
        // `SELECT *`'s star counts too: characters are counted, not what they mean.
        assert_eq!(scan("SELECT * WHERE { ?s p:a/p:b|^p:c ?o }").operators, 4);
        assert_eq!(scan("ASK { FILTER(!(1 + 2 * 3 >= -4 && 5 != 6)) }").operators, 10);
        assert_eq!(scan("ASK { <http://x/a/b/c> ?p \"a/b|c^d\" # x/y/z\n }").operators, 0);
        assert_eq!(scan(&format!("ASK {{ ?s {} ?o }}", vec!["p:a"; 6_000].join("/"))).operators, 5_999);
    }

    #[test]
    fn the_text_is_bounded_before_parsing() {
        assert!(check_text("SELECT * WHERE { ?s ?p ?o }").is_ok());
        let deep = format!("SELECT * WHERE {}?s ?p ?o{}", "{ ".repeat(65), " }".repeat(65));
        assert!(matches!(check_text(&deep), Err(RdfError::QueryTooComplex { value: 65, .. })));
        let long = format!("ASK {{ {} }}", "?s ?p ?o . ".repeat(MAX_QUERY_BYTES / 10));
        assert!(matches!(check_text(&long), Err(RdfError::QueryTooComplex { .. })));
    }

    #[test]
    fn the_algebra_is_measured_within_its_bounds() {
        let parse = |q: &str| spargebra::SparqlParser::new().parse_query(q).unwrap();
        let m = Measure::of(&parse("SELECT * WHERE { ?s ?p ?o . ?o ?q ?r FILTER(?r > 1) }")).unwrap();
        assert_eq!(m.patterns, 2);
        assert!(m.optimizable());
        // A chain of OPTIONALs nests without brackets nesting.
        let chain = format!("SELECT * WHERE {{ ?s ?p ?o {} }}", "OPTIONAL { ?s ?p ?o } ".repeat(200));
        assert!(scan(&chain).deepest <= 2);
        assert!(matches!(Measure::of(&parse(&chain)), Err(RdfError::QueryTooComplex { .. })));
        let wide = format!("SELECT * WHERE {{ {} }}", "?s ?p ?o . ".repeat(100));
        let m = Measure::of(&parse(&wide)).unwrap();
        assert_eq!(m.patterns, 100);
        assert!(!m.optimizable());
        let long_sum = format!("SELECT * WHERE {{ ?s ?p ?o FILTER({} > 0) }}", vec!["1"; 500].join("+"));
        assert!(matches!(Measure::of(&parse(&long_sum)), Err(RdfError::QueryTooComplex { .. })));
    }
}
