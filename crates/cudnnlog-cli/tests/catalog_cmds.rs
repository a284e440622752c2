//! `cudnnlog explain`, `patterns list`, `patterns check` and `--patterns`
//! over the real binary.

mod common;

use common::{cudnnlog, json};
use cudnnlog::Catalog;
use std::path::PathBuf;

/// A scratch directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("cudnnlog-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.0.join(file), text).unwrap();
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn every_class_and_cause_has_an_explanation_with_a_fix_and_an_example() {
    let catalog = Catalog::builtin().unwrap();
    let ids = catalog
        .classes()
        .iter()
        .map(|c| c.id.clone())
        .chain(catalog.causes().iter().map(|c| c.id.clone()));
    for id in ids {
        let out = cudnnlog(&["explain", &id], None);
        assert_eq!(out.status.code(), Some(0), "{id}");
        let text = stdout(&out);
        assert!(text.starts_with(&format!("{id} — ")), "{id}:\n{text}");
        assert!(text.contains("What to do"), "{id} has no fix:\n{text}");
        assert!(text.contains("Example ("), "{id} has no example:\n{text}");
    }
}

#[test]
fn explain_a_pattern_shows_its_rule_page() {
    let out = cudnnlog(&["explain", "cuda-oom-pytorch-allocator"], None);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for part in [
        "class cuda.oom",
        "What it matches:",
        "Why it happens:",
        "Anchors:",
        "Likely causes:",
        "Example 1:",
        "Not matched 1",
    ] {
        assert!(text.contains(part), "{part}:\n{text}");
    }
}

#[test]
fn explain_an_unknown_id_exits_2_and_suggests() {
    let out = cudnnlog(&["explain", "oom"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no class, cause or pattern has the id \"oom\"") && err.contains("cuda.oom"),
        "{err}"
    );
}

#[test]
fn patterns_list_shows_every_pattern() {
    let catalog = Catalog::builtin().unwrap();
    let out = cudnnlog(&["patterns", "list", "--format", "json"], None);
    assert_eq!(out.status.code(), Some(0));
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.len(), catalog.patterns().len());
    let table = stdout(&cudnnlog(&["patterns", "list"], None));
    for p in catalog.patterns() {
        assert!(table.contains(&p.id), "{} missing from the table", p.id);
    }
    let cudnn = cudnnlog(
        &["patterns", "list", "--class", "cudnn", "--format", "json"],
        None,
    );
    let only: Vec<serde_json::Value> = serde_json::from_slice(&cudnn.stdout).unwrap();
    assert!(!only.is_empty());
    assert!(only
        .iter()
        .all(|p| p["class"].as_str().unwrap().starts_with("cudnn.")));
}

#[test]
fn patterns_check_passes_on_the_builtin_catalog() {
    let out = cudnnlog(&["patterns", "check"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("all pass"));
}

const MY_PATTERN: &str = r#"id = "my-checkpoint-upload"
class = "python.exception"
severity = "error"
status = "stable"
since = "0.1.0"
summary = "The checkpoint upload to the object store failed."
anchors = ["CheckpointUploadError"]
regex = '''CheckpointUploadError: shard (?P<shard>\d+)(?: \(retry after (?P<retry_after>\d+ ?s)\))?'''
remediations = ["Upload shard {shard} again by hand: `ckpt upload --shard {shard}`. Throttled: wait for {retry_after}."]
[doc]
what = "Our uploader's exception."
why = "The store throttles us."
[[causes]]
id = "comm_failure"
prior = 0.5
[[examples]]
log = '''
ERROR ckpt: CheckpointUploadError: shard 17 after 5 retries
'''
[examples.facts]
shard = "17"
[[counterexamples]]
log = '''
INFO ckpt: no CheckpointUploadError so far
'''
"#;

#[test]
fn patterns_check_runs_a_user_directory() {
    let dir = TempDir::new("check-ok");
    dir.write("my-checkpoint-upload.toml", MY_PATTERN);
    let out = cudnnlog(&["patterns", "check", dir.path()], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("1 patterns, 1 examples, 1 counterexamples: all pass"));

    // A failing example and a matching counterexample: exit 1, each named.
    let broken = MY_PATTERN
        .replace("shard = \"17\"", "shard = \"18\"")
        .replace(
            "no CheckpointUploadError so far",
            "CheckpointUploadError: shard 3",
        );
    dir.write("my-checkpoint-upload.toml", &broken);
    let out = cudnnlog(&["patterns", "check", dir.path()], None);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("example 1: fact shard: expected \"18\"")
            && text.contains("counterexample 1: matches"),
        "{text}"
    );

    // A remediation naming a capture the regex does not have.
    dir.write(
        "my-checkpoint-upload.toml",
        &MY_PATTERN.replace("shard {shard} again", "shard {shrad} again"),
    );
    let out = cudnnlog(&["patterns", "check", dir.path()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("{shrad}") && err.contains("remediations"),
        "{err}"
    );

    // A malformed file: exit 2 naming the file and the field.
    dir.write(
        "my-checkpoint-upload.toml",
        &MY_PATTERN.replace("severity = \"error\"", "severity = \"fatal\""),
    );
    let out = cudnnlog(&["patterns", "check", dir.path()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("my-checkpoint-upload.toml") && err.contains("field `severity`"),
        "{err}"
    );
}

#[test]
fn a_user_pattern_adds_to_a_scan_and_replaces_a_builtin_of_the_same_id() {
    let dir = TempDir::new("scan-user");
    dir.write("my-checkpoint-upload.toml", MY_PATTERN);
    let log =
        b"2026-11-29 19:41:05,500 ERROR ckpt: CheckpointUploadError: shard 17 after 5 retries\n";
    let out = cudnnlog(
        &["scan", "--format", "json", "--patterns", dir.path(), "-"],
        Some(log),
    );
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].pattern, "my-checkpoint-upload");
    // The pattern's captures fill its remediation; the sentence naming a
    // capture the message did not give is dropped.
    assert_eq!(
        r.findings[0].remediations[0],
        "Upload shard 17 again by hand: `ckpt upload --shard 17`."
    );

    // Demote PyTorch's OOM to a warning by overriding the built-in pattern.
    let catalog = Catalog::builtin().unwrap();
    let builtin = catalog.pattern("cuda-oom-pytorch-allocator").unwrap();
    let text = std::fs::read_to_string(common::root().join(&builtin.file)).unwrap();
    dir.write(
        "cuda-oom-pytorch-allocator.toml",
        &text.replacen("severity = \"error\"", "severity = \"warning\"", 1),
    );
    // Logged and survived (a retry with a smaller batch): a warning, and the
    // run's primary finding.
    let logged = b"2026-11-29 19:41:05,500 WARNING train: retrying with batch 64 after torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n";
    let out = cudnnlog(
        &["scan", "--format", "json", "--patterns", dir.path(), "-"],
        Some(logged),
    );
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out);
    let oom = r.findings.iter().find(|f| f.class == "cuda.oom").unwrap();
    assert_eq!(oom.severity, cudnnlog::catalog::Severity::Warning);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(r.outcome, cudnnlog::report::Outcome::Degraded);

    // Raised as the uncaught exception, the same text ended the run: an
    // error whatever the pattern says.
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "--patterns",
            dir.path(),
            "fixtures/real/h200-torch-oom-amp-train.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    let oom = r.findings.iter().find(|f| f.class == "cuda.oom").unwrap();
    assert_eq!(oom.severity, cudnnlog::catalog::Severity::Error);
}

#[test]
fn explain_a_version_cause_shows_the_compatibility_data() {
    for (id, header) in [
        (
            "driver_too_old",
            "CUDA releases and the oldest Linux driver",
        ),
        (
            "version_mismatch",
            "PyTorch wheels and the cuDNN they bundle",
        ),
        (
            "arch_unsupported",
            "GPU architectures and the first CUDA and cuDNN",
        ),
    ] {
        let text = stdout(&cudnnlog(&["explain", id], None));
        assert!(
            text.contains(header) && text.contains("patterns/compat.toml"),
            "{id}:\n{text}"
        );
    }
}

#[test]
fn an_oversized_anchorless_or_huge_regex_user_pattern_is_refused() {
    let dir = TempDir::new("untrusted");
    let cases = [
        (
            format!("{MY_PATTERN}\n# {}\n", "x".repeat(2 << 20)),
            "at most 1048576",
        ),
        (
            MY_PATTERN.replace(r#"anchors = ["CheckpointUploadError"]"#, "anchors = []"),
            "field `anchors`",
        ),
        (
            MY_PATTERN.replace(
                r"CheckpointUploadError: shard (?P<shard>\d+)",
                r"(?:CheckpointUploadError\w{1000}){1000}(?P<shard>\d+)",
            ),
            "field `regex`",
        ),
    ];
    for (text, needle) in cases {
        dir.write("my-checkpoint-upload.toml", &text);
        let out = cudnnlog(&["patterns", "check", dir.path()], None);
        assert_eq!(out.status.code(), Some(2), "{needle}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("my-checkpoint-upload.toml") && err.contains(needle),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `patterns suggest` on a line holding `'''`, `"""`, backslashes and
/// control characters writes a draft whose strings are TOML-escaped: it
/// loads, keeps the line as it was, and passes `patterns check`.
#[test]
fn a_suggested_draft_of_a_line_with_quotes_backslashes_and_controls_checks() {
    let dir = TempDir::new("suggest-quotes");
    let message = "loader: cannot parse it'''s a\"\"\"b near C:\\data\\x and \\\\ then \u{1}ctl\u{7f} done'''";
    dir.write(
        "weird.log",
        &format!("2026-11-29 19:41:06,500 ERROR {message}\n"),
    );
    let drafts = format!("{}/drafts", dir.path());
    let log = format!("{}/weird.log", dir.path());
    let out = cudnnlog(&["patterns", "suggest", "--out", &drafts, &log], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let files: Vec<PathBuf> = std::fs::read_dir(&drafts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let draft: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let regex = draft["regex"].as_str().unwrap();
    assert!(
        regex.contains("it'''s") && regex.contains("a\"\"\"b") && regex.contains("\u{1}ctl\u{7f}"),
        "{regex}"
    );
    assert_eq!(
        draft["examples"][0]["log"].as_str(),
        Some(format!("{message}\n").as_str())
    );
    let check = cudnnlog(&["patterns", "check", &drafts], None);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}\n{text}",
        stdout(&check),
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(
        stdout(&check).contains("1 patterns, 1 examples"),
        "{}",
        stdout(&check)
    );
}
