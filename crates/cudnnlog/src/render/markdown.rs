//! The Markdown of `--format markdown`: the report, or a fleet's verdicts and groups, as
//! Markdown to paste into an issue or an incident ticket.
//!
//! Whatever a log holds, the Markdown renders as cudnnlog laid it out, in
//! any CommonMark renderer (and GitHub's): the log's text can create no
//! link, image, HTML or emphasis, and cannot break a table.
//!
//! - Log text (messages, evidence lines, templates) goes in fenced code
//!   blocks ([`fenced`]), fenced with more backticks than the longest run
//!   in the text, so that no line of it can close the block.
//! - Tables hold short fields of cudnnlog's own (class, severity, count,
//!   line, time), escaped ([`md`]) so that no cell can break the table.
//! - Remediations are catalog text with `code` spans, filled with values
//!   from the log: their code spans are re-fenced ([`code_span`]) and the
//!   text between is escaped ([`md`]), so a value from the log renders as
//!   text or code whatever it holds.
//! - Control characters (terminal escapes, `\r`, NUL) are replaced by
//!   U+FFFD everywhere.

use super::verdict::{action, cause, first, headline, outcome};
use super::{clip, plural, sanitize, seen, shown_environment, TABLE_TEMPLATES};
use crate::catalog::Catalog;
use crate::fleet::{Summary, Triaged};
use crate::report::Report;
use std::io::Write;

/// The most findings shown with their own excerpt, after the diagnosis.
const EXCERPTS: usize = 20;

/// Text made safe for a Markdown paragraph, list item or table cell: it
/// renders as the same characters and can create no markup.
///
/// Control characters become U+FFFD and line breaks spaces; characters
/// that open inline markup (`` \ ` * _ ~ ^ [ ] < > ! & | $ @ ``) are escaped
/// with a backslash, as are the `:` of `://` and the `.` of `www.` (which
/// GitHub turns into links) and a leading block marker (`#`, `-`, `+`, `=`,
/// `1.`); leading spaces are dropped. Not for code spans, where backslashes
/// are literal: use [`code_span`].
/// ```
/// assert_eq!(cudnnlog::render::markdown::md("[x](http://evil) | *y*"), r"\[x\](http\://evil) \| \*y\*");
/// ```
pub fn md(s: &str) -> String {
    escape(s, true)
}

/// [`md`]; `start` when the text starts a paragraph, list item or cell
/// (leading spaces dropped, a leading block marker escaped).
fn escape(s: &str, start: bool) -> String {
    let clean = sanitize(s).replace(['\n', '\r'], " ");
    let clean = if start { clean.trim_start() } else { &clean };
    let chars: Vec<char> = clean.chars().collect();
    let mut out = String::with_capacity(clean.len() + 8);
    // A leading `1.` or `1)` would start an ordered list.
    let digits = chars.iter().take_while(|c| c.is_ascii_digit()).count();
    let www = |i: usize| {
        i >= 3
            && chars[i - 3..i]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("www")
            && (i == 3 || !chars[i - 4].is_alphanumeric())
    };
    for (i, &c) in chars.iter().enumerate() {
        let escaped = match c {
            '\\' | '`' | '*' | '_' | '~' | '^' | '[' | ']' | '<' | '>' | '!' | '&' | '|' | '$'
            | '@' => true,
            '#' | '-' | '+' | '=' => start && i == 0,
            '.' | ')' => (start && digits > 0 && i == digits) || (c == '.' && www(i)),
            ':' => chars.get(i + 1) == Some(&'/') && chars.get(i + 2) == Some(&'/'),
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Text as an inline code span: fenced with one backtick more than its
/// longest backtick run, padded with a space where the text starts or ends
/// with a backtick (or with spaces at both ends, which CommonMark strips),
/// control characters replaced and line breaks made spaces. Not for table
/// cells: a `|` in a code span still splits a GitHub table's cell.
///
/// ```
/// assert_eq!(cudnnlog::render::markdown::code_span("a`b"), "``a`b``");
/// ```
pub fn code_span(s: &str) -> String {
    crate::report::code_span(&sanitize(s).replace(['\n', '\r'], " "))
}

/// Writes log text as a fenced code block: a fence of backticks longer
/// than any backtick run in the text (three at least), so that no line of
/// the text can close it; the info string `text`; control characters
/// replaced.
///
/// ```
/// let mut out = Vec::new();
/// cudnnlog::render::markdown::fenced(&mut out, "a ``` b")?;
/// assert_eq!(String::from_utf8(out).unwrap(), "````text\na ``` b\n````\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn fenced(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    let text = sanitize(text).replace('\r', "\u{fffd}");
    let fence = "`".repeat(longest_run(&text, '`').max(2) + 1);
    writeln!(out, "{fence}text")?;
    for line in text.lines() {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "{fence}")
}

/// Catalog text with `code` spans (a remediation, filled with values from
/// the log) as Markdown: its code spans, found as CommonMark finds them (a
/// run of backticks closed by a run of the same length), re-fenced with
/// [`code_span`]; the text between escaped with [`md`]. Whatever a value
/// from the log holds, it renders as text or code.
///
/// ```
/// use cudnnlog::render::markdown::with_code_spans;
/// assert_eq!(with_code_spans("Run `x=1` <img src=y>"), r"Run `x=1` \<img src=y\>");
/// ```
pub fn with_code_spans(s: &str) -> String {
    let mut out = String::new();
    for (code, part) in split_code_spans(s) {
        if code {
            out.push_str(&code_span(&part));
        } else {
            let start = out.is_empty();
            out.push_str(&escape(&part, start));
        }
    }
    out
}

/// Catalog text with `code` spans split as CommonMark splits it: a run of
/// backticks closed by a run of the same length is code (`true`, one space
/// stripped each side when both have one), the rest text (`false`; a run
/// with no closing run is text). Control characters are replaced and line
/// breaks made spaces.
///
///
/// ```
/// use cudnnlog::render::markdown::split_code_spans;
/// assert_eq!(split_code_spans("Set `A=1` now"), [(false, "Set ".to_string()), (true, "A=1".to_string()), (false, " now".to_string())]);
/// ```
pub fn split_code_spans(s: &str) -> Vec<(bool, String)> {
    let s = sanitize(s).replace(['\n', '\r'], " ");
    let mut parts = Vec::new();
    let mut rest = s.as_str();
    let mut text = String::new();
    while let Some(open) = rest.find('`') {
        text.push_str(&rest[..open]);
        let run = rest[open..].bytes().take_while(|&c| c == b'`').count();
        let body = &rest[open + run..];
        match closing_run(body, run) {
            Some(close) => {
                if !text.is_empty() {
                    parts.push((false, std::mem::take(&mut text)));
                }
                let code = &body[..close];
                // CommonMark strips one space each side when both have one.
                let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
                    Some(inner) if !code.trim().is_empty() => inner,
                    _ => code,
                };
                parts.push((true, code.to_string()));
                rest = &body[close + run..];
            }
            None => {
                // No closing run: the backticks are text.
                text.push_str(&rest[open..open + run]);
                rest = body;
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() || parts.is_empty() {
        parts.push((false, text));
    }
    parts
}

/// Where in `s` a run of exactly `n` backticks starts.
fn closing_run(s: &str, n: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let m = b[i..].iter().take_while(|&&c| c == b'`').count();
            if m == n {
                return Some(i);
            }
            i += m;
        } else {
            i += 1;
        }
    }
    None
}

/// Writes the report as Markdown, to paste into an issue or an incident
/// ticket: a summary table, the primary failure's diagnosis, an excerpt of
/// every other finding, the environment, the unclassified templates.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"ModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let mut out = Vec::new();
/// cudnnlog::render::markdown::report(&mut out, &sink.into_report(), scanner.catalog())?;
/// assert!(String::from_utf8(out).unwrap().contains("Action: **stop**"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn report(out: &mut impl Write, report: &Report, catalog: &Catalog) -> std::io::Result<()> {
    let paths: Vec<String> = report.sources.iter().map(|s| code_span(&s.path)).collect();
    writeln!(out, "## cudnnlog report")?;
    writeln!(out)?;
    let lines = report.sources.iter().map(|s| s.lines).sum::<u64>();
    let (errors, warnings) = super::counts(report);
    writeln!(
        out,
        "Scanned {} ({lines} line{}): **{} error finding{}**, {} warning{}.",
        paths.join(", "),
        plural(lines as usize),
        errors,
        plural(errors),
        warnings,
        plural(warnings)
    )?;
    if let Some(p) = &report.primary {
        writeln!(out)?;
        if report.outcome == crate::report::Outcome::Degraded {
            writeln!(
                out,
                "Primary warning: **{}** (the run went on).",
                code_span(p)
            )?;
        } else {
            writeln!(out, "Primary failure: **{}**.", code_span(p))?;
        }
        if let (Some(a), Some(why)) = (report.action, &report.retryable_because) {
            writeln!(out)?;
            writeln!(out, "Action: **{a}** — {}", escape(why, false))?;
        }
    }
    if !report.findings.is_empty() {
        writeln!(out)?;
        writeln!(out, "| class | severity | count | first seen |")?;
        writeln!(out, "|---|---|---:|---|")?;
        for (index, f) in report.findings.iter().enumerate() {
            if super::folded(report, f) {
                continue;
            }
            let mut class = match f.caused_by.and_then(|i| report.findings.get(i)) {
                Some(c) => format!(
                    "{} (fallout of {})",
                    cell_code(&f.class),
                    cell_code(&c.class)
                ),
                None => cell_code(&f.class),
            };
            for c in super::carried(report, index) {
                class.push_str(&format!(" carrying {}", cell_code(c)));
            }
            writeln!(
                out,
                "| {class} | {} | {} | {} |",
                f.severity.as_str(),
                f.count,
                md(&seen(&f.first)),
            )?;
        }
    }
    let primary = report
        .findings
        .iter()
        .position(|f| Some(&f.class) == report.primary.as_ref() && f.caused_by.is_none());
    if let Some(f) = primary.map(|i| &report.findings[i]) {
        writeln!(out)?;
        writeln!(
            out,
            "### Diagnosis: {} — {}",
            code_span(&f.class),
            md(&f.title)
        )?;
        writeln!(out)?;
        writeln!(out, "First seen at {}:", md(&seen(&f.first)))?;
        writeln!(out)?;
        fenced(out, &clip(&f.message, 1000))?;
        writeln!(out)?;
        if let Some(c) = &f.culprit {
            let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
            writeln!(
                out,
                "At fault: **rank {}** — {}",
                ranks.join(", "),
                md(&c.reason)
            )?;
            writeln!(out)?;
            if !c.evidence.is_empty() {
                let lines: Vec<String> = c
                    .evidence
                    .iter()
                    .map(|e| format!("line {}: {}", e.line, clip(&e.text, 300)))
                    .collect();
                fenced(out, &lines.join("\n"))?;
                writeln!(out)?;
            }
        }
        if f.causes.iter().all(|c| c.evidence.is_empty()) {
            writeln!(out, "Likely causes ({}):", super::PRIORS_ONLY)?;
        } else {
            writeln!(out, "Likely causes:")?;
        }
        writeln!(out)?;
        for c in f.causes.iter().take(4) {
            let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
            writeln!(
                out,
                "- **{:.0}% {}** — {}",
                c.confidence * 100.0,
                code_span(&c.id),
                md(title)
            )?;
            for e in &c.evidence {
                writeln!(out, "  - {}", md(&clip(e, 500)))?;
            }
        }
        writeln!(out)?;
        writeln!(out, "What to do:")?;
        writeln!(out)?;
        for (i, r) in f.remediations.iter().take(5).enumerate() {
            writeln!(out, "{}. {}", i + 1, with_code_spans(r))?;
        }
    }
    let others: Vec<_> = report
        .findings
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != primary)
        .collect();
    if !others.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Other findings")?;
        for (_, f) in others.iter().take(EXCERPTS) {
            writeln!(out)?;
            writeln!(
                out,
                "{} ({}, {}) — {}:",
                code_span(&f.class),
                f.severity.as_str(),
                md(&seen(&f.first)),
                md(&f.title)
            )?;
            writeln!(out)?;
            fenced(out, &clip(&f.message, 500))?;
        }
        if others.len() > EXCERPTS {
            writeln!(out)?;
            writeln!(
                out,
                "… {} more with `--format json`.",
                others.len() - EXCERPTS
            )?;
        }
    }
    if !report.environment.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Environment")?;
        writeln!(out)?;
        writeln!(out, "| field | as the log shows it |")?;
        writeln!(out, "|---|---|")?;
        for (label, text, _) in shown_environment(report) {
            writeln!(out, "| {} | {} |", md(&label), md(&clip(&text, 200)))?;
        }
    }
    if !report.unclassified.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Errors no pattern explains")?;
        for t in report.unclassified.iter().take(TABLE_TEMPLATES) {
            writeln!(out)?;
            writeln!(
                out,
                "{} line{}, first at line {}:",
                t.count,
                plural(t.count as usize),
                t.first.line
            )?;
            writeln!(out)?;
            fenced(out, &clip(&t.template, 500))?;
        }
        if report.unclassified.len() > TABLE_TEMPLATES {
            writeln!(out)?;
            writeln!(
                out,
                "… {} more with `--format json`.",
                report.unclassified.len() - TABLE_TEMPLATES
            )?;
        }
    }
    for note in &report.cross_run {
        writeln!(out)?;
        writeln!(out, "Across runs: {}", md(&note.detail))?;
    }
    Ok(())
}

/// A class id as code in a table cell: a code span, unless the id holds a
/// `|` (not in the built-in catalog), which would split the cell; then
/// escaped text.
fn cell_code(id: &str) -> String {
    if id.contains('|') {
        md(id)
    } else {
        code_span(id)
    }
}

/// The verdicts and groups as Markdown tables, for a ticket.
///
/// ```
/// use cudnnlog::fleet::{Summary, Verdict};
/// let mut summary = Summary::default();
/// summary.add(&Verdict::unreadable("gone.log", vec!["gone.log".into()], "no such file".into()));
/// let mut out = Vec::new();
/// cudnnlog::render::markdown::fleet(&mut out, &[], &summary.finish())?;
/// assert!(String::from_utf8(out).unwrap().contains("1 unreadable"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn fleet(out: &mut impl Write, done: &[Triaged], summary: &Summary) -> std::io::Result<()> {
    writeln!(out, "## cudnnlog fleet report")?;
    writeln!(out)?;
    writeln!(out, "{}", md(&headline(summary)))?;
    writeln!(out)?;
    if !summary.groups.is_empty() {
        writeln!(out, "### Failures by fingerprint")?;
        writeln!(out)?;
        writeln!(out, "| jobs | class | fingerprint | message | examples |")?;
        writeln!(out, "|---:|---|---|---|---|")?;
        for g in &summary.groups {
            let examples: Vec<String> = g.examples.iter().map(|e| md(e)).collect();
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                g.count,
                code_span(&g.class),
                code_span(&g.fingerprint),
                md(&clip(&g.message, 120)),
                examples.join(", ")
            )?;
        }
        writeln!(out)?;
    }
    writeln!(out, "### Jobs")?;
    writeln!(out)?;
    writeln!(out, "| outcome | action | primary | first | cause | job |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for t in done {
        let v = &t.verdict;
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            outcome(v),
            action(v),
            v.primary
                .as_ref()
                .map_or_else(|| "-".into(), |p| code_span(p)),
            md(&first(v)),
            md(&cause(v)),
            md(&v.path)
        )?;
    }
    let unlisted = summary.jobs.saturating_sub(done.len() as u64);
    if unlisted > 0 {
        writeln!(out)?;
        writeln!(
            out,
            "… {unlisted} more jobs not listed (the failed come first); \
             `--format ndjson` gives every job's verdict."
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_is_escaped() {
        assert_eq!(md("a | b"), r"a \| b");
        assert_eq!(md("<script>"), r"\<script\>");
        assert_eq!(md("[x](http://evil)"), r"\[x\](http\://evil)");
        assert_eq!(md("![i](y)"), r"\!\[i\](y)");
        assert_eq!(md("&amp; `x` *y* _z_"), r"\&amp; \`x\` \*y\* \_z\_");
        assert_eq!(md("see www.evil.com"), r"see www\.evil.com");
        assert_eq!(md("a@b.com"), r"a\@b.com");
        assert_eq!(md("# no heading"), r"\# no heading");
        assert_eq!(md("  - no list"), r"\- no list");
        assert_eq!(md("12. no list"), r"12\. no list");
        assert_eq!(md("version 2.11.0 (cu130)"), "version 2.11.0 (cu130)");
        assert_eq!(md("a\nb\u{1b}]0;t\u{7}"), "a b\u{fffd}\\]0;t\u{fffd}");
    }

    #[test]
    fn code_spans_are_fenced_past_their_backticks() {
        assert_eq!(code_span("cuda.oom"), "`cuda.oom`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x`"), "`` `x` ``");
        assert_eq!(code_span("a ``` b"), "````a ``` b````");
        assert_eq!(code_span(" x "), "`  x  `");
        assert_eq!(code_span(""), "");
    }

    #[test]
    fn remediations_keep_their_code_and_escape_the_rest() {
        assert_eq!(
            with_code_spans("Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (2.81 GiB)."),
            "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (2.81 GiB)."
        );
        // A value from the log that closes the span early stays text.
        assert_eq!(
            with_code_spans("Run `x=1` <img src=y>` then [a](b)"),
            r"Run `x=1` \<img src=y\>\` then \[a\](b)"
        );
        assert_eq!(with_code_spans("use ``a ` b`` now"), "use ``a ` b`` now");
        assert_eq!(with_code_spans("no code"), "no code");
    }

    #[test]
    fn fences_outlast_the_text() {
        let mut out = Vec::new();
        fenced(&mut out, "a ```` b\nc").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "`````text\na ```` b\nc\n`````\n"
        );
        let mut out = Vec::new();
        fenced(&mut out, "x\r\u{1b}[2J").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "```text\nx\u{fffd}\u{fffd}[2J\n```\n"
        );
    }
}
