//! `scan --format prometheus`: the text exposition format of a fleet's and
//! of one job's counts, bounded labels, every series present.

mod common;

use common::{cudnnlog, Scratch, FLEET_LOGS};
use serde_json::Value;
use std::collections::BTreeMap;

/// The samples of an exposition, `name{labels}` to value; every family
/// has its HELP and TYPE gauge lines before its samples.
fn samples(text: &str) -> BTreeMap<String, f64> {
    let mut typed = Vec::new();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(kind, "gauge", "{line}");
            typed.push(name.to_string());
            continue;
        }
        if line.starts_with("# HELP cudnnlog_") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let name = series.split('{').next().unwrap();
        assert!(name.starts_with("cudnnlog_"), "{line}");
        assert_eq!(typed.last().map(String::as_str), Some(name), "{line}");
        let value: f64 = value.parse().unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(out.insert(series.to_string(), value).is_none(), "{line}");
    }
    out
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The fleet's metrics say what its NDJSON summary says, every outcome
/// and every built-in class present, 0 where no job has it.
#[test]
fn a_fleets_metrics_match_its_summary() {
    let s = Scratch::new("prom-fleet");
    for (from, to) in FLEET_LOGS {
        s.copy(from, to);
    }
    // A job that cannot be read: a gzip cut short.
    s.write(
        "e/job-108.log.gz",
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xf3",
    );
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let prom = cudnnlog(&["scan", "--format", "prometheus", s.path()], None);
    assert_eq!(prom.status.code(), Some(2), "an unreadable job: exit 2");
    let got = samples(&stdout(&prom));
    let nd = cudnnlog(&["scan", "--format", "ndjson", s.path()], None);
    let text = stdout(&nd);
    let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(summary["type"], "fleet_summary");
    for o in ["failed", "degraded", "clean", "unreadable"] {
        let key = format!("cudnnlog_jobs{{outcome=\"{o}\"}}");
        assert_eq!(got[&key], summary[o].as_f64().unwrap(), "{key}");
    }
    assert_eq!(got["cudnnlog_jobs{outcome=\"unreadable\"}"], 1.0);
    assert_eq!(got["cudnnlog_jobs{outcome=\"failed\"}"], 6.0);
    assert_eq!(got["cudnnlog_jobs{outcome=\"degraded\"}"], 0.0);
    let catalog = cudnnlog::Catalog::builtin().unwrap();
    for class in catalog.classes() {
        let key = format!("cudnnlog_jobs_by_class{{class=\"{}\"}}", class.id);
        let want = summary["by_primary"][&class.id].as_f64().unwrap_or(0.0);
        assert_eq!(got.get(&key), Some(&want), "{key}");
    }
    assert_eq!(got["cudnnlog_jobs_by_class{class=\"cuda.oom\"}"], 3.0);
    assert_eq!(got["cudnnlog_jobs_by_class{class=\"unknown\"}"], 0.0);
    for a in ["retry", "stop", "investigate"] {
        let key = format!("cudnnlog_jobs_by_action{{action=\"{a}\"}}");
        let want = summary["by_action"][a].as_f64().unwrap_or(0.0);
        assert_eq!(got.get(&key), Some(&want), "{key}");
    }
    let acted: f64 = ["retry", "stop", "investigate"]
        .iter()
        .map(|a| got[&format!("cudnnlog_jobs_by_action{{action=\"{a}\"}}")])
        .sum();
    assert_eq!(acted, 6.0, "every failed job has an action");
    let stamp = got["cudnnlog_scan_timestamp_seconds"];
    assert!(stamp >= before.floor() && stamp < before + 120.0, "{stamp}");
}

/// A class of a user's catalog is `unknown`: the label's values are the
/// built-in catalog's, whatever `--patterns` adds.
#[test]
fn a_user_class_is_counted_as_unknown() {
    let s = Scratch::new("prom-user");
    s.write(
        "patterns/classes.toml",
        br#"[[class]]
id = "acme.disk_gone"
family = "job"
title = "Scratch disk vanished"
summary = "The node's scratch disk went away under the job."
"#,
    );
    s.write(
        "patterns/acme-disk-gone.toml",
        br#"id = "acme-disk-gone"
class = "acme.disk_gone"
severity = "error"
stability = "stable"
since = "0.1.0"
summary = "The scratch disk went away."
anchors = ["ACME scratch disk lost"]
regex = '''ACME scratch disk lost'''

[doc]
what = "The site's storage agent says a job's scratch disk is gone."
why = "The node lost its local NVMe."

[[examples]]
log = '''
ERROR ACME scratch disk lost on node7
'''
"#,
    );
    s.write(
        "logs/a.log",
        b"step 1\nERROR ACME scratch disk lost on node7\n",
    );
    s.write(
        "logs/b.log",
        b"step 1\nERROR ACME scratch disk lost on node9\n",
    );
    s.copy(FLEET_LOGS[0].0, "logs/c.log");
    let patterns = format!("{}/patterns", s.path());
    let logs = format!("{}/logs", s.path());
    let args = ["scan", "--patterns", &patterns, "--format", "prometheus"];
    let out = cudnnlog(&[&args[..], &[&logs]].concat(), None);
    let text = stdout(&out);
    assert!(!text.contains("acme"), "{text}");
    let got = samples(&text);
    assert_eq!(got["cudnnlog_jobs_by_class{class=\"unknown\"}"], 2.0);
    assert_eq!(got["cudnnlog_jobs_by_class{class=\"cuda.oom\"}"], 1.0);
    assert_eq!(got["cudnnlog_jobs{outcome=\"failed\"}"], 3.0);
    let classes = cudnnlog::Catalog::builtin().unwrap().classes().len();
    let by_class = got.keys().filter(|k| k.contains("_by_class{")).count();
    assert_eq!(by_class, classes + 1);
}

/// One file is one job: its outcome and class, counted once; a `.prom`
/// output file chooses the format.
#[test]
fn one_job_is_counted_once() {
    let s = Scratch::new("prom-one");
    let prom = format!("{}/cudnnlog.prom", s.path());
    let log = "fixtures/real/h200-torch-oom-amp-train.log";
    let out = cudnnlog(&["scan", "--fail-on", "never", "-o", &prom, log], None);
    assert_eq!(out.status.code(), Some(0));
    let got = samples(&std::fs::read_to_string(&prom).unwrap());
    assert_eq!(got["cudnnlog_jobs{outcome=\"failed\"}"], 1.0);
    assert_eq!(got["cudnnlog_jobs{outcome=\"clean\"}"], 0.0);
    assert_eq!(got["cudnnlog_jobs_by_class{class=\"cuda.oom\"}"], 1.0);
    let total: f64 = got
        .iter()
        .filter(|(k, _)| k.starts_with("cudnnlog_jobs_by_class{"))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(total, 1.0);
    let clean = cudnnlog(
        &[
            "scan",
            "--format",
            "prometheus",
            "fixtures/real/h200-torch-healthy-train.log",
        ],
        None,
    );
    let got = samples(&stdout(&clean));
    assert_eq!(got["cudnnlog_jobs{outcome=\"clean\"}"], 1.0);
    assert_eq!(got["cudnnlog_jobs{outcome=\"failed\"}"], 0.0);
    assert!(got
        .iter()
        .filter(|(k, _)| k.starts_with("cudnnlog_jobs_by_class{"))
        .all(|(_, v)| *v == 0.0));
}
