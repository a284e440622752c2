//! Fleet triage over every log of the repository: a job's verdict is the
//! verdict of scanning it alone, and the summary does not depend on the
//! order jobs finish in.

use cudnnlog::fleet::{group, Job};
use cudnnlog::fleet::{scan_job, triage, Summary, Verdict};
use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
use std::path::{Path, PathBuf};

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            logs(&p, out);
        } else if !name.ends_with(".json")
            && !name.ends_with(".md")
            && !name.ends_with(".toml")
            && !name.ends_with(".py")
        {
            out.push(p);
        }
    }
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut out = Vec::new();
    logs(&root, &mut out);
    assert!(out.len() > 150, "{} logs", out.len());
    out
}

#[test]
fn a_verdict_in_a_fleet_is_the_verdict_of_the_job_alone() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let jobs = group(&fixtures());
    let mut fleet: Vec<Option<Verdict>> = vec![None; jobs.len()];
    let mut order = Vec::new();
    triage(&scanner, &jobs, MmapChoice::never(), |i, done| {
        order.push(i);
        fleet[i] = Some(done.verdict);
        true
    });
    assert_eq!(order.len(), jobs.len(), "one verdict per job");
    let mut summary = Summary::default();
    let mut reversed = Summary::default();
    for (job, verdict) in jobs.iter().zip(&fleet) {
        let alone = scan_job(&scanner, job, MmapChoice::never()).verdict;
        assert_eq!(verdict.as_ref(), Some(&alone), "{}", job.name);
        summary.add(&alone);
    }
    for v in fleet.iter().rev().flatten() {
        reversed.add(v);
    }
    // Summaries made apart (Spark partitions) and read back from JSON add
    // up to the summary of all verdicts.
    let mut halves = [Summary::default(), Summary::default()];
    for (i, v) in fleet.iter().flatten().enumerate() {
        halves[i % 2].add(v);
    }
    let [a, b] = halves.map(|h| {
        let json = serde_json::to_string(&h).unwrap();
        serde_json::from_str::<Summary>(&json).unwrap()
    });
    let mut merged = a;
    merged.merge(b);
    let (summary, reversed) = (summary.finish(), reversed.finish());
    assert_eq!(summary, reversed);
    assert_eq!(merged.finish(), summary);
    assert_eq!(summary.jobs as usize, jobs.len());
    assert!(summary.failed > 100 && summary.clean > 10, "{summary:?}");
    // The same failure in several fixtures is one group.
    let amp = jobs
        .iter()
        .position(|j| j.name.ends_with("real/h200-torch-oom-amp-train.log"))
        .unwrap();
    let fp = fleet[amp].as_ref().unwrap().fingerprint.clone().unwrap();
    let oom = summary.groups.iter().find(|g| g.fingerprint == fp).unwrap();
    assert_eq!(oom.class, "cuda.oom");
    assert!(oom.count >= 2, "{oom:?}");
}

/// A verdict round-trips through its JSON (the Python package and Spark
/// read verdicts back to summarise them).
#[test]
fn verdicts_round_trip_through_json() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let job = Job::single(root.join("fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log"));
    let v = scan_job(&scanner, &job, MmapChoice::never()).verdict;
    assert_eq!(v.primary.as_deref(), Some("nccl.timeout"));
    assert!(v.culprit.is_some(), "{v:?}");
    let back: Verdict = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
    assert_eq!(back, v);
}

/// A verdict of `class` whose message makes fingerprint `fp`.
fn failed(path: &str, fp: &str) -> Verdict {
    Verdict {
        outcome: Some(cudnnlog::report::Outcome::Failed),
        primary: Some("python.exception".into()),
        title: Some("Python exception".into()),
        message: Some(format!("KeyError: '{fp}'")),
        fingerprint: Some(fp.into()),
        findings: 1,
        error: None,
        ..Verdict::unreadable(path, vec![path.into()], String::new())
    }
}

/// A fleet of a hundred thousand jobs that each failed their own way keeps
/// a bounded number of groups (each up to 2 KB of message and five paths),
/// and a failure many jobs share is among them however late it first
/// came, its count short by at most one job in a thousand.
#[test]
fn a_summary_of_many_distinct_failures_keeps_a_bounded_number_of_groups() {
    use cudnnlog::fleet::MAX_GROUPS;
    let jobs = 100_000u64;
    let mut all = Summary::default();
    // Summaries made apart (two Spark partitions) and merged.
    let mut halves = [Summary::default(), Summary::default()];
    let mut shared = 0;
    for i in 0..jobs {
        // The shared failure starts in the last third, among singletons.
        let v = match i >= 2 * jobs / 3 && i % 100 == 0 {
            true => {
                shared += 1;
                failed(&format!("job-{i:06}.log"), "shared")
            }
            false => failed(&format!("job-{i:06}.log"), &format!("{i:016x}")),
        };
        all.add(&v);
        halves[(i % 2) as usize].add(&v);
    }
    let [a, b] = halves;
    let mut merged = a;
    merged.merge(b);
    for summary in [all.finish(), merged.finish()] {
        assert_eq!((summary.jobs, summary.failed), (jobs, jobs));
        assert_eq!(summary.groups.len(), MAX_GROUPS);
        assert_eq!(summary.by_fingerprint.len(), MAX_GROUPS);
        let grouped: u64 = summary.groups.iter().map(|g| g.count).sum();
        assert_eq!(grouped + summary.ungrouped, jobs, "every job counted once");
        let top = &summary.groups[0];
        assert_eq!(top.fingerprint, "shared");
        assert!(
            top.count <= shared && top.count + jobs / MAX_GROUPS as u64 >= shared,
            "{top:?}"
        );
        assert_eq!(summary.by_fingerprint["shared"], top.count);
    }
}
