//! Memory bounds over the real binary: what a scan holds does not grow
//! with the number of jobs. Peak anonymous memory (`RssAnon`: heap and
//! stacks, not a mapped log's pages) is polled from `/proc` while the
//! scan runs, as `bench/hostile.py` does at full size.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A word for `i` with no digit (a digit is masked out of a fingerprint).
fn word(mut i: usize) -> String {
    let mut w = String::new();
    loop {
        w.push((b'a' + (i % 26) as u8) as char);
        i /= 26;
        if i == 0 {
            return w;
        }
    }
}

/// A directory of `n` jobs, each a small log that failed its own way (a
/// fingerprint of its own), as a fleet of unrelated failures is.
fn fleet(scratch: &Scratch, name: &str, n: usize) -> PathBuf {
    let dir = scratch.0.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        let log = format!(
            "2026-01-01 00:00:00 INFO train: step {i} loss 0.5\n\
             Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n\
             ValueError: no shard named {} in the {} split\n",
            word(i),
            word(i * 7 + 3)
        );
        std::fs::write(dir.join(format!("job-{i:05}.log")), log).unwrap();
    }
    dir
}

/// The peak `RssAnon` of `cudnnlog ARGS` in MiB, and its exit status.
fn peak_anon_mib(args: &[&str]) -> (f64, i32) {
    let mut child = common::command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status) {
            let kib = text
                .lines()
                .find_map(|l| l.strip_prefix("RssAnon:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
            peak = peak.max(kib.unwrap_or(0));
        }
        if let Some(exit) = child.try_wait().unwrap() {
            return (peak as f64 / 1024.0, exit.code().unwrap_or(-1));
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A fleet's HTML page, NDJSON stream, table, compact lines, JSON and
/// Markdown hold a bounded amount whatever the number of jobs: four times
/// the jobs, each failing its own way, take about the same memory, past
/// what the page lists (2,000 rows), the table and Markdown (1,000) and
/// the summary's groups (1,000). The page kept every job's whole report,
/// 223 MiB for 100,000 jobs; NDJSON a slot per job and a group per
/// fingerprint; the table, Markdown and the compact lines every verdict,
/// JSON every report; and each job read while fresh took two 8 MiB
/// blocks, for a log of a few hundred bytes.
#[test]
#[cfg(target_os = "linux")]
fn a_fleets_memory_does_not_grow_with_its_jobs() {
    let scratch = Scratch::new("bounds");
    let (few, many) = (
        fleet(&scratch, "few", 2_500),
        fleet(&scratch, "many", 10_000),
    );
    // The least of two runs: what the threads hold at their peak moves
    // with how the machine schedules them (a loaded machine's runs of one
    // input differ by 5 MiB), while growth with the jobs shows in both.
    let least = |format: &str, dir: &Path| {
        let runs = [0, 1].map(|_| peak_anon_mib(&["scan", "--format", format, path(dir)]));
        assert!(runs.iter().all(|r| r.1 == 1), "{format}: {runs:?}");
        runs[0].0.min(runs[1].0)
    };
    for format in [
        "html", "ndjson", "table", "compact", "json", "markdown", "github",
    ] {
        let (small, large) = (least(format, &few), least(format, &many));
        assert!(
            large - small < 8.0,
            "{format}: {small:.1} MiB for 2,500 jobs, {large:.1} MiB for 10,000"
        );
    }
}

/// The table of a fleet lists its first 1,000 jobs and says how many it
/// left out, and where to get them all: a table kept every job's verdict
/// until the end (133 MiB for 50,000 jobs).
#[test]
fn a_fleets_table_lists_a_thousand_jobs_and_says_how_many_more() {
    let scratch = Scratch::new("bounds-table");
    let dir = fleet(&scratch, "jobs", 1_200);
    let out = common::cudnnlog(&["scan", "--format", "table", path(&dir)], None);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = text
        .lines()
        .filter(|l| l.starts_with('│') && l.contains("job-"))
        .count();
    assert_eq!(rows, 1_000);
    assert!(
        text.contains("… 200 more jobs not listed") && text.contains("--format ndjson"),
        "{text}"
    );
    assert!(text.contains("1200 jobs: 1200 failed"), "{text}");
}

/// A log of `lines` lines that are all `Traceback (most recent call
/// last):` headers, no frame under any, dated an hour back so that it is
/// mapped (a file modified in the last 30 s is read by positioned reads).
fn headers(scratch: &Scratch, name: &str, lines: usize) -> PathBuf {
    let path = scratch.0.join(name);
    let log = b"Traceback (most recent call last):\n".repeat(lines);
    std::fs::write(&path, log).unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_modified(hour_ago).unwrap();
    path
}

/// Every line a candidate: a mapped log held a list of all of them (and
/// two more while forming regions), 141 MiB for 5,000,000 headers where a
/// stream of them took 50. Past 1,572,864 candidates a mapped log is
/// scanned window by window from its mapping: 3,000,000 headers take
/// about what their stream takes (it took 60 MiB more).
#[test]
#[cfg(target_os = "linux")]
fn a_mapped_log_of_candidate_lines_only_stays_bounded() {
    let scratch = Scratch::new("bounds-headers");
    let log = headers(&scratch, "headers.log", 3_000_000);
    let (mapped, a) = peak_anon_mib(&["scan", "-q", path(&log)]);
    let (streamed, b) = peak_anon_mib(&["scan", "-q", "--no-mmap", path(&log)]);
    assert_eq!((a, b), (0, 0), "no finding: a header alone is no error");
    assert!(
        mapped < streamed + 16.0,
        "{mapped:.1} MiB mapped, {streamed:.1} MiB streamed"
    );
}
