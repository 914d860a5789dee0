//! `ostrakon._native`: the store in this process (`Engine`) and the command line
//! (`run_cli`) for the Python package in `python/ostrakon`. Both release the GIL while
//! they work.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// Runs the `ostrakon` command line `argv` (the program's name first) and returns its
/// exit code.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<String>) -> i32 {
    i32::from(py.detach(|| ostrakon::run_cli(argv)))
}

/// A line an import refused: its number (1-based), error code and message.
type Refused = (usize, String, String);

/// A data directory opened in this process.
#[pyclass(frozen)]
struct Engine {
    inner: Mutex<Option<ostrakon::Embedded>>,
}

#[pymethods]
impl Engine {
    /// Opens (or creates) the data directory at `path`; `OSError` names what is in the way
    /// (another process holding it, say).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let opened = py.detach(|| ostrakon::Embedded::open(&path));
        let engine = opened.map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
        Ok(Engine { inner: Mutex::new(Some(engine)) })
    }

    /// Runs a GraphQL document with its variables (JSON text of an object, or None) — its
    /// operation `operation_name` when it holds several — and returns the response as
    /// JSON text.
    #[pyo3(signature = (document, variables=None, operation_name=None))]
    fn execute(
        &self,
        py: Python<'_>,
        document: &str,
        variables: Option<&str>,
        operation_name: Option<&str>,
    ) -> PyResult<String> {
        let variables = match variables {
            Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(value @ serde_json::Value::Object(_)) => Some(value),
                Ok(_) => return Err(PyValueError::new_err("variables must be a JSON object")),
                Err(e) => return Err(PyValueError::new_err(format!("variables are not JSON: {e}"))),
            },
            None => None,
        };
        py.detach(|| {
            let engine = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match engine.as_ref() {
                Some(engine) => Ok(engine.execute(document, variables, operation_name)),
                None => Err(PyValueError::new_err("the store is closed")),
            }
        })
    }

    /// Imports a file in the import format, one batch per line; `progress(bytes,
    /// accepted, rejected)` is called now and then (at most every 100 ms) while it runs.
    /// Returns (lines accepted, [(line, code, message)] of the lines refused).
    #[pyo3(signature = (path, progress=None))]
    fn import_jsonl(
        &self,
        py: Python<'_>,
        path: PathBuf,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(u64, Vec<Refused>)> {
        let last = Mutex::new(std::time::Instant::now());
        let report = |bytes: u64, accepted: u64, rejected: usize| {
            let Some(callback) = &progress else { return };
            let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.elapsed() < std::time::Duration::from_millis(100) {
                return;
            }
            *last = std::time::Instant::now();
            // A progress callback that fails is the caller's display, not the import's
            // business: the import goes on.
            Python::attach(|py| {
                if let Err(e) = callback.call1(py, (bytes, accepted, rejected)) {
                    e.print(py);
                }
            });
        };
        let imported = py.detach(|| {
            let engine = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match engine.as_ref() {
                Some(engine) => {
                    engine.import_jsonl(&path, &report).map_err(|e| PyOSError::new_err(format!("{e:#}")))
                }
                None => Err(PyValueError::new_err("the store is closed")),
            }
        })?;
        let rejected = imported.rejected.into_iter().map(|(line, r)| (line, r.code, r.message)).collect();
        Ok((imported.accepted, rejected))
    }

    /// Closes the store, releasing its data directory; later calls fail.
    fn close(&self, py: Python<'_>) {
        let taken = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        py.detach(move || drop(taken));
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    m.add_class::<Engine>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
