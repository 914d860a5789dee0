//! Read-only inspection of a data directory (`ostrakon inspect`): every namespace's log is
//! read and classified as recovery would, without truncating, creating or locking
//! anything, so a directory inspected stays byte for byte as it was — even while a server
//! holds it.

use std::path::Path;

use ostrakon_core::{Namespace, Seq, Timestamp};
use ostrakon_index::{Counts, NamespaceIndex};
use ostrakon_log::{FileStorage, Log, Storage, Truncation};

use crate::error::storage::StorageError;
use crate::write::codec::decode;

/// What one namespace's log holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceReport {
    /// The log's name: its namespace.
    pub namespace: String,
    /// The file's length in bytes.
    pub log_bytes: u64,
    /// What it holds, when it could be read.
    pub counts: Option<Counts>,
    /// The torn tail recovery would cut on the next open (never acknowledged).
    pub truncation: Option<Truncation>,
    /// Why the log cannot be opened (corruption, a foreign or renamed file, an
    /// undecodable batch); such a namespace is refused while the others serve.
    pub damage: Option<String>,
    /// Its checkpoint, when it has a readable one (only for a data directory).
    pub checkpoint: Option<CheckpointFile>,
    /// About how many bytes its state takes in memory once open (search indexes not
    /// included), when the log could be read.
    pub state_bytes: Option<u64>,
    /// The last batch its full-text index on disk holds, if it has one.
    pub text_index_batch: Option<u64>,
    /// The last batch of its search vectors saved on disk, if it has them.
    pub vectors_batch: Option<u64>,
}

/// A checkpoint file as found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointFile {
    /// The last batch it holds.
    pub seq: Seq,
    /// Its size in bytes.
    pub bytes: u64,
    /// Seconds since it was written, by the file's modification time.
    pub age_seconds: Option<u64>,
}

/// Inspects the logs of the data directory `dir` without changing it; a directory with
/// no logs yet has none to report.
pub fn inspect_dir(dir: &Path) -> Result<Vec<NamespaceReport>, StorageError> {
    let logs = dir.join("logs");
    if !logs.is_dir() {
        return Ok(Vec::new());
    }
    let storage =
        FileStorage::new(&logs).map_err(|source| StorageError::Log { namespace: String::new(), source })?;
    let mut reports = inspect_storage(&storage)?;
    let checkpoint_path = |ns: &Namespace| dir.join("checkpoints").join(format!("{}.ckpt", ns.as_str()));
    for report in &mut reports {
        let Ok(ns) = Namespace::new("namespace", &report.namespace) else { continue };
        let search = dir.join("search").join(ns.as_str());
        report.text_index_batch = text_index_batch(&search.join("text").join("meta.json"));
        report.vectors_batch = crate::retrieve::saved_vectors::header_batch(&search.join("vectors"));
        report.checkpoint =
            crate::maintain::checkpoint::file_header(&checkpoint_path(&ns)).map(|(head, bytes)| {
                CheckpointFile {
                    seq: head.seq,
                    bytes,
                    age_seconds: std::fs::metadata(checkpoint_path(&ns))
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|m| m.elapsed().ok())
                        .map(|d| d.as_secs()),
                }
            });
    }
    Ok(reports)
}

/// The batch a full-text index's last commit says it holds (its stamp, the payload of
/// `meta.json`), read as text without opening the index.
fn text_index_batch(meta: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(meta).ok()?;
    let tag = format!("{} ", crate::retrieve::saved_vectors::TEXT_STAMP);
    let at = text.find(&tag)? + tag.len();
    let digits: String = text[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Inspects every log of a storage, read-only.
pub fn inspect_storage(storage: &dyn Storage) -> Result<Vec<NamespaceReport>, StorageError> {
    let names = storage.list().map_err(|source| StorageError::Log { namespace: String::new(), source })?;
    Ok(names.iter().map(|name| inspect_one(storage, name)).collect())
}

fn inspect_one(storage: &dyn Storage, name: &str) -> NamespaceReport {
    let mut report = NamespaceReport {
        namespace: name.to_owned(),
        log_bytes: 0,
        counts: None,
        truncation: None,
        damage: None,
        checkpoint: None,
        state_bytes: None,
        text_index_batch: None,
        vectors_batch: None,
    };
    let file = match storage.open_read_only(name) {
        Ok(file) => file,
        Err(e) => {
            report.damage = Some(e.to_string());
            return report;
        }
    };
    report.log_bytes = file.len().unwrap_or(0);
    let recovery = match Log::inspect(file.as_ref()) {
        Ok(recovery) => recovery,
        Err(e) => {
            report.damage = Some(e.to_string());
            return report;
        }
    };
    report.truncation = recovery.truncation;
    if let Some(found) = recovery.name.as_deref().filter(|found| *found != name) {
        report.damage = Some(format!("the file belongs to log {found:?}, not {name:?} (renamed or swapped)"));
        return report;
    }
    let ns = match Namespace::new("namespace", name) {
        Ok(ns) => ns,
        Err(e) => {
            report.damage = Some(e.to_string());
            return report;
        }
    };
    let mut index = NamespaceIndex::new();
    for record in recovery.records {
        match decode(&ns, record.seq, &record.payload) {
            Ok(events) => {
                if let Err(e) =
                    index.apply(Seq(record.seq), Timestamp::from_micros(record.system_time), &events)
                {
                    report.damage = Some(e.to_string());
                    return report;
                }
            }
            Err(e) => {
                report.damage = Some(e.to_string());
                return report;
            }
        }
    }
    report.counts = Some(index.counts());
    index.warm();
    report.state_bytes = Some(index.heap_bytes());
    report
}
