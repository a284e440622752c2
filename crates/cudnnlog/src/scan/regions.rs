//! Regions: the bytes framed around candidate lines, sized to the events
//! they hold.
//!
//! Each candidate line is framed with a little context on both sides
//! ([`NEAR`]), overlapping ranges merged. Most events are a few lines: a
//! warning, an exception with its traceback (whose `Traceback (most recent
//! call last)` header is a candidate itself), a C++ error with its frames.
//! The context before starts above the block of indented lines and frames
//! right above the candidate (a traceback pasted without its header). A
//! region is framed again with the full context (`context_before` and
//! `context_after`) only when an event holding a candidate touches one of
//! its ends, so may go on past it: a traceback whose header was cut off, a
//! message of many continuation lines, a summary block. Framing 8 KiB
//! instead of 64 KiB on each side of every isolated candidate cost a
//! quarter of the framing of a large log, and 2 KiB instead of 8 KiB
//! about half again: on the generated 1 GiB log, 17 MB of regions instead
//! of 29 MB, and a tenth off the whole scan, the same report. Half a KiB
//! frames less still but is slower: more events run into an end and are
//! framed twice.
//!
//! Each region reports only the events whose first candidate line is one of
//! its own, so an event framed by two regions is reported once.
//!
//! A region's candidates span at most [`MAX_REGION_SPAN`] bytes
//! (1 MiB): a flood of errors, or a chain of a hundred thousand
//! exceptions, is framed as several regions, so one event's text, and the
//! memory framing it takes, is bounded whatever the input. A stream carries
//! a region that may go on past its window into the next window whole
//! ([`Scanner::carried_from`]), so that streamed and mapped scans form the
//! same regions.

use crate::framer::Event;
use crate::framer::Framer;
use crate::prefix::cache::PrefixCache;
use crate::scan::line_end_after;
use crate::scan::line_start_before;
use crate::scan::state::State;
use crate::Scanner;
use crate::Sink;
use std::ops::Range;

/// The context first framed on each side of a candidate line.
pub(super) const NEAR: usize = 2 << 10;

/// How much of a line the look back reads.
const LINE_HEAD: usize = 256;

/// Lines of other writers the look back passes over (the framer's
/// `MAX_INTERLEAVE`).
const MAX_OTHERS: u64 = 64;
/// From this many candidates on, their reaches are found on all threads.
const PARALLEL_REACH: usize = 256;
/// Candidates whose reaches are found at a time.
const REACH_BATCH: usize = 64 << 10;

/// Bytes to frame: a range of lines around the candidates `hits[hits]`.
#[derive(Clone, Debug)]
pub(super) struct Region {
    pub bytes: Range<usize>,
    /// The region's candidate lines, as indices into the scan's `hits`.
    pub hits: Range<usize>,
    /// The region was split from the one before (its candidates spanned
    /// [`MAX_REGION_SPAN`]): it starts at its first candidate line, and
    /// the one before ends there. Neither is widened across the split, so
    /// an event crossing it is cut in two, each part reported by its own
    /// region.
    pub split_before: bool,
    pub split_after: bool,
}

impl Region {
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// Whether a candidate whose region would start at the line holding `from`
/// joins the region before it, whose last candidate's context reaches
/// `target`; and, when telling took it, that region's end: `target`
/// snapped to its line end. Whether two candidates in a row join depends
/// on them alone.
fn joined(hay: &[u8], from: usize, target: usize) -> (bool, Option<usize>) {
    if from <= target {
        return (true, None);
    }
    let end = line_end_after(hay, target);
    (line_start_before(hay, from) <= end, Some(end))
}

/// Whether the candidate at `h` joins the region of the candidate at
/// `prev` before it (the one before it that is kept) whatever its reach:
/// its context `back` before it (from its reach, which is at most `h`)
/// starts no later than `forward` after `prev`, where that region's
/// context ends ([`joined`]).
fn within(hay: &[u8], prev: Option<usize>, h: usize, (back, forward): (usize, usize)) -> bool {
    prev.is_some_and(|p| h.saturating_sub(back) <= (p + forward).min(hay.len()))
}

/// The most bytes a region's candidates span.
const MAX_REGION_SPAN: usize = 1 << 20;

impl Scanner {
    /// The regions around the candidate lines `hits` (sorted) that `keep`
    /// accepts: each with [`NEAR`] context (at most the configured context),
    /// snapped to lines, overlapping ones merged.
    ///
    /// `split_at`: a candidate line where a region split from an earlier
    /// window's region starts (a stream carries where it split).
    pub(super) fn regions(
        &self,
        hay: &[u8],
        hits: &[usize],
        keep: impl Fn(usize) -> bool,
        split_at: Option<usize>,
    ) -> Vec<Region> {
        let (back, forward) = self.near();
        let span = MAX_REGION_SPAN;
        let mut regions: Vec<Region> = Vec::new();
        // How far above its candidate each event may begin: lines read
        // back from every candidate (in an interleaved log, past dozens of
        // other ranks' lines), so on all threads when there are many; a
        // batch at a time, so that what is held does not grow with them.
        let mut batch: Vec<usize> = Vec::new();
        let mut reaches: Vec<usize> = Vec::new();
        // The candidates of `batch` whose reach is read: a candidate
        // within the context of the one before joins its region whatever
        // its reach (a burst's warnings, but its first, read nothing).
        let mut reached: Vec<usize> = Vec::new();
        let mut next = 0;
        // The last kept candidate, across batches.
        let mut prev: Option<usize> = None;
        // The last region's end before it is snapped to a line end: its
        // last candidate's context (a burst of a million candidates is one
        // comparison each, not a search for a line end each).
        let mut pending: Option<usize> = None;
        loop {
            batch.clear();
            while batch.len() < REACH_BATCH && next < hits.len() {
                if keep(hits[next]) {
                    batch.push(next);
                }
                next += 1;
            }
            if batch.is_empty() {
                break;
            }
            reached.clear();
            for &i in &batch {
                if !within(hay, prev.map(|p| hits[p]), hits[i], (back, forward)) {
                    reached.push(i);
                }
                prev = Some(i);
            }
            if reached.len() >= PARALLEL_REACH {
                use rayon::prelude::*;
                reached
                    .par_iter()
                    .with_min_len(PARALLEL_REACH / 4)
                    .map_init(PrefixCache::default, |cache, &i| {
                        self.reach_back(hay, hits[i], cache)
                    })
                    .collect_into_vec(&mut reaches);
            } else {
                let mut cache = PrefixCache::default();
                reaches.clear();
                reaches.extend(
                    reached
                        .iter()
                        .map(|&i| self.reach_back(hay, hits[i], &mut cache)),
                );
            }
            let mut read = reached.iter().zip(&reaches).peekable();
            for &i in &batch {
                let h = hits[i];
                // A candidate's reach is at most the candidate itself.
                let reach = match read.peek() {
                    Some(&(&j, &reach)) if j == i => {
                        read.next();
                        reach
                    }
                    _ => h,
                };
                let target = (h + forward).min(hay.len());
                // The region starts at the line holding `from`, so before it.
                let from = reach.saturating_sub(back);
                let joins = match (regions.last_mut(), pending) {
                    (Some(r), Some(t)) => {
                        let (joins, end) = joined(hay, from, t);
                        if let Some(end) = end {
                            r.bytes.end = end;
                        }
                        joins
                    }
                    _ => false,
                };
                pending = Some(target);
                let Some(r) = regions.last_mut().filter(|_| joins) else {
                    regions.push(Region {
                        bytes: if split_at == Some(h) {
                            h
                        } else {
                            line_start_before(hay, from)
                        }..h,
                        hits: i..i + 1,
                        split_before: split_at == Some(h),
                        split_after: false,
                    });
                    continue;
                };
                let spanned = h - hits[r.hits.start];
                if spanned < span || spanned < 2 * span && !self.starts_fresh(hay, h) {
                    r.hits.end = i + 1;
                    continue;
                }
                // Too long a run of candidates: split it at this line.
                r.bytes.end = h;
                r.split_after = true;
                regions.push(Region {
                    bytes: h..h,
                    hits: i..i + 1,
                    split_before: true,
                    split_after: false,
                });
            }
        }
        if let (Some(r), Some(t)) = (regions.last_mut(), pending) {
            r.bytes.end = line_end_after(hay, t);
        }
        regions
    }

    /// The context first framed before and after a candidate line.
    fn near(&self) -> (usize, usize) {
        (NEAR.min(self.config.back), NEAR.min(self.config.forward))
    }

    /// Whether a region may be split at the candidate line at `at`: the
    /// framer, started there, frames what a single pass frames from there
    /// on. A traceback's header is such a line (a chain goes on with its
    /// next traceback); a line inside a traceback is not. A run of
    /// candidates with no such line is split at twice the span anyway.
    fn starts_fresh(&self, hay: &[u8], at: usize) -> bool {
        let head = &hay[at..(at + LINE_HEAD).min(hay.len())];
        let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
        let text = &head[..end];
        // Most lines hold no header: no prefix read for them.
        if memfind!(text, crate::framer::TRACEBACK_HEADER).is_none() {
            return false;
        }
        let body = &text[crate::prefix::parse_prefix(text).body.min(text.len())..];
        body.starts_with(crate::framer::TRACEBACK_HEADER)
    }

    /// Where a stream's window should end its owned part so that its last
    /// region is not cut: the first candidate of that region, when a
    /// candidate past `owned` could still join it (or its framing could
    /// need lines past the window). `None` when the window's regions are
    /// complete, or the last region starts the owned part (no progress
    /// would be made: the window owns it as it is). With it, whether that
    /// region was split from the one before (the next window must frame it
    /// so too). And the regions the window frames once its owned part ends
    /// there: a region depends only on the candidates before it, so they
    /// are those found here, less the last, unless the last was split from
    /// the one before (which then ends elsewhere).
    pub(super) fn carried_from(
        &self,
        hay: &[u8],
        hits: &[usize],
        owned: &Range<usize>,
        split_at: Option<usize>,
    ) -> (Option<(usize, bool)>, Vec<Region>) {
        let mut regions = self.regions(hay, hits, |h| owned.contains(&h), split_at);
        let Some(last) = regions.last() else {
            return (None, regions);
        };
        let first = hits[last.hits.start];
        // A later candidate's region starts at most `back` (its reach) and
        // NEAR (its context) before it.
        let joinable = last.bytes.end + self.config.back + NEAR >= owned.end;
        if !joinable || first <= owned.start {
            return (None, regions);
        }
        let split = last.split_before;
        match split {
            true => {
                regions = self.regions(hay, hits, |h| (owned.start..first).contains(&h), split_at)
            }
            false => {
                regions.pop();
            }
        }
        (Some((first, split)), regions)
    }

    /// [`carried_from`](Scanner::carried_from)'s first answer without
    /// framing the whole window: read back from the last candidate the owned
    /// part holds, as far as the candidates before join its region. Whether
    /// two candidates in a row join depends on them alone; only a region
    /// spanning [`MAX_REGION_SPAN`] is split by where it started, and then
    /// this gives up: `None`, and the whole window's regions say.
    pub(super) fn carried_by_tail(
        &self,
        hay: &[u8],
        hits: &[usize],
        owned: &Range<usize>,
        split_at: Option<usize>,
    ) -> Option<Option<(usize, bool)>> {
        let (back, forward) = self.near();
        let kept =
            hits.partition_point(|&h| h < owned.start)..hits.partition_point(|&h| h < owned.end);
        let Some(last) = kept.clone().last() else {
            return Some(None);
        };
        let end = line_end_after(hay, (hits[last] + forward).min(hay.len()));
        if end + self.config.back + NEAR < owned.end {
            return Some(None);
        }
        let mut cache = PrefixCache::default();
        let mut first = last;
        while first > kept.start {
            if hits[last] - hits[first] >= MAX_REGION_SPAN {
                return None;
            }
            let h = hits[first];
            let from = match within(hay, Some(hits[first - 1]), h, (back, forward)) {
                true => h.saturating_sub(back),
                false => self.reach_back(hay, h, &mut cache).saturating_sub(back),
            };
            let target = (hits[first - 1] + forward).min(hay.len());
            if !joined(hay, from, target).0 {
                break;
            }
            first -= 1;
        }
        if hits[last] - hits[first] >= MAX_REGION_SPAN {
            return None;
        }
        let h = hits[first];
        Some((h > owned.start).then_some((h, split_at == Some(h))))
    }

    /// Where the lines above the candidate line at `at` that may belong to
    /// its event begin: the block of indented lines (a traceback's frames
    /// and source lines, a C++ error's `frame #` lines) and `File "…"`
    /// frames right above it, other writers' lines passed over as the
    /// framer does, at most `context_before` back. A traceback pasted
    /// without its header starts at its first frame, which no anchor marks.
    fn reach_back(&self, hay: &[u8], at: usize, cache: &mut PrefixCache) -> usize {
        let floor = at.saturating_sub(self.config.back);
        // A line's head is enough for its prefix and indentation (a metric
        // line may be 150 KB long).
        let mut line = |from: usize| {
            let head = &hay[from..(from + LINE_HEAD).min(hay.len())];
            let end = memchr::memchr(b'\n', head).unwrap_or(head.len());
            let text = head[..end].trim_ascii_end();
            (text, cache.parse(text))
        };
        let writer = line(at).1.origin;
        let (mut reach, mut start, mut others) = (at, at, 0u64);
        while start > floor {
            start = line_start_before(hay, start - 1);
            let (text, prefix) = line(start);
            if prefix.origin != writer {
                others += 1;
                if others > MAX_OTHERS {
                    break;
                }
                continue;
            }
            others = 0;
            let body = &text[prefix.body.min(text.len())..];
            let inner = body.first().is_some_and(|&c| c == b' ' || c == b'\t')
                || body.starts_with(b"File \"");
            if !inner {
                break;
            }
            reach = start;
        }
        reach
    }

    /// Frames each region (each on its own: a region's open events close
    /// at its end), widening it to the full context when an event holding
    /// a candidate touches one of its ends, and matches the events whose
    /// first candidate line (`hits`, sorted) is the region's and in `owned`.
    pub(super) fn frame_regions<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        regions: &[Region],
        hits: &[usize],
        owned: &Range<usize>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        use super::repeats::{Held, Item, Reported};
        use crate::framer::Framed;
        let mut framer = Framer::new();
        // The events with a candidate line, and what of them is reported.
        let mut held: Vec<Held> = Vec::new();
        let mut items: Vec<Item> = Vec::new();
        // Per event framed: its index in `held`, if it has a candidate.
        let mut framed: Vec<Option<usize>> = Vec::new();
        let mut lines: Vec<crate::framer::Line> = Vec::new();
        for region in regions {
            let mine = hits[region.hits.start]..hits[region.hits.end - 1] + 1;
            let wide = match region.split_before {
                true => region.bytes.start,
                false => line_start_before(hay, mine.start.saturating_sub(self.config.back)),
            }..match region.split_after {
                true => region.bytes.end,
                false => line_end_after(hay, (mine.end - 1 + self.config.forward).min(hay.len())),
            };
            let runs = match region.hits.len() {
                n if n >= 8 && self.config.repeats => super::repeats::runs(hay, hits, wide.clone()),
                _ => Vec::new(),
            };
            let mut range = region.bytes.clone();
            loop {
                held.clear();
                items.clear();
                framed.clear();
                lines.clear();
                let last_line = line_start_before(hay, range.end - 1);
                let (mut at_start, mut at_end) = (false, false);
                framer.frame_runs(hay, range.clone(), &runs, &mut |f| {
                    let ev = match f {
                        Framed::Event(ev) => ev,
                        Framed::Copies(c) => {
                            let group: Vec<usize> = framed[framed.len() - c.events..]
                                .iter()
                                .flatten()
                                .copied()
                                .collect();
                            if !group.is_empty() {
                                items.push(Item::Copies {
                                    group,
                                    copies: c.copies,
                                    stride: c.stride,
                                });
                            }
                            return;
                        }
                    };
                    let Some(first) = ev
                        .lines
                        .iter()
                        .map(|l| l.phys)
                        .find(|s| hits.binary_search(s).is_ok())
                    else {
                        framed.push(None);
                        return;
                    };
                    let touches_end = ev.lines.last().is_some_and(|l| l.phys == last_line);
                    let touches_start = ev.lines[0].phys == range.start;
                    at_start |= touches_start;
                    at_end |= touches_end;
                    // Blank lines between an event and a split do not
                    // end it: the event may go on after them.
                    let blank = |b: &[u8]| b.iter().all(u8::is_ascii_whitespace);
                    let first_line = &ev.lines[0];
                    let last = ev.lines.last().map_or(range.end, |l| l.end);
                    let cut = (region.split_after && blank(&hay[last.min(range.end)..range.end]))
                        || (region.split_before
                            && blank(&hay[range.start..first_line.start.max(range.start)]));
                    let from = lines.len();
                    lines.extend_from_slice(ev.lines);
                    framed.push(Some(held.len()));
                    if mine.contains(&first) && owned.contains(&first) {
                        items.push(Item::One(held.len()));
                    }
                    held.push(Held {
                        kind: ev.kind,
                        origin: ev.origin,
                        exception: ev.exception,
                        // An event cut where its region was split is part
                        // of a longer one: its last exception may not be
                        // the uncaught one.
                        reported_exception: ev.exception.filter(|_| !cut),
                        lines: from..lines.len(),
                        first,
                    });
                });
                let wider = (if at_start { wide.start } else { range.start })..(if at_end {
                    wide.end
                } else {
                    range.end
                });
                if wider == range {
                    break;
                }
                range = wider;
            }
            let reported = Reported {
                held: &held,
                lines: &lines,
                keep: mine.start.max(owned.start)..mine.end.min(owned.end),
            };
            for item in &items {
                if st.stopped {
                    return Ok(());
                }
                let go_on = match item {
                    Item::One(i) => {
                        let h = &held[*i];
                        let ev = Event {
                            kind: h.kind,
                            origin: h.origin,
                            lines: &lines[h.lines.clone()],
                            exception: h.reported_exception,
                        };
                        self.match_event(st, hay, &ev, sink)?
                    }
                    Item::Copies {
                        group,
                        copies,
                        stride,
                    } => self.match_copies(st, hay, &reported, (group, *copies, *stride), sink)?,
                };
                st.stopped |= !go_on;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Found;
    use crate::{Catalog, ScannerBuilder};

    /// Step lines, tracebacks, warnings with their source lines, and a
    /// flood dense enough for its regions to be split.
    fn log() -> Vec<u8> {
        let traceback = "Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 88, in step\n    out = model(batch)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
        let warning = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n  return F.conv2d(input, weight, bias, self.stride,\n";
        let mut log = String::new();
        for i in 0..40_000 {
            log.push_str(&format!("[rank{}]:INFO train: step {i} loss 0.5\n", i % 4));
            match i % 997 {
                0 => log.push_str(traceback),
                1..=3 => log.push_str(warning),
                _ => {}
            }
            if (20_000..26_000).contains(&i) {
                log.push_str(warning);
            }
        }
        log.into_bytes()
    }

    /// The tail alone says what the whole window's regions say, for owned
    /// parts ending anywhere, or gives up (only in the flood).
    #[test]
    fn a_windows_tail_tells_its_carry_as_its_regions_do() {
        let hay = log();
        for back in [1024, 64 << 10] {
            let scanner = ScannerBuilder::new()
                .context_before(back)
                .context_after(back)
                .build(Catalog::builtin().unwrap());
            let mut found = Found::default();
            scanner.find_candidates(&hay, 0..hay.len(), &mut found);
            let (mut told, mut gave_up, mut carried) = (0, 0, 0);
            for start in (0..hay.len()).step_by(700_001) {
                for len in [5_000, 300_000, 2_500_000] {
                    let owned = line_start_before(&hay, start)
                        ..line_start_before(&hay, (start + len).min(hay.len()));
                    for split_at in [None, found.hits.iter().copied().find(|&h| h >= owned.start)] {
                        let whole = scanner.carried_from(&hay, &found.hits, &owned, split_at).0;
                        match scanner.carried_by_tail(&hay, &found.hits, &owned, split_at) {
                            Some(tail) => {
                                assert_eq!(tail, whole, "owned {owned:?}, split {split_at:?}");
                                told += 1;
                                carried += whole.is_some() as usize;
                            }
                            None => gave_up += 1,
                        }
                    }
                }
            }
            assert!(
                told > 20 && gave_up < told,
                "told {told}, gave up {gave_up}"
            );
            assert!(carried > 3 && carried < told, "carried {carried} of {told}");
        }
    }
}
