//! The person every erasure test erases, at every layer (the engine's suite and the
//! server's): long strings found nowhere else, so that a byte search of a data directory
//! means it, and that search.

use std::path::{Path, PathBuf};

/// The person's name.
pub const NAME: &str = "Zyxwarbleton Quennimore";
/// Another name of theirs.
pub const ALIAS: &str = "Quennibald Xorvath";
/// Something only they said.
pub const SECRET: &str = "orchid-plover-5512";
/// Every string of theirs an erasure must leave nowhere (a part of the name too).
pub const NEEDLES: [&str; 5] = [NAME, ALIAS, SECRET, "Zyxwarbleton", "Quennibald"];

/// Every file under `dir`.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

/// The files under `dir` holding `needle`.
pub fn grep(dir: &Path, needle: &str) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|file| {
            let bytes = std::fs::read(file).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .collect()
}

/// The files under `dir` holding any of the person's strings, with the string.
pub fn leftovers(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    NEEDLES.iter().flat_map(|needle| grep(dir, needle).into_iter().map(move |f| (f, *needle))).collect()
}
