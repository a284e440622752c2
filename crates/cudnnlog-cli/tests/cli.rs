//! The `cudnnlog` binary as a user runs it: exit codes, standard input,
//! errors and output formats (the fixtures' golden reports are in
//! `goldens.rs`).

mod common;

use common::{cudnnlog, json, root};

#[test]
fn oom_log_exits_1_and_names_the_class_and_place() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "table",
            "fixtures/real/h200-torch-oom-amp-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cuda.oom"), "{text}");
    assert!(
        text.contains("line 29, 2026-11-29 19:41:04.724, epoch 2 step 3"),
        "{text}"
    );
    assert!(text.starts_with("primary failure: cuda.oom"), "{text}");
    assert!(text.contains("\n  fix: ") && text.contains("likely causes:"));
    assert!(text.contains("what else to do:"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when piped");
}

#[test]
fn healthy_logs_exit_0_with_no_findings() {
    for name in [
        "real/h200-torch-healthy-train",
        "real/h200-torch-conv-sweep-clean",
        "real/h200-torch-big-conv-clean",
        "real/h200-collect-env-nvidia-smi",
        "gpu/h200-g23_jax_cudnn_hidden",
        "synthetic/healthy-chatter",
    ] {
        let out = cudnnlog(
            &["scan", "--format", "json", &format!("fixtures/{name}.log")],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{name}");
        let r = json(&out);
        assert!(r.findings.is_empty(), "{name}: {:#?}", r.findings);
        assert_eq!(r.primary, None);
    }
}

#[test]
fn stdin_is_read_with_a_dash() {
    let log =
        std::fs::read(root().join("fixtures/real/h200-lightning-oom-progress-bar.log")).unwrap();
    let out = cudnnlog(&["scan", "--format", "json", "-"], Some(&log));
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    assert_eq!(r.sources[0].path, "<stdin>");
    assert_eq!(r.sources[0].bytes, log.len() as u64);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(r.findings[0].first.line, 89);
}

#[test]
fn missing_file_exits_2_with_one_line() {
    let out = cudnnlog(&["scan", "no/such/file.log"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cudnnlog: no/such/file.log: "), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn other_files_are_still_scanned_after_an_error() {
    let out = cudnnlog(
        &[
            "scan",
            "--job",
            "--format",
            "json",
            "missing.log",
            "fixtures/real/h200-torch-oom-amp-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let r = json(&out);
    assert_eq!(r.sources.len(), 1);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
}

#[test]
fn directory_and_usage_errors_exit_2() {
    assert_eq!(cudnnlog(&["scan", "fixtures"], None).status.code(), Some(2));
    // No path and standard input not a terminal: standard input is read.
    let empty = cudnnlog(&["scan"], Some(b""));
    assert_eq!(empty.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&empty.stdout), "no findings\n");
    assert_eq!(
        cudnnlog(&["scan", "--format", "xml", "x"], None)
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn broken_user_catalog_exits_2_naming_file_and_field() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-bad-catalog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("my-pattern.toml"), "id = \"my-pattern\"\nclass = \"cuda.oom\"\nseverity = \"error\"\nstatus = \"stable\"\nsince = \"0.1.0\"\nsummary = \"s\"\nanchors = [\"my anchor\"]\nregex = '(unclosed'\n[doc]\nwhat = \"w\"\nwhy = \"y\"\n[[examples]]\nlog = \"my anchor\"\n").unwrap();
    let out = cudnnlog(
        &[
            "scan",
            "--patterns",
            dir.to_str().unwrap(),
            "fixtures/real/h200-torch-healthy-train.log",
        ],
        None,
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("my-pattern.toml") && err.contains("field `regex`"),
        "{err}"
    );
}

#[test]
fn ndjson_has_one_object_per_finding_then_a_summary() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "ndjson",
            "fixtures/real/h200-torch-oom-amp-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Streamed at the first match, then diagnosed at the end, then the summary.
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["type"], "finding");
    assert_eq!(lines[0]["partial"], true);
    assert_eq!(
        (lines[0]["class"].as_str(), lines[0]["line"].as_u64()),
        (Some("cuda.oom"), Some(29))
    );
    assert_eq!(lines[1]["type"], "finding");
    assert_eq!(lines[1].get("partial"), None);
    assert_eq!(lines[1]["causes"][0]["id"], "fragmentation");
    assert_eq!(lines[2]["type"], "summary");
    assert_eq!(lines[2]["primary"], "cuda.oom");
}

/// NDJSON reaches the consumer while the scan is still running: a finding
/// in a pipe that has not been closed yet is already on standard output.
#[test]
fn ndjson_streams_before_the_input_ends() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cudnnlog"))
        .args(["scan", "--format", "ndjson", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // More than a block (8 MiB) so that the scanner reaches the failure
    // while the input stays open.
    let filler = "2026-11-29 19:40:51,487 INFO train: step 1 loss 0.5\n".repeat(200_000);
    stdin.write_all(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n").unwrap();
    stdin.write_all(filler.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        (v["type"].as_str(), v["partial"].as_bool()),
        (Some("finding"), Some(true))
    );
    drop(stdin);
    child.wait().unwrap();
}

#[test]
fn escape_sequences_in_a_log_never_reach_the_terminal() {
    let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\x1b]0;pwned\x07\x1b[2J \x07bell\n";
    let out = cudnnlog(&["scan", "--color", "never", "-"], Some(log));
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.contains(&0x1b) && !out.stdout.contains(&0x07));
    let colored = cudnnlog(
        &["scan", "--format", "table", "--color", "always", "-"],
        Some(log),
    );
    let text = String::from_utf8(colored.stdout).unwrap();
    assert!(text.contains("\x1b[1;31mcuda.oom"), "colour on request");
    assert!(!text.contains("\x1b]0;") && !text.contains('\x07'));
}

/// The table says which findings are fallout, and shows the environment.
#[test]
fn the_table_marks_fallout_and_shows_the_environment() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "table",
            "fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log",
        ],
        None,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("fallout of nccl.timeout at line 14"),
        "{text}"
    );
    assert!(text.contains("primary failure: nccl.timeout"));
    assert!(text.contains("○ proc.segfault"), "{text}");
    assert!(
        text.contains("environment: ") && text.contains("NVIDIA H200") && text.contains("2.28.9")
    );
}

/// One line of the log is one finding to a reader: "Could not create cudnn
/// handle: CUDNN_STATUS_INTERNAL_ERROR" is `cudnn.not_initialized` carrying
/// `cudnn.internal_error`, shown once with its status in the table and the
/// compact lines (JSON keeps both findings, linked by `carried_by`); and
/// TensorFlow's "Failed to get convolution algorithm" after it is fallout.
#[test]
fn a_carried_status_is_shown_with_its_symptom_not_on_its_own() {
    let log = "fixtures/synthetic/tf-conv-algo-failed.log";
    let json = common::json(&cudnnlog(&["scan", "--format", "json", log], None));
    let status = json
        .findings
        .iter()
        .find(|f| f.class == "cudnn.internal_error")
        .expect("JSON keeps the status");
    assert!(status.carried_by.is_some());
    let compact = cudnnlog(&["scan", "--format", "compact", log], None);
    let compact = String::from_utf8(compact.stdout).unwrap();
    let line5: Vec<&str> = compact.lines().filter(|l| l.contains(".log:5:")).collect();
    assert_eq!(
        line5,
        [format!(
            "{log}:5: error cudnn.not_initialized · carries cudnn.internal_error: \
             Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"
        )],
        "{compact}"
    );
    assert!(compact.contains("error cudnn.conv_algo_failed (fallout of cudnn.not_initialized)"));
    let table = cudnnlog(&["scan", "--format", "table", log], None);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("2 error findings, "), "{table}");
    assert!(!table.contains("● cudnn.internal_error"), "{table}");
    assert!(!table.contains("✗ cudnn.internal_error"), "{table}");
    assert!(table.contains("carries cudnn.internal_error"), "{table}");
}

/// Several runs of one job (`--job`): the JSON report compares them.
#[test]
fn several_runs_are_compared() {
    let out = cudnnlog(
        &[
            "scan",
            "--job",
            "--format",
            "json",
            "fixtures/gpu/h200-g10_torch_invalid_ordinal.log",
            "fixtures/gpu/h200-g10_torch_no_visible_gpu.log",
            "fixtures/real/h200-torch-healthy-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    assert_eq!(r.sources.len(), 3);
    let f = r
        .findings
        .iter()
        .find(|f| f.class == "cuda.no_device")
        .unwrap();
    assert!(f.count >= 2);
}

/// `--fail-on` decides which findings make the exit status 1.
#[test]
fn fail_on_sets_the_exit_status() {
    let warnings = "fixtures/synthetic/ddp-plan-failed-burst.log";
    let errors = "fixtures/real/h200-torch-oom-amp-train.log";
    let code = |args: &[&str]| cudnnlog(args, None).status.code();
    assert_eq!(code(&["scan", warnings]), Some(0));
    assert_eq!(code(&["scan", "--fail-on", "warning", warnings]), Some(1));
    assert_eq!(code(&["scan", "--fail-on", "error", errors]), Some(1));
    assert_eq!(code(&["scan", "--fail-on", "never", errors]), Some(0));
    assert_eq!(
        code(&["scan", "--fail-on", "never", "missing.log"]),
        Some(2)
    );
}

/// gzip and zstd are recognised by their first bytes, from files and from
/// standard input; concatenated gzip members are one stream; a truncated
/// archive is one error line after whatever it held.
#[test]
fn compressed_logs_are_read() {
    for name in [
        "h200-torch-oom-amp-train.log.1.gz",
        "h200-torch-oom-amp-train.log.zst",
    ] {
        let out = cudnnlog(
            &[
                "scan",
                "--format",
                "json",
                &format!("fixtures/compressed/{name}"),
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let r = json(&out);
        assert_eq!(
            (r.findings[0].class.as_str(), r.findings[0].first.line),
            ("cuda.oom", 29),
            "{name}"
        );
        assert_eq!(r.sources[0].lines, 29);
    }
    let gz = std::fs::read(root().join("fixtures/compressed/h200-torch-oom-amp-train.log.1.gz"))
        .unwrap();
    let r = json(&cudnnlog(&["scan", "--format", "json", "-"], Some(&gz)));
    assert_eq!(r.findings[0].class, "cuda.oom");

    let two = json(&cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "fixtures/compressed/two-members.gz",
        ],
        None,
    ));
    assert_eq!(two.findings[0].class, "torch.device_mismatch");

    // Cut short: what it held is scanned and reported, the error is one
    // line, the exit status 2.
    let cut = cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "fixtures/compressed/truncated.gz",
        ],
        None,
    );
    assert_eq!(cut.status.code(), Some(2));
    let err = String::from_utf8(cut.stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("truncated.gz: corrupt or truncated gzip data"),
        "{err}"
    );
    assert!(
        err.contains("(after 29 lines, which were scanned)"),
        "{err}"
    );
    let r = json(&cut);
    assert_eq!(r.sources.len(), 1);
    assert!(r.sources[0].path.ends_with("truncated.gz"));
    assert_eq!(r.sources[0].lines, 29);
    assert_eq!(r.findings[0].class, "cuda.oom");
    // The table too.
    let table = cudnnlog(&["scan", "fixtures/compressed/truncated.gz"], None);
    assert_eq!(table.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&table.stderr).lines().count(), 1);
    assert!(String::from_utf8_lossy(&table.stdout).contains("cuda.oom"));
}

/// Directories are walked (sorted, filtered by `--glob`), compressed files
/// in them read, a symlink loop noted and skipped; with `--job` the files
/// are one report, scanned in parallel but numbered in order.
#[test]
fn directories_globs_and_loops() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-dirs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    let copy = |from: &str, to: &str| std::fs::copy(root().join(from), dir.join(to)).unwrap();
    copy(
        "fixtures/gpu/h200-g10_torch_invalid_ordinal.log",
        "a/run1.log",
    );
    copy(
        "fixtures/gpu/h200-g10_torch_no_visible_gpu.log",
        "b/run2.log",
    );
    copy(
        "fixtures/compressed/h200-torch-oom-amp-train.log.1.gz",
        "b/run3.log.1.gz",
    );
    std::fs::write(dir.join("b/notes.txt"), "ERROR: not a log we want\n").unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("a/loop")).unwrap();
    let out = cudnnlog(
        &[
            "scan",
            "--job",
            "--format",
            "json",
            "--glob",
            "*.log*",
            dir.to_str().unwrap(),
        ],
        None,
    );
    let r = json(&out);
    let names: Vec<String> = r
        .sources
        .iter()
        .map(|s| s.path.rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(names, ["run1.log", "run2.log", "run3.log.1.gz"]);
    let places: Vec<(&str, usize)> = r
        .findings
        .iter()
        .map(|f| (f.class.as_str(), f.first.source))
        .collect();
    assert_eq!(places, [("cuda.no_device", 0), ("cuda.oom", 2)]);
    assert!(r.unclassified.is_empty(), "notes.txt was filtered out");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("a symlink loop, skipped"), "{err}");
    assert_eq!(out.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--format markdown`: a ticket-ready report whose log text cannot break
/// the table or inject markup.
#[test]
fn markdown_report_for_a_ticket() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "markdown",
            "fixtures/real/h200-torch-oom-amp-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let md = String::from_utf8(out.stdout).unwrap();
    for part in [
        "## cudnnlog report",
        "Primary failure: **`cuda.oom`**",
        "| class | severity | count | first seen |",
        "### Diagnosis: `cuda.oom`",
        "Likely causes:",
        "What to do:",
        "### Environment",
    ] {
        assert!(md.contains(part), "{part}:\n{md}");
    }
    let hostile = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free. | <script> `x` \x1b]0;t\x07\n";
    let out = cudnnlog(&["scan", "--format", "markdown", "-"], Some(hostile));
    let md = String::from_utf8(out.stdout).unwrap();
    // Log text is shown verbatim in a fenced code block (tests/markdown.rs
    // renders it).
    assert!(
        md.contains("```text\ntorch.OutOfMemoryError: CUDA out of memory.")
            && md.contains("is free. | <script> `x`\n```\n"),
        "{md}"
    );
    assert!(!md.contains('\u{1b}') && !md.contains('\u{7}'));
}

/// The NDJSON output read by a real consumer: Python's json module.
#[test]
fn ndjson_is_read_by_python() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        return; // no Python here: the Rust-side tests still parse every line
    }
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "ndjson",
            "fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log",
        ],
        None,
    );
    let consumer = "import json,sys\nobjs=[json.loads(l) for l in sys.stdin]\nfinal=[o for o in objs if o['type']=='finding' and not o.get('partial')]\nsummary=objs[-1]\nassert summary['type']=='summary' and summary['primary']=='nccl.timeout', summary\nprint(len(final), summary['errors'], [o['class'] for o in final], final[1].get('caused_by'))\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", consumer])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &out.stdout).unwrap();
    let result = child.wait_with_output().unwrap();
    assert!(result.status.success());
    assert_eq!(
        String::from_utf8(result.stdout).unwrap().trim(),
        "2 2 ['nccl.timeout', 'proc.segfault'] 0"
    );
}

/// A cause ranked by the catalog's prior alone is never shown as the
/// answer's reason, in any format: the report says it is the commonest
/// cause of the message and that the log shows no evidence. A cause the
/// log's numbers support keeps its share and its evidence.
#[test]
fn a_prior_is_never_shown_as_a_reason() {
    // Nothing in this log singles out a cause of the failed cuDNN call.
    let bare = b"RuntimeError: CUDNN_STATUS_EXECUTION_FAILED\n";
    // Here the allocator's numbers do.
    let numbers = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    let run = |format: &str, log: &[u8]| {
        let out = cudnnlog(
            &["scan", "--format", format, "--color", "never", "-"],
            Some(log),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let why = |text: &str| {
        let at = text.find("  why: ").expect("a why line");
        let w = text[at..].split("  fix: ").next().unwrap();
        let w = w.split("  job: ").next().unwrap();
        w.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let table = run("table", bare);
    let w = why(&table);
    assert!(
        w.contains("no evidence in the log") && !w.contains('%'),
        "{w}"
    );
    assert!(
        words(&table).contains("likely causes (no evidence in the log"),
        "{table}"
    );
    let w = why(&run("table", numbers));
    assert!(w.contains("%): line 1: requested 2.00 GiB"), "{w}");

    let compact = run("compact", bare);
    assert!(
        compact.contains(": the most common cause of this message (no evidence in the log)"),
        "{compact}"
    );
    assert!(run("compact", numbers).contains("%): line 1: requested"));

    let github = run("github", bare);
    assert!(
        github.contains("Possible cause: ") && !github.contains("Likely cause"),
        "{github}"
    );
    assert!(run("github", numbers).contains("Likely cause: "));

    let markdown = run("markdown", bare);
    assert!(
        words(&markdown).contains("Likely causes (no evidence in the log"),
        "{markdown}"
    );

    // The verdict says which it is, for a pipeline to word it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bare.log"), bare).unwrap();
    std::fs::write(dir.path().join("oom.log"), numbers).unwrap();
    let out = cudnnlog(
        &["scan", "--format", "ndjson", dir.path().to_str().unwrap()],
        None,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut basis: Vec<(String, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["cause"].is_object())
        .map(|v| {
            let path = v["path"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string();
            (path, v["cause"]["basis"].as_str().unwrap().to_string())
        })
        .collect();
    basis.sort(); // verdicts stream as jobs end
    assert_eq!(
        basis,
        [
            ("bare.log".into(), "prior".into()),
            ("oom.log".into(), "evidence".into())
        ]
    );
}
