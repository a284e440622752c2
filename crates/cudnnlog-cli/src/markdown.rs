//! The report as Markdown, to paste into an issue or an incident ticket.
//! Log text is escaped so it cannot break a table or inject markup.

use crate::render::{clip, plural, sanitize, seen, shown_fields, TABLE_TEMPLATES};
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::report::Report;
use std::io::Write;

/// Text from a log made safe for a Markdown table cell or paragraph:
/// control characters neutralised, pipes, backticks and angle brackets
/// escaped so that log text cannot break the table or inject markup.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in sanitize(s).chars() {
        match c {
            '\n' => out.push(' '),
            '|' | '`' | '<' | '>' | '*' | '_' | '[' | ']' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Writes the report as Markdown, to paste into an issue or an incident
/// ticket: a summary table, the primary failure's diagnosis, the
/// environment, the unclassified templates.
pub fn markdown(out: &mut impl Write, report: &Report, catalog: &Catalog) -> std::io::Result<()> {
    let paths: Vec<String> = report
        .sources
        .iter()
        .map(|s| format!("`{}`", sanitize(&s.path).replace(['`', '\n'], "'")))
        .collect();
    writeln!(out, "## cudnnlog report")?;
    writeln!(out)?;
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    writeln!(
        out,
        "Scanned {} ({} lines): **{} error finding{}**, {} warning{}.",
        paths.join(", "),
        report.sources.iter().map(|s| s.lines).sum::<u64>(),
        errors,
        plural(errors),
        report.findings.len() - errors,
        plural(report.findings.len() - errors)
    )?;
    if let Some(p) = &report.primary {
        if report.outcome == cudnnlog::report::Outcome::Degraded {
            writeln!(out, "Primary warning: **`{}`** (the run went on).", md(p))?;
        } else {
            writeln!(out, "Primary failure: **`{}`**.", md(p))?;
        }
    }
    if !report.findings.is_empty() {
        writeln!(out)?;
        writeln!(out, "| class | severity | count | first seen | message |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for f in &report.findings {
            let class = match f.caused_by.and_then(|i| report.findings.get(i)) {
                Some(c) => format!("`{}` (fallout of `{}`)", f.class, c.class),
                None => format!("`{}`", f.class),
            };
            writeln!(
                out,
                "| {class} | {} | {} | {} | {} |",
                f.severity.as_str(),
                f.count,
                md(&seen(&f.first)),
                md(&clip(&f.message, 160))
            )?;
        }
    }
    let primary = report
        .findings
        .iter()
        .find(|f| Some(&f.class) == report.primary.as_ref() && f.caused_by.is_none());
    if let Some(f) = primary {
        writeln!(out)?;
        writeln!(out, "### Diagnosis: `{}` — {}", f.class, md(&f.title))?;
        writeln!(out)?;
        writeln!(out, "> {}", md(&clip(&f.message, 500)))?;
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
            for e in &c.evidence {
                writeln!(out, "- line {}: `{}`", e.line, md(&clip(&e.text, 200)))?;
            }
            writeln!(out)?;
        }
        writeln!(out, "Likely causes:")?;
        writeln!(out)?;
        for c in f.causes.iter().take(4) {
            let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
            writeln!(
                out,
                "- **{:.0}% `{}`** — {}",
                c.confidence * 100.0,
                c.id,
                md(title)
            )?;
            for e in &c.evidence {
                writeln!(out, "  - {}", md(e))?;
            }
        }
        writeln!(out)?;
        writeln!(out, "What to do:")?;
        writeln!(out)?;
        for (i, r) in f.remediations.iter().take(5).enumerate() {
            // Remediations are catalog text with `code` spans: keep them.
            writeln!(out, "{}. {}", i + 1, sanitize(r).replace('\n', " "))?;
        }
    }
    if !report.environment.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Environment")?;
        writeln!(out)?;
        writeln!(out, "| field | as the log shows it |")?;
        writeln!(out, "|---|---|")?;
        for field in shown_fields(report) {
            if let Some(v) = report.environment.get(field) {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Array(a) => a
                        .iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.to_string(),
                };
                writeln!(out, "| {} | {} |", field.replace('_', " "), md(&text))?;
            }
        }
    }
    if !report.unclassified.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Errors no pattern explains")?;
        writeln!(out)?;
        writeln!(out, "| count | first line | template |")?;
        writeln!(out, "|---|---|---|")?;
        for t in report.unclassified.iter().take(TABLE_TEMPLATES) {
            writeln!(
                out,
                "| {} | {} | {} |",
                t.count,
                t.first.line,
                md(&t.template)
            )?;
        }
    }
    for note in &report.cross_run {
        writeln!(out)?;
        writeln!(out, "Across runs: {}", md(&note.detail))?;
    }
    Ok(())
}
