//! The human-readable report: a summary table, then for each error its
//! likely causes and what to do. Text from a log never reaches the terminal
//! with its control characters: [`sanitize`] replaces them.

use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::report::{Finding, Place, Report};
use std::io::Write;
use tabled::settings::{object::Columns, Modify, Style, Width};
use tabled::{Table, Tabled};

/// Widest message shown in the table, in characters.
const TABLE_MESSAGE: usize = 60;
/// Remediations shown per finding; JSON carries them all.
const TABLE_REMEDIATIONS: usize = 3;

/// Replaces control characters (C0, DEL, C1; escape sequences included)
/// with U+FFFD and tabs with a space, so that log text cannot drive the
/// terminal.
///
/// ```ignore
/// assert_eq!(sanitize("a\x1b]0;t\x07b"), "a\u{fffd}]0;t\u{fffd}b");
/// ```
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' => ' ',
            '\n' => '\n',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
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

pub(crate) fn seen(p: &Place) -> String {
    let mut parts = vec![format!("line {}", p.line)];
    if let Some(t) = &p.timestamp {
        // A yearless timestamp (glog's `E1129 19:46:54`) is ISO's
        // `--11-29T…` in JSON; people read it as `11-29 19:46:54`.
        let t = t.strip_prefix("--").unwrap_or(t);
        parts.push(t.replace('T', " "));
    }
    match (p.epoch, p.step) {
        (Some(e), Some(s)) => parts.push(format!("epoch {e} step {s}")),
        (Some(e), None) => parts.push(format!("epoch {e}")),
        (None, Some(s)) => parts.push(format!("step {s}")),
        (None, None) => {}
    }
    parts.join(", ")
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

#[derive(Tabled)]
struct Row {
    #[tabled(rename = "CLASS")]
    class: String,
    #[tabled(rename = "SEVERITY")]
    severity: String,
    #[tabled(rename = "COUNT")]
    count: u64,
    #[tabled(rename = "FIRST SEEN")]
    first: String,
    #[tabled(rename = "RANKS")]
    ranks: String,
    #[tabled(rename = "MESSAGE")]
    message: String,
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

    fn severity(&self, s: Severity) -> String {
        match s {
            Severity::Error => self.wrap("1;31", "error"),
            Severity::Warning => self.wrap("33", "warning"),
        }
    }
}

/// Writes the table report.
pub fn table(
    out: &mut impl Write,
    report: &Report,
    catalog: &Catalog,
    color: bool,
) -> std::io::Result<()> {
    let paint = Paint { on: color };
    let bytes: u64 = report.sources.iter().map(|s| s.bytes).sum();
    let lines: u64 = report.sources.iter().map(|s| s.lines).sum();
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = report.findings.len() - errors;
    writeln!(
        out,
        "scanned {} source{} ({} bytes, {} lines): {} error finding{}, {} warning{}",
        report.sources.len(),
        plural(report.sources.len()),
        bytes,
        lines,
        errors,
        plural(errors),
        warnings,
        plural(warnings),
    )?;
    if report.findings.is_empty() {
        writeln!(out, "no findings")?;
        unclassified(out, report)?;
        return Ok(());
    }
    let multi = report.sources.len() > 1;
    let rows: Vec<Row> = report
        .findings
        .iter()
        .map(|f| Row {
            class: match f.caused_by.and_then(|i| report.findings.get(i)) {
                Some(cause) => format!("{}\n(fallout of {})", f.class, cause.class),
                None => f.class.clone(),
            },
            severity: f.severity.as_str().to_string(),
            count: f.count,
            first: if multi {
                format!(
                    "{}: {}",
                    sanitize(&report.sources[f.first.source].path),
                    seen(&f.first)
                )
            } else {
                seen(&f.first)
            },
            ranks: ranks(f),
            message: clip(&f.message, TABLE_MESSAGE),
        })
        .collect();
    let mut t = Table::new(rows);
    t.with(Style::sharp())
        .with(Modify::new(Columns::single(5)).with(Width::wrap(TABLE_MESSAGE)));
    writeln!(out, "{t}")?;
    if let Some(p) = &report.primary {
        if report.outcome == cudnnlog::report::Outcome::Degraded {
            writeln!(
                out,
                "primary warning: {} (the run went on)",
                paint.wrap("1", p)
            )?;
        } else {
            writeln!(out, "primary failure: {}", paint.wrap("1", p))?;
        }
    }
    environment(out, report)?;
    unclassified(out, report)?;
    for note in &report.cross_run {
        let runs: Vec<&str> = note
            .runs
            .iter()
            .filter_map(|&i| report.sources.get(i).map(|s| s.path.as_str()))
            .collect();
        writeln!(
            out,
            "across runs: {} [{}]",
            sanitize(&note.detail),
            sanitize(&runs.join(", "))
        )?;
    }

    // Every error, and the primary warning of a run that went on.
    let degraded = report.outcome == cudnnlog::report::Outcome::Degraded;
    for f in report.findings.iter().filter(|f| {
        f.severity == Severity::Error || (degraded && Some(&f.class) == report.primary.as_ref())
    }) {
        writeln!(out)?;
        if let Some(cause) = f.caused_by.and_then(|i| report.findings.get(i)) {
            writeln!(
                out,
                "{} {} — {} ({}, {}×): fallout of {} at line {}",
                paint.wrap("2", "○"),
                f.class,
                f.title,
                paint.severity(f.severity),
                f.count,
                cause.class,
                cause.first.line
            )?;
            if let Some(why) = f
                .causes
                .iter()
                .flat_map(|c| &c.evidence)
                .find(|e| e.starts_with("follows "))
            {
                writeln!(out, "  {}", sanitize(why))?;
            }
            continue;
        }
        writeln!(
            out,
            "{} {} — {} ({}, {}×)",
            paint.wrap("1", "●"),
            paint.wrap("1", &f.class),
            f.title,
            paint.severity(f.severity),
            f.count
        )?;
        let source = report
            .sources
            .get(f.first.source)
            .map_or("?", |s| s.path.as_str());
        writeln!(
            out,
            "  first at {}:{}",
            sanitize(source),
            seen(&f.first).trim_start_matches("line ")
        )?;
        if f.count > 1 {
            writeln!(
                out,
                "  last at line {}",
                seen(&f.last).trim_start_matches("line ")
            )?;
        }
        writeln!(out, "  {}", clip(&f.message, 300))?;
        if let Some(c) = &f.culprit {
            let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
            writeln!(
                out,
                "  {} {} {}",
                paint.wrap("1", "at fault:"),
                if c.ranks.len() == 1 { "rank" } else { "ranks" },
                ranks.join(", ")
            )?;
            writeln!(out, "    {}", sanitize(&c.reason))?;
            for e in &c.evidence {
                writeln!(out, "    · line {}: {}", e.line, clip(&e.text, 200))?;
            }
        }
        if !f.causes.is_empty() {
            writeln!(out, "  likely causes:")?;
            for c in &f.causes {
                let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
                writeln!(
                    out,
                    "    {:>3.0}%  {} — {}",
                    c.confidence * 100.0,
                    c.id,
                    title
                )?;
                for e in &c.evidence {
                    writeln!(out, "           · {}", sanitize(e))?;
                }
            }
        }
        if !f.remediations.is_empty() {
            writeln!(out, "  what to do:")?;
            for (i, r) in f.remediations.iter().take(TABLE_REMEDIATIONS).enumerate() {
                writeln!(out, "    {}. {}", i + 1, sanitize(r))?;
            }
            if f.remediations.len() > TABLE_REMEDIATIONS {
                writeln!(
                    out,
                    "    … {} more with --format json",
                    f.remediations.len() - TABLE_REMEDIATIONS
                )?;
            }
        }
    }
    Ok(())
}

/// Templates shown in the table; JSON carries them all.
pub(crate) const TABLE_TEMPLATES: usize = 10;

/// Error lines no pattern explains, as templates with counts.
fn unclassified(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    if report.unclassified.is_empty() {
        return Ok(());
    }
    let total: u64 = report.unclassified.iter().map(|t| t.count).sum();
    writeln!(
        out,
        "unclassified errors: {total} line{} in {} template{} (no pattern explains them; `cudnnlog patterns suggest` drafts one)",
        plural(total as usize),
        report.unclassified.len(),
        plural(report.unclassified.len())
    )?;
    for t in report.unclassified.iter().take(TABLE_TEMPLATES) {
        writeln!(
            out,
            "  {:>6}×  line {:<7} {}",
            t.count,
            t.first.line,
            clip(&t.template, 100)
        )?;
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

/// The environment fields a human view shows, in order: the release a
/// build fingerprint allows only when the log has no version line (JSON
/// has both).
pub(crate) fn shown_fields(report: &Report) -> impl Iterator<Item = &'static str> + '_ {
    let explicit = report.environment.contains_key("framework_version");
    cudnnlog::environment::FIELDS
        .iter()
        .copied()
        .filter(move |f| !(explicit && *f == "framework_build"))
}

/// The environment the log shows, a field per row; several values of one
/// field are listed together (two cuDNN copies are themselves evidence).
fn environment(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    if report.environment.is_empty() {
        return Ok(());
    }
    let rows: Vec<[String; 2]> = shown_fields(report)
        .filter_map(|f| {
            let v = report.environment.get(f)?;
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) => {
                    a.iter()
                        .filter_map(|x| x.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                        + "  (several)"
                }
                other => other.to_string(),
            };
            Some([f.replace('_', " "), sanitize(&text)])
        })
        .collect();
    let mut t = tabled::builder::Builder::default();
    t.push_record(["ENVIRONMENT", "AS THE LOG SHOWS IT"]);
    for r in rows {
        t.push_record(r);
    }
    let mut table = t.build();
    table.with(Style::sharp());
    writeln!(out, "{table}")
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
