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
//! the vector search runs; elsewhere it keeps Teddy.

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
    /// Each bucket's literals.
    literals: Vec<Vec<Box<[u8]>>>,
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
    /// Puts `lits` (sorted as the bucketing wants them) in buckets.
    fn new(lits: &[&[u8]]) -> Buckets {
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
        Buckets { tables, literals }
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
        let by_head = Buckets::new(&lits);
        let window =
            |l: &[u8]| -> Vec<u8> { l[..l.len().min(WINDOW)].iter().rev().copied().collect() };
        lits.sort_by_key(|l| window(l));
        let by_tail = Buckets::new(&lits);
        Some(Exact {
            by_head,
            by_tail,
            vector: vector(),
        })
    }

    /// The leftmost start in `from..end` of a literal that lies wholly
    /// before `end` (bytes past `end` are read but never matched).
    pub(super) fn find(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        let end = end.min(hay.len());
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.vector {
            // SAFETY: `vector` is set only where the CPU has the features.
            return unsafe { self.find_vbmi(hay, from, end) };
        }
        self.find_scalar(hay, from, end)
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
        while classes != 0 {
            let k = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let rest = &hay[q..end];
            if self.by_head.literals[k].iter().any(|l| rest.starts_with(l)) {
                return true;
            }
        }
        false
    }

    /// [`find`](Exact::find) 64 bytes at a time.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512 F, BW and VBMI.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    unsafe fn find_vbmi(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
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
            if end - p < STEP {
                lanes &= (1u64 << (end - p)) - 1;
            }
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
                        return Some(p + i);
                    }
                }
            }
            p += STEP;
        }
        self.find_scalar(hay, p.min(end), end)
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
                    }
                }
            }
        }
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
