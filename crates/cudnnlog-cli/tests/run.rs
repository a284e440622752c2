//! `cudnnlog run -- CMD` as a wrapper: output passed through and copied,
//! the shell's exit statuses, signals passed on, a pty on a terminal, a
//! full disk, and a grandchild holding the output open.
#![cfg(unix)]

mod common;

use common::{cudnnlog, root};
use rustix::process::{kill_process, Pid, Signal};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Long enough for a loaded machine, short enough to fail a hung test.
const PATIENCE: Duration = Duration::from_secs(30);

/// `cudnnlog ARGS`, stdin closed, with the signals we test at their default
/// dispositions whatever the test runner was started with (a runner in the
/// background of a script has SIGINT ignored, and `cudnnlog run` keeps an
/// ignored signal ignored, as a shell does).
fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudnnlog"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("PYTHONUNBUFFERED")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: signal(2) is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    cmd
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("cudnnlog-run-test-{}-{name}", std::process::id()))
}

/// Reads a stream on a thread, so a test can wait for a word in it.
struct Collector {
    rx: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Collector {
    fn new(mut from: impl Read + Send + 'static) -> Collector {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // An error is the end too: a pty master reads EIO.
            while let Ok(n @ 1..) = from.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
        });
        Collector {
            rx,
            seen: Vec::new(),
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Waits until `word` has been read; panics after PATIENCE.
    fn wait_for(&mut self, word: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.text().contains(word) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(chunk) => self.seen.extend(chunk),
                Err(_) => panic!("no {word:?} in {:?}", self.text()),
            }
        }
    }

    /// Everything, once the stream has ended.
    fn finish(mut self) -> String {
        while let Ok(chunk) = self.rx.recv_timeout(PATIENCE) {
            self.seen.extend(chunk);
        }
        self.text()
    }
}

/// The child's status; kills it and panics if it takes over PATIENCE.
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("cudnnlog run did not exit");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn pid(child: &Child) -> Pid {
    Pid::from_raw(child.id() as i32).unwrap()
}

/// `cudnnlog run -- CMD`: the command's output passes through, a copy is
/// kept, the diagnosis follows on standard error, and the exit status is
/// the command's (128+N for a signal).
#[test]
fn run_wraps_a_job() {
    let log = temp_path("wraps.log");
    let script = "echo step 1 loss 0.5; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.' >&2; exit 3";
    let out = cudnnlog(
        &[
            "run",
            "--log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "step 1 loss 0.5\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("torch.OutOfMemoryError"), "{err}");
    assert!(
        err.contains("exited with status 3") && err.contains("primary failure: cuda.oom"),
        "{err}"
    );
    let kept = std::fs::read_to_string(&log).unwrap();
    assert!(kept.contains("step 1 loss 0.5") && kept.contains("CUDA out of memory"));
    let _ = std::fs::remove_file(&log);

    let killed = cudnnlog(&["run", "--", "sh", "-c", "kill -9 $$"], None);
    assert_eq!(killed.status.code(), Some(137));
    let err = String::from_utf8_lossy(&killed.stderr);
    assert!(err.contains("killed by SIGKILL (status 137)"), "{err}");
}

/// A job that a signal ends prints no traceback: the signal is all there is,
/// and only `run` saw it. SIGKILL is the catalog's `host.oom_killed` (the
/// OOM killer, most often), SIGSEGV, SIGABRT and SIGBUS its
/// `proc.segfault`; the kept log ends with the line that says so, and a
/// later scan of it comes to the same diagnosis.
#[test]
fn a_job_killed_by_a_signal_is_diagnosed_by_its_signal() {
    for (signal, class, code) in [
        ("KILL", "host.oom_killed", 137),
        ("SEGV", "proc.segfault", 139),
        ("ABRT", "proc.segfault", 134),
        ("BUS", "proc.segfault", 135),
    ] {
        let log = temp_path(&format!("killed-{signal}.log"));
        let script = format!("echo step 1 loss 0.5; kill -{signal} $$");
        let log_arg = log.to_str().unwrap();
        let out = cudnnlog(&["run", "--log", log_arg, "--", "sh", "-c", &script], None);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "killed by SIG{signal} (status {code}); diagnosis:"
            )) && err.contains(&format!("primary failure: {class}"))
                && !err.contains("no failure found"),
            "SIG{signal}: {err}"
        );
        let kept = std::fs::read_to_string(&log).unwrap();
        assert!(
            kept.starts_with("step 1 loss 0.5\n")
                && kept.ends_with(&format!(
                    "cudnnlog: the command was killed by SIG{signal} (status {code})\n"
                )),
            "{kept:?}"
        );
        let rescan = cudnnlog(&["scan", "--format", "json", log_arg], None);
        let _ = std::fs::remove_file(&log);
        assert_eq!(common::json(&rescan).primary.as_deref(), Some(class));
    }
    // A signal that asks a job to stop is not a failure of its own.
    let out = cudnnlog(&["run", "--", "sh", "-c", "kill -TERM $$"], None);
    assert_eq!(out.status.code(), Some(143));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no failure found"), "{err}");
}

/// cudnnlog's own errors stay 2: no command, a log it cannot create.
#[test]
fn usage_errors_exit_2() {
    assert_eq!(cudnnlog(&["run"], None).status.code(), Some(2));
    let out = cudnnlog(
        &["run", "--log", "/nonexistent/dir/x.log", "--", "true"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot create /nonexistent/dir/x.log"));
}

/// As a shell: 127 for a command not found, 126 for a file that is not
/// executable, with one line saying so and no diagnosis.
#[test]
fn missing_and_non_executable_commands_exit_127_and_126() {
    let one_line = |out: &std::process::Output, says: &str| {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("cudnnlog: ") && err.contains(says), "{err}");
        assert!(out.stdout.is_empty());
    };
    let out = cudnnlog(&["run", "--", "/nonexistent/train.sh"], None);
    assert_eq!(out.status.code(), Some(127));
    one_line(&out, "/nonexistent/train.sh: No such file or directory");
    let out = cudnnlog(&["run", "--", "cudnnlog-test-no-such-command"], None);
    assert_eq!(out.status.code(), Some(127));
    one_line(&out, "cudnnlog-test-no-such-command: command not found");

    let script = temp_path("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    let out = cudnnlog(&["run", "--", script.to_str().unwrap()], None);
    let _ = std::fs::remove_file(&script);
    assert_eq!(out.status.code(), Some(126));
    one_line(&out, "Permission denied");
}

/// On pipes, a Python child is told not to hold its output back.
#[test]
fn a_piped_child_gets_pythonunbuffered() {
    let out = command(&["run", "--", "sh", "-c", "echo \"[$PYTHONUNBUFFERED]\""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[1]\n");
}

/// SIGTERM, SIGINT, SIGHUP and SIGUSR1 sent to cudnnlog reach the job; its output
/// after the signal is passed through and kept, and the diagnosis follows.
#[test]
fn signals_are_forwarded_and_the_last_output_kept() {
    for (signal, name, code) in [
        (Signal::TERM, "TERM", 3),
        (Signal::INT, "INT", 4),
        (Signal::HUP, "HUP", 5),
        (Signal::USR1, "USR1", 6),
    ] {
        let log = temp_path(&format!("signal-{name}.log"));
        let script = format!(
            "trap 'echo got-{name}; exit {code}' {name}; echo ready; while :; do sleep 0.1; done"
        );
        let mut child = command(&[
            "run",
            "--log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .spawn()
        .unwrap();
        let mut out = Collector::new(child.stdout.take().unwrap());
        let err = Collector::new(child.stderr.take().unwrap());
        out.wait_for("ready");
        kill_process(pid(&child), signal).unwrap();
        assert_eq!(wait(&mut child).code(), Some(code), "SIG{name}");
        // The shell may report its `sleep` killed ("Hangup", on stdout).
        let out = out.finish();
        assert!(
            out.starts_with("ready\n") && out.ends_with(&format!("got-{name}\n")),
            "{out:?}"
        );
        let err = err.finish();
        assert!(
            err.contains(&format!("exited with status {code}; diagnosis:")),
            "{err}"
        );
        let kept = std::fs::read_to_string(&log).unwrap();
        let _ = std::fs::remove_file(&log);
        // Both streams, as they came (the shell may report on stderr).
        let got = format!("got-{name}\n");
        assert!(
            kept.starts_with("ready\n") && kept.contains(&got),
            "{kept:?}"
        );
    }
}

/// Under `nohup` (SIGHUP ignored) a hangup reaches neither cudnnlog nor the
/// job, which inherits the ignored SIGHUP: the job runs on.
#[test]
fn an_ignored_hangup_stays_ignored() {
    let script = "trap 'echo got-TERM; exit 3' TERM; echo ready; while :; do sleep 0.1; done";
    let mut cmd = command(&["run", "--", "sh", "-c", script]);
    // SAFETY: signal(2) is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = Collector::new(child.stdout.take().unwrap());
    let _err = Collector::new(child.stderr.take().unwrap());
    out.wait_for("ready");
    // Had cudnnlog caught and passed it on, the job, at SIGHUP's default
    // after exec, would die of it (129).
    kill_process(pid(&child), Signal::HUP).unwrap();
    kill_process(pid(&child), Signal::TERM).unwrap();
    assert_eq!(wait(&mut child).code(), Some(3));
    assert_eq!(out.finish(), "ready\ngot-TERM\n");
}

/// The job's own children may keep its output open (`sleep 30 &`):
/// cudnnlog returns when the job exits all the same.
#[test]
fn returns_when_the_job_exits_though_a_grandchild_holds_its_output() {
    let start = Instant::now();
    let out = command(&["run", "--", "sh", "-c", "sleep 30 & echo $!"])
        .output()
        .unwrap();
    let took = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(sleep) = stdout.trim().parse().ok().and_then(Pid::from_raw) {
        let _ = kill_process(sleep, Signal::KILL);
    }
    assert_eq!(out.status.code(), Some(0));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("diagnosis:"));
}

/// A log copy that cannot be written (ENOSPC on /dev/full) does not stop
/// the job: its output passes through, one warning, its exit status.
#[test]
fn a_full_disk_for_the_copy_does_not_stop_the_job() {
    let script = "for i in 1 2 3; do echo line $i; echo warn $i >&2; done; exit 5";
    let out = command(&["run", "--log", "/dev/full", "--", "sh", "-c", script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "line 1\nline 2\nline 3\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("cudnnlog: cannot write the log copy (/dev/full: ")
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("the diagnosis covers the output up to that point"));
    assert!(err.contains("warn 3") && err.contains("exited with status 5; diagnosis:"));
}

/// Without `--log` the copy is a temporary file without a name anyone can
/// open or guess (not the old /tmp/cudnnlog-run-PID.log), gone afterwards.
#[test]
fn the_temporary_copy_has_no_predictable_name() {
    let script = "for f in /proc/$PPID/fd/*; do readlink \"$f\"; done; echo end";
    let child = command(&["run", "--", "sh", "-c", script]).spawn().unwrap();
    let predictable = std::env::temp_dir().join(format!("cudnnlog-run-{}.log", child.id()));
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!predictable.exists());
    let fds = String::from_utf8_lossy(&out.stdout);
    assert!(!fds.contains(predictable.to_str().unwrap()), "{fds}");
    if cfg!(target_os = "linux") {
        // The copy, open in cudnnlog, already unlinked.
        assert!(
            fds.lines().any(|l| l.ends_with(" (deleted)")),
            "no unlinked copy among cudnnlog's files:\n{fds}"
        );
    }
}

/// A new pty (master, slave) of 33 rows and 77 columns, or None where the
/// system has none to give.
fn pty() -> Option<(OwnedFd, OwnedFd)> {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let attempt = || -> std::io::Result<(OwnedFd, OwnedFd)> {
        let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let name = ptsname(&master, Vec::new())?;
        let slave = rustix::fs::open(
            name.as_c_str(),
            rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY,
            rustix::fs::Mode::empty(),
        )?;
        let size = rustix::termios::Winsize {
            ws_row: 33,
            ws_col: 77,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        rustix::termios::tcsetwinsize(&slave, size)?;
        Ok((master, slave))
    };
    match attempt() {
        Ok(pair) => Some(pair),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "skipped: no pty to be had here ({e})");
            None
        }
    }
}

/// Makes `cmd` a session leader whose terminal is its standard input, as a
/// login shell's job is: a ^C typed there is then SIGINT from the kernel.
fn on_terminal(cmd: &mut Command) {
    // SAFETY: setsid(2) and ioctl(2) are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::setsid()?;
            rustix::process::ioctl_tiocsctty(std::io::stdin())?;
            Ok(())
        });
    }
}

/// On a terminal the job gets a pty of the terminal's size (its output is
/// a tty, /dev/tty is it), and a ^C typed on the terminal reaches it.
#[test]
fn on_a_terminal_the_job_runs_on_a_pty_and_gets_ctrl_c() {
    let Some((master, slave)) = pty() else {
        return;
    };
    let log = temp_path("pty.log");
    let script = "test -t 1 && echo tty-out; test -t 2 && echo tty-err; stty size </dev/tty; \
                  trap 'echo got-INT; exit 4' INT; echo ready; while :; do sleep 0.1; done";
    let mut cmd = command(&[
        "run",
        "--log",
        log.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    cmd.stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap());
    on_terminal(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    drop(slave);
    let mut terminal = std::fs::File::from(master);
    let mut out = Collector::new(terminal.try_clone().unwrap());
    let err = Collector::new(child.stderr.take().unwrap());
    out.wait_for("ready");
    terminal.write_all(b"\x03").unwrap();
    assert_eq!(wait(&mut child).code(), Some(4));
    let out = out.finish();
    for line in ["tty-out\r\n", "tty-err\r\n", "33 77\r\n", "got-INT\r\n"] {
        assert!(out.contains(line), "no {line:?} in {out:?}");
    }
    assert!(err.finish().contains("exited with status 4; diagnosis:"));
    // The pty does not turn "\n" into "\r\n": the copy reads as a pipe's.
    let kept = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert_eq!(kept, "tty-out\ntty-err\n33 77\nready\ngot-INT\n");
}

/// Piped output but input from the terminal: the job shares cudnnlog's
/// process group (so it can read the terminal), and a ^C typed there reaches
/// it from the kernel directly (cudnnlog does not pass that one on: the
/// rule's unit test in run_cmd/child.rs); a `kill` sent to cudnnlog is.
#[test]
fn a_terminal_ctrl_c_reaches_a_job_sharing_our_group() {
    let Some((master, slave)) = pty() else {
        return;
    };
    let script = "trap 'n=$((n+1)); echo got-INT-$n' INT; trap 'echo got-TERM; exit 3' TERM; \
                  echo ready; while :; do sleep 0.1; done";
    let mut cmd = command(&["run", "--", "sh", "-c", script]);
    cmd.stdin(slave.try_clone().unwrap());
    on_terminal(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    drop(slave);
    let mut terminal = std::fs::File::from(master);
    let _echo = Collector::new(terminal.try_clone().unwrap());
    let mut out = Collector::new(child.stdout.take().unwrap());
    let _err = Collector::new(child.stderr.take().unwrap());
    out.wait_for("ready");
    terminal.write_all(b"\x03").unwrap();
    out.wait_for("got-INT-1");
    kill_process(pid(&child), Signal::TERM).unwrap();
    assert_eq!(wait(&mut child).code(), Some(3));
    assert_eq!(out.finish(), "ready\ngot-INT-1\ngot-TERM\n");
}
