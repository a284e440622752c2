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
    let path = std::env::temp_dir().join(format!(
        "cudnnlog-test-stream-{forked}-{}.log",
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
