//! What one process holds for every call: the pool of threads scans run
//! on, and the scanner of the built-in catalog.
//!
//! Scans run on a pool of this module's, never on rayon's global one: a
//! process forked after a scan (`multiprocessing`'s default start method
//! on Linux, `os.fork`, a pre-forking server) keeps only the thread that
//! forked, so a pool made before the fork has no threads in the child, and
//! work handed to it would wait for ever. rayon's global pool cannot be
//! made again; this one is, on a child's first call: after `os.fork` (the
//! package registers [`forked`] with `os.register_at_fork`), and after any
//! other fork, told by the process id.
//!
//! Both values are reached only with the GIL held. A fork from Python is
//! made holding the GIL, so their locks are never copied held into a child.

use crate::engine::lock;
use crate::CudnnlogError;
use cudnnlog::{Catalog, Scanner, ScannerBuilder};
use pyo3::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

/// The pool, and the process that made it.
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// The scanner of the built-in catalog, built on first use and shared by
/// every call that gives no pattern directory. It holds no thread, so a
/// child keeps its parent's.
static BUILTIN: Mutex<Option<Arc<Scanner>>> = Mutex::new(None);

/// The pool of this process: as many threads as cores (or
/// `RAYON_NUM_THREADS`), started on the first scan, and again in a forked
/// child. Raises CudnnlogError when no thread can be started.
pub fn pool(_py: Python<'_>) -> PyResult<Arc<ThreadPool>> {
    let pid = std::process::id();
    let mut slot = lock(&POOL);
    match slot.as_ref() {
        Some((owner, pool)) if *owner == pid => return Ok(Arc::clone(pool)),
        _ => forget(&mut slot),
    }
    let pool = ThreadPoolBuilder::new()
        .thread_name(|i| format!("cudnnlog-{i}"))
        .build()
        .map_err(|e| CudnnlogError::new_err(format!("cannot start the scanning threads: {e}")))?;
    let pool = Arc::new(pool);
    *slot = Some((pid, Arc::clone(&pool)));
    Ok(pool)
}

/// Forgets the pool a forked child copied from its parent: its threads are
/// not in this process (dropping it would wait for them), so it is left as
/// it is, a few KiB. The next scan starts a pool of this process's.
fn forget(slot: &mut Option<(u32, Arc<ThreadPool>)>) {
    if let Some(stale) = slot.take() {
        std::mem::forget(stale);
    }
}

/// Called in a child just after `os.fork` (registered by the package with
/// `os.register_at_fork(after_in_child=...)`): the parent's pool is
/// forgotten. A fork made some other way is told by the process id.
///
/// ```python
/// import os, cudnnlog
/// cudnnlog.triage(["logs/"])          # the parent's pool
/// if os.fork() == 0:
///     cudnnlog.triage(["logs/"])      # the child's own
/// ```
#[pyfunction]
#[pyo3(name = "_forked")]
pub fn forked(_py: Python<'_>) {
    forget(&mut lock(&POOL));
}

/// The shared scanner of the built-in catalog. Built outside the lock (the
/// GIL released): two first callers may both build one; the first to
/// finish is kept.
pub fn builtin(py: Python<'_>) -> PyResult<Arc<Scanner>> {
    if let Some(s) = lock(&BUILTIN).as_ref() {
        return Ok(Arc::clone(s));
    }
    let built = py
        .detach(|| Catalog::builtin().map(|c| Arc::new(ScannerBuilder::new().build(c))))
        .map_err(crate::error)?;
    Ok(Arc::clone(lock(&BUILTIN).get_or_insert(built)))
}
