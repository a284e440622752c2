//! The lines of `--format compact`, the default when piped: the report as lines, as rg
//! and ruff write them — one per finding, then the verdict's — and a
//! fleet as one line per job, then the counts and one line per group. No
//! box drawing, no colour, no wrapping.

use super::sanitize;
use super::verdict::{headline, outcome};
use crate::fleet::{primary_finding, Summary, Triaged, Verdict};
use crate::report::{Outcome, Report, PRIOR_ONLY};
use std::io::Write;

/// The report as lines for a pipe, as rg and ruff write them: one per
/// finding (`path:line: severity class: message`), then the verdict's
/// `primary:`, `culprit:`, `cause:`, `action:` and `fix:` lines. No box drawing, no colour, no
/// wrapping.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"ModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let mut out = Vec::new();
/// cudnnlog::render::compact::report(&mut out, &sink.into_report())?;
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.contains("\nprimary: python.missing_module — Python module not found\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn report(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    let one_line = |s: &str| sanitize(s).replace('\n', " ");
    for (index, f) in report.findings.iter().enumerate() {
        if super::folded(report, f) {
            continue;
        }
        let path = report
            .sources
            .get(f.first.source)
            .map_or("?", |s| s.path.as_str());
        let fallout = match f.caused_by.and_then(|i| report.findings.get(i)) {
            Some(c) => format!(" (fallout of {})", c.class),
            None => String::new(),
        };
        let carries = super::carries(report, index);
        writeln!(
            out,
            "{}:{}: {} {}{fallout}{carries}: {}",
            one_line(path),
            f.first.line,
            f.severity.as_str(),
            f.class,
            one_line(&f.message)
        )?;
    }
    let Some(f) = primary_finding(report) else {
        writeln!(out, "no findings")?;
        return Ok(());
    };
    let kind = if report.outcome == Outcome::Degraded {
        "primary warning"
    } else {
        "primary"
    };
    writeln!(out, "{kind}: {} — {}", f.class, one_line(&f.title))?;
    if let Some(c) = &f.culprit {
        let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
        writeln!(
            out,
            "culprit: rank {}: {}",
            ranks.join(","),
            one_line(&c.reason)
        )?;
    }
    if let Some(c) = f.causes.first() {
        match c.evidence.first() {
            Some(e) => writeln!(
                out,
                "cause: {} ({:.0}%): {}",
                c.id,
                c.confidence * 100.0,
                one_line(e)
            )?,
            None => writeln!(out, "cause: {}: {PRIOR_ONLY}", c.id)?,
        }
    }
    if let (Some(a), Some(why)) = (report.action, &report.retryable_because) {
        writeln!(out, "action: {a}: {}", one_line(why))?;
    }
    if let Some(r) = f.remediations.first() {
        writeln!(out, "fix: {}", one_line(r))?;
    }
    Ok(())
}

/// One job's line: `path[:line]: outcome [(action)] [class: message]`.
///
/// ```
/// use cudnnlog::{fleet::Verdict, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"ModuleNotFoundError: No module named 'apex'\n", &mut sink)?;
/// let mut out = Vec::new();
/// cudnnlog::render::compact::job_line(&mut out, &Verdict::of("job-7.log", &sink.into_report()))?;
/// assert_eq!(String::from_utf8(out).unwrap(), "job-7.log:1: failed (stop) python.missing_module: ModuleNotFoundError: No module named 'apex'\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn job_line(out: &mut impl Write, v: &Verdict) -> std::io::Result<()> {
    let one_line = |s: &str| sanitize(s).replace('\n', " ");
    let what = match (&v.primary, &v.message, &v.error) {
        (_, _, Some(e)) if v.outcome.is_none() => one_line(e),
        (Some(p), Some(m), _) => format!("{p}: {}", one_line(m)),
        _ => String::new(),
    };
    let at = v
        .first
        .as_ref()
        .map_or(String::new(), |p| format!(":{}", p.line));
    let action = v.action.map_or(String::new(), |a| format!(" ({a})"));
    writeln!(
        out,
        "{}{at}: {}{action} {what}",
        one_line(&v.path),
        outcome(v)
    )
}

/// A line per job (`path: outcome class: message`), then the counts and
/// a line per group: for pipes.
///
/// ```
/// use cudnnlog::fleet::{Summary, Triaged, Verdict};
/// let v = Verdict::unreadable("gone.log", vec!["gone.log".into()], "gone.log: No such file or directory".into());
/// let mut summary = Summary::default();
/// summary.add(&v);
/// let done = [Triaged { verdict: v, report: serde_json::from_str(r#"{"schema":"cudnnlog.report/1","sources":[],"environment":{},"primary":null,"findings":[]}"#)? }];
/// let mut out = Vec::new();
/// cudnnlog::render::compact::fleet(&mut out, &done, &summary.finish())?;
/// assert_eq!(String::from_utf8(out).unwrap(), "gone.log: unreadable gone.log: No such file or directory\n1 jobs: 0 failed, 0 clean, 1 unreadable\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fleet(out: &mut impl Write, done: &[Triaged], summary: &Summary) -> std::io::Result<()> {
    let one_line = |s: &str| sanitize(s).replace('\n', " ");
    for t in done {
        job_line(out, &t.verdict)?;
    }
    writeln!(out, "{}", headline(summary))?;
    for g in &summary.groups {
        writeln!(
            out,
            "group {} {} {}: {}",
            g.fingerprint,
            g.count,
            g.class,
            one_line(&g.message)
        )?;
    }
    Ok(())
}
