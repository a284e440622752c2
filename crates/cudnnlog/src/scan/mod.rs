//! The scanner: one literal pass over the bytes, framing and regex
//! confirmation only around candidates.
//!
//! For each window of a source (the whole file when it is memory-mapped;
//! blocks of a few MiB when it is streamed) the scanner:
//!
//! 1. runs one Aho-Corasick search for every pattern's anchors, noting the
//!    start of each line that holds one (a *candidate line*);
//! 2. builds *regions* around candidate lines (2 KiB each side, snapped to
//!    lines, overlapping regions merged; widened to the full context when
//!    an event runs into an end: `scan/regions.rs`);
//! 3. frames each region into events ([`crate::framer`]);
//! 4. for each event holding a candidate line, finds which patterns' anchors
//!    occur in its text and confirms them with their regexes;
//! 5. hands every confirmed match to a [`Sink`].
//!
//! Streams keep the tail of the previous block so that an event that
//! straddles two blocks is framed whole; an event is reported by the window
//! that owns its first candidate line, so it is never reported twice.

use crate::catalog::{anchor_table, Catalog};
use crate::context::LineCounter;
use crate::error::Error;
use crate::sink::{Fork, Sink, Window};
use crate::source::{open, MmapChoice, Opened, Reader, SourceInfo};
use aho_corasick::{AhoCorasick, MatchKind};
use std::ops::Range;
use std::path::Path;

pub(crate) mod confirm;
mod event;
mod exact;
mod hashed;
#[cfg(feature = "hyperscan")]
mod hyperscan;
mod lines;
mod literal;
mod parallel;
pub mod prefilter;
mod regions;
mod repeats;
mod state;
mod warm;
use state::State;
mod fresh;
mod stream;
mod window;

pub use literal::LiteralEngine;
use literal::{next_line, search_from, Found, ERROR_ANCHORS, FOR_ERROR, FOR_PATTERN, FOR_PROBE};

/// The longest message kept for a match, in bytes.
const MAX_MESSAGE: usize = 2000;
/// The most bytes of a finding's signature (what tells two findings of a
/// class apart).
const MAX_SIGNATURE: usize = 256;
/// How far into a line a match may start before the message starts at it.
const MESSAGE_LEAD: usize = 40;

/// Configures and builds a [`Scanner`].
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().block_size(1 << 20).build(Catalog::builtin().unwrap());
/// assert!(scanner.catalog().patterns().len() > 0);
/// ```
#[derive(Clone, Debug)]
pub struct ScannerBuilder {
    config: Config,
}

#[derive(Clone, Copy, Debug)]
struct Config {
    back: usize,
    forward: usize,
    /// How far back the step, epoch and timestamp of a finding are looked
    /// up (at least `back`).
    lookback: usize,
    block: usize,
    chunk: usize,
    engine: LiteralEngine,
    /// Copies of repeated bytes are counted, not framed (off to test that
    /// they report what framing each copy does).
    repeats: bool,
    /// The most candidate lines a mapped scan holds at once
    /// ([`parallel::MAPPED_CANDIDATES`]; less to test the scan past it).
    candidates: usize,
}

impl Default for ScannerBuilder {
    fn default() -> Self {
        ScannerBuilder::new()
    }
}

impl ScannerBuilder {
    /// A builder with the default configuration.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// assert_eq!(sink.into_report().primary.as_deref(), Some("cuda.oom"));
    /// ```
    pub fn new() -> ScannerBuilder {
        ScannerBuilder {
            config: Config {
                back: 64 << 10,
                forward: 64 << 10,
                lookback: 256 << 10,
                block: 8 << 20,
                chunk: 64 << 20,
                engine: LiteralEngine::Auto,
                repeats: true,
                candidates: parallel::MAPPED_CANDIDATES,
            },
        }
    }

    /// How many bytes before a candidate line may be framed, so that the
    /// start of a long traceback is seen. A candidate is first framed with
    /// 2 KiB each side (and the indented lines right above it); its region
    /// grows to this only when an event holding a candidate runs into an
    /// end. Default: 64 KiB (a traceback of about 600 frames).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::EventKind, sink::{FnSink, Match}};
    /// let scanner = ScannerBuilder::new().context_before(1 << 20).build(Catalog::builtin().unwrap());
    /// let log = b"INFO train: step 3\nTraceback (most recent call last):\n  File \"/home/user/train/train.py\", line 21, in <module>\n    loss.backward()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// let mut events = Vec::new();
    /// scanner.scan_slice(log, &mut FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
    ///     events.push((m.event, m.event_byte, m.location.line));
    ///     Ok(true)
    /// })).unwrap();
    /// // The match is on line 5; its event, the traceback, starts at line 2 (byte 19).
    /// assert_eq!(events, [(EventKind::Traceback, 19, 5)]);
    /// ```
    pub fn context_before(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.back = bytes.max(1);
        self
    }

    /// How far back a finding's step, epoch and timestamp are looked up; a
    /// stream keeps this much of what it has read. Default: 256 KiB (and
    /// never less than [`context_before`](ScannerBuilder::context_before)).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let mut log = b"INFO train: epoch 2 step 3 loss 2.31\n".to_vec();
    /// for _ in 0..10_000 {
    ///     log.extend_from_slice(b"INFO data: prefetching shard\n"); // 290 KB with no step
    /// }
    /// log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
    /// for (lookback, step) in [(256 << 10, None), (1 << 20, Some(3))] {
    ///     let scanner = ScannerBuilder::new().lookback(lookback).build(Catalog::builtin().unwrap());
    ///     let mut sink = FindingsSink::new(scanner.catalog());
    ///     scanner.scan_slice(&log, &mut sink).unwrap();
    ///     assert_eq!(sink.into_report().findings[0].first.step, step);
    /// }
    /// ```
    pub fn lookback(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.lookback = bytes.max(1);
        self
    }

    /// How many bytes after a candidate line may be framed, so that a
    /// message's continuation lines are seen (as for
    /// [`context_before`](ScannerBuilder::context_before), only when an
    /// event runs into the end of the first 2 KiB). Default: 64 KiB.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{FnSink, Match}};
    /// let scanner = ScannerBuilder::new().context_after(1 << 20).build(Catalog::builtin().unwrap());
    /// let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n";
    /// let mut texts = Vec::new();
    /// scanner.scan_slice(log, &mut FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
    ///     texts.push((m.class.to_string(), m.text.to_string()));
    ///     Ok(true)
    /// })).unwrap();
    /// // The event holds the message's continuation lines.
    /// assert_eq!(texts[0].0, "cuda.illegal_address");
    /// assert!(texts[0].1.ends_with("CUDA_LAUNCH_BLOCKING=1"));
    /// ```
    pub fn context_after(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.forward = bytes.max(1);
        self
    }

    /// How many bytes a stream is read in at a time. Memory use is about
    /// this plus the two context sizes. Default: 8 MiB.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().block_size(4096).build(Catalog::builtin().unwrap());
    /// let mut log = Vec::new();
    /// for i in 0..20_000 {
    ///     log.extend_from_slice(format!("INFO step {i} loss 0.5\n").as_bytes()); // 530 KB in all
    /// }
    /// log.extend_from_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n");
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// scanner.scan_reader("train.log", &log[..], &mut sink).unwrap();
    /// let first = &sink.into_report().findings[0].first;
    /// assert_eq!((first.line, first.step), (20_001, Some(19_999)));
    /// ```
    pub fn block_size(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.block = bytes.max(4096);
        self
    }

    /// How many bytes each task of a parallel scan
    /// ([`Scanner::scan_slice_parallel`]) covers at most; chunks end at line
    /// ends, and are smaller where that gives every thread four of them
    /// (down to 4 MiB, or this size when it is smaller). Default: 64 MiB.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().chunk_size(4096).build(Catalog::builtin().unwrap());
    /// let mut log = Vec::new();
    /// for i in 0..2000 {
    ///     log.extend_from_slice(format!("INFO step {i} loss 0.5\n").as_bytes()); // a dozen chunks
    /// }
    /// log.extend_from_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n");
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// scanner.scan_slice_parallel(&log, &mut sink, &|_| {}).unwrap();
    /// let first = &sink.into_report().findings[0].first;
    /// assert_eq!((first.line, first.step), (2001, Some(1999)));
    /// ```
    pub fn chunk_size(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.chunk = bytes.max(1);
        self
    }

    /// Which automaton the literal pass uses. Default:
    /// [`LiteralEngine::Auto`].
    ///
    /// ```
    /// use cudnnlog::{Catalog, LiteralEngine, ScannerBuilder, report::FindingsSink};
    /// let catalog = Catalog::builtin().unwrap();
    /// let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// for engine in [LiteralEngine::Nfa, LiteralEngine::Dfa, LiteralEngine::TwoTier] {
    ///     let scanner = ScannerBuilder::new().literal_engine(engine).build(catalog.clone());
    ///     let mut sink = FindingsSink::new(scanner.catalog());
    ///     scanner.scan_slice(log, &mut sink).unwrap();
    ///     assert_eq!(sink.into_report().primary.as_deref(), Some("cuda.illegal_address"));
    /// }
    /// ```
    pub fn literal_engine(&mut self, engine: LiteralEngine) -> &mut ScannerBuilder {
        self.config.engine = engine;
        self
    }

    /// Compiles the catalog's anchors and returns a reusable scanner.
    ///
    /// # Panics
    ///
    /// Only if the anchors' automaton cannot be built even as
    /// aho-corasick's noncontiguous NFA, whose limit (2³¹ states, one per
    /// anchor byte at most) is about a hundred times what the catalog's
    /// load limits let in (`docs/catalog-format.md`): never for a catalog
    /// [`CatalogBuilder`](crate::CatalogBuilder) or [`Catalog::builtin`]
    /// returned.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// assert!(scanner.catalog().patterns().len() > 100);
    /// ```
    pub fn build(&self, catalog: Catalog) -> Scanner {
        let (mut anchors, mut owners) = anchor_table(catalog.patterns(), catalog.probes());
        // Error-level lines no pattern anchors: level words, and glog/absl
        // `E`/`F` headers at a line start (matched with the newline before).
        let first_error_anchor = anchors.len();
        for a in ERROR_ANCHORS {
            anchors.push(a.to_string());
            owners.push(Vec::new());
        }
        // The whole-input pass only needs *a* hit per line: leftmost-first
        // semantics let aho-corasick use its SIMD (Teddy) prefilter, which
        // standard semantics rule out. Within an event every anchor matters,
        // so a second automaton with standard semantics finds them all.
        // The whole-input pass uses a full DFA: the fastest search, at a
        // memory cost that a few hundred anchors keep small.
        let build = |kind, dfa: bool| {
            use aho_corasick::AhoCorasickKind::{ContiguousNFA, NoncontiguousNFA, DFA};
            let make = |k| {
                AhoCorasick::builder()
                    .match_kind(kind)
                    .kind(Some(k))
                    .build(&anchors)
            };
            // A DFA or contiguous NFA over a huge user catalog can outgrow
            // aho-corasick's state ids; the noncontiguous NFA, slower, holds
            // as many states as the anchors have bytes.
            make(if dfa { DFA } else { ContiguousNFA })
                .or_else(|_| make(NoncontiguousNFA))
                .expect("the catalog's load limits keep anchors within aho-corasick's")
        };
        let n_patterns = catalog.patterns().len() as u32;
        let anchor_kinds = owners
            .iter()
            .enumerate()
            .map(|(ai, o)| {
                let kind = o.iter().fold(0, |k, &i| {
                    k | if i < n_patterns {
                        FOR_PATTERN
                    } else {
                        FOR_PROBE
                    }
                });
                if ai >= first_error_anchor || ERROR_ANCHORS.contains(&anchors[ai].as_str()) {
                    kind | FOR_ERROR
                } else {
                    kind
                }
            })
            .collect();
        Scanner {
            catalog,
            // Small inputs are searched with an NFA that builds in a
            // fraction of the DFA's time; the DFA is built on the first
            // input big enough to repay it.
            scan_nfa: build(MatchKind::LeftmostFirst, false),
            scan_dfa: std::sync::Arc::new(std::sync::OnceLock::new()),
            anchors: std::sync::Arc::new(anchors.clone()),
            // Runs on short event texts only: an NFA builds faster; and
            // only once a line holds an anchor.
            event_ac: std::sync::Arc::new(std::sync::OnceLock::new()),
            prefilter: std::sync::Arc::default(),
            #[cfg(feature = "hyperscan")]
            hyperscan: std::sync::Arc::new(std::sync::OnceLock::new()),
            owners,
            anchor_kinds,
            config: self.config,
        }
    }
}

/// Finds pattern matches in logs; build one with [`ScannerBuilder`] and reuse
/// it for every source.
///
/// ```
/// let scanner = cudnnlog::ScannerBuilder::new().build(cudnnlog::Catalog::builtin().unwrap());
/// let mut sink = cudnnlog::FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
/// assert_eq!(sink.into_report().findings[0].class, "cuda.illegal_address");
/// ```
#[derive(Clone, Debug)]
pub struct Scanner {
    catalog: Catalog,
    /// The whole-input pass's automaton for small inputs.
    scan_nfa: AhoCorasick,
    /// The same search as a full DFA over fewer anchors, with their kinds
    /// and their indices among `anchors`, built on first use.
    scan_dfa: std::sync::Arc<std::sync::OnceLock<ScanDfa>>,
    /// The anchors both are built from.
    anchors: std::sync::Arc<Vec<String>>,
    /// Every anchor of an event's text (standard semantics), built on
    /// first use.
    event_ac: std::sync::Arc<std::sync::OnceLock<AhoCorasick>>,
    /// The two-tier pass's first tiers, each built on first use.
    prefilter: std::sync::Arc<prefilter::FirstTiers>,
    /// The Hyperscan first tier, built on first use.
    #[cfg(feature = "hyperscan")]
    hyperscan: std::sync::Arc<std::sync::OnceLock<Option<hyperscan::Hyperscan>>>,
    owners: Vec<Vec<u32>>,
    /// Per anchor: [`FOR_PATTERN`] and/or [`FOR_PROBE`].
    anchor_kinds: Vec<u8>,
    config: Config,
}

/// The line pass's DFA, its anchors' kinds, and their indices in the
/// anchor table.
type ScanDfa = (AhoCorasick, Vec<u8>, Vec<usize>);

fn line_start_before(hay: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &hay[..at]).map_or(0, |p| p + 1)
}

fn line_end_after(hay: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &hay[at..]).map_or(hay.len(), |p| at + p + 1)
}

impl Scanner {
    /// The catalog this scanner matches.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder};
    /// let catalog = Catalog::builtin().unwrap().only(&["cuda-oom-pytorch-allocator"]);
    /// let scanner = ScannerBuilder::new().build(catalog);
    /// assert_eq!(scanner.catalog().patterns().len(), 1);
    /// assert_eq!(scanner.catalog().patterns()[0].class, "cuda.oom");
    /// ```
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Scans the file at `path`. Regular files are memory-mapped when `mmap`
    /// allows it; anything else (pipes, devices, empty files) is streamed.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the file cannot be opened or read, is a directory
    /// or a device, or is a FIFO that no writer opens within
    /// [`FIFO_WAIT`](crate::source::FIFO_WAIT) (for a compressed file corrupt
    /// part way, [`Incomplete::of`](crate::source::Incomplete::of) gives what
    /// was read before the error); otherwise what the sink returns.
    ///
    /// ```
    /// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder, report::FindingsSink};
    /// let path = std::env::temp_dir().join(format!("cudnnlog-doc-scan-path-{}.log", std::process::id()));
    /// std::fs::write(&path, "INFO train: step 3\nRuntimeError: CUDA error: an illegal memory access was encountered\n")?;
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let source = scanner.scan_path(&path, MmapChoice::never(), &mut sink)?;
    /// assert_eq!((source.path.as_str(), source.lines), (path.to_str().unwrap(), 2));
    /// assert_eq!(sink.into_report().findings[0].first.line, 2);
    /// // A directory is refused.
    /// assert!(scanner.scan_path(&std::env::temp_dir(), MmapChoice::never(), &mut FindingsSink::new(scanner.catalog())).is_err());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scan_path<S: Sink>(
        &self,
        path: &Path,
        mmap: MmapChoice,
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        let name = path.display().to_string();
        let one = stream::on_this_thread::<S>;
        let (info, cut) = match open(path, mmap)? {
            Opened::Mapped(map) => {
                let info = self.scan_slice_named(&name, &map, sink)?;
                crate::source::unmap(map);
                (info, None)
            }
            Opened::Positioned(file) => self.scan_stream(&name, file, sink, &|| {}, one)?,
            Opened::Stream(reader, _) => {
                self.scan_stream(&name, Reader(reader), sink, &|| {}, one)?
            }
        };
        end_source(sink, info, cut, Some(path))
    }

    /// Like [`scan_path`](Scanner::scan_path), but a mapped file is scanned
    /// on all of rayon's threads ([`scan_slice_parallel`](Scanner::scan_slice_parallel)),
    /// and a file read as a stream (mapping off, or written in the last 30
    /// s) has each window's regions framed on all of them too, into forks
    /// of `sink` joined in order: the same report as one thread gives.
    /// `progress` is called with the number of bytes done so far.
    ///
    /// # Errors
    ///
    /// As for [`scan_path`](Scanner::scan_path).
    ///
    /// ```
    /// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder, report::FindingsSink};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let path = std::env::temp_dir().join(format!("cudnnlog-doc-scan-path-parallel-{}.log", std::process::id()));
    /// let mut log: String = (0..2000).map(|i| format!("INFO step {i} loss 0.5\n")).collect();
    /// log.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    /// std::fs::write(&path, &log)?;
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let done = AtomicU64::new(0);
    /// scanner.scan_path_parallel(&path, MmapChoice::never(), &mut sink, &|n| done.store(n, Ordering::Relaxed))?;
    /// assert_eq!(done.load(Ordering::Relaxed), log.len() as u64);
    /// let first = &sink.into_report().findings[0].first;
    /// assert_eq!((first.line, first.step), (2001, Some(1999)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn scan_path_parallel<S: Fork>(
        &self,
        path: &Path,
        mmap: MmapChoice,
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceInfo, S::Error> {
        let name = path.display().to_string();
        let (info, cut) = match open(path, mmap)? {
            Opened::Mapped(map) => {
                let mut info = self.slice_parallel(&map, sink, progress)?;
                info.path = name;
                crate::source::unmap(map);
                (info, None)
            }
            Opened::Positioned(file) => {
                let read = file.progress();
                let done = || progress(read.load(std::sync::atomic::Ordering::Relaxed));
                self.scan_positioned(&name, file, sink, &done)?
            }
            Opened::Stream(reader, read) => {
                let done = || progress(read.load(std::sync::atomic::Ordering::Relaxed));
                let reader = Reader(reader);
                self.scan_stream(&name, reader, sink, &done, Scanner::finish_window_forked)?
            }
        };
        end_source(sink, info, cut, Some(path))
    }

    /// Scans bytes already in memory.
    ///
    /// # Errors
    ///
    /// Only what the sink returns: a scan of bytes in memory does not fail by
    /// itself.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"INFO train: epoch 2 step 3\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let source = scanner.scan_slice(log, &mut sink).unwrap();
    /// assert_eq!((source.path.as_str(), source.lines, source.bytes), ("<memory>", 2, log.len() as u64));
    /// let finding = &sink.into_report().findings[0];
    /// assert_eq!((finding.class.as_str(), finding.first.line, finding.first.step), ("cuda.illegal_address", 2, Some(3)));
    /// ```
    pub fn scan_slice<S: Sink>(&self, bytes: &[u8], sink: &mut S) -> Result<SourceInfo, S::Error> {
        let info = self.scan_slice_named("<memory>", bytes, sink)?;
        end_source(sink, info, None, None)
    }

    /// [`scan_slice`](Scanner::scan_slice) of a source named `name`, the
    /// sink not told it ended.
    pub(crate) fn scan_slice_named<S: Sink>(
        &self,
        name: &str,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        let mut st = State::new();
        self.scan_window(&mut st, bytes, 0..bytes.len(), true, sink)?;
        let lines = count_lines(&mut st.counter, bytes);
        Ok(SourceInfo {
            path: name.to_string(),
            bytes: bytes.len() as u64,
            lines,
            modified: None,
            rank: None,
        })
    }

    /// Scans one window: the literal pass, then the rest ([`finish_window`]).
    fn scan_window<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        owned: Range<usize>,
        whole: bool,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let mut found = std::mem::take(&mut st.found);
        self.search_window(hay, &owned, &mut found);
        let done = self.finish_window(st, hay, owned, whole, &found, None, sink);
        st.found = found;
        done
    }

    /// The literal pass of a window whose lines `owned` are its own: over
    /// them and the context on both sides.
    fn search_window(&self, hay: &[u8], owned: &Range<usize>, found: &mut Found) {
        let from = line_start_before(hay, owned.start.saturating_sub(self.config.back));
        let to = (owned.end + self.config.forward).min(hay.len());
        self.find_candidates_parallel(hay, from..to, found);
    }

    /// Everything after the literal pass: the window's probe and error
    /// lines, its regions (unless known already) framed and matched, and
    /// the sink told the window is done.
    #[allow(clippy::too_many_arguments)]
    fn finish_window<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        owned: Range<usize>,
        whole: bool,
        found: &Found,
        regions: Option<Vec<regions::Region>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.window_lines(st, hay, &owned, found, sink)?;
        let regions = regions.unwrap_or_else(|| self.window_regions(st, hay, &owned, whole, found));
        self.frame_regions(st, hay, &regions, &found.hits, &owned, sink)?;
        sink.window_end(&self.window(st, hay))
    }

    /// The probe and error lines a window owns, read alone.
    fn window_lines<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        owned: &Range<usize>,
        found: &Found,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        for &start in found.probes.iter().filter(|&&p| owned.contains(&p)) {
            self.probe_line(st, hay, start, sink)?;
        }
        for &start in found.errors.iter().filter(|&&p| owned.contains(&p)) {
            self.error_line(st, hay, start, sink)?;
        }
        Ok(())
    }

    /// The regions a window frames. A stream's window frames from its own
    /// candidates (it has less behind it); in memory (`whole`), every
    /// candidate counts, as in a single pass.
    fn window_regions(
        &self,
        st: &State,
        hay: &[u8],
        owned: &Range<usize>,
        whole: bool,
        found: &Found,
    ) -> Vec<regions::Region> {
        let split_at = st.split_at_in_window();
        self.regions(hay, &found.hits, |h| whole || owned.contains(&h), split_at)
    }

    /// The window `hay` is, for the sink.
    fn window<'h>(&self, st: &State, hay: &'h [u8]) -> Window<'h> {
        Window {
            hay,
            base: st.base,
            lookback: self.config.back.max(self.config.lookback),
            lookahead: self.config.forward,
            rejoined: false,
        }
    }

    /// The window `hay` is, for a fork whose sink is told it again once the
    /// fork is joined.
    fn fork_window<'h>(&self, st: &State, hay: &'h [u8]) -> Window<'h> {
        Window {
            rejoined: true,
            ..self.window(st, hay)
        }
    }
}

/// Ends the scan of one source: its modification time when it was read by
/// `path`, the sink told ([`Sink::source_end`]), and a read that failed
/// part way (`cut`: a truncated archive) returned as an error carrying
/// what was read before it ([`Incomplete`](crate::source::Incomplete)). A
/// source that failed before its first byte is an error, not a source.
fn end_source<S: Sink>(
    sink: &mut S,
    mut info: SourceInfo,
    cut: Option<std::io::Error>,
    path: Option<&Path>,
) -> Result<SourceInfo, S::Error> {
    if let Some(path) = path {
        info.modified = crate::source::modified(path);
    }
    let Some(error) = cut else {
        sink.source_end(&info)?;
        return Ok(info);
    };
    let path = info.path.clone();
    if info.bytes == 0 {
        return Err(Error::Io {
            path,
            source: error,
        }
        .into());
    }
    sink.source_end(&info)?;
    let kind = error.kind();
    let incomplete = crate::source::Incomplete { info, error };
    let source = std::io::Error::new(kind, incomplete);
    Err(Error::Io { path, source }.into())
}

/// The number of lines in a source whose last window is `hay`.
fn count_lines(counter: &mut LineCounter, hay: &[u8]) -> u64 {
    let at_end = counter.line_at(hay, hay.len());
    match hay.last() {
        None | Some(b'\n') => at_end - 1,
        Some(_) => at_end,
    }
}
