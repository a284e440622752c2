//! The examples of `report`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `sink::FindingsSink<'_>::into_findings`.
#[test]
fn findings_sink_into_findings() -> Result<(), Box<dyn std::error::Error>> {
    use crate::{diagnose::diagnose, report::FindingsSink, Catalog, ScannerBuilder};
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_slice(
            b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
            &mut sink,
        )
        .unwrap();
    let findings = sink.into_findings();
    assert_eq!(findings.len(), 1);
    let dx = diagnose(&findings, scanner.catalog());
    assert_eq!(dx.primary.as_deref(), Some("cuda.illegal_address"));
    Ok(())
}
