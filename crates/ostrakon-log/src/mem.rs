//! [`MemStorage`]: logs in memory, with simulated power loss and I/O fault injection for tests.
//!
//! Each file keeps its durable bytes (covered by a sync) apart from its unsynced bytes, so that
//! [`MemStorage::crash`] can model a power loss that keeps only a prefix of unsynced writes.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::storage::validate_name;
use crate::{error::LogError, storage::LogFile, storage::Storage};

/// In-memory [`Storage`]. Cloning shares the same files (an `Arc` inside).
#[derive(Clone, Default)]
pub struct MemStorage {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    files: Mutex<BTreeMap<String, Arc<Mutex<MemData>>>>,
    /// How many more appends or syncs succeed before all fail; `None`: no fault injected.
    budget: Mutex<Option<usize>>,
}

/// One file's bytes: the durable part followed by the unsynced part.
#[derive(Default, Clone)]
struct MemData {
    durable: Vec<u8>,
    unsynced: Vec<u8>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl MemStorage {
    /// An empty storage.
    pub fn new() -> Self {
        Self::default()
    }

    /// Simulates power loss: returns a new storage whose files hold their durable bytes plus
    /// the first `keep(unsynced_len)` bytes (clamped) of what was written after the last sync,
    /// all durable. `keep` is called once per file, in name order. Handles of this storage stay
    /// usable but no longer affect the new one. The new storage has no fault injected.
    pub fn crash(&self, mut keep: impl FnMut(usize) -> usize) -> MemStorage {
        let files = lock(&self.shared.files);
        let mut survived = BTreeMap::new();
        for (name, data) in files.iter() {
            let data = lock(data);
            let kept = keep(data.unsynced.len()).min(data.unsynced.len());
            let mut durable = data.durable.clone();
            durable.extend_from_slice(&data.unsynced[..kept]);
            let file = MemData { durable, unsynced: Vec::new() };
            survived.insert(name.clone(), Arc::new(Mutex::new(file)));
        }
        MemStorage { shared: Arc::new(Shared { files: Mutex::new(survived), budget: Mutex::new(None) }) }
    }

    /// Makes every file's `append` and `sync` fail after `n` more successful append-or-sync
    /// calls in total across all files; `None` disables the fault. A failing append still
    /// writes the first half of its bytes (a short write), as real I/O errors may.
    pub fn fail_after(&self, n: Option<usize>) {
        *lock(&self.shared.budget) = n;
    }

    /// A file's raw bytes (durable then unsynced), or `None` when it does not exist.
    pub fn bytes(&self, name: &str) -> Option<Vec<u8>> {
        let files = lock(&self.shared.files);
        files.get(name).map(|data| {
            let data = lock(data);
            let mut all = data.durable.clone();
            all.extend_from_slice(&data.unsynced);
            all
        })
    }

    /// Replaces a file's bytes (creating it when absent); the new bytes are durable. Open
    /// handles see the change.
    pub fn set_bytes(&self, name: &str, bytes: Vec<u8>) {
        let mut files = lock(&self.shared.files);
        let data = files.entry(name.to_owned()).or_default();
        *lock(data) = MemData { durable: bytes, unsynced: Vec::new() };
    }
}

impl std::fmt::Debug for MemStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = lock(&self.shared.files);
        f.debug_struct("MemStorage").field("files", &files.keys().collect::<Vec<_>>()).finish()
    }
}

impl Storage for MemStorage {
    fn open(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        validate_name(name)?;
        let data = lock(&self.shared.files).entry(name.to_owned()).or_default().clone();
        Ok(Box::new(MemFile { data, shared: Arc::clone(&self.shared), read_only: false }))
    }

    fn open_read_only(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        validate_name(name)?;
        let data = lock(&self.shared.files).get(name).cloned().ok_or_else(|| {
            LogError::Io(io::Error::new(io::ErrorKind::NotFound, format!("no log named {name:?}")))
        })?;
        Ok(Box::new(MemFile { data, shared: Arc::clone(&self.shared), read_only: true }))
    }

    fn list(&self) -> Result<Vec<String>, LogError> {
        Ok(lock(&self.shared.files).keys().cloned().collect())
    }

    fn replace(
        &self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        validate_name(name)?;
        let mut bytes = Vec::new();
        write(&mut bytes)?;
        // A new file under the name: handles on the old one keep the old bytes.
        let data = Arc::new(Mutex::new(MemData { durable: bytes, unsynced: Vec::new() }));
        lock(&self.shared.files).insert(name.to_owned(), data);
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        lock(&self.shared.files).remove(name);
        Ok(())
    }
}

/// A handle on one in-memory file.
struct MemFile {
    data: Arc<Mutex<MemData>>,
    shared: Arc<Shared>,
    /// Opened by `open_read_only`: every change is refused (before the fault budget is spent).
    read_only: bool,
}

impl MemFile {
    /// Fails when the file was opened read-only.
    fn writable(&self) -> io::Result<()> {
        if self.read_only { Err(crate::file::read_only_error()) } else { Ok(()) }
    }

    /// Spends one unit of the fault budget; `Err` once it is exhausted.
    fn charge(&self) -> io::Result<()> {
        let mut budget = lock(&self.shared.budget);
        match *budget {
            None => Ok(()),
            Some(0) => Err(io::Error::other("injected I/O failure")),
            Some(n) => {
                *budget = Some(n - 1);
                Ok(())
            }
        }
    }
}

impl LogFile for MemFile {
    fn len(&self) -> io::Result<u64> {
        let data = lock(&self.data);
        Ok((data.durable.len() + data.unsynced.len()) as u64)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = lock(&self.data);
        let total = data.durable.len() + data.unsynced.len();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        if start > total || total - start < buf.len() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"));
        }
        // Copy the part that falls in the durable bytes, then the part in the unsynced bytes.
        let durable_len = data.durable.len();
        let split = durable_len.clamp(start, start + buf.len()); // absolute offset
        let (head, tail) = buf.split_at_mut(split - start);
        if !head.is_empty() {
            head.copy_from_slice(&data.durable[start..split]);
        }
        let from = split - durable_len.min(split); // offset into the unsynced bytes
        tail.copy_from_slice(&data.unsynced[from..from + tail.len()]);
        Ok(())
    }

    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writable()?;
        let charged = self.charge();
        let mut data = lock(&self.data);
        match charged {
            Ok(()) => {
                data.unsynced.extend_from_slice(bytes);
                Ok(())
            }
            Err(e) => {
                data.unsynced.extend_from_slice(&bytes[..bytes.len() / 2]);
                Err(e)
            }
        }
    }

    fn sync(&mut self) -> io::Result<()> {
        self.writable()?;
        self.charge()?;
        let mut data = lock(&self.data);
        let MemData { durable, unsynced } = &mut *data;
        durable.append(unsynced);
        Ok(())
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.writable()?;
        let mut data = lock(&self.data);
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        // Truncation is modelled as durable at once: recovery syncs right after it anyway.
        if len <= data.durable.len() {
            data.durable.truncate(len);
            data.unsynced.clear();
        } else {
            let keep = len - data.durable.len();
            data.unsynced.truncate(keep);
        }
        Ok(())
    }
}
