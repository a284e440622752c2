//! The words the text formats (table, compact, Markdown) share for a
//! fleet: a verdict's outcome, where its failure was first seen, its
//! cause, the headline that counts the jobs, and what the walk skipped.

use cudnnlog::fleet::{Summary, Verdict};
use cudnnlog::report::Outcome;
use std::collections::BTreeMap;

/// How a job ended: its outcome, or `unreadable`.
pub(crate) fn outcome(v: &Verdict) -> &'static str {
    v.outcome.map_or("unreadable", Outcome::as_str)
}

/// What to do with the job: `retry`, `stop`, `investigate`, or `-`.
pub(crate) fn action(v: &Verdict) -> &'static str {
    v.action.map_or("-", cudnnlog::report::Action::as_str)
}

/// Where the primary failure was first seen: `file:line`, with the rank.
pub(crate) fn first(v: &Verdict) -> String {
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
pub(crate) fn cause(v: &Verdict) -> String {
    match (&v.cause, &v.error) {
        (_, Some(e)) if v.outcome.is_none() => e.clone(),
        (Some(c), _) => c.id.clone(),
        (None, _) => "-".into(),
    }
}

/// `158 jobs: 120 failed, 6 degraded, 30 clean, 2 unreadable; action: 40
/// retry, 80 stop, 6 investigate; skipped 3 files: 1 binary, 2 not logs
/// by name`.
pub(crate) fn headline(s: &Summary) -> String {
    let mut parts = vec![format!("{} failed", s.failed)];
    if s.degraded > 0 {
        parts.push(format!("{} degraded", s.degraded));
    }
    parts.push(format!("{} clean", s.clean));
    if s.unreadable > 0 {
        parts.push(format!("{} unreadable", s.unreadable));
    }
    let actions: Vec<String> = cudnnlog::report::Action::ALL
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
pub(crate) fn skips(skipped: &BTreeMap<String, u64>) -> Option<String> {
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
