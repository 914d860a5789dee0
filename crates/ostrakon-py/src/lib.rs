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

    /// Runs a GraphQL document with its variables (JSON text of an object, or None) and
    /// returns the response as JSON text.
    #[pyo3(signature = (document, variables=None))]
    fn execute(&self, py: Python<'_>, document: &str, variables: Option<&str>) -> PyResult<String> {
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
                Some(engine) => Ok(engine.execute(document, variables)),
                None => Err(PyValueError::new_err("the store is closed")),
            }
        })
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
