//! An exact-byte SIMD search for many short literals: the two-tier pass's
//! first tier on CPUs with AVX-512 VBMI.
//!
//! Teddy (the packed searcher of aho-corasick) classifies a byte by its two
//! nibbles, looked up in 16-entry tables: with 118 fingerprints in 16
//! buckets nearly every byte is some bucket's, so it verifies almost
//! everywhere, and three searchers read every byte. VBMI's `vpermi2b` looks
//! a byte up in a 128-entry table, 64 bytes at a time, so the class of a
//! byte is exact. Each literal is put in one of 16 buckets and its first
//! [`WINDOW`] bytes set that bucket's bit in one table per position; a
//! lane where every position's table has the bucket's bit is a candidate,
//! verified against the bucket's literals. Literals shorter than the
//! window leave its last positions open (every byte has their bucket's
//! bit).
//!
//! The search is the same on every CPU: without VBMI (or under Miri) the
//! same tables are read one byte at a time, which is what the tests compare
//! the vector search against. The two-tier pass uses this tier only where
//! the vector search runs; elsewhere it uses the hashed search of
//! `scan/hashed.rs` (with AVX2) or Teddy.

/// How often each byte value occurs in real logs, as
/// [`prefilter::BYTE_COUNTS`](crate::prefilter::BYTE_COUNTS) gives it.
pub(super) const BYTE_COUNTS: &str = include_str!("../../patterns/byte-counts.txt");

/// How many leading bytes of a literal the tables hold.
pub(super) const WINDOW: usize = 4;
/// Buckets: 8 bits in each of two table halves.
const BUCKETS: usize = 16;
/// Bytes a vector step reads: 64 lanes and the window's last positions.
const STEP: usize = 64;

/// One way of putting the literals in buckets, and its tables.
#[derive(Debug)]
struct Buckets {
    /// `tables[j][h][b]`: bit `k` is set when a literal of bucket
    /// `8 * h + k` has byte `b` at position `j` (or is shorter than `j + 1`).
    tables: Box<[[[u8; 256]; 2]; WINDOW]>,
    /// Each bucket's literals of at most [`WINDOW`] bytes, as words to
    /// compare with the window's bytes at a candidate.
    words: Vec<Vec<Word>>,
    /// Each bucket's longer literals.
    literals: Vec<Vec<Box<[u8]>>>,
}

/// A literal of at most [`WINDOW`] bytes as a little-endian word: its
/// bytes, and a mask of as many bytes. Comparing a word is one load and
/// one compare, where `starts_with` calls `memcmp` (a fifth of a scan's
/// time went to those calls on four-byte literals).
#[derive(Debug, Clone, Copy)]
struct Word {
    bytes: u32,
    mask: u32,
}

impl Word {
    /// The word of `l`, `None` when it is longer than the window.
    fn of(l: &[u8]) -> Option<Word> {
        (l.len() <= WINDOW).then(|| {
            let mut bytes = [0u8; WINDOW];
            bytes[..l.len()].copy_from_slice(l);
            Word {
                bytes: u32::from_le_bytes(bytes),
                mask: u32::MAX >> (8 * (WINDOW - l.len())),
            }
        })
    }
}

/// The filter for a set of literals: two bucketings of them.
///
/// A lane is a candidate only where both bucketings have a bucket whose
/// window matches it. A bucket of several literals matches byte mixes of
/// them (`ens` in a bucket of `ed `, `inf` and `ges`); the second bucketing
/// groups the literals by their last window bytes instead of their first,
/// so a mix one accepts the other mostly refuses.
#[derive(Debug)]
pub(super) struct Exact {
    by_head: Buckets,
    by_tail: Buckets,
    /// Whether the CPU runs the vector search.
    vector: bool,
}

impl Buckets {
    /// Puts `lits` (sorted as the bucketing wants them) in buckets, in
    /// sorted runs, then [`settle`]d when `settled`.
    fn new(lits: &[&[u8]], settled: bool) -> Buckets {
        // Literals shorter than the window in buckets of their own, so that
        // their open positions do not widen a full-length bucket; each kind
        // gets buckets in proportion to its count, its literals in sorted
        // runs (neighbours share bytes, so a bucket's byte sets stay small).
        let (short, full): (Vec<&[u8]>, Vec<&[u8]>) = lits.iter().partition(|l| l.len() < WINDOW);
        let short_buckets = match (short.len(), full.len()) {
            (0, _) => 0,
            (_, 0) => BUCKETS,
            (s, f) => ((BUCKETS * s + (s + f) / 2) / (s + f)).clamp(1, BUCKETS - 1),
        };
        let mut literals: Vec<Vec<Box<[u8]>>> = vec![Vec::new(); BUCKETS];
        let mut spread = |group: &[&[u8]], first: usize, count: usize| {
            for (i, l) in group.iter().enumerate() {
                literals[first + i * count / group.len()].push((*l).into());
            }
        };
        spread(&short, 0, short_buckets);
        spread(&full, short_buckets, BUCKETS - short_buckets);
        if settled {
            let share = byte_shares();
            settle(&mut literals[..short_buckets], &share);
            settle(&mut literals[short_buckets..], &share);
        }
        let words = literals
            .iter()
            .map(|b| b.iter().filter_map(|l| Word::of(l)).collect())
            .collect();
        let mut tables = Box::new([[[0u8; 256]; 2]; WINDOW]);
        for (k, bucket) in literals.iter().enumerate() {
            let (half, bit) = (k / 8, 1u8 << (k % 8));
            for lit in bucket {
                for (j, table) in tables.iter_mut().enumerate() {
                    match lit.get(j) {
                        Some(&b) => table[half][b as usize] |= bit,
                        None => table[half].iter_mut().for_each(|t| *t |= bit),
                    }
                }
            }
        }
        for bucket in &mut literals {
            bucket.retain(|l| l.len() > WINDOW);
        }
        Buckets {
            tables,
            words,
            literals,
        }
    }

    /// The buckets whose window matches at `q`; a position past the end of
    /// `hay` matches only an open one.
    fn classes(&self, hay: &[u8], q: usize) -> u16 {
        let mut c = u16::MAX;
        for (j, t) in self.tables.iter().enumerate() {
            let (lo, hi) = match hay.get(q + j) {
                Some(&b) => (t[0][b as usize], t[1][b as usize]),
                // Open positions are set for every byte, 0 among them.
                None => (t[0][0] & t[0][0xff], t[1][0] & t[1][0xff]),
            };
            c &= u16::from(lo) | u16::from(hi) << 8;
        }
        c
    }
}

/// Moves literals between `buckets` while that shrinks the share of a
/// log's windows they accept. A bucket accepts every mix of its literals'
/// bytes: were a log's bytes independent, the share of its 4-byte windows
/// a bucket accepts is the product, over the window's positions, of the
/// shares of the bytes its literals have there (an open position accepts
/// every byte). A window that only a mix matches costs a verification.
/// Sorted runs keep the first (or last) bytes of a bucket alike but mix
/// the others: on a generated 1 GiB training log, "tch " and "och " (of
/// "batch " and "epoch ") passed both bucketings and made 97% of 17
/// million verifications, 2% of which found a literal; settled, 1.6
/// million. Each literal in turn moves to the bucket where it adds least,
/// until none moves.
fn settle(buckets: &mut [Vec<Box<[u8]>>], share: &[f64; 256]) {
    // Per bucket and window position: how many of its literals have each
    // byte there, the shares of those bytes together, and how many of its
    // literals are shorter (open there).
    struct Sets<'a> {
        share: &'a [f64; 256],
        count: Vec<[[u16; 256]; WINDOW]>,
        accepted: Vec<[f64; WINDOW]>,
        open: Vec<[u16; WINDOW]>,
    }
    impl Sets<'_> {
        /// The share of windows bucket `k` accepts with `l` added (`add`)
        /// or taken out (`l` is one of its literals then).
        fn volume(&self, k: usize, l: Option<&[u8]>, add: bool) -> f64 {
            (0..WINDOW)
                .map(|j| {
                    let (mut accepted, mut open) = (self.accepted[k][j], self.open[k][j]);
                    match l.map(|l| l.get(j)) {
                        Some(Some(&b)) => match (add, self.count[k][j][b as usize]) {
                            (true, 0) => accepted += self.share[b as usize],
                            (false, 1) => accepted -= self.share[b as usize],
                            _ => {}
                        },
                        Some(None) if add => open += 1,
                        Some(None) => open -= 1,
                        None => {}
                    }
                    if open > 0 {
                        1.0
                    } else {
                        accepted
                    }
                })
                .product()
        }

        fn change(&mut self, k: usize, l: &[u8], add: bool) {
            for j in 0..WINDOW {
                match l.get(j) {
                    Some(&b) => {
                        let c = &mut self.count[k][j][b as usize];
                        match (add, *c) {
                            (true, 0) => self.accepted[k][j] += self.share[b as usize],
                            (false, 1) => self.accepted[k][j] -= self.share[b as usize],
                            _ => {}
                        }
                        *c = if add { *c + 1 } else { *c - 1 };
                    }
                    None if add => self.open[k][j] += 1,
                    None => self.open[k][j] -= 1,
                }
            }
        }
    }
    let n = buckets.len();
    let mut sets = Sets {
        share,
        count: vec![[[0; 256]; WINDOW]; n],
        accepted: vec![[0.0; WINDOW]; n],
        open: vec![[0; WINDOW]; n],
    };
    for (k, bucket) in buckets.iter().enumerate() {
        for l in bucket {
            sets.change(k, l, true);
        }
    }
    // A move lowers the sum by a margin, so this ends; the bound keeps it
    // short whatever the literals.
    for _ in 0..32 {
        let mut moved = false;
        for from in 0..n {
            let mut i = 0;
            while i < buckets[from].len() {
                let l = &buckets[from][i];
                let saved = sets.volume(from, None, true) - sets.volume(from, Some(l), false);
                let best = (0..n)
                    .filter(|&to| to != from)
                    .map(|to| {
                        (
                            sets.volume(to, Some(l), true) - sets.volume(to, None, true),
                            to,
                        )
                    })
                    .filter(|&(added, _)| added < saved * (1.0 - 1e-9))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                match best {
                    Some((_, to)) => {
                        let l = buckets[from].swap_remove(i);
                        sets.change(from, &l, false);
                        sets.change(to, &l, true);
                        buckets[to].push(l);
                        moved = true;
                    }
                    None => i += 1,
                }
            }
        }
        if !moved {
            break;
        }
    }
}

/// The share of each byte value in real logs, from
/// `patterns/byte-counts.txt` (written by `cargo xtask prefilter` from the
/// logs in `fixtures/`); every byte has some share.
fn byte_shares() -> [f64; 256] {
    let mut share = [0.0; 256];
    let counts = BYTE_COUNTS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .map(|n| n.parse::<f64>().unwrap_or(0.0));
    for (s, n) in share.iter_mut().zip(counts) {
        *s = n + 1.0;
    }
    let total: f64 = share.iter().sum();
    share.map(|s| s / total)
}

impl Exact {
    /// The filter for `literals` (each at least one byte); `None` when
    /// there are none.
    pub(super) fn new(literals: &[Vec<u8>]) -> Option<Exact> {
        let mut lits: Vec<&[u8]> = literals
            .iter()
            .map(|l| l.as_slice())
            .filter(|l| !l.is_empty())
            .collect();
        if lits.is_empty() {
            return None;
        }
        lits.sort_unstable();
        lits.dedup();
        let by_head = Buckets::new(&lits, true);
        let window =
            |l: &[u8]| -> Vec<u8> { l[..l.len().min(WINDOW)].iter().rev().copied().collect() };
        lits.sort_by_key(|l| window(l));
        let by_tail = Buckets::new(&lits, true);
        Some(Exact {
            by_head,
            by_tail,
            vector: vector(),
        })
    }

    /// The leftmost start in `from..end` of a literal that lies wholly
    /// before `end` (bytes past `end` are read but never matched).
    pub(super) fn find(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        self.search::<false>(hay, from, end, &mut 0)
    }

    /// Whether [`find_counting`](Exact::find_counting) counts as it
    /// searches (where the vector search runs), rather than after.
    pub(super) fn counts(&self) -> bool {
        self.vector
    }

    /// [`find`](Exact::find), adding to `newlines` the newlines from
    /// `from` to where it stopped (the literal's start, or `end`): counted
    /// in the vector search's registers, while the bytes are loaded for it,
    /// instead of in a pass of their own over the same bytes.
    pub(super) fn find_counting(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        newlines: &mut u64,
    ) -> Option<usize> {
        self.search::<true>(hay, from, end, newlines)
    }

    /// [`find`](Exact::find); with `COUNT`, [`find_counting`](Exact::find_counting).
    fn search<const COUNT: bool>(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        newlines: &mut u64,
    ) -> Option<usize> {
        let end = end.min(hay.len());
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.vector {
            // SAFETY: `vector` is set only where the CPU has the features.
            return unsafe { self.find_vbmi::<COUNT>(hay, from, end, newlines) };
        }
        let found = self.find_scalar(hay, from, end);
        if COUNT {
            let to = found.unwrap_or(end).max(from);
            *newlines += bytecount::count(&hay[from.min(to)..to], b'\n') as u64;
        }
        found
    }

    /// [`find`](Exact::find) one byte at a time.
    pub(super) fn find_scalar(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        (from..end).find(|&q| {
            self.by_tail.classes(hay, q) != 0
                && self.verify(hay, q, end, self.by_head.classes(hay, q))
        })
    }

    /// Whether a literal of one of `classes`' buckets starts at `q` and
    /// ends by `end`.
    fn verify(&self, hay: &[u8], q: usize, end: usize, mut classes: u16) -> bool {
        let rest = &hay[q..end];
        // The window's bytes as a word, zeros past `end`; a literal longer
        // than what is left has mask bits there, so it fails on `left`.
        let (word, left) = match rest.first_chunk::<WINDOW>() {
            Some(w) => (u32::from_le_bytes(*w), u32::MAX),
            None => {
                let mut w = [0u8; WINDOW];
                w[..rest.len()].copy_from_slice(rest);
                (u32::from_le_bytes(w), !(u32::MAX << (8 * rest.len())))
            }
        };
        while classes != 0 {
            let k = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let b = &self.by_head;
            if b.words[k]
                .iter()
                .any(|w| word & w.mask == w.bytes && w.mask & !left == 0)
                || b.literals[k].iter().any(|l| rest.starts_with(l))
            {
                return true;
            }
        }
        false
    }

    /// [`find`](Exact::find) 64 bytes at a time; with `COUNT`, adds the
    /// newlines before where it stops to `newlines`.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512 F, BW and VBMI.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn find_vbmi<const COUNT: bool>(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        newlines: &mut u64,
    ) -> Option<usize> {
        // The AVX-512 intrinsics are a family of forty names used together.
        #[allow(clippy::wildcard_imports)]
        use std::arch::x86_64::*;
        // Groups: the two halves of each bucketing. Each group's table per
        // position as four 64-byte registers: bytes 0-127 (`low`) and
        // 128-255 (`high`), two registers each.
        let groups = [
            &self.by_head.tables,
            &self.by_head.tables,
            &self.by_tail.tables,
            &self.by_tail.tables,
        ];
        let load = |t: &[u8; 256], at: usize| {
            // SAFETY: `at + 64 <= 256`.
            unsafe { _mm512_loadu_si512(t[at..].as_ptr().cast()) }
        };
        let mut low = [[_mm512_setzero_si512(); 8]; WINDOW];
        let mut high = [[_mm512_setzero_si512(); 8]; WINDOW];
        for j in 0..WINDOW {
            for (g, tables) in groups.iter().enumerate() {
                let t = &tables[j][g % 2];
                low[j][2 * g] = load(t, 0);
                low[j][2 * g + 1] = load(t, 64);
                high[j][2 * g] = load(t, 128);
                high[j][2 * g + 1] = load(t, 192);
            }
        }
        let newline = _mm512_set1_epi8(b'\n' as i8);
        let mut p = from;
        while p < end && p + STEP + WINDOW - 1 <= hay.len() {
            // SAFETY: `p + 63 + WINDOW - 1 < hay.len()`.
            let x: [__m512i; WINDOW] = std::array::from_fn(|j| unsafe {
                _mm512_loadu_si512(hay[p + j..].as_ptr().cast())
            });
            // Bytes of 128 and more (x[0] and the last load cover the
            // step's bytes) need the second table.
            let wide = _mm512_movepi8_mask(x[0]) | _mm512_movepi8_mask(x[WINDOW - 1]) != 0;
            let mut c = [_mm512_set1_epi8(-1); 4];
            for j in 0..WINDOW {
                for (g, cg) in c.iter_mut().enumerate() {
                    let mut v = _mm512_permutex2var_epi8(low[j][2 * g], x[j], low[j][2 * g + 1]);
                    if wide {
                        let u = _mm512_permutex2var_epi8(high[j][2 * g], x[j], high[j][2 * g + 1]);
                        v = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x[j]), v, u);
                    }
                    *cg = _mm512_and_si512(*cg, v);
                }
            }
            let head = _mm512_test_epi8_mask(c[0], c[0]) | _mm512_test_epi8_mask(c[1], c[1]);
            let tail = _mm512_test_epi8_mask(c[2], c[2]) | _mm512_test_epi8_mask(c[3], c[3]);
            let mut lanes = head & tail;
            // The step's lanes before `end`.
            let before_end = match end - p {
                n if n < STEP => (1u64 << n) - 1,
                _ => u64::MAX,
            };
            lanes &= before_end;
            let breaks = if COUNT {
                _mm512_cmpeq_epi8_mask(x[0], newline) & before_end
            } else {
                0
            };
            if lanes != 0 {
                let (mut lo, mut hi) = ([0u8; STEP], [0u8; STEP]);
                // SAFETY: 64-byte arrays.
                unsafe {
                    _mm512_storeu_si512(lo.as_mut_ptr().cast(), c[0]);
                    _mm512_storeu_si512(hi.as_mut_ptr().cast(), c[1]);
                }
                while lanes != 0 {
                    let i = lanes.trailing_zeros() as usize;
                    lanes &= lanes - 1;
                    let classes = u16::from(lo[i]) | u16::from(hi[i]) << 8;
                    if self.verify(hay, p + i, end, classes) {
                        if COUNT {
                            *newlines += u64::from((breaks & ((1u64 << i) - 1)).count_ones());
                        }
                        return Some(p + i);
                    }
                }
            }
            if COUNT {
                *newlines += u64::from(breaks.count_ones());
            }
            p += STEP;
        }
        let rest = p.min(end);
        let found = self.find_scalar(hay, rest, end);
        if COUNT {
            let to = found.unwrap_or(end).max(rest);
            *newlines += bytecount::count(&hay[rest..to], b'\n') as u64;
        }
        found
    }
}

/// Whether this CPU runs the vector search.
pub(super) fn vector() -> bool {
    static VECTOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VECTOR.get_or_init(vbmi)
}

fn vbmi() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The leftmost start in `from..end` of a literal wholly before `end`.
    fn naive(lits: &[Vec<u8>], hay: &[u8], from: usize, end: usize) -> Option<usize> {
        lits.iter()
            .filter_map(|l| memchr::memmem::find(&hay[from..end], l).map(|q| from + q))
            .min()
    }

    /// A xorshift stream of bytes, mostly from a small alphabet (so that
    /// literals occur and buckets mix), sometimes any byte.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed | 1;
        let alphabet = b"edr tnoCU:\n]E0\xe9\x94";
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match x % 16 {
                    0 => (x >> 8) as u8,
                    _ => alphabet[(x >> 8) as usize % alphabet.len()],
                }
            })
            .collect()
    }

    #[test]
    fn the_search_finds_the_leftmost_literal_on_every_path() {
        let lits: Vec<Vec<u8>> = [
            &b"e"[..],
            b"dr",
            b"\nE0",
            b"]:E0",
            b"CUDA error",
            b"\xe9\x94\x99",
            b"tnoC",
            b"rr t",
            b"oU:\n",
        ]
        .iter()
        .map(|l| l.to_vec())
        .collect();
        for n in 1..lits.len() {
            // Literals chosen so that every subset of the list is tried.
            let set: Vec<Vec<u8>> = lits.iter().skip(n / 2).take(n).cloned().collect();
            let exact = Exact::new(&set).unwrap();
            for seed in 0..40u64 {
                let hay = noise(seed * 7919 + n as u64, 300 + 37 * seed as usize);
                for from in [0, 1, 63, 64, 65, 130] {
                    for end in [hay.len(), hay.len() - 1, 200, 129, 70] {
                        if from > end {
                            continue;
                        }
                        let want = naive(&set, &hay, from, end);
                        assert_eq!(
                            exact.find_scalar(&hay, from, end),
                            want,
                            "{n} {seed} {from}..{end}"
                        );
                        assert_eq!(
                            exact.find(&hay, from, end),
                            want,
                            "{n} {seed} {from}..{end}"
                        );
                        // Counting as it searches: the newlines up to
                        // where it stopped, added to what was there.
                        let mut newlines = 7;
                        assert_eq!(exact.find_counting(&hay, from, end, &mut newlines), want);
                        let to = want.unwrap_or(end);
                        let lines = hay[from..to].iter().filter(|&&b| b == b'\n').count();
                        assert_eq!(newlines, 7 + lines as u64, "{n} {seed} {from}..{end}");
                    }
                }
            }
        }
    }

    /// Windows of `hay` both bucketings accept where no literal starts.
    fn mixes(e: &Exact, hay: &[u8]) -> usize {
        (0..hay.len())
            .filter(|&q| e.by_tail.classes(hay, q) != 0)
            .filter(|&q| {
                let head = e.by_head.classes(hay, q);
                head != 0 && !e.verify(hay, q, hay.len(), head)
            })
            .count()
    }

    #[test]
    fn settled_buckets_accept_fewer_mixes_of_real_logs() {
        let lits = crate::prefilter::parse(crate::prefilter::EXACT_BUILTIN);
        let settled = Exact::new(&lits).unwrap();
        let mut sorted: Vec<&[u8]> = lits.iter().map(|l| l.as_slice()).collect();
        sorted.sort_unstable();
        let by_head = Buckets::new(&sorted, false);
        sorted.sort_by_key(|l| l[..WINDOW].iter().rev().copied().collect::<Vec<u8>>());
        let runs = Exact {
            by_head,
            by_tail: Buckets::new(&sorted, false),
            vector: false,
        };
        // Each literal in one bucket of each bucketing.
        for b in [&settled.by_head, &settled.by_tail] {
            let mut all: Vec<u32> = b.words.iter().flatten().map(|w| w.bytes).collect();
            all.sort_unstable();
            assert_eq!(all.len(), lits.len());
            all.dedup();
            assert_eq!(all.len(), lits.len());
        }
        // Real logs, and the step lines of every training loop.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/real");
        let mut hay = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "log") {
                hay.extend(std::fs::read(path).unwrap());
            }
        }
        for i in 0..2000 {
            let line = format!("2026-12-07 03:12:{:02} INFO epoch {} batch {i} loss 0.{i:04} lr 3.0e-4 grad_norm 1.{i}\n", i % 60, i / 500);
            hay.extend(line.as_bytes());
        }
        let (s, r) = (mixes(&settled, &hay), mixes(&runs, &hay));
        assert!(
            s * 3 < r,
            "settled {s}, sorted runs {r} of {} windows",
            hay.len()
        );
    }

    #[test]
    fn the_builtin_fingerprints_fire_where_a_literal_search_finds_them() {
        // Real logs, every occurrence in turn.
        let lits = crate::prefilter::parse(crate::prefilter::EXACT_BUILTIN);
        let exact = Exact::new(&lits).unwrap();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/real");
        let mut logs = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let hay = std::fs::read(entry.unwrap().path()).unwrap();
            let (mut at, mut hits) = (0, 0);
            while let Some(q) = exact.find(&hay, at, hay.len()) {
                assert_eq!(Some(q), naive(&lits, &hay, at, hay.len()));
                (at, hits) = (q + 1, hits + 1);
            }
            assert_eq!(naive(&lits, &hay, at, hay.len()), None);
            logs += usize::from(hits > 0);
        }
        assert!(logs > 10, "{logs} logs with fingerprints");
    }

    #[test]
    fn no_literals_no_filter() {
        assert!(Exact::new(&[]).is_none());
        assert!(Exact::new(&[Vec::new()]).is_none());
    }
}
