//! A stream's windows framed on all cores: a file read as a stream (one
//! still being written, or any file with mapping off) scanned into a sink
//! that forks gives exactly the report of the same bytes streamed into a
//! sink framed on one thread.

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

fn report(scanner: &cudnnlog::Scanner, log: &[u8], forked: bool) -> Report {
    let mut sink = FindingsSink::new(scanner.catalog());
    // Tests run at once: each report its own file.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "cudnnlog-test-stream-{forked}-{}-{n}.log",
        std::process::id()
    ));
    std::fs::write(&path, log).unwrap();
    // Mapping off: read as a stream, as a file written seconds ago is.
    let scanned = match forked {
        true => scanner.scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|_| {}),
        false => scanner.scan_path(&path, MmapChoice::never(), &mut sink),
    };
    std::fs::remove_file(&path).unwrap();
    scanned.unwrap();
    let mut report = sink.into_report();
    let source = &mut report.sources[0];
    (source.path, source.modified) = (String::new(), None);
    report
}

#[test]
fn a_streams_windows_framed_on_all_cores_give_the_same_report() {
    let log = busy_log();
    for (block, context) in [(4096, 1024), (256 << 10, 16 << 10), (1 << 20, 64 << 10)] {
        let scanner = ScannerBuilder::new()
            .block_size(block)
            .context_before(context)
            .context_after(context)
            .lookback(context)
            .build(Catalog::builtin().unwrap());
        let one = report(&scanner, &log, false);
        let all = report(&scanner, &log, true);
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
        assert_eq!(one, all, "block {block}");
    }
}

/// A sink that fails part way through a stream of many windows: the scan
/// returns its error (the helper reading ahead is stopped, not waited on
/// forever), and one that has all it wants stops the scan there.
#[test]
fn a_sink_that_fails_or_stops_part_way_ends_the_stream() {
    use cudnnlog::sink::FnSink;
    let log = busy_log();
    let scanner = ScannerBuilder::new()
        .block_size(4096)
        .context_before(1024)
        .context_after(1024)
        .lookback(1024)
        .build(Catalog::builtin().unwrap());
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
