//! The operations: queries at any (validAt, knownAt), mutations that write one atomic
//! batch each, and the `events` subscription. One module per domain, merged into the
//! `Query` and `Mutation` roots; the resolver prologue (namespace and access, store, read
//! point) and the write helpers are here, paging in `paging`.

use async_graphql::{Context, MergedObject, Result, Subscription};
use futures_util::Stream;
use futures_util::StreamExt as _;
use futures_util::future::ready;
use tokio_stream::wrappers::BroadcastStream;

use crate::error::{code, coded};
use crate::exec::access::Mode;
use crate::exec::context::namespace;
use crate::exec::events::Events;
use crate::types::info::EventNotice;

mod admin;
mod analytics_ops;
mod erase_ops;
mod graph;
mod intention_ops;
mod memory_ops;
mod rdf_ops;
mod retrieval;
mod tier_ops;
mod topic_ops;

/// The queries.
#[derive(MergedObject, Default)]
pub struct Query(
    admin::AdminQuery,
    analytics_ops::AnalyticsQuery,
    graph::GraphQuery,
    memory_ops::MemoryQuery,
    rdf_ops::RdfQuery,
    retrieval::RetrievalQuery,
    topic_ops::TopicQuery,
    intention_ops::IntentionQuery,
    erase_ops::EraseQuery,
    tier_ops::TierQuery,
);

/// The mutations: each writes one atomic batch; a rejected one stores nothing.
#[derive(MergedObject, Default)]
pub struct Mutation(
    graph::GraphMutation,
    memory_ops::MemoryMutation,
    retrieval::RetrievalMutation,
    topic_ops::TopicMutation,
    intention_ops::IntentionMutation,
    admin::AdminMutation,
    erase_ops::EraseMutation,
    tier_ops::TierMutation,
);

/// The subscriptions.
pub struct Subscription;

#[Subscription]
impl Subscription {
    /// Every event committed to a namespace from now on, in log order.
    async fn events(&self, ctx: &Context<'_>, namespace: String) -> Result<impl Stream<Item = EventNotice>> {
        let ns = self::namespace(ctx, &namespace, Mode::Read)?;
        let events =
            ctx.data::<Events>().map_err(|_| coded(code::INTERNAL, "no event feed in the schema"))?;
        let stream = BroadcastStream::new(events.subscribe())
            // A subscriber too slow for the feed is dropped rather than silently skipped.
            .take_while(|batch| ready(batch.is_ok()))
            .filter_map(move |batch| ready(batch.ok().filter(|b| b.namespace == ns)))
            .flat_map(|batch| futures_util::stream::iter(crate::exec::event_notices::notices(&batch)));
        Ok(stream)
    }
}
