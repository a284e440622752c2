//! Many jobs at once: a verdict per job, files chosen like rg chooses them,
//! the ranks of one job joined into one report.

mod common;

use common::{cudnnlog, json, root, Scratch, FLEET_LOGS as LOGS};
use serde_json::Value;
use std::collections::BTreeMap;

fn ndjson(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The verdicts of an NDJSON fleet run, by job path, and its summary.
fn verdicts(out: &std::process::Output) -> (BTreeMap<String, Value>, Value) {
    let lines = ndjson(out);
    let (summary, verdicts) = lines.split_last().expect("a summary line");
    assert_eq!(summary["type"], "fleet_summary", "{summary}");
    assert_eq!(summary["schema"], "cudnnlog.fleet/1");
    let by_path = verdicts
        .iter()
        .map(|v| {
            assert_eq!(v["type"], "verdict", "{v}");
            (v["path"].as_str().unwrap().to_string(), v.clone())
        })
        .collect();
    (by_path, summary.clone())
}

/// What a user's log directory also holds, and must not be scanned.
fn not_logs(s: &Scratch) {
    let oom = std::fs::read(root().join(LOGS[0].0)).unwrap();
    // Each holds error text a log scan would report.
    s.write("README.md", &oom);
    s.write("a/config.json", &oom);
    s.write("a/train.py", &oom);
    s.write("b/model.pt", &oom);
    s.write("b/events.out.tfevents.1733000000.host.77.0", &oom);
    // A core dump: an ELF file whose memory holds the log's text.
    let mut core =
        b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x3e\x00".to_vec();
    core.extend_from_slice(&[0u8; 300]);
    core.extend_from_slice(&oom);
    s.write("c/core.dump", &core);
    s.write(".hidden/job-900.log", &oom);
    s.write("ignored/job-901.log", &oom);
    s.write(".gitignore", b"ignored/\n");
}

/// Each log file is a verdict whose primary is the single-file scan's;
/// checkpoints, documentation, JSON, binaries, hidden and ignored files
/// are not scanned; the summary groups the two copies of one failure.
#[test]
fn a_verdict_per_log_file_and_none_for_the_rest() {
    let s = Scratch::new("mixed");
    for (from, to) in LOGS {
        s.copy(from, to);
    }
    not_logs(&s);
    let out = cudnnlog(&["scan", "--format", "ndjson", s.path()], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (verdicts, summary) = verdicts(&out);
    let expected: Vec<String> = LOGS
        .iter()
        .map(|(_, to)| s.0.join(to).display().to_string())
        .collect();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(
        verdicts.keys().cloned().collect::<Vec<_>>(),
        expected_sorted
    );
    for ((from, _), path) in LOGS.iter().zip(&expected) {
        let alone = json(&cudnnlog(&["scan", "--format", "json", from], None));
        let v = &verdicts[path];
        assert_eq!(v["primary"].as_str(), alone.primary.as_deref(), "{path}");
        assert_eq!(v["outcome"], alone.outcome.as_str(), "{path}");
        if let Some(p) = cudnnlog::fleet::primary_finding(&alone) {
            assert_eq!(v["first"]["line"], p.first.line, "{path}");
            assert_eq!(v["cause"]["id"], p.causes[0].id.as_str(), "{path}");
            assert_eq!(v["remediation"], p.remediations[0].as_str(), "{path}");
        }
    }
    assert_eq!(summary["jobs"], 7);
    assert_eq!(summary["clean"], 1);
    assert_eq!(summary["failed"], 6);
    assert_eq!(summary["by_primary"]["cuda.oom"], 3);
    // What the walk left out is counted (hidden and ignored files are not:
    // the user's own choice, as in rg).
    assert_eq!(
        summary["skipped"],
        serde_json::json!({"binary": 1, "not_a_log": 5}),
        "{summary}"
    );
    let top = &summary["groups"][0];
    assert_eq!(top["class"], "cuda.oom");
    assert_eq!(top["count"], 3, "{summary}");
    let fp = top["fingerprint"].as_str().unwrap();
    assert_eq!(summary["by_fingerprint"][fp], 3);
    for job in ["a/job-101.log", "b/job-102.log", "d/job-106.log.1.gz"] {
        assert_eq!(
            verdicts[&s.0.join(job).display().to_string()]["fingerprint"],
            fp
        );
    }
}

/// The table: one row per job, then the counts and the largest groups.
/// JSON: a fleet document with one report per job.
#[test]
fn table_and_fleet_document() {
    let s = Scratch::new("table");
    for (from, to) in &LOGS[..4] {
        s.copy(from, to);
    }
    let out = cudnnlog(
        &["scan", "--format", "table", "--color", "never", s.path()],
        None,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("4 jobs: 3 failed, 1 clean"), "{text}");
    assert!(text.contains("failures by fingerprint:"), "{text}");
    assert!(text.contains("2 jobs  cuda.oom"), "{text}");
    // A row each; a failed job is also its group's example.
    for (row, times) in [
        ("job-101.log", 2),
        ("job-102.log", 2),
        ("job-103.log", 2),
        ("job-104.log", 1),
    ] {
        assert_eq!(text.matches(row).count(), times, "{row}:\n{text}");
    }

    let out = cudnnlog(&["scan", "--format", "json", s.path()], None);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "cudnnlog.fleet/1");
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    for job in jobs {
        let report: cudnnlog::Report = serde_json::from_value(job["report"].clone()).unwrap();
        assert_eq!(report.sources.len(), 1);
        assert_eq!(
            job["verdict"]["primary"].as_str(),
            report.primary.as_deref()
        );
    }
    assert_eq!(doc["summary"]["jobs"], 4);
}

/// A file that cannot be read is a verdict with an error, never a gap, and
/// the exit status says an input was unreadable.
#[test]
fn an_unreadable_job_is_a_verdict_with_an_error() {
    let s = Scratch::new("unreadable");
    let good = s.copy(LOGS[0].0, "job-1.log");
    let missing = s.0.join("job-2.log");
    let corrupt = s.copy("fixtures/compressed/truncated.gz", "job-3.log.gz");
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "ndjson",
            good.to_str().unwrap(),
            missing.to_str().unwrap(),
            corrupt.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let (verdicts, summary) = verdicts(&out);
    assert_eq!(verdicts.len(), 3);
    let gone = &verdicts[&missing.display().to_string()];
    assert!(gone.get("outcome").is_none(), "{gone}");
    assert!(
        gone["error"].as_str().unwrap().contains("job-2.log"),
        "{gone}"
    );
    let cut = &verdicts[&corrupt.display().to_string()];
    assert!(
        cut["error"].as_str().unwrap().contains("job-3.log.gz"),
        "{cut}"
    );
    // Cut short, but what it held was read: a verdict, and the error.
    assert_eq!(cut["primary"], "cuda.oom", "{cut}");
    assert_eq!(summary["unreadable"], 1);
    assert_eq!(verdicts[&good.display().to_string()]["primary"], "cuda.oom");
}

/// Splits a log whose lines carry `[rankN]:` tags into one file per rank
/// (tags removed, as torchrun's `--redirects` writes them) and the
/// launcher's own lines.
fn split_by_rank(log: &str) -> (String, BTreeMap<u32, String>) {
    let mut launcher = String::new();
    let mut ranks: BTreeMap<u32, String> = BTreeMap::new();
    for line in log.lines() {
        let tagged = line.strip_prefix("[rank").and_then(|rest| {
            let (n, text) = rest.split_once("]:")?;
            Some((
                n.parse::<u32>().ok()?,
                text.strip_prefix(' ').unwrap_or(text),
            ))
        });
        match tagged {
            Some((rank, text)) => {
                let file = ranks.entry(rank).or_default();
                file.push_str(text);
                file.push('\n');
            }
            None => {
                launcher.push_str(line);
                launcher.push('\n');
            }
        }
    }
    (launcher, ranks)
}

/// The ranks' own files of one job are one job: one report whose failure
/// is on the rank the file's name gives, as in the interleaved log.
#[test]
fn rank_files_are_one_job_with_their_ranks() {
    let log =
        std::fs::read_to_string(root().join("fixtures/gpu/h200-g17_torchrun_oom_cascade.log"))
            .unwrap();
    let (launcher, ranks) = split_by_rank(&log);
    assert_eq!(ranks.keys().copied().collect::<Vec<_>>(), [1]);
    let s = Scratch::new("ranks");
    s.write(
        "run-7/rank0.log",
        b"2026-11-30 15:17:22,456 INFO step 0 loss -481.952\n",
    );
    for (rank, text) in &ranks {
        s.write(&format!("run-7/rank{rank}.log"), text.as_bytes());
    }
    s.write("launcher/torchrun.log", launcher.as_bytes());
    let run = s.0.join("run-7");
    let r = json(&cudnnlog(
        &["scan", "--format", "json", run.to_str().unwrap()],
        None,
    ));
    assert_eq!(r.sources.len(), 2);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    let oom = cudnnlog::fleet::primary_finding(&r).unwrap();
    assert_eq!((oom.first.source, oom.first.rank), (1, Some(1)));
    assert_eq!(oom.ranks, [1]);

    // With the launcher's log beside it, two jobs.
    let out = cudnnlog(&["scan", "--format", "ndjson", s.path()], None);
    let (verdicts, _) = verdicts(&out);
    let names: Vec<&str> = verdicts
        .keys()
        .map(|k| k.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(names, ["torchrun.log", "rank*.log"]);
    let job = &verdicts[&run.join("rank*.log").display().to_string()];
    assert_eq!(job["first"]["rank"], 1);
    assert_eq!(job["sources"].as_array().unwrap().len(), 2);
}

/// torchrun's `--log-dir` layout: every attempt and rank is one job.
#[test]
fn torchrun_log_dir_is_one_job() {
    let s = Scratch::new("torchrun");
    let log =
        std::fs::read_to_string(root().join("fixtures/gpu/h200-g17_torchrun_oom_cascade.log"))
            .unwrap();
    let (_, ranks) = split_by_rank(&log);
    s.write("j/attempt_0/0/stdout.log", b"step 0 ok\n");
    s.write("j/attempt_0/0/stderr.log", b"");
    s.write("j/attempt_0/1/stderr.log", ranks[&1].as_bytes());
    s.copy(
        "fixtures/real/h200-torch-healthy-train.log",
        "other/job.log",
    );
    let out = cudnnlog(&["scan", "--format", "ndjson", s.path()], None);
    let (verdicts, summary) = verdicts(&out);
    assert_eq!(summary["jobs"], 2, "{verdicts:?}");
    let job = &verdicts[&s.0.join("j/attempt_*/*/std*.log").display().to_string()];
    assert_eq!(job["primary"], "cuda.oom");
    assert_eq!(job["first"]["rank"], 1);
    assert!(job["first"]["path"]
        .as_str()
        .unwrap()
        .ends_with("attempt_0/1/stderr.log"));
}

/// `--job` takes every input as one job: one report (today's merged scan).
#[test]
fn job_flag_merges_inputs() {
    let s = Scratch::new("merge");
    for (from, to) in &LOGS[..3] {
        s.copy(from, to);
    }
    let r = json(&cudnnlog(
        &["scan", "--job", "--format", "json", s.path()],
        None,
    ));
    assert_eq!(r.sources.len(), 3);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    let err = cudnnlog(&["scan", s.path(), "-"], Some(b"x\n"));
    assert_eq!(err.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&err.stderr).contains("--job"));
}

/// `--max-depth`, `--glob` with `!` exclusion, `--hidden`, `--no-ignore`,
/// and a file named explicitly is scanned whatever its name.
#[test]
fn walking_options() {
    let s = Scratch::new("walk");
    for (from, to) in LOGS {
        s.copy(from, to);
    }
    not_logs(&s);
    let count = |args: &[&str]| {
        let mut all = vec!["scan", "--format", "ndjson"];
        all.extend_from_slice(args);
        let out = cudnnlog(&all, None);
        verdicts(&out).0.len()
    };
    let shallow = cudnnlog(&["scan", "--max-depth", "1", s.path()], None);
    assert_eq!(shallow.status.code(), Some(2), "the top holds no log");
    assert_eq!(count(&["--max-depth", "2", s.path()]), 7);
    assert_eq!(count(&["--glob", "!*.txt", s.path()]), 6);
    assert_eq!(count(&["--glob", "job-10[12].log", s.path()]), 2);
    assert_eq!(count(&["--hidden", s.path()]), 8);
    assert_eq!(count(&["--no-ignore", s.path()]), 8);
    let readme = s.0.join("README.md");
    let named = json(&cudnnlog(
        &["scan", "--format", "json", readme.to_str().unwrap()],
        None,
    ));
    assert_eq!(named.primary.as_deref(), Some("cuda.oom"));
}

/// Hostile names in a fleet never reach the terminal raw.
#[test]
fn hostile_job_names_are_sanitised_in_the_table() {
    let s = Scratch::new("hostile");
    s.copy(LOGS[0].0, "job-\x1b]0;pwned\x07.log");
    s.copy(LOGS[2].0, "job-2.log");
    for format in ["table", "compact", "markdown"] {
        let out = cudnnlog(
            &["scan", "--format", format, "--color", "never", s.path()],
            None,
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{format}: {text}"
        );
        assert!(text.contains("2 jobs: 2 failed"), "{format}: {text}");
    }
}

/// The whole fixture tree, real logs mixed with golden reports, labels,
/// scenario scripts, CUDA sources and READMEs: a verdict per log job and
/// none for the rest, each primary equal to scanning that log alone.
#[test]
fn every_fixture_log_is_a_verdict_equal_to_its_own_scan() {
    let out = cudnnlog(&["scan", "--format", "ndjson", "fixtures"], None);
    let (verdicts, summary) = verdicts(&out);
    let mut logs = Vec::new();
    let mut others = 0;
    let mut stack = vec![root().join("fixtures")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if [".log", ".txt", ".gz", ".zst"]
                .iter()
                .any(|e| name.ends_with(e))
            {
                logs.push(p.strip_prefix(root()).unwrap().to_path_buf());
            } else {
                others += 1;
            }
        }
    }
    logs.sort();
    assert!(
        logs.len() > 150 && others > 150,
        "{} logs, {others} others",
        logs.len()
    );
    let jobs = cudnnlog::fleet::group(&logs);
    assert_eq!(verdicts.len(), jobs.len());
    assert_eq!(summary["jobs"], jobs.len());
    let read: usize = verdicts
        .values()
        .map(|v| v["sources"].as_array().unwrap().len())
        .sum();
    assert_eq!(read, logs.len(), "every log read once, nothing else");
    // Scan each one-file job alone, two at a time.
    let singles: Vec<&cudnnlog::fleet::Job> =
        jobs.iter().filter(|j| j.sources.len() == 1).collect();
    std::thread::scope(|scope| {
        for half in singles.chunks(singles.len().div_ceil(2)) {
            let verdicts = &verdicts;
            scope.spawn(move || {
                for job in half {
                    let path = job.sources[0].path.to_str().unwrap();
                    let alone = cudnnlog(&["scan", "--format", "json", path], None);
                    let v = &verdicts[&job.name];
                    if alone.status.code() == Some(2) {
                        assert!(v["error"].is_string(), "{path}: {v}");
                        continue;
                    }
                    let alone = json(&alone);
                    assert_eq!(v["primary"].as_str(), alone.primary.as_deref(), "{path}");
                    assert_eq!(v["outcome"], alone.outcome.as_str(), "{path}");
                }
            });
        }
    });
}
