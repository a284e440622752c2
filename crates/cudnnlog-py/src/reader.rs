//! A Python file-like object as a [`std::io::Read`]: a log on a store the
//! library cannot open (HDFS, S3, a socket, a decompressing wrapper) is
//! scanned from the object's `read(n)` calls, at most [`CHUNK`] bytes
//! each, so that a file of any size is scanned in bounded memory.
//!
//! The scan runs on the package's threads, without the GIL; each call to
//! `read` takes the GIL for its own length, while the caller waits with the
//! GIL released ([`crate::wait`]).

use crate::convert::type_name;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};
use std::io;

/// The most bytes asked of one `read(n)` call (1 MiB): the memory a
/// stream's object holds at a time, besides the scan's windows.
pub const CHUNK: usize = 1 << 20;

/// Reads a Python object's `read(n)`. The object stays owned by the
/// caller, who keeps it alive while it is read.
pub struct PyRead<'a> {
    obj: &'a Py<PyAny>,
    /// Set once `read` returned no bytes: later calls return 0 without
    /// asking the object again.
    done: bool,
}

impl<'a> PyRead<'a> {
    /// Reads `obj`.
    pub fn new(obj: &'a Py<PyAny>) -> Self {
        PyRead { obj, done: false }
    }
}

impl io::Read for PyRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        let want = buf.len().min(CHUNK);
        let n = Python::attach(|py| read_into(self.obj.bind(py), &mut buf[..want]))?;
        self.done = n == 0;
        Ok(n)
    }
}

/// One `read(len(buf))` of `obj` copied into `buf`: how many bytes it
/// gave. An exception, or a value that is not bytes, is an I/O error
/// naming it.
fn read_into(obj: &Bound<'_, PyAny>, buf: &mut [u8]) -> io::Result<usize> {
    let got = obj
        .call_method1("read", (buf.len(),))
        .map_err(|e| io::Error::other(format!("read() raised {e}")))?;
    let mut copy = |data: &[u8]| -> io::Result<usize> {
        if data.len() > buf.len() {
            return Err(io::Error::other(format!(
                "read({}) returned {} bytes",
                buf.len(),
                data.len()
            )));
        }
        buf[..data.len()].copy_from_slice(data);
        Ok(data.len())
    };
    if let Ok(b) = got.cast::<PyBytes>() {
        return copy(b.as_bytes());
    }
    if let Ok(b) = got.cast::<PyByteArray>() {
        return copy(&b.to_vec());
    }
    if got.is_instance_of::<PyMemoryView>() {
        let b = got
            .call_method0("tobytes")
            .map_err(|e| io::Error::other(e.to_string()))?;
        if let Ok(b) = b.cast::<PyBytes>() {
            return copy(b.as_bytes());
        }
    }
    if got.is_instance_of::<PyString>() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "read() returned str: open the log in binary mode ('rb')",
        ));
    }
    if got.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "read() returned None (a non-blocking stream with no data ready)",
        ));
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!("read() returned {}, not bytes", type_name(&got)),
    ))
}
