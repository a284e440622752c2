//! `--format junit`: JUnit XML, a test case per job (one for a report,
//! one per job for a fleet), failed when the job failed.
//!
//! The XML is well-formed whatever the log holds: escaped, with the
//! characters XML 1.0 forbids removed.

use super::ci_formats::{clean, clip, top_cause, MESSAGE_CHARS};
use super::{Ctx, Render};
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::fleet::FleetDocument;
use cudnnlog::report::{Finding, Outcome, Report};
use std::io::Write;

/// The most remediations a JUnit failure lists (the report has them all).
const REMEDIATIONS: usize = 5;

/// The JUnit renderer.
pub struct Junit;

impl Render for Junit {
    /// One test case, named by the report's sources.
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        let name = report
            .sources
            .iter()
            .map(|s| s.path.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        Ok(junit(&mut out, &[(name.as_str(), report)], ctx.catalog)?)
    }

    /// A test case per job, named by the job.
    fn fleet(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        let jobs: Vec<(&str, &Report)> = fleet
            .jobs
            .iter()
            .map(|t| (t.verdict.path.as_str(), &t.report))
            .collect();
        Ok(junit(&mut out, &jobs, ctx.catalog)?)
    }

    fn keeps_reports(&self) -> bool {
        true
    }
}

/// Text for XML 1.0 content or an attribute value: `& < > " '` escaped,
/// the characters XML 1.0 forbids (and the other control characters)
/// removed; line breaks kept in content (`lines`), made spaces in
/// attributes.
fn xml(s: &str, lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' if lines => out.push('\n'),
            '\n' | '\t' => out.push(' '),
            '\u{fffe}' | '\u{ffff}' => {}
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A finding as lines of a failure's body or of `system-out`.
fn finding_lines(f: &Finding, catalog: &Catalog, detail: bool) -> Vec<String> {
    let mut lines = vec![format!(
        "{} {} — {} (line {}, {}×)",
        f.severity.as_str(),
        f.class,
        f.title,
        f.first.line,
        f.count
    )];
    lines.push(format!(
        "  {}",
        clip(&clean(&f.message, false), MESSAGE_CHARS)
    ));
    if detail {
        if let Some(c) = &f.culprit {
            let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
            lines.push(format!(
                "At fault: rank {} — {}",
                ranks.join(", "),
                c.reason
            ));
        }
        if let Some(c) = top_cause(f, catalog) {
            lines.push(c);
            for e in &f.causes[0].evidence {
                lines.push(format!("  {e}"));
            }
        }
        if !f.remediations.is_empty() {
            lines.push("What to do:".into());
            for (i, r) in f.remediations.iter().take(REMEDIATIONS).enumerate() {
                lines.push(format!("  {}. {r}", i + 1));
            }
        }
    }
    lines.iter().map(|l| clean(l, false)).collect()
}

/// Writes JUnit XML: one `<testsuite name="cudnnlog">` with one
/// `<testcase classname="cudnnlog" name=JOB>` per job. A failed job has a
/// `<failure message=… type=CLASS>` for its primary failure, whose body
/// holds the message, the likely cause and what to do; the other findings
/// of a failed job and the warnings of a degraded one (which passes) are in
/// the test case's `<system-out>`. A clean job passes with nothing to say.
pub fn junit(
    out: &mut impl Write,
    jobs: &[(&str, &Report)],
    catalog: &Catalog,
) -> std::io::Result<()> {
    let failures = jobs
        .iter()
        .filter(|(_, r)| r.outcome == Outcome::Failed)
        .count();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuite name="cudnnlog" tests="{}" failures="{failures}" errors="0" skipped="0">"#,
        jobs.len()
    )?;
    for (name, report) in jobs {
        let name = xml(&clean(name, false), false);
        let failed = (report.outcome == Outcome::Failed)
            .then(|| primary_error(report))
            .flatten();
        let others: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| !failed.is_some_and(|p| std::ptr::eq(*f, p)))
            .collect();
        if failed.is_none() && others.is_empty() {
            writeln!(out, r#"  <testcase classname="cudnnlog" name="{name}"/>"#)?;
            continue;
        }
        writeln!(out, r#"  <testcase classname="cudnnlog" name="{name}">"#)?;
        if let Some(f) = failed {
            let message = format!("{}: {}", f.class, clip(&clean(&f.message, false), 300));
            writeln!(
                out,
                r#"    <failure message="{}" type="{}">{}</failure>"#,
                xml(&message, false),
                xml(&clean(&f.class, false), false),
                xml(&finding_lines(f, catalog, true).join("\n"), true)
            )?;
        }
        if !others.is_empty() {
            let mut lines = Vec::new();
            for f in &others {
                lines.extend(finding_lines(f, catalog, failed.is_none()));
            }
            writeln!(
                out,
                "    <system-out>{}</system-out>",
                xml(&lines.join("\n"), true)
            )?;
        }
        writeln!(out, "  </testcase>")?;
    }
    writeln!(out, "</testsuite>")
}

/// The finding a failed job fails with: the primary one, else the first
/// error.
fn primary_error(report: &Report) -> Option<&Finding> {
    report
        .findings
        .iter()
        .find(|f| Some(&f.class) == report.primary.as_ref() && f.severity == Severity::Error)
        .or_else(|| {
            report
                .findings
                .iter()
                .find(|f| f.severity == Severity::Error)
        })
}
