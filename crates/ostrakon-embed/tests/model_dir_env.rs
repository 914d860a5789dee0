//! `OSTRAKON_MODEL_DIR` overrides the cache, and a folder without a model is a clear error.
//!
//! The environment is process-wide, so each check runs in a child process of this test binary
//! that has the variable set, and the parent checks that the child's test ran and passed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use ostrakon_embed::{EmbedError, MODEL_DIR_ENV, MODEL_FILES, locate_or_fetch};

/// Set in the child: the folder the check expects `locate_or_fetch` to return, or "" for an error.
const EXPECT_ENV: &str = "OSTRAKON_EMBED_TEST_EXPECT";

/// Runs `test` of this binary in a child with `OSTRAKON_MODEL_DIR=model_dir`.
fn run_child(test: &str, model_dir: &Path, expect: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(MODEL_DIR_ENV, model_dir)
        .env(EXPECT_ENV, expect)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "child ran no test:\n{stdout}");
}

#[test]
fn model_dir_env() {
    let Some(expect) = std::env::var_os(EXPECT_ENV) else {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("no-such-model");
        run_child("model_dir_env", &missing, "");
        let present = tmp.path().join("model");
        std::fs::create_dir(&present).unwrap();
        for name in MODEL_FILES {
            std::fs::write(present.join(name), b"{}").unwrap();
        }
        run_child("model_dir_env", &present, present.to_str().unwrap());
        return;
    };
    // In the child: the cache folder is never looked at nor fetched into.
    let cache = tempfile::tempdir().unwrap();
    let result = locate_or_fetch(cache.path(), &|line| panic!("no fetch expected, got {line:?}"));
    if expect.is_empty() {
        let err = result.unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, EmbedError::ModelNotFound { from_env: true, .. }), "{err:?}");
        assert!(message.contains("no-such-model"), "{message}");
        assert!(message.contains(MODEL_DIR_ENV), "{message}");
        assert!(message.contains("config.json"), "{message}");
        eprintln!("error for a missing folder: {message}");
    } else {
        assert_eq!(result.unwrap(), Path::new(&expect));
    }
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}
