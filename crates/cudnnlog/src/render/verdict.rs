//! The words the text formats (table, compact, Markdown) share for a
//! fleet: a verdict's outcome, where its failure was first seen, its
//! cause, the headline that counts the jobs, and what the walk skipped.

use crate::fleet::{Summary, Verdict};
use crate::report::Outcome;
use std::collections::BTreeMap;

/// How a job ended: its outcome, or `unreadable`.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, render, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"INFO step 40 loss 0.3\nModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let v = Verdict::of("job.log", &sink.into_report());
/// assert_eq!(render::outcome(&v), "failed");
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn outcome(v: &Verdict) -> &'static str {
    v.outcome.map_or("unreadable", Outcome::as_str)
}

/// What to do with the job: `retry`, `stop`, `investigate`, or `-`.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, render, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"INFO step 40 loss 0.3\nModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let v = Verdict::of("job.log", &sink.into_report());
/// assert_eq!(render::action(&v), "stop");
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn action(v: &Verdict) -> &'static str {
    v.action.map_or("-", crate::report::Action::as_str)
}

/// Where the primary failure was first seen: `file:line`, with the rank.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, render, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"INFO step 40 loss 0.3\nModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let v = Verdict::of("job.log", &sink.into_report());
/// assert_eq!(render::first(&v), "line 2");
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn first(v: &Verdict) -> String {
    let Some(p) = &v.first else {
        return "-".into();
    };
    let file = if v.sources.len() > 1 {
        let name = p.path.rsplit('/').next().unwrap_or(&p.path);
        format!("{name}:")
    } else {
        "line ".to_string()
    };
    let mut s = format!("{file}{}", p.line);
    if let Some(r) = v
        .culprit
        .as_ref()
        .and_then(|c| c.ranks.first())
        .or(p.rank.as_ref())
    {
        s.push_str(&format!(" rank {r}"));
    }
    s
}

/// The job's likely root cause, or why it could not be read.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, render, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"INFO step 40 loss 0.3\nModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let v = Verdict::of("job.log", &sink.into_report());
/// assert_eq!(render::cause(&v), v.cause.as_ref().unwrap().id);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn cause(v: &Verdict) -> String {
    match (&v.cause, &v.error) {
        (_, Some(e)) if v.outcome.is_none() => e.clone(),
        (Some(c), _) => c.id.clone(),
        (None, _) => "-".into(),
    }
}

/// `158 jobs: 120 failed, 6 degraded, 30 clean, 2 unreadable; action: 40
/// retry, 80 stop, 6 investigate; skipped 3 files: 1 binary, 2 not logs
/// by name`.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, render, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("job.log", &b"INFO step 40 loss 0.3\nModuleNotFoundError: No module named 'apex'\n"[..], &mut sink)?;
/// let v = Verdict::of("job.log", &sink.into_report());
/// let mut s = Summary::default();
/// s.add(&v);
/// assert_eq!(render::headline(&s.finish()), "1 jobs: 1 failed, 0 clean; action: 1 stop");
/// # Ok::<(), cudnnlog::Error>(())
/// ```
pub fn headline(s: &Summary) -> String {
    let mut parts = vec![format!("{} failed", s.failed)];
    if s.degraded > 0 {
        parts.push(format!("{} degraded", s.degraded));
    }
    parts.push(format!("{} clean", s.clean));
    if s.unreadable > 0 {
        parts.push(format!("{} unreadable", s.unreadable));
    }
    let actions: Vec<String> = crate::report::Action::ALL
        .iter()
        .filter_map(|a| s.by_action.get(a).map(|n| format!("{n} {a}")))
        .collect();
    let actions = match actions.is_empty() {
        true => String::new(),
        false => format!("; action: {}", actions.join(", ")),
    };
    let skipped = skips(&s.skipped).map_or(String::new(), |k| format!("; {k}"));
    format!("{} jobs: {}{actions}{skipped}", s.jobs, parts.join(", "))
}

/// What the walk of directories left out, counted by reason: `skipped 3
/// files: 1 binary, 2 not logs by name`; `None` when nothing was.
///
/// ```
/// let skipped = [("binary".to_string(), 2), ("not_a_log".to_string(), 1)].into_iter().collect();
/// assert_eq!(cudnnlog::render::skips(&skipped).unwrap(), "skipped 3 files: 2 binary, 1 not a log by name");
/// ```
pub fn skips(skipped: &BTreeMap<String, u64>) -> Option<String> {
    let total: u64 = skipped.values().sum();
    if total == 0 {
        return None;
    }
    // The largest first; equal counts in the order of their keys.
    let mut by_count: Vec<(&String, &u64)> = skipped.iter().filter(|(_, n)| **n > 0).collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1));
    let parts: Vec<String> = by_count
        .into_iter()
        .map(|(why, &n)| {
            let one = n == 1;
            let words = match why.as_str() {
                "binary" => "binary",
                "not_a_log" if one => "not a log by name",
                "not_a_log" => "not logs by name",
                "loop" if one => "symlink loop",
                "loop" => "symlink loops",
                "broken_link" if one => "broken link",
                "broken_link" => "broken links",
                "unreadable" => "unreadable",
                "duplicate" => "already reached by another path",
                other => other,
            };
            format!("{n} {words}")
        })
        .collect();
    let files = if total == 1 { "file" } else { "files" };
    Some(format!("skipped {total} {files}: {}", parts.join(", ")))
}
