//! `Tee`: one scan, two sinks; each gets what it would alone, in a single
//! pass and in parallel chunks; one that stops does not stop the other.

use cudnnlog::report::FindingsSink;
use cudnnlog::sink::{Fork, Match, Sink, Tee};
use cudnnlog::{Catalog, Report, ScannerBuilder};

const LOG: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log");

fn alone(log: &[u8]) -> Report {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(log, &mut sink).unwrap();
    sink.into_report()
}

/// Counts matches, and asks to stop after `stop_after` of them.
struct Counter {
    seen: usize,
    stop_after: usize,
}

impl Sink for Counter {
    type Error = cudnnlog::Error;

    fn matched(&mut self, _m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
        self.seen += 1;
        Ok(self.seen < self.stop_after)
    }
}

impl Fork for Counter {
    fn fork(&self) -> Counter {
        Counter {
            seen: 0,
            stop_after: self.stop_after,
        }
    }

    fn join(&mut self, other: Counter) {
        self.seen += other.seen;
    }
}

#[test]
fn both_sinks_get_the_whole_scan() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut tee = Tee::new(
        FindingsSink::new(scanner.catalog()),
        FindingsSink::new(scanner.catalog()),
    );
    scanner.scan_slice(LOG, &mut tee).unwrap();
    let (a, b) = tee.into_inner();
    let whole = alone(LOG);
    assert!(!whole.findings.is_empty());
    assert_eq!(a.into_report(), whole);
    assert_eq!(b.into_report(), whole);
}

#[test]
fn a_sink_that_stops_does_not_stop_the_other() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let counter = Counter {
        seen: 0,
        stop_after: 1,
    };
    let mut tee = Tee::new(counter, FindingsSink::new(scanner.catalog()));
    scanner.scan_slice(LOG, &mut tee).unwrap();
    let (counter, sink) = tee.into_inner();
    assert_eq!(counter.seen, 1, "not fed after it stopped");
    assert_eq!(sink.into_report(), alone(LOG));
}

#[test]
fn forks_of_a_tee_join_into_what_one_pass_gives() {
    let mut log = LOG.repeat(3);
    log.extend_from_slice(include_bytes!(
        "../../../fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log"
    ));
    let scanner = ScannerBuilder::new()
        .chunk_size(4096)
        .build(Catalog::builtin().unwrap());
    let counter = Counter {
        seen: 0,
        stop_after: usize::MAX,
    };
    let mut tee = Tee::new(FindingsSink::new(scanner.catalog()), counter);
    scanner
        .scan_slice_parallel(&log, &mut tee, &|_| {})
        .unwrap();
    let (sink, counter) = tee.into_inner();
    let report = sink.into_report();
    assert_eq!(report, alone(&log));
    let matches: u64 = report.findings.iter().map(|f| f.count).sum();
    assert_eq!(counter.seen as u64, matches);
}
