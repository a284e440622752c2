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
        let w = self.w;
        if loc.source != self.source || !w.contains(event) {
            return None;
        }
        let progress = self.progress(event, loc.rank);
        if loc.timestamp.is_none() {
            loc.timestamp = self.timestamp(event, loc.rank);
        }
        fill_year(year_misses, w, loc);
        Some(progress)
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
