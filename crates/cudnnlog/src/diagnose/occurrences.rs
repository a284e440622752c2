//! Where each occurrence of a finding is: every one while they are few, a
//! sample that does not depend on how the input was cut when they are many.
//!
//! A timeline draws a mark per occurrence, but a burst of a million
//! identical warnings must not cost a million places. [`Sample`] keeps at
//! most [`MAX_OCCURRENCES`]: an occurrence is kept while its *level* (the
//! trailing zero bits of a hash of its byte offset and line) is at least
//! the sample's level, which rises by one, halving what is kept, whenever
//! more than the cap would be kept. What is left is exactly the set of
//! occurrences whose level is at least the lowest level at which no more
//! than the cap remain, a function of the occurrences alone: a scan cut
//! into chunks, files or windows, whose samples are merged, keeps the
//! same places as a single pass.

use crate::context::Progress;
use crate::location::Location;

/// The most occurrences a finding lists in
/// [`Finding::occurrences`](crate::report::Finding::occurrences); beyond it, a
/// sample of them (between about half and all of this many).
pub const MAX_OCCURRENCES: usize = 128;

/// One kept occurrence: its location, the byte of its event (where its
/// step and time are looked up), and its progress once looked up.
#[derive(Clone, Debug)]
pub(crate) struct Kept {
    pub loc: Location,
    pub event: u64,
    /// `None` until the window holding it has ended.
    pub progress: Option<Progress>,
}

/// The occurrences kept of one finding.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sample {
    level: u32,
    kept: Vec<Kept>,
    /// How many kept ones have not been placed yet (their window has not
    /// ended): most windows end with none, and cost nothing.
    unplaced: usize,
}

/// The level of an occurrence: the trailing zeros of a mixed hash of its
/// byte offset and line (splitmix64's finaliser), so about half the
/// occurrences have level ≥ 1, a quarter ≥ 2, and so on. The source index
/// is left out: a file scanned alone is renumbered when it joins others.
fn level(loc: &Location) -> u32 {
    let mut z = loc.byte ^ loc.line.rotate_left(40);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    z.trailing_zeros()
}

impl Sample {
    /// A sample holding one occurrence.
    pub fn one(loc: &Location, event: u64) -> Sample {
        let mut s = Sample::default();
        s.push(loc, event);
        s
    }

    /// Counts in the occurrence at `loc` (its event at byte `event`).
    pub fn push(&mut self, loc: &Location, event: u64) {
        if level(loc) < self.level {
            return;
        }
        self.kept.push(Kept {
            loc: loc.clone(),
            event,
            progress: None,
        });
        self.unplaced += 1;
        self.thin();
    }

    /// Takes in `other`'s occurrences: those of the same finding from
    /// another part of the input.
    pub fn merge(&mut self, other: Sample) {
        self.level = self.level.max(other.level);
        let level_now = self.level;
        self.kept.extend(
            other
                .kept
                .into_iter()
                .filter(|k| level(&k.loc) >= level_now),
        );
        self.kept.retain(|k| level(&k.loc) >= level_now);
        self.recount();
        self.thin();
    }

    /// Raises the level until at most [`MAX_OCCURRENCES`] are kept.
    fn thin(&mut self) {
        if self.kept.len() <= MAX_OCCURRENCES {
            return;
        }
        while self.kept.len() > MAX_OCCURRENCES {
            self.level += 1;
            let l = self.level;
            self.kept.retain(|k| level(&k.loc) >= l);
        }
        self.recount();
    }

    fn recount(&mut self) {
        self.unplaced = self.kept.iter().filter(|k| k.progress.is_none()).count();
    }

    /// The kept occurrences not yet placed, when there are any.
    pub fn unplaced_mut(&mut self) -> impl Iterator<Item = &mut Kept> {
        // Most windows end with none: then not even a pass over them.
        let n = if self.unplaced > 0 {
            self.kept.len()
        } else {
            0
        };
        self.kept[..n].iter_mut().filter(|k| k.progress.is_none())
    }

    /// Marks every kept occurrence as placed (with what its window told;
    /// those it did not hold have no progress).
    pub fn placed(&mut self) {
        if self.unplaced == 0 {
            return;
        }
        for k in &mut self.kept {
            k.progress.get_or_insert_with(Progress::default);
        }
        self.unplaced = 0;
    }

    /// Every kept location, to renumber, tag or date.
    pub fn locations_mut(&mut self) -> impl Iterator<Item = &mut Location> {
        self.kept.iter_mut().map(|k| &mut k.loc)
    }

    /// The kept occurrences in log order (source, then byte).
    pub fn into_sorted(mut self) -> Vec<Kept> {
        self.kept.sort_by_key(|k| (k.loc.source, k.loc.byte));
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64) -> Location {
        Location {
            source: 0,
            line,
            byte: line * 81,
            timestamp: None,
            rank: None,
        }
    }

    fn lines(s: Sample) -> Vec<u64> {
        s.into_sorted().iter().map(|k| k.loc.line).collect()
    }

    #[test]
    fn few_occurrences_are_all_kept() {
        let mut s = Sample::default();
        for line in 1..=MAX_OCCURRENCES as u64 {
            s.push(&at(line), line * 81);
        }
        assert_eq!(lines(s), (1..=MAX_OCCURRENCES as u64).collect::<Vec<_>>());
    }

    #[test]
    fn many_are_sampled_across_the_whole_log() {
        let mut s = Sample::default();
        for line in 1..=100_000 {
            s.push(&at(line), line * 81);
        }
        let kept = lines(s);
        assert!(kept.len() <= MAX_OCCURRENCES && kept.len() >= MAX_OCCURRENCES / 4);
        // Spread over the log, not bunched at its start.
        assert!(
            kept[0] < 10_000 && *kept.last().unwrap() > 90_000,
            "{kept:?}"
        );
    }

    #[test]
    fn the_sample_does_not_depend_on_how_the_input_was_cut() {
        let mut whole = Sample::default();
        for line in 1..=50_000 {
            whole.push(&at(line), 0);
        }
        for cut in [1, 97, 4096, 30_000] {
            let mut parts: Vec<Sample> = Vec::new();
            for line in 1..=50_000u64 {
                if (line - 1) % cut == 0 {
                    parts.push(Sample::default());
                }
                parts.last_mut().unwrap().push(&at(line), 0);
            }
            let mut joined = Sample::default();
            for p in parts {
                joined.merge(p);
            }
            assert_eq!(lines(joined), lines(whole.clone()), "cut every {cut}");
        }
    }

    #[test]
    fn placing_is_asked_once_per_occurrence() {
        let mut s = Sample::one(&at(1), 0);
        assert_eq!(s.unplaced_mut().count(), 1);
        s.placed();
        assert_eq!(s.unplaced_mut().count(), 0);
        s.push(&at(2), 0);
        assert_eq!(s.unplaced_mut().count(), 1);
    }
}
