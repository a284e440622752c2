//! Shared by the `stream` and `decode` targets (not a target itself: no
//! `[[bin]]` names it): a small PRNG driven by the fuzz input, a reader
//! that hands its bytes over in short reads, and the small-block scanner
//! of `scan.rs`.
#![allow(dead_code)]

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, Scanner, ScannerBuilder};
use std::io::{ErrorKind, Read};
use std::sync::OnceLock;

/// xorshift64*, seeded from fuzz bytes: the same input always makes the
/// same reads.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // Never zero, and small seeds spread out.
        Rng((seed ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True with probability 1 in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// How a [`Chunked`] reader sizes its reads.
#[derive(Clone, Copy, Debug)]
pub enum Sizes {
    /// 1 to 16 bytes.
    Tiny,
    /// 1 to 600 bytes.
    Small,
    /// 1 byte to 8 KiB.
    Large,
    /// Log-uniform, 1 byte to 16 KiB; now and then all that is asked for.
    Mixed,
}

impl Sizes {
    pub fn from_bits(b: u8) -> Sizes {
        [Sizes::Tiny, Sizes::Small, Sizes::Large, Sizes::Mixed][usize::from(b & 3)]
    }

    /// The size of the next read, at least 1.
    pub fn pick(self, rng: &mut Rng, asked: usize) -> usize {
        match self {
            Sizes::Tiny => 1 + rng.below(16),
            Sizes::Small => 1 + rng.below(600),
            Sizes::Large => 1 + rng.below(8192),
            Sizes::Mixed if rng.one_in(8) => asked,
            Sizes::Mixed => {
                let bits = rng.below(15);
                1 + rng.below(1 << bits)
            }
        }
    }
}

/// Error kinds a failing reader returns. Not `Interrupted`: a reader that
/// returns it is retried, by `read_to_end` (the stream driver's `fill`)
/// and by `source::Input` alike, so it is not a failure; the `interrupt`
/// option makes those instead.
pub const FAILURES: [ErrorKind; 7] = [
    ErrorKind::Other,
    ErrorKind::BrokenPipe,
    ErrorKind::ConnectionReset,
    ErrorKind::UnexpectedEof,
    ErrorKind::InvalidData,
    ErrorKind::TimedOut,
    ErrorKind::WouldBlock,
];

/// The message of an injected failure: tests look for it in the error.
pub const FAILURE_MESSAGE: &str = "injected read failure";

/// A reader over `data` that returns short reads of varying sizes, never
/// `Ok(0)` before the end; optionally an `Interrupted` error before some
/// reads (which every reader of it must retry); optionally a failure once
/// `fail_at` bytes have been delivered, on every read from then on.
pub struct Chunked<'a> {
    data: &'a [u8],
    pos: usize,
    rng: Rng,
    sizes: Sizes,
    interrupt: bool,
    fail: Option<(usize, ErrorKind)>,
    /// How many `Interrupted` errors it returned.
    pub interrupted: usize,
}

impl<'a> Chunked<'a> {
    pub fn new(data: &'a [u8], rng: Rng, sizes: Sizes) -> Chunked<'a> {
        Chunked {
            data,
            pos: 0,
            rng,
            sizes,
            interrupt: false,
            fail: None,
            interrupted: 0,
        }
    }

    /// Returns `Interrupted` before about one read in four.
    pub fn interrupting(mut self, yes: bool) -> Chunked<'a> {
        self.interrupt = yes;
        self
    }

    /// Fails with `kind` once `at` bytes were delivered (`at` is cut to the
    /// data's length: a failure at the end is a failure instead of `Ok(0)`).
    pub fn failing_at(mut self, at: usize, kind: ErrorKind) -> Chunked<'a> {
        self.fail = Some((at.min(self.data.len()), kind));
        self
    }

    /// The bytes delivered so far.
    pub fn delivered(&self) -> usize {
        self.pos
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.interrupt && self.rng.one_in(4) {
            self.interrupted += 1;
            return Err(std::io::Error::new(
                ErrorKind::Interrupted,
                "injected EINTR",
            ));
        }
        let end = match self.fail {
            Some((at, kind)) if self.pos >= at => {
                return Err(std::io::Error::new(kind, FAILURE_MESSAGE));
            }
            Some((at, _)) => at,
            None => self.data.len(),
        };
        let n = self
            .sizes
            .pick(&mut self.rng, buf.len())
            .min(buf.len())
            .min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// The scanner of `scan.rs`: 4 KiB blocks, 1 KiB contexts and lookback,
/// 777-byte chunks, so that small inputs cross every boundary.
pub fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        ScannerBuilder::new()
            .block_size(4096)
            .context_before(1024)
            .context_after(1024)
            .lookback(1024)
            .chunk_size(777)
            .build(Catalog::builtin().expect("built-in catalog"))
    })
}

/// The report of a sink, its sources' paths blanked.
pub fn report_of(sink: FindingsSink<'_>) -> Report {
    let mut report = sink.into_report();
    for s in &mut report.sources {
        s.path = String::new();
    }
    report
}

/// The report of `bytes` read in one big read (a slice hands over all
/// that is asked for), with the small-block scanner.
pub fn whole(bytes: &[u8]) -> Report {
    let s = scanner();
    let mut sink = FindingsSink::new(s.catalog());
    let info = s
        .scan_reader("", bytes, &mut sink)
        .expect("a slice never fails");
    assert_eq!(info.bytes, bytes.len() as u64);
    report_of(sink)
}

/// With `FUZZ_TRACE` set, prints the case an input took, a line on
/// standard error, to check that a corpus reaches the interesting ones:
///
/// ```sh
/// FUZZ_TRACE=1 target/x86_64-unknown-linux-gnu/release/decode -runs=0 corpus/decode 2>&1 |
///     grep '^case' | sort | uniq -c
/// ```
pub fn trace(case: std::fmt::Arguments<'_>) {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FUZZ_TRACE").is_some()) {
        eprintln!("case {case}");
    }
}

/// The classes a report found, as a sorted set.
pub fn classes(r: &Report) -> std::collections::BTreeSet<String> {
    r.findings.iter().map(|f| f.class.clone()).collect()
}
