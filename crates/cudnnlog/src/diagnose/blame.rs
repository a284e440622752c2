//! The culprit of a job whose primary failure is one rank's own: the rank
//! that failed first, and the ranks that then failed waiting for it, in
//! one sentence ("rank 2 failed first (GPU out of memory, line 5,
//! 09:01:10); ranks 0, 1, 3 failed 10 min later waiting for it").
//!
//! A distributed finding's culprit is decided from the ranks' evidence
//! (`crate::culprit`); this names it for every other primary failure of a
//! job of several ranks, so that a verdict always says which rank to look
//! at. A launcher's report of the rank's death (a termination pattern:
//! torchrun's summary, mpirun's "exited on signal", srun's task line) is
//! evidence enough on its own, with `basis` `launcher`.

use super::timeline::{rank_of, SourceRole, Timeline};
use super::Draft;
use crate::catalog::Catalog;
use crate::report::{Basis, Culprit, EvidenceLine};
use std::collections::BTreeSet;

/// The longest evidence text kept.
const MAX_TEXT: usize = 300;

fn list(ranks: &BTreeSet<u32>) -> String {
    let s: Vec<String> = ranks.iter().map(u32::to_string).collect();
    match s.len() {
        1 => format!("rank {}", s[0]),
        _ => format!("ranks {}", s.join(", ")),
    }
}

/// A span of time in words: `0.4 s`, `12 s`, `10 min`, `2 h`.
fn span(secs: f64) -> String {
    if secs < 10.0 {
        format!("{secs:.1} s")
    } else if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 2.0 * 3600.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// The culprit of primary finding `p` when the job has several ranks and
/// the failure is one rank's own.
pub(crate) fn first_failure(
    catalog: &Catalog,
    drafts: &[Draft],
    p: usize,
    caused_by: &[Option<usize>],
    roles: &[SourceRole],
    time: &Timeline,
) -> Option<Culprit> {
    let d = &drafts[p];
    // Warnings alone: the run went on, nobody failed.
    if !d.is_error() {
        return None;
    }
    // A rank that reports waiting for its peers failed for them, not in
    // its own right: its culprit is decided from the ranks' evidence.
    if catalog.class(&d.class).is_some_and(|c| c.waits) {
        return None;
    }
    let rank = rank_of(d)?;
    let mut job: BTreeSet<u32> = drafts
        .iter()
        .flat_map(|d| d.ranks.iter().copied())
        .collect();
    job.extend(roles.iter().filter_map(|r| r.rank));
    for e in drafts {
        if let Some(ev) = &e.ranks_evidence {
            job.extend(ev.ranks.keys().copied());
        }
    }
    job.insert(rank);
    // A message that names the rank or task it is about (a launcher's
    // `task 4: Out Of Memory`, `local_rank: 5`) speaks of a job of ranks,
    // even when the log shows no other; so does a launcher's line naming
    // the rank that failed right after it.
    let in_message = d.first.rank.is_some()
        || d.named_rank.is_some()
        || ["rank", "task", "local_rank"]
            .iter()
            .any(|f| d.facts.contains_key(*f));
    let told = d
        .launcher
        .as_ref()
        .filter(|_| !in_message)
        .map(|(_, line)| line.clone());
    let named = in_message || told.is_some();
    // A launcher's report of the death, or its word on which rank failed.
    let termination = catalog.patterns()[d.pattern].termination;
    let launcher = termination || told.is_some();
    if job.len() < 2 && !named {
        return None;
    }
    // The findings that follow from it, directly or through others.
    let follows = |mut j: usize| {
        for _ in 0..drafts.len() {
            match caused_by[j] {
                Some(c) if c == p => return true,
                Some(c) => j = c,
                None => return false,
            }
        }
        false
    };
    let waiting: Vec<usize> = (0..drafts.len())
        .filter(|&j| j != p && follows(j))
        .filter(|&j| catalog.class(&drafts[j].class).is_some_and(|c| c.waits))
        .collect();
    // Every rank that failed this way in its own right is at fault; a
    // launcher's report names one.
    let culprits: BTreeSet<u32> = if d.ranks.is_empty() || launcher {
        BTreeSet::from([rank])
    } else {
        d.ranks.iter().copied().collect()
    };
    let victims: BTreeSet<u32> = waiting
        .iter()
        .flat_map(|&j| drafts[j].ranks.iter().copied())
        .filter(|r| !culprits.contains(r))
        .collect();
    let title = catalog
        .class(&d.class)
        .map_or_else(|| d.class.clone(), |c| c.title.clone());
    let clock = d
        .first
        .timestamp
        .filter(|t| t.is_calendar())
        .map(|t| format!(", {:02}:{:02}:{:02}", t.hour, t.minute, t.second))
        .unwrap_or_default();
    let who = list(&culprits);
    let mut reason = match &told {
        _ if termination => format!(
            "{who} died first ({title}, reported on line {}{clock})",
            d.first.line
        ),
        Some(t) => format!(
            "{who} failed first ({title}, line {}{clock}; line {} names {who})",
            d.first.line, t.line
        ),
        None => format!("{who} failed first ({title}, line {}{clock})", d.first.line),
    };
    if !victims.is_empty() {
        let gap = waiting
            .iter()
            .filter_map(|&j| time.at(p)?.seconds_to(&time.at(j)?))
            .filter(|s| *s >= 1.0)
            .reduce(f64::min)
            .map(|s| format!(" {} later", span(s)))
            .unwrap_or_default();
        reason.push_str(&format!("; {} failed{gap} waiting for it", list(&victims)));
    }
    let text = crate::text::truncate(&d.message, MAX_TEXT)
        .trim_end()
        .to_string();

    Some(Culprit {
        ranks: culprits.into_iter().collect(),
        hosts: Vec::new(),
        reason,
        evidence: std::iter::once(EvidenceLine {
            line: d.first.line,
            text,
            timestamp: d.first.timestamp.and_then(|t| t.iso()),
            rank: Some(rank),
        })
        .chain(told)
        .collect(),
        basis: if launcher {
            Basis::Launcher
        } else {
            Basis::FirstFailure
        },
    })
}
