//! Where matches go: the [`Sink`] trait and a closure adapter.

use crate::catalog::Pattern;
use crate::context::progress_before;

mod tee;
pub use tee::Tee;

// What a match and a window say, from the steps that find them.
pub use crate::catalog::statuses::Resolved;
pub use crate::context::Progress;
pub use crate::facts::Fact;
pub use crate::framer::EventKind;
pub use crate::prefix::Timestamp;

pub use crate::location::Location;

/// One confirmed match of a pattern on an event.
///
/// ```
/// use cudnnlog::{catalog::Severity, sink::{EventKind, FnSink, Match}, Catalog, ScannerBuilder};
/// let mut seen = Vec::new();
/// let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> { seen.push((m.class.to_string(), m.pattern.id.clone(), m.event, m.severity)); Ok(true) });
/// ScannerBuilder::new().build(Catalog::builtin().unwrap()).scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
/// assert_eq!(seen, [("cuda.illegal_address".into(), "cuda-illegal-address-cuda-error".into(), EventKind::Exception, Severity::Error)]);
/// ```
#[derive(Debug)]
pub struct Match<'a> {
    /// The pattern that matched.
    pub pattern: &'a Pattern,
    /// Its index in the catalog.
    pub pattern_index: usize,
    /// The matched line's location.
    pub location: Location,
    /// The shape of the event the match is in.
    pub event: EventKind,
    /// Byte offset of the event's first line.
    pub event_byte: u64,
    /// The matched line's text (prefixes removed).
    pub message: &'a str,
    /// The whole event's text (prefixes removed, lines joined by `\n`).
    pub text: &'a str,
    /// Where the core and fact regexes captured in `text`; [`Match::facts`]
    /// converts the named groups.
    pub(crate) groups: &'a Groups,
    /// How serious this occurrence is: the pattern's severity, raised to an
    /// error when the text is the uncaught exception of a traceback, and
    /// the carrier's severity for a status carried by a symptom.
    pub severity: crate::catalog::Severity,
    /// The class reported: the pattern's, or for a pattern with a status
    /// table, the class of the status it read.
    pub class: &'a str,
    /// For a pattern with a status table, the status it read.
    pub status: Option<crate::catalog::statuses::Resolved<'a>>,
    /// For a status carried by a symptom's message (`Could not create cudnn
    /// handle: CUDNN_STATUS_INTERNAL_ERROR`), the symptom's class.
    pub carried_by: Option<&'a str>,
    /// The value of the pattern's signature captures, joined by `|` (at
    /// most 256 bytes).
    pub signature: String,
    /// The event's text was cut: a line longer than
    /// [`MAX_LINE_TEXT`](crate::report::MAX_LINE_TEXT) kept only its ends.
    pub truncated: bool,
}

/// How a burst repeats ([`Sink::matched_copies`]): `count` copies in all,
/// each `bytes` bytes and `lines` lines after the one before.
///
/// ```
/// use cudnnlog::sink::Copies;
/// let c = Copies { count: 3, bytes: 120, lines: 2 };
/// assert_eq!(c.count * c.lines, 6);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copies {
    /// Copies in all, the first included.
    pub count: u64,
    /// Bytes from one copy to the next.
    pub bytes: u64,
    /// Lines from one copy to the next.
    pub lines: u64,
}

impl<'a> Match<'a> {
    /// This match in copy `k` of a burst ([`Sink::matched_copies`]): the
    /// same match, `k` copies on (`copy(0, _)` is itself).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Copies, FnSink, Match}};
    /// let mut lines = Vec::new();
    /// let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
    ///     let c = Copies { count: 2, bytes: 100, lines: 3 };
    ///     lines.push((m.location.line, m.copy(1, c).location.line));
    ///     Ok(true)
    /// });
    /// ScannerBuilder::new().build(Catalog::builtin()?).scan_slice(b"RuntimeError: CUDA error: out of memory\n", &mut sink)?;
    /// assert_eq!(lines, [(1, 4)]);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn copy(&self, k: u64, copies: Copies) -> Match<'a> {
        let mut location = self.location.clone();
        location.line += k * copies.lines;
        location.byte += k * copies.bytes;
        Match {
            location,
            event_byte: self.event_byte + k * copies.bytes,
            signature: self.signature.clone(),
            ..*self
        }
    }

    /// The named captures, converted: a capture named `*_bytes` holding a
    /// size (`2.00 GiB`, `1536 MiB`, a bare number of bytes) to an
    /// [`Int`](Fact::Int) of bytes, anything else to [`Text`](Fact::Text),
    /// trimmed and cut at 1 KiB. Built on request: a sink that only counts
    /// a burst of matches pays nothing.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::Fact, sink::{FnSink, Match}};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// let mut facts = Vec::new();
    /// scanner.scan_slice(log, &mut FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
    ///     facts.extend(m.facts().into_iter().map(|(name, fact)| (name.to_string(), fact)));
    ///     Ok(true)
    /// })).unwrap();
    /// assert!(facts.contains(&("requested_bytes".to_string(), Fact::Int(2 << 30))));
    /// assert!(facts.contains(&("device".to_string(), Fact::Text("0".to_string()))));
    /// ```
    pub fn facts(&self) -> Vec<(&'a str, Fact)> {
        let mut out: Vec<(&'a str, Fact)> = Vec::new();
        let ran;
        let sets = match self.groups.facts_from {
            None => &self.groups.sets,
            Some(base) => {
                ran = self.groups.with_facts(self.pattern, self.text, base);
                &ran
            }
        };
        let regexes = std::iter::once(&self.pattern.regex).chain(&self.pattern.facts);
        for (regex, set) in regexes.zip(sets) {
            let Some(set) = set else { continue };
            for (i, n) in regex.regex().capture_names().enumerate() {
                let Some(n) = n else { continue };
                if n == crate::catalog::AT_GROUP || out.iter().any(|(k, _)| *k == n) {
                    continue;
                }
                if let Some(Some(r)) = set.get(i) {
                    out.push((n, Fact::from_capture(n, &self.text[r.clone()])));
                }
            }
        }
        // What a status table resolved, where the log did not spell it.
        if let Some(r) = self.status {
            let missing = |k: &str, out: &[(&str, Fact)]| !out.iter().any(|(n, _)| *n == k);
            if let Some(name) = r.name.filter(|_| missing("status", &out)) {
                out.push(("status", Fact::Text(name.to_string())));
            }
            if let Some(code) = r.code.filter(|_| missing("code", &out)) {
                out.push(("code", Fact::Text(code.to_string())));
            }
        }
        out
    }
}

/// Where a match's regexes captured, as byte ranges of the event's text:
/// kept with what a text confirmed, so that the same text again (a burst
/// of identical warnings) is reported without running a regex.
///
/// The fact regexes run only when a sink asks for the facts
/// ([`Match::facts`]), unless the signature needed them: a sink that
/// folds a burst into one finding reads the facts of its first match, and
/// a million out-of-memory errors, each with its own numbers, ran eight
/// fact regexes on each (a fifth of the scan).
#[derive(Clone, Debug, Default)]
pub(crate) struct Groups {
    /// The core regex's groups by index, then each fact regex's (`None`
    /// where that regex found nothing); only the core's while
    /// [`facts_from`](Groups::facts_from) is set.
    pub(crate) sets: Vec<Option<Vec<Option<std::ops::Range<usize>>>>>,
    /// Where the fact regexes' scope starts in the text, when they have
    /// not run yet.
    pub(crate) facts_from: Option<usize>,
}

/// The spans of one regex's groups.
type Spans = Vec<Option<std::ops::Range<usize>>>;

impl Groups {
    /// [`sets`](Groups::sets) with the fact regexes of `pattern` run on
    /// `text` from `base` on.
    fn with_facts(&self, pattern: &Pattern, text: &str, base: usize) -> Vec<Option<Spans>> {
        let scope = text.get(base..).unwrap_or("");
        let facts = pattern
            .facts
            .iter()
            .map(|r| r.regex().captures(scope).map(|c| Groups::spans(&c, base)));
        self.sets.iter().take(1).cloned().chain(facts).collect()
    }

    /// The spans of `caps`, found on the text from `base` on.
    pub(crate) fn spans(caps: &regex::Captures<'_>, base: usize) -> Spans {
        caps.iter()
            .map(|g| g.map(|m| base + m.start()..base + m.end()))
            .collect()
    }
}

/// An environment value a probe read from the log.
///
/// ```
/// use cudnnlog::{sink::{EnvFact, Match, Sink}, Catalog, Error, ScannerBuilder};
/// struct Env(Vec<String>);
/// impl Sink for Env {
///     type Error = Error;
///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, Error> { Ok(true) }
///     fn environment(&mut self, f: &EnvFact<'_>) -> Result<(), Error> { Ok(self.0.push(format!("{}={} line {}", f.field, f.value, f.location.line))) }
/// }
/// let mut env = Env(Vec::new());
/// ScannerBuilder::new().build(Catalog::builtin().unwrap()).scan_slice(b"I1130 15:23:39.674345    1723 cuda_dnn.cc:442] Loaded cuDNN version 91900\n", &mut env).unwrap();
/// assert_eq!(env.0, ["cudnn=9.19.0 line 1"]); // in the canonical spelling
/// ```
#[derive(Debug)]
pub struct EnvFact<'a> {
    /// One of [`ENVIRONMENT_FIELDS`](crate::report::ENVIRONMENT_FIELDS).
    pub field: &'a str,
    /// In the field's canonical spelling, whatever the log's: cuDNN
    /// `91900` is `9.19.0`, CUDA `cu130` is `13.0`, a compute capability
    /// `sm_86` is `8.6`, a framework is lower case, a boolean is
    /// `true`/`false`; anything else trimmed.
    pub value: String,
    /// The probe that read it.
    pub probe: &'a crate::catalog::Probe,
    /// Where it was read.
    pub location: Location,
}

/// The bytes a scan is working on, handed to [`Sink::window_end`] so that a
/// sink can look up context (the step and epoch before an offset) while the
/// bytes are still there.
///
/// ```
/// use cudnnlog::{sink::{Match, Sink, Window}, Catalog, ScannerBuilder};
/// /// The step before each match, looked up while its window's bytes are here.
/// #[derive(Default)]
/// struct Steps { at: Vec<u64>, steps: Vec<Option<u64>> }
/// impl Sink for Steps {
///     type Error = cudnnlog::Error;
///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
///         self.at.push(m.location.byte);
///         Ok(true)
///     }
///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
///         let inside = self.at.iter().filter(|&&b| w.contains(b));
///         self.steps.extend(inside.map(|&b| w.progress_before(b).step));
///         Ok(())
///     }
/// }
/// let log = b"INFO train: epoch 1 step 41 loss 0.7\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
/// let mut sink = Steps::default();
/// ScannerBuilder::new().build(Catalog::builtin()?).scan_slice(log, &mut sink)?;
/// assert_eq!(sink.steps, [Some(41)]);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Debug)]
pub struct Window<'a> {
    pub(crate) hay: &'a [u8],
    pub(crate) base: u64,
    /// How far back context lookups reach: the scanner's `context_before`,
    /// which a streaming scan always keeps, so that mapped and streamed
    /// scans see the same context.
    pub(crate) lookback: usize,
    /// How far ahead of an owned line a window reaches: the scanner's
    /// `context_after`, which a streaming scan always reads ahead.
    pub(crate) lookahead: usize,
    /// A fork is told this window, then the sink it is joined into is told
    /// it again: what the window places (a finding's step and time) can
    /// wait for the join, where most of a fork's sampled occurrences are
    /// dropped.
    pub(crate) rejoined: bool,
}

impl Window<'_> {
    /// True when the absolute byte offset is inside this window.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Window}};
    /// struct Ends(u64, Vec<bool>); // the log's length; what `contains` says around it
    /// impl Sink for Ends {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> { Ok(true) }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         self.1 = vec![w.contains(0), w.contains(self.0), w.contains(self.0 + 1)];
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut sink = Ends(log.len() as u64, Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// // A slice in memory is one window: all of it, and nothing after it.
    /// assert_eq!(sink.1, [true, true, false]);
    /// ```
    pub fn contains(&self, byte: u64) -> bool {
        byte >= self.base && byte <= self.base + self.hay.len() as u64
    }

    /// The timestamp of the nearest earlier line that has one (at most 256
    /// lines and the scanner's `context_before` back), for lines that carry
    /// none themselves.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Window}};
    /// struct Times(Vec<u64>, Vec<Option<String>>); // match offsets; their times
    /// impl Sink for Times {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0.push(m.location.byte);
    ///         Ok(true)
    ///     }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         self.1.extend(self.0.drain(..).map(|b| w.timestamp_before(b).and_then(|t| t.iso())));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 loss 2.31\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut sink = Times(Vec::new(), Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// assert_eq!(sink.1, [Some("2026-11-29T19:41:04.724".to_string())]);
    /// ```
    pub fn timestamp_before(&self, byte: u64) -> Option<Timestamp> {
        self.timestamp_before_of(byte, None)
    }

    /// Like [`timestamp_before`](Window::timestamp_before), skipping the
    /// lines of ranks other than `rank`, whose clocks say when *they* wrote.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Window}};
    /// struct Times(Vec<(u64, Option<u32>)>, Vec<(Option<u8>, Option<u8>)>);
    /// impl Sink for Times {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0.push((m.location.byte, m.location.rank));
    ///         Ok(true)
    ///     }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         let second = |t: Option<cudnnlog::report::Timestamp>| t.map(|t| t.second);
    ///         let at = self.0.drain(..);
    ///         self.1.extend(at.map(|(b, r)| (second(w.timestamp_before(b)), second(w.timestamp_before_of(b, r)))));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"[rank0]:2026-11-29 19:41:04,724 INFO train: step 3\n[rank1]:2026-11-29 19:41:09,001 INFO train: step 4\n[rank0]:RuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut sink = Times(Vec::new(), Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// // The nearest line is rank 1's (19:41:09); rank 0 last wrote at 19:41:04.
    /// assert_eq!(sink.1, [(Some(9), Some(4))]);
    /// ```
    pub fn timestamp_before_of(&self, byte: u64, rank: Option<u32>) -> Option<Timestamp> {
        if !self.contains(byte) {
            return None;
        }
        crate::context::timestamp_before(self.hay, (byte - self.base) as usize, self.lookback, rank)
    }

    /// `ts`, the timestamp of the line at the absolute byte offset `byte`,
    /// with its year filled in from the nearest line of the window that
    /// has a full date (at most 256 lines and the scanner's context either
    /// side): glog/absl and syslog headers print no year. Unchanged when it
    /// has a year, or no dated line is near.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::Timestamp, sink::{Match, Sink, Window}};
    /// struct Years(Vec<(u64, Timestamp)>, Vec<Option<String>>);
    /// impl Sink for Years {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0.extend(m.location.timestamp.map(|t| (m.location.byte, t)));
    ///         Ok(true)
    ///     }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         self.1.extend(self.0.drain(..).map(|(b, t)| w.with_year(b, t).iso()));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"2026-11-29 19:41:04,724 INFO train: epoch 2 step 3\nE1129 19:41:05.123456 4242 cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n";
    /// let mut sink = Years(Vec::new(), Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// // The glog header has no year: the dated line above gives it.
    /// assert!(!sink.1.is_empty());
    /// assert!(sink.1.iter().all(|t| t.as_deref() == Some("2026-11-29T19:41:05.123456")));
    /// ```
    pub fn with_year(&self, byte: u64, ts: Timestamp) -> Timestamp {
        if !ts.needs_year() || !self.contains(byte) {
            return ts;
        }
        let at = (byte - self.base) as usize;
        match crate::context::dated_near(self.hay, at, self.lookback, self.lookahead) {
            Some(reference) => ts.with_year_near(&reference),
            None => ts,
        }
    }

    /// The training progress (step, epoch) the log reported last before the
    /// absolute byte offset `byte`; empty when the offset is outside the
    /// window or no marker is found within the scanner's `context_before`
    /// (at most 1 MiB) before it.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Window}};
    /// struct Steps(Vec<u64>, Vec<(Option<u64>, Option<u64>)>); // match offsets; step, epoch
    /// impl Sink for Steps {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0.push(m.location.byte);
    ///         Ok(true)
    ///     }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         let progress = self.0.drain(..).map(|b| w.progress_before(b));
    ///         self.1.extend(progress.map(|p| (p.step, p.epoch)));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"INFO train: epoch 2 step 3 loss 2.31\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut sink = Steps(Vec::new(), Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// assert_eq!(sink.1, [(Some(3), Some(2))]);
    /// ```
    pub fn progress_before(&self, byte: u64) -> Progress {
        self.progress_before_of(byte, None)
    }

    /// Like [`progress_before`](Window::progress_before), from the lines of
    /// `rank` (untagged lines when it has none): where *that* rank was.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Match, Sink, Window}};
    /// struct Steps(Vec<(u64, Option<u32>)>, Vec<(Option<u64>, Option<u64>)>);
    /// impl Sink for Steps {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.0.push((m.location.byte, m.location.rank));
    ///         Ok(true)
    ///     }
    ///     fn window_end(&mut self, w: &Window<'_>) -> Result<(), cudnnlog::Error> {
    ///         let at = self.0.drain(..);
    ///         self.1.extend(at.map(|(b, r)| (w.progress_before(b).step, w.progress_before_of(b, r).step)));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let log = b"[rank0]:INFO train: epoch 2 step 3\n[rank1]:INFO train: epoch 2 step 4\n[rank0]:RuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// let mut sink = Steps(Vec::new(), Vec::new());
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// // Rank 1 had reached step 4; rank 0, which failed, was at step 3.
    /// assert_eq!(sink.1, [(Some(4), Some(3))]);
    /// ```
    pub fn progress_before_of(&self, byte: u64, rank: Option<u32>) -> Progress {
        if !self.contains(byte) {
            return Progress::default();
        }
        progress_before(self.hay, (byte - self.base) as usize, self.lookback, rank)
    }
}

/// Receives matches as a scan finds them.
///
/// Modelled on `grep-searcher`'s `Sink`: `matched` returns `Ok(true)` to go
/// on and `Ok(false)` to stop the scan of the current source early.
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder, sink::FnSink};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n";
/// let mut classes = Vec::new();
/// scanner.scan_slice(log, &mut FnSink(|m: &cudnnlog::sink::Match<'_>| {
///     classes.push(m.class.to_string());
///     Ok::<bool, cudnnlog::Error>(true)
/// })).unwrap();
/// assert_eq!(classes, ["cuda.oom"]);
/// ```
pub trait Sink {
    /// The error a sink may fail with; scan errors convert into it.
    type Error: From<crate::Error>;

    /// Called for every match, in the order events close (roughly line order;
    /// interleaved ranks may reorder nearby matches).
    fn matched(&mut self, m: &Match<'_>) -> Result<bool, Self::Error>;

    /// Called for a burst: the matches `group` (of one stretch of the log,
    /// in order), then `copies.count - 1` more copies of them, each
    /// `copies.bytes` bytes and `copies.lines` lines after the one before
    /// (a warning repeated a million times, or a few ranks' copies of it
    /// in turn). The copies are byte for byte the first one's, so each
    /// match's text, class and signature are the same. Returns `false` to
    /// stop, as [`Sink::matched`] does.
    ///
    /// Default: [`Sink::matched`] for each match of each copy, in log
    /// order ([`Match::copy`]). A sink that only counts and samples can
    /// take a burst at once.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, sink::{Copies, Match, Sink}};
    /// #[derive(Default)]
    /// struct Count { matches: u64, calls: u64 }
    /// impl Sink for Count {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.matches += 1;
    ///         Ok(true)
    ///     }
    ///     fn matched_copies(&mut self, group: &[Match<'_>], copies: Copies) -> Result<bool, cudnnlog::Error> {
    ///         self.matches += group.len() as u64 * copies.count;
    ///         self.calls += 1;
    ///         Ok(true)
    ///     }
    /// }
    /// let warning = "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";
    /// let log = warning.repeat(1000);
    /// let mut sink = Count::default();
    /// ScannerBuilder::new().build(Catalog::builtin()?).scan_slice(log.as_bytes(), &mut sink)?;
    /// assert_eq!(sink.matches, 1000);
    /// assert!(sink.calls >= 1);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    fn matched_copies(&mut self, group: &[Match<'_>], copies: Copies) -> Result<bool, Self::Error> {
        for k in 0..copies.count {
            for m in group {
                if !self.matched(&m.copy(k, copies))? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Called after each window of a source has been scanned, before its
    /// bytes are released. Default: nothing.
    fn window_end(&mut self, _window: &Window<'_>) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Called for every environment value a probe reads (a version, the
    /// GPU model). Default: nothing.
    fn environment(&mut self, _fact: &EnvFact<'_>) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Called for every error-level line that no pattern anchors (its text
    /// with prefixes removed): what the catalog does not know. Default:
    /// nothing.
    fn unclassified(&mut self, _line: &str, _at: &Location) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Called once when a source has been read, with what was read: after
    /// its last window, before the scan returns (also when a read failed
    /// part way, before the [`Incomplete`](crate::source::Incomplete) error
    /// is returned). A sink fed several sources tells them apart by these
    /// calls. Default: nothing.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, source::SourceInfo, sink::{Match, Sink}};
    /// /// Matches per source.
    /// #[derive(Default)]
    /// struct PerSource(Vec<usize>, usize);
    /// impl Sink for PerSource {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, _: &Match<'_>) -> Result<bool, cudnnlog::Error> {
    ///         self.1 += 1;
    ///         Ok(true)
    ///     }
    ///     fn source_end(&mut self, _: &SourceInfo) -> Result<(), cudnnlog::Error> {
    ///         self.0.push(std::mem::take(&mut self.1));
    ///         Ok(())
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    /// let mut sink = PerSource::default();
    /// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink)?;
    /// scanner.scan_slice(b"INFO train: step 3 loss 0.5\n", &mut sink)?;
    /// assert_eq!(sink.0, [1, 0]);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    fn source_end(&mut self, _info: &crate::source::SourceInfo) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A sink that a parallel scan can split across threads: each chunk of a
/// large input is scanned into a fork, and the forks are joined back in
/// input order ([`Scanner::scan_slice_parallel`](crate::Scanner::scan_slice_parallel)).
/// Joining must give what one sink fed every match in order would hold.
///
/// ```
/// use cudnnlog::{report::FindingsSink, sink::Fork, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"INFO step 1\n", &mut sink).unwrap();
/// let mut later = sink.fork(); // empty, for the input after the sink's
/// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut later).unwrap();
/// sink.join(later);
/// assert_eq!(sink.into_report().findings[0].first.source, 1); // the fork's source follows the sink's
/// ```
pub trait Fork: Sink<Error: Send> + Send + Sized {
    /// An empty sink of the same kind.
    fn fork(&self) -> Self;
    /// Takes in everything `other` received; `other` covered later input.
    fn join(&mut self, other: Self);
}

/// A sink made from a closure that receives each match.
///
/// ```
/// let mut lines = Vec::new();
/// let mut first = cudnnlog::sink::FnSink(|m: &cudnnlog::Match<'_>| -> Result<bool, cudnnlog::Error> { lines.push(m.location.line); Ok(false) });
/// cudnnlog::ScannerBuilder::new().build(cudnnlog::Catalog::builtin().unwrap()).scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n", &mut first).unwrap();
/// assert_eq!(lines, [1]); // `Ok(false)` stopped the scan
/// ```
pub struct FnSink<F>(pub F);

impl<F, E> Sink for FnSink<F>
where
    F: FnMut(&Match<'_>) -> Result<bool, E>,
    E: From<crate::Error>,
{
    type Error = E;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, E> {
        (self.0)(m)
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    type Error = S::Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, S::Error> {
        (**self).matched(m)
    }

    fn matched_copies(&mut self, group: &[Match<'_>], copies: Copies) -> Result<bool, S::Error> {
        (**self).matched_copies(group, copies)
    }

    fn window_end(&mut self, window: &Window<'_>) -> Result<(), S::Error> {
        (**self).window_end(window)
    }

    fn environment(&mut self, fact: &EnvFact<'_>) -> Result<(), S::Error> {
        (**self).environment(fact)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), S::Error> {
        (**self).unclassified(line, at)
    }

    fn source_end(&mut self, info: &crate::source::SourceInfo) -> Result<(), S::Error> {
        (**self).source_end(info)
    }
}
