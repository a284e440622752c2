//! Python bindings for cudnnlog, the `cudnnlog._cudnnlog` extension
//! module: scan a training log into its JSON report, turn a report into a
//! verdict, triage a fleet of jobs, and summarize verdicts by fingerprint.
//!
//! Every value crosses as the dict of its JSON form, so a report from
//! Python is exactly what `cudnnlog scan --format json` prints. Scanning
//! runs with the GIL released, on a pool of threads that a forked child
//! makes again ([`process`]); the caller waits with Ctrl-C still working
//! ([`wait`]).

use cudnnlog::fleet::{Summary, Verdict};
use cudnnlog::{Report, Scanner};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Arc;

mod convert;
mod engine;
mod fleet;
mod process;
mod reader;
mod wait;

use convert::{from_dict, loads, to_json, Data};
use fleet::Triage;
use reader::PyRead;

pyo3::create_exception!(
    cudnnlog,
    CudnnlogError,
    pyo3::exceptions::PyException,
    "A log or a pattern catalog could not be read: the message is cudnnlog's, naming the file (and, for a catalog file, the field)."
);

/// The Python exception for a library error.
fn error(e: cudnnlog::Error) -> PyErr {
    CudnnlogError::new_err(e.to_string())
}

/// A serde value as a Python dict.
fn to_py<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    let json = to_json(value).map_err(PyValueError::new_err)?;
    loads(py, &json)
}

/// A JSON text made without the GIL as a Python value.
fn json_to_py(py: Python<'_>, json: Result<String, String>) -> PyResult<Bound<'_, PyAny>> {
    loads(py, &json.map_err(PyValueError::new_err)?)
}

/// A scanner of the built-in pattern catalog plus the patterns in
/// `patterns` (a directory of pattern `.toml` files, or a list of them).
/// Build one and reuse it for many logs: building one with patterns costs
/// some 50 ms. Thread-safe; its methods release the GIL while scanning.
/// Raises CudnnlogError when a pattern directory cannot be read or holds a
/// malformed file.
#[pyclass(frozen, module = "cudnnlog", name = "Scanner")]
pub struct PyScanner {
    scanner: Arc<Scanner>,
    patterns: Vec<PathBuf>,
}

impl PyScanner {
    fn build(py: Python<'_>, patterns: Vec<PathBuf>) -> PyResult<PyScanner> {
        let scanner = match patterns.is_empty() {
            true => process::builtin(py)?,
            false => py.detach(|| engine::scanner(&patterns)).map_err(error)?,
        };
        Ok(PyScanner { scanner, patterns })
    }

    fn scan_input<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = convert::input(source)?;
        let scanner = Arc::clone(&self.scanner);
        let name = name.map(str::to_string);
        let pool = process::pool(py)?;
        let json = wait::run(py, &pool, move |cancel| {
            let report = match input.data() {
                Data::Path(path) => {
                    let mut report = engine::scan_path(&scanner, path, cancel)?;
                    if let (Some(name), Some(s)) = (name, report.sources.first_mut()) {
                        s.path = name;
                    }
                    report
                }
                Data::Bytes(bytes) => {
                    let name = name.as_deref().unwrap_or(engine::MEMORY);
                    engine::scan_bytes(&scanner, name, bytes, cancel)?
                }
                Data::Reader(obj) => {
                    let name = name.as_deref().unwrap_or(engine::STREAM);
                    engine::scan_read(&scanner, name, PyRead::new(obj), cancel)?
                }
            };
            Ok(to_json(&report))
        })?;
        json_to_py(py, json.map_err(error)?)
    }

    fn verdict_of<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        path: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if source.is_instance_of::<PyDict>() {
            let report: Report = from_dict(source, "report")?;
            let name = path.map_or_else(|| engine::report_name(&report), str::to_string);
            return to_py(py, &Verdict::of(&name, &report));
        }
        let input = convert::input(source)?;
        let scanner = Arc::clone(&self.scanner);
        let path = path.map(str::to_string);
        let pool = process::pool(py)?;
        let json = wait::run(py, &pool, move |cancel| {
            let name = path.as_deref();
            to_json(&match input.data() {
                Data::Path(file) => engine::verdict_of_path(&scanner, file, name, cancel),
                Data::Bytes(bytes) => {
                    let name = name.unwrap_or(engine::MEMORY);
                    engine::verdict_of_bytes(&scanner, name, bytes, cancel)
                }
                Data::Reader(obj) => {
                    let name = name.unwrap_or(engine::STREAM);
                    engine::verdict_of_read(&scanner, name, PyRead::new(obj), cancel)
                }
            })
        })?;
        json_to_py(py, json)
    }

    fn start_triage(
        &self,
        py: Python<'_>,
        paths: &Bound<'_, PyAny>,
        group: bool,
    ) -> PyResult<Triage> {
        let paths = convert::paths(paths, "paths")?;
        let pool = process::pool(py)?;
        let (expanded, jobs) = wait::run(py, &pool, move |_| {
            let expanded = engine::expand(&paths);
            let jobs = engine::jobs(&expanded.files, group);
            (expanded, jobs)
        })?;
        Ok(Triage::start(
            pool,
            Arc::clone(&self.scanner),
            jobs,
            expanded.unreadable,
        ))
    }
}

#[pymethods]
impl PyScanner {
    #[new]
    #[pyo3(signature = (patterns = None))]
    fn new(py: Python<'_>, patterns: Option<&Bound<'_, PyAny>>) -> PyResult<PyScanner> {
        PyScanner::build(py, convert::patterns(patterns)?)
    }

    /// The report of one log (schema `cudnnlog.report/1`), as a dict. See
    /// `cudnnlog.scan`.
    #[pyo3(signature = (path_or_bytes, *, name = None))]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        path_or_bytes: &Bound<'py, PyAny>,
        name: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.scan_input(py, path_or_bytes, name.as_deref())
    }

    /// The verdict of one job: `source` is a report dict, a path, or
    /// bytes. See `cudnnlog.verdict`.
    #[pyo3(signature = (source, path = None))]
    fn verdict<'py>(
        &self,
        py: Python<'py>,
        source: &Bound<'py, PyAny>,
        path: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.verdict_of(py, source, path.as_deref())
    }

    /// The verdicts of many jobs, yielded as each job is done. See
    /// `cudnnlog.triage`.
    #[pyo3(signature = (paths, group = true))]
    fn triage(&self, py: Python<'_>, paths: &Bound<'_, PyAny>, group: bool) -> PyResult<Triage> {
        self.start_triage(py, paths, group)
    }

    /// The pattern directories added to the built-in catalog.
    #[getter]
    fn patterns(&self) -> Vec<String> {
        self.patterns
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "cudnnlog.Scanner(patterns={:?}) with {} patterns",
            self.patterns(),
            self.scanner.catalog().patterns().len()
        )
    }
}

/// Scans one log and returns its report (the JSON report of
/// `cudnnlog scan --format json`, schema `cudnnlog.report/1`) as a dict.
///
/// `path_or_bytes` is a path (`str` or `os.PathLike`), the log itself
/// (`bytes`, `bytearray`, `memoryview`), or a binary file-like object,
/// read by `read(n)` calls of at most 1 MiB until it gives no bytes; gzip
/// and zstd are decompressed. `patterns` adds a directory of pattern
/// files (or a list of them) to the built-in catalog. `name` names the
/// source in the report (default: the path, `<memory>` for bytes,
/// `<stream>` for a file-like object). The GIL is released while scanning.
/// Raises CudnnlogError when the file cannot be read or a pattern
/// directory is malformed.
#[pyfunction]
#[pyo3(signature = (path_or_bytes, patterns = None, *, name = None))]
fn scan<'py>(
    py: Python<'py>,
    path_or_bytes: &Bound<'py, PyAny>,
    patterns: Option<&Bound<'py, PyAny>>,
    name: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    PyScanner::build(py, convert::patterns(patterns)?)?.scan_input(
        py,
        path_or_bytes,
        name.as_deref(),
    )
}

/// The verdict of one job: how it ended, the primary failure, where it
/// started, the rank at fault, the top cause, the first remediation and a
/// fingerprint that groups the same failure across jobs — the dict
/// `triage` yields.
///
/// `source` is a report dict (from `scan`), a path, the log's bytes, or
/// a binary file-like object (read as `scan` reads it). `path` names the
/// job (default: the report's source, the path, `<memory>` or
/// `<stream>`). A file that cannot be read gives a verdict with `error`
/// set, not an exception.
#[pyfunction]
#[pyo3(signature = (source, path = None, patterns = None))]
fn verdict<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    path: Option<String>,
    patterns: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    PyScanner::build(py, convert::patterns(patterns)?)?.verdict_of(py, source, path.as_deref())
}

/// Scans many jobs on all cores and yields one verdict dict per job as
/// soon as it is done (in the order they finish).
///
/// `paths` is a path or a list of paths; directories are walked as
/// `cudnnlog scan` walks them (sorted; ignore files honoured; hidden
/// entries, binaries and files that are not logs skipped).
/// With `group`, files that are the ranks or streams of one job
/// (`rank0.log`, `rank1.log`; `job.out`, `job.err`) are one job, as
/// `cudnnlog scan` groups them; otherwise each file is a job. A file that
/// cannot be read does not raise: its job's verdict has `error` set.
#[pyfunction]
#[pyo3(signature = (paths, patterns = None, group = true))]
fn triage(
    py: Python<'_>,
    paths: &Bound<'_, PyAny>,
    patterns: Option<&Bound<'_, PyAny>>,
    group: bool,
) -> PyResult<Triage> {
    PyScanner::build(py, convert::patterns(patterns)?)?.start_triage(py, paths, group)
}

/// What verdicts add up to: jobs counted by outcome, by primary class and
/// by fingerprint, and one group per fingerprint (largest first) with its
/// class, title, message, count and up to five example jobs. `verdicts`
/// is any iterable of verdict dicts (a list, or `triage(...)` itself); the
/// order does not matter.
#[pyfunction]
fn summarize<'py>(py: Python<'py>, verdicts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if verdicts.is_instance_of::<PyDict>() {
        return Err(PyTypeError::new_err(
            "verdicts must be an iterable of verdict dicts, not one dict",
        ));
    }
    let mut summary = Summary::default();
    for (i, item) in verdicts.try_iter()?.enumerate() {
        let v: Verdict = from_dict(&item?, &format!("verdict {i}"))?;
        summary.add(&v);
    }
    to_py(py, &summary.finish())
}

/// The extension module `cudnnlog._cudnnlog`; `cudnnlog` re-exports it.
#[pymodule]
fn _cudnnlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("CudnnlogError", py.get_type::<CudnnlogError>())?;
    m.add_class::<PyScanner>()?;
    m.add_class::<Triage>()?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(verdict, m)?)?;
    m.add_function(wrap_pyfunction!(triage, m)?)?;
    m.add_function(wrap_pyfunction!(summarize, m)?)?;
    m.add_function(wrap_pyfunction!(process::forked, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("REPORT_SCHEMA", cudnnlog::report::SCHEMA)?;
    Ok(())
}
