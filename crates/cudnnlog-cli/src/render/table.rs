//! `--format table`, the default on a terminal: the human-readable report,
//! answer first — a verdict block (what failed, where, why, what to do),
//! then the details: the findings table, the environment, every error's
//! causes and remediations — and a fleet as a table of jobs, then the
//! largest fingerprint groups; all sized to the terminal. Piped,
//! [`compact`](super::compact) writes lines instead, as rg and ruff do.

use super::{
    carries, clip, folded, plural, sanitize, sanitize_line, seen, shown_environment, Ctx, Paint,
    Render, Style, TABLE_TEMPLATES,
};
use crate::term::{self, columns, remediation, wrap};
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::fleet::{primary_finding, FleetDocument};
use cudnnlog::render::PRIORS_ONLY;
use cudnnlog::report::{Finding, Outcome, Report, PRIOR_ONLY};
use std::io::Write;

mod fleet;
pub use fleet::fleet;

/// Causes and remediations shown per finding without `-v`; JSON and `-v`
/// carry them all.
const SHOWN: usize = 3;
/// Longest message shown without `-v`, in characters.
const MESSAGE: usize = 300;

/// Lines of the verdict's "why" before it is clipped.
const WHY_LINES: usize = 3;
/// Lines of the verdict's "who" (the culprit) before it is clipped.
const WHO_LINES: usize = 2;
/// A fleet's table lists at most this many jobs, the failed first: more
/// rows are no answer on a terminal, and each row kept until the end cost
/// about 2 KiB (50,000 jobs took 133 MiB).
pub const TABLE_JOBS: usize = 1000;

/// The table renderer.
pub struct Table;

impl Render for Table {
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        human(&mut out, report, ctx.catalog, ctx.style)?;
        Ok(super::skips_footer(&mut out, ctx)?)
    }

    fn fleet(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        Ok(self::fleet(
            &mut out,
            &fleet.jobs,
            &fleet.summary,
            ctx.style,
        )?)
    }

    /// The first [`TABLE_JOBS`] jobs, the failed first: only those are kept.
    fn shows_at_most(&self) -> Option<super::Shown> {
        Some(super::Shown {
            rows: TABLE_JOBS,
            reports: 0,
        })
    }
}

fn ranks(f: &Finding) -> String {
    if f.ranks.is_empty() {
        return "-".into();
    }
    let shown: Vec<String> = f.ranks.iter().take(8).map(|r| r.to_string()).collect();
    let more = if f.ranks.len() > 8 {
        format!(" +{}", f.ranks.len() - 8)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(","))
}

/// Writes the human report for the `run` wrapper, on standard error.
pub fn table(
    out: &mut impl Write,
    report: &Report,
    catalog: &Catalog,
    color: bool,
) -> std::io::Result<()> {
    let style = Style {
        color,
        width: term::width(term::Stream::Stderr),
        verbose: false,
    };
    human(out, report, catalog, &style)
}

/// Writes the human report: the verdict block, then the details.
pub fn human(
    out: &mut impl Write,
    report: &Report,
    catalog: &Catalog,
    style: &Style,
) -> std::io::Result<()> {
    let view = View {
        report,
        catalog,
        style,
        paint: &Paint { on: style.color },
    };
    verdict(out, &view)?;
    details(out, &view)
}

/// What every part of one human report is written from and with.
#[derive(Clone, Copy)]
struct View<'a> {
    report: &'a Report,
    catalog: &'a Catalog,
    style: &'a Style,
    paint: &'a Paint,
}

/// The answer, in a few lines: what failed and where, who (the culprit
/// rank), why (the top cause and its key evidence), what to fix (the
/// first remediation, its commands on lines of their own), what to do with
/// the job (retry, stop or investigate, and why).
fn verdict(out: &mut impl Write, view: &View<'_>) -> std::io::Result<()> {
    let View {
        report,
        catalog,
        style,
        paint,
    } = *view;
    let width = style.width;
    let lines: u64 = report.sources.iter().map(|s| s.lines).sum();
    let Some(f) = primary_finding(report) else {
        let what = format!(
            "no failure found: {lines} line{} scanned, no finding",
            plural(lines as usize)
        );
        writeln!(out, "{}", paint.wrap("1;32", &what))?;
        return Ok(());
    };
    let head = if report.outcome == Outcome::Degraded {
        format!(
            "primary warning: {} — {} (warnings only: the run went on)",
            paint.wrap("1;33", &f.class),
            sanitize(&f.title)
        )
    } else {
        format!(
            "primary failure: {} — {}",
            paint.wrap("1;31", &f.class),
            sanitize(&f.title)
        )
    };
    writeln!(out, "{head}")?;
    let at = first_at(report, f);
    for line in wrap(&at, width, "  at:  ", "       ") {
        writeln!(out, "{line}")?;
    }
    if let Some(c) = &f.culprit {
        let reason = sanitize(&c.reason);
        // The reason names the rank itself most often.
        let who = if reason.starts_with("rank") {
            reason
        } else {
            format!("{} — {reason}", ranks_named(c))
        };
        clipped(
            out,
            wrap(&who, width, "  who: ", "       "),
            WHO_LINES,
            width,
        )?;
    }
    if let Some(c) = f.causes.first() {
        let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
        // Evidence that only repeats the culprit's reason: the title says more.
        let repeats = |e: &&String| f.culprit.as_ref().is_some_and(|k| e.contains(&k.reason));
        let why = match c.evidence.first() {
            // A prior is no reason: say what it is.
            None => format!("{} — {title}: {PRIOR_ONLY}", c.id),
            Some(e) if repeats(&e) => format!("{} ({:.0}%): {title}", c.id, c.confidence * 100.0),
            Some(e) => format!("{} ({:.0}%): {}", c.id, c.confidence * 100.0, sanitize(e)),
        };
        clipped(
            out,
            wrap(&why, width, "  why: ", "       "),
            WHY_LINES,
            width,
        )?;
    }
    if let Some(r) = f.remediations.first() {
        for line in remediation(&sanitize(r), width, "  fix: ", "       ") {
            writeln!(out, "{line}")?;
        }
    }
    if let (Some(a), Some(because)) = (report.action, &report.retryable_because) {
        let job = format!("{} — {}", paint.wrap("1", a.as_str()), sanitize(because));
        clipped(
            out,
            wrap(&job, width, "  job: ", "       "),
            WHY_LINES,
            width,
        )?;
    }
    Ok(())
}

/// At most `max` of `lines`, the last ending in `…` when some were left.
fn clipped(
    out: &mut impl Write,
    lines: Vec<String>,
    max: usize,
    width: usize,
) -> std::io::Result<()> {
    let n = lines.len();
    for (i, line) in lines.into_iter().take(max).enumerate() {
        if i + 1 == max && n > max {
            let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
            cut.push('…');
            writeln!(out, "{cut}")?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Everything after the verdict: the findings table, the environment,
/// unclassified templates, cross-run notes, then each error's details.
fn details(out: &mut impl Write, view: &View<'_>) -> std::io::Result<()> {
    let View {
        report,
        catalog: _,
        style,
        paint,
    } = *view;
    let width = style.width;
    let bytes: u64 = report.sources.iter().map(|s| s.bytes).sum();
    let lines: u64 = report.sources.iter().map(|s| s.lines).sum();
    let (errors, warnings) = super::counts(report);
    writeln!(out)?;
    let scanned = format!(
        "scanned {} source{} ({} bytes, {} lines): {} error finding{}, {} warning{}",
        report.sources.len(),
        plural(report.sources.len()),
        bytes,
        lines,
        errors,
        plural(errors),
        warnings,
        plural(warnings),
    );
    for line in wrap(&scanned, width, "", "  ") {
        writeln!(out, "{line}")?;
    }
    if !report.findings.is_empty() {
        findings_list(out, report, width, paint)?;
    }
    environment(out, report, width)?;
    unclassified(out, report, width)?;
    for note in &report.cross_run {
        let runs: Vec<&str> = note
            .runs
            .iter()
            .filter_map(|&i| report.sources.get(i).map(|s| s.path.as_str()))
            .collect();
        let text = format!(
            "{} [{}]",
            sanitize(&note.detail),
            sanitize(&runs.join(", "))
        );
        for line in wrap(&text, width, "across runs: ", "  ") {
            writeln!(out, "{line}")?;
        }
    }
    let primary = primary_finding(report).map(|p| p as *const Finding);
    let degraded = report.outcome == Outcome::Degraded;
    for f in report.findings.iter().filter(|f| {
        !folded(report, f)
            && (f.severity == Severity::Error
                || (degraded && Some(&f.class) == report.primary.as_ref()))
    }) {
        let is_primary = primary == Some(f as *const Finding);
        writeln!(out)?;
        finding(out, view, f, is_primary)?;
    }
    Ok(())
}

/// The findings, two lines each: a mark (✗ error, ! warning, ○ fallout),
/// the class, the count and where it was first seen, then the message on
/// one line, clipped to the width.
fn findings_list(
    out: &mut impl Write,
    report: &Report,
    width: usize,
    paint: &Paint,
) -> std::io::Result<()> {
    let multi = report.sources.len() > 1;
    let class_width = report
        .findings
        .iter()
        .map(|f| columns(&f.class))
        .max()
        .unwrap_or(0)
        .min(28);
    for (index, f) in report.findings.iter().enumerate() {
        if folded(report, f) {
            continue;
        }
        let fallout = f.caused_by.and_then(|i| report.findings.get(i));
        let mark = match (fallout, f.severity) {
            (Some(_), _) => paint.wrap("2", "○"),
            (None, Severity::Error) => paint.wrap("1;31", "✗"),
            (None, Severity::Warning) => paint.wrap("33", "!"),
        };
        let mut place = if multi {
            format!(
                "{}: {}",
                sanitize_line(&report.sources[f.first.source].path),
                seen(&f.first)
            )
        } else {
            seen(&f.first)
        };
        if !f.ranks.is_empty() {
            place.push_str(&format!(
                ", rank{} {}",
                if f.ranks.len() == 1 { "" } else { "s" },
                ranks(f)
            ));
        }
        if let Some(c) = fallout {
            place.push_str(&format!(" (fallout of {})", c.class));
        }
        place.push_str(&carries(report, index));
        let pad = " ".repeat(class_width.saturating_sub(columns(&f.class)));
        let lead = format!("  {mark} {}{pad} {:>4}×  ", f.class, f.count);
        let lead_width = 2 + 2 + class_width.max(columns(&f.class)) + 1 + 5 + 2;
        let indent = " ".repeat(lead_width);
        for (i, line) in wrap(&place, width.saturating_sub(lead_width).max(20), "", "")
            .into_iter()
            .enumerate()
        {
            if i == 0 {
                writeln!(out, "{lead}{line}")?;
            } else {
                writeln!(out, "{indent}{line}")?;
            }
        }
        writeln!(
            out,
            "      {}",
            clip(&f.message, width.saturating_sub(6).max(20))
        )?;
    }
    Ok(())
}

/// The culprit's ranks as a phrase: `rank 3`, `ranks 1, 2`.
fn ranks_named(c: &cudnnlog::report::Culprit) -> String {
    let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
    let noun = if c.ranks.len() == 1 { "rank" } else { "ranks" };
    format!("{noun} {}", ranks.join(", "))
}

/// One error's details: where, its message, the culprit, the likely
/// causes and what to do. For the primary finding the first remediation
/// was the verdict's, so the list goes on from the second.
fn finding(
    out: &mut impl Write,
    view: &View<'_>,
    f: &Finding,
    is_primary: bool,
) -> std::io::Result<()> {
    let View {
        report,
        catalog,
        style,
        paint,
    } = *view;
    let width = style.width;
    if let Some(cause) = f.caused_by.and_then(|i| report.findings.get(i)) {
        let head = format!(
            "{} {} — {} ({}, {}×): fallout of {} at line {}",
            paint.wrap("2", "○"),
            f.class,
            sanitize(&f.title),
            paint.severity(f.severity),
            f.count,
            cause.class,
            cause.first.line
        );
        for line in wrap(&head, width, "", "  ") {
            writeln!(out, "{line}")?;
        }
        if let Some(why) = f
            .causes
            .iter()
            .flat_map(|c| &c.evidence)
            .find(|e| e.starts_with("follows "))
        {
            for line in wrap(&sanitize(why), width, "  ", "  ") {
                writeln!(out, "{line}")?;
            }
        }
        return Ok(());
    }
    writeln!(
        out,
        "{} {} — {} ({}, {}×)",
        paint.wrap("1", "●"),
        paint.wrap("1", &f.class),
        sanitize(&f.title),
        paint.severity(f.severity),
        f.count
    )?;
    let first = format!("first at {}", first_at(report, f));
    for line in wrap(&first, width, "  ", "    ") {
        writeln!(out, "{line}")?;
    }
    if f.count > 1 {
        writeln!(
            out,
            "  last at line {}",
            seen(&f.last).trim_start_matches("line ")
        )?;
    }
    let message = if style.verbose {
        sanitize(&f.message).replace('\n', " ")
    } else {
        clip(&f.message, MESSAGE)
    };
    for line in wrap(&message, width, "  ", "  ") {
        writeln!(out, "{line}")?;
    }
    if let Some(c) = &f.culprit {
        writeln!(out, "  {} {}", paint.wrap("1", "at fault:"), ranks_named(c))?;
        for line in wrap(&sanitize(&c.reason), width, "    ", "    ") {
            writeln!(out, "{line}")?;
        }
        for e in &c.evidence {
            let text = format!("line {}: {}", e.line, clip(&e.text, 200));
            for line in wrap(&text, width, "    · ", "      ") {
                writeln!(out, "{line}")?;
            }
        }
    }
    let causes = if style.verbose { f.causes.len() } else { SHOWN };
    if !f.causes.is_empty() {
        if f.causes.iter().all(|c| c.evidence.is_empty()) {
            writeln!(out, "  likely causes ({PRIORS_ONLY}):")?;
        } else {
            writeln!(out, "  likely causes:")?;
        }
        for c in f.causes.iter().take(causes) {
            let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
            let head = format!("{} — {}", c.id, title);
            let lead = format!("    {:>3.0}%  ", c.confidence * 100.0);
            for line in wrap(&head, width, &lead, "           ") {
                writeln!(out, "{line}")?;
            }
            for e in &c.evidence {
                for line in wrap(&sanitize(e), width, "           · ", "             ") {
                    writeln!(out, "{line}")?;
                }
            }
        }
        if f.causes.len() > causes {
            writeln!(out, "    … {} more with -v", f.causes.len() - causes)?;
        }
    }
    let skip = usize::from(is_primary);
    // Without -v, SHOWN remediations in all, the verdict's counted.
    let shown = if style.verbose {
        f.remediations.len()
    } else {
        SHOWN - skip
    };
    let rest: Vec<(usize, &String)> = f.remediations.iter().enumerate().skip(skip).collect();
    if !rest.is_empty() {
        writeln!(
            out,
            "  {}",
            if is_primary {
                "what else to do:"
            } else {
                "what to do:"
            }
        )?;
        for (i, r) in rest.iter().take(shown) {
            let lead = format!("    {}. ", i + 1);
            let pad = " ".repeat(columns(&lead));
            for line in remediation(&sanitize(r), width, &lead, &pad) {
                writeln!(out, "{line}")?;
            }
        }
        if rest.len() > shown {
            writeln!(out, "    … {} more with -v", rest.len() - shown)?;
        }
    }
    Ok(())
}

/// Error lines no pattern explains, as templates with counts.
fn unclassified(out: &mut impl Write, report: &Report, width: usize) -> std::io::Result<()> {
    if report.unclassified.is_empty() {
        return Ok(());
    }
    let total: u64 = report.unclassified.iter().map(|t| t.count).sum();
    let head = format!(
        "unclassified errors: {total} line{} in {} template{} (no pattern explains them; `cudnnlog patterns suggest` drafts one)",
        plural(total as usize),
        report.unclassified.len(),
        plural(report.unclassified.len())
    );
    for line in wrap(&head, width, "", "  ") {
        writeln!(out, "{line}")?;
    }
    for t in report.unclassified.iter().take(TABLE_TEMPLATES) {
        let lead = format!("  {:>6}×  line {:<7} ", t.count, t.first.line);
        let room = width.saturating_sub(columns(&lead)).max(20);
        writeln!(out, "{lead}{}", clip(&t.template, room))?;
    }
    if report.unclassified.len() > TABLE_TEMPLATES {
        writeln!(
            out,
            "  … {} more with --format json",
            report.unclassified.len() - TABLE_TEMPLATES
        )?;
    }
    Ok(())
}

/// The environment the log shows, `field value` pairs wrapped to the width;
/// several values of one field are listed together (two cuDNN copies are
/// themselves evidence).
fn environment(out: &mut impl Write, report: &Report, width: usize) -> std::io::Result<()> {
    if report.environment.is_empty() {
        return Ok(());
    }
    let pairs: Vec<String> = shown_environment(report)
        .into_iter()
        .map(|(k, v, several)| {
            let several = if several { " (several)" } else { "" };
            format!("{k} {}{several}", sanitize(&v))
        })
        .collect();
    if pairs.is_empty() {
        return Ok(());
    }
    for line in wrap(&pairs.join(" · "), width, "environment: ", "  ") {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Where a finding was first seen, as `path:line, time, step`.
fn first_at(report: &Report, f: &Finding) -> String {
    let source = report
        .sources
        .get(f.first.source)
        .map_or("?", |s| s.path.as_str());
    format!(
        "{}:{}",
        sanitize_line(source),
        seen(&f.first).trim_start_matches("line ")
    )
}
