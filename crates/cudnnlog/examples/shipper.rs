//! Embedding cudnnlog in a log shipper: each file (or standard input) is
//! streamed through a scanner, every match reaches a sink as soon as it is
//! confirmed, and a report is built at the end.
//!
//! ```text
//! cargo run -p cudnnlog --example shipper -- fixtures/real/h200-torch-oom-amp-train.log
//! zcat train.log.gz | cargo run -p cudnnlog --example shipper
//! ```

use cudnnlog::report::FindingsSink;
use cudnnlog::sink::{EnvFact, Location, Match, Sink};
use cudnnlog::{Catalog, ScannerBuilder};
use std::io::Write;

/// Forwards every match as it is found (a shipper would send it on), and
/// aggregates them into a report as well.
struct Forward<'c, W: Write> {
    out: W,
    findings: FindingsSink<'c>,
}

impl<W: Write> Sink for Forward<'_, W> {
    type Error = cudnnlog::Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
        let line = serde_json::json!({
            "class": m.class,
            "pattern": m.pattern.id,
            "line": m.location.line,
            "rank": m.location.rank,
            "message": m.message,
        });
        // A closed pipe stops the scan instead of failing it.
        if writeln!(self.out, "{line}").is_err() {
            return Ok(false);
        }
        self.findings.matched(m)
    }

    fn environment(&mut self, f: &EnvFact<'_>) -> Result<(), cudnnlog::Error> {
        self.findings.environment(f)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), cudnnlog::Error> {
        self.findings.unclassified(line, at)
    }

    fn window_end(&mut self, w: &cudnnlog::sink::Window<'_>) -> Result<(), cudnnlog::Error> {
        self.findings.window_end(w)
    }

    fn source_end(&mut self, info: &cudnnlog::source::SourceInfo) -> Result<(), cudnnlog::Error> {
        self.findings.source_end(info)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    let mut sink = Forward {
        out: std::io::stdout().lock(),
        findings: FindingsSink::new(scanner.catalog()),
    };
    match std::env::args_os().nth(1) {
        Some(path) => {
            let file = std::fs::File::open(&path)?;
            let (_, reader) = cudnnlog::source::decompressed(file)?;
            scanner.scan_reader(&path.to_string_lossy(), reader, &mut sink)?
        }
        None => {
            let (_, reader) = cudnnlog::source::decompressed(std::io::stdin())?;
            scanner.scan_reader("<stdin>", reader, &mut sink)?
        }
    };
    let report = sink.findings.into_report();
    writeln!(
        std::io::stderr(),
        "{} findings, primary: {}",
        report.findings.len(),
        report.primary.as_deref().unwrap_or("none")
    )?;
    Ok(())
}
