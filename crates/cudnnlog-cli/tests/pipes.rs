//! Output that nobody reads: a reader that leaves early (`| head -1`) is
//! no error in any format, and the exit status is the one the findings
//! give; `-o FIFO` with no reader is refused after a bounded wait, not a
//! hang.

mod common;

use common::{command, wait_at_most, Scratch};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const OOM: &str = "fixtures/real/h200-torch-oom-amp-train.log";
const HEALTHY: &str = "fixtures/real/h200-torch-healthy-train.log";
const FORMATS: [&str; 8] = [
    "table", "compact", "json", "ndjson", "markdown", "github", "junit", "html",
];

/// Runs `cmd`, reads the first line of its standard output, closes it (as
/// `| head -1` does) and waits at most 60 s: its exit status and standard
/// error.
fn first_line_then_close(mut cmd: Command) -> (Option<i32>, String) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    out.read_line(&mut first).unwrap();
    drop(out);
    let out = wait_at_most(child, Duration::from_secs(60));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A directory of `n` jobs, each a copy of `log`.
fn jobs(name: &str, log: &str, n: usize) -> Scratch {
    let s = Scratch::new(name);
    for i in 0..n {
        s.copy(log, &format!("job-{i:03}.log"));
    }
    s
}

/// `scan DIR --format F | head -1` exited 1 for JSON, Markdown and the
/// table but 2 for NDJSON: the jobs its early stop left unscanned were
/// counted as unreadable. A closed output is no error: in every format the
/// exit status is the findings' (every job failed: 1; all clean: 0), with
/// nothing on standard error; one file alike.
#[test]
fn every_format_exits_alike_when_its_reader_leaves() {
    let failed = jobs("pipes-failed", OOM, 40);
    let clean = jobs("pipes-clean", HEALTHY, 40);
    for format in FORMATS {
        for (input, want) in [
            (failed.path(), 1),
            (clean.path(), 0),
            (OOM, 1),
            (HEALTHY, 0),
        ] {
            let (code, stderr) =
                first_line_then_close(command(&["scan", "--format", format, input]));
            assert_eq!(code, Some(want), "{format} {input}: {stderr}");
            assert!(stderr.is_empty(), "{format} {input}: {stderr}");
        }
    }
}

/// `-o FIFO` that no process reads blocked in `open` for ever: it now
/// waits at most 10 s for a reader, then is refused in one line naming
/// it; with a reader it is written.
#[test]
fn output_to_a_fifo_nobody_reads_is_refused_after_a_bounded_wait() {
    let s = Scratch::new("pipes-fifo");
    let fifo = s.fifo("report.fifo");
    let fifo_arg = fifo.to_str().unwrap();
    let child = command(&["scan", OOM, "-o", fifo_arg]).spawn().unwrap();
    let out = wait_at_most(child, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(fifo_arg) && err.contains("no reader"), "{err}");
    assert!(std::fs::metadata(&fifo)
        .map(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()))
        .unwrap());
    // With a reader, the report goes through the FIFO.
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).unwrap()
    });
    let out = command(&["scan", OOM, "--format", "json", "-o", fifo_arg])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: cudnnlog::Report = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(report.primary.as_deref(), Some("cuda.oom"));
}

/// The HTML page of a FIFO source: the page reads a file back for the
/// lines around each finding, and re-opened a FIFO whose writer had gone,
/// blocking for ever. A source that is not a regular file now gets the
/// findings' own messages, as standard input does.
#[cfg(unix)]
#[test]
fn the_html_page_of_a_fifo_source_never_waits_on_it() {
    let dir = Scratch::new("html-fifo");
    let fifo = dir.fifo("rank0.log");
    let child = command(&["scan", "--format", "html", fifo.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log =
        std::fs::read(common::root().join("fixtures/real/h200-torch-oom-amp-train.log")).unwrap();
    std::fs::write(&fifo, log).unwrap();
    let out = wait_at_most(child, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("cuda.oom"), "{page}");
}
