//! A whole scan of arbitrary bytes, three ways: in memory, streamed in
//! small blocks, and in parallel chunks. No panic; in memory and in
//! parallel chunks give the same report.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::{report_of, scanner};
use cudnnlog::report::FindingsSink;
use cudnnlog::Report;
use libfuzzer_sys::fuzz_target;

fn report(f: impl FnOnce(&mut FindingsSink<'_>) -> cudnnlog::source::SourceInfo) -> Report {
    let mut sink = FindingsSink::new(scanner().catalog());
    f(&mut sink);
    report_of(sink)
}

fuzz_target!(|data: &[u8]| {
    let s = scanner();
    let slice = report(|sink| s.scan_slice(data, sink).unwrap());
    let stream = report(|sink| s.scan_reader("", data, sink).unwrap());
    let parallel = report(|sink| s.scan_slice_parallel(data, sink, &|_| {}).unwrap());
    assert_eq!(slice, parallel);
    let _ = stream;
    let _ = serde_json::to_string(&slice);
});
