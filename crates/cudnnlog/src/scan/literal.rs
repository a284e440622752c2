//! The literal pass: the anchor automata (an NFA for small spans, a DFA
//! over the anchors a line needs for large ones, the event automaton) and
//! the search for candidate, probe and error lines, on all cores for a
//! stream's window.

#[cfg(feature = "hyperscan")]
use super::exact;
use super::warm::Fired;
use crate::scan::line_end_after;
use crate::Scanner;
use aho_corasick::{AhoCorasick, MatchKind};
use std::ops::Range;

/// Which automaton the whole-input literal pass uses. Every choice finds
/// the same lines; they differ in build time and search speed.
///
/// ```
/// use cudnnlog::{Catalog, LiteralEngine, ScannerBuilder};
/// let scanner = ScannerBuilder::new()
///     .literal_engine(LiteralEngine::Nfa)
///     .build(Catalog::builtin().unwrap());
/// # let _ = scanner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LiteralEngine {
    /// The NFA for inputs under 4 MiB, the two-tier pass (its DFA built on
    /// first use) above: with the exact-byte first tier where the CPU has
    /// AVX-512 VBMI, the hashed one where it has AVX2, Teddy's elsewhere.
    #[default]
    Auto,
    /// Aho-Corasick's contiguous NFA: builds in a few milliseconds.
    Nfa,
    /// Aho-Corasick's full DFA: the fastest search of the plain pass,
    /// built in tens of milliseconds.
    Dfa,
    /// The two-tier pass on every span with Teddy's first tier: a SIMD
    /// search for short fingerprints, then the DFA on the lines where one
    /// fired (the plain DFA when the fingerprints cannot be built). `Auto`
    /// uses it for spans of 4 MiB and more where the CPU has neither
    /// AVX-512 VBMI nor AVX2, or the other tiers cannot be built.
    TwoTier,
    /// The two-tier pass on every span with the exact-byte first tier: 4-byte
    /// windows of the fingerprints looked up 64 bytes at a time, exactly,
    /// with AVX-512 VBMI (one byte at a time where the CPU lacks it: the
    /// same lines, far slower).
    Exact,
    /// The two-tier pass on every span with the hashed first tier: every
    /// 4-byte window hashed into a small Bloom filter of the fingerprints'
    /// windows, looked up exactly only where it passes; 32 windows a step
    /// with AVX2, eight in scalar code elsewhere (the same lines). `Auto`
    /// uses it for spans of 4 MiB and more where the CPU has AVX2 but not
    /// AVX-512 VBMI.
    Hashed,
    /// The two-tier pass with Hyperscan's search for the fingerprints (the
    /// `hyperscan` cargo feature; `Auto` uses it then, for spans of 4 MiB
    /// and more, where the CPU lacks AVX-512 VBMI); Teddy's when Hyperscan
    /// refuses them.
    #[cfg(feature = "hyperscan")]
    Hyperscan,
}

/// Spans shorter than this are searched with the NFA: building the DFA
/// costs about as much as the NFA's slower search of this many bytes.
pub(super) const DFA_MIN_SPAN: usize = 4 << 20;

/// The least a piece of a stream's window is worth a thread for.
pub(super) const PARALLEL_PIECE_MIN: usize = 1 << 20;

/// An anchor some pattern lists.
pub(super) const FOR_PATTERN: u8 = 1;
/// An anchor some environment probe lists.
pub(super) const FOR_PROBE: u8 = 2;
/// An anchor of an error-level line, for unclassified errors.
pub(super) const FOR_ERROR: u8 = 4;
pub(super) const ALL_KINDS: u8 = FOR_PATTERN | FOR_PROBE | FOR_ERROR;
/// Anchors of error-level lines. Those starting with `\n` match a glog or
/// absl header (`E1130 15:17:03.923 …`) at the start of the next line; the
/// bracket forms match one behind a tag (`[rank3]:E1130 …`, `(pid=42) E1130 …`).
pub(super) const ERROR_ANCHORS: &[&str] = &[
    "ERROR", "FATAL", "CRITICAL", "\nE0", "\nE1", "\nF0", "\nF1", ": E ", ": F ", "]:E0", "]:E1",
    "]:F0", "]:F1", "] E0", "] E1", "] F0", "] F1", ") E0", ") E1", ") F0", ") F1",
];

impl Scanner {
    /// The automaton that finds every anchor in an event's text.
    pub(super) fn event_ac(&self) -> &AhoCorasick {
        self.event_ac.get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(self.anchors.as_slice())
                .expect("anchors are validated literals")
        })
    }

    /// The automaton that reads the lines where a first tier fired: the
    /// NFA the scanner is built with, or the DFA once a plain pass built it.
    /// Both take the same lines with the same kinds (the DFA's anchors drop
    /// only those that contain another of their kinds), so which one read a
    /// line changes nothing but its speed, and on the few hundred thousand
    /// fired lines of a 1 GiB log the NFA was as fast (1.63 s against
    /// 1.68 s on one thread). The 38 MB DFA, whose build took 45 ms of one
    /// thread at the start of every large scan while the others waited
    /// (a fifth of a 1 GiB scan on 16 threads) and 13 MiB of memory, is built
    /// only for a plain pass: a burst of lines that all fire.
    pub(super) fn fired_ac(&self) -> (&AhoCorasick, &[u8]) {
        match self.scan_dfa.get() {
            Some((dfa, kinds, _)) => (dfa, kinds),
            None => (&self.scan_nfa, &self.anchor_kinds),
        }
    }

    /// The whole-input pass's automaton for a span of `len` bytes.
    pub(super) fn scan_ac(&self, len: usize) -> (&AhoCorasick, &[u8]) {
        let nfa = match self.config.engine {
            LiteralEngine::Auto => len < DFA_MIN_SPAN,
            LiteralEngine::Nfa => true,
            _ => false,
        };
        if nfa {
            return (&self.scan_nfa, &self.anchor_kinds);
        }
        let (dfa, kinds, _) = self.scan_dfa.get_or_init(|| {
            let (kept, kinds) = self.kept_anchors();
            let anchors: Vec<&str> = kept.iter().map(|&i| self.anchors[i].as_str()).collect();
            let dfa = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(&anchors)
                .expect("anchors are validated literals");
            (dfa, kinds, kept)
        });
        (dfa, kinds)
    }

    /// The index in the anchor table of the anchor `id` of `ac`, the NFA
    /// or the DFA (which holds fewer).
    fn anchor_of(&self, ac: &AhoCorasick, id: aho_corasick::PatternID) -> usize {
        match self.scan_dfa.get() {
            Some((dfa, _, kept)) if std::ptr::eq(ac, dfa) => kept[id.as_usize()],
            _ => id.as_usize(),
        }
    }

    /// The literals the line pass searches for: every anchor of the
    /// catalog's patterns and probes and of error-level lines, less those
    /// that contain another (a line holding one holds the other). Every
    /// fingerprint set of the two-tier pass must cover them
    /// ([`prefilter::uncovered`](crate::prefilter::uncovered)).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let anchors = scanner.line_anchors();
    /// assert!(anchors.contains(&"ERROR") && anchors.len() > 500);
    /// ```
    pub fn line_anchors(&self) -> Vec<&str> {
        self.line_anchors_with_kinds().0
    }

    /// The anchors the DFA needs, with their kinds: an anchor that contains
    /// another of at least its kinds is dropped, since every line holding
    /// it holds the other (the pass needs one hit per line and the kinds
    /// of the line, not every anchor). A smaller automaton searches faster.
    pub(super) fn line_anchors_with_kinds(&self) -> (Vec<&str>, Vec<u8>) {
        let (kept, kinds) = self.kept_anchors();
        (
            kept.iter().map(|&i| self.anchors[i].as_str()).collect(),
            kinds,
        )
    }

    /// [`line_anchors_with_kinds`](Scanner::line_anchors_with_kinds), the
    /// anchors as indices into the anchor table.
    fn kept_anchors(&self) -> (Vec<usize>, Vec<u8>) {
        let kept: Vec<usize> = (0..self.anchors.len())
            .filter(|&i| {
                let a = self.anchors[i].as_str();
                a.starts_with('\n')
                    || !self.event_ac().find_overlapping_iter(a).any(|m| {
                        let j = m.pattern().as_usize();
                        let b = &self.anchors[j];
                        j != i
                            && !b.starts_with('\n')
                            && (b.len() < a.len() || j < i)
                            && self.anchor_kinds[j] & self.anchor_kinds[i] == self.anchor_kinds[i]
                    })
            })
            .collect();
        let kinds = kept.iter().map(|&i| self.anchor_kinds[i]).collect();
        (kept, kinds)
    }

    /// [`find_candidates`](Scanner::find_candidates) on all of rayon's
    /// threads: a span of several pieces is cut at line starts, each piece
    /// searched on its own, and the lines joined in order — the same lines
    /// as one pass finds, since the search goes line by line. A stream's
    /// window (a file still being written, a pipe, a decompressed log) gets
    /// all cores this way with its memory still bounded by the block.
    pub(super) fn find_candidates_parallel(&self, hay: &[u8], span: Range<usize>, out: &mut Found) {
        // A few pieces a thread, so that a thread done with other work (a
        // stream frames its window meanwhile) takes some.
        let pieces = (4 * rayon::current_num_threads()).min(span.len() / PARALLEL_PIECE_MIN);
        if pieces < 2 {
            return self.find_candidates(hay, span, out);
        }
        use rayon::prelude::*;
        let step = span.len() / pieces;
        let mut cuts = vec![span.start];
        for i in 1..pieces {
            let at = line_end_after(hay, span.start + i * step).min(span.end);
            if at > *cuts.last().expect("one cut") {
                cuts.push(at);
            }
        }
        cuts.push(span.end);
        let found: Vec<Found> = cuts
            .par_windows(2)
            .map(|w| {
                let mut piece = Found::default();
                self.find_candidates_sized(hay, w[0]..w[1], span.len(), &mut piece);
                piece
            })
            .collect();
        out.clear();
        for piece in &found {
            out.extend(piece);
        }
    }

    /// Records the start of every line in `hay[span]` that holds a
    /// pattern's anchor (`hits`), of every line that holds a probe's
    /// (`probes`), and of error-level lines no pattern anchors (`errors`). Only a line's first anchor is found by the fast
    /// pass; the rest of the line is searched only until both kinds are
    /// known.
    pub(super) fn find_candidates(&self, hay: &[u8], span: Range<usize>, out: &mut Found) {
        self.find_candidates_sized(hay, span.clone(), span.len(), out)
    }

    /// [`find_candidates`](Scanner::find_candidates) on a piece of a span
    /// of `size` bytes: the engine is the one the whole span gets (every
    /// engine finds the same lines; they differ in speed).
    pub(super) fn find_candidates_sized(
        &self,
        hay: &[u8],
        span: Range<usize>,
        size: usize,
        out: &mut Found,
    ) {
        self.find_candidates_counting(hay, span, size, out, None);
    }

    /// [`find_candidates_sized`](Scanner::find_candidates_sized), also
    /// counting the span's newlines where the first tier counts as it
    /// searches: `Some` of them then, `None` when they are left to count.
    pub(super) fn find_candidates_counted(
        &self,
        hay: &[u8],
        span: Range<usize>,
        size: usize,
        out: &mut Found,
    ) -> Option<u64> {
        let mut n = 0;
        self.find_candidates_counting(hay, span, size, out, Some(&mut n))
            .then_some(n)
    }

    fn find_candidates_counting(
        &self,
        hay: &[u8],
        span: Range<usize>,
        size: usize,
        out: &mut Found,
        newlines: Option<&mut u64>,
    ) -> bool {
        out.clear();
        // A glog header on the very first line has no newline before it.
        if span.start == 0
            && hay.len() > 2
            && matches!(hay[0], b'E' | b'F')
            && matches!(hay[1], b'0' | b'1')
        {
            out.errors.push(0);
        }
        let two_tier = match self.config.engine {
            LiteralEngine::Auto => size >= DFA_MIN_SPAN,
            LiteralEngine::Nfa | LiteralEngine::Dfa => false,
            _ => true,
        };
        // Hyperscan where asked for, and for `Auto` where the exact-byte
        // tier (faster still) does not run on vectors.
        #[cfg(feature = "hyperscan")]
        if two_tier
            && match self.config.engine {
                LiteralEngine::Hyperscan => true,
                LiteralEngine::Auto => !exact::vector(),
                _ => false,
            }
        {
            if let Some(hs) = self.hyperscan() {
                self.hyperscan_pass(hs, hay, span, out);
                return false;
            }
        }
        let first = match self.config.engine {
            _ if !two_tier => None,
            LiteralEngine::TwoTier => self.prefilter(),
            LiteralEngine::Exact => self.exact_prefilter(),
            LiteralEngine::Hashed => self.hashed_prefilter(),
            _ => self.best_prefilter(),
        };
        if let Some(pf) = first {
            return self.two_tier(pf, hay, span, out, newlines);
        }
        let (ac, anchor_kinds) = self.scan_ac(size);
        self.plain_pass(ac, anchor_kinds, hay, span, out);
        false
    }

    /// The plain pass over `hay[span]` (which starts at a line start): the
    /// automaton from line to line. Returns where it stopped.
    pub(super) fn plain_pass(
        &self,
        ac: &AhoCorasick,
        anchor_kinds: &[u8],
        hay: &[u8],
        span: Range<usize>,
        out: &mut Found,
    ) -> usize {
        let mut pos = span.start;
        while pos < span.end {
            let from = search_from(hay, pos);
            let input = aho_corasick::Input::new(hay).span(from..span.end);
            let Some(m) = ac.find(input) else {
                return span.end;
            };
            pos = self.take_line(ac, anchor_kinds, hay, pos, m, span.end, out);
        }
        pos
    }

    /// Records the line that holds the anchor match `m` (found searching
    /// from the line start `pos`) with its kinds, searching the rest of the
    /// line only until every kind is known; returns the next line's start.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn take_line(
        &self,
        ac: &AhoCorasick,
        anchor_kinds: &[u8],
        hay: &[u8],
        pos: usize,
        m: aho_corasick::Match,
        end: usize,
        out: &mut Found,
    ) -> usize {
        // An anchor that starts with the newline before its line.
        let start = if hay[m.start()] == b'\n' {
            m.start() + 1
        } else {
            memchr::memrchr2(b'\n', b'\r', &hay[pos..m.start()]).map_or(pos, |p| pos + p + 1)
        };
        let content_end =
            memchr::memchr2(b'\n', b'\r', &hay[m.end()..end]).map_or(end, |p| m.end() + p);
        let mut kinds = anchor_kinds[m.pattern().as_usize()];
        out.fired.insert(self.anchor_of(ac, m.pattern()));
        let mut at = m.end();
        while kinds != ALL_KINDS && at < content_end {
            let rest = aho_corasick::Input::new(hay).span(at..content_end);
            let Some(more) = ac.find(rest) else {
                break;
            };
            kinds |= anchor_kinds[more.pattern().as_usize()];
            out.fired.insert(self.anchor_of(ac, more.pattern()));
            at = more.end();
        }
        record(out, kinds, start);
        if let Some(next) = burst(out, hay, start, kinds, end) {
            return next;
        }
        if out.recent.len() == RECENT {
            out.recent.remove(0);
        }
        out.recent.push((start, kinds));
        next_line(hay, content_end, end)
    }
}

/// What the literal pass found: the starts of candidate lines, of probe
/// lines and of unclassified error lines, in order.
#[derive(Default)]
pub(super) struct Found {
    pub hits: Vec<usize>,
    pub probes: Vec<usize>,
    pub errors: Vec<usize>,
    /// The anchors found, whose regexes are compiled before framing.
    pub fired: Fired,
    /// The last [`RECENT`] lines the pass took (with an anchor), oldest
    /// first, with their anchors' kinds: every other line after the oldest
    /// that the pass went past has none.
    recent: Vec<(usize, u8)>,
}

/// The lines taken a burst's period may hold: a warning from each of
/// sixteen ranks.
const RECENT: usize = 16;

/// The longest burst period the literal pass compares.
const MAX_PERIOD: usize = 16 << 10;

/// A burst: after the line at `start` was taken (with anchors of
/// `kinds`), the bytes from one of the recent lines taken up to it (one
/// warning, or a few ranks' copies of it, with the lines no anchor is on)
/// come again right after it, once or many times. Lines with the same
/// bytes and the same byte before them hold the same anchors, so the lines
/// of each repeated period are recorded as their first copies were, after
/// a comparison instead of a search. Returns where the pass goes on, or
/// `None` when no period repeats.
fn burst(out: &mut Found, hay: &[u8], start: usize, kinds: u8, end: usize) -> Option<usize> {
    if start == 0 || hay[start - 1] != b'\n' {
        return None;
    }
    // Newest first: the shortest period.
    let k = (0..out.recent.len()).rev().find(|&k| {
        let q = out.recent[k].0;
        let p = start.wrapping_sub(q);
        q < start
            && p <= MAX_PERIOD
            && start + p <= end
            // A period ends with a newline, as the one before `start` does:
            // a cheap test before the comparison.
            && hay[start + p - 1] == b'\n'
            && hay[start..start + p] == hay[q..start]
    })?;
    let q = out.recent[k].0;
    let p = start - q;
    // The lines taken in one period, from its start; its first line is
    // preceded by a newline, as the one at `start` is.
    let mut takes: Vec<(usize, u8)> = out.recent[k..]
        .iter()
        .map(|&(at, kd)| (at - q, kd))
        .collect();
    takes[0].1 = kinds;
    // A copy's probe lines are its first copy's: what they say is known.
    let copy = |kd: u8| kd & !FOR_PROBE;
    for &(o, kd) in &takes[1..] {
        record(out, copy(kd), start + o);
    }
    let mut s = start;
    while s + 2 * p <= end && hay[s + p..s + 2 * p] == hay[s..s + p] {
        s += p;
        for &(o, kd) in &takes {
            record(out, copy(kd), s + o);
        }
    }
    out.recent.clear();
    out.recent.extend(takes.iter().map(|&(o, kd)| (s + o, kd)));
    Some(s + p)
}

/// Records the line at `at`, whose anchors are of `kinds`.
fn record(out: &mut Found, kinds: u8, at: usize) {
    if kinds & FOR_PATTERN != 0 {
        out.hits.push(at);
    }
    if kinds & FOR_PROBE != 0 {
        out.probes.push(at);
    }
    if kinds & (FOR_ERROR | FOR_PATTERN) == FOR_ERROR {
        out.errors.push(at);
    }
}

impl Found {
    pub(super) fn clear(&mut self) {
        self.hits.clear();
        self.probes.clear();
        self.errors.clear();
        self.fired.clear();
        self.recent.clear();
    }

    /// Forgets what was found after the first `hits`, `probes` and
    /// `errors`, to search that part again from the start.
    #[cfg_attr(not(feature = "hyperscan"), allow(dead_code))]
    pub(super) fn rewind(&mut self, (hits, probes, errors): (usize, usize, usize)) {
        self.hits.truncate(hits);
        self.probes.truncate(probes);
        self.errors.truncate(errors);
        // The lines taken since are searched again.
        self.recent.clear();
    }

    /// Adds what the search of the next piece found.
    pub(super) fn extend(&mut self, piece: &Found) {
        self.hits.extend_from_slice(&piece.hits);
        self.probes.extend_from_slice(&piece.probes);
        self.errors.extend_from_slice(&piece.errors);
        self.fired.union(&piece.fired);
    }
}

/// Where the search for the line starting at `line` begins: the newline
/// before it, so that anchors that begin with it (glog headers) match at a
/// line start.
pub(super) fn search_from(hay: &[u8], line: usize) -> usize {
    if line > 0 && hay[line - 1] == b'\n' {
        line - 1
    } else {
        line
    }
}

/// The start of the line after the one whose content ends at `content_end`
/// (a `\r\n` pair is one terminator), at most `end`.
pub(super) fn next_line(hay: &[u8], content_end: usize, end: usize) -> usize {
    if content_end >= end {
        end
    } else if hay[content_end] == b'\r' && hay.get(content_end + 1) == Some(&b'\n') {
        content_end + 2
    } else {
        content_end + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScannerBuilder;

    /// The lines a pass must find, each line searched on its own.
    fn line_by_line(s: &Scanner, hay: &[u8]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
        let (ac, anchor_kinds) = s.scan_ac(usize::MAX);
        let mut out = Found::default();
        let mut pos = 0;
        while pos < hay.len() {
            let content_end =
                memchr::memchr2(b'\n', b'\r', &hay[pos..]).map_or(hay.len(), |p| pos + p);
            let mut kinds = 0u8;
            let mut at = search_from(hay, pos);
            while let Some(m) = ac.find(aho_corasick::Input::new(hay).span(at..content_end)) {
                kinds |= anchor_kinds[m.pattern().as_usize()];
                at = m.end();
            }
            if kinds != 0 {
                record(&mut out, kinds, pos);
            }
            pos = next_line(hay, content_end, hay.len());
        }
        (out.hits, out.probes, out.errors)
    }

    /// Bursts of one to five lines repeated, broken part way, after a
    /// `\r` instead of a newline, at the very end without one: each engine
    /// finds what a search of each line on its own finds.
    #[test]
    fn a_burst_is_found_as_each_of_its_lines_would_be() {
        let warn = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED\n";
        let ranks: String = (0..4)
            .map(|r| format!("[rank{r}]:{warn}[rank{r}]:  return F.conv2d(input, weight)\n"))
            .collect();
        let periods: [&[&str]; 6] = [
            &[&ranks],
            &[warn],
            &[
                warn,
                "  return F.conv2d(input, weight, bias, self.stride,\n",
            ],
            &[
                "[rank0]:",
                "x\n",
                "[rank1]:RuntimeError: CUDA error: out of memory\n",
            ],
            &[
                "INFO step 3 loss 0.5\n",
                "torch.backends.cudnn.benchmark = True\n",
                warn,
                "\n",
            ],
            &[
                "E1203 11:58:00.123 1 a.cc:9] NCCL error\n",
                "ok\n",
                "ok\n",
                "ok\n",
                "ValueError: bad\n",
            ],
        ];
        let mut log = String::new();
        for (i, period) in periods.iter().enumerate() {
            for n in 0..(50 + 13 * i) {
                log.push_str(&period.concat());
                if n == 20 + i {
                    // A break in the burst: one line changed.
                    log.push_str("INFO step 4 loss 0.5\n");
                }
            }
            log.push_str("\rUserWarning: Plan failed with a cudnnException\r\n");
            log.push_str(&"UserWarning: Plan failed with a cudnnException\r\n".repeat(5));
        }
        log.push_str(&warn.repeat(3));
        log.push_str(warn.trim_end());
        let hay = log.as_bytes();
        for engine in [
            LiteralEngine::Auto,
            LiteralEngine::Nfa,
            LiteralEngine::Dfa,
            LiteralEngine::TwoTier,
            LiteralEngine::Exact,
            LiteralEngine::Hashed,
        ] {
            let s = ScannerBuilder::new()
                .literal_engine(engine)
                .build(crate::Catalog::builtin().unwrap());
            let want = line_by_line(&s, hay);
            assert!(
                want.0.len() > 300 && !want.1.is_empty() && !want.2.is_empty(),
                "{:?}",
                (want.0.len(), want.1.len(), want.2.len())
            );
            for size in [hay.len(), DFA_MIN_SPAN] {
                let mut found = Found::default();
                s.find_candidates_sized(hay, 0..hay.len(), size, &mut found);
                assert_eq!(
                    (&found.hits, &found.errors),
                    (&want.0, &want.2),
                    "{engine:?}, size {size}"
                );
                // A copy's probe lines are left out: a line with the same
                // bytes was taken before it.
                let line = |at: usize| {
                    let end =
                        memchr::memchr2(b'\n', b'\r', &hay[at..]).map_or(hay.len(), |p| at + p);
                    &hay[at..end]
                };
                assert!(found.probes.iter().all(|p| want.1.contains(p)));
                for &p in &want.1 {
                    let known = found.probes.iter().any(|&f| f <= p && line(f) == line(p));
                    assert!(known, "{engine:?}, size {size}: probe line at {p}");
                }
                assert!(
                    found.probes.len() < want.1.len() / 4,
                    "{engine:?}, size {size}"
                );
            }
        }
    }

    /// The lines where a first tier fired, read with the NFA or the DFA:
    /// the same lines and kinds, on the wild corpus.
    #[test]
    fn the_nfa_standing_in_for_the_dfa_takes_the_same_lines() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/wild/cases");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path().join("log.txt"))
            .collect();
        names.sort();
        let hay: Vec<u8> = names
            .iter()
            .flat_map(|n| std::fs::read(n).unwrap())
            .collect();
        for engine in [
            LiteralEngine::TwoTier,
            LiteralEngine::Exact,
            LiteralEngine::Hashed,
        ] {
            let s = ScannerBuilder::new()
                .literal_engine(engine)
                .build(crate::Catalog::builtin().unwrap());
            let mut found = [Found::default(), Found::default()];
            for (built, found) in [false, true].into_iter().zip(&mut found) {
                if built {
                    s.scan_ac(usize::MAX);
                }
                s.find_candidates_sized(&hay, 0..hay.len(), DFA_MIN_SPAN, found);
                assert_eq!(s.scan_dfa.get().is_some(), built, "{engine:?}");
            }
            let [nfa, dfa] = found;
            assert!(
                dfa.hits.len() > 150 && !dfa.errors.is_empty(),
                "{}",
                dfa.hits.len()
            );
            assert_eq!(
                (nfa.hits, nfa.probes, nfa.errors),
                (dfa.hits, dfa.probes, dfa.errors),
                "{engine:?}"
            );
        }
    }
}
