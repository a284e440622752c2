//! Every output format, behind one [`Render`] trait and one registry
//! ([`renderer`]): a file per format, each with its report form (one job)
//! and its fleet form (many jobs' verdicts and summary). The answer-first
//! table ([`table`]), the compact lines for pipes ([`compact`]), JSON and
//! NDJSON (the library's, [`json`] and [`ndjson`]), Markdown for tickets
//! ([`markdown`]), the HTML post-mortem page ([`html`]), GitHub
//! annotations ([`github`]), JUnit ([`junit`]) and Prometheus metrics
//! ([`prometheus`]); and what they share.
//! Text from a log never reaches the terminal with its control
//! characters: [`sanitize`] replaces them. The words of the human formats
//! (compact lines, Markdown, the fleet's headline) are the library's
//! ([`cudnnlog::render`]), so an embedder prints what the CLI prints.
//!
//! A new format is a [`Format`] variant, a file here that implements
//! [`Render`], and its line in [`renderer`].

pub mod ci_formats;
pub mod compact;
pub mod github;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod ndjson;
pub mod prometheus;
pub mod table;

pub(crate) use cudnnlog::render::{
    carries, clip, counts, folded, plural, seen, shown_environment, skips, TABLE_TEMPLATES,
};
pub use cudnnlog::render::{sanitize, sanitize_line};
pub use table::table;

/// The last line of one job's human report when the walk of directories
/// left files out: `skipped 2 files: 1 binary, 1 not a log by name`.
pub(crate) fn skips_footer(out: &mut impl Write, ctx: &Ctx<'_>) -> std::io::Result<()> {
    match skips(ctx.skipped) {
        Some(line) => writeln!(out, "{line}"),
        None => Ok(()),
    }
}

use crate::args::Format;
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::fleet::{FleetDocument, Verdict};
use cudnnlog::report::Report;
use std::collections::BTreeMap;
use std::io::Write;

/// The renderer of `format`: the one place a format is mapped to its code.
pub fn renderer(format: Format) -> &'static dyn Render {
    match format {
        Format::Table => &table::Table,
        Format::Compact => &compact::Compact,
        Format::Json => &json::Json,
        Format::Ndjson => &ndjson::Ndjson,
        Format::Markdown => &markdown::Markdown,
        Format::Github => &github::Github,
        Format::Junit => &junit::Junit,
        Format::Html => &html::Html,
        Format::Prometheus => &prometheus::Prometheus,
    }
}

/// What a renderer is given besides what it renders.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The catalog scanned with: class and cause titles.
    pub catalog: &'a Catalog,
    /// Colour, width and verbosity (for the human formats).
    pub style: &'a Style,
    /// What the walk of directories left out, by reason: the human
    /// formats' footer of one job's report says so ([`skips`]); a fleet's
    /// summary carries it.
    pub skipped: &'a BTreeMap<String, u64>,
}

/// One output format: how it writes one job's report, and a fleet's
/// verdicts and summary.
pub trait Render: Sync {
    /// Writes one job's report.
    fn report(&self, out: &mut dyn Write, ctx: &Ctx<'_>, report: &Report) -> anyhow::Result<()>;

    /// Writes what a fleet scan comes to, once every job is done: its jobs
    /// (whole reports only where [`keeps_reports`](Render::keeps_reports);
    /// none where the format [`streams`](Render::streams)) and summary.
    fn fleet(
        &self,
        out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()>;

    /// Whether the fleet form needs every job's whole report; otherwise a
    /// job's verdict is kept and its report dropped as soon as it is done.
    fn keeps_reports(&self) -> bool {
        false
    }

    /// Whether the fleet form needs only the summary's counts: no job is
    /// kept, whatever the number of jobs ([`prometheus`]).
    fn counts_only(&self) -> bool {
        false
    }

    /// For a fleet form that shows only part of a large fleet (a page):
    /// how much of it, in [`shown_order`]. Only the jobs it shows are
    /// kept, so what a fleet scan holds is bounded whatever the number of
    /// jobs; the others are counted in the summary. `None` (the default):
    /// every job is kept, its verdict or, where
    /// [`keeps_reports`](Render::keeps_reports), its whole report.
    fn shows_at_most(&self) -> Option<Shown> {
        None
    }

    /// Whether the format writes as things are found: a job's findings as
    /// soon as each is first seen, a fleet job's verdict ([`verdict`](
    /// Render::verdict)) as soon as the job is done.
    fn streams(&self) -> bool {
        false
    }

    /// Whether the fleet form writes each job's verdict
    /// ([`verdict`](Render::verdict)) in input order as the jobs are done,
    /// then the summary ([`fleet`](Render::fleet), given no jobs): nothing
    /// of a job is kept once it is written.
    fn in_order(&self) -> bool {
        false
    }

    /// For a format that writes [`in_order`](Render::in_order): what
    /// comes before the first job.
    fn begin(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        let _ = out;
        Ok(())
    }

    /// For a format that writes [`in_order`](Render::in_order): one job,
    /// when its turn comes (`first`: no job was written before it). Its
    /// [`verdict`](Render::verdict) by default.
    fn job(
        &self,
        out: &mut dyn Write,
        ctx: &Ctx<'_>,
        first: bool,
        job: &cudnnlog::fleet::Triaged,
    ) -> anyhow::Result<()> {
        let _ = (ctx, first);
        self.verdict(out, &job.verdict)
    }

    /// Writes one fleet job's verdict as soon as the job is done, for a
    /// format that [`streams`](Render::streams).
    fn verdict(&self, out: &mut dyn Write, verdict: &Verdict) -> anyhow::Result<()> {
        let _ = (out, verdict);
        Ok(())
    }
}

/// How much of a fleet a page shows ([`Render::shows_at_most`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    /// The first jobs in [`shown_order`] listed, a verdict each.
    pub rows: usize,
    /// The first failed or degraded jobs shown whole, with their reports.
    pub reports: usize,
}

/// The order a page lists a fleet's jobs in: failed jobs first, then
/// degraded, unreadable and clean ones, each in input order (`index`).
/// Whether a job is shown whole: its first part is under 2.
///
/// ```ignore
/// assert!(shown_order(&failed, 7) < shown_order(&clean, 0));
/// ```
pub fn shown_order(v: &Verdict, index: usize) -> (u8, usize) {
    use cudnnlog::report::Outcome;
    let rank = match v.outcome {
        Some(Outcome::Failed) => 0,
        Some(Outcome::Degraded) => 1,
        None => 2,
        Some(Outcome::Clean) => 3,
    };
    (rank, index)
}

/// How to write a human report.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Colour (already decided for the stream).
    pub color: bool,
    /// Columns to fit in.
    pub width: usize,
    /// `-v`: every cause, remediation and the whole message.
    pub verbose: bool,
}

pub(crate) struct Paint {
    pub(crate) on: bool,
}

impl Paint {
    pub(crate) fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    pub(crate) fn severity(&self, s: Severity) -> String {
        match s {
            Severity::Error => self.wrap("1;31", "error"),
            Severity::Warning => self.wrap("33", "warning"),
        }
    }
}
