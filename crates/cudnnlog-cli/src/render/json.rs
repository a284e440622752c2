//! `--format json`: the library's JSON document, pretty-printed — a
//! report (schema `cudnnlog.report/1`), or a fleet document with every
//! job's report and the summary (schema `cudnnlog.fleet/1`).

use super::{Ctx, Render};
use cudnnlog::fleet::FleetDocument;
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

    fn fleet(
        &self,
        mut out: &mut dyn Write,
        _: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        cudnnlog::json::pretty(&mut out, fleet)?;
        writeln!(out)?;
        Ok(())
    }

    fn keeps_reports(&self) -> bool {
        true
    }
}
