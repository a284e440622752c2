//! The human report as text, for an embedder (a CI bot, a log shipper, a
//! ticket writer) that wants the words the CLI prints without
//! re-implementing them: [`text`] gives the compact lines `cudnnlog scan`
//! writes to a pipe (`--format compact`), [`markdown()`] the Markdown of
//! `--format markdown`, byte for byte. The same for a fleet:
//! [`compact::fleet`] and [`markdown::fleet`].
//!
//! Whatever a log holds, the text is safe to show: control characters
//! and invisible reordering characters are replaced ([`sanitize`]), and
//! the Markdown can create no link, image, HTML or emphasis
//! ([`markdown::md`]).
//!
//! ```
//! use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
//! let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
//! let mut sink = FindingsSink::new(scanner.catalog());
//! let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
//! scanner.scan_reader("train.log", &log[..], &mut sink)?;
//! let report = sink.into_report();
//! let text = cudnnlog::render::text(&report);
//! assert!(text.starts_with("train.log:1: error cuda.oom: torch.OutOfMemoryError"));
//! assert!(text.contains("\naction: stop: "));
//! let md = cudnnlog::render::markdown(&report, scanner.catalog());
//! assert!(md.starts_with("## cudnnlog report\n"));
//! # Ok::<(), cudnnlog::Error>(())
//! ```

pub mod compact;
pub mod markdown;
mod verdict;

pub use verdict::{action, cause, first, headline, outcome, skips};

use crate::catalog::{Catalog, Severity};
use crate::report::{Finding, Place, Report};

/// What a list of causes none of which the log supports says of itself.
pub const PRIORS_ONLY: &str = "no evidence in the log: how often each is behind this message";

/// Templates of unclassified lines a human view lists; JSON carries them
/// all.
pub const TABLE_TEMPLATES: usize = 10;

/// The report as compact lines (`--format compact`): one per finding
/// (`path:line: severity class: message`), then the verdict's `primary:`,
/// `culprit:`, `cause:`, `action:` and `fix:` lines.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"ModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let text = cudnnlog::render::text(&sink.into_report());
/// assert_eq!(text.lines().next(), Some("job.log:1: error python.missing_module: ModuleNotFoundError: No module named 'apex'"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn text(report: &Report) -> String {
    let mut out = Vec::new();
    compact::report(&mut out, report).expect("writing to memory");
    String::from_utf8(out).expect("the report's text is UTF-8")
}

/// The report as Markdown (`--format markdown`): to paste into an issue
/// or an incident ticket.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"ModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let md = cudnnlog::render::markdown(&sink.into_report(), scanner.catalog());
/// assert!(md.contains("Primary failure: **`python.missing_module`**."));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn markdown(report: &Report, catalog: &Catalog) -> String {
    let mut out = Vec::new();
    markdown::report(&mut out, report, catalog).expect("writing to memory");
    String::from_utf8(out).expect("the report's text is UTF-8")
}

/// Replaces control characters (C0, DEL, C1; escape sequences included)
/// and the invisible characters that reorder or hide text (bidi overrides
/// and isolates, zero-width spaces and joiners, the BOM) with U+FFFD, and
/// tabs with a space, so that log text cannot drive the terminal or make
/// a line read differently from what it holds. Newlines are kept (the
/// text may be several lines): one-line fields use [`sanitize_line`].
///
/// ```
/// use cudnnlog::render::sanitize;
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
///
/// ```
/// assert_eq!(cudnnlog::render::sanitize_line("a\nb"), "a\u{fffd}b");
/// ```
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

/// A text made one safe line of at most `max` characters, ending in `…`
/// when it was cut.
///
/// ```
/// assert_eq!(cudnnlog::render::clip("CUDA out of memory", 8), "CUDA ou…");
/// assert_eq!(cudnnlog::render::clip("a\nb", 8), "a b");
/// ```
pub fn clip(s: &str, max: usize) -> String {
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
///
/// ```
/// let p = cudnnlog::report::Place { source: 0, line: 29, byte: 0, timestamp: Some("2026-11-29T19:41:04.724".into()), yearless_timestamp: None, uptime: None, step: Some(3), epoch: Some(2), rank: None };
/// assert_eq!(cudnnlog::render::seen(&p), "line 29, 2026-11-29 19:41:04.724, epoch 2 step 3");
/// ```
pub fn seen(p: &Place) -> String {
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

/// The environment as a human view shows it, in order: a label, the
/// value as text, and whether the log showed several values. The release a
/// build fingerprint allows is shown only when the log has no version
/// line, as the one range all its messages allow ("1.14 or later, before
/// 2.11"), never as the catalog's internal ranges (JSON has them all).
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"PyTorch version: 2.11.0+cu130\n", &mut sink)?;
/// let shown = cudnnlog::render::shown_environment(&sink.into_report());
/// assert!(shown.contains(&("framework version".to_string(), "2.11.0".to_string(), false)));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn shown_environment(report: &Report) -> Vec<(String, String, bool)> {
    let explicit = report.environment.contains_key("framework_version");
    crate::report::ENVIRONMENT_FIELDS
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
///
/// ```
/// let range = cudnnlog::render::release_range(&["<2.11.0", ">=1.14.0,<2.11.0"]);
/// assert_eq!(range.as_deref(), Some("1.14 or later, before 2.11"));
/// ```
pub fn release_range(ranges: &[&str]) -> Option<String> {
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
///
/// ```
/// assert_eq!(cudnnlog::render::env_text(&serde_json::json!(["8.9.7", "9.1.0"])), "8.9.7, 9.1.0");
/// ```
pub fn env_text(v: &serde_json::Value) -> String {
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

/// The plural ending for `n` things: `""` for one, `"s"` otherwise.
///
/// ```
/// assert_eq!((cudnnlog::render::plural(1), cudnnlog::render::plural(2)), ("", "s"));
/// ```
pub fn plural(n: usize) -> &'static str {
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
///
/// ```
/// use cudnnlog::{report::FindingsSink, render, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", &mut sink)?;
/// let report = sink.into_report();
/// let handle = report.findings.iter().position(|f| f.class == "cudnn.not_initialized").unwrap();
/// assert_eq!(render::carried(&report, handle), ["cudnn.internal_error"]);
/// assert_eq!(render::carries(&report, handle), " · carries cudnn.internal_error");
/// let status = report.findings.iter().find(|f| f.class == "cudnn.internal_error").unwrap();
/// assert!(render::folded(&report, status));
/// assert_eq!(render::counts(&report).0, report.findings.len() - 1);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn folded(report: &Report, f: &Finding) -> bool {
    f.carried_by
        .is_some_and(|i| i < report.findings.len() && report.findings[i].carried_by.is_none())
}

/// The error and warning findings a human view counts: a status shown
/// with its symptom ([`folded`]) is not one of its own.
///
/// ```
/// use cudnnlog::{report::FindingsSink, render, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", &mut sink)?;
/// let report = sink.into_report();
/// let handle = report.findings.iter().position(|f| f.class == "cudnn.not_initialized").unwrap();
/// assert_eq!(render::carried(&report, handle), ["cudnn.internal_error"]);
/// assert_eq!(render::carries(&report, handle), " · carries cudnn.internal_error");
/// let status = report.findings.iter().find(|f| f.class == "cudnn.internal_error").unwrap();
/// assert!(render::folded(&report, status));
/// assert_eq!(render::counts(&report).0, report.findings.len() - 1);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn counts(report: &Report) -> (usize, usize) {
    let shown = report.findings.iter().filter(|f| !folded(report, f));
    let errors = shown
        .clone()
        .filter(|f| f.severity == Severity::Error)
        .count();
    (errors, shown.count() - errors)
}

/// The classes of the statuses the finding at `index` carries and shows
/// with it ([`folded`]).
///
/// ```
/// use cudnnlog::{report::FindingsSink, render, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", &mut sink)?;
/// let report = sink.into_report();
/// let handle = report.findings.iter().position(|f| f.class == "cudnn.not_initialized").unwrap();
/// assert_eq!(render::carried(&report, handle), ["cudnn.internal_error"]);
/// assert_eq!(render::carries(&report, handle), " · carries cudnn.internal_error");
/// let status = report.findings.iter().find(|f| f.class == "cudnn.internal_error").unwrap();
/// assert!(render::folded(&report, status));
/// assert_eq!(render::counts(&report).0, report.findings.len() - 1);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn carried(report: &Report, index: usize) -> Vec<&str> {
    report
        .findings
        .iter()
        .filter(|s| s.carried_by == Some(index) && folded(report, s))
        .map(|s| s.class.as_str())
        .collect()
}

/// [`carried`] as a note for the finding's line: ` · carries
/// cudnn.internal_error`; empty when none.
///
/// ```
/// use cudnnlog::{report::FindingsSink, render, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", &mut sink)?;
/// let report = sink.into_report();
/// let handle = report.findings.iter().position(|f| f.class == "cudnn.not_initialized").unwrap();
/// assert_eq!(render::carried(&report, handle), ["cudnn.internal_error"]);
/// assert_eq!(render::carries(&report, handle), " · carries cudnn.internal_error");
/// let status = report.findings.iter().find(|f| f.class == "cudnn.internal_error").unwrap();
/// assert!(render::folded(&report, status));
/// assert_eq!(render::counts(&report).0, report.findings.len() - 1);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn carries(report: &Report, index: usize) -> String {
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
