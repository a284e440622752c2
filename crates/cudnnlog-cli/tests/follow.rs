//! `cudnnlog scan --follow`: a growing file or standard input, watched
//! `tail -f` style; each new finding reported once, soon after it is
//! written, in bounded memory.

use std::io::{BufRead, Write};
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
    let lines: Vec<&str> = text.lines().collect();
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
    let lines: Vec<&str> = text.lines().collect();
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
    assert_eq!(text.lines().count(), 1, "{text}");
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
