//! Running a store: backup and restore, inspection of a data directory, checkpoints,
//! upkeep and its reports, residency, and a namespace's settings.

pub(crate) mod backup;
pub(crate) mod inspect;
pub(crate) mod lag;

pub use crate::maintain::checkpoint::{CHECKPOINT_EVERY_BATCHES, CHECKPOINT_EVERY_BYTES, Checkpointed};
pub use crate::maintain::consolidate::ConsolidationReport;
pub use crate::maintain::schedule::IDLE_AFTER_MICROS;
pub use crate::maintain::segment::SegmentReport;
pub use crate::maintain::upkeep::Maintenance;
pub use crate::options::{Residency, SEARCH_ON_DISK_BYTES};
pub use crate::read::lookup::Settings;
pub use backup::{BackupReport, backup, restore};
pub use inspect::{CheckpointFile, NamespaceReport, inspect_dir, inspect_storage};
pub use lag::Lag;
