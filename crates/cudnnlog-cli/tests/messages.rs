//! What reaches standard output, a report file and standard error: `-q`
//! silences standard output only (a report file is still written, errors
//! still said), an input that could not be read at all gives its error and
//! no report, and a binary file named on the command line is scanned with
//! a notice.

mod common;

use common::{cudnnlog, Scratch};

const OOM: &str = "fixtures/real/h200-torch-oom-amp-train.log";

/// `-q -o FILE`, the CI form ("quiet, but keep the report"): the report is
/// written whole (it was an empty file), for one job and for a fleet;
/// standard output stays empty.
#[test]
fn quiet_still_writes_the_report_file() {
    let dir = Scratch::new("quiet-output");
    let page = dir.0.join("report.html");
    let out = cudnnlog(&["scan", "-q", "-o", page.to_str().unwrap(), OOM], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("cuda.oom"),
        "{} bytes",
        html.len()
    );

    let jobs = Scratch::new("quiet-fleet");
    jobs.copy(OOM, "job-1.log");
    jobs.copy("fixtures/real/h200-torch-healthy-train.log", "job-2.log");
    let json = dir.0.join("fleet.json");
    let out = cudnnlog(
        &["scan", "-q", "-o", json.to_str().unwrap(), jobs.path()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(fleet["summary"]["jobs"], 2, "{fleet}");
}

/// `-q` keeps errors on standard error, as `grep -q` does: a file that
/// cannot be read is named with the reason (it was silent, exit 2), in one
/// job and in a fleet.
#[test]
fn quiet_still_says_why_a_file_was_unreadable() {
    let out = cudnnlog(&["scan", "-q", "no/such/file.log"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cudnnlog: no/such/file.log: No such file or directory"),
        "{err}"
    );

    let jobs = Scratch::new("quiet-fleet-missing");
    let present = jobs.copy(OOM, "job-1.log");
    let missing = jobs.0.join("job-2.log");
    let args = [
        "scan",
        "-q",
        present.to_str().unwrap(),
        missing.to_str().unwrap(),
    ];
    let out = cudnnlog(&args, None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}: No such file or directory", missing.display())),
        "{err}"
    );
}

/// When no input could be read at all, the error is the whole answer: no
/// "no findings" or "no failure found: 0 lines scanned" beside it, in any
/// format, and no report file. An input read in part still gets its report.
#[test]
fn nothing_read_gives_only_the_error() {
    let dir = Scratch::new("nothing-read");
    for format in ["compact", "table", "json", "ndjson", "markdown"] {
        let out = cudnnlog(&["scan", "--format", format, "no/such/file.log"], None);
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert!(
            out.stdout.is_empty(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
    let report = dir.0.join("r.json");
    let out = cudnnlog(
        &["scan", "-o", report.to_str().unwrap(), "no/such/file.log"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!report.exists(), "a report of nothing was written");

    // A truncated archive: what was read before the damage is reported.
    let gz =
        std::fs::read(common::root().join("fixtures/compressed/h200-torch-oom-amp-train.log.1.gz"))
            .unwrap();
    let cut = dir.write("cut.log.gz", &gz[..gz.len() * 3 / 4]);
    let out = cudnnlog(
        &["scan", "--format", "compact", cut.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stdout.is_empty());
}

/// A binary file named on the command line is scanned, since the user
/// asked (a log can hold binary bytes, and a directory walk skips it only
/// when not named), with a notice on standard error that says so; `-q`
/// leaves the notice out.
#[test]
fn a_named_binary_file_is_scanned_with_a_notice() {
    let dir = Scratch::new("named-binary");
    let mut core = b"\x7fELF\x02\x01\x01\x00".to_vec();
    core.extend(std::iter::repeat_n(0x01u8, 4096));
    core.extend_from_slice(&std::fs::read(common::root().join(OOM)).unwrap());
    let path = dir.write("core.log", &core);
    let out = cudnnlog(
        &["scan", "--format", "compact", path.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("primary: cuda.oom"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!(
            "cudnnlog: {}: binary content, scanned as text because it was named\n",
            path.display()
        )
    );
    let out = cudnnlog(&["scan", "-q", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stderr.is_empty(), "{out:?}");
}
