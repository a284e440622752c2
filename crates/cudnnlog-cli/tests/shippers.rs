//! `scan --follow DIR`: the NDJSON contract for log shippers. One
//! `{"type":"verdict",…}` line per job when the job ends (its files quiet
//! for `--idle`), over a directory where logs appear, grow and rotate.

mod common;

use common::{command, root, wait_at_most, Scratch};
use serde_json::Value;
use std::io::{BufRead, Write};
use std::time::Duration;

/// The keys a verdict line may have: the contract of docs/operators.md.
const KEYS: &[&str] = &[
    "type",
    "path",
    "sources",
    "outcome",
    "primary",
    "title",
    "message",
    "first",
    "culprit",
    "cause",
    "remediation",
    "fingerprint",
    "findings",
    "error",
    "action",
    "retryable_because",
];

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(root().join(name)).unwrap()
}

fn append(path: &std::path::Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn a_rotating_log_directory_gives_one_verdict_per_job_as_it_ends() {
    let s = Scratch::new("shippers");
    let dir = s.0.join("logs");
    std::fs::create_dir_all(&dir).unwrap();
    // A job that ended before the watch: no verdict (a scan reports it).
    std::fs::write(
        dir.join("old.log"),
        fixture("fixtures/real/h200-torch-device-assert.log"),
    )
    .unwrap();
    let mut child = command(&[
        "scan",
        "--follow",
        dir.to_str().unwrap(),
        "--idle",
        "2",
        "--follow-for",
        "12",
    ])
    .spawn()
    .unwrap();
    // Started once it says so on standard error.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("cudnnlog: watching "), "{line}");
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
        text
    });

    let oom = fixture("fixtures/real/h200-torch-oom-amp-train.log");
    let (head, tail) = oom.split_at(oom.len() / 2);
    let train = dir.join("train.log");
    // A job appears and grows; its log is rotated (`.1`) and goes on in a
    // new file: one job, one verdict once all of it is quiet.
    append(&train, head);
    std::thread::sleep(Duration::from_millis(400));
    append(&train, tail);
    std::thread::sleep(Duration::from_millis(300));
    std::fs::rename(&train, dir.join("train.log.1")).unwrap();
    append(&train, b"restarting from checkpoint\n");
    // Another job, written at once.
    let healthy = fixture("fixtures/real/h200-torch-healthy-train.log");
    append(&dir.join("eval.log"), &healthy);
    std::thread::sleep(Duration::from_millis(3500));
    // The eval job goes on after its verdict and fails: a second verdict.
    append(
        &dir.join("eval.log"),
        &fixture("fixtures/real/h200-torch-device-assert.log"),
    );
    let out = wait_at_most(child, Duration::from_secs(30));
    let stderr = rest.join().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let got: Vec<(String, Vec<String>, String)> = lines
        .iter()
        .map(|v| {
            assert_eq!(v["type"], "verdict", "{v}");
            for key in v.as_object().unwrap().keys() {
                assert!(KEYS.contains(&key.as_str()), "{key} is not in the contract");
            }
            let name = |p: &Value| {
                let p = std::path::PathBuf::from(p.as_str().unwrap());
                p.file_name().unwrap().to_str().unwrap().to_string()
            };
            let sources = v["sources"].as_array().unwrap().iter().map(name).collect();
            (
                name(&v["path"]),
                sources,
                v["outcome"].as_str().unwrap().into(),
            )
        })
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            ("eval.log".into(), vec!["eval.log".into()], "clean".into()),
            ("eval.log".into(), vec!["eval.log".into()], "failed".into()),
            (
                "train.log".into(),
                vec!["train.log".into(), "train.log.1".into()],
                "failed".into()
            ),
        ],
        "{text}\n{stderr}"
    );
    // The clean verdict came before the failed one: in the order jobs end.
    let eval: Vec<&str> = got
        .iter()
        .filter(|g| g.0 == "eval.log")
        .map(|g| g.2.as_str())
        .collect();
    assert_eq!(eval, ["clean", "failed"]);
    let train = lines.iter().find(|v| v["primary"] == "cuda.oom").unwrap();
    assert_eq!(train["fingerprint"].as_str().unwrap().len(), 16);
    assert_eq!(out.status.code(), Some(1), "a job failed: {stderr}");
}

#[test]
fn following_a_directory_writes_ndjson_only() {
    let s = Scratch::new("shippers-format");
    let out = common::cudnnlog(&["scan", "--follow", s.path(), "--format", "table"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--format ndjson"), "{err}");
    let out = common::cudnnlog(&["scan", "--follow", s.path(), "--idle", "0"], None);
    assert_eq!(out.status.code(), Some(2));
}
