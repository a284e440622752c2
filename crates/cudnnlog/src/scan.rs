//! The scanner: one literal pass over the bytes, framing and regex
//! confirmation only around candidates.
//!
//! For each window of a source (the whole file when it is memory-mapped;
//! blocks of a few MiB when it is streamed) the scanner:
//!
//! 1. runs one Aho-Corasick search for every pattern's anchors, noting the
//!    start of each line that holds one (a *candidate line*);
//! 2. builds *regions* around candidate lines (256 KiB before, 64 KiB after,
//!    snapped to lines; overlapping regions merge);
//! 3. frames each region into events ([`crate::framer`]);
//! 4. for each event holding a candidate line, finds which patterns' anchors
//!    occur in its text and confirms them with their regexes;
//! 5. hands every confirmed match to a [`Sink`].
//!
//! Streams keep the tail of the previous block so that an event that
//! straddles two blocks is framed whole; an event is reported by the window
//! that owns its first candidate line, so it is never reported twice.

use crate::catalog::{anchor_table, Catalog, Scope, Severity};
use crate::context::LineCounter;
use crate::error::Error;
use crate::framer::{Event, Framer};
use crate::prefix::{Origin, Prefix};
use crate::sink::{EnvFact, Fork, Location, Match, Sink, Window};
use crate::source::{decompressed, Compression, MmapChoice, SourceInfo};
use aho_corasick::{AhoCorasick, MatchKind};
use std::io::Read;
use std::ops::Range;
use std::path::Path;

/// The longest message kept for a match, in bytes.
const MAX_MESSAGE: usize = 2000;
/// How far into a line a match may start before the message starts at it.
const MESSAGE_LEAD: usize = 40;
/// The regex group that, when present, marks where a finding is (not a fact).
pub(crate) const AT_GROUP: &str = "at";

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
}

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
    /// The NFA for inputs under 4 MiB, the DFA (built on first use) above.
    #[default]
    Auto,
    /// Aho-Corasick's contiguous NFA: builds in a few milliseconds.
    Nfa,
    /// Aho-Corasick's full DFA: the fastest search, built in tens of
    /// milliseconds.
    Dfa,
}

impl Default for ScannerBuilder {
    fn default() -> Self {
        ScannerBuilder::new()
    }
}

impl ScannerBuilder {
    /// A builder with the default configuration.
    pub fn new() -> ScannerBuilder {
        ScannerBuilder {
            config: Config {
                back: 64 << 10,
                forward: 64 << 10,
                lookback: 256 << 10,
                block: 8 << 20,
                chunk: 64 << 20,
                engine: LiteralEngine::Auto,
            },
        }
    }

    /// How many bytes before a candidate line are framed, so that the start
    /// of a long traceback is seen. Default: 64 KiB (a traceback of about
    /// 600 frames).
    pub fn context_before(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.back = bytes.max(1);
        self
    }

    /// How far back a finding's step, epoch and timestamp are looked up; a
    /// stream keeps this much of what it has read. Default: 256 KiB (and
    /// never less than [`context_before`](ScannerBuilder::context_before)).
    pub fn lookback(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.lookback = bytes.max(1);
        self
    }

    /// How many bytes after a candidate line are framed, so that a message's
    /// continuation lines are seen. Default: 64 KiB.
    pub fn context_after(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.forward = bytes.max(1);
        self
    }

    /// How many bytes a stream is read in at a time. Memory use is about
    /// this plus the two context sizes. Default: 8 MiB.
    pub fn block_size(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.block = bytes.max(4096);
        self
    }

    /// How many bytes each task of a parallel scan
    /// ([`Scanner::scan_slice_parallel`]) covers; chunks end at line ends.
    /// Default: 64 MiB.
    pub fn chunk_size(&mut self, bytes: usize) -> &mut ScannerBuilder {
        self.config.chunk = bytes.max(1);
        self
    }

    /// Which automaton the literal pass uses. Default:
    /// [`LiteralEngine::Auto`].
    pub fn literal_engine(&mut self, engine: LiteralEngine) -> &mut ScannerBuilder {
        self.config.engine = engine;
        self
    }

    /// Compiles the catalog's anchors and returns a reusable scanner.
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
            AhoCorasick::builder()
                .match_kind(kind)
                .kind(Some(if dfa {
                    aho_corasick::AhoCorasickKind::DFA
                } else {
                    aho_corasick::AhoCorasickKind::ContiguousNFA
                }))
                .build(&anchors)
                .expect("anchors are validated literals")
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
            owners,
            anchor_kinds,
            config: self.config,
        }
    }
}

/// Finds pattern matches in logs; build one with [`ScannerBuilder`] and reuse
/// it for every source.
#[derive(Clone, Debug)]
pub struct Scanner {
    catalog: Catalog,
    /// The whole-input pass's automaton for small inputs.
    scan_nfa: AhoCorasick,
    /// The same search as a full DFA over fewer anchors, with their kinds,
    /// built on first use.
    scan_dfa: std::sync::Arc<std::sync::OnceLock<(AhoCorasick, Vec<u8>)>>,
    /// The anchors both are built from.
    anchors: std::sync::Arc<Vec<String>>,
    /// Every anchor of an event's text (standard semantics), built on
    /// first use.
    event_ac: std::sync::Arc<std::sync::OnceLock<AhoCorasick>>,
    owners: Vec<Vec<u32>>,
    /// Per anchor: [`FOR_PATTERN`] and/or [`FOR_PROBE`].
    anchor_kinds: Vec<u8>,
    config: Config,
}

/// Spans shorter than this are searched with the NFA: building the DFA
/// costs about as much as the NFA's slower search of this many bytes.
const DFA_MIN_SPAN: usize = 4 << 20;

impl Scanner {
    /// The automaton that finds every anchor in an event's text.
    fn event_ac(&self) -> &AhoCorasick {
        self.event_ac.get_or_init(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(self.anchors.as_slice())
                .expect("anchors are validated literals")
        })
    }

    /// The whole-input pass's automaton for a span of `len` bytes.
    fn scan_ac(&self, len: usize) -> (&AhoCorasick, &[u8]) {
        let nfa = match self.config.engine {
            LiteralEngine::Auto => len < DFA_MIN_SPAN,
            LiteralEngine::Nfa => true,
            LiteralEngine::Dfa => false,
        };
        if nfa {
            return (&self.scan_nfa, &self.anchor_kinds);
        }
        let (dfa, kinds) = self.scan_dfa.get_or_init(|| {
            let (anchors, kinds) = self.line_anchors();
            let dfa = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(&anchors)
                .expect("anchors are validated literals");
            (dfa, kinds)
        });
        (dfa, kinds)
    }

    /// The anchors the DFA needs, with their kinds: an anchor that contains
    /// another of at least its kinds is dropped, since every line holding
    /// it holds the other (the pass needs one hit per line and the kinds
    /// of the line, not every anchor). A smaller automaton searches faster.
    fn line_anchors(&self) -> (Vec<&str>, Vec<u8>) {
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
        (
            kept.iter().map(|&i| self.anchors[i].as_str()).collect(),
            kept.iter().map(|&i| self.anchor_kinds[i]).collect(),
        )
    }
}

/// The least a piece of a stream's window is worth a thread for.
const PARALLEL_PIECE_MIN: usize = 1 << 20;

/// An anchor some pattern lists.
const FOR_PATTERN: u8 = 1;
/// An anchor some environment probe lists.
const FOR_PROBE: u8 = 2;
/// An anchor of an error-level line, for unclassified errors.
const FOR_ERROR: u8 = 4;
const ALL_KINDS: u8 = FOR_PATTERN | FOR_PROBE | FOR_ERROR;
/// Anchors of error-level lines. Those starting with `\n` match a glog or
/// absl header (`E1130 15:17:03.923 …`) at the start of the next line; the
/// bracket forms match one behind a tag (`[rank3]:E1130 …`, `(pid=42) E1130 …`).
const ERROR_ANCHORS: &[&str] = &[
    "ERROR", "FATAL", "CRITICAL", "\nE0", "\nE1", "\nF0", "\nF1", ": E ", ": F ", "]:E0", "]:E1",
    "]:F0", "]:F1", "] E0", "] E1", "] F0", "] F1", ") E0", ") E1", ") F0", ") F1",
];
/// How many probed line texts a scan remembers (then it starts over).
const PROBED_MEMORY: usize = 4096;

/// Per-source scanning state and reusable buffers.
struct State {
    source: usize,
    base: u64,
    counter: LineCounter,
    hits: Vec<usize>,
    text: String,
    line_at: Vec<usize>,
    scratch: Vec<u8>,
    candidates: Vec<u32>,
    probe_lines: Vec<usize>,
    error_lines: Vec<usize>,
    /// Hashes of line texts already probed.
    probed: std::collections::HashSet<u64>,
    stopped: bool,
}

impl State {
    fn new(source: usize) -> State {
        State {
            source,
            base: 0,
            counter: LineCounter::new(1),
            hits: Vec::new(),
            text: String::new(),
            line_at: Vec::new(),
            scratch: Vec::new(),
            candidates: Vec::new(),
            probe_lines: Vec::new(),
            error_lines: Vec::new(),
            probed: std::collections::HashSet::new(),
            stopped: false,
        }
    }
}

fn line_start_before(hay: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &hay[..at]).map_or(0, |p| p + 1)
}

fn line_end_after(hay: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &hay[at..]).map_or(hay.len(), |p| at + p + 1)
}

impl Scanner {
    /// The catalog this scanner matches.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Scans the file at `path`. Regular files are memory-mapped when `mmap`
    /// allows it; anything else (pipes, devices, empty files) is streamed.
    pub fn scan_path<S: Sink>(
        &self,
        source: usize,
        path: &Path,
        mmap: MmapChoice,
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        let name = path.display().to_string();
        match open(path, mmap)? {
            Opened::Mapped(map) => self.scan_slice_named(source, &name, &map, sink),
            Opened::Stream(reader, _) => self.scan_reader(source, &name, reader, sink),
        }
    }

    /// Like [`scan_path`](Scanner::scan_path), but a mapped file is scanned
    /// on all of rayon's threads ([`scan_slice_parallel`](Scanner::scan_slice_parallel)).
    /// `progress` is called with the number of bytes done so far.
    pub fn scan_path_parallel<S: Fork>(
        &self,
        source: usize,
        path: &Path,
        mmap: MmapChoice,
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceInfo, S::Error> {
        let name = path.display().to_string();
        match open(path, mmap)? {
            Opened::Mapped(map) => {
                let mut info = self.scan_slice_parallel(source, &map, sink, progress)?;
                info.path = name;
                Ok(info)
            }
            Opened::Stream(reader, read) => {
                let done = || progress(read.load(std::sync::atomic::Ordering::Relaxed));
                self.scan_stream(source, &name, reader, sink, &done)
            }
        }
    }

    /// Scans bytes in memory on all of rayon's threads, with the same result
    /// as [`scan_slice`](Scanner::scan_slice).
    ///
    /// The bytes are cut at line ends into chunks
    /// ([`ScannerBuilder::chunk_size`]); the lines before each chunk are
    /// counted first (a fast pass), then each chunk is scanned into a
    /// [`Fork`] of `sink`, with the whole input as context, so an event that
    /// straddles two chunks is framed whole and reported once, by the chunk
    /// where its first candidate line is. The forks are joined back in input
    /// order. `progress` is called with the bytes done after each chunk.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().chunk_size(64).build(Catalog::builtin().unwrap());
    /// let mut log = Vec::new();
    /// for i in 0..50 {
    ///     log.extend_from_slice(format!("INFO step {i} loss 0.5\n").as_bytes());
    /// }
    /// log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let info = scanner.scan_slice_parallel(0, &log, &mut sink, &|_| {}).unwrap();
    /// let report = sink.into_report(vec![info]);
    /// assert_eq!((report.findings[0].first.line, report.findings[0].first.step), (51, Some(49)));
    /// ```
    pub fn scan_slice_parallel<S: Fork>(
        &self,
        source: usize,
        bytes: &[u8],
        sink: &mut S,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<SourceInfo, S::Error> {
        use rayon::prelude::*;
        let mut bounds = vec![0usize];
        while let Some(&last) = bounds.last() {
            if last >= bytes.len() {
                break;
            }
            let next = (last + self.config.chunk).min(bytes.len());
            bounds.push(if next == bytes.len() {
                next
            } else {
                line_end_after(bytes, next)
            });
        }
        let chunks: Vec<Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
        // The line each chunk starts on.
        let newlines: Vec<u64> = chunks
            .par_iter()
            .map(|r| bytecount::count(&bytes[r.clone()], b'\n') as u64)
            .collect();
        let mut first_line = Vec::with_capacity(chunks.len());
        let mut line = 1u64;
        for n in &newlines {
            first_line.push(line);
            line += n;
        }
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = |n: usize| {
            let total = done.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed) + n as u64;
            progress(total);
        };
        let window = |st: &State| Window {
            hay: bytes,
            base: 0,
            source: st.source,
            lookback: self.config.back.max(self.config.lookback),
            lookahead: self.config.forward,
        };
        // 1. The literal pass and the probe lines, per chunk.
        let empty: Vec<S> = chunks.iter().map(|_| sink.fork()).collect();
        type Found<S, E> = Result<(S, Vec<usize>), E>;
        let found: Vec<Found<S, S::Error>> = empty
            .into_par_iter()
            .zip(chunks.par_iter().zip(first_line.par_iter()))
            .map(|(mut fork, (range, &line))| {
                let mut st = State::new(source);
                st.counter = LineCounter::at(range.start, line);
                let mut hits = Vec::new();
                let mut probe_lines = Vec::new();
                let mut error_lines = Vec::new();
                self.find_candidates(
                    bytes,
                    range.clone(),
                    &mut hits,
                    &mut probe_lines,
                    &mut error_lines,
                );
                for &p in &probe_lines {
                    self.probe_line(&mut st, bytes, p, &mut fork)?;
                }
                for &p in &error_lines {
                    self.error_line(&mut st, bytes, p, &mut fork)?;
                }
                report(range.len());
                Ok((fork, hits))
            })
            .collect();
        let mut hits: Vec<usize> = Vec::new();
        let mut forks: Vec<S> = Vec::with_capacity(chunks.len() * 2);
        for f in found {
            let (fork, h) = f?;
            forks.push(fork);
            hits.extend(h);
        }
        // 2. Regions over all candidates, as a single pass makes them; then
        // batches of regions framed in parallel. Regions are independent.
        let regions = self.regions(bytes, hits.iter().copied());
        let mut batches: Vec<Range<usize>> = Vec::new();
        let mut batch_bytes = 0usize;
        for (i, r) in regions.iter().enumerate() {
            match batches.last_mut() {
                Some(b) if batch_bytes < self.config.chunk => {
                    b.end = i + 1;
                    batch_bytes += r.len();
                }
                _ => {
                    batches.push(i..i + 1);
                    batch_bytes = r.len();
                }
            }
        }
        let empty: Vec<S> = batches.iter().map(|_| sink.fork()).collect();
        let everything = 0..bytes.len();
        let framed: Vec<Result<S, S::Error>> = empty
            .into_par_iter()
            .zip(batches.par_iter())
            .map(|(mut fork, batch)| {
                let batch = &regions[batch.clone()];
                let at = batch[0].start;
                // The line the batch starts on, from its chunk's first line.
                let c = bounds
                    .partition_point(|&b| b <= at)
                    .saturating_sub(1)
                    .min(chunks.len() - 1);
                let mut st = State::new(source);
                st.counter = LineCounter::at(chunks[c].start, first_line[c]);
                self.frame_regions(&mut st, bytes, batch, &hits, &everything, &mut fork)?;
                fork.window_end(&window(&st))?;
                Ok(fork)
            })
            .collect();
        for f in framed {
            forks.push(f?);
        }
        for fork in forks {
            sink.join(fork);
        }
        let lines = match bytes.last() {
            None => 0,
            Some(b'\n') => line - 1,
            Some(_) => line,
        };
        Ok(SourceInfo {
            path: "<memory>".to_string(),
            bytes: bytes.len() as u64,
            lines,
        })
    }

    /// Scans bytes already in memory.
    pub fn scan_slice<S: Sink>(
        &self,
        source: usize,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        self.scan_slice_named(source, "<memory>", bytes, sink)
    }

    fn scan_slice_named<S: Sink>(
        &self,
        source: usize,
        name: &str,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        let mut st = State::new(source);
        self.scan_window(&mut st, bytes, 0..bytes.len(), true, sink)?;
        let lines = count_lines(&mut st.counter, bytes);
        Ok(SourceInfo {
            path: name.to_string(),
            bytes: bytes.len() as u64,
            lines,
        })
    }

    /// Scans a stream block by block, with memory bounded by the block size
    /// and the context sizes whatever the stream's length.
    pub fn scan_reader<S: Sink, R: Read>(
        &self,
        source: usize,
        name: &str,
        reader: R,
        sink: &mut S,
    ) -> Result<SourceInfo, S::Error> {
        self.scan_stream(source, name, reader, sink, &|| {})
    }

    /// [`scan_reader`](Scanner::scan_reader), calling `progress` after each
    /// window.
    fn scan_stream<S: Sink, R: Read>(
        &self,
        source: usize,
        name: &str,
        mut reader: R,
        sink: &mut S,
        progress: &dyn Fn(),
    ) -> Result<SourceInfo, S::Error> {
        let io = |e: std::io::Error| Error::Io {
            path: name.to_string(),
            source: e,
        };
        let cfg = self.config;
        let mut st = State::new(source);
        // An event may start `back` bytes before the first owned candidate,
        // and its context is looked up `lookback` bytes before that.
        let keep_back = cfg.back + cfg.back.max(cfg.lookback);
        let mut buf: Vec<u8> = Vec::with_capacity(keep_back + cfg.block + cfg.forward);
        // Bytes of `buf` before this offset were scanned by an earlier window.
        let mut owned_from = 0usize;
        loop {
            let want = owned_from + cfg.block + cfg.forward;
            let eof = fill(&mut reader, &mut buf, want).map_err(io)?;
            let owned_to = if eof {
                buf.len()
            } else {
                let limit = buf.len() - cfg.forward;
                // End the owned part at a line end; a block with no line end
                // (one giant line) is cut where it is.
                match memchr::memrchr(b'\n', &buf[owned_from..limit]) {
                    Some(p) => owned_from + p + 1,
                    None => limit,
                }
            };
            if !st.stopped {
                self.scan_window(&mut st, &buf, owned_from..owned_to, false, sink)?;
            }
            progress();
            if eof {
                let lines = count_lines(&mut st.counter, &buf);
                return Ok(SourceInfo {
                    path: name.to_string(),
                    bytes: st.base + buf.len() as u64,
                    lines,
                });
            }
            // Keep what later windows need: context before, and the unowned rest.
            let keep = line_start_before(&buf, owned_to.saturating_sub(keep_back));
            let line = st.counter.line_at(&buf, keep);
            st.counter = LineCounter::new(line);
            buf.drain(..keep);
            st.base += keep as u64;
            owned_from = owned_to - keep;
        }
    }

    fn scan_window<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        owned: Range<usize>,
        whole: bool,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let search_from = line_start_before(hay, owned.start.saturating_sub(self.config.back));
        let search_to = (owned.end + self.config.forward).min(hay.len());
        let mut probe_lines = std::mem::take(&mut st.probe_lines);
        let mut error_lines = std::mem::take(&mut st.error_lines);
        self.find_candidates_parallel(
            hay,
            search_from..search_to,
            &mut st.hits,
            &mut probe_lines,
            &mut error_lines,
        );
        for &start in probe_lines.iter().filter(|&&p| owned.contains(&p)) {
            self.probe_line(st, hay, start, sink)?;
        }
        for &start in error_lines.iter().filter(|&&p| owned.contains(&p)) {
            self.error_line(st, hay, start, sink)?;
        }
        st.probe_lines = probe_lines;
        st.error_lines = error_lines;

        // A stream's window frames from its own candidates (it has less
        // behind it); in memory, every candidate counts, as in a single pass.
        let hits = std::mem::take(&mut st.hits);
        let regions = self.regions(
            hay,
            hits.iter().copied().filter(|h| whole || owned.contains(h)),
        );
        let done = self.frame_regions(st, hay, &regions, &hits, &owned, sink);
        st.hits = hits;
        done?;
        sink.window_end(&Window {
            hay,
            base: st.base,
            source: st.source,
            lookback: self.config.back.max(self.config.lookback),
            lookahead: self.config.forward,
        })
    }

    /// The byte ranges to frame: each candidate line with its context,
    /// overlapping ranges merged.
    fn regions(&self, hay: &[u8], hits: impl Iterator<Item = usize>) -> Vec<Range<usize>> {
        let mut regions: Vec<Range<usize>> = Vec::new();
        for h in hits {
            let start = line_start_before(hay, h.saturating_sub(self.config.back));
            let end = line_end_after(hay, (h + self.config.forward).min(hay.len()));
            match regions.last_mut() {
                Some(r) if start <= r.end => r.end = r.end.max(end),
                _ => regions.push(start..end),
            }
        }
        regions
    }

    /// Frames each region (each on its own: a region's open events close
    /// at its end) and matches the events whose first candidate line
    /// (`hits`, sorted) is in `owned`.
    fn frame_regions<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        regions: &[Range<usize>],
        hits: &[usize],
        owned: &Range<usize>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let mut framer = Framer::new();
        let mut failure: Option<S::Error> = None;
        for region in regions {
            framer.frame(hay, region.clone(), &mut |ev: &Event<'_>| {
                if st.stopped || failure.is_some() {
                    return;
                }
                let Some(first) = ev
                    .lines
                    .iter()
                    .map(|l| l.phys)
                    .find(|s| hits.binary_search(s).is_ok())
                else {
                    return;
                };
                if !owned.contains(&first) {
                    return;
                }
                match self.match_event(st, hay, ev, sink) {
                    Ok(true) => {}
                    Ok(false) => st.stopped = true,
                    Err(e) => failure = Some(e),
                }
            });
            if let Some(e) = failure {
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`find_candidates`](Scanner::find_candidates) on all of rayon's
    /// threads: a span of several pieces is cut at line starts, each piece
    /// searched on its own, and the lines joined in order — the same lines
    /// as one pass finds, since the search goes line by line. A stream's
    /// window (a file still being written, a pipe, a decompressed log) gets
    /// all cores this way with its memory still bounded by the block.
    fn find_candidates_parallel(
        &self,
        hay: &[u8],
        span: Range<usize>,
        hits: &mut Vec<usize>,
        probe_lines: &mut Vec<usize>,
        error_lines: &mut Vec<usize>,
    ) {
        let pieces = rayon::current_num_threads().min(span.len() / PARALLEL_PIECE_MIN);
        if pieces < 2 {
            return self.find_candidates(hay, span, hits, probe_lines, error_lines);
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
        type Lines = (Vec<usize>, Vec<usize>, Vec<usize>);
        let found: Vec<Lines> = cuts
            .par_windows(2)
            .map(|w| {
                let mut l: Lines = Default::default();
                self.find_candidates(hay, w[0]..w[1], &mut l.0, &mut l.1, &mut l.2);
                l
            })
            .collect();
        hits.clear();
        probe_lines.clear();
        error_lines.clear();
        for (h, p, e) in found {
            hits.extend(h);
            probe_lines.extend(p);
            error_lines.extend(e);
        }
    }

    /// Records the start of every line in `hay[span]` that holds a
    /// pattern's anchor (`hits`), and of every line that holds a probe's
    /// (`probe_lines`). Only a line's first anchor is found by the fast
    /// pass; the rest of the line is searched only until both kinds are
    /// known.
    fn find_candidates(
        &self,
        hay: &[u8],
        span: Range<usize>,
        hits: &mut Vec<usize>,
        probe_lines: &mut Vec<usize>,
        error_lines: &mut Vec<usize>,
    ) {
        hits.clear();
        probe_lines.clear();
        error_lines.clear();
        let (ac, anchor_kinds) = self.scan_ac(span.len());
        let mut pos = span.start;
        // A glog header on the very first line has no newline before it.
        if pos == 0
            && hay.len() > 2
            && matches!(hay[0], b'E' | b'F')
            && matches!(hay[1], b'0' | b'1')
        {
            error_lines.push(0);
        }
        while pos < span.end {
            // From the newline before the line, so that anchors that begin
            // with it (glog headers) match at a line start.
            let from = if pos > 0 && hay[pos - 1] == b'\n' {
                pos - 1
            } else {
                pos
            };
            let input = aho_corasick::Input::new(hay).span(from..span.end);
            let Some(m) = ac.find(input) else {
                break;
            };
            // An anchor that starts with the newline before its line.
            let start = if hay[m.start()] == b'\n' {
                m.start() + 1
            } else {
                memchr::memrchr2(b'\n', b'\r', &hay[pos..m.start()]).map_or(pos, |p| pos + p + 1)
            };
            let content_end = memchr::memchr2(b'\n', b'\r', &hay[m.end()..span.end])
                .map_or(span.end, |p| m.end() + p);
            let mut kinds = anchor_kinds[m.pattern().as_usize()];
            let mut at = m.end();
            while kinds != ALL_KINDS && at < content_end {
                let rest = aho_corasick::Input::new(hay).span(at..content_end);
                let Some(more) = ac.find(rest) else {
                    break;
                };
                kinds |= anchor_kinds[more.pattern().as_usize()];
                at = more.end();
            }
            if kinds & FOR_PATTERN != 0 {
                hits.push(start);
            }
            if kinds & FOR_PROBE != 0 {
                probe_lines.push(start);
            }
            if kinds & (FOR_ERROR | FOR_PATTERN) == FOR_ERROR {
                error_lines.push(start);
            }
            // A `\r\n` pair: the next line starts after the `\n`.
            pos = if content_end >= span.end {
                span.end
            } else if hay[content_end] == b'\r' && hay.get(content_end + 1) == Some(&b'\n') {
                content_end + 2
            } else {
                content_end + 1
            };
        }
    }

    /// Hands an error-level line that no pattern anchors to the sink as an
    /// unclassified error (lines whose level is not an error are skipped:
    /// the anchor `ERROR` also occurs inside ordinary text).
    fn error_line<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        start: usize,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let (prefix, body) = read_line(st, hay, start, MAX_MESSAGE);
        if !matches!(
            prefix.level,
            Some(crate::prefix::Level::Error | crate::prefix::Level::Fatal)
        ) {
            return Ok(());
        }
        let body = body.trim();
        if body.is_empty() {
            return Ok(());
        }
        let location = line_location(st, hay, start, &prefix);
        sink.unclassified(body, &location)
    }

    /// Runs the environment probes whose anchors a line holds, on that line
    /// alone: probes read one line, so they need no framing. A line whose
    /// text (prefixes removed) was already probed is skipped: a restarted
    /// job prints the same versions again.
    fn probe_line<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        start: usize,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let (prefix, body) = read_line(st, hay, start, usize::MAX);
        // Build fingerprints read the whole line: a glog header's source
        // path (`E tensorflow/…/cuda_dnn.cc:123]`) is part of the prefix.
        let whole = {
            let end = memchr::memchr2(b'\n', b'\r', &hay[start..]).map_or(hay.len(), |p| start + p);
            String::from_utf8_lossy(&hay[start..end]).into_owned()
        };
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            body.hash(&mut h);
            h.finish()
        };
        if st.probed.len() >= PROBED_MEMORY {
            st.probed.clear();
        }
        if !st.probed.insert(key) {
            return Ok(());
        }
        let location = line_location(st, hay, start, &prefix);
        let n_patterns = self.catalog.patterns().len() as u32;
        let probes = self.catalog.probes();
        st.candidates.clear();
        for m in self.event_ac().find_overlapping_iter(whole.as_str()) {
            st.candidates.extend(
                self.owners[m.pattern().as_usize()]
                    .iter()
                    .filter(|&&i| i >= n_patterns),
            );
        }
        st.candidates.sort_unstable();
        st.candidates.dedup();
        for &qi in &st.candidates {
            let probe = &probes[(qi - n_patterns) as usize];
            let text = if probe.build.is_some() { &whole } else { &body };
            for caps in probe.regex.captures_iter(text) {
                // A fingerprint names the framework, and the release or
                // range it allows; a probe's groups and constants are fields.
                let fields: Vec<(&str, String)> = match &probe.build {
                    Some(build) => {
                        let framework = probe.set.get("framework").map_or("", String::as_str);
                        let value = build.value(self.catalog.releases(), framework, &caps);
                        std::iter::once(("framework", framework.to_string()))
                            .chain(value.map(|v| ("framework_build", v)))
                            .collect()
                    }
                    None => {
                        let captured = probe
                            .regex
                            .capture_names()
                            .flatten()
                            .filter_map(|n| caps.name(n).map(|m| (n, m.as_str())));
                        let constants = probe.set.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                        captured
                            .chain(constants)
                            .filter_map(|(f, raw)| {
                                Some((f, crate::environment::normalize(f, raw)?))
                            })
                            .collect()
                    }
                };
                for (field, value) in fields {
                    sink.environment(&EnvFact {
                        field,
                        value,
                        probe,
                        location: location.clone(),
                    })?;
                }
            }
        }
        Ok(())
    }

    /// Confirms the candidate patterns of one event and reports the matches.
    fn match_event<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        ev: &Event<'_>,
        sink: &mut S,
    ) -> Result<bool, S::Error> {
        ev.text_into(hay, &mut st.text, &mut st.line_at, &mut st.scratch);
        let text = st.text.as_str();
        st.candidates.clear();
        for m in self.event_ac().find_overlapping_iter(text) {
            st.candidates
                .extend_from_slice(&self.owners[m.pattern().as_usize()]);
        }
        st.candidates.sort_unstable();
        st.candidates.dedup();

        // Where the final exception of a traceback starts in `text` (past
        // the indentation of a nested traceback).
        let exception_at = ev.exception.map(|i| {
            let at = st.line_at[i];
            at + text[at..]
                .bytes()
                .take_while(|&c| c == b' ' || c == b'\t')
                .count()
        });
        let patterns = self.catalog.patterns();
        let confirmed = crate::confirm::confirm(&self.catalog, &st.candidates, text, exception_at);

        for c in &confirmed {
            let (pi, caps, base) = (&c.pattern, &c.caps, &c.base);
            let p = &patterns[*pi];
            let severity = match c.carrier {
                Some((_, severity)) => severity,
                // A warning's text raised as the uncaught exception, with
                // nothing but the end of the process after it, was fatal
                // (patterns of the exception itself say what it is; a
                // traceback logged by a program that goes on is not).
                None if p.severity == Severity::Warning
                    && p.scope == Scope::Event
                    && exception_at
                        .is_some_and(|e| *base + caps.get(0).map_or(0, |m| m.start()) >= e)
                    && crate::framer::last_words(hay, ev) =>
                {
                    Severity::Error
                }
                None => p.severity,
            };
            // A group named `at` marks the finding's place when the regex
            // must first skip text (to reach the last exception of a chain).
            let at = base
                + caps
                    .name(AT_GROUP)
                    .or_else(|| caps.get(0))
                    .map_or(0, |m| m.start());
            let li = st.line_at.partition_point(|&s| s <= at).saturating_sub(1);
            let line = &ev.lines[li];
            let line_end = text[st.line_at[li]..]
                .find('\n')
                .map_or(text.len(), |e| st.line_at[li] + e);
            // A match deep inside a long line (XLA prints whole HLO
            // instructions before the status) is shown from the match on.
            let from = if at - st.line_at[li] > MESSAGE_LEAD {
                at
            } else {
                st.line_at[li]
            };
            let message = truncate(text[from..line_end].trim(), MAX_MESSAGE);
            let origin = line.prefix.origin.or(ev.origin);
            let location = Location {
                source: st.source,
                line: st.counter.line_at(hay, line.start),
                byte: st.base + line.start as u64,
                timestamp: line
                    .prefix
                    .timestamp
                    .or_else(|| ev.lines.iter().find_map(|l| l.prefix.timestamp)),
                rank: match origin {
                    Some(Origin::Rank(r)) => Some(r),
                    _ => None,
                },
            };
            // Fact regexes run on the same text as the core; most patterns
            // have none (and no signature): no allocation per match then.
            let more: Vec<Option<regex::Captures<'_>>> =
                p.facts.iter().map(|r| r.captures(&text[*base..])).collect();
            let captured = |n: &str| {
                caps.name(n)
                    .or_else(|| more.iter().flatten().find_map(|c| c.name(n)))
                    .map_or("", |m| m.as_str())
            };
            let signature = if p.signature.is_empty() {
                String::new()
            } else {
                p.signature
                    .iter()
                    .map(|n| captured(n))
                    .collect::<Vec<_>>()
                    .join("|")
            };
            let m = Match {
                pattern: p,
                pattern_index: *pi,
                location,
                event: ev.kind,
                event_byte: st.base + ev.start() as u64,
                message,
                text,
                captures: caps,
                more: &more,
                severity,
                class: c.class,
                status: c.status,
                carried_by: c.carrier.map(|(class, _)| class),
                signature,
            };
            if !sink.matched(&m)? {
                return Ok(false);
            }
        }

        Ok(true)
    }
}

/// The line starting at `start` (at most `limit` bytes of it), read on its
/// own: its prefixes, and its body with ANSI codes removed and invalid
/// UTF-8 replaced.
fn read_line(st: &mut State, hay: &[u8], start: usize, limit: usize) -> (Prefix, String) {
    let end = memchr::memchr2(b'\n', b'\r', &hay[start..]).map_or(hay.len(), |p| start + p);
    let raw = &hay[start..end.min(start.saturating_add(limit))];
    st.scratch.clear();
    let clean: &[u8] = if crate::ansi::has_escape(raw) {
        crate::ansi::strip_into(raw, &mut st.scratch);
        &st.scratch
    } else {
        raw
    };
    let prefix = crate::prefix::parse_prefix(clean);
    let body = String::from_utf8_lossy(&clean[prefix.body..]).into_owned();
    (prefix, body)
}

/// Where a line read on its own is, from its own prefix.
fn line_location(st: &mut State, hay: &[u8], start: usize, prefix: &Prefix) -> Location {
    Location {
        source: st.source,
        line: st.counter.line_at(hay, start),
        byte: st.base + start as u64,
        timestamp: prefix.timestamp,
        rank: match prefix.origin {
            Some(Origin::Rank(r)) => Some(r),
            _ => None,
        },
    }
}

/// A source ready to scan: mapped bytes, or a stream (decompressed if need be).
enum Opened {
    Mapped(memmap2::Mmap),
    /// A stream, and how many bytes of the file it has read so far
    /// (compressed bytes for a compressed file): for progress.
    Stream(Box<dyn Read>, std::sync::Arc<std::sync::atomic::AtomicU64>),
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens a path for scanning: directories and devices are refused; a
/// regular, uncompressed file is mapped when `mmap` allows it.
fn open(path: &Path, mmap: MmapChoice) -> Result<Opened, Error> {
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        source: e,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::other("is a directory")));
    }
    if crate::source::is_device(&meta) {
        return Err(io(std::io::Error::other(
            "is a device, not a log (pipe it in with `-` if you mean it)",
        )));
    }
    if let Some(map) = mmap.open(&file, &meta) {
        if Compression::of(&map[..map.len().min(4)]) == Compression::None {
            return Ok(Opened::Mapped(map));
        }
    }
    let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counting = Counting {
        inner: file,
        read: read.clone(),
    };
    let (_, reader) = decompressed(counting).map_err(io)?;
    Ok(Opened::Stream(reader, read))
}

/// Reads until `buf` holds `want` bytes or the stream ends; true at the end.
fn fill<R: Read>(reader: &mut R, buf: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    let mut chunk = [0u8; 64 << 10];
    while buf.len() < want {
        let n = match reader.read(&mut chunk[..(want - buf.len()).min(64 << 10)]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            return Ok(true);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(false)
}

/// The number of lines in a source whose last window is `hay`.
fn count_lines(counter: &mut LineCounter, hay: &[u8]) -> u64 {
    let at_end = counter.line_at(hay, hay.len());
    match hay.last() {
        None | Some(b'\n') => at_end - 1,
        Some(_) => at_end,
    }
}

/// `s` cut to at most `max` bytes, on a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
