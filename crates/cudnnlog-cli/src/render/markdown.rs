//! `--format markdown`: the report, or a fleet's verdicts and groups, as
//! Markdown to paste into an issue or an incident ticket. The Markdown is
//! the library's ([`cudnnlog::render::markdown`], which says how log text
//! is kept from creating markup); this is its renderer.

use super::{Ctx, Render};
use cudnnlog::fleet::FleetDocument;
use cudnnlog::render::markdown;
pub use cudnnlog::render::markdown::{code_span, split_code_spans};
use cudnnlog::report::Report;
use std::io::Write;

/// The Markdown renderer.
pub struct Markdown;

impl Render for Markdown {
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        Ok(markdown::report(&mut out, report, ctx.catalog)?)
    }

    fn fleet(
        &self,
        mut out: &mut dyn Write,
        _: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        Ok(markdown::fleet(&mut out, &fleet.jobs, &fleet.summary)?)
    }

    /// The first [`super::table::TABLE_JOBS`] jobs, the failed first: a
    /// ticket of 100,000 rows is no answer, and only the rows listed are
    /// kept.
    fn shows_at_most(&self) -> Option<super::Shown> {
        Some(super::Shown {
            rows: super::table::TABLE_JOBS,
            reports: 0,
        })
    }
}
