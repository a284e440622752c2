//! [`Draft`]: a finding before diagnosis, the one accumulator a scan's
//! matches of one class, severity and signature add up to.
//!
//! The same type is filled match by match by the
//! [`FindingsSink`](crate::report::FindingsSink), merged when forks of a
//! scan join ([`Draft::absorb`]), placed in time and training progress when
//! its window ends, and read by every diagnosis step; only
//! [`Finding`](crate::report::Finding), the wire type, comes after it.

use super::culprit::RankEvidence;
use super::occurrences::Sample;
use crate::catalog::Severity;
use crate::context::Progress;
use crate::facts::Fact;
use crate::location::Location;
use crate::report::EvidenceLine;
use std::collections::{BTreeMap, BTreeSet};

/// Where in the input a match was: its source and byte offset, the order in
/// which occurrences are compared.
pub(crate) type Position = (usize, u64);

/// A finding before diagnosis: what the matches of one class, severity and
/// signature add up to.
#[derive(Clone, Debug)]
pub(crate) struct Draft {
    /// The index of the pattern that matched first.
    pub pattern: usize,
    pub class: String,
    /// The values of the pattern's signature captures.
    pub signature: String,
    pub severity: Severity,
    pub count: u64,
    /// The first occurrence, and the byte its event starts at.
    pub first: Location,
    pub first_event: u64,
    /// The step and epoch before the first occurrence; `None` until the
    /// window that holds it has ended (see [`Draft::first_progress`]).
    pub first_progress: Option<Progress>,
    /// The last occurrence, its event and progress, as for the first.
    pub last: Location,
    pub last_event: u64,
    pub last_progress: Option<Progress>,
    /// Every rank a rank tag of an occurrence names.
    pub ranks: BTreeSet<u32>,
    /// The first occurrence's message and captured facts.
    pub message: String,
    pub facts: BTreeMap<String, Fact>,
    /// The class of the symptom whose message carries this status (first
    /// occurrence).
    pub carrier: Option<String>,
    /// For a distributed failure: what the log says of each rank around
    /// its first occurrence.
    pub ranks_evidence: Option<RankEvidence>,
    /// The first rank or task any occurrence names, with where it is
    /// (`task 4: Out Of Memory` after a first `Detected 1 oom-kill event`
    /// that names none).
    pub named_rank: Option<(Position, u32)>,
    /// For an error no rank tag places: the rank a launcher names as failed
    /// in the lines after its first occurrence, and that line.
    pub launcher: Option<(u32, EvidenceLine)>,
    /// The first occurrence in each source, with its event and progress.
    pub per_source: BTreeMap<usize, (Location, u64, Option<Progress>)>,
    /// Text was cut or signatures folded into this one
    /// ([`Finding::truncated`](crate::report::Finding::truncated)).
    pub truncated: bool,
    /// Where its occurrences are (all, or a sample of them).
    pub occurrences: Sample,
}

/// The ranks' evidence of a finding seen in two places: the first place's,
/// with what another file of the job says of its ranks added (one rank's
/// file shows that rank's lines only). Within one file the first
/// occurrence's evidence stands alone, so that every way of cutting a file
/// reads the same evidence.
fn merged_evidence(
    first_source: usize,
    first: Option<RankEvidence>,
    other_source: usize,
    other: Option<RankEvidence>,
) -> Option<RankEvidence> {
    match (first, other) {
        (Some(mut a), Some(b)) if first_source != other_source => {
            a.merge(b);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

impl Draft {
    /// Takes in `b`, the same finding (class, severity and signature) from a
    /// later part of the input, another chunk of it, or a warning raised to
    /// an error.
    pub fn absorb(&mut self, b: Draft) {
        let a = self;
        let (sa, sb) = (a.first.source, b.first.source);
        a.named_rank = match (a.named_rank, b.named_rank) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        a.occurrences.merge(b.occurrences);
        a.count += b.count;
        a.truncated |= b.truncated;
        a.ranks.extend(b.ranks);
        if (b.first.source, b.first.byte) < (a.first.source, a.first.byte) {
            a.pattern = b.pattern;
            a.first = b.first;
            a.first_event = b.first_event;
            a.first_progress = b.first_progress;
            a.message = b.message;
            a.facts = b.facts;
            a.carrier = b.carrier;
            a.ranks_evidence = merged_evidence(sb, b.ranks_evidence, sa, a.ranks_evidence.take());
            a.launcher = b.launcher.or(a.launcher.take());
        } else {
            a.ranks_evidence = merged_evidence(sa, a.ranks_evidence.take(), sb, b.ranks_evidence);
            a.launcher = a.launcher.take().or(b.launcher);
        }
        if (b.last.source, b.last.byte) >= (a.last.source, a.last.byte) {
            a.last = b.last;
            a.last_event = b.last_event;
            a.last_progress = b.last_progress;
        }
        for (source, first) in b.per_source {
            match a.per_source.get(&source) {
                Some(have) if have.0.byte <= first.0.byte => {}
                _ => {
                    a.per_source.insert(source, first);
                }
            }
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The step and epoch before the first occurrence (none known until
    /// its window is placed, or when the log has no progress markers).
    pub fn first_progress(&self) -> Progress {
        self.first_progress.unwrap_or_default()
    }

    /// The step and epoch before the last occurrence.
    pub fn last_progress(&self) -> Progress {
        self.last_progress.unwrap_or_default()
    }

    /// The first rank or task any occurrence's message names.
    pub fn named_rank(&self) -> Option<u32> {
        self.named_rank.map(|(_, r)| r)
    }

    /// The step before its first occurrence in each source that has one.
    pub fn steps_per_source(&self) -> impl Iterator<Item = (usize, Option<u64>)> + '_ {
        self.per_source
            .iter()
            .map(|(&s, (_, _, p))| (s, p.unwrap_or_default().step))
    }

    pub fn int(&self, name: &str) -> Option<u64> {
        match self.facts.get(name) {
            Some(Fact::Int(n)) => Some(*n),
            _ => None,
        }
    }

    pub fn text(&self, name: &str) -> Option<&str> {
        match self.facts.get(name) {
            Some(Fact::Text(s)) => Some(s),
            _ => None,
        }
    }

    pub fn family(&self) -> &str {
        self.class.split('.').next().unwrap_or("")
    }
}
