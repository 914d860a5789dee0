//! What every resolver starts from: the store and the caller's namespace from the
//! request's context, the read point pinned once per request ([`Pin`]), and the helpers
//! that commit a batch and place its errors on the request's inputs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::code;
use crate::error::coded;
use crate::exec::access::Access;
use crate::exec::access::Mode;
use crate::exec::limits::Limits;
use crate::types::input::invalid;
use crate::types::input::time;
use crate::types::scalars::DateTime;
use async_graphql::{Context, Result};
use ostrakon_core::FactId;
use ostrakon_core::Namespace;
use ostrakon_core::Seq;
use ostrakon_core::Timestamp;
use ostrakon_engine::Change;
use ostrakon_engine::KnownAt;
use ostrakon_engine::ReadAt;
use ostrakon_engine::Receipt;
use ostrakon_engine::Store;
use ostrakon_engine::views::FactView;

/// Where a response was read: the namespace, the pinned (T, S) and the basis reported.
#[derive(Debug)]
pub(crate) struct Pin {
    pub(crate) ns: Namespace,
    pub(crate) basis: ostrakon_engine::Basis,
    /// Facts loaded by id under this pin, kept for the rest of the request: every nested
    /// field reads at the same point, so a fact loaded once answers the same again. The
    /// facts that many tied facts contradict are asked for by each of them.
    loaded: Mutex<HashMap<FactId, FactView>>,
}

impl Pin {
    pub(crate) fn new(ns: Namespace, basis: ostrakon_engine::Basis) -> Arc<Self> {
        Arc::new(Pin { ns, basis, loaded: Mutex::default() })
    }

    pub(crate) fn loaded(&self) -> std::sync::MutexGuard<'_, HashMap<FactId, FactView>> {
        self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The same (T, S) for a nested read.
    pub(crate) fn at(&self) -> ReadAt {
        self.basis.point()
    }

    /// The store read at this pin.
    pub(crate) fn reader<'s>(&'s self, store: &'s Store) -> ostrakon_engine::Reader<'s> {
        store.reader(&self.ns, self.basis)
    }
}

pub(crate) fn store<'a>(ctx: &Context<'a>) -> Result<&'a Arc<Store>> {
    ctx.data::<Arc<Store>>().map_err(|_| coded(code::INTERNAL, "no store in the schema"))
}

/// An engine error as the request's (its code from its kind).
pub(crate) use crate::error::engine_error as engine;
pub(crate) fn limits<'a>(ctx: &Context<'a>) -> Result<&'a Limits> {
    ctx.data::<Limits>().map_err(|_| coded(code::INTERNAL, "no limits in the schema"))
}

/// The namespace named `name`, if the caller may use it that way.
pub(crate) fn namespace(ctx: &Context<'_>, name: &str, mode: Mode) -> Result<Namespace> {
    let ns = Namespace::new("namespace", name).map_err(engine)?;
    let access = ctx.data_opt::<Access>().cloned().unwrap_or(Access::Denied);
    if !access.allows(ns.as_str(), mode) {
        let verb = mode.verb();
        return Err(coded(code::FORBIDDEN, format!("this token may not {verb} namespace {name:?}")));
    }
    Ok(ns)
}

/// What every resolver starts from: the namespace the caller may use in this mode, and
/// the store. With [`read_at`] (the read point) and [`page_size`] it is the whole
/// prologue of a resolver.
pub(crate) struct Start<'a> {
    pub(crate) ns: Namespace,
    pub(crate) store: &'a Arc<Store>,
}

/// The prologue: the namespace checked against the caller's access, and the store.
pub(crate) fn start<'a>(ctx: &Context<'a>, name: &str, mode: Mode) -> Result<Start<'a>> {
    Ok(Start { ns: namespace(ctx, name, mode)?, store: store(ctx)? })
}

/// The point a read is pinned at, from its arguments: a concrete seq, valid time and
/// decay clock.
pub(crate) fn read_at(
    store: &Store,
    ns: &Namespace,
    valid_at: Option<&DateTime>,
    known_at: Option<&DateTime>,
    known_at_seq: Option<u64>,
    at: Option<&DateTime>,
) -> Result<ReadAt> {
    let valid_at = valid_at.map(|t| time(store, ns, "validAt", t)).transpose()?;
    let at = at.map(|t| time(store, ns, "at", t)).transpose()?;
    let known_at = match (known_at, known_at_seq) {
        (Some(_), Some(_)) => return Err(invalid("knownAt", "…", "give knownAt or knownAtSeq, not both")),
        (Some(t), None) => KnownAt::Time(time(store, ns, "knownAt", t)?),
        (None, Some(s)) => KnownAt::Seq(Seq(s)),
        (None, None) => KnownAt::Latest,
    };
    // Pinned here, once: every read of the request resolves at this seq and these times.
    store.pin(ns, ReadAt { valid_at, known_at, at }).map_err(engine)
}

/// Appends `changes`, naming each change's input path in errors.
pub(crate) fn commit(
    store: &Store,
    ns: &Namespace,
    changes: Vec<Change>,
    paths: &[String],
) -> Result<Receipt> {
    commit_named(store, ns, changes, |n| paths.get(n).cloned().unwrap_or_default())
}

/// [`commit`], naming change `n`'s input `path(n)` only when it is wrong.
pub(crate) fn commit_named(
    store: &Store,
    ns: &Namespace,
    changes: Vec<Change>,
    path: impl Fn(usize) -> String,
) -> Result<Receipt> {
    store.append(ns, changes).map_err(|e| named_error(e, path))
}

/// An error of a batch as the request's: change `n` of the batch is the request's input
/// at `path(n)` (`facts[1]`).
pub(crate) fn named_error(
    e: ostrakon_engine::WriteError,
    path: impl Fn(usize) -> String,
) -> async_graphql::Error {
    match e {
        ostrakon_engine::WriteError::InChange { change, error } => engine(error.within(&path(change))),
        other => engine(other),
    }
}

/// Objects for what a receipt wrote, read at now as known right after it.
pub(crate) fn pin_after(
    store: &Store,
    ns: &Namespace,
    receipt: &Receipt,
    clock: Option<Timestamp>,
) -> Result<Arc<Pin>> {
    let at = ReadAt { valid_at: None, known_at: KnownAt::Seq(receipt.seq), at: clock };
    let basis = store.basis(ns, at).map_err(engine)?;
    Ok(Pin::new(ns.clone(), basis))
}
