//! Between Rust and Python values: the library's serde types become the
//! dicts of their JSON form (through `json.loads`, so a dict is exactly
//! what `cudnnlog scan --format json` prints), and Python arguments become
//! paths, bytes and lists of paths.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The Python value of a JSON text (`json.loads`).
pub fn loads<'py>(py: Python<'py>, json: &str) -> PyResult<Bound<'py, PyAny>> {
    LOADS.import(py, "json", "loads")?.call1((json,))
}

/// The JSON text of a Python value (`json.dumps`).
pub fn dumps(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    DUMPS
        .import(obj.py(), "json", "dumps")?
        .call1((obj,))?
        .extract()
}

/// The JSON text of a serde value. The library's types always serialize;
/// a failure would be a bug, reported as a `ValueError`.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("cannot serialize: {e}"))
}

/// A library value from a dict (through its JSON text): `what` names it
/// in the `ValueError` raised when the dict does not fit.
pub fn from_dict<T: DeserializeOwned>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    let dict = obj.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a dict, not {}", type_name(obj)))
    })?;
    let text = dumps(dict.as_any())?;
    serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// The name of an object's type, for error messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_string(), |n| n.to_string())
}

/// What to scan: a file, or bytes. It owns what it holds, so that it can
/// be scanned on another thread, without the GIL.
pub enum Input {
    /// A path (`str` or `os.PathLike`).
    Path(PathBuf),
    /// A `bytes` object, read in place (it is immutable), kept alive while
    /// it is scanned.
    Bytes(PyBackedBytes),
    /// A copy of a `bytearray` or `memoryview` (those can change while the
    /// GIL is released, so they are copied first).
    Owned(Vec<u8>),
    /// A binary file-like object, read by its `read(n)` in bounded chunks
    /// ([`crate::reader`]).
    Reader(Py<PyAny>),
}

/// An input's data, borrowed: what crosses into code that runs without
/// the GIL.
pub enum Data<'a> {
    /// A file.
    Path(&'a Path),
    /// A log in memory.
    Bytes(&'a [u8]),
    /// A file-like object.
    Reader(&'a Py<PyAny>),
}

impl Input {
    /// The path or the bytes.
    pub fn data(&self) -> Data<'_> {
        match self {
            Input::Path(p) => Data::Path(p),
            Input::Bytes(b) => Data::Bytes(b),
            Input::Owned(v) => Data::Bytes(v),
            Input::Reader(r) => Data::Reader(r),
        }
    }
}

/// Reads a `path_or_bytes` argument: a path, bytes, or a binary
/// file-like object (anything with a `read` method that is not a path).
pub fn input(obj: &Bound<'_, PyAny>) -> PyResult<Input> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Input::Bytes(b.clone().into()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Input::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let b = obj.call_method0("tobytes")?;
        return Ok(Input::Bytes(b.cast_into::<PyBytes>()?.into()));
    }
    if !is_one_path(obj)? && obj.hasattr("read")? {
        return Ok(Input::Reader(obj.clone().unbind()));
    }
    path(obj).map(Input::Path).map_err(|_| {
        PyTypeError::new_err(format!(
            "expected a path (str or os.PathLike), bytes, bytearray, memoryview or a binary file object, not {}",
            type_name(obj)
        ))
    })
}

/// A path argument: a `str` or an `os.PathLike`.
fn path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    if obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("a path must be a str or os.PathLike"));
    }
    obj.extract::<PathBuf>()
}

/// Whether an object is one path rather than a collection of them.
fn is_one_path(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")?)
}

/// A `paths` argument: one path, or an iterable of paths. `what` names the
/// argument in errors.
pub fn paths(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<PathBuf>> {
    let bad = |o: &Bound<'_, PyAny>| {
        PyTypeError::new_err(format!(
            "{what} must be a path (str or os.PathLike) or an iterable of paths, not {}",
            type_name(o)
        ))
    };
    if is_one_path(obj)? {
        return path(obj).map(|p| vec![p]).map_err(|_| bad(obj));
    }
    if obj.is_instance_of::<PyBytes>() || obj.is_instance_of::<PyByteArray>() {
        return Err(bad(obj));
    }
    let items = obj.try_iter().map_err(|_| bad(obj))?;
    let mut out = Vec::new();
    for item in items {
        let item = item?;
        if !is_one_path(&item)? {
            return Err(bad(&item));
        }
        out.push(path(&item).map_err(|_| bad(&item))?);
    }
    Ok(out)
}

/// A `patterns` argument: `None`, one directory, or an iterable of them.
pub fn patterns(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PathBuf>> {
    match obj {
        None => Ok(Vec::new()),
        Some(o) if o.is_none() => Ok(Vec::new()),
        Some(o) => paths(o, "patterns"),
    }
}
