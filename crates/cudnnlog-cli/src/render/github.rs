//! `--format github`: GitHub Actions workflow commands, an annotation per
//! finding on its file and line; a fleet, every job's in turn.
//!
//! A workflow command is one line whatever the log holds, so a log cannot
//! issue commands of its own (such as `::add-mask::` or
//! `::stop-commands::`).

use super::ci_formats::{clean, clip, top_cause, MESSAGE_CHARS};
use super::{Ctx, Render};
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::fleet::FleetDocument;
use cudnnlog::report::{Finding, Report};
use std::io::Write;

/// The GitHub renderer.
pub struct Github;

impl Render for Github {
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        Ok(github(&mut out, report, ctx.catalog)?)
    }

    /// Every job's annotations in turn (those of jobs given here; the
    /// others were written as their turn came, [`job`](Render::job)).
    fn fleet(
        &self,
        out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        for t in &fleet.jobs {
            self.job(out, ctx, false, t)?;
        }
        Ok(())
    }

    /// A job's annotations in input order as the jobs are done: no report
    /// is kept once written (each was, until the end).
    fn in_order(&self) -> bool {
        true
    }

    fn job(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        _: bool,
        job: &cudnnlog::fleet::Triaged,
    ) -> anyhow::Result<()> {
        Ok(github(&mut out, &job.report, ctx.catalog)?)
    }
}

/// A workflow command's data (after `::`): `%`, `\r`, `\n` escaped.
pub(super) fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: as data, and `:` and `,` too.
pub(super) fn gh_property(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The path of a finding's source, when it is a file.
fn source_path<'r>(report: &'r Report, f: &Finding) -> Option<&'r str> {
    let p = report.sources.get(f.first.source)?.path.as_str();
    let pseudo = p.starts_with('<') && p.ends_with('>');
    (!p.is_empty() && !pseudo).then_some(p)
}

/// Writes one GitHub Actions workflow command per finding, to annotate the
/// run: `::error file=PATH,line=N,title=CLASS — TITLE::MESSAGE` (a
/// warning finding as `::warning`). The message is the finding's first
/// line, its likely cause and the first thing to do, on lines of their own
/// (`%0A`). Paths that are not files (`<stdin>`) give no `file` nor `line`.
/// A clean report writes nothing.
pub fn github(out: &mut impl Write, report: &Report, catalog: &Catalog) -> std::io::Result<()> {
    for f in &report.findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = Vec::new();
        if let Some(p) = source_path(report, f) {
            props.push(format!("file={}", gh_property(&clean(p, false))));
            props.push(format!("line={}", f.first.line));
        }
        let title = format!("{} — {}", f.class, f.title);
        props.push(format!("title={}", gh_property(&clean(&title, false))));
        let mut lines = vec![clip(&clean(&f.message, false), MESSAGE_CHARS)];
        if f.count > 1 {
            lines.push(format!(
                "Seen {} times (first at line {}).",
                f.count, f.first.line
            ));
        }
        if let Some(c) = f.caused_by.and_then(|i| report.findings.get(i)) {
            lines.push(format!(
                "Fallout of {} (line {}): fix that first.",
                c.class, c.first.line
            ));
        }
        if let Some(c) = top_cause(f, catalog) {
            lines.push(c);
        }
        if let Some(r) = f.remediations.first() {
            lines.push(format!("What to do: {}", clean(r, false)));
        }
        let message: Vec<String> = lines.iter().map(|l| clean(l, false)).collect();
        writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            gh_data(&message.join("\n"))
        )?;
    }
    Ok(())
}
