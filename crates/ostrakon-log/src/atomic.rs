//! Replacing a whole file atomically, for what is written whole (checkpoints, saved
//! vectors): a crash leaves the old file or the new one, never a torn one.

use std::path::{Path, PathBuf};

/// Replaces the file at `path` with what `write` writes, atomically: into a temporary
/// file beside it (`<path>.tmp`), synced, then renamed over it, the directory synced. A
/// crash leaves the old file or the new one, never a torn one under the real name.
pub fn replace_file(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    {
        let mut file = std::fs::File::create(&tmp)?;
        write(&mut file)?;
        file.sync_data()?;
    }
    std::fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}
