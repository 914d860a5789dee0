//! Recall: hybrid search, context blocks, and remember (search plus recall).

use crate::objects::search;
use async_graphql::{Context, Object, Result};

use crate::exec::access::Mode;
use crate::exec::context::Pin;
use crate::exec::context::Start;
use crate::exec::context::engine;
use crate::exec::context::read_at;
use crate::exec::context::start;
use crate::objects::search::ContextObject;
use crate::objects::search::RememberPayload;
use crate::objects::search::Search;
use crate::objects::search::SearchFilter;
use crate::types::scalars::DateTime;
/// Queries: recall: hybrid search, context blocks, and remember (search plus recall).
#[derive(Default)]
pub(super) struct RetrievalQuery;

#[Object]
impl RetrievalQuery {
    /// What is known that matters for a cue: full text (BM25) ∪ embedding similarity ∪
    /// the graph around the entities the text names, fused by reciprocal rank (k = 60),
    /// weighted by retention at `at` with a floor (a specific cue still finds an old
    /// memory), diversified by MMR. Facts not in force at (validAt, knownAt) are left out
    /// unless `filter.includeNotInForce`. Waits until the text indexes hold what the
    /// read sees (and the vectors a namespace gets as it opens); the built-in embedder's
    /// vectors of new writes, written behind their text, are waited for only by a read
    /// that names its batch (`knownAtSeq`, e.g. the `seq` a write returned): otherwise
    /// they answer with the batches they hold (`indexedSeq`, and a warning when it is
    /// behind). Every hit explains itself.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn search(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        text: Option<String>,
        vector: Option<Vec<f64>>,
        limit: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<Search> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query =
            search::vectors_awaited(search::query(store, &ns, text, vector, limit, filter)?, known_at_seq);
        let answer = store.at(&ns, read).and_then(|r| r.search(&query)).map_err(engine)?;
        Ok(Search { pin: Pin::new(ns, answer.basis), result: answer.value })
    }

    /// The block an agent puts in its prompt for `message`, within `budget` tokens
    /// (default 1000; a token is estimated as four bytes): facts in force with their
    /// validity, the most relevant episodes with their dates, the entities involved.
    /// Deterministic for a given store and read point.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn context(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        message: String,
        budget: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
        scopes: Option<Vec<String>>,
    ) -> Result<ContextObject> {
        let Start { ns, store } = start(ctx, &namespace, Mode::Read)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query = search::query(store, &ns, Some(message.clone()), None, None, filter)?;
        let query = search::vectors_awaited(query, known_at_seq);
        if let Some(scopes) = &scopes {
            crate::objects::tiers::check_scopes(ctx, scopes)?;
        }
        let budget = search::budget(budget)?;
        let answer = store
            .at(&ns, read)
            .and_then(|r| r.context_in(&message, budget, &query, scopes.as_deref()))
            .map_err(engine)?;
        Ok(ContextObject { pin: Pin::new(ns, answer.basis), block: answer.value })
    }
}

/// Mutations: recall: hybrid search, context blocks, and remember (search plus recall).
#[derive(Default)]
pub(super) struct RetrievalMutation;

#[Object]
impl RetrievalMutation {
    /// `search`, then records its hits as recalled at `at` (default: now) in one step, so
    /// that what is recalled is strengthened. The result is the search as it was read.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn remember(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        text: Option<String>,
        vector: Option<Vec<f64>>,
        limit: Option<i32>,
        filter: Option<SearchFilter>,
        valid_at: Option<DateTime>,
        known_at: Option<DateTime>,
        known_at_seq: Option<u64>,
        at: Option<DateTime>,
    ) -> Result<RememberPayload> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        let read = read_at(store, &ns, valid_at.as_ref(), known_at.as_ref(), known_at_seq, at.as_ref())?;
        let query =
            search::vectors_awaited(search::query(store, &ns, text, vector, limit, filter)?, known_at_seq);
        let (answer, receipt) = store.remember(&ns, &query, read).map_err(engine)?;
        Ok(RememberPayload {
            seq: receipt.map(|r| r.seq.0),
            result: Search { pin: Pin::new(ns, answer.basis), result: answer.value },
        })
    }
}
