//! The signals `cudnnlog run` catches while its child runs.
//!
//! A signal handler may only do async-signal-safe work, so each handler
//! here sends one datagram — the signal's number and whether a process sent
//! it — on a socket pair. The copying loop polls the other end beside the
//! child's output and acts there: it forwards, reaps or resizes.

use anyhow::Context;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The signals passed on to the child: those a user or a scheduler sends to
/// stop or warn a job, which would otherwise end cudnnlog and leave the
/// child running unwatched. SIGQUIT because with a pty Ctrl-\ reaches only
/// cudnnlog; SIGUSR1 and SIGUSR2 because schedulers (Slurm's `--signal`)
/// send them as a warning before pre-empting a job.
pub(super) const FORWARDED: [i32; 6] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2];

/// Set once the child has exited: the forwarded signals then act as if they
/// were not handled (they end cudnnlog), because there is no child left to
/// pass them to and a user pressing Ctrl-C during the diagnosis means it.
static CHILD_GONE: AtomicBool = AtomicBool::new(false);

/// A signal that reached cudnnlog.
#[derive(Clone, Copy, Debug)]
pub(super) struct Caught {
    pub signal: i32,
    /// Sent by a process (`kill`), not by the kernel for a terminal (Ctrl-C,
    /// hangup): a terminal's signal already reached its whole foreground
    /// process group, the child too when it shares ours.
    pub from_process: bool,
}

/// The installed handlers and the end of the socket pair they write to.
pub(super) struct Signals {
    rx: UnixDatagram,
}

impl Signals {
    /// Installs the handlers. A forwarded signal that cudnnlog was started
    /// with ignored (`nohup` ignores SIGHUP) is left ignored: the child
    /// inherits that, as it would from a shell.
    pub(super) fn install() -> anyhow::Result<Self> {
        let (rx, tx) = UnixDatagram::pair().context("cannot create the signal socket")?;
        for end in [&rx, &tx] {
            end.set_nonblocking(true)
                .context("cannot set up the signal socket")?;
        }
        CHILD_GONE.store(false, Ordering::SeqCst);
        let tx = Arc::new(tx);
        for signal in FORWARDED.into_iter().chain([SIGCHLD, SIGWINCH]) {
            let forwarded = FORWARDED.contains(&signal);
            if forwarded && crate::cmd::interrupt::ignored(signal) {
                continue;
            }
            let tx = Arc::clone(&tx);
            let action = move |info: &libc::siginfo_t| {
                if forwarded && CHILD_GONE.load(Ordering::SeqCst) {
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    return;
                }
                // si_code <= 0 is SI_USER, SI_QUEUE, SI_TKILL…: a process.
                let message = [signal as u8, u8::from(info.si_code <= 0)];
                // A full socket drops the datagram: the loop also polls on a
                // timer, and a flood of one signal needs passing on once.
                let _ = tx.send(&message);
            };
            // SAFETY: the action is async-signal-safe: an atomic load, one
            // send(2) on a non-blocking socket, and signal-hook's
            // emulate_default_handler, which is made to be called from a
            // handler (sigaction, sigprocmask, raise). It neither allocates
            // nor locks.
            unsafe { signal_hook_registry::register_sigaction(signal, action) }
                .with_context(|| format!("cannot handle signal {signal}"))?;
        }
        Ok(Signals { rx })
    }

    /// The end to poll for caught signals.
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        self.rx.as_fd()
    }

    /// The signals caught since the last call, in order.
    pub(super) fn drain(&self) -> Vec<Caught> {
        let mut caught = Vec::new();
        let mut buf = [0u8; 2];
        loop {
            match self.rx.recv(&mut buf) {
                Ok(2) => caught.push(Caught {
                    signal: i32::from(buf[0]),
                    from_process: buf[1] != 0,
                }),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return caught,
            }
        }
    }

    /// From now on the forwarded signals end cudnnlog: the child is gone.
    pub(super) fn child_gone(&self) {
        CHILD_GONE.store(true, Ordering::SeqCst);
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        self.child_gone();
    }
}
