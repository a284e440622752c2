//! The loop of `cudnnlog run`: pass the child's output through to our
//! terminal, append it to the log copy, forward the signals we catch, and
//! stop once the child has exited and its output has gone quiet.

use super::child::{Dest, Job};
use super::signals::Signals;
use anyhow::Context;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use signal_hook::consts::{SIGCHLD, SIGWINCH};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
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

/// The copy of the job's output that the diagnosis reads afterwards.
pub(super) struct LogCopy {
    file: LogFile,
    /// Bytes written so far; the diagnosis reads no more than these, which
    /// also keeps it off whatever a device such as /dev/full would return.
    written: u64,
    /// Copying stopped after a write failed (a full disk, say).
    broken: bool,
}

enum LogFile {
    /// No `--log`: a temporary file the system removes once we close it or
    /// die, however we die (O_TMPFILE where there is one; elsewhere O_EXCL
    /// under an unpredictable name, unlinked at once).
    Temp(File),
    /// `--log FILE`: kept.
    Kept(File, PathBuf),
}

impl LogCopy {
    /// The copy at `keep`, or a temporary file.
    pub(super) fn create(keep: Option<&Path>) -> anyhow::Result<LogCopy> {
        let file = match keep {
            Some(path) => {
                let file = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                LogFile::Kept(file, path.to_path_buf())
            }
            None => LogFile::Temp(
                tempfile::tempfile().context("cannot create a temporary file for the log copy")?,
            ),
        };
        Ok(LogCopy {
            file,
            written: 0,
            broken: false,
        })
    }

    fn file(&self) -> &File {
        match &self.file {
            LogFile::Temp(file) | LogFile::Kept(file, _) => file,
        }
    }

    /// The copy's name in messages.
    fn name(&self) -> String {
        match &self.file {
            LogFile::Temp(_) => "a temporary file".to_owned(),
            LogFile::Kept(_, path) => crate::render::sanitize_line(&path.display().to_string()),
        }
    }

    /// Appends `bytes`. The first failure stops the copying, with one
    /// warning: the job itself must go on whatever happens to its copy.
    fn append(&mut self, mut bytes: &[u8]) {
        while !self.broken && !bytes.is_empty() {
            match self.file().write(bytes) {
                Ok(0) => self.fail(&std::io::Error::from(std::io::ErrorKind::WriteZero)),
                Ok(n) => {
                    self.written += n as u64;
                    bytes = &bytes[n..];
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => self.fail(&e),
            }
        }
    }

    fn fail(&mut self, error: &std::io::Error) {
        self.broken = true;
        let _ = writeln!(
            std::io::stderr(),
            "cudnnlog: cannot write the log copy ({}: {error}): the diagnosis covers the output up to that point",
            self.name(),
        );
    }

    /// The copy from its start, as far as it was written.
    pub(super) fn reader(&self) -> anyhow::Result<impl Read + Send + '_> {
        let mut file = self.file();
        file.rewind()
            .with_context(|| format!("cannot read back {}", self.name()))?;
        Ok(file.take(self.written))
    }
}

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
