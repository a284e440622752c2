//! `--format compact`, the default when piped: the report as lines, as rg
//! and ruff write them, and a fleet as one line per job. The lines are the
//! library's ([`cudnnlog::render::compact`]); this is their renderer.

use super::{Ctx, Render};
use cudnnlog::fleet::{FleetDocument, Verdict};
use cudnnlog::render::compact::{fleet, job_line, report};
use cudnnlog::report::Report;
use std::io::Write;

/// The compact renderer.
pub struct Compact;

impl Render for Compact {
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        self::report(&mut out, report)?;
        Ok(super::skips_footer(&mut out, ctx)?)
    }

    fn fleet(
        &self,
        mut out: &mut dyn Write,
        _: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        Ok(self::fleet(&mut out, &fleet.jobs, &fleet.summary)?)
    }

    /// A line per job as the jobs are done, in input order: a pipe of
    /// 100,000 jobs holds none of them.
    fn in_order(&self) -> bool {
        true
    }

    fn verdict(&self, mut out: &mut dyn Write, verdict: &Verdict) -> anyhow::Result<()> {
        Ok(job_line(&mut out, verdict)?)
    }
}
