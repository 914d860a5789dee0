//! [`FileStorage`]: one file per log, `<name>.log`, in a directory; syncs with `fdatasync`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use crate::storage::validate_name;
use crate::{error::LogError, storage::LogFile, storage::Storage};

/// File name extension of log files.
const EXTENSION: &str = ".log";

/// How long [`lock_exclusive`] tries again a lock held elsewhere.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);

/// Locks `file` exclusively (an advisory lock, released when the handle is dropped or the
/// process dies); `false` when another handle holds it. A lock this process released a
/// moment ago may still be held by a process it is starting (a child holds a copy of every
/// descriptor until it executes its program), so a held lock is tried again for a moment
/// before it is called held. Platforms without file locks proceed unlocked.
pub fn lock_exclusive(file: &File) -> io::Result<bool> {
    let give_up = std::time::Instant::now() + LOCK_PATIENCE;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(TryLockError::WouldBlock) if std::time::Instant::now() < give_up => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(TryLockError::WouldBlock) => return Ok(false),
            Err(TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => return Ok(true),
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// A directory of log files, one `<name>.log` per log. Each file opened with
/// [`Storage::open`] is locked exclusively (an advisory lock, released when the handle is dropped
/// or the process dies), so two writers never interleave frames in one file;
/// [`Storage::open_read_only`] takes no lock and changes nothing.
#[derive(Clone, Debug)]
pub struct FileStorage {
    dir: PathBuf,
}

impl FileStorage {
    /// A storage in `dir`, creating the directory (and its parents) when absent.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, LogError> {
        let dir = dir.into();
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir)?;
            if let Some(parent) = dir.parent() {
                sync_dir(parent)?;
            }
        }
        Ok(FileStorage { dir })
    }

    /// The directory holding the log files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the file holding log `name` (which must pass [`validate_name`]).
    pub fn path_of(&self, name: &str) -> Result<PathBuf, LogError> {
        validate_name(name)?;
        Ok(self.dir.join(format!("{name}{EXTENSION}")))
    }
}

impl Storage for FileStorage {
    fn open(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        let path = self.path_of(name)?;
        regular_or_absent(&path)?;
        // Append mode: every write lands at the end of the file whatever the read position.
        let created = OpenOptions::new().read(true).append(true).create_new(true).open(&path);
        let file = match created {
            Ok(file) => {
                // The new directory entry must be durable before anything in the file is
                // acknowledged, or a crash could lose the whole file.
                sync_dir(&self.dir)?;
                file
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                OpenOptions::new().read(true).append(true).open(&path)?
            }
            Err(e) => return Err(e.into()),
        };
        // A namespace closed and opened again takes its lock anew.
        if !lock_exclusive(&file)? {
            return Err(LogError::Locked { name: name.to_owned() });
        }
        Ok(Box::new(DiskFile { file, read_only: false }))
    }

    fn open_read_only(&self, name: &str) -> Result<Box<dyn LogFile>, LogError> {
        let path = self.path_of(name)?;
        regular_or_absent(&path)?;
        // Read access only, no create, no lock: inspection must work beside a running writer
        // and must not leave a file (or a directory entry) behind.
        let file = OpenOptions::new().read(true).open(&path)?;
        Ok(Box::new(DiskFile { file, read_only: true }))
    }

    fn list(&self) -> Result<Vec<String>, LogError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            // Anything named like a log is listed, files or not: a directory or a device in
            // a log's place is damage to report, not a namespace that seems empty.
            let file_name = entry.file_name();
            let Some(name) = file_name.to_str().and_then(|n| n.strip_suffix(EXTENSION)) else {
                continue;
            };
            if validate_name(name).is_ok() {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    fn replace(
        &self,
        name: &str,
        write: &mut dyn FnMut(&mut dyn std::io::Write) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        let path = self.path_of(name)?;
        let mut failed = None;
        let written = crate::atomic::replace_file(&path, |file| {
            let mut out = io::BufWriter::with_capacity(1 << 20, file);
            if let Err(e) = write(&mut out) {
                failed = Some(e);
                return Err(io::Error::other("the new log could not be written"));
            }
            io::Write::flush(&mut out)
        });
        match (failed, written) {
            (Some(e), _) => Err(e),
            (None, r) => Ok(r?),
        }
    }

    fn remove(&self, name: &str) -> Result<(), LogError> {
        let path = self.path_of(name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(sync_dir(&self.dir)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Refuses a path that exists but is not a regular file (a directory or a device where a
/// log belongs), following symbolic links.
fn regular_or_absent(path: &Path) -> Result<(), LogError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(LogError::Io(io::Error::other(format!(
            "{} is not a regular file (a {}), where a log belongs",
            path.display(),
            if meta.is_dir() { "directory" } else { "special file" }
        )))),
        _ => Ok(()),
    }
}

/// Makes a directory's entries durable (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// One open log file.
struct DiskFile {
    file: File,
    /// Opened by `open_read_only`: every change is refused. The file descriptor is read-only
    /// too, but `fsync` works on those, so the flag is what keeps `sync` from touching the disk.
    read_only: bool,
}

impl DiskFile {
    /// Fails when the file was opened read-only.
    fn writable(&self) -> io::Result<()> {
        if self.read_only { Err(read_only_error()) } else { Ok(()) }
    }
}

/// The error every change to a read-only log file fails with.
pub(crate) fn read_only_error() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "log file opened read-only")
}

impl LogFile for DiskFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = &self.file;
            file.seek(SeekFrom::Start(offset))?;
            file.read_exact(buf)
        }
    }

    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writable()?;
        io::Write::write_all(&mut self.file, bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.writable()?;
        // fdatasync: flushes the data and the metadata needed to read it (the length), which
        // is all an append-only file needs.
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.writable()?;
        self.file.set_len(len)
    }
}
