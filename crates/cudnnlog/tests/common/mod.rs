//! Helpers shared by the integration tests: scan bytes with the built-in
//! catalog, find a finding by class.

use cudnnlog::report::{Finding, FindingsSink};
use cudnnlog::{Catalog, Report, ScannerBuilder};

/// The report of one log scanned in memory with the built-in catalog.
pub fn report(log: &[u8]) -> Report {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(log, &mut sink).unwrap();
    sink.into_report()
}

/// The finding of `class`; panics with the report's findings when absent.
pub fn finding<'r>(r: &'r Report, class: &str) -> &'r Finding {
    r.findings
        .iter()
        .find(|f| f.class == class)
        .unwrap_or_else(|| panic!("no {class} in {:#?}", r.findings))
}

/// The fact `name` of the finding of `class`, as text; panics when absent.
#[allow(dead_code)] // not every test file reads facts
pub fn fact(r: &Report, class: &str, name: &str) -> String {
    let f = finding(r, class);
    f.facts
        .get(name)
        .map(ToString::to_string)
        .unwrap_or_else(|| panic!("no {name} in {:?}", f.facts))
}

/// Whether the report has a finding of `class`.
#[allow(dead_code)] // not every test file asks
pub fn has(r: &Report, class: &str) -> bool {
    r.findings.iter().any(|f| f.class == class)
}
