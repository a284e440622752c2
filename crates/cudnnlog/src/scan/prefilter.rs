//! The two-tier literal pass: a SIMD search for a few short fingerprints
//! that every line anchor contains, then the anchor DFA only on the lines
//! where one fired.
//!
//! The first tier is the exact-byte search of `scan/exact.rs` where the
//! CPU has AVX-512 VBMI (its fingerprints are the 4-byte windows of
//! `patterns/prefilter-exact.txt`), the hashed search of `scan/hashed.rs`
//! over the same fingerprints where it has AVX2, Teddy elsewhere.
//!
//! The DFA over ~900 anchors reads every byte through a large transition
//! table; Teddy (aho-corasick's packed searcher) compares 32 bytes at a time
//! against at most 64 short literals. Every anchor contains one of the
//! fingerprints in `patterns/prefilter.txt` (chosen by `cargo xtask
//! prefilter` from how rarely they occur on the anchor-free lines of
//! `fixtures/`), so a line with no fingerprint has no anchor, and the line
//! where one fires is searched with the DFA exactly as the plain pass
//! searches it: the same lines with the same kinds, by construction. An
//! anchor of a user's catalog that no listed fingerprint covers brings its
//! own (its first eight bytes). When fingerprints fire on most lines of a
//! block (a log of nothing but error lines), the next blocks are searched
//! with the plain DFA.

use super::exact::Exact;
use super::hashed::Hashed;
use crate::scan::exact;
use crate::scan::hashed;
use crate::scan::line_end_after;
use crate::scan::next_line;
use crate::scan::search_from;
use crate::scan::Found;
use crate::Scanner;
use aho_corasick::packed;
use aho_corasick::AhoCorasick;
use std::ops::Range;
use std::sync::OnceLock;

/// The built-in fingerprints of the Teddy tier, one per line, `\n`, `\\`
/// and `\xNN` escaped.
pub const BUILTIN: &str = include_str!("../../patterns/prefilter.txt");

/// The built-in fingerprints of the exact-byte tier (4-byte windows), as
/// [`BUILTIN`] is written.
///
/// ```
/// use cudnnlog::prefilter::{parse, EXACT_BUILTIN};
/// assert!(parse(EXACT_BUILTIN).iter().all(|f| f.len() == 4));
/// ```
pub const EXACT_BUILTIN: &str = include_str!("../../patterns/prefilter-exact.txt");

/// Teddy's limit without its hidden options.
const PER_SEARCHER: usize = 64;
/// Beyond this many searchers the plain DFA is as fast.
const MAX_SEARCHERS: usize = 4;
/// How often each byte value occurs in the logs of `fixtures/`, sixteen
/// counts a line (bytes 0 to 255), written by `cargo xtask prefilter`: the
/// exact-byte tier puts its fingerprints in buckets that accept the
/// fewest windows of a log like these.
///
/// ```
/// let counts: Vec<u64> = cudnnlog::prefilter::BYTE_COUNTS
///     .lines()
///     .filter(|l| !l.starts_with('#'))
///     .flat_map(str::split_whitespace)
///     .map(|n| n.parse().unwrap())
///     .collect();
/// assert_eq!(counts.len(), 256);
/// assert!(counts[b'e' as usize] > counts[b'Q' as usize]);
/// ```
pub const BYTE_COUNTS: &str = super::exact::BYTE_COUNTS;

/// The shortest fingerprint: shorter ones make Teddy fire everywhere.
pub const FINGERPRINT_MIN: usize = 3;
/// A fingerprint an uncovered anchor brings is at most this long.
const FINGERPRINT_MAX: usize = 8;
/// The guard's block, and how many lines may fire in one before the plain
/// DFA takes the next [`PLAIN_RUN`] bytes.
const GUARD_BLOCK: usize = 1 << 20;
const GUARD_LINES: usize = 2048;
const PLAIN_RUN: usize = 1 << 20;

/// A first tier: the fingerprint searchers.
#[derive(Debug)]
pub(super) enum Prefilter {
    /// Teddy's searchers, grouped by length (Teddy's mask is as long as a
    /// group's shortest literal).
    Teddy(Vec<packed::Searcher>),
    /// The exact-byte search, one for all fingerprints.
    Exact(Exact),
    /// The hashed search, one for all fingerprints.
    Hashed(Hashed),
}

/// The scanner's first tiers, each built on first use.
#[derive(Debug, Default)]
pub(super) struct FirstTiers {
    teddy: OnceLock<Option<Prefilter>>,
    exact: OnceLock<Option<Prefilter>>,
    hashed: OnceLock<Option<Prefilter>>,
}

/// Reads a fingerprint list: one literal per line, `#` comments and blank
/// lines skipped, `\n`, `\r`, `\t`, `\\` and `\xNN` unescaped.
///
/// ```
/// use cudnnlog::prefilter::parse;
/// assert_eq!(parse("# comment\nCUDA e\n\\nE0\n\\xe9\\x94\\x99\n"), [b"CUDA e".to_vec(), b"\nE0".to_vec(), "错".as_bytes().to_vec()]);
/// ```
pub fn parse(text: &str) -> Vec<Vec<u8>> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let b = l.as_bytes();
            let mut out = Vec::with_capacity(b.len());
            let mut i = 0;
            while i < b.len() {
                match (b[i], b.get(i + 1)) {
                    (b'\\', Some(b'n')) => out.push(b'\n'),
                    (b'\\', Some(b'r')) => out.push(b'\r'),
                    (b'\\', Some(b't')) => out.push(b'\t'),
                    (b'\\', Some(b'\\')) => out.push(b'\\'),
                    (b'\\', Some(b'x')) if b.len() >= i + 4 => {
                        let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap_or("");
                        match u8::from_str_radix(hex, 16) {
                            Ok(v) => {
                                out.push(v);
                                i += 4;
                                continue;
                            }
                            Err(_) => out.extend_from_slice(&b[i..i + 2]),
                        }
                    }
                    (c, _) => {
                        out.push(c);
                        i += 1;
                        continue;
                    }
                }
                i += 2;
            }
            out
        })
        .collect()
}

/// Writes a literal as [`parse`] reads it.
///
/// ```
/// use cudnnlog::prefilter::{escape, parse};
/// assert_eq!(escape(b"\nE0"), "\\nE0");
/// assert_eq!(parse(&escape("错误 \\".as_bytes())), ["错误 \\".as_bytes().to_vec()]);
/// ```
pub fn escape(literal: &[u8]) -> String {
    let mut s = String::new();
    for &c in literal {
        match c {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

/// The lines of a log as the first tier sees them, for weighing
/// fingerprints: a line ends at `\n` or at `\r` (a progress bar's update),
/// and each is led by the byte that ended the line before it (`\n` for the
/// first), since a fingerprint such as `\nE0` starts there.
///
/// ```
/// use cudnnlog::prefilter::lines;
/// let got: Vec<Vec<u8>> = lines(b"a\rb\nc\r\n").collect();
/// assert_eq!(got, [&b"\na"[..], b"\rb", b"\nc", b"\r", b"\n"]);
/// ```
pub fn lines(log: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let ends = memchr::memchr2_iter(b'\n', b'\r', log).chain([log.len()]);
    ends.scan((b'\n', 0), move |(before, start), end| {
        let mut line = Vec::with_capacity(end - *start + 1);
        line.push(*before);
        line.extend_from_slice(&log[*start..end]);
        *before = log.get(end).copied().unwrap_or(b'\n');
        *start = end + 1;
        Some(line)
    })
}

/// The anchors (indices) that contain none of `fingerprints`.
///
/// ```
/// use cudnnlog::prefilter::uncovered;
/// let fps = [b"of mem".to_vec()];
/// assert_eq!(uncovered(&["CUDA out of memory", "NCCL error"], &fps), [1]);
/// ```
pub fn uncovered(anchors: &[&str], fingerprints: &[Vec<u8>]) -> Vec<usize> {
    (0..anchors.len())
        .filter(|&i| {
            let a = anchors[i].as_bytes();
            !fingerprints
                .iter()
                .any(|f| memchr::memmem::find(a, f).is_some())
        })
        .collect()
}

impl Prefilter {
    /// The searchers for `anchors`: the `listed` fingerprints some anchor
    /// contains, and one for every anchor none covers. `None` when the
    /// plain DFA must do: an anchor shorter than a fingerprint, or with a
    /// line break past its start, too many fingerprints, or no SIMD.
    pub(super) fn new(anchors: &[&str], listed: Vec<Vec<u8>>) -> Option<Prefilter> {
        let fps = fingerprints(anchors, listed)?;
        // Groups of one mask length (4 bytes, or 3), at most 64 each.
        let mut groups: Vec<Vec<Vec<u8>>> = Vec::new();
        for f in fps {
            match groups.last_mut() {
                Some(g) if g.len() < PER_SEARCHER && g[0].len().min(4) == f.len().min(4) => {
                    g.push(f)
                }
                _ => groups.push(vec![f]),
            }
        }
        if groups.len() > MAX_SEARCHERS {
            return None;
        }
        let searchers = groups
            .iter()
            .map(|g| {
                packed::Config::new()
                    .match_kind(packed::MatchKind::LeftmostFirst)
                    .builder()
                    .extend(g)
                    .build()
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Prefilter::Teddy(searchers))
    }

    /// The exact-byte tier for `anchors`, as [`Prefilter::new`] chooses
    /// its fingerprints.
    pub(super) fn exact(anchors: &[&str], listed: Vec<Vec<u8>>) -> Option<Prefilter> {
        Exact::new(&fingerprints(anchors, listed)?).map(Prefilter::Exact)
    }

    /// The hashed tier for `anchors`, as [`Prefilter::new`] chooses its
    /// fingerprints.
    pub(super) fn hashed(anchors: &[&str], listed: Vec<Vec<u8>>) -> Option<Prefilter> {
        Hashed::new(&fingerprints(anchors, listed)?).map(Prefilter::Hashed)
    }

    /// How many searchers it runs.
    fn searchers(&self) -> usize {
        match self {
            Prefilter::Teddy(s) => s.len(),
            Prefilter::Exact(_) | Prefilter::Hashed(_) => 1,
        }
    }

    /// Searcher `i`'s first fingerprint in `hay[from..end]`, or [`NONE`].
    fn find(&self, i: usize, hay: &[u8], from: usize, end: usize) -> usize {
        let hit = match self {
            Prefilter::Teddy(s) => s[i]
                .find_in(hay, aho_corasick::Span::from(from..end))
                .map(|m| m.start()),
            Prefilter::Exact(e) => e.find(hay, from, end),
            Prefilter::Hashed(h) => h.find(hay, from, end),
        };
        hit.unwrap_or(NONE)
    }
}

/// The fingerprints for `anchors`: the `listed` ones some anchor contains,
/// and one for every anchor none covers (its first eight bytes), longest
/// masks first. `None` when the plain DFA must do: an anchor shorter than
/// a fingerprint, or with a line break past its start.
pub(super) fn fingerprints(anchors: &[&str], listed: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
    let breaks = |a: &str| a.as_bytes()[1..].iter().any(|&c| c == b'\n' || c == b'\r');
    if anchors
        .iter()
        .any(|a| a.len() < FINGERPRINT_MIN || breaks(a))
    {
        return None;
    }
    let mut fps: Vec<Vec<u8>> = listed
        .into_iter()
        .filter(|f| f.len() >= FINGERPRINT_MIN)
        .filter(|f| {
            anchors
                .iter()
                .any(|a| memchr::memmem::find(a.as_bytes(), f).is_some())
        })
        .collect();
    for i in uncovered(anchors, &fps) {
        let a = anchors[i].as_bytes();
        fps.push(a[..a.len().min(FINGERPRINT_MAX)].to_vec());
    }
    fps.sort_by(|a, b| b.len().min(4).cmp(&a.len().min(4)).then(a.cmp(b)));
    fps.dedup();
    Some(fps)
}

/// No fingerprint further on.
const NONE: usize = usize::MAX;

impl Scanner {
    /// The Teddy tier for the line anchors, built on first use; `None`
    /// when the plain DFA must do.
    pub(super) fn prefilter(&self) -> Option<&Prefilter> {
        self.prefilter
            .teddy
            .get_or_init(|| Prefilter::new(&self.line_anchors(), parse(BUILTIN)))
            .as_ref()
    }

    /// The exact-byte tier for the line anchors, built on first use.
    pub(super) fn exact_prefilter(&self) -> Option<&Prefilter> {
        self.prefilter
            .exact
            .get_or_init(|| Prefilter::exact(&self.line_anchors(), parse(EXACT_BUILTIN)))
            .as_ref()
    }

    /// The hashed tier for the line anchors, built on first use.
    pub(super) fn hashed_prefilter(&self) -> Option<&Prefilter> {
        self.prefilter
            .hashed
            .get_or_init(|| Prefilter::hashed(&self.line_anchors(), parse(EXACT_BUILTIN)))
            .as_ref()
    }

    /// The first tier [`LiteralEngine::Auto`] uses: the exact-byte one
    /// where the CPU runs it on vectors, else the hashed one where it runs
    /// on vectors (AVX2), else Teddy's (or when neither can be built).
    ///
    /// On one thread over the same bytes, the hashed tier's AVX2 search
    /// read 1.6 GB/s where Teddy's three searchers read 0.5; its scalar
    /// code read 0.45–0.67 GB/s, no better than Teddy on AVX2, so a CPU
    /// with neither (ARM, where Teddy runs on NEON) keeps Teddy until the
    /// two are measured there.
    pub(super) fn best_prefilter(&self) -> Option<&Prefilter> {
        let best = if exact::vector() {
            self.exact_prefilter()
        } else if hashed::vector() {
            self.hashed_prefilter()
        } else {
            None
        };
        best.or_else(|| self.prefilter())
    }

    /// [`find_candidates`](Scanner::find_candidates)' search with the
    /// prefilter: the DFA runs only on lines where a fingerprint fired (and
    /// on whole runs of lines after a block where most did).
    ///
    /// With `newlines`, where the first tier counts as it searches
    /// ([`Exact::counts`]), also adds the span's newlines to it and returns
    /// true: the search counts the bytes it goes over, and the lines it
    /// stops at and runs of the plain DFA are counted after. Otherwise it
    /// returns false and counts nothing.
    pub(super) fn two_tier(
        &self,
        pf: &Prefilter,
        hay: &[u8],
        span: Range<usize>,
        out: &mut Found,
        mut newlines: Option<&mut u64>,
    ) -> bool {
        if !matches!(pf, Prefilter::Exact(e) if e.counts()) {
            newlines = None;
        }
        let (ac, kinds) = self.fired_ac();
        // Each searcher's next hit (`NONE`: there is none); `None` until
        // searched, and again after a run of the plain DFA.
        let mut next: Vec<Option<usize>> = vec![None; pf.searchers()];
        let (mut pos, mut block, mut fired) = (span.start, span.start, 0usize);
        // Newlines before `counted` (from the span's start) are counted.
        let mut counted = span.start;
        let count = |to: usize, counted: &mut usize, n: &mut Option<&mut u64>| {
            if let Some(n) = n.as_deref_mut() {
                if to > *counted {
                    *n += bytecount::count(&hay[*counted..to], b'\n') as u64;
                    *counted = to;
                }
            }
        };
        while pos < span.end {
            if pos >= block + GUARD_BLOCK {
                if fired > GUARD_LINES {
                    let to = line_end_after(hay, (pos + PLAIN_RUN).min(span.end)).min(span.end);
                    let (dfa, kinds) = self.scan_ac(usize::MAX);
                    pos = self.plain_pass(dfa, kinds, hay, pos..to, out);
                    next.fill(None);
                }
                (block, fired) = (pos, 0);
                continue;
            }
            count(pos, &mut counted, &mut newlines);
            let from = search_from(hay, pos);
            // The nearest fingerprint of any searcher; a searcher's next
            // hit stays valid until the search passes it.
            let mut p = NONE;
            for (i, next) in next.iter_mut().enumerate() {
                let hit = match (*next, &mut newlines, pf) {
                    (Some(h), _, _) if h == NONE || h >= from => h,
                    (_, Some(n), Prefilter::Exact(e)) => {
                        // The search counts from `from`, which is the
                        // newline before `pos` (counted already) when it
                        // starts there; it may stop right at it, where a
                        // glog anchor starts.
                        let mut found = 0;
                        let hit = e.find_counting(hay, from, span.end, &mut found);
                        let stop = hit.unwrap_or(span.end);
                        **n += found - (stop.min(pos) - from) as u64;
                        counted = counted.max(stop);
                        hit.unwrap_or(NONE)
                    }
                    _ => pf.find(i, hay, from, span.end),
                };
                *next = Some(hit);
                p = p.min(hit);
            }
            if p == NONE {
                break;
            }
            fired += 1;
            pos = self.fired_at(ac, kinds, hay, pos..span.end, p, out);
        }
        count(span.end, &mut counted, &mut newlines);
        newlines.is_some()
    }

    /// Searches the line where a fingerprint fired at `p` (at or past the
    /// line start `rest.start`) with the anchor DFA, as the plain pass
    /// would; returns the next line's start.
    pub(super) fn fired_at(
        &self,
        ac: &AhoCorasick,
        kinds: &[u8],
        hay: &[u8],
        rest: Range<usize>,
        p: usize,
        out: &mut Found,
    ) -> usize {
        let pos = rest.start;
        // A fingerprint that starts with the newline before its line.
        let line = if hay[p] == b'\n' {
            p + 1
        } else {
            memchr::memrchr2(b'\n', b'\r', &hay[pos..p]).map_or(pos, |q| pos + q + 1)
        };
        let line_from = search_from(hay, line);
        let end =
            memchr::memchr2(b'\n', b'\r', &hay[line..rest.end]).map_or(rest.end, |q| line + q);
        match ac.find(aho_corasick::Input::new(hay).span(line_from..end)) {
            Some(m) => self.take_line(ac, kinds, hay, line, m, rest.end, out),
            None => next_line(hay, end, rest.end),
        }
    }
}
