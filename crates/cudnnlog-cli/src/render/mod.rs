//! Every way a report is written for people: the answer-first table and
//! the compact lines ([`table`]), Markdown for tickets ([`markdown`]), the
//! HTML post-mortem page ([`html`]), GitHub annotations and JUnit
//! ([`ci_formats`]); and what they share. Text from a log never reaches the
//! terminal with its control characters: [`sanitize`] replaces them.

pub mod ci_formats;
pub mod html;
pub mod markdown;
pub mod table;

pub use table::{compact, human, table};

use cudnnlog::catalog::Severity;
use cudnnlog::report::{Place, Report};

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

/// The environment fields a human view shows, in order: the release a
/// build fingerprint allows only when the log has no version line (JSON
/// has both).
pub(crate) fn shown_fields(report: &Report) -> impl Iterator<Item = &'static str> + '_ {
    let explicit = report.environment.contains_key("framework_version");
    cudnnlog::report::ENVIRONMENT_FIELDS
        .iter()
        .copied()
        .filter(move |f| !(explicit && *f == "framework_build"))
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
