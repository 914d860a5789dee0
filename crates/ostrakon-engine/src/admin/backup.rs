//! Online backup of a data directory, and its restore: a consistent copy while a server
//! writes on, with no lock taken and nothing stopped.
//!
//! Each namespace is copied at one batch: its log's whole records as they stand when it
//! is read (a group a writer is appending is left out as the torn tail it is then), into
//! a log file of the backup's own. Checkpoints, saved search vectors and the embedding
//! caches are copied *before* the logs: all are derived, each file is replaced
//! atomically or only appended to, and a checkpoint older than its log is what any store
//! opens from (one that no longer fits the log, after an erasure, is ignored and the log
//! replayed). The backup is written under `<dir>.partial` and renamed to `<dir>` once
//! whole and synced, so a backup killed part-way leaves nothing under the name.

use std::path::{Path, PathBuf};

use ostrakon_core::{Namespace, Seq};
use ostrakon_log::{FileStorage, Log, LogError, Storage as _};

use crate::error::open::OpenError;
use crate::error::storage::StorageError;

/// What a backup copied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupReport {
    /// Each namespace with the last batch copied.
    pub namespaces: Vec<(Namespace, Seq)>,
    /// Bytes written.
    pub bytes: u64,
    /// Derived files copied (checkpoints, saved vectors, embedding caches).
    pub derived_files: usize,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StorageError + '_ {
    move |source| StorageError::Io { path: path.display().to_string(), source }
}

/// A refusal about `path`, as an I/O error of `kind`.
fn refused(path: &Path, kind: std::io::ErrorKind, reason: &str) -> StorageError {
    StorageError::Io {
        path: path.display().to_string(),
        source: std::io::Error::new(kind, reason.to_owned()),
    }
}

fn log_err(name: &str) -> impl Fn(LogError) -> StorageError + '_ {
    move |source| StorageError::Log { namespace: name.to_owned(), source }
}

/// Backs up the data directory `data` (served or not) into the new directory `to`.
pub fn backup(data: &Path, to: &Path) -> Result<BackupReport, StorageError> {
    if to.exists() {
        return Err(refused(
            to,
            std::io::ErrorKind::AlreadyExists,
            "already exists; a backup is written to a new directory",
        ));
    }
    let logs = data.join("logs");
    if !logs.is_dir() {
        return Err(refused(data, std::io::ErrorKind::NotFound, "is not a data directory (it has no logs)"));
    }
    let partial = partial_of(to);
    // What a backup killed part-way left.
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
    }
    std::fs::create_dir_all(&partial).map_err(io(&partial))?;
    let mut report = BackupReport::default();
    // Derived files first, the logs after: a log copied later holds at least the batches
    // of a checkpoint copied before it.
    for (from, into) in derived_files(data)? {
        let target = partial.join(&into);
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        match std::fs::copy(&from, &target) {
            Ok(bytes) => {
                report.bytes += bytes;
                report.derived_files += 1;
            }
            // Replaced or removed meanwhile (an erasure, a drop): it was derived.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&from)(e)),
        }
    }
    let storage = FileStorage::new(&logs).map_err(log_err(""))?;
    let out_logs = partial.join("logs");
    std::fs::create_dir_all(&out_logs).map_err(io(&out_logs))?;
    for name in storage.list().map_err(log_err(""))? {
        let Ok(ns) = Namespace::new("namespace", &name) else { continue };
        let file = storage.open_read_only(&name).map_err(log_err(&name))?;
        let recovery = Log::inspect(&*file).map_err(log_err(&name))?;
        let last = recovery.records.last().map_or(0, |r| r.seq);
        let path = out_logs.join(format!("{name}.log"));
        let mut bytes = Vec::new();
        ostrakon_log::write_log(&mut bytes, &name, &recovery.records).map_err(log_err(&name))?;
        ostrakon_log::replace_file(&path, |f| std::io::Write::write_all(f, &bytes)).map_err(io(&path))?;
        report.bytes += bytes.len() as u64;
        report.namespaces.push((ns, Seq(last)));
    }
    sync_dir(&out_logs)?;
    sync_dir(&partial)?;
    std::fs::rename(&partial, to).map_err(io(to))?;
    if let Some(parent) = to.parent().filter(|p| !p.as_os_str().is_empty()) {
        sync_dir(parent)?;
    }
    Ok(report)
}

/// Restores the backup `from` into the data directory `data`, which must hold no logs:
/// its files are copied (a restore killed part-way is written under `<data>.partial` and
/// never seen under the name). Returns the namespaces restored with their last batch.
pub fn restore(from: &Path, data: &Path) -> Result<Vec<(Namespace, Seq)>, OpenError> {
    if !from.join("logs").is_dir() {
        return Err(refused(from, std::io::ErrorKind::NotFound, "is not a backup (it has no logs)").into());
    }
    if data.join("logs").exists() {
        return Err(refused(
            data,
            std::io::ErrorKind::AlreadyExists,
            "already holds logs; restore into a new data directory",
        )
        .into());
    }
    let partial = partial_of(data);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io(&partial))?;
    }
    copy_tree(from, &partial)?;
    sync_dir(&partial)?;
    if data.exists() {
        // An empty directory made for it: the restored files go in.
        for entry in std::fs::read_dir(&partial).map_err(io(&partial))? {
            let entry = entry.map_err(io(&partial))?;
            std::fs::rename(entry.path(), data.join(entry.file_name())).map_err(io(data))?;
        }
        std::fs::remove_dir(&partial).map_err(io(&partial))?;
    } else {
        std::fs::rename(&partial, data).map_err(io(data))?;
    }
    // Opened once, as a server would: every log read through, every checkpoint checked.
    let store = crate::store::Store::open(data)?;
    let mut restored = Vec::new();
    for ns in store.namespaces() {
        let batches = store.counts(&ns)?.batches;
        restored.push((ns, Seq(batches)));
    }
    let damaged = store.damaged();
    if let Some((ns, why)) = damaged.first() {
        return Err(StorageError::Damaged { namespace: ns.to_string(), reason: why.clone() }.into());
    }
    Ok(restored)
}

fn partial_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// The derived files of a data directory, each with its path inside a backup.
fn derived_files(data: &Path) -> Result<Vec<(PathBuf, PathBuf)>, StorageError> {
    let mut files = Vec::new();
    let mut add_dir = |dir: &str, keep: &dyn Fn(&Path) -> bool| -> Result<(), StorageError> {
        let path = data.join(dir);
        let Ok(entries) = std::fs::read_dir(&path) else { return Ok(()) };
        for entry in entries {
            let entry = entry.map_err(io(&path))?;
            let file = entry.path();
            if file.is_file() && keep(&file) {
                files.push((file, Path::new(dir).join(entry.file_name())));
            }
        }
        Ok(())
    };
    let ext = |e: &'static str| move |p: &Path| p.extension().is_some_and(|x| x == e);
    add_dir("checkpoints", &ext("ckpt"))?;
    add_dir("embeddings", &ext("emb"))?;
    // Saved search vectors (the text indexes are rebuilt on open; the vectors are what
    // costs an embedder's time).
    if let Ok(entries) = std::fs::read_dir(data.join("search")) {
        for entry in entries.flatten() {
            let vectors = entry.path().join("vectors");
            if vectors.is_file() {
                files.push((vectors, Path::new("search").join(entry.file_name()).join("vectors")));
            }
        }
    }
    Ok(files)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), StorageError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            std::fs::copy(&source, &target).map_err(io(&source))?;
            std::fs::File::open(&target).and_then(|f| f.sync_all()).map_err(io(&target))?;
        }
    }
    sync_dir(to)
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}
