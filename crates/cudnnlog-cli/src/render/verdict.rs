//! The words the text formats (table, compact, Markdown) share for a
//! fleet: a verdict's outcome, where its failure was first seen, its
//! cause, and the headline that counts the jobs.

use cudnnlog::fleet::{Summary, Verdict};
use cudnnlog::report::Outcome;

/// How a job ended: its outcome, or `unreadable`.
pub(crate) fn outcome(v: &Verdict) -> &'static str {
    v.outcome.map_or("unreadable", Outcome::as_str)
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

/// `158 jobs: 120 failed, 6 degraded, 30 clean, 2 unreadable`.
pub(crate) fn headline(s: &Summary) -> String {
    let mut parts = vec![format!("{} failed", s.failed)];
    if s.degraded > 0 {
        parts.push(format!("{} degraded", s.degraded));
    }
    parts.push(format!("{} clean", s.clean));
    if s.unreadable > 0 {
        parts.push(format!("{} unreadable", s.unreadable));
    }
    format!("{} jobs: {}", s.jobs, parts.join(", "))
}
