//! A fleet of compressed logs on a small pool: every job is a streamed
//! scan whose driver holds one of rayon's threads, so the stream's helper
//! must not wait for a thread of the same pool. A test binary of its own:
//! it sizes rayon's global pool, as `RAYON_NUM_THREADS=2` does for the
//! command on a machine of two cores.

use cudnnlog::fleet::{triage, Job};
use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
use std::io::Write;
use std::time::Duration;

const OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");

/// 24 MiB of training progress (three windows of the default 8 MiB
/// block, each large enough for a literal pass split across threads),
/// then the OOM capture, gzip-compressed.
fn long_gzip_log() -> Vec<u8> {
    let mut log = Vec::with_capacity(25 << 20);
    let mut i = 0usize;
    while log.len() < 24 << 20 {
        let loss = (i * 7919) % 10007;
        writeln!(
            log,
            "INFO 2026-11-29 19:41:{:02} step {i} loss 0.{loss:04} lr 3e-4",
            i % 60
        )
        .unwrap();
        i += 1;
    }
    log.extend_from_slice(OOM);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&log).unwrap();
    gz.finish().unwrap()
}

/// Twice as many compressed jobs as the pool has threads: each thread
/// drives a stream at once. Before the helper searched on its own thread
/// there, every thread waited for its helper and every helper for a free
/// thread, and the triage never ended (`cudnnlog scan dir/` of a few `.gz`
/// logs hung on two cores).
#[test]
fn a_fleet_of_compressed_logs_on_two_threads_finishes() {
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build_global()
        .expect("the first use of rayon's global pool in this test binary");
    let dir = std::env::temp_dir().join(format!("cudnnlog-fleet-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = long_gzip_log();
    let jobs: Vec<Job> = (0..4)
        .map(|i| {
            let path = dir.join(format!("job-{i}.log.gz"));
            std::fs::write(&path, &gz).unwrap();
            Job::single(path)
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
        let mut primaries = Vec::new();
        triage(&scanner, &jobs, MmapChoice::never(), |_, done| {
            primaries.push(done.verdict.primary);
            true
        });
        let _ = tx.send(primaries);
    });
    // Some seconds on two cores; a hang never ends.
    let primaries = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the triage of 4 compressed logs on 2 threads still running after 120 s: hung");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(primaries, vec![Some("cuda.oom".to_string()); 4]);
}
