//! Error lines no pattern explains, grouped into templates with counts, in
//! every output format; `patterns suggest` turns one into a pattern.

mod common;

use common::{cudnnlog, json};

/// 30 checkpoint-upload failures (shard numbers and retry counts vary), 12
/// corrupt-record errors (offsets and files vary), an OOM logged at ERROR
/// level (a known pattern), and healthy lines that mention ERROR.
fn log() -> Vec<u8> {
    let mut log = String::new();
    for i in 0..30 {
        log.push_str(&format!(
            "2026-11-29 19:{:02}:{:02},{:03} INFO train: epoch 1 step {} loss 0.51\n",
            40 + i / 60,
            i % 60,
            i,
            i * 10
        ));
        log.push_str(&format!(
            "[rank{}]:2026-11-29 19:{:02}:{:02},500 ERROR ckpt: checkpoint upload of shard {} failed after {} retries: 503 Service Unavailable\n",
            i % 4,
            40 + i / 60,
            i % 60,
            i * 7 + 3,
            i % 5 + 1
        ));
        if i % 5 == 0 {
            log.push_str(&format!(
                "E1129 19:{:02}:{:02}.{:06} 4242 tfrecord_reader.cc:211] corrupt record at offset {} in /data/shards/train-{:05}.tfrecord\n",
                40 + i / 60,
                i % 60,
                i * 1000,
                i * 4096 + 17,
                i
            ));
            log.push_str(&format!(
                "F1129 19:{:02}:{:02}.{:06} 4242 tfrecord_reader.cc:212] corrupt record at offset {} in /data/shards/train-{:05}.tfrecord\n",
                40 + i / 60,
                i % 60,
                i * 1000 + 1,
                i * 8192 + 5,
                i + 1
            ));
        }
    }
    log.push_str("2026-11-29 19:41:00,000 ERROR train: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n");
    log.push_str("2026-11-29 19:41:01,000 INFO train: retrying, no ERROR this time\n");
    log.into_bytes()
}

#[test]
fn templates_group_varying_lines_and_skip_known_patterns() {
    let input = log();
    let out = cudnnlog(&["scan", "--format", "json", "-"], Some(&input));
    assert_eq!(out.status.code(), Some(1));
    let r = json(&out);
    let got: Vec<(u64, &str)> = r
        .unclassified
        .iter()
        .map(|t| (t.count, t.template.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (30, "ckpt: checkpoint upload of shard <*> failed after <*> retries: <*> Service Unavailable"),
            (12, "corrupt record at offset <*> in <*>"),
        ]
    );
    let upload = &r.unclassified[0];
    assert_eq!((upload.first.line, upload.last.line), (2, 72));
    assert!(upload.example.contains("shard 3 failed after 1 retries"));
    // The OOM logged at ERROR level is a finding, not a template.
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].class, "cuda.oom");
    // Stable across runs.
    let again = cudnnlog(&["scan", "--format", "json", "-"], Some(&input));
    assert_eq!(out.stdout, again.stdout);
}

#[test]
fn templates_in_the_table_and_in_ndjson() {
    let input = log();
    let table =
        String::from_utf8(cudnnlog(&["scan", "--format", "table", "-"], Some(&input)).stdout)
            .unwrap();
    assert!(
        table.contains("unclassified errors: 42 lines in 2 templates"),
        "{table}"
    );
    assert!(table.contains("30×") && table.contains("corrupt record at offset <*> in <*>"));
    let nd = cudnnlog(&["scan", "--format", "ndjson", "-"], Some(&input));
    let objects: Vec<serde_json::Value> = String::from_utf8(nd.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let templates: Vec<&serde_json::Value> = objects
        .iter()
        .filter(|o| o["type"] == "unclassified")
        .collect();
    assert_eq!(templates.len(), 2);
    assert_eq!(templates[1]["count"], 12);
    assert_eq!(objects.last().unwrap()["type"], "summary");
}

#[test]
fn a_suggested_pattern_checks_and_then_explains_the_lines() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-suggest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let logfile = dir.with_extension("log");
    std::fs::write(&logfile, log()).unwrap();
    let out = cudnnlog(
        &[
            "patterns",
            "suggest",
            "--top",
            "2",
            "--out",
            dir.to_str().unwrap(),
            logfile.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", out);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let check = cudnnlog(&["patterns", "check", dir.to_str().unwrap()], None);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let r = json(&cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "--patterns",
            dir.to_str().unwrap(),
            logfile.to_str().unwrap(),
        ],
        None,
    ));
    assert!(r.unclassified.is_empty(), "{:#?}", r.unclassified);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&logfile);
}
