//! `--format ndjson`: the library's JSON lines. A report is one
//! `{"type":"finding",…}` line per finding, one per unclassified template,
//! then a `{"type":"summary",…}`; a fleet is a `{"type":"verdict",…}` line
//! as soon as each job is done, then the `{"type":"fleet_summary",…}`.
//! While one job is scanned, each finding's first match is announced at
//! once (`stream_sink`).

use super::{Ctx, Render};
use cudnnlog::fleet::{FleetDocument, Verdict};
use cudnnlog::ndjson::{FleetSummary, Message};
use cudnnlog::Report;
use std::io::Write;

/// The NDJSON renderer.
pub struct Ndjson;

impl Render for Ndjson {
    fn report(&self, out: &mut dyn Write, _: &Ctx<'_>, report: &Report) -> anyhow::Result<()> {
        for message in cudnnlog::ndjson::report_messages(report) {
            message.write_line(&mut *out)?;
        }
        Ok(())
    }

    /// The verdicts were written as the jobs were done: the summary.
    fn fleet(&self, out: &mut dyn Write, _: &Ctx<'_>, fleet: &FleetDocument) -> anyhow::Result<()> {
        Message::FleetSummary(FleetSummary::of(&fleet.summary)).write_line(&mut *out)?;
        Ok(())
    }

    fn streams(&self) -> bool {
        true
    }

    fn verdict(&self, out: &mut dyn Write, verdict: &Verdict) -> anyhow::Result<()> {
        Message::Verdict(verdict).write_line(&mut *out)?;
        // A pipeline reads each verdict as soon as its job is done.
        out.flush()?;
        Ok(())
    }
}
