//! Sources are numbered by the sink, never by the caller: a
//! [`FindingsSink`] numbers the sources scanned into it in the order their
//! scans end, and a fork's sources follow those of the sink it joins. So
//! scanning files one after the other into one sink, or each into a fork
//! joined in order, gives the same report.

use cudnnlog::report::{FindingsSink, Report};
use cudnnlog::sink::Fork;
use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};

const OOM: &[u8] = b"INFO train: step 7 loss 0.5\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
const CLEAN: &[u8] = b"INFO train: step 1 loss 0.9\nINFO train: step 2 loss 0.8\n";
const ILLEGAL: &[u8] = b"INFO train: step 9 loss 0.4\n\
RuntimeError: CUDA error: an illegal memory access was encountered\n\
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";

fn logs() -> [(&'static str, &'static [u8]); 3] {
    [("a.log", OOM), ("b.log", CLEAN), ("c.log", ILLEGAL)]
}

/// Where each finding's occurrences are: (class, source of first, source
/// of last, sources it was seen in).
fn places(r: &Report) -> Vec<(String, usize, usize, Vec<usize>)> {
    r.findings
        .iter()
        .map(|f| {
            let mut seen: Vec<usize> = f.occurrences.iter().map(|p| p.source).collect();
            seen.dedup();
            (f.class.clone(), f.first.source, f.last.source, seen)
        })
        .collect()
}

#[test]
fn sources_scanned_one_after_another_are_numbered_in_order() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    for (name, log) in logs() {
        scanner.scan_reader(name, log, &mut sink).unwrap();
    }
    let report = sink.into_report();
    let names: Vec<&str> = report.sources.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(names, ["a.log", "b.log", "c.log"]);
    let oom = report
        .findings
        .iter()
        .find(|f| f.class == "cuda.oom")
        .unwrap();
    // The OOM is in the first and the third file, never in the second.
    assert_eq!((oom.count, oom.first.source, oom.last.source), (2, 0, 2));
    assert_eq!((oom.first.line, oom.last.line), (2, 3));
    assert_eq!((oom.first.step, oom.last.step), (Some(7), Some(9)));
    let illegal = report
        .findings
        .iter()
        .find(|f| f.class == "cuda.illegal_address")
        .unwrap();
    assert_eq!((illegal.first.source, illegal.first.line), (2, 2));
}

#[test]
fn forks_joined_in_order_number_sources_as_one_sink_does() {
    let scanner = ScannerBuilder::new()
        .chunk_size(64)
        .build(Catalog::builtin().unwrap());
    let mut one = FindingsSink::new(scanner.catalog());
    for (name, log) in logs() {
        scanner.scan_reader(name, log, &mut one).unwrap();
    }
    let one = one.into_report();

    // Each file into a fork of its own (as the CLI scans files in
    // parallel), the forks joined in the order given.
    let mut joined = FindingsSink::new(scanner.catalog());
    let forks: Vec<FindingsSink<'_>> = logs()
        .iter()
        .map(|(name, log)| {
            let mut fork = joined.fork();
            scanner.scan_reader(name, *log, &mut fork).unwrap();
            fork
        })
        .collect();
    for fork in forks {
        joined.join(fork);
    }
    let joined = joined.into_report();
    assert_eq!(places(&joined), places(&one));
    assert_eq!(joined, one);

    // The same with each file scanned in parallel chunks of 64 bytes
    // (forks within forks), the slices named afterwards.
    let mut chunked = FindingsSink::new(scanner.catalog());
    for (_, log) in logs() {
        let mut fork = chunked.fork();
        scanner
            .scan_slice_parallel(log, &mut fork, &|_| {})
            .unwrap();
        chunked.join(fork);
    }
    let mut chunked = chunked.into_report();
    for (s, (name, _)) in chunked.sources.iter_mut().zip(logs()) {
        s.path = name.to_string();
    }
    assert_eq!(chunked, one);
}

#[test]
fn a_scan_that_fails_adds_no_source() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(OOM, &mut sink).unwrap();
    // A directory cannot be scanned: an error, and no source for it.
    let dir = std::env::temp_dir();
    assert!(scanner
        .scan_path(&dir, MmapChoice::never(), &mut sink)
        .is_err());
    scanner.scan_slice(ILLEGAL, &mut sink).unwrap();
    assert_eq!(sink.sources().len(), 2);
    let report = sink.into_report();
    let oom = &report.findings[0];
    assert_eq!((oom.class.as_str(), oom.last.source), ("cuda.oom", 1));
}
