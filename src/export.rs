//! `ostrakon export`: a store's logs as JSONL `replay` lines that re-import into an
//! identical store, or its memory as RDF at a read point (RDF 1.2 triple terms, or RDF
//! 1.1 standard reification for tools that read no RDF 1.2).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, bail};
use clap::ValueEnum;
use ostrakon_core::Namespace;
use ostrakon_engine::StoreOptions;
use ostrakon_graphql::ops::ReplayLine;

use crate::cluster;

/// What `export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExportFormat {
    /// JSONL `replay` lines: the whole log, re-importable.
    Jsonl,
    /// RDF 1.2 N-Quads, each namespace in its graph `urn:ostrakon:{ns}:graph`.
    Nquads,
    /// RDF 1.2 Turtle.
    Turtle,
}

/// How the history view names a fact's triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Reification {
    /// RDF 1.2: `f:7 rdf:reifies <<( s p o )>>`.
    TripleTerm,
    /// RDF 1.1: `f:7 a rdf:Statement; rdf:subject s; rdf:predicate p; rdf:object o`.
    Standard,
}

/// The read point of an RDF export, and what it holds.
pub(crate) struct RdfPoint {
    pub(crate) history: bool,
    /// Given only with `history`; standard reification when not given.
    pub(crate) reification: Option<Reification>,
    pub(crate) valid_at: Option<String>,
    pub(crate) known_at: Option<String>,
    pub(crate) known_at_seq: Option<u64>,
}

pub(crate) fn export(
    data: &Path,
    namespace: Option<&str>,
    out: &Path,
    format: ExportFormat,
    point: &RdfPoint,
) -> anyhow::Result<()> {
    let rdf = match format {
        ExportFormat::Jsonl => None,
        ExportFormat::Nquads => Some(ostrakon_rdf::ExportFormat::NQuads),
        ExportFormat::Turtle => Some(ostrakon_rdf::ExportFormat::Turtle),
    };
    let pinned =
        point.history || point.valid_at.is_some() || point.known_at.is_some() || point.known_at_seq.is_some();
    if point.reification.is_some() && !point.history {
        bail!("--reification is for the history view (--history): the facts in force are plain triples");
    }
    if rdf.is_none() && pinned {
        bail!(
            "--history, --valid-at, --known-at and --known-at-seq are for RDF exports (--format nquads or turtle); JSONL is the whole log"
        );
    }
    let store = cluster::open(data, StoreOptions::default())?;
    let namespaces = match namespace {
        Some(name) => {
            let ns = Namespace::new("--namespace", name)?;
            if !store.namespaces().contains(&ns) {
                bail!("no namespace {name:?} in {}", data.display());
            }
            vec![ns]
        }
        None => store.namespaces(),
    };
    if point.known_at_seq.is_some() && namespaces.len() > 1 {
        bail!(
            "--known-at-seq names a batch of one namespace's log (each namespace counts its own), and {} holds {} \
             namespaces; give --namespace, or --known-at with a time for every namespace",
            data.display(),
            namespaces.len()
        );
    }
    if out == Path::new("-") {
        let mut w = BufWriter::new(std::io::stdout().lock());
        return write_export(&store, &namespaces, rdf, point, &mut w, out);
    }
    // Written beside the output and renamed over it once whole: a failure part-way
    // leaves no partial file under the output's name.
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    let file = File::create(&partial).with_context(|| format!("cannot create {}", partial.display()))?;
    let written =
        write_export(&store, &namespaces, rdf, point, &mut BufWriter::new(file), out).and_then(|()| {
            std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// Writes the export of `namespaces` to `w` (for `out`, named in errors).
fn write_export(
    store: &ostrakon_engine::Store,
    namespaces: &[Namespace],
    rdf: Option<ostrakon_rdf::ExportFormat>,
    point: &RdfPoint,
    w: &mut impl Write,
    out: &Path,
) -> anyhow::Result<()> {
    if let Some(rdf) = rdf {
        let view = match (point.history, point.reification) {
            (false, _) => ostrakon_rdf::View::InForce,
            (true, Some(Reification::TripleTerm)) => ostrakon_rdf::View::History,
            (true, Some(Reification::Standard) | None) => ostrakon_rdf::View::HistoryStandard,
        };
        for ns in namespaces {
            let time = |field: &str, v: &Option<String>| {
                v.as_deref().map(|v| store.parse_time(ns, field, v)).transpose()
            };
            let known_at = match (time("--known-at", &point.known_at)?, point.known_at_seq) {
                (Some(t), _) => ostrakon_engine::KnownAt::Time(t),
                (None, Some(s)) => ostrakon_engine::KnownAt::Seq(ostrakon_core::Seq(s)),
                (None, None) => ostrakon_engine::KnownAt::Latest,
            };
            let at = ostrakon_engine::ReadAt {
                valid_at: time("--valid-at", &point.valid_at)?,
                known_at,
                at: None,
            };
            let done = ostrakon_rdf::export(store, ns, at, view, rdf, &mut *w)
                .with_context(|| format!("exporting namespace {ns}"))?;
            tracing::debug!(namespace = %ns, seq = done.basis.known_at.0, statements = done.statements, "exported as RDF");
        }
        w.flush().with_context(|| format!("writing {}", out.display()))?;
        return Ok(());
    }
    let mut batches = 0usize;
    for ns in namespaces {
        for batch in store.export(ns)? {
            serde_json::to_writer(&mut *w, &ReplayLine::from(&batch))?;
            w.write_all(b"\n")?;
            batches += 1;
        }
    }
    w.flush().with_context(|| format!("writing {}", out.display()))?;
    tracing::debug!(namespaces = namespaces.len(), batches, "exported");
    Ok(())
}
