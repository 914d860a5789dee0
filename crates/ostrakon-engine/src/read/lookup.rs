//! Typed reads for the protocol crates: each takes a namespace and the point it reads at
//! (a pinned seq, or a whole [`ReadAt`]) and returns owned values, so that nothing of the
//! index crosses the engine's API.

use ostrakon_core::{
    EmbeddingMode, Episode, EpisodeId, FactId, IntentionId, Namespace, NamespaceConfig, PredicateDef,
    SegmentConfig, Seq, StatementView,
};
use ostrakon_index::{Counts, FactView, IntentionView};

use crate::error::read::ReadError;
use crate::error::storage::StorageError;
use crate::read::point::{Answer, ReadAt};
use crate::store::Store;

/// A namespace's settings and size at the latest batch.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Time zone, decay profiles, idle consolidation.
    pub config: NamespaceConfig,
    /// Every declared predicate, by name.
    pub predicates: Vec<PredicateDef>,
    /// Record counts.
    pub counts: Counts,
    /// Where its vectors come from.
    pub embedding: EmbeddingMode,
    /// What the built-in embedder embeds besides episodes.
    pub embedding_policy: ostrakon_core::EmbeddingPolicy,
    /// The predicates whose facts are embedded under `FactEmbedding::Declared`.
    pub embedded_predicates: std::collections::BTreeSet<String>,
    /// How its threads are cut into segments.
    pub segmentation: SegmentConfig,
    /// How long it keeps episodes.
    pub retention: ostrakon_core::RetentionPolicy,
}

impl Store {
    /// A namespace's settings and size, as of its latest batch.
    pub fn settings(&self, ns: &Namespace) -> Result<Settings, StorageError> {
        self.with_index(ns, |i| Settings {
            config: i.config(),
            predicates: i.predicates(),
            counts: i.counts(),
            embedding: i.embedding_mode(),
            embedding_policy: i.embedding_policy(),
            embedded_predicates: i.embedded_predicates(),
            segmentation: i.segment_config(i.last_seq()),
            retention: i.retention(),
        })
    }

    /// Whether a predicate's facts are embedded under `FactEmbedding::Declared`.
    pub fn predicate_embedded(&self, ns: &Namespace, name: &str) -> Result<bool, StorageError> {
        self.with_index(ns, |i| i.predicate_embedded(name))
    }

    /// The names of every predicate the namespace declared or used, sorted.
    pub fn predicate_names(&self, ns: &Namespace) -> Result<Vec<String>, StorageError> {
        self.with_index(ns, |i| i.predicates().into_iter().map(|d| d.name).collect())
    }

    /// A predicate's latest definition (an undeclared one reads as `many`, any type).
    pub fn predicate(&self, ns: &Namespace, name: &str) -> Result<PredicateDef, StorageError> {
        self.with_index(ns, |i| i.predicate(name))
    }

    /// The episode a client's external id names, if any.
    pub fn episode_by_external_id(
        &self,
        ns: &Namespace,
        external_id: &str,
    ) -> Result<Option<EpisodeId>, StorageError> {
        self.with_index(ns, |i| i.episode_by_external_id(external_id))
    }

    /// When batch `seq` was committed (its system time), if it is in the log.
    pub fn batch_time(
        &self,
        ns: &Namespace,
        seq: Seq,
    ) -> Result<Option<ostrakon_core::Timestamp>, StorageError> {
        self.with_index(ns, |i| i.system_time(seq))
    }

    /// Who wrote the facts of batch `seq`, when it is an extraction: the episode read and
    /// the source that read it.
    pub fn extraction_of_batch(
        &self,
        ns: &Namespace,
        seq: Seq,
    ) -> Result<Option<(EpisodeId, String)>, StorageError> {
        self.with_index(ns, |i| i.extraction_of_batch(seq).map(|(e, s)| (e, s.to_owned())))
    }

    /// Up to `limit` episodes with ids above `after`, in id order, that `source` has not
    /// read, at the latest batch; and the last id looked at (where the next call starts).
    pub fn unextracted(
        &self,
        ns: &Namespace,
        source: &str,
        after: EpisodeId,
        limit: usize,
    ) -> Result<(Vec<Episode>, EpisodeId), StorageError> {
        self.with_index(ns, |i| i.unextracted(source, after, limit))
    }

    /// How many episodes with ids above `after` `source` has not read, at the latest batch,
    /// and that batch.
    pub fn unextracted_count(
        &self,
        ns: &Namespace,
        source: &str,
        after: EpisodeId,
    ) -> Result<(u64, Seq), StorageError> {
        self.with_index(ns, |i| (i.unextracted_count(source, after), i.last_seq()))
    }

    /// `Reader::fact`, positional.
    pub(crate) fn fact(
        &self,
        ns: &Namespace,
        id: FactId,
        at: ReadAt,
    ) -> Result<Answer<Option<FactView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.fact_at(id, view))
    }

    /// `Reader::statements`, positional.
    pub(crate) fn statements(
        &self,
        ns: &Namespace,
        id: FactId,
        at: ReadAt,
    ) -> Result<Answer<Vec<StatementView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.statements_at(id, view))
    }

    /// `Reader::facts_by_id`, positional.
    pub(crate) fn facts_by_id(
        &self,
        ns: &Namespace,
        ids: &[FactId],
        at: ReadAt,
    ) -> Result<Answer<Vec<FactView>>, ReadError> {
        self.read_at(ns, at, |index, view| index.facts_by_id(ids, view))
    }

    /// `Reader::intentions`, positional.
    pub(crate) fn intentions(
        &self,
        ns: &Namespace,
        at: ReadAt,
        include_inactive: bool,
    ) -> Result<Answer<Vec<IntentionView>>, ReadError> {
        self.read_search(ns, at, |index, basis| {
            index
                .intentions(basis.known_at)
                .into_iter()
                .filter(|v| include_inactive || v.pending_at(basis.at))
                .collect()
        })
    }

    /// `Reader::intentions_by_id`, positional.
    pub(crate) fn intentions_by_id(
        &self,
        ns: &Namespace,
        ids: &[IntentionId],
        at: ReadAt,
    ) -> Result<Answer<Vec<IntentionView>>, ReadError> {
        self.read_search(ns, at, |index, basis| {
            ids.iter().filter_map(|id| index.intention(*id, basis.known_at)).collect()
        })
    }
}
