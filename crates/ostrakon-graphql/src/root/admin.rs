//! A namespace's settings and size.

use async_graphql::{Context, Object, Result};

use super::erase_ops::RetentionInput;
use crate::exec::access::Mode;
use crate::exec::context::Start;
use crate::exec::context::commit;
use crate::exec::context::engine;
use crate::exec::context::namespace;
use crate::exec::context::start;
use crate::exec::context::store;
use crate::objects::topics::SegmentationInput;
use crate::types::info::NamespaceInfo;
use crate::types::input::EmbeddingInput;
use crate::types::retention::DecayInput;
use crate::types::retention::ProfileInput;
use ostrakon_engine::Change;
use ostrakon_engine::change::NamespacePatch;
/// Queries: a namespace's settings and size.
#[derive(Default)]
pub(super) struct AdminQuery;

#[Object]
impl AdminQuery {
    /// A namespace's settings, predicates and size.
    async fn namespace(&self, ctx: &Context<'_>, name: String) -> Result<NamespaceInfo> {
        let ns = namespace(ctx, &name, Mode::Read)?;
        NamespaceInfo::of(store(ctx)?, &ns).map_err(engine)
    }

    /// The names of the namespaces this token may read (every one, without tokens),
    /// sorted; `first` of them after the name `after`.
    async fn namespaces(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Vec<String>> {
        let first = crate::types::paging::page_size(ctx, first)?;
        let access = ctx
            .data_opt::<crate::exec::access::Access>()
            .cloned()
            .unwrap_or(crate::exec::access::Access::Denied);
        Ok(store(ctx)?
            .namespaces()
            .into_iter()
            .map(|ns| ns.as_str().to_owned())
            .filter(|name| after.as_ref().is_none_or(|a| name > a))
            .filter(|name| access.allows(name, Mode::Read))
            .take(first)
            .collect())
    }
}

/// Mutations: a namespace's settings and size.
#[derive(Default)]
pub(super) struct AdminMutation;

#[Object]
impl AdminMutation {
    /// Changes a namespace's settings.
    #[allow(clippy::too_many_arguments, reason = "a resolver takes each argument of its GraphQL field")]
    async fn configure_namespace(
        &self,
        ctx: &Context<'_>,
        namespace: String,
        time_zone: Option<String>,
        decay: Option<DecayInput>,
        consolidate_every_seconds: Option<u64>,
        embedding: Option<EmbeddingInput>,
        segmentation: Option<SegmentationInput>,
        retention: Option<RetentionInput>,
        tiers: Option<crate::objects::tiers::TiersInput>,
    ) -> Result<NamespaceInfo> {
        let Start { ns, store } = start(ctx, &namespace, Mode::ReadWrite)?;
        // Patches: each names only the settings given, and the engine applies them to
        // the settings as they are under the writer lock, so concurrent calls compose.
        let time_zone = time_zone
            .map(|tz| ostrakon_core::TimeZone::parse("timeZone", &tz).map_err(engine))
            .transpose()?;
        let decay = decay.map(|decay| {
            let profile = |p: &Option<ProfileInput>| p.as_ref().map(ostrakon_core::Profile::from);
            ostrakon_core::DecayConfig {
                default: profile(&decay.default),
                episode: profile(&decay.episode),
                entity: profile(&decay.entity),
                fact: profile(&decay.fact),
            }
        });
        let patch = NamespacePatch {
            time_zone,
            decay,
            consolidate_every_seconds: consolidate_every_seconds.map(Some),
        };
        let mut changes = Vec::new();
        if patch != NamespacePatch::default() {
            changes.push(Change::ConfigureNamespace(patch));
        }
        if let Some(e) = embedding {
            changes.extend(e.changes()?);
        }
        if let Some(seg) = segmentation {
            changes.push(Change::ConfigureSegmentation(seg.patch()));
        }
        if let Some(retention) = retention {
            changes.push(Change::ConfigureRetention(retention.policy()?));
        }
        if let Some(tiers) = tiers {
            changes.push(Change::ConfigureTiers(tiers.patch()?));
        }
        if changes.is_empty() {
            return NamespaceInfo::of(store, &ns).map_err(engine);
        }
        let paths = vec![String::new(); changes.len()];
        commit(store, &ns, changes, &paths)?;
        NamespaceInfo::of(store, &ns).map_err(engine)
    }
}
