//! A report does not depend on how many threads made it, nor on the
//! literal engine: the mapped scan cuts its chunks, batches and pieces by
//! the thread count, and the streamed scan its windows' pieces, so every
//! count from one to sixteen threads must give one thread's report, byte
//! for byte.

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, LiteralEngine, MmapChoice, ScannerBuilder};
use std::path::{Path, PathBuf};

/// Real logs one after another (tracebacks, NCCL timeouts, OOMs, cuDNN
/// bursts, interleaved ranks), twice, with a flood of one warning between
/// the copies: several megabytes, so that every path cuts it in pieces.
fn log() -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/");
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in ["real", "gpu"] {
        for entry in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    paths.retain(|p| p.extension().is_some_and(|e| e == "log"));
    paths.sort();
    let mut log = Vec::new();
    for copy in 0..2 {
        for p in &paths {
            log.extend(std::fs::read(p).unwrap());
        }
        if copy == 0 {
            let warning = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: \
                Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize \
                Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n  return F.conv2d(input, weight)\n";
            log.extend(warning.repeat(20_000).as_bytes());
        }
    }
    log
}

/// The JSON report of `path` scanned on `threads` threads with `engine`,
/// mapped (`mapped`) or streamed by positioned reads.
fn report(path: &Path, threads: usize, engine: LiteralEngine, mapped: bool) -> String {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let scanner = ScannerBuilder::new()
        .literal_engine(engine)
        .build(Catalog::builtin().unwrap());
    let mmap = if mapped {
        // SAFETY: the test's own file, not written while it is scanned.
        unsafe { MmapChoice::auto() }.min_len(1)
    } else {
        MmapChoice::never()
    };
    let mut sink = FindingsSink::new(scanner.catalog());
    pool.install(|| {
        scanner
            .scan_path_parallel(path, mmap, &mut sink, &|_| {})
            .unwrap()
    });
    serde_json::to_string(&sink.into_report()).unwrap()
}

#[test]
fn every_thread_count_and_engine_gives_one_threads_report() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("train.log");
    let log = log();
    assert!(log.len() > 4 << 20, "{} bytes", log.len());
    std::fs::write(&path, &log).unwrap();
    // Finished an hour ago, so that it may be mapped.
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    file.set_modified(past).unwrap();
    drop(file);
    let one = report(&path, 1, LiteralEngine::Nfa, false);
    assert!(one.contains("cudnn.plan_failed"), "{}", &one[..200]);
    for threads in [1, 2, 3, 8, 16] {
        for engine in [
            LiteralEngine::Auto,
            LiteralEngine::Exact,
            LiteralEngine::Hashed,
            LiteralEngine::Dfa,
        ] {
            for mapped in [true, false] {
                let r = report(&path, threads, engine, mapped);
                assert!(
                    r == one,
                    "{threads} threads, {engine:?}, mapped: {mapped}: the report differs"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every match, in the order a sink is handed them: its line and class.
#[derive(Default)]
struct Order(Vec<(u64, String)>);

impl cudnnlog::sink::Sink for Order {
    type Error = cudnnlog::Error;

    fn matched(&mut self, m: &cudnnlog::sink::Match<'_>) -> Result<bool, cudnnlog::Error> {
        self.0.push((m.location.line, m.class.to_string()));
        Ok(true)
    }
}

impl cudnnlog::sink::Fork for Order {
    fn fork(&self) -> Order {
        Order::default()
    }

    fn join(&mut self, other: Order) {
        self.0.extend(other.0);
    }
}

/// Regions are framed largest first, on whichever thread is free, but a
/// sink that keeps the order of what it is handed sees the single pass's
/// order on any number of threads.
#[test]
fn matches_reach_the_sink_in_log_order_on_any_thread_count() {
    let log = log();
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut one = Order::default();
    scanner.scan_slice(&log, &mut one).unwrap();
    assert!(one.0.len() > 20_000, "{}", one.0.len());
    for threads in [2, 4, 16] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut sink = Order::default();
        pool.install(|| {
            scanner
                .scan_slice_parallel(&log, &mut sink, &|_| {})
                .unwrap()
        });
        assert!(sink.0 == one.0, "{threads} threads: another order");
    }
}
