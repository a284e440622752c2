//! Placing a finding in its window: the step and epoch before it, its
//! time, and the year a glog-style timestamp lacks.

use crate::context::Progress;
use crate::sink::{Location, Window};

/// Lookups for a year in a row that find no dated line before a window is
/// taken to have none (a glog-only log; each lookup reads up to 512 lines):
/// from then on one lookup in this many is made, until one finds a year.
const YEAR_MISSES: u32 = 64;

/// Fills in the year of `loc`'s timestamp from a dated line of the window
/// near it, unless the window has shown it has none (`missed`: lookups in a
/// row that found none).
pub(super) fn fill_year(missed: &mut u32, w: &Window<'_>, loc: &mut Location) {
    let Some(t) = loc.timestamp.filter(|t| t.needs_year()) else {
        return;
    };
    *missed = missed.saturating_add(1);
    if *missed > YEAR_MISSES && !(*missed).is_multiple_of(YEAR_MISSES) {
        return;
    }
    let t = w.with_year(loc.byte, t);
    if !t.needs_year() {
        *missed = 0;
    }
    loc.timestamp = Some(t);
}

/// What a window tells of a location ([`Placer::locate`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Located {
    progress: Progress,
    /// Its time, for a line without one.
    time: Option<crate::prefix::Timestamp>,
}

/// Puts what was located into `loc` and fills in its year, as
/// [`Placer::place`] does; its progress.
pub(super) fn settle(
    located: Located,
    loc: &mut Location,
    w: &Window<'_>,
    year_misses: &mut u32,
) -> Progress {
    if loc.timestamp.is_none() {
        loc.timestamp = located.time;
    }
    fill_year(year_misses, w, loc);
    located.progress
}

/// Locates many locations of window `w` of source `source` on all threads,
/// each thread with its own [`Placer`]: the answers are the same as one
/// placer's in order, and a window of a large log may hold hundreds of
/// occurrences to place, each looked up a megabyte from the last.
pub(super) fn locate_all(
    w: &Window<'_>,
    source: usize,
    asks: &[(&Location, u64)],
) -> Vec<Option<Located>> {
    use rayon::prelude::*;
    asks.par_iter()
        .with_min_len(PARALLEL_LOCATE)
        .map_init(
            || Placer::new(w, source),
            |placer, &(loc, event)| placer.locate(loc, event),
        )
        .collect()
}

/// Locations a thread locates at least: a placer's first lookups read the
/// window directly, and a few are cheaper on one thread.
const PARALLEL_LOCATE: usize = 16;

/// Step and epoch lookups of one window: the first few search back
/// directly (a window holds few findings), the rest use the window's
/// markers read a block at a time ([`Markers`](crate::context::Markers)).
pub(super) struct Placer<'w, 'a> {
    w: &'w Window<'a>,
    /// The source the window is of.
    source: usize,
    asked: usize,
    /// A lookup found no marker: the window has few near its findings (a
    /// burst of warnings), so every later lookup would read back the whole
    /// lookback again; they use the index from then on.
    missed: bool,
    markers: crate::context::Markers,
    prefixes: crate::context::PrefixMemo,
}

/// Lookups in a window before its markers are indexed.
const INDEX_AFTER: usize = 32;

impl<'w, 'a> Placer<'w, 'a> {
    /// A placer for window `w` of source `source`, nothing looked up yet.
    pub(super) fn new(w: &'w Window<'a>, source: usize) -> Placer<'w, 'a> {
        Placer {
            w,
            source,
            asked: 0,
            missed: false,
            markers: crate::context::Markers::new(),
            prefixes: Default::default(),
        }
    }

    /// Places `loc` (its event at byte `event`) when this window holds it:
    /// its progress, and its time (and year) when its line has none.
    pub(super) fn place(
        &mut self,
        loc: &mut Location,
        event: u64,
        year_misses: &mut u32,
    ) -> Option<Progress> {
        let located = self.locate(loc, event)?;
        Some(settle(located, loc, self.w, year_misses))
    }

    /// What [`place`](Placer::place) looks up for `loc`, changing nothing:
    /// its progress, and its time when its line has none; `None` when this
    /// window does not hold it. The same answer from any placer of the
    /// window, whatever it was asked before.
    pub(super) fn locate(&mut self, loc: &Location, event: u64) -> Option<Located> {
        if loc.source != self.source || !self.w.contains(event) {
            return None;
        }
        let progress = self.progress(event, loc.rank);
        let time = match loc.timestamp {
            None => self.timestamp(event, loc.rank),
            Some(_) => None,
        };
        Some(Located { progress, time })
    }

    pub(super) fn progress(&mut self, byte: u64, rank: Option<u32>) -> Progress {
        let w = self.w;
        if !w.contains(byte) {
            return Progress::default();
        }
        let offset = (byte - w.base) as usize;
        self.asked += 1;
        if self.unindexed() {
            let progress = crate::context::progress_before(w.hay, offset, w.lookback, rank);
            self.missed |= progress == Progress::default();
            return progress;
        }
        self.markers
            .progress_before(w.hay, offset, w.lookback, rank)
    }

    /// Whether lookups still read the window directly: the first few, until
    /// one misses.
    fn unindexed(&self) -> bool {
        self.asked <= INDEX_AFTER && !self.missed
    }

    fn timestamp(&mut self, byte: u64, rank: Option<u32>) -> Option<crate::prefix::Timestamp> {
        let w = self.w;
        if !w.contains(byte) {
            return None;
        }
        let offset = (byte - w.base) as usize;
        let memo = (!self.unindexed()).then_some(&mut self.prefixes);
        crate::context::timestamp_before_in(w.hay, offset, w.lookback, rank, memo)
    }
}
