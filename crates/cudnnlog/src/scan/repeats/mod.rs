//! Bursts: where a region's bytes repeat, and the copies of its events the
//! framer counted instead of framing ([`crate::framer::Copies`]), matched
//! once and handed to the sink as one call ([`Sink::matched_copies`]).
//!
//! A run is found from the candidate lines: the bytes from one candidate to
//! one a few candidates on come again right after, copy after copy, and
//! each copy holds the same candidates at the same places (checked, so a
//! copy of an event holds its candidate where the first copy does).

use crate::framer::Event;
use crate::framer::{Line, Run};
use crate::prefix::Origin;
use crate::scan::state::State;
use crate::sink::Copies;
use crate::Scanner;
use crate::Sink;
use std::ops::Range;

/// Copies a run must have to be framed as one: the framer frames two
/// before it knows it is back where it was, and the last one.
const MIN_COPIES: usize = 4;

/// The most candidate lines one copy may hold: a warning from each of
/// sixteen ranks.
const MAX_PERIOD_HITS: usize = 16;

/// The longest copy, in bytes.
const MAX_PERIOD: usize = 16 << 10;

/// The runs of repeated bytes in `hay[range]` (sorted, apart), found from
/// the candidate lines `hits` (sorted) in it.
pub(super) fn runs(hay: &[u8], hits: &[usize], range: Range<usize>) -> Vec<Run> {
    let from = hits.partition_point(|&h| h < range.start);
    let to = hits.partition_point(|&h| h < range.end);
    let h = &hits[from..to];
    let mut runs = Vec::new();
    let mut i = 0;
    while i + MIN_COPIES <= h.len() {
        match run_at(hay, h, i, range.end) {
            Some((run, per_copy)) => {
                i += run.copies * per_copy;
                runs.push(run);
            }
            None => i += 1,
        }
    }
    runs
}

/// The longest run starting at the candidate `h[i]`, with the candidates
/// each copy holds, when it has [`MIN_COPIES`] copies; the shortest period
/// first.
fn run_at(hay: &[u8], h: &[usize], i: usize, end: usize) -> Option<(Run, usize)> {
    for m in 1..=MAX_PERIOD_HITS.min((h.len() - i) / MIN_COPIES) {
        let p = h[i + m] - h[i];
        if p > MAX_PERIOD {
            break;
        }
        // A cheap test first: the next copy's first candidate is as far
        // on, and a copy ends a line.
        if h[i + 2 * m] - h[i + m] != p || hay[h[i] + p - 1] != b'\n' {
            continue;
        }
        let copies = (1..)
            .take_while(|&c| same_copy(hay, h, (i, m, p), c, end))
            .count()
            + 1;
        if copies >= MIN_COPIES {
            let run = Run {
                start: h[i],
                period: p,
                copies,
            };
            return Some((run, m));
        }
    }
    None
}

/// Whether copy `c` of the period of `p` bytes and `m` candidates starting
/// at `h[i]` is the copy before it again: the same bytes, and the same
/// candidates, moved on, and no other.
fn same_copy(
    hay: &[u8],
    h: &[usize],
    (i, m, p): (usize, usize, usize),
    c: usize,
    end: usize,
) -> bool {
    let s = h[i] + c * p;
    let first = i + c * m;
    s + p <= end
        && first + m <= h.len()
        && (0..m).all(|t| h[first + t] == h[i + t] + c * p)
        && h.get(first + m).is_none_or(|&next| next >= s + p)
        && hay[s..s + p] == hay[s - p..s]
}

/// An event of a region held until it is matched: its lines in a shared
/// buffer, and its first candidate line.
pub(super) struct Held {
    pub kind: crate::framer::EventKind,
    pub origin: Option<Origin>,
    /// Its final exception, as framed, and as reported (none when the
    /// event was cut where its region was split).
    pub exception: Option<usize>,
    pub reported_exception: Option<usize>,
    pub lines: Range<usize>,
    pub first: usize,
}

/// What a region reports, in order.
pub(super) enum Item {
    /// A held event.
    One(usize),
    /// Copies `1..=copies` of the held events `group`, each `stride` bytes
    /// after the one before.
    Copies {
        group: Vec<usize>,
        copies: usize,
        stride: usize,
    },
}

/// The held events a region reports, and their lines.
pub(super) struct Reported<'r> {
    pub held: &'r [Held],
    pub lines: &'r [Line],
    /// The candidate lines an event must begin with to be reported.
    pub keep: Range<usize>,
}

impl Scanner {
    /// Reports copies `1..=copies` of `group` (`stride` bytes apart): the
    /// copies every event of the group is reported in, matched once and
    /// handed on as one burst, and those at the edges one by one.
    pub(super) fn match_copies<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        r: &Reported<'_>,
        (group, copies, stride): (&[usize], usize, usize),
        sink: &mut S,
    ) -> Result<bool, S::Error> {
        // The copies in which every event of the group begins in `keep`.
        let (mut lo, mut hi) = (1, copies);
        for e in group.iter().map(|&e| &r.held[e]) {
            if r.keep.start > e.first {
                lo = lo.max((r.keep.start - e.first).div_ceil(stride));
            }
            hi = match r.keep.end > e.first {
                true => hi.min((r.keep.end - 1 - e.first) / stride),
                false => 0,
            };
        }
        if lo > hi {
            return self.copies_one_by_one(st, hay, r, group, (1..=copies, stride), sink);
        }
        if !self.copies_one_by_one(st, hay, r, group, (1..lo, stride), sink)?
            || !self.burst(st, hay, r, group, (lo, hi - lo + 1, stride), sink)?
        {
            return Ok(false);
        }
        self.copies_one_by_one(st, hay, r, group, (hi + 1..=copies, stride), sink)
    }

    /// Reports each event of `group` that begins in `keep` in each copy of
    /// `copies`, each on its own.
    fn copies_one_by_one<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        r: &Reported<'_>,
        group: &[usize],
        (copies, stride): (impl Iterator<Item = usize>, usize),
        sink: &mut S,
    ) -> Result<bool, S::Error> {
        let mut lines = Vec::new();
        for c in copies {
            for e in group.iter().map(|&e| &r.held[e]) {
                if !r.keep.contains(&(e.first + c * stride)) {
                    continue;
                }
                let ev = moved(r, e, c * stride, &mut lines);
                if !self.match_event(st, hay, &ev, sink)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Reports `count` copies of `group`, from copy `first` on, as one
    /// burst. Falls back to one by one when a match's severity depends on
    /// what follows its copy.
    fn burst<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        r: &Reported<'_>,
        group: &[usize],
        (first, count, stride): (usize, usize, usize),
        sink: &mut S,
    ) -> Result<bool, S::Error> {
        struct Confirmed {
            lines: Vec<Line>,
            text: String,
            line_at: Vec<usize>,
            cut: bool,
            outcomes: Vec<crate::scan::confirm::Outcome>,
        }
        let mut confirmed = Vec::with_capacity(group.len());
        for e in group.iter().map(|&e| &r.held[e]) {
            let mut lines = Vec::new();
            let ev = moved(r, e, first * stride, &mut lines);
            let (cut, _) = self.confirm_event(st, hay, &ev);
            let outcomes = st.memo.last().to_vec();
            if outcomes.iter().any(|o| o.fatal_if_last) {
                let copies = first..first + count;
                return self.copies_one_by_one(st, hay, r, group, (copies, stride), sink);
            }
            confirmed.push(Confirmed {
                lines,
                text: st.text.clone(),
                line_at: st.line_at.clone(),
                cut,
                outcomes,
            });
        }
        let Some(at) = confirmed.first().map(|c| c.lines[0].start) else {
            return Ok(true);
        };
        let mut matches = Vec::new();
        for (c, e) in confirmed.iter().zip(group.iter().map(|&e| &r.held[e])) {
            let ev = Event {
                kind: e.kind,
                origin: e.origin,
                lines: &c.lines,
                exception: e.exception,
            };
            for o in &c.outcomes {
                let text = (c.text.as_str(), &c.line_at[..], c.cut);
                matches.push(self.build_match(o, text, hay, &ev, &mut st.counter, st.base));
            }
        }
        let copies = Copies {
            count: count as u64,
            bytes: stride as u64,
            lines: bytecount::count(&hay[at..at + stride], b'\n') as u64,
        };
        sink.matched_copies(&matches, copies)
    }
}

/// The held event `e` moved `by` bytes on, its lines in `lines`.
fn moved<'l>(r: &Reported<'_>, e: &Held, by: usize, lines: &'l mut Vec<Line>) -> Event<'l> {
    lines.clear();
    lines.extend(r.lines[e.lines.clone()].iter().map(|l| l.moved(by)));
    Event {
        kind: e.kind,
        origin: e.origin,
        lines,
        exception: e.exception,
    }
}

#[cfg(test)]
mod tests;
