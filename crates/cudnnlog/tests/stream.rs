//! A stream's windows framed on all cores: a file read as a stream (one
//! still being written, or any file with mapping off) scanned into a sink
//! that forks gives exactly the report of the same bytes streamed into a
//! sink framed on one thread, read through `Read`, or mapped.

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, MmapChoice, Report, ScannerBuilder};

/// Real failures between step lines, a burst of identical warnings and a
/// burst of tracebacks: windows with many regions, so with many batches.
fn busy_log() -> Vec<u8> {
    let pieces: [&[u8]; 4] = [
        include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log"),
        include_bytes!("../../../fixtures/real/h200-lightning-oom-progress-bar.log"),
        include_bytes!("../../../fixtures/real/h200-torchrun-nccl-duplicate-gpu.log"),
        include_bytes!("../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log"),
    ];
    let mut log = Vec::new();
    for round in 0..3 {
        for (i, p) in pieces.iter().enumerate() {
            for s in 0..800 {
                let line = format!(
                    "[rank{}]:INFO train: step {} loss 0.5\n",
                    s % 4,
                    round * 1000 + s
                );
                log.extend_from_slice(line.as_bytes());
            }
            log.extend_from_slice(p);
            for w in 0..300 {
                let line = format!(
                    "[rank{}]:/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: \
                     UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: \
                     cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n\
                     [rank{}]:  return F.conv2d(input, weight, bias, self.stride,\n",
                    (w + i) % 4,
                    (w + i) % 4
                );
                log.extend_from_slice(line.as_bytes());
            }
        }
    }
    log
}

/// A scanner with windows of `block` bytes and `context` bytes of context
/// on each side.
fn scanner(block: usize, context: usize) -> cudnnlog::Scanner {
    ScannerBuilder::new()
        .block_size(block)
        .context_before(context)
        .context_after(context)
        .lookback(context)
        .build(Catalog::builtin().unwrap())
}

/// How a log is read.
#[derive(Clone, Copy, Debug)]
enum Read {
    /// By path, mapping off (as a file written seconds ago is): positioned
    /// reads, framed on one thread.
    Path,
    /// The same, each window framed on all threads.
    PathForked,
    /// Through `Read`, one read after another, as a pipe is.
    Reader,
    /// Mapped, as a finished log is.
    Mapped,
}

fn report(scanner: &cudnnlog::Scanner, log: &[u8], how: Read) -> Report {
    let mut sink = FindingsSink::new(scanner.catalog());
    if let Read::Reader = how {
        scanner.scan_reader("<stdin>", log, &mut sink).unwrap();
        let mut report = sink.into_report();
        report.sources[0].path = String::new();
        return report;
    }
    // Tests run at once: each report its own file.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "cudnnlog-test-stream-{how:?}-{}-{n}.log",
        std::process::id()
    ));
    std::fs::write(&path, log).unwrap();
    // A file written an hour ago may be mapped.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let scanned = match how {
        Read::PathForked => {
            scanner.scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|_| {})
        }
        Read::Path => scanner.scan_path(&path, MmapChoice::never(), &mut sink),
        // SAFETY: nothing else writes the file.
        // Mapped however small (by default, a file under 1 MiB is read).
        _ => {
            let mmap = unsafe { MmapChoice::auto() }.min_len(1);
            scanner.scan_path_parallel(&path, mmap, &mut sink, &|_| {})
        }
    };
    std::fs::remove_file(&path).unwrap();
    scanned.unwrap();
    let mut report = sink.into_report();
    let source = &mut report.sources[0];
    (source.path, source.modified) = (String::new(), None);
    report
}

/// A report as JSON less its times: a yearless one gets its year from the
/// file's modification time.
fn yearless(report: &Report) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                map.remove("timestamp");
                map.remove("yearless_timestamp");
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(report).unwrap();
    strip(&mut v);
    v
}

/// Every way of reading a stream, with windows small and large, gives the
/// report the mapped scan gives.
#[test]
fn a_streams_windows_framed_on_all_cores_give_the_same_report() {
    let log = busy_log();
    for (block, context) in [(4096, 1024), (256 << 10, 16 << 10), (1 << 20, 64 << 10)] {
        let scanner = scanner(block, context);
        let one = report(&scanner, &log, Read::Path);
        let classes: Vec<&str> = one.findings.iter().map(|f| f.class.as_str()).collect();
        assert!(
            classes.contains(&"cuda.oom") && classes.contains(&"cudnn.plan_failed"),
            "block {block}: {classes:?}"
        );
        let burst = one
            .findings
            .iter()
            .find(|f| f.class == "cudnn.plan_failed")
            .unwrap();
        assert_eq!(burst.count, 3 * 4 * 300, "block {block}");
        for how in [Read::PathForked, Read::Reader, Read::Mapped] {
            // Not `assert_eq!`: a report's debug form is huge.
            let other = report(&scanner, &log, how);
            let same = match how {
                // Read with no path, so no modification time: a yearless
                // time gets no year.
                Read::Reader => yearless(&other) == yearless(&one),
                _ => other == one,
            };
            assert!(same, "block {block}, {how:?}");
        }
    }
}

/// A sink that fails part way through a stream of many windows: the scan
/// returns its error (the helper reading ahead is stopped, not waited on
/// forever), and one that has all it wants stops the scan there.
#[test]
fn a_sink_that_fails_or_stops_part_way_ends_the_stream() {
    use cudnnlog::sink::FnSink;
    let log = busy_log();
    let scanner = scanner(4096, 1024);
    let mut seen = Vec::new();
    let mut failing = FnSink(|m: &cudnnlog::Match<'_>| {
        seen.push(m.location.line);
        match seen.len() {
            3 => Err(cudnnlog::Error::Io {
                path: "sink".to_string(),
                source: std::io::Error::other("disk full"),
            }),
            _ => Ok(true),
        }
    });
    let err = scanner
        .scan_reader("<stdin>", &log[..], &mut failing)
        .unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    assert_eq!(seen.len(), 3);
    let mut first = Vec::new();
    let mut stopping = FnSink(|m: &cudnnlog::Match<'_>| -> Result<bool, cudnnlog::Error> {
        first.push(m.location.line);
        Ok(false)
    });
    let info = scanner
        .scan_reader("<stdin>", &log[..], &mut stopping)
        .unwrap();
    // Stopped after the first match, yet the whole stream was read.
    assert_eq!((first.len(), info.bytes), (1, log.len() as u64));
    // The match a scan of the bytes in memory stops at.
    let mut in_memory = Vec::new();
    let mut stopping = FnSink(|m: &cudnnlog::Match<'_>| -> Result<bool, cudnnlog::Error> {
        in_memory.push(m.location.line);
        Ok(false)
    });
    scanner.scan_slice(&log, &mut stopping).unwrap();
    assert_eq!(first, in_memory);
}

/// A sink that forks, keeping the lines of its matches; it fails at the
/// `fail_at`th match of a fork, or asks to stop after its first.
struct Lines {
    seen: Vec<u64>,
    fail_at: Option<usize>,
}

impl cudnnlog::sink::Sink for Lines {
    type Error = cudnnlog::Error;
    fn matched(&mut self, m: &cudnnlog::Match<'_>) -> Result<bool, cudnnlog::Error> {
        self.seen.push(m.location.line);
        match self.fail_at {
            Some(n) if self.seen.len() == n => Err(cudnnlog::Error::Io {
                path: "sink".to_string(),
                source: std::io::Error::other("disk full"),
            }),
            Some(_) => Ok(true),
            None => Ok(false),
        }
    }
}

impl cudnnlog::sink::Fork for Lines {
    fn fork(&self) -> Lines {
        Lines {
            seen: Vec::new(),
            fail_at: self.fail_at,
        }
    }
    fn join(&mut self, other: Lines) {
        self.seen.extend(other.seen);
    }
}

/// The same on all cores, for a file read by positioned reads: the error
/// ends the scan (the window being read meanwhile is waited for, not left
/// behind), and a stop ends the framing while the file is read to its end.
#[test]
fn a_forking_sink_that_fails_or_stops_ends_a_files_scan() {
    let log = busy_log();
    let scanner = scanner(4096, 1024);
    let path = std::env::temp_dir().join(format!(
        "cudnnlog-test-stream-stop-{}.log",
        std::process::id()
    ));
    std::fs::write(&path, &log).unwrap();
    let mut failing = Lines {
        seen: Vec::new(),
        fail_at: Some(2),
    };
    let err = scanner
        .scan_path_parallel(&path, MmapChoice::never(), &mut failing, &|_| {})
        .unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    let mut stopping = Lines {
        seen: Vec::new(),
        fail_at: None,
    };
    let done = std::sync::atomic::AtomicU64::new(0);
    let info = scanner
        .scan_path_parallel(&path, MmapChoice::never(), &mut stopping, &|n| {
            done.store(n, std::sync::atomic::Ordering::Relaxed)
        })
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(info.bytes, log.len() as u64);
    assert_eq!(
        done.load(std::sync::atomic::Ordering::Relaxed),
        log.len() as u64
    );
    // Each fork stops at its own first match: a few, the first of them the
    // first match of the log.
    let mut in_memory = Lines {
        seen: Vec::new(),
        fail_at: None,
    };
    scanner.scan_slice(&log, &mut in_memory).unwrap();
    let first_line = in_memory.seen[0];
    assert!(
        !stopping.seen.is_empty() && stopping.seen.len() < 10,
        "{:?}",
        stopping.seen
    );
    assert_eq!(stopping.seen[0], first_line);
}
