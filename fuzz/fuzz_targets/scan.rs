//! A whole scan of arbitrary bytes, three ways: in memory, streamed in
//! small blocks, and in parallel chunks. No panic; in memory and in
//! parallel chunks give the same report.
#![no_main]

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, Scanner, ScannerBuilder};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        ScannerBuilder::new()
            .block_size(4096)
            .context_before(1024)
            .context_after(1024)
            .lookback(1024)
            .chunk_size(777)
            .build(Catalog::builtin().expect("built-in catalog"))
    })
}

fn report(f: impl FnOnce(&mut FindingsSink<'_>) -> cudnnlog::source::SourceInfo) -> Report {
    let s = scanner();
    let mut sink = FindingsSink::new(s.catalog());
    let mut info = f(&mut sink);
    info.path = String::new();
    sink.into_report(vec![info])
}

fuzz_target!(|data: &[u8]| {
    let s = scanner();
    let slice = report(|sink| s.scan_slice(0, data, sink).unwrap());
    let stream = report(|sink| s.scan_reader(0, "", data, sink).unwrap());
    let parallel = report(|sink| s.scan_slice_parallel(0, data, sink, &|_| {}).unwrap());
    assert_eq!(slice, parallel);
    let _ = stream;
    let _ = serde_json::to_string(&slice);
});
