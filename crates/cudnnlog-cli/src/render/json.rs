//! `--format json`: the library's JSON document, pretty-printed — a
//! report (schema `cudnnlog.report/1`), or a fleet document with every
//! job's report and the summary (schema `cudnnlog.fleet/1`).

use super::{Ctx, Render};
use cudnnlog::fleet::{FleetDocument, Triaged};
use cudnnlog::Report;
use std::io::Write;

/// The JSON renderer.
pub struct Json;

impl Render for Json {
    fn report(&self, mut out: &mut dyn Write, _: &Ctx<'_>, report: &Report) -> anyhow::Result<()> {
        cudnnlog::json::pretty(&mut out, report)?;
        writeln!(out)?;
        Ok(())
    }

    /// The end of the fleet document, whose start ([`begin`](Render::begin))
    /// and jobs ([`job`](Render::job), at least one: a fleet has a job)
    /// were written as they came; jobs given here too are written first.
    fn fleet(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        for job in &fleet.jobs {
            self.job(out, ctx, false, job)?;
        }
        out.write_all(b"\n  ],\n  \"summary\": ")?;
        write_indented(&mut out, &fleet.summary, "  ")?;
        out.write_all(b"\n}\n")?;
        Ok(())
    }

    /// The jobs of a fleet document are written in input order as they
    /// are done, the document byte for byte what one pretty-printing of
    /// it gives, and none kept (100,000 jobs held 815 MiB of reports).
    fn in_order(&self) -> bool {
        true
    }

    fn begin(&self, mut out: &mut dyn Write) -> anyhow::Result<()> {
        out.write_all(b"{\n  \"schema\": ")?;
        cudnnlog::json::pretty(&mut out, cudnnlog::fleet::SCHEMA)?;
        out.write_all(b",\n  \"jobs\": [")?;
        Ok(())
    }

    fn job(
        &self,
        mut out: &mut dyn Write,
        _: &Ctx<'_>,
        first: bool,
        job: &Triaged,
    ) -> anyhow::Result<()> {
        out.write_all(if first { b"\n    " } else { b",\n    " })?;
        write_indented(&mut out, job, "    ")?;
        Ok(())
    }
}

/// `value` pretty-printed as it would be nested in a document, every line
/// after its first indented by `indent` (a JSON string holds no line end,
/// so the lines are the printer's own).
fn write_indented<T: serde::Serialize>(
    out: &mut dyn Write,
    value: &T,
    indent: &str,
) -> anyhow::Result<()> {
    let mut text = Vec::new();
    cudnnlog::json::pretty(&mut text, value)?;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
            out.write_all(indent.as_bytes())?;
        }
        out.write_all(line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudnnlog::fleet::{group, scan_job, Summary};
    use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};

    /// The fleet document written job by job is byte for byte the one
    /// pretty-printed whole: a real failed job, a clean one and one that
    /// cannot be read.
    #[test]
    fn a_fleet_written_job_by_job_is_the_document_printed_whole() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let paths: Vec<_> = [
            "fixtures/real/h200-torch-oom-amp-train.log",
            "fixtures/real/h200-torch-healthy-train.log",
            "fixtures/real/missing.log",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
        let mut summary = Summary::default();
        let jobs: Vec<Triaged> = group(&paths)
            .iter()
            .map(|job| scan_job(&scanner, job, MmapChoice::never()))
            .inspect(|t| summary.add(&t.verdict))
            .collect();
        assert_eq!(jobs.len(), 3);
        let doc = FleetDocument {
            schema: cudnnlog::fleet::SCHEMA,
            jobs,
            summary: summary.finish(),
        };
        let mut whole = Vec::new();
        cudnnlog::json::pretty(&mut whole, &doc).unwrap();
        whole.push(b'\n');
        let style = crate::render::Style {
            color: false,
            width: 80,
            verbose: false,
        };
        let skipped = Default::default();
        let ctx = Ctx {
            catalog: scanner.catalog(),
            style: &style,
            skipped: &skipped,
        };
        let mut streamed = Vec::new();
        Json.begin(&mut streamed).unwrap();
        for (i, job) in doc.jobs.iter().enumerate() {
            Json.job(&mut streamed, &ctx, i == 0, job).unwrap();
        }
        let tail = FleetDocument {
            jobs: Vec::new(),
            ..doc
        };
        Json.fleet(&mut streamed, &ctx, &tail).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
    }
}
