//! What the reports of every real log in the repository say for
//! themselves: the fixtures' captures and the wild corpus's logs from public
//! threads. A cause's evidence is something the log shows, with the line
//! that shows it; a cause nothing in the log moved has none (its rank is
//! the catalog's prior, and the report says so instead of giving a reason).

use cudnnlog::fleet::primary_finding;
use cudnnlog::report::{CauseBasis, FindingsSink};
use cudnnlog::{Catalog, Report, ScannerBuilder};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every log of `fixtures/`: the captures (`*.log`, not the scenario
/// scripts' directory) and the wild corpus's `log.txt` files.
fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "scenarios") {
            logs(&p, out);
        } else if p.extension().is_some_and(|x| x == "log")
            || p.file_name().is_some_and(|n| n == "log.txt")
        {
            out.push(p);
        }
    }
}

fn reports() -> Vec<(String, Report)> {
    let mut paths = Vec::new();
    logs(&root().join("fixtures"), &mut paths);
    paths.sort();
    assert!(paths.len() > 150, "fixtures missing: {}", paths.len());
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    paths
        .into_iter()
        .map(|p| {
            let mut sink = FindingsSink::new(scanner.catalog());
            let bytes = std::fs::read(&p).unwrap();
            scanner.scan_slice(&bytes, &mut sink).unwrap();
            let rel = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
            (rel, sink.into_report())
        })
        .collect()
}

/// `line 12`, `lines 3 and 9`, `line 4 of rank2.log`: where it was seen.
fn cites_a_line(evidence: &str) -> bool {
    let words: Vec<&str> = evidence.split_whitespace().collect();
    words
        .windows(2)
        .any(|w| matches!(w[0], "line" | "lines") && w[1].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn every_piece_of_evidence_names_the_line_that_shows_it() {
    let mut bare = Vec::new();
    let mut prior_only = 0;
    let mut primaries = 0;
    for (path, report) in reports() {
        for f in &report.findings {
            for c in &f.causes {
                for e in c.evidence.iter().filter(|e| !cites_a_line(e)) {
                    bare.push(format!("{path}: {} / {}: {e}", f.class, c.id));
                }
            }
        }
        let top = primary_finding(&report).and_then(|f| f.causes.first());
        if let Some(c) = top {
            primaries += 1;
            prior_only += usize::from(c.basis() == CauseBasis::Prior);
        }
    }
    assert!(
        bare.is_empty(),
        "evidence without its line:\n{}",
        bare.join("\n")
    );
    // The check has something to check: most primaries have a top cause,
    // and both kinds occur.
    assert!(primaries > 150 && prior_only > 0 && prior_only < primaries);
}
