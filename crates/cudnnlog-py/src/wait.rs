//! Waiting for work done on the scanning threads, the GIL released, while
//! Ctrl-C still works: Python runs a signal's handler only on the main
//! thread, when that thread checks, so the waiting thread wakes every
//! [`SIGNAL_CHECK`] to check. A handler that raises (`KeyboardInterrupt`)
//! ends the wait at once: the scan is told to stop, and stops at its next
//! window in the background.

use pyo3::prelude::*;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How often a waiting thread checks for signals (Ctrl-C).
pub const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Waits with the GIL released for what `recv` gives (it is called with
/// the longest it may wait), running Python's signal handlers between
/// tries: the value, `None` once nothing more can come, or the exception
/// a handler raised.
pub fn recv<T: Send>(
    py: Python<'_>,
    mut recv: impl FnMut(Duration) -> Result<T, RecvTimeoutError> + Send,
) -> PyResult<Option<T>> {
    loop {
        match py.detach(|| recv(SIGNAL_CHECK)) {
            Ok(value) => return Ok(Some(value)),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
        }
    }
}

/// Runs `work` on `pool` and waits for its result (see [`recv`]). `work`
/// is given a flag that is set when a signal handler raises: the
/// exception is raised at once, without waiting for `work`, which should
/// stop soon after (a scan stops at its next window). A panic in `work`
/// is raised here (as `pyo3_runtime.PanicException`).
pub fn run<T: Send + 'static>(
    py: Python<'_>,
    pool: &rayon::ThreadPool,
    work: impl FnOnce(&AtomicBool) -> T + Send + 'static,
) -> PyResult<T> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = sync_channel(1);
    let flag = Arc::clone(&cancel);
    pool.spawn(move || {
        let done = std::panic::catch_unwind(AssertUnwindSafe(|| work(&flag)));
        // Nobody waits for it any more after an interrupt.
        let _ = tx.send(done);
    });
    let rx = &mut rx;
    match recv(py, move |timeout| rx.recv_timeout(timeout)) {
        Ok(Some(Ok(value))) => Ok(value),
        Ok(Some(Err(panic))) => std::panic::resume_unwind(panic),
        // The work sends its result, or its panic, before it ends.
        Ok(None) => Err(crate::CudnnlogError::new_err(
            "the scanning thread ended without a result (a bug in cudnnlog)",
        )),
        Err(interrupted) => {
            cancel.store(true, Ordering::Relaxed);
            Err(interrupted)
        }
    }
}
