//! The loop of `cudnnlog run`: pass the child's output through to our
//! terminal, append it to the log copy, forward the signals we catch, and
//! stop once the child has exited and its output has gone quiet.

use super::child::{Dest, Job};
use super::signals::Signals;
use crate::cmd::log_copy::LogCopy;
use anyhow::Context;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use signal_hook::consts::{SIGCHLD, SIGWINCH};
use std::io::Write;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

/// After the child exits, output still arriving is kept until none has come
/// for this long: what the child wrote just before exiting is read by then.
const QUIET: Duration = Duration::from_millis(200);
/// …and for no longer than this, in case a grandchild left running holds
/// the output open and keeps writing (`sleep 30 &` would hold it silent).
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
/// While the child runs, how often to look at it when no signal came (its
/// SIGCHLD normally wakes the loop at once).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// Runs the loop until the child has exited and its output is drained;
/// returns its exit status.
pub(super) fn pump(
    job: &mut Job,
    signals: &Signals,
    copy: &mut LogCopy,
) -> anyhow::Result<ExitStatus> {
    let mut open = vec![true; job.outputs.len()];
    let mut buf = vec![0u8; 64 << 10];
    let mut exited: Option<(ExitStatus, Instant)> = None;
    loop {
        let timeout = match exited {
            None => CHECK_EVERY,
            Some((status, at)) => {
                let left = DRAIN_LIMIT.saturating_sub(at.elapsed());
                if left.is_zero() || !open.contains(&true) {
                    return Ok(status);
                }
                left.min(QUIET)
            }
        };
        let (ready, signalled) = match wait(job, &open, signals, timeout) {
            Ok(r) => r,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e).context("waiting for the command's output"),
        };
        if signalled {
            for caught in signals.drain() {
                match caught.signal {
                    SIGCHLD => {}
                    SIGWINCH => job.resize(),
                    _ if exited.is_none() => job.forward(caught),
                    _ => {}
                }
            }
        }
        for &i in &ready {
            let output = &job.outputs[i];
            match rustix::io::read(&output.fd, &mut buf[..]) {
                Ok(0) => open[i] = false,
                Ok(n) => {
                    pass_through(output.dest, &buf[..n]);
                    copy.append(&buf[..n]);
                }
                Err(Errno::INTR | Errno::AGAIN) => {}
                // EIO is how a pty master reads its end; any other error,
                // too, ends this stream rather than the job.
                Err(_) => open[i] = false,
            }
        }
        match exited {
            None => {
                if let Some(status) = job.try_wait().context("waiting for the command")? {
                    signals.child_gone();
                    exited = Some((status, Instant::now()));
                }
            }
            // Quiet for QUIET since the child exited: what is left, if
            // anything, belongs to a grandchild holding the output open.
            Some((status, _)) if ready.is_empty() && !signalled => return Ok(status),
            Some(_) => {}
        }
    }
}

/// Polls the open outputs and the signal socket; returns the indices of
/// the outputs with something to read (or their end) and whether a signal
/// came.
fn wait(
    job: &Job,
    open: &[bool],
    signals: &Signals,
    timeout: Duration,
) -> rustix::io::Result<(Vec<usize>, bool)> {
    let mut index = Vec::with_capacity(open.len());
    let mut fds = vec![PollFd::from_borrowed_fd(signals.fd(), PollFlags::IN)];
    for (i, output) in job.outputs.iter().enumerate() {
        if open[i] {
            index.push(i);
            fds.push(PollFd::new(&output.fd, PollFlags::IN));
        }
    }
    // Our timeouts are at most a second: they always fit.
    let timeout = Timespec::try_from(timeout).ok();
    poll(&mut fds, timeout.as_ref())?;
    let signalled = !fds[0].revents().is_empty();
    let ready = fds[1..]
        .iter()
        .zip(index)
        .filter(|(fd, _)| !fd.revents().is_empty())
        .map(|(_, i)| i)
        .collect();
    Ok((ready, signalled))
}

/// Writes the child's output to ours, at once. Ours may be closed; the
/// job's output goes on regardless.
fn pass_through(dest: Dest, bytes: &[u8]) {
    let _ = match dest {
        Dest::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes).and_then(|()| out.flush())
        }
        Dest::Stderr => std::io::stderr().lock().write_all(bytes),
    };
}
