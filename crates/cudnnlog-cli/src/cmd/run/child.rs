//! Starting the child of `cudnnlog run` on a pty or on pipes, passing
//! signals on to it, and making sure it never outlives us unreaped.

use super::signals::Caught;
use rustix::process::{kill_process, kill_process_group, Pid, Signal};
use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
use rustix::termios::{tcgetattr, tcgetwinsize, tcsetattr, tcsetwinsize, OptionalActions};
use std::io::IsTerminal;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};

/// Where a stream of the child's output goes on our side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dest {
    Stdout,
    Stderr,
}

/// One stream of the child's output: a pipe, or the pty's master side.
pub(super) struct Output {
    pub fd: OwnedFd,
    pub dest: Dest,
}

/// The running child.
pub(super) struct Job {
    child: Child,
    pid: Pid,
    /// The child leads its own process group (its own session on a pty):
    /// signals go to the whole group, its own children too.
    own_group: bool,
    /// On a pty `outputs` is the master alone.
    pty: bool,
    pub outputs: Vec<Output>,
    reaped: bool,
}

/// Starts `program`. On a pty when our standard output is a terminal, so
/// the child's output is line-buffered and its progress bars work; else on
/// pipes, with `PYTHONUNBUFFERED=1` so a Python job's output is not held
/// back in its buffers. Standard input is ours in both cases.
///
/// An error is the one of starting the program (not found, not
/// executable), for the caller to report as a shell would.
pub(super) fn spawn(program: &str, args: &[String]) -> std::io::Result<Job> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::inherit());
    // No pty to be had (no /dev/ptmx, say): pipes do.
    let pty = if std::io::stdout().is_terminal() {
        open_pty().ok()
    } else {
        None
    };
    match pty {
        Some((master, slave)) => {
            cmd.stdout(Stdio::from(slave.try_clone()?))
                .stderr(Stdio::from(slave.try_clone()?));
            let slave_fd = slave.as_raw_fd();
            // SAFETY: the closure runs in the forked child before exec and
            // makes only raw system calls (rustix's Linux backend), which is
            // async-signal-safe; `slave_fd` stays open in the child until
            // exec (close-on-exec), as `slave` is alive here during spawn.
            unsafe {
                cmd.pre_exec(move || {
                    // A session of its own, the pty as its terminal: Ctrl-C
                    // on our terminal then reaches only us, and we pass it on.
                    rustix::process::setsid()?;
                    rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(slave_fd))?;
                    Ok(())
                });
            }
            let child = cmd.spawn()?;
            // Our copies of the slave closed, the master reads EOF (EIO)
            // once the child and its children have closed theirs.
            drop(cmd);
            drop(slave);
            let master = Output {
                fd: master,
                dest: Dest::Stdout,
            };
            Job::new(child, true, true, vec![master])
        }
        None => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
            if std::env::var_os("PYTHONUNBUFFERED").is_none() {
                cmd.env("PYTHONUNBUFFERED", "1");
            }
            // A child reading our terminal must stay in its foreground
            // process group (else SIGTTIN stops it), so it shares ours;
            // else it gets a group of its own, which signals reach whole.
            let own_group = !std::io::stdin().is_terminal();
            if own_group {
                cmd.process_group(0);
            }
            let mut child = cmd.spawn()?;
            let out = child.stdout.take().map(|fd| Output {
                fd: fd.into(),
                dest: Dest::Stdout,
            });
            let err = child.stderr.take().map(|fd| Output {
                fd: fd.into(),
                dest: Dest::Stderr,
            });
            Job::new(
                child,
                own_group,
                false,
                out.into_iter().chain(err).collect(),
            )
        }
    }
}

impl Job {
    fn new(
        mut child: Child,
        own_group: bool,
        pty: bool,
        outputs: Vec<Output>,
    ) -> std::io::Result<Job> {
        // A spawned child's pid is a positive i32; were it not, the child
        // could not be signalled, so it is not let run.
        let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("the child's pid is out of range"));
        };
        Ok(Job {
            child,
            pid,
            own_group,
            pty,
            outputs,
            reaped: false,
        })
    }

    /// Passes a signal on to the child, as [`target`] says.
    pub(super) fn forward(&self, caught: Caught) {
        let Some(signal) = Signal::from_named_raw(caught.signal) else {
            return;
        };
        // The child is not reaped before `try_wait` says so: its pid cannot
        // have been reused. A failure means it is gone already.
        let _ = match target(self.own_group, caught.from_process) {
            Target::Group => kill_process_group(self.pid, signal),
            Target::Child => kill_process(self.pid, signal),
            Target::Nobody => Ok(()),
        };
    }

    /// Gives the pty the size of our terminal; the kernel then tells the
    /// child (SIGWINCH).
    pub(super) fn resize(&self) {
        if !self.pty {
            return;
        }
        if let (Ok(size), Some(master)) = (tcgetwinsize(std::io::stdout()), self.outputs.first()) {
            let _ = tcsetwinsize(&master.fd, size);
        }
    }

    /// The child's exit status, once it has exited.
    pub(super) fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        self.reaped |= status.is_some();
        Ok(status)
    }
}

impl Drop for Job {
    /// On an error or a panic of ours the child must not run on unwatched:
    /// kill it (its group) and reap it.
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let _ = if self.own_group {
            kill_process_group(self.pid, Signal::KILL)
        } else {
            kill_process(self.pid, Signal::KILL)
        };
        let _ = self.child.wait();
    }
}

/// Whom a caught signal is passed on to.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// The child's process group: the child and the children it started.
    Group,
    /// The child alone: its group is ours, which would signal us too.
    Child,
    /// Nobody: the kernel sent it to the terminal's foreground process
    /// group (Ctrl-C, a hangup), which the child, sharing ours, is in: it
    /// has it already, and a second SIGINT would cut its cleanup short.
    Nobody,
}

/// The forwarding rule, for a child with a process group of its own (a pty,
/// or pipes when our standard input is not a terminal) or sharing ours.
fn target(own_group: bool, from_process: bool) -> Target {
    match (own_group, from_process) {
        (true, _) => Target::Group,
        (false, true) => Target::Child,
        (false, false) => Target::Nobody,
    }
}

/// The status to exit with: the child's code, or 128+N for signal N.
pub(super) fn exit_code(status: ExitStatus) -> u8 {
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    u8::try_from(code.clamp(0, 255)).unwrap_or(u8::MAX)
}

/// A new pty (master, slave), sized as our terminal. The slave does not
/// turn "\n" into "\r\n" (our terminal does that on display), so the log
/// copy reads as a pipe's would.
fn open_pty() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    rustix::io::fcntl_setfd(&master, rustix::io::FdFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let mut modes = tcgetattr(&slave)?;
    modes
        .output_modes
        .remove(rustix::termios::OutputModes::ONLCR);
    tcsetattr(&slave, OptionalActions::Now, &modes)?;
    if let Ok(size) = tcgetwinsize(std::io::stdout()) {
        let _ = tcsetwinsize(&master, size);
    }
    Ok((master, slave))
}

#[cfg(test)]
mod tests {
    use super::{target, Target};

    #[test]
    fn signals_are_not_passed_twice_to_a_child_in_our_group() {
        assert_eq!(target(true, false), Target::Group);
        assert_eq!(target(true, true), Target::Group);
        assert_eq!(target(false, true), Target::Child);
        assert_eq!(target(false, false), Target::Nobody);
    }

    #[test]
    fn exit_codes_are_the_shell_s() {
        use std::os::unix::process::ExitStatusExt;
        let status = std::process::ExitStatus::from_raw;
        assert_eq!(super::exit_code(status(3 << 8)), 3);
        assert_eq!(super::exit_code(status(9)), 137);
        assert_eq!(super::exit_code(status(15 | 0x80)), 143, "with a core dump");
    }
}
