//! Timestamps in reports are ISO 8601 that date parsers accept: glog/absl
//! and syslog times get their year from the log's dated lines or the file's
//! modification time; what has no year, or is a dmesg uptime, is reported
//! in its own field, never as a `timestamp`.

use cudnnlog::report::{FindingsSink, Report};
use cudnnlog::source::SourceInfo;
use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scanner() -> cudnnlog::Scanner {
    ScannerBuilder::new().build(Catalog::builtin().unwrap())
}

fn report_of_path(path: &Path) -> Report {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_path(path, MmapChoice::never(), &mut sink)
        .unwrap();
    sink.into_report()
}

fn report_of_path_parallel(path: &Path) -> Report {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_path_parallel(path, MmapChoice::never(), &mut sink, &|_| {})
        .unwrap();
    sink.into_report()
}

fn report_of_bytes(log: &[u8]) -> Report {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(log, &mut sink).unwrap();
    sink.into_report()
}

fn report_of_stream(log: &[u8]) -> Report {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_reader("<stdin>", log, &mut sink).unwrap();
    sink.into_report()
}

/// Strict RFC 3339 / ISO 8601 extended date-time, as Python's
/// `datetime.fromisoformat` (3.11+) reads it:
/// `YYYY-MM-DDTHH:MM:SS(.f+)?(Z|[+-]HH:MM)?`, with a real month, a day that
/// month has, hours under 24, minutes and seconds under 60, an offset under
/// 24 hours.
fn check_iso(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let err = |why: &str| Err(format!("{s:?}: {why}"));
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let d = b.get(r)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0, |a, c| a * 10 + u32::from(c - b'0')))
    };
    if b.len() < 19 {
        return err("too short");
    }
    for (at, c) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')] {
        if b[at] != c {
            return err(&format!("expected {:?} at {at}", c as char));
        }
    }
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    ) else {
        return err("not digits");
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match mo {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return err("month"),
    };
    if y == 0 || d == 0 || d > days || h > 23 || mi > 59 || sec > 59 {
        return err("out of range");
    }
    let mut rest = &b[19..];
    if let Some(f) = rest.strip_prefix(b".") {
        let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return err("empty fraction");
        }
        rest = &f[n..];
    }
    match rest {
        [] | [b'Z'] => Ok(()),
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            let digits = [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit());
            let hh = u32::from(h1 - b'0') * 10 + u32::from(h2 - b'0');
            let mm = u32::from(m1 - b'0') * 10 + u32::from(m2 - b'0');
            if digits && hh < 24 && mm < 60 {
                Ok(())
            } else {
                err("offset")
            }
        }
        _ => err("trailing text"),
    }
}

/// Every value under a `timestamp` key of the report's JSON, with where it
/// is; and the values of the other time fields.
fn times(report: &Report) -> (Vec<(String, String)>, Vec<String>, Vec<String>) {
    fn walk(
        v: &serde_json::Value,
        at: &str,
        out: &mut (Vec<(String, String)>, Vec<String>, Vec<String>),
    ) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    let here = format!("{at}.{k}");
                    match (k.as_str(), v.as_str()) {
                        ("timestamp", Some(s)) => out.0.push((here.clone(), s.to_string())),
                        ("timestamp", None) => out.0.push((here.clone(), v.to_string())),
                        ("yearless_timestamp", Some(s)) => out.1.push(s.to_string()),
                        ("uptime", Some(s)) => out.2.push(s.to_string()),
                        _ => {}
                    }
                    walk(v, &here, out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Default::default();
    walk(&serde_json::to_value(report).unwrap(), "", &mut out);
    out
}

fn fixtures() -> Vec<PathBuf> {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                collect(&p, out);
            } else if name == "truncated.gz" {
                // Unreadable on purpose.
            } else if name.ends_with(".log")
                || name.ends_with(".gz")
                || name.ends_with(".zst")
                || name == "log.txt"
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    collect(&root().join("fixtures"), &mut out);
    out.sort();
    assert!(out.len() > 100, "fixtures missing: {out:?}");
    out
}

#[test]
fn the_checker_is_strict() {
    for good in [
        "2026-11-29T19:46:54",
        "2026-11-29T19:46:54.456820794",
        "2026-11-29T19:46:54.4Z",
        "2028-02-29T00:00:00+05:30",
        "2026-11-29T19:46:54-08:00",
    ] {
        check_iso(good).unwrap();
    }
    for bad in [
        "--11-29T19:46:54.456820",
        "+4821.553190s",
        "2026-11-29 19:46:54",
        "2026-11-29T19:46:54,316",
        "2026-02-29T19:46:54",
        "2026-11-29T24:00:00",
        "2026-11-29T23:59:60",
        "2026-11-29T19:46:54.",
        "2026-11-29T19:46:54+0100",
        "2026-11-29T19:46:54+24:00",
        "2026-11-29T19:46",
    ] {
        assert!(check_iso(bad).is_err(), "{bad}");
    }
}

#[test]
fn glog_times_next_to_dated_lines_get_their_year() {
    let path = root().join("fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log");
    let bytes = std::fs::read(&path).unwrap();
    // By path, in memory, streamed: the dated lines around the glog headers
    // give the year, whatever the file's modification time.
    for r in [
        report_of_path(&path),
        report_of_path_parallel(&path),
        report_of_bytes(&bytes),
        report_of_stream(&bytes),
    ] {
        let f = r
            .findings
            .iter()
            .find(|f| f.class == "nccl.timeout")
            .unwrap();
        // `[rank0]:[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689]`:
        // the fraction as written, nanoseconds.
        assert_eq!(
            (f.first.line, f.first.timestamp.as_deref()),
            (14, Some("2026-11-29T19:46:54.456820794"))
        );
        assert_eq!(f.first.yearless_timestamp, None);
        let (ts, yearless, uptime) = times(&r);
        assert!(yearless.is_empty() && uptime.is_empty(), "{yearless:?}");
        assert!(ts.len() >= 4, "{ts:?}");
    }
}

#[test]
fn every_timestamp_of_every_fixture_is_iso_8601() {
    let mut seen = 0;
    let mut bad = Vec::new();
    for path in fixtures() {
        let by_path = report_of_path(&path);
        // From memory there is no modification time: yearless times are
        // not timestamps then. (Compressed fixtures are read by path only.)
        let name = path.to_string_lossy();
        let mut reports = vec![("path", by_path)];
        if !name.ends_with(".gz") && !name.ends_with(".zst") {
            reports.push(("memory", report_of_bytes(&std::fs::read(&path).unwrap())));
        }
        for (how, r) in &reports {
            let (ts, yearless, uptime) = times(r);
            for (at, t) in &ts {
                seen += 1;
                if let Err(e) = check_iso(t) {
                    bad.push(format!("{name} ({how}) {at}: {e}"));
                }
            }
            for y in &yearless {
                if *how == "path" {
                    bad.push(format!(
                        "{name}: yearless {y:?} though the file has an mtime"
                    ));
                }
                if !y.starts_with("--") || check_iso(&format!("2000{}", &y[1..])).is_err() {
                    bad.push(format!("{name} ({how}): bad yearless {y:?}"));
                }
            }
            for u in &uptime {
                if u.parse::<f64>().is_err() {
                    bad.push(format!("{name} ({how}): bad uptime {u:?}"));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(seen > 100, "only {seen} timestamps");
}

#[test]
fn yearless_bytes_from_memory_keep_their_time_in_another_field() {
    let log = b"F1201 12:15:38.887099     538 client.h:86] Terminating process because the JAX distributed service detected fatal errors.\n\
E1201 12:15:39.000001 538 x.cc:1] RuntimeError: CUDA error: an illegal memory access was encountered\n";
    for r in [report_of_bytes(log), report_of_stream(log)] {
        assert!(!r.findings.is_empty());
        for f in &r.findings {
            assert_eq!(f.first.timestamp, None, "{f:#?}");
            let y = f.first.yearless_timestamp.as_deref().unwrap();
            assert!(y.starts_with("--12-01T12:15:3"), "{y}");
        }
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("\"timestamp\""), "{json}");
        assert!(json.contains("\"yearless_timestamp\":\"--12-01T12:15:39.000001\""));
    }
}

#[test]
fn the_year_comes_from_the_nearest_dated_line_either_side() {
    // The glog line comes first; the dated line after it gives the year.
    let log = b"E0101 00:00:02.000001 7 x.cc:1] RuntimeError: CUDA error: an illegal memory access was encountered\n\
2026-12-31 23:59:59,000 INFO still here\n";
    let r = report_of_bytes(log);
    assert_eq!(
        r.findings[0].first.timestamp.as_deref(),
        Some("2027-01-01T00:00:02.000001"),
        "New Year between the lines"
    );
    // Two dated lines: the nearer one counts.
    let log = b"2025-06-01 10:00:00,000 INFO old\n\
2026-11-29 19:46:33,316 INFO ddp: rank 0 step 1 ok\n\
[rank0]:[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689] [Rank 0] RuntimeError: CUDA error: an illegal memory access was encountered\n";
    let r = report_of_bytes(log);
    assert_eq!(
        r.findings[0].first.timestamp.as_deref(),
        Some("2026-11-29T19:46:54.456820794")
    );
}

#[test]
fn without_dated_lines_the_year_comes_from_the_modification_time() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("timestamps");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("glog-{}.log", std::process::id()));
    let log = b"E1231 23:58:00.000001 7 x.cc:1] RuntimeError: CUDA error: an illegal memory access was encountered\n\
E0101 00:10:00.000001 7 x.cc:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    std::fs::write(&path, log).unwrap();
    // Last written on 2 January 2027: the December line is from 2026.
    let jan_2_2027 = UNIX_EPOCH + Duration::from_secs(1_798_761_600 + 86_400);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(jan_2_2027)
        .unwrap();
    for r in [report_of_path(&path), report_of_path_parallel(&path)] {
        assert_eq!(r.sources[0].modified, Some(jan_2_2027));
        let at: Vec<Option<&str>> = r
            .findings
            .iter()
            .map(|f| f.first.timestamp.as_deref())
            .collect();
        assert_eq!(
            at,
            [
                Some("2026-12-31T23:58:00.000001"),
                Some("2027-01-01T00:10:00.000001")
            ]
        );
        // The modification time is not part of the JSON report.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(
            json["sources"][0].as_object().unwrap().len(),
            3,
            "{}",
            json["sources"]
        );
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn zones_are_kept_and_uptimes_are_not_timestamps() {
    let log = b"2026-11-29T19:41:10.166Z ERROR RuntimeError: CUDA error: an illegal memory access was encountered\n\
2026-11-29T19:41:11+05:30 ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    let r = report_of_bytes(log);
    let at: Vec<Option<&str>> = r
        .findings
        .iter()
        .map(|f| f.first.timestamp.as_deref())
        .collect();
    assert_eq!(
        at,
        [
            Some("2026-11-29T19:41:10.166Z"),
            Some("2026-11-29T19:41:11+05:30")
        ]
    );
    let r = report_of_bytes(
        b"[ 4821.553190] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus.\n",
    );
    let f = &r.findings[0];
    assert_eq!(
        (f.first.timestamp.as_deref(), f.first.uptime.as_deref()),
        (None, Some("4821.553190"))
    );
}

#[test]
fn source_info_from_memory_has_no_modification_time() {
    let r = report_of_bytes(b"hello\n");
    assert_eq!(
        r.sources,
        [SourceInfo {
            path: "<memory>".into(),
            bytes: 6,
            lines: 1,
            modified: None::<SystemTime>,
            rank: None,
        }]
    );
}

#[test]
fn a_long_glog_only_stretch_does_not_hide_a_dated_line_later() {
    // Hundreds of distinct yearless error lines with no dated line near
    // them (lookups that find nothing), then a finding next to one.
    let mut log = String::new();
    let word = |i: usize| -> String {
        [i / 676, (i / 26) % 26, i % 26]
            .iter()
            .map(|&d| char::from(b'a' + d as u8))
            .collect()
    };
    for i in 0..300 {
        log.push_str(&format!(
            "E1129 10:{:02}:{:02}.000001 7 x.cc:1] {} worker failed\n",
            i / 60,
            i % 60,
            word(i)
        ));
    }
    for i in 0..300 {
        log.push_str(&format!("I1129 11:00:00.000001 7 x.cc:1] filler {i}\n"));
    }
    log.push_str("2026-11-29 19:46:33,316 INFO ddp: rank 0 step 1 ok\n");
    log.push_str("[rank0]:[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689] [Rank 0] RuntimeError: CUDA error: an illegal memory access was encountered\n");
    for r in [
        report_of_bytes(log.as_bytes()),
        report_of_stream(log.as_bytes()),
    ] {
        assert!(r.unclassified.len() > 64, "{}", r.unclassified.len());
        assert!(r
            .unclassified
            .iter()
            .all(|t| t.first.timestamp.is_none() && t.first.yearless_timestamp.is_some()));
        let f = r
            .findings
            .iter()
            .find(|f| f.class == "cuda.illegal_address")
            .unwrap();
        assert_eq!(
            f.first.timestamp.as_deref(),
            Some("2026-11-29T19:46:54.456820794")
        );
    }
}
