//! A hashed search for many short literals: the two-tier pass's first tier
//! on CPUs without AVX-512 VBMI (AVX2-only x86, and every other CPU).
//!
//! Teddy classifies a byte by its two nibbles, so with the 241 fingerprints
//! of the built-in catalog nearly every byte is some bucket's: three
//! searchers read every byte and verify almost everywhere (on an AVX2
//! machine a 1 GiB log took 3.7 s of CPU, 77% of it in Teddy). This tier
//! hashes every 4-byte window of the input into a small blocked Bloom
//! filter (a table of 32-bit words: one word a window, two bits of it)
//! that holds each literal's first window. A window passes when it is a
//! literal's (one in 3,000 windows of a generated training log) or
//! collides (one in 230 with the 8 KiB table), and only then is it looked up exactly and the literal
//! compared. A literal of three bytes stands for the 256 windows it
//! starts, so the search needs literals of at least three bytes (the
//! fingerprints always are).
//!
//! With AVX2, 32 windows a step: four loads a byte apart give them as
//! 32-bit lanes, hashed eight at a time, their words gathered (1.6 GB/s a
//! core on a 2-core AMD EPYC VM, where Teddy's three searchers read
//! 0.5 GB/s). Elsewhere, the same hashes eight windows at a time from two
//! 8-byte loads (0.45–0.67 GB/s there, so `Auto` keeps Teddy on CPUs
//! without AVX2); the tests compare the two.

/// How many leading bytes of a literal the table holds.
const WINDOW: usize = 4;
/// The shortest literal: a shorter one would stand for 65,536 windows.
const SHORTEST: usize = 3;
/// Bits a window's word holds; a table has `1 << b` words for `b` in
/// `WORD_BITS`: the least where the windows set a sixteenth of its bits
/// at most (8 KiB for the built-in fingerprints' 1,261 windows, which
/// stays in a core's first-level cache beside the automaton's states).
const WORD: usize = 32;
const WORD_BITS: std::ops::RangeInclusive<u32> = 8..=16;
/// Windows hashed per step of the scalar search: two 8-byte loads give
/// eight.
const STEP: usize = 8;
/// Windows hashed per step of the vector search: four 32-byte loads.
const VECTOR_STEP: usize = 32;
/// The multipliers of [`probe`]'s two hashes (odd, with bits spread).
const HASH: [u32; 2] = [0x9E37_79B1, 0x85EB_CA77];

/// The word of window `w` in a table of `1 << word_bits` words, and the two
/// bits of it that `w` sets. Each comes from the top bits of a
/// multiplicative hash, which depend on every byte of the window. On 50 MB
/// of a generated training log, one bit a window in a 32 KiB table let
/// 0.43% of the windows pass by collision; two bits of a word let 0.44%
/// pass with 8 KiB (the size chosen here) and 0.019% with 32 KiB.
#[inline(always)]
fn probe(w: u32, word_bits: u32) -> (usize, u32) {
    let (h, g) = (w.wrapping_mul(HASH[0]), w.wrapping_mul(HASH[1]));
    let word = (h >> (32 - word_bits)) as usize;
    (word, 1 << (g >> 27) | 1 << ((g >> 22) & 31))
}

/// The filter for a set of literals.
#[derive(Debug)]
pub(super) struct Hashed {
    /// The bits [`probe`] gives every window some literal starts.
    table: Box<[u32]>,
    /// The table has `1 << word_bits` words.
    word_bits: u32,
    /// Every literal's windows with the literal's index, sorted.
    windows: Vec<(u32, u32)>,
    /// The literals.
    literals: Vec<Box<[u8]>>,
    /// Whether the CPU runs the vector search.
    vector: bool,
}

impl Hashed {
    /// The filter for `literals`; `None` when there are none, or one is
    /// shorter than three bytes.
    pub(super) fn new(literals: &[Vec<u8>]) -> Option<Hashed> {
        if literals.is_empty() || literals.iter().any(|l| l.len() < SHORTEST) {
            return None;
        }
        let mut lits: Vec<&[u8]> = literals.iter().map(|l| l.as_slice()).collect();
        lits.sort_unstable();
        lits.dedup();
        let mut windows = Vec::new();
        for (i, l) in lits.iter().enumerate() {
            let mut w = [0u8; WINDOW];
            let n = l.len().min(WINDOW);
            w[..n].copy_from_slice(&l[..n]);
            // A three-byte literal starts every window its bytes begin.
            let last = if n < WINDOW { 256 } else { 1 };
            for b in 0..last {
                if n < WINDOW {
                    w[WINDOW - 1] = b as u8;
                }
                windows.push((u32::from_le_bytes(w), i as u32));
            }
        }
        windows.sort_unstable();
        // Two bits a window, a sixteenth of the table's bits.
        let word_bits = WORD_BITS
            .clone()
            .find(|b| (WORD << b) >= 32 * windows.len())
            .unwrap_or(*WORD_BITS.end());
        let mut table = vec![0u32; 1 << word_bits].into_boxed_slice();
        for &(w, _) in &windows {
            let (word, mask) = probe(w, word_bits);
            table[word] |= mask;
        }
        Some(Hashed {
            table,
            word_bits,
            windows,
            literals: lits.into_iter().map(Box::from).collect(),
            vector: vector(),
        })
    }

    /// The leftmost start in `from..end` of a literal that lies wholly
    /// before `end` (bytes past `end` are read but never matched).
    pub(super) fn find(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        let end = end.min(hay.len());
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.vector {
            // SAFETY: `vector` is set only where the CPU has AVX2.
            return unsafe { self.find_avx2(hay, from, end) };
        }
        self.find_scalar(hay, from, end)
    }

    /// Whether window `w`'s bits are set: 1 or 0.
    #[inline(always)]
    fn hit(&self, w: u32) -> u32 {
        let (word, mask) = probe(w, self.word_bits);
        u32::from(self.table[word] & mask == mask)
    }

    /// [`find`](Hashed::find) eight windows at a time, on any CPU.
    pub(super) fn find_scalar(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        let mut q = from;
        // While the step's last window (bytes up to `q + 10`) lies in `hay`.
        while q + STEP <= end && q + STEP + WINDOW <= hay.len() {
            let a = u64::from_le_bytes(hay[q..q + 8].try_into().expect("8 bytes"));
            let b = u64::from_le_bytes(hay[q + 4..q + 12].try_into().expect("8 bytes"));
            let mut hits = 0u32;
            for (i, w) in [a, a >> 8, a >> 16, a >> 24, b, b >> 8, b >> 16, b >> 24]
                .into_iter()
                .enumerate()
            {
                hits |= self.hit(w as u32) << i;
            }
            if let Some(p) = self.first_match(hay, q, hits, end) {
                return Some(p);
            }
            q += STEP;
        }
        self.find_tail(hay, q, end)
    }

    /// The first of the windows at `q + i` for each bit `i` of `hits` that
    /// starts a literal ending by `end`.
    #[inline(always)]
    fn first_match(&self, hay: &[u8], q: usize, mut hits: u32, end: usize) -> Option<usize> {
        while hits != 0 {
            let i = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            if self.matches(hay, q + i, end) {
                return Some(q + i);
            }
        }
        None
    }

    /// [`find`](Hashed::find) one window at a time, for the bytes a step
    /// does not fit.
    fn find_tail(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        (from..end).find(|&q| {
            let bit = match hay[q..].first_chunk::<WINDOW>() {
                Some(w) => self.hit(u32::from_le_bytes(*w)) != 0,
                None => true,
            };
            bit && self.matches(hay, q, end)
        })
    }

    /// Whether a literal starts at `q` and ends by `end`.
    fn matches(&self, hay: &[u8], q: usize, end: usize) -> bool {
        let rest = &hay[q..end];
        match hay[q..].first_chunk::<WINDOW>() {
            Some(w) => {
                let w = u32::from_le_bytes(*w);
                let first = self.windows.partition_point(|&(k, _)| k < w);
                self.windows[first..]
                    .iter()
                    .take_while(|&&(k, _)| k == w)
                    .any(|&(_, i)| rest.starts_with(&self.literals[i as usize]))
            }
            // The last bytes of `hay`: too few for a window.
            None => self.literals.iter().any(|l| rest.starts_with(l)),
        }
    }

    /// [`find`](Hashed::find) 32 windows at a time: four loads a byte
    /// apart, whose 32-bit lanes are the windows at `q + j + 4m`, hashed
    /// eight at a time and their words gathered from the table.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[target_feature(enable = "avx2")]
    unsafe fn find_avx2(&self, hay: &[u8], from: usize, end: usize) -> Option<usize> {
        #[allow(clippy::wildcard_imports)]
        use std::arch::x86_64::*;
        let (h0, h1) = (
            _mm256_set1_epi32(HASH[0] as i32),
            _mm256_set1_epi32(HASH[1] as i32),
        );
        let (low5, one) = (_mm256_set1_epi32(31), _mm256_set1_epi32(1));
        let table = self.table.as_ptr().cast::<i32>();
        let shift = _mm_cvtsi32_si128(32 - self.word_bits as i32);
        let mut q = from;
        // While the step's last window (bytes up to `q + 34`) lies in `hay`.
        while q + VECTOR_STEP <= end && q + VECTOR_STEP + WINDOW - 1 <= hay.len() {
            let mut lanes = [_mm256_setzero_si256(); WINDOW];
            let mut any = _mm256_setzero_si256();
            for (j, lane) in lanes.iter_mut().enumerate() {
                // SAFETY: `q + j + 32 <= q + 35 <= hay.len()`.
                let v = unsafe { _mm256_loadu_si256(hay.as_ptr().add(q + j).cast()) };
                // `probe` on eight windows.
                let h = _mm256_srl_epi32(_mm256_mullo_epi32(v, h0), shift);
                let g = _mm256_mullo_epi32(v, h1);
                // SAFETY: `h < 1 << word_bits`, the table's length.
                let word = unsafe { _mm256_i32gather_epi32::<4>(table, h) };
                let first = _mm256_srlv_epi32(word, _mm256_srli_epi32::<27>(g));
                let second =
                    _mm256_srlv_epi32(word, _mm256_and_si256(_mm256_srli_epi32::<22>(g), low5));
                *lane = _mm256_and_si256(_mm256_and_si256(first, second), one);
                any = _mm256_or_si256(any, *lane);
            }
            if _mm256_testz_si256(any, any) == 0 {
                // Lane `m` of load `j` is the window at `q + j + 4m`.
                let mut hits = 0u32;
                for (j, lane) in lanes.iter().enumerate() {
                    let mut set =
                        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(*lane)))
                            as u32;
                    while set != 0 {
                        let m = set.trailing_zeros();
                        set &= set - 1;
                        hits |= 1 << (j as u32 + 4 * m);
                    }
                }
                if let Some(p) = self.first_match(hay, q, hits, end) {
                    return Some(p);
                }
            }
            q += VECTOR_STEP;
        }
        self.find_scalar(hay, q, end)
    }
}

/// Whether this CPU runs the vector search.
pub(super) fn vector() -> bool {
    static VECTOR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VECTOR.get_or_init(avx2)
}

fn avx2() -> bool {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        std::arch::is_x86_feature_detected!("avx2")
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
        let end = end.min(hay.len());
        (from..end).find(|&q| lits.iter().any(|l| hay[q..end].starts_with(l)))
    }

    /// Bytes from a small alphabet, so that literals of it occur often.
    fn noise(seed: u64, len: usize, alphabet: &[u8]) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn the_search_finds_the_leftmost_literal_wherever_it_starts_and_ends() {
        let lits: Vec<Vec<u8>> = ["\nE0", "abc", "abcd", "bcda", "cab\nd", "dddddd", "ba\n"]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        let h = Hashed::new(&lits).unwrap();
        for seed in 0..300 {
            let hay = noise(seed, 10 + (seed as usize * 7) % 90, b"abcdE0\n");
            for from in [0, 1, 3, 9] {
                for end in [hay.len(), hay.len() - 1, hay.len() - 3, hay.len() / 2, 12] {
                    let want = naive(&lits, &hay, from, end);
                    let text = String::from_utf8_lossy(&hay);
                    // The vector search where the CPU has it, and the
                    // scalar one.
                    assert_eq!(
                        h.find(&hay, from, end),
                        want,
                        "{seed} {from}..{end} {text:?}"
                    );
                    let scalar = h.find_scalar(&hay, from, end.min(hay.len()));
                    assert_eq!(scalar, want, "scalar: {seed} {from}..{end} {text:?}");
                }
            }
        }
    }

    #[test]
    fn a_literal_in_the_last_bytes_is_found_without_a_whole_window() {
        let lits = vec![b"\nF1".to_vec(), b"CUDA".to_vec()];
        let h = Hashed::new(&lits).unwrap();
        assert_eq!(h.find(b"some line\nF1", 0, 12), Some(9));
        assert_eq!(h.find(b"some line\nF1", 0, 11), None);
        assert_eq!(h.find(b"xCUDA", 0, 5), Some(1));
        assert_eq!(h.find(b"xCUD", 0, 4), None);
    }

    #[test]
    fn the_builtin_fingerprints_fire_where_a_literal_search_finds_them() {
        let scanner = crate::ScannerBuilder::new().build(crate::Catalog::builtin().unwrap());
        let fps = crate::scan::prefilter::fingerprints(
            &scanner.line_anchors(),
            crate::prefilter::parse(crate::prefilter::EXACT_BUILTIN),
        )
        .unwrap();
        let h = Hashed::new(&fps).unwrap();
        let log = include_str!(
            "../../../../fixtures/wild/cases/004-plan-failed-yolov8-collect-env-md/log.txt"
        );
        let hay = log.as_bytes();
        let mut at = 0;
        let mut hits = 0;
        while let Some(p) = h.find(hay, at, hay.len()) {
            assert_eq!(Some(p), naive(&fps, hay, at, hay.len()));
            assert_eq!(Some(p), h.find_scalar(hay, at, hay.len()));
            (at, hits) = (p + 1, hits + 1);
        }
        assert_eq!(naive(&fps, hay, at, hay.len()), None);
        assert!(hits > 0);
    }

    #[test]
    fn too_short_a_literal_or_none_makes_no_filter() {
        assert!(Hashed::new(&[]).is_none());
        assert!(Hashed::new(&[b"ab".to_vec(), b"CUDA".to_vec()]).is_none());
    }
}
