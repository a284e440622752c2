//! `triage`: the verdicts of many jobs, as an iterator that yields each
//! one as soon as its job is done.
//!
//! The jobs are scanned on the process's pool ([`crate::process`]), from a
//! background thread; verdicts come through a channel, and `__next__`
//! waits for the next one with the GIL released ([`crate::wait::recv`]).

use crate::convert::{loads, to_json};
use crate::engine::{self, lock};
use crate::CudnnlogError;
use cudnnlog::fleet::Job;
use cudnnlog::fleet::Verdict;
use cudnnlog::Scanner;
use pyo3::prelude::*;
use rayon::prelude::*;
use rayon::ThreadPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One message from the background thread: a verdict's JSON, or why it
/// could not be made.
type Message = Result<String, String>;

/// An iterator over the verdicts of a fleet of jobs, one dict per job, in
/// the order the jobs finish (scanning goes on in the background, on all
/// cores). `it.jobs` is the number of verdicts it yields in all. Closing
/// it (`close()`, leaving a `with` block, or dropping it) stops the jobs
/// not yet started.
#[pyclass(frozen, module = "cudnnlog", name = "Triage")]
pub struct Triage {
    rx: Mutex<Receiver<Message>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
    closed: AtomicBool,
    total: usize,
    /// The process that started it: a forked child has the iterator, but
    /// not the thread that fills it.
    pid: u32,
}

impl Triage {
    /// Starts scanning `jobs` with `scanner` on `pool`; the `early`
    /// verdicts (of directories that could not be listed) come first.
    pub fn start(
        pool: Arc<ThreadPool>,
        scanner: Arc<Scanner>,
        jobs: Vec<Job>,
        early: Vec<Verdict>,
    ) -> Triage {
        let (tx, rx) = channel::<Message>();
        let stop = Arc::new(AtomicBool::new(false));
        let total = jobs.len() + early.len();
        let flag = Arc::clone(&stop);
        let worker = std::thread::Builder::new()
            .name("cudnnlog-triage".into())
            .spawn(move || {
                for v in &early {
                    if tx.send(to_json(v)).is_err() {
                        return;
                    }
                }
                // Closing stops the jobs not started, and those under way
                // at their next window (their verdicts are not sent).
                let flag = &*flag;
                pool.install(|| {
                    jobs.par_iter().for_each_with(tx, |tx, job| {
                        if flag.load(Ordering::Relaxed) {
                            return;
                        }
                        let verdict = engine::verdict_of_job(&scanner, job, flag);
                        if flag.load(Ordering::Relaxed) || tx.send(to_json(&verdict)).is_err() {
                            // Closed, or the iterator is gone: stop.
                            flag.store(true, Ordering::Relaxed);
                        }
                    })
                });
            });
        let (worker, rx) = match worker {
            Ok(handle) => (Some(handle), rx),
            Err(e) => {
                // No thread: the iterator reports it on its first step.
                let (tx, rx) = channel();
                let _ = tx.send(Err(format!("cannot start the triage thread: {e}")));
                (None, rx)
            }
        };
        Triage {
            rx: Mutex::new(rx),
            worker: Mutex::new(worker),
            stop,
            closed: AtomicBool::new(false),
            total,
            pid: std::process::id(),
        }
    }

    /// Waits for the next message, the GIL released, checking for signals
    /// (Ctrl-C) while waiting. `None` once every verdict was yielded.
    fn wait(&self, py: Python<'_>) -> PyResult<Option<Message>> {
        if self.pid != std::process::id() {
            return Err(CudnnlogError::new_err(
                "this triage was started before the process forked, and its scanning \
                 thread is in the parent: call triage() again in this process",
            ));
        }
        let got = crate::wait::recv(py, |timeout| match self.closed.load(Ordering::Relaxed) {
            true => Err(RecvTimeoutError::Disconnected),
            false => lock(&self.rx).recv_timeout(timeout),
        })?;
        if got.is_some() || self.closed.load(Ordering::Relaxed) {
            return Ok(got);
        }
        // Every verdict was sent, or the thread panicked.
        let handle = lock(&self.worker).take();
        if handle.is_some_and(|h| py.detach(|| h.join()).is_err()) {
            return Err(CudnnlogError::new_err(
                "triage stopped: the scanning thread panicked (a bug in cudnnlog)",
            ));
        }
        Ok(None)
    }
}

impl Drop for Triage {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[pymethods]
impl Triage {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.wait(py)? {
            None => Ok(None),
            Some(Ok(json)) => loads(py, &json).map(Some),
            Some(Err(e)) => Err(CudnnlogError::new_err(e)),
        }
    }

    /// The number of verdicts this iterator yields in all (one per job,
    /// and one per directory that could not be read).
    #[getter]
    fn jobs(&self) -> usize {
        self.total
    }

    /// Stops: jobs not yet started are not scanned, those under way stop
    /// at their next window, and the iterator yields nothing more.
    fn close(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.closed.store(true, Ordering::Relaxed);
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        format!("<cudnnlog.Triage of {} jobs>", self.total)
    }
}
