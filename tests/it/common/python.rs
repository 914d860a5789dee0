//! Real third-party clients, in Python: the interpreter of the virtual environment
//! `.ci/run` makes (`~/.cache/ostrakon-venv`, or `OSTRAKON_PYTHON`), with the packages a test
//! needs. Without them a test says so and passes, unless `OSTRAKON_CLIENT_TEST=required`
//! (as in CI), where that is a failure.

use std::path::PathBuf;
use std::process::Command;

/// A Python that imports every module of `modules`, if there is one.
pub(crate) fn with(modules: &[&str]) -> Option<PathBuf> {
    let python = std::env::var_os("OSTRAKON_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/ostrakon-venv/bin/python")
    });
    let check = format!("import {}", modules.join(", "));
    let found = Command::new(&python).args(["-c", &check]).output().is_ok_and(|o| o.status.success());
    if found {
        return Some(python);
    }
    let why = format!(
        "{} cannot `{check}` (pip install {} in ~/.cache/ostrakon-venv)",
        python.display(),
        modules.join(" ")
    );
    assert!(
        std::env::var("OSTRAKON_CLIENT_TEST").as_deref() != Ok("required"),
        "OSTRAKON_CLIENT_TEST=required: {why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// Runs `script` (in `tests/clients/`) with `args`; its standard output, which must
/// come from a successful run.
pub(crate) fn run(python: &PathBuf, script: &str, args: &[&std::ffi::OsStr]) -> String {
    let path = super::project_root().join("tests").join("clients").join(script);
    let out = Command::new(python).arg(&path).args(args).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    stdout.into_owned()
}
