//! Context around a match: the line number, and the training step and epoch
//! the log last reported before it.

use regex::bytes::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// How far back to look for a step or epoch marker.
const STEP_LOOKBACK: usize = 1 << 20;

/// Counts lines in a haystack, moving forward or back from the last query.
///
/// A counter may hold marks: offsets whose lines are known (the mapped
/// scan's literal pass counts them as it searches). A query far from the
/// last one counts from the nearest mark instead, so framing regions a
/// megabyte apart counts the bytes around each, not every byte between.
#[derive(Clone, Debug)]
pub(crate) struct LineCounter {
    pos: usize,
    /// 1-based line number of the line containing `pos`.
    line: u64,
    /// Offsets in increasing order, each with the 1-based line holding it.
    marks: Option<std::sync::Arc<[(usize, u64)]>>,
}

/// How far a query must be from the last one before the marks are looked
/// up (counting this far takes about as long as the lookup).
const MARK_JUMP: usize = 16 << 10;

impl LineCounter {
    /// A counter whose offset 0 is on line `line`.
    pub fn new(line: u64) -> LineCounter {
        LineCounter::at(0, line)
    }

    /// A counter whose offset `pos` is on line `line`.
    pub fn at(pos: usize, line: u64) -> LineCounter {
        LineCounter {
            pos,
            line,
            marks: None,
        }
    }

    /// A counter that counts from the nearest of `marks` (offsets in
    /// increasing order, each with its line; the first on line 1 at
    /// offset 0 when none is before a query).
    pub fn marked(marks: std::sync::Arc<[(usize, u64)]>) -> LineCounter {
        LineCounter {
            pos: 0,
            line: 1,
            marks: Some(marks),
        }
    }

    /// The 1-based line number of `offset`.
    pub fn line_at(&mut self, hay: &[u8], offset: usize) -> u64 {
        if let Some(marks) = self.marks.as_deref() {
            if offset.abs_diff(self.pos) > MARK_JUMP {
                let i = marks.partition_point(|&(p, _)| p <= offset);
                for &(p, line) in marks[i.saturating_sub(1)..].iter().take(2) {
                    if p.abs_diff(offset) < offset.abs_diff(self.pos) {
                        (self.pos, self.line) = (p, line);
                    }
                }
            }
        }
        if offset >= self.pos {
            self.line += bytecount::count(&hay[self.pos..offset], b'\n') as u64;
        } else {
            self.line -= bytecount::count(&hay[offset..self.pos], b'\n') as u64;
        }
        self.pos = offset;
        self.line
    }
}

/// The step and epoch a log line reports.
///
/// ```
/// use cudnnlog::{sink::{Match, Progress, Sink, Window}, Catalog, ScannerBuilder};
/// struct Where(Vec<u64>, Vec<Progress>); // match offsets; the progress before each
/// impl Sink for Where {
///     type Error = cudnnlog::Error;
///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
///         self.0.push(m.location.byte);
///         Ok(true)
///     }
///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
///         self.1.extend(self.0.drain(..).map(|b| w.progress_before(b)));
///         Ok(())
///     }
/// }
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let log = b"2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 batch 128 loss 2.3145\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// let mut sink = Where(Vec::new(), Vec::new());
/// scanner.scan_slice(log, &mut sink).unwrap();
/// assert_eq!(sink.1, [Progress { step: Some(3), epoch: Some(2), batch: Some(128) }]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The step: the number after `step`, `iter` or `iteration` (`step 3`,
    /// `global_step=300`, `iter: 12`), the first such marker on the line.
    pub step: Option<u64>,
    /// The epoch: the number after `epoch` (`epoch 2`, `Epoch [3/10]`).
    pub epoch: Option<u64>,
    /// The batch size, when the line names it (`batch 128`, `batch_size=64`,
    /// `bs: 32`).
    pub batch: Option<u64>,
}

fn marker() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)(?:\b|_)(epoch|step|iter|iteration|batch_size|batch|bs)\b[ \t]*[:=#]?[ \t]*\[?[ \t]*(\d{1,12})\b",
        )
        .expect("step marker regex")
    })
}

/// Reads the step and epoch from one line, if it reports either.
pub fn progress_of(line: &[u8]) -> Progress {
    let mut p = Progress::default();
    for c in marker().captures_iter(line) {
        let n = std::str::from_utf8(&c[2]).ok().and_then(|s| s.parse().ok());
        match c[1].to_ascii_lowercase().as_slice() {
            b"epoch" => p.epoch = p.epoch.or(n),
            b"batch" | b"batch_size" | b"bs" => p.batch = p.batch.or(n),
            _ => p.step = p.step.or(n),
        }
    }
    p
}

/// The progress reported by the last marker line before `offset`, looking
/// back at most `lookback` bytes (and never more than 1 MiB). With a `rank`,
/// the last marker line of that rank counts (the lines of other ranks say
/// where *they* were); untagged lines are used when the rank has none.
pub(crate) fn progress_before(
    hay: &[u8],
    offset: usize,
    lookback: usize,
    rank: Option<u32>,
) -> Progress {
    let from = offset.saturating_sub(STEP_LOOKBACK.min(lookback));
    // The nearest lines first, from a line start: the last marker is
    // usually a few lines back, and a log has many findings to place.
    let mut size = NEAR_LOOKBACK;
    loop {
        let start = if offset - from <= size {
            from
        } else {
            memchr::memrchr(b'\n', &hay[..offset - size])
                .map_or(0, |p| p + 1)
                .max(from)
        };
        if let Some(p) = last_marker(&hay[start..offset], rank, start == from) {
            return p;
        }
        size *= 4;
    }
}

/// The step markers of a window, found a block at a time: a window with
/// many findings to place (thousands of distinct errors) asks
/// [`Markers::progress_before`], which reads the blocks of
/// [`MARKER_BLOCK`] bytes before the offset newest first, finding each
/// block's markers once, instead of searching back through the window for
/// each finding (which made the scan quadratic in distinct findings). Only
/// the blocks some lookup reaches are read: a 1 GiB window whose findings
/// sit in a few places costs a few blocks, not a pass over the window. Same
/// answers as [`progress_before`].
pub(crate) struct Markers {
    block: usize,
    /// Marker starts by block index, for the blocks read so far.
    blocks: HashMap<usize, Vec<usize>>,
}

/// The bytes of one block of [`Markers`].
const MARKER_BLOCK: usize = 16 << 10;

/// How far past a block's ends its search reaches for the ends of the
/// lines it cuts (a marker never spans lines, so whole lines give the
/// markers a search of the whole window gives).
const LINE_REACH: usize = 64 << 10;

impl Markers {
    /// No markers read yet.
    pub(crate) fn new() -> Markers {
        Markers::with_block(MARKER_BLOCK)
    }

    fn with_block(block: usize) -> Markers {
        Markers {
            block,
            blocks: HashMap::new(),
        }
    }

    /// The marker starts in block `k` of `hay`, found on first use.
    fn starts(&mut self, hay: &[u8], k: usize) -> &[usize] {
        let block = self.block;
        self.blocks.entry(k).or_insert_with(|| {
            let lo = (k * block).min(hay.len());
            let hi = (lo + block).min(hay.len());
            let reach = lo.saturating_sub(LINE_REACH);
            let start = memchr::memrchr(b'\n', &hay[reach..lo]).map_or(reach, |p| reach + p + 1);
            let reach = (hi + LINE_REACH).min(hay.len());
            let end = memchr::memchr(b'\n', &hay[hi..reach]).map_or(reach, |p| hi + p);
            marker()
                .find_iter(&hay[start..end])
                .map(|m| start + m.start())
                .filter(|&s| (lo..hi).contains(&s))
                .collect()
        })
    }

    /// What [`progress_before`] returns for the same arguments.
    pub(crate) fn progress_before(
        &mut self,
        hay: &[u8],
        offset: usize,
        lookback: usize,
        rank: Option<u32>,
    ) -> Progress {
        let from = offset.saturating_sub(STEP_LOOKBACK.min(lookback));
        if offset == from {
            return Progress::default();
        }
        let line_of = |at: usize| {
            let start = memchr::memrchr(b'\n', &hay[..at])
                .map_or(0, |p| p + 1)
                .max(from);
            let stop = memchr::memchr(b'\n', &hay[at..offset]).map_or(offset, |p| at + p);
            &hay[start..stop]
        };
        // A marker cut by `offset` counts only if what is left still reads
        // as one, as a search of the span up to `offset` would see it.
        let marked = |line: &&[u8]| marker().is_match(line);
        let blocks = (from / self.block..=(offset - 1) / self.block).rev();
        let candidates = blocks.flat_map(|k| {
            let starts = self.starts(hay, k);
            let newest = starts.partition_point(|&s| s < offset);
            let oldest = starts[..newest].partition_point(|&s| s < from);
            // Owned: the next block's search borrows `self` again.
            let mut newest_first = starts[oldest..newest].to_vec();
            newest_first.reverse();
            newest_first
        });
        let lines = candidates.map(line_of).filter(marked);
        let Some(rank) = rank else {
            return lines.map(progress_of).next().unwrap_or_default();
        };
        match rank_marker(lines, rank) {
            Ok(line) => progress_of(line),
            Err(untagged) => untagged.map_or_else(Progress::default, progress_of),
        }
    }
}

/// The newest of marker `lines` (newest first) that `rank` wrote; failing
/// that, the newest untagged one, as the error.
fn rank_marker<'h>(
    lines: impl Iterator<Item = &'h [u8]>,
    rank: u32,
) -> Result<&'h [u8], Option<&'h [u8]>> {
    let mut untagged = None;
    for line in lines {
        match crate::prefix::parse_prefix(&line[..line.len().min(256)]).origin {
            Some(crate::prefix::Origin::Rank(r)) if r == rank => return Ok(line),
            None if untagged.is_none() => untagged = Some(line),
            _ => {}
        }
    }
    Err(untagged)
}

/// The first span [`progress_before`] searches; it grows fourfold.
const NEAR_LOOKBACK: usize = 4 << 10;

/// The progress of the last marker line in `span` (of `rank`'s, when
/// given); `None` when there is none and `span` is not `whole` (the full
/// look back), so that a longer span must be read.
fn last_marker(span: &[u8], rank: Option<u32>, whole: bool) -> Option<Progress> {
    let line_of = |at: usize| {
        let start = memchr::memrchr(b'\n', &span[..at]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &span[at..]).map_or(span.len(), |p| at + p);
        &span[start..end]
    };
    let Some(rank) = rank else {
        return match marker().find_iter(span).last() {
            Some(m) => Some(progress_of(line_of(m.start()))),
            None => whole.then(Progress::default),
        };
    };
    let starts: Vec<usize> = marker().find_iter(span).map(|m| m.start()).collect();
    match rank_marker(starts.iter().rev().map(|&at| line_of(at)), rank) {
        Ok(line) => Some(progress_of(line)),
        // Untagged lines count only when the rank has no marker at all.
        Err(untagged) => whole.then(|| untagged.map_or_else(Progress::default, progress_of)),
    }
}

/// How many lines back to look for a timestamp.
const TIMESTAMP_LOOKBACK: usize = 256;

/// The timestamp of the nearest line before `offset` whose prefix has one,
/// looking back at most 256 lines and `lookback` bytes.
pub(crate) fn timestamp_before(
    hay: &[u8],
    offset: usize,
    lookback: usize,
    rank: Option<u32>,
) -> Option<crate::prefix::Timestamp> {
    timestamp_before_in(hay, offset, lookback, rank, None)
}

/// The prefixes a window's timestamp lookups parsed, by line start: a
/// window with thousands of findings to place parses each line once, not
/// once per finding within 256 lines of it.
pub(crate) type PrefixMemo = HashMap<
    usize,
    (
        Option<crate::prefix::Timestamp>,
        Option<crate::prefix::Origin>,
    ),
>;

/// [`timestamp_before`], parsing through `memo` when given.
pub(crate) fn timestamp_before_in(
    hay: &[u8],
    offset: usize,
    lookback: usize,
    rank: Option<u32>,
    mut memo: Option<&mut PrefixMemo>,
) -> Option<crate::prefix::Timestamp> {
    let floor = offset.saturating_sub(lookback);
    let mut end = offset;
    for _ in 0..TIMESTAMP_LOOKBACK {
        if end <= floor || end == 0 {
            return None;
        }
        let start = memchr::memrchr(b'\n', &hay[..end - 1]).map_or(0, |p| p + 1);
        let parse = || {
            let p = line_prefix(&hay[start..end - 1]);
            (p.timestamp, p.origin)
        };
        let (timestamp, origin) = match memo.as_deref_mut() {
            Some(m) => *m.entry(start).or_insert_with(parse),
            None => parse(),
        };
        // Another rank's clock says when *it* wrote.
        let other = matches!((origin, rank), (Some(crate::prefix::Origin::Rank(r)), Some(want)) if r != want);
        if timestamp.is_some() && !other {
            return timestamp;
        }
        end = start;
    }
    None
}

/// The prefix of a line (its first 256 bytes, ANSI codes removed).
fn line_prefix(line: &[u8]) -> crate::prefix::Prefix {
    let line = &line[..line.len().min(256)];
    if crate::ansi::has_escape(line) {
        let mut clean = Vec::new();
        crate::ansi::strip_into(line, &mut clean);
        crate::prefix::parse_prefix(&clean)
    } else {
        crate::prefix::parse_prefix(line)
    }
}

/// The end of the line holding `at` (after its `\n`).
fn line_end(hay: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &hay[at..]).map_or(hay.len(), |p| at + p + 1)
}

/// The timestamp of the line nearest to the one starting at `offset` whose
/// prefix has a valid date with a year (`2026-11-29 19:46:33,316 INFO`),
/// looking at most 256 lines and `lookback` bytes back and 256 lines and
/// `lookahead` bytes ahead, nearer lines first (the earlier one on a tie):
/// where the year of a glog/absl or syslog time comes from.
pub(crate) fn dated_near(
    hay: &[u8],
    offset: usize,
    lookback: usize,
    lookahead: usize,
) -> Option<crate::prefix::Timestamp> {
    let dated = |line: &[u8]| {
        line_prefix(line)
            .timestamp
            .filter(|t| t.year.is_some() && t.is_valid())
    };
    let offset = offset.min(hay.len());
    let floor = offset.saturating_sub(lookback);
    let ceiling = offset.saturating_add(lookahead).min(hay.len());
    // `back` is the end of the next line back (after its `\n`); `ahead`
    // the start of the next line ahead.
    let mut back = offset;
    let mut ahead = line_end(hay, offset);
    for _ in 0..TIMESTAMP_LOOKBACK {
        if back > floor && back > 0 {
            let start = memchr::memrchr(b'\n', &hay[..back - 1]).map_or(0, |p| p + 1);
            if let Some(t) = dated(&hay[start..back - 1]) {
                return Some(t);
            }
            back = start;
        }
        if ahead < ceiling {
            let end = line_end(hay, ahead);
            let line = &hay[ahead..end];
            if let Some(t) = dated(line.strip_suffix(b"\n").unwrap_or(line)) {
                return Some(t);
            }
            ahead = end;
        } else if back <= floor || back == 0 {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_both_ways() {
        let hay = b"a\nb\nc\nd\n";
        let mut c = LineCounter::new(1);
        assert_eq!(c.line_at(hay, 4), 3);
        assert_eq!(c.line_at(hay, 2), 2);
        assert_eq!(c.line_at(hay, 0), 1);
        assert_eq!(c.line_at(hay, 6), 4);
    }

    /// A marked counter gives what counting from the start gives, wherever
    /// it is asked and in whatever order, from marks of any spacing.
    #[test]
    fn marked_counter_counts_as_a_plain_one() {
        let mut hay = Vec::new();
        for i in 0..40_000u32 {
            hay.extend(std::iter::repeat_n(b'x', (i * 7919 % 97) as usize));
            hay.push(b'\n');
        }
        let truth = |at: usize| bytecount::count(&hay[..at], b'\n') as u64 + 1;
        for spacing in [1_000, 50_000, 300_000] {
            let marks: Vec<(usize, u64)> = (0..hay.len())
                .step_by(spacing)
                .skip(1)
                .map(|p| (p, truth(p)))
                .collect();
            let mut c = LineCounter::marked(marks.into());
            let mut at = 17usize;
            for _ in 0..500 {
                at = (at * 48_271 + 11) % hay.len();
                assert_eq!(c.line_at(&hay, at), truth(at), "spacing {spacing}, at {at}");
            }
        }
    }

    #[test]
    fn markers() {
        assert_eq!(
            progress_of(b"Epoch [3/10] Step: 120 loss 1.0").epoch,
            Some(3)
        );
        assert_eq!(
            progress_of(b"Epoch [3/10] Step: 120 loss 1.0").step,
            Some(120)
        );
        assert_eq!(progress_of(b"global_step=77").step, Some(77));
        assert_eq!(
            progress_of(b"Gradient overflow. Skipping step, loss scaler 0").step,
            None
        );
        assert_eq!(progress_of(b"iteration 500 done").step, Some(500));
        let hay = b"epoch 1 step 4 ok\nscaler.step(opt)\nTraceback\n";
        assert_eq!(
            progress_before(hay, hay.len(), usize::MAX, None).step,
            Some(4)
        );
        assert_eq!(
            progress_before(b"nothing here", 12, usize::MAX, None),
            Progress::default()
        );
        let hay = b"2026-11-29 19:41:04,724 INFO x\nTraceback\n  File\nValueError\n";
        assert_eq!(
            timestamp_before(hay, 41, usize::MAX, None)
                .unwrap()
                .to_string(),
            "2026-11-29T19:41:04.724"
        );
        assert_eq!(timestamp_before(hay, 0, usize::MAX, None), None);
        // A rank's step and time come from its own lines.
        let hay = b"[rank0]:2026-11-29 19:41:10,000 INFO step 9\n[rank1]:2026-11-29 19:41:02,000 INFO step 2\n[rank0]:2026-11-29 19:41:11,000 INFO step 10\n[rank1]:RuntimeError\n";
        let at = hay.len() - 1;
        assert_eq!(progress_before(hay, at, usize::MAX, Some(1)).step, Some(2));
        assert_eq!(progress_before(hay, at, usize::MAX, Some(0)).step, Some(10));
        assert_eq!(
            timestamp_before(hay, at - 21, usize::MAX, Some(1))
                .unwrap()
                .to_string(),
            "2026-11-29T19:41:02.000"
        );
    }

    #[test]
    fn memoised_timestamp_lookups_give_what_direct_ones_give() {
        let mut hay = Vec::new();
        for i in 0..3000u64 {
            let line = match i % 5 {
                0 => format!(
                    "[rank{}]:[E1129 19:46:{:02}.1 x.cc:1] boom {i}\n",
                    i % 3,
                    i % 60
                ),
                1 => format!("2026-11-29 19:41:{:02},724 INFO step {i}\n", i % 60),
                _ => format!("RuntimeError: Function 'Op{i:08}Backward0' returned nan values\n"),
            };
            hay.extend_from_slice(line.as_bytes());
        }
        let mut memo = PrefixMemo::new();
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &hay).map(|p| p + 1))
            .collect();
        for &offset in starts.iter().step_by(7) {
            for rank in [None, Some(0), Some(2)] {
                for lookback in [300, usize::MAX] {
                    assert_eq!(
                        timestamp_before_in(&hay, offset, lookback, rank, Some(&mut memo)),
                        timestamp_before(&hay, offset, lookback, rank),
                        "offset {offset} rank {rank:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn markers_are_read_only_near_the_lookups() {
        // 8 MiB of step lines: 512 blocks. Findings in a few places must
        // read a few blocks, not the window (it was the whole mapped file).
        let mut hay = Vec::new();
        let mut i = 0u64;
        while hay.len() < 8 << 20 {
            let line = match i % 3 {
                0 => format!("[rank{}]:INFO step {i} loss 0.5\n", i % 4),
                _ => format!("NCCL INFO ring {i} via P2P/IPC\n"),
            };
            hay.extend_from_slice(line.as_bytes());
            i += 1;
        }
        let mut markers = Markers::new();
        let offsets: Vec<usize> = (1..=40).map(|k| k * (hay.len() / 41)).collect();
        for &offset in &offsets {
            for rank in [None, Some(2)] {
                assert_eq!(
                    markers.progress_before(&hay, offset, usize::MAX, rank),
                    progress_before(&hay, offset, usize::MAX, rank),
                    "offset {offset} rank {rank:?}"
                );
            }
        }
        let blocks = hay.len().div_ceil(MARKER_BLOCK);
        assert!(
            markers.blocks.len() <= 2 * offsets.len() && markers.blocks.len() < blocks / 4,
            "{} of {blocks} blocks read for {} lookups",
            markers.blocks.len(),
            offsets.len()
        );
    }

    /// The look back as one span (`lookback` bytes at most), the way it
    /// was done before it searched the nearest lines first.
    fn in_one(hay: &[u8], offset: usize, lookback: usize, rank: Option<u32>) -> Progress {
        let span = &hay[offset.saturating_sub(lookback.min(STEP_LOOKBACK))..offset];
        last_marker(span, rank, true).expect("whole")
    }

    #[test]
    fn the_nearest_lines_first_give_what_one_span_gives() {
        // Ranks that report steps at different rates, untagged lines, a rank
        // that never reports, markers far apart and close together.
        let mut hay = Vec::new();
        for i in 0..6000u64 {
            match i % 7 {
                0 => hay.extend_from_slice(format!("[rank0]:INFO step {i} loss 0.5\n").as_bytes()),
                3 if i % 91 == 3 => hay
                    .extend_from_slice(format!("[rank1]:epoch {} step {i}\n", i / 1000).as_bytes()),
                5 if i % 700 == 5 => {
                    hay.extend_from_slice(format!("iteration {i} done\n").as_bytes())
                }
                _ => hay.extend_from_slice(
                    format!("[rank{}]:NCCL INFO ring {i} via P2P/IPC\n", i % 4).as_bytes(),
                ),
            }
        }
        let mut markers = Markers::new();
        let mut small = Markers::with_block(1000);
        for offset in (0..hay.len()).step_by(997).chain([hay.len()]) {
            for lookback in [100, 5000, 70_000, usize::MAX] {
                for rank in [None, Some(0), Some(1), Some(2), Some(3)] {
                    let one = in_one(&hay, offset, lookback, rank);
                    assert_eq!(
                        progress_before(&hay, offset, lookback, rank),
                        one,
                        "offset {offset} lookback {lookback} rank {rank:?}"
                    );
                    assert_eq!(
                        markers.progress_before(&hay, offset, lookback, rank),
                        one,
                        "indexed: offset {offset} lookback {lookback} rank {rank:?}"
                    );
                    assert_eq!(
                        small.progress_before(&hay, offset, lookback, rank),
                        one,
                        "small blocks: offset {offset} lookback {lookback} rank {rank:?}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod examples;
