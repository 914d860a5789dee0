//! The storage abstraction: where log files live ([`Storage`]) and one file's bytes ([`LogFile`]).

use crate::error::LogError;

/// Where logs live: a directory of files (`FileStorage`), or memory
/// (`MemStorage`).
pub trait Storage: Send + Sync {
    /// Opens the named log file, creating it (empty) when absent. The name must pass
    /// [`validate_name`].
    fn open(&self, name: &str) -> Result<Box<dyn LogFile>, LogError>;
    /// Opens an existing log file for reading only, for inspection: never creates it (a missing
    /// file is an I/O error of kind `NotFound`), takes no lock (a writer may have it open), and
    /// the returned file fails [`append`](LogFile::append), [`sync`](LogFile::sync) and
    /// [`truncate`](LogFile::truncate) with an I/O error of kind `PermissionDenied`, so nothing
    /// read through it can change the file. Use it with `Log::inspect`.
    ///
    /// The default implementation fails with an I/O error of kind `Unsupported`, so that a
    /// storage that cannot guarantee this never pretends to.
    fn open_read_only(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        validate_name(name)?;
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this storage cannot open logs read-only")
            .into())
    }
    /// Names of the logs that exist, sorted.
    fn list(&self) -> Result<Vec<String>, LogError>;
    /// Replaces the named log file with what `write` writes, atomically: a crash leaves
    /// the old file or the new one. Handles open on the old file keep reading the old
    /// bytes. The default fails with an I/O error of kind `Unsupported`.
    fn replace(
        &self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        validate_name(name)?;
        let _ = write;
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this storage cannot replace logs").into())
    }
    /// Removes the named log file (a missing one is not an error). The default fails
    /// with an I/O error of kind `Unsupported`.
    fn remove(&self, name: &str) -> Result<(), LogError> {
        validate_name(name)?;
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "this storage cannot remove logs").into())
    }
}

/// One log's bytes: an append-only file that can be read at any offset, synced and truncated.
///
/// The log relies on these guarantees: bytes passed to [`append`](LogFile::append) land at the
/// end of the file in order; once [`sync`](LogFile::sync) returns `Ok`, everything appended
/// before it survives a crash; bytes appended after the last sync may survive a crash only as a
/// prefix (possibly empty) of what was written.
pub trait LogFile: Send {
    /// Current length of the file in bytes, including bytes not yet synced.
    fn len(&self) -> std::io::Result<u64>;
    /// Whether the file holds no bytes at all.
    fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }
    /// Fills `buf` with the bytes at `offset..offset + buf.len()`; fails (with
    /// `ErrorKind::UnexpectedEof`) when that range goes past the end of the file.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
    /// Appends `bytes` at the end of the file (not yet durable).
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Makes every byte appended so far (and the file's length) durable.
    fn sync(&mut self) -> std::io::Result<()>;
    /// Cuts the file to `len` bytes (durable after the next [`sync`](LogFile::sync)).
    fn truncate(&mut self, len: u64) -> std::io::Result<()>;
}

/// Longest accepted log name, in bytes.
pub const MAX_NAME_LEN: usize = 128;

/// Checks a log name: non-empty, at most [`MAX_NAME_LEN`] bytes, only ASCII letters, digits,
/// `_`, `.` and `-`, and no leading dot (so no hidden files and no `.`/`..`). These rules make
/// every name a safe, portable file name on its own.
pub fn validate_name(name: &str) -> Result<(), LogError> {
    let reason = if name.is_empty() {
        Some("name is empty")
    } else if name.len() > MAX_NAME_LEN {
        Some("name is longer than 128 bytes")
    } else if name.starts_with('.') {
        Some("name starts with a dot")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')) {
        Some("name may only use ASCII letters, digits, '_', '.' and '-'")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(LogError::InvalidName { name: name.to_owned(), reason }),
        None => Ok(()),
    }
}
