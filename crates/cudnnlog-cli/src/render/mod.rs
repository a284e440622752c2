//! Every output format, behind one [`Render`] trait and one registry
//! ([`renderer`]): a file per format, each with its report form (one job)
//! and its fleet form (many jobs' verdicts and summary). The answer-first
//! table ([`table`]), the compact lines for pipes ([`compact`]), JSON and
//! NDJSON (the library's, [`json`] and [`ndjson`]), Markdown for tickets
//! ([`markdown`]), the HTML post-mortem page ([`html`]), GitHub
//! annotations ([`github`]), JUnit ([`junit`]) and Prometheus metrics
//! ([`prometheus`]); and what they share.
//! Text from a log never reaches the terminal with its control
//! characters: [`sanitize`] replaces them.
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
mod verdict;

pub use table::table;
pub(crate) use verdict::skips;

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
use cudnnlog::report::{Finding, Place, Report};
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

/// Replaces control characters (C0, DEL, C1; escape sequences included)
/// and the invisible characters that reorder or hide text (bidi overrides
/// and isolates, zero-width spaces and joiners, the BOM) with U+FFFD, and
/// tabs with a space, so that log text cannot drive the terminal or make
/// a line read differently from what it holds. Newlines are kept (the
/// text may be several lines): one-line fields use [`sanitize_line`].
///
/// ```ignore
/// assert_eq!(sanitize("a\x1b]0;t\x07b"), "a\u{fffd}]0;t\u{fffd}b");
/// ```
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' => ' ',
            '\n' => '\n',
            c if c.is_control() || invisible(c) => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// [`sanitize`] for a field printed on one line (a path, a note, an error
/// message): a newline in it, which could forge a line of output, is
/// replaced too.
pub fn sanitize_line(s: &str) -> String {
    sanitize(s).replace('\n', "\u{fffd}")
}

/// Characters that change how text around them reads without showing:
/// bidi marks, embeddings, overrides and isolates, zero-width characters.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

pub(crate) fn clip(s: &str, max: usize) -> String {
    let s = sanitize(s).replace('\n', " ");
    if s.chars().count() <= max {
        return s;
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Where a finding was first seen: the line, the time (a year the log
/// did not print is missing; a dmesg uptime is seconds since boot), the
/// step.
pub(crate) fn seen(p: &Place) -> String {
    let mut parts = vec![format!("line {}", p.line)];
    if let Some(t) = &p.timestamp {
        parts.push(t.replace('T', " "));
    } else if let Some(t) = &p.yearless_timestamp {
        let t = t.strip_prefix("--").unwrap_or(t);
        parts.push(t.replace('T', " "));
    } else if let Some(u) = &p.uptime {
        parts.push(format!("{u} s after boot"));
    }
    match (p.epoch, p.step) {
        (Some(e), Some(s)) => parts.push(format!("epoch {e} step {s}")),
        (Some(e), None) => parts.push(format!("epoch {e}")),
        (None, Some(s)) => parts.push(format!("step {s}")),
        (None, None) => {}
    }
    parts.join(", ")
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

/// Templates shown in the table; JSON carries them all.
pub(crate) const TABLE_TEMPLATES: usize = 10;

/// The environment as a human view shows it, in order: a label, the
/// value as text, and whether the log showed several values. The release a
/// build fingerprint allows is shown only when the log has no version
/// line, as the one range all its messages allow ("1.14 or later, before
/// 2.11"), never as the catalog's internal ranges (JSON has them all).
pub(crate) fn shown_environment(report: &Report) -> Vec<(String, String, bool)> {
    let explicit = report.environment.contains_key("framework_version");
    cudnnlog::report::ENVIRONMENT_FIELDS
        .iter()
        .filter_map(|&f| {
            let v = report.environment.get(f)?;
            if f == "framework_build" {
                if explicit {
                    return None;
                }
                let ranges: Vec<&str> = match v {
                    serde_json::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
                    serde_json::Value::String(s) => vec![s.as_str()],
                    _ => Vec::new(),
                };
                let text = release_range(&ranges)?;
                return Some((
                    "framework release".into(),
                    format!("{text} (by its messages' wording)"),
                    false,
                ));
            }
            Some((f.replace('_', " "), env_text(v), v.is_array()))
        })
        .collect()
}

/// The one range of releases that every range given allows, in words:
/// `[">=1.14.0,<2.11.0", "<2.11.0"]` is "1.14 or later, before 2.11";
/// `None` when they allow nothing in common or say nothing readable.
fn release_range(ranges: &[&str]) -> Option<String> {
    use std::cmp::Ordering;
    // Dotted releases compare part by part, as numbers (2.10 after 2.9).
    let cmp_versions = |a: &str, b: &str| {
        let parts =
            |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
        parts(a).cmp(&parts(b))
    };
    // (version, inclusive)
    let mut lower: Option<(String, bool)> = None;
    let mut upper: Option<(String, bool)> = None;
    for c in ranges.iter().flat_map(|r| r.split(',')) {
        let c = c.trim();
        let (op, v) = [">=", "<=", "==", ">", "<", "="]
            .iter()
            .find_map(|op| c.strip_prefix(op).map(|v| (*op, v.trim())))
            .unwrap_or(("==", c));
        if v.is_empty() || !v.starts_with(|ch: char| ch.is_ascii_digit()) {
            return None;
        }
        // Whether the bound (v, incl) is tighter than `old`, the tighter
        // side being `toward` (Greater for a lower bound, Less for an upper).
        let tighter = |old: &Option<(String, bool)>, incl: bool, toward: Ordering| match old {
            None => true,
            Some((old, old_incl)) => match cmp_versions(v, old) {
                Ordering::Equal => *old_incl && !incl,
                o => o == toward,
            },
        };
        if matches!(op, ">=" | ">" | "==" | "=") && tighter(&lower, op != ">", Ordering::Greater) {
            lower = Some((v.to_string(), op != ">"));
        }
        if matches!(op, "<=" | "<" | "==" | "=") && tighter(&upper, op != "<", Ordering::Less) {
            upper = Some((v.to_string(), op != "<"));
        }
    }
    let short = |v: &str| v.strip_suffix(".0").unwrap_or(v).to_string();
    let from = |(l, incl): &(String, bool)| match incl {
        true => format!("{} or later", short(l)),
        false => format!("later than {}", short(l)),
    };
    let to = |(u, incl): &(String, bool)| match incl {
        true => format!("{} or earlier", short(u)),
        false => format!("before {}", short(u)),
    };
    match (&lower, &upper) {
        (Some(l), Some(u)) => match cmp_versions(&l.0, &u.0) {
            Ordering::Less => Some(format!("{}, {}", from(l), to(u))),
            Ordering::Equal if l.1 && u.1 => Some(l.0.clone()),
            _ => None,
        },
        (Some(l), None) => Some(from(l)),
        (None, Some(u)) => Some(to(u)),
        (None, None) => None,
    }
}

/// An environment value as text: several values (two cuDNN copies) are
/// listed with commas.
pub(crate) fn env_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Whether `f` is a status its symptom's message carries, shown with that
/// symptom rather than on its own line: one line of the log is one
/// finding to a reader ("Could not create cudnn handle:
/// CUDNN_STATUS_INTERNAL_ERROR" is `cudnn.not_initialized` carrying
/// `cudnn.internal_error`). JSON keeps both findings, linked by
/// `carried_by`.
pub(crate) fn folded(report: &Report, f: &Finding) -> bool {
    f.carried_by
        .is_some_and(|i| i < report.findings.len() && report.findings[i].carried_by.is_none())
}

/// The error and warning findings a human view counts: a status shown
/// with its symptom ([`folded`]) is not one of its own.
pub(crate) fn counts(report: &Report) -> (usize, usize) {
    let shown = report.findings.iter().filter(|f| !folded(report, f));
    let errors = shown
        .clone()
        .filter(|f| f.severity == Severity::Error)
        .count();
    (errors, shown.count() - errors)
}

/// The classes of the statuses the finding at `index` carries and shows
/// with it ([`folded`]).
pub(crate) fn carried(report: &Report, index: usize) -> Vec<&str> {
    report
        .findings
        .iter()
        .filter(|s| s.carried_by == Some(index) && folded(report, s))
        .map(|s| s.class.as_str())
        .collect()
}

/// [`carried`] as a note for the finding's line: ` · carries
/// cudnn.internal_error`; empty when none.
pub(crate) fn carries(report: &Report, index: usize) -> String {
    let classes = carried(report, index);
    if classes.is_empty() {
        String::new()
    } else {
        format!(" · carries {}", classes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::release_range;

    #[test]
    fn a_build_fingerprint_reads_as_one_range_of_releases() {
        // TensorFlow 2.3's messages: each fingerprint allows a range.
        assert_eq!(
            release_range(&["<2.11.0", ">=1.14.0,<2.11.0", ">=1.0.0"]).as_deref(),
            Some("1.14 or later, before 2.11")
        );
        assert_eq!(
            release_range(&[">=2.11.0,<2.15.0", "<2.15.0"]).as_deref(),
            Some("2.11 or later, before 2.15")
        );
        assert_eq!(
            release_range(&[">=2.10.0", ">=2.9.0"]).as_deref(),
            Some("2.10 or later")
        );
        assert_eq!(release_range(&["<0.4.0"]).as_deref(), Some("before 0.4"));
        assert_eq!(
            release_range(&["1.7.0", ">=1.0.0"]).as_deref(),
            Some("1.7.0")
        );
        // Ranges with nothing in common, or no version, say nothing.
        assert_eq!(release_range(&[">=2.11.0", "<2.10.0"]), None);
        assert_eq!(release_range(&["several"]), None);
    }
}
