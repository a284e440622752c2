//! `cudnnlog scan --follow`: a growing file or standard input, watched
//! `tail -f` style; each new finding reported once, soon after it is
//! written, in bounded memory.

mod common;

use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.";

fn temp_log(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("cudnnlog-follow-{name}-{}.log", std::process::id()))
}

fn follow(path: &std::path::Path, secs: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cudnnlog"))
        .args([
            "scan",
            "--follow",
            "--follow-for",
            secs,
            path.to_str().unwrap(),
        ])
        .env("CUDNNLOG_CONFIG", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `--follow`: findings appended to a live log are reported as they come;
/// a truncated log is read again from its start.
#[test]
fn follow_reports_new_findings_and_survives_truncation() {
    let path = temp_log("truncation");
    std::fs::write(
        &path,
        "2026-11-29 19:40:51,487 INFO train: step 1 loss 0.5\n",
    )
    .unwrap();
    let child = follow(&path, "4");
    std::thread::sleep(std::time::Duration::from_millis(800));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{OOM}").unwrap();
    drop(f);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    std::fs::write(
        &path,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines = live(&text);
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].ends_with(
            "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free."
        ) && lines[0].contains(":2: cuda.oom (error)"),
        "{text}"
    );
    assert!(
        lines[1].contains(":1: cuda.illegal_address (error)"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
}

/// A writer that never pauses (a line every 100 ms) does not hold a finding
/// back: it is reported while the writer is still writing.
#[test]
fn a_busy_writer_does_not_delay_a_finding() {
    let path = temp_log("busy");
    std::fs::write(&path, "INFO start\n").unwrap();
    let mut child = follow(&path, "9");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let _ = tx.send((Instant::now(), line.unwrap()));
        }
    });
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let mut written = None;
    for i in 0..60 {
        if i == 10 {
            writeln!(f, "{OOM}").unwrap();
            written = Some(Instant::now());
        } else {
            writeln!(f, "INFO step {i} loss 0.5").unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let writing_ended = Instant::now();
    let (at, line) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the OOM is reported");
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(line.contains(":12: cuda.oom (error)"), "{line}");
    // The old rule waited for half a second of quiet: never, here.
    assert!(
        at < writing_ended,
        "reported {:?} after it was written, once the writer stopped",
        at - written.unwrap()
    );
}

/// `--follow -` follows standard input and ends when it ends.
#[test]
fn follow_reads_standard_input_until_it_ends() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cudnnlog"))
        .args(["scan", "--follow", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "INFO step 1\n{OOM}").unwrap();
    writeln!(stdin, "{OOM}").unwrap();
    // The last line has no end: read when the pipe closes.
    write!(
        stdin,
        "RuntimeError: CUDA error: an illegal memory access was encountered"
    )
    .unwrap();
    drop(stdin);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "--follow - did not end with its input"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines = live(&text);
    assert_eq!(lines.len(), 2, "the repeated OOM is announced once: {text}");
    assert!(lines[0].starts_with("-:2: cuda.oom (error)"), "{text}");
    assert!(
        lines[1].starts_with("-:4: cuda.illegal_address (error)"),
        "{text}"
    );
}

/// A last line with no end is reported once the writer is quiet, once,
/// and is not read again and again while nothing changes.
#[cfg(target_os = "linux")]
#[test]
fn a_last_line_without_end_is_reported_once_without_spinning() {
    let path = temp_log("noend");
    std::fs::write(&path, format!("INFO start\n{OOM}")).unwrap();
    let child = follow(&path, "3");
    std::thread::sleep(Duration::from_millis(2500));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    // utime and stime, in clock ticks (100 a second): the old loop spun at
    // 88 % of a core, over 200 ticks in this time.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(live(&text).len(), 1, "{text}");
    assert!(text.contains(":2: cuda.oom (error)"), "{text}");
    assert!(
        ticks < 100,
        "{ticks} ticks of CPU while nothing was written"
    );
}

/// `--follow` on a file overwritten in place by a shorter one whose tail
/// is progress-bar redraws (`\r`, no newline) after the old end: no panic,
/// it goes on and ends cleanly.
#[test]
fn follow_survives_a_file_rewritten_in_place() {
    let path = temp_log("rewrite");
    let line = "2026-11-29 19:41:04,724 INFO train: step 7 loss 2.3\n";
    std::fs::write(&path, line.repeat(300_000 / line.len())).unwrap();
    let child = follow(&path, "4");
    std::thread::sleep(Duration::from_millis(1500));
    // Shorter lines up to well past where the old context began, then
    // redraws with no newline, ending after the old end.
    let mut new = line.repeat(200_000 / line.len()).into_bytes();
    while new.len() < 320_000 {
        new.extend_from_slice(b"\r 45%|#####     | 450/1000 [00:12<00:14, 38.2it/s]");
    }
    std::fs::write(&path, &new).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    let _ = std::fs::remove_file(&path);
}

/// The live lines of a follow's output (`PATH:LINE: CLASS (SEVERITY) …`),
/// without the report that closes it.
fn live(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains(" (error) ") || l.contains(" (warning) "))
        .collect()
}

/// Waits for a child for at most 20 seconds: a follow that should end and
/// does not fails the test instead of hanging it.
fn bounded_wait(mut child: std::process::Child) -> std::process::Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("--follow did not end: {:?}", child.wait_with_output());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `job.sh | cudnnlog scan --follow -` ends as a scan of the same log
/// would: the live lines, then the report with its verdict, and the exit
/// status `--fail-on` makes of it (it was 0 whatever was found, with no
/// verdict). A followed file ends so too, when `--follow-for` is up.
#[test]
fn a_follow_ends_with_the_report_and_status_of_a_scan() {
    let log = format!("INFO step 1\n{OOM}\n");
    for (extra, code) in [
        (&[][..], 1),
        (&["--fail-on", "error"][..], 1),
        (&["--fail-on", "never"][..], 0),
    ] {
        let mut args = vec!["scan", "--follow", "-"];
        args.extend(extra);
        let out = common::cudnnlog(&args, Some(log.as_bytes()));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {text}");
        assert_eq!(live(&text).len(), 1, "{text}");
        assert!(
            text.contains("\nprimary: cuda.oom — GPU out of memory\n") && text.contains("\nfix: "),
            "{text}"
        );
    }
    let out = common::cudnnlog(
        &["scan", "--follow", "--format", "ndjson", "-"],
        Some(log.as_bytes()),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "the finding live, then the summary: {text}");
    assert!(
        lines[0].starts_with(r#"{"type":"finding","class":"cuda.oom""#),
        "{text}"
    );
    assert!(
        lines[1].starts_with(r#"{"type":"summary""#)
            && lines[1].contains(r#""outcome":"failed","primary":"cuda.oom""#),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(1));

    let path = temp_log("ends");
    std::fs::write(&path, &log).unwrap();
    let out = bounded_wait(follow(&path, "1"));
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("\nprimary: cuda.oom"), "{text}");
}

/// Ctrl-C (or a CI runner's SIGTERM) ends a follow as its end would: the
/// report, and the findings' exit status, not a death by the signal.
#[cfg(unix)]
#[test]
fn an_interrupted_follow_ends_with_the_report() {
    use std::os::unix::process::CommandExt;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let path = temp_log(&format!("interrupted-{signal}"));
        std::fs::write(&path, format!("INFO step 1\n{OOM}\n")).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudnnlog"));
        cmd.args(["scan", "--follow", path.to_str().unwrap()])
            .env("CUDNNLOG_CONFIG", "")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: signal(2) is async-signal-safe. The signal at its default
        // whatever the test runner was started with.
        unsafe {
            cmd.pre_exec(move || {
                libc::signal(signal, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(first.contains(":2: cuda.oom (error)"), "{first}");
        // SAFETY: kill(2) on our own child, not yet reaped.
        unsafe { libc::kill(child.id() as i32, signal) };
        let out = bounded_wait(child);
        let _ = std::fs::remove_file(&path);
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        assert_eq!(out.status.code(), Some(1), "signal {signal}: {rest}");
        assert!(rest.contains("\nprimary: cuda.oom"), "{rest}");
    }
}

/// A followed file replaced by a directory is named in one line, exit 2
/// (it was `Is a directory (os error 21)`, no path). A directory given to
/// `--follow` is watched for jobs instead (tests/shippers.rs).
#[test]
fn a_followed_file_replaced_by_a_directory_is_named() {
    let path = temp_log("becomes-a-dir");
    std::fs::write(&path, "INFO step 1\n").unwrap();
    let child = follow(&path, "15");
    std::thread::sleep(Duration::from_millis(800));
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let out = bounded_wait(child);
    let _ = std::fs::remove_dir(&path);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{}: is a directory", path.display())),
        "{err}"
    );
}

/// A file that is not there yet is waited for, as `tail -F` does, and said
/// so at once on standard error (a mistyped name waited in silence).
#[test]
fn a_missing_file_is_waited_for_and_said_so() {
    let path = temp_log("not-yet");
    let _ = std::fs::remove_file(&path);
    let mut child = follow(&path, "4");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    assert_eq!(
        first,
        format!("cudnnlog: waiting for {} to appear\n", path.display())
    );
    std::fs::write(&path, format!("{OOM}\n")).unwrap();
    let out = bounded_wait(child);
    let _ = std::fs::remove_file(&path);
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("appeared"), "{rest}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(live(&text).len(), 1, "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}
