//! Ending on a signal with an answer: Ctrl-C (SIGINT), a CI runner's
//! SIGTERM or a hangup under `scan --follow` end the follow, which then
//! closes with its report and the findings' exit status, as its input's
//! end would. A second one ends cudnnlog at once, as if none were handled.
//! A signal cudnnlog was started with ignored (`nohup` ignores SIGHUP)
//! stays ignored.

use anyhow::Context;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first stopping signal.
static STOP: AtomicBool = AtomicBool::new(false);

/// The signals that stop a follow.
const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// The handlers of the stopping signals, installed.
pub struct Stop(());

impl Stop {
    /// Installs the handlers; from now on the first stopping signal is
    /// [`requested`](Stop::requested) instead of ending the process.
    pub fn install() -> anyhow::Result<Stop> {
        STOP.store(false, Ordering::SeqCst);
        for signal in STOPPING {
            if ignored(signal) {
                continue;
            }
            let action = move || {
                if STOP.swap(true, Ordering::SeqCst) {
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                }
            };
            // SAFETY: the action is async-signal-safe: an atomic swap and
            // signal-hook's emulate_default_handler, which is made to be
            // called from a handler. It neither allocates nor locks.
            unsafe { signal_hook::low_level::register(signal, action) }
                .with_context(|| format!("cannot handle signal {signal}"))?;
        }
        Ok(Stop(()))
    }

    /// Whether a stopping signal came.
    pub fn requested(&self) -> bool {
        STOP.load(Ordering::SeqCst)
    }
}

/// Whether `signal` is ignored now (SIG_IGN), as `nohup` leaves SIGHUP.
pub(crate) fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one
    // into `old`, a plain C struct for which all zeroes is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}
