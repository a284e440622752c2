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
const TABLE_REMEDIATIONS: usize = 8;

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

fn clip(s: &str, max: usize) -> String {
    let s = sanitize(s).replace('\n', " ");
    if s.chars().count() <= max {
        return s;
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn seen(p: &Place) -> String {
    let mut parts = vec![format!("line {}", p.line)];
    if let Some(t) = &p.timestamp {
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

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
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
        return Ok(());
    }
    let multi = report.sources.len() > 1;
    let rows: Vec<Row> = report
        .findings
        .iter()
        .map(|f| Row {
            class: f.class.clone(),
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
        writeln!(out, "primary failure: {}", paint.wrap("1", p))?;
    }

    for f in report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
    {
        writeln!(out)?;
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

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
