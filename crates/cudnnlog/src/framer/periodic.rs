//! Repeated periods: a burst of one warning, or a few ranks' copies of it,
//! is framed until the framer is where it was one copy before, and the
//! copies after that are counted, not framed.
//!
//! The framer is a machine over lines: what it emits and where it ends up
//! depend on the state it starts a line in and the line's bytes, and on
//! offsets only through their differences (a line joins the event whose
//! last line ended where the previous line did; an event is buried after
//! so many lines of others). So when the bytes `hay[start..start + period]`
//! come again and again, and the state at the start of copy `k` is the
//! state at the start of copy `k - 1` moved `period` bytes on, framing copy
//! `k` emits what copy `k - 1` emitted moved `period` bytes on, and ends in
//! the state of copy `k` moved on again: every later copy does the same.
//! The framer then emits [`Framed::Copies`], moves its state on past the
//! copies it skips, and frames the run's last copy (and what follows it)
//! as usual.
//!
//! Events and open lines are only repeated when all their lines are in the
//! run, so a repeated event's bytes are its first copy's.

use super::wrap::Prev;
use super::{Event, Framer, Line, Open};
use crate::prefix::Origin;

/// Bytes that repeat: `copies` copies of `hay[start..start + period]`, one
/// right after the other, each starting at a line start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub start: usize,
    pub period: usize,
    pub copies: usize,
}

impl Run {
    /// Where the run's bytes end.
    pub fn end(&self) -> usize {
        self.start + self.copies * self.period
    }
}

/// The last `events` events the framer emitted happen `copies` more times,
/// each `stride` bytes after the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Copies {
    pub events: usize,
    pub copies: usize,
    pub stride: usize,
}

/// What the framer hands on.
pub(crate) enum Framed<'e, 'a> {
    /// An event.
    Event(&'e Event<'a>),
    /// Copies of the events before.
    Copies(Copies),
}

/// Snapshots a run may take without the framer coming back to a state: a
/// run whose events keep growing is framed as any other bytes.
const MAX_TRIES: u32 = 64;

/// Open lines past which no snapshot is taken.
const MAX_OPEN_LINES: usize = 256;

/// The framer's state at a line start, offsets counted back from it.
#[derive(Debug, PartialEq)]
pub(super) struct Snap {
    /// The open events, their lines counted back, and their last line's
    /// age (lines pushed since) as `last_seen`.
    open: Vec<Open>,
    last_origin: Option<Option<Origin>>,
    prev: Option<Prev>,
}

/// The snapshot taken at the start of one copy of a run.
pub(super) struct Track {
    run: usize,
    copy: usize,
    snap: Snap,
    /// Events emitted, and lines pushed, when it was taken.
    emitted: u64,
    seen: u64,
}

/// A line's offsets counted back from `at`.
fn back(l: &Line, at: usize) -> Line {
    Line {
        start: at - l.start,
        end: at - l.end,
        phys: at - l.phys,
        ..*l
    }
}

impl Framer {
    /// The state at the line start `at`, when every line it holds is at or
    /// after `floor` (and there are not too many).
    fn snap(&self, at: usize, floor: usize) -> Option<Snap> {
        let lines: usize = self.open.iter().map(|o| o.lines.len()).sum();
        let inside = self
            .open
            .iter()
            .all(|o| o.lines.first().is_none_or(|l| l.start >= floor));
        if lines > MAX_OPEN_LINES || !inside {
            return None;
        }
        Some(Snap {
            open: self
                .open
                .iter()
                .map(|o| Open {
                    lines: o.lines.iter().map(|l| back(l, at)).collect(),
                    last_seen: self.seen - o.last_seen,
                    ..*o
                })
                .collect(),
            last_origin: self.last_origin,
            prev: self.prev.map(|p| Prev {
                end: at - p.end,
                ..p
            }),
        })
    }

    /// Called at each physical line start `phys` of a region ending at
    /// `end`, with the runs (sorted, apart) it holds and the one reached
    /// (`ri`). When `phys` starts copy `k` of a run and the state is the
    /// one copy `k - 1` started in, moved on, emits the copies up to the
    /// run's last whole copy in the region and returns where framing goes
    /// on: that last copy's start.
    pub(super) fn period(
        &mut self,
        runs: &[Run],
        ri: &mut usize,
        phys: usize,
        end: usize,
        emit: &mut dyn FnMut(Framed<'_, '_>),
    ) -> Option<usize> {
        while runs.get(*ri).is_some_and(|r| phys >= r.end()) {
            *ri += 1;
            self.track = None;
            self.tries = 0;
        }
        let r = *runs.get(*ri)?;
        if phys < r.start || !(phys - r.start).is_multiple_of(r.period) || self.tries >= MAX_TRIES {
            return None;
        }
        let copy = (phys - r.start) / r.period;
        let snap = self.snap(phys, r.start);
        let emitted_inside = self.emitted_from >= r.start;
        self.emitted_from = usize::MAX;
        let track = self.track.take();
        let snap = snap?;
        if let Some(t) =
            track.filter(|t| t.run == *ri && t.copy + 1 == copy && emitted_inside && t.snap == snap)
        {
            // Copies `copy..last` are skipped; the last whole one in the
            // region is framed.
            let last = ((end - r.start) / r.period).min(r.copies) - 1;
            let skipped = last.saturating_sub(copy);
            if skipped > 0 {
                emit(Framed::Copies(Copies {
                    events: (self.emitted - t.emitted) as usize,
                    copies: skipped,
                    stride: r.period,
                }));
                self.move_on(skipped * r.period, skipped as u64 * (self.seen - t.seen));
                self.tries = MAX_TRIES;
                return Some(phys + skipped * r.period);
            }
        }
        self.tries += 1;
        self.track = Some(Track {
            run: *ri,
            copy,
            snap,
            emitted: self.emitted,
            seen: self.seen,
        });
        None
    }

    /// Moves the state `bytes` on, as framing the skipped copies would
    /// have, which pushed `pushed` lines.
    fn move_on(&mut self, bytes: usize, pushed: u64) {
        for o in &mut self.open {
            for l in &mut o.lines {
                *l = l.moved(bytes);
            }
            o.last_seen += pushed;
        }
        self.seen += pushed;
        if let Some(p) = &mut self.prev {
            p.end += bytes;
        }
    }
}
