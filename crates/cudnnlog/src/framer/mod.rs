//! The framer: bytes to physical lines to logical events.
//!
//! A physical line ends at `\n`, `\r\n`, or a lone `\r` (progress bars redraw
//! one terminal line with `\r`; each redraw is a line of its own here, though
//! line numbers count `\n` only, as editors do). Each line's prefixes are
//! parsed ([`crate::prefix`]) and lines are grouped into [`Event`]s:
//!
//! * a Python traceback, from `Traceback (most recent call last):` through the
//!   exception line and the lines that continue its message, with chained
//!   tracebacks (`During handling of the above exception…`) and a DataLoader
//!   worker's `Original Traceback` kept together and a torchrun
//!   `ChildFailedError` summary block included; the event records which
//!   line holds the final (uncaught) exception;
//! * a C++ exception: a message line followed by `Exception raised from …`
//!   and its `frame #N` lines, or `terminate called after throwing…` with
//!   its `what():` line;
//! * a Python warning (`file.py:12: UserWarning: …`) with the source line
//!   Python prints under it;
//! * a torchrun failure summary (`=====`, `x.py FAILED`, …, `=====`);
//! * an exception without a traceback: a line that starts with an
//!   exception (`ModuleNotFoundError: …`, `torch.OutOfMemoryError: …`), as
//!   launchers print `str(exc)` and users paste the last line, with the
//!   lines that continue its message; a traceback whose header was cut off
//!   (it starts at a `File "…"` frame); an IPython traceback (`ValueError
//!   Traceback (most recent call last)`, `Cell In[4], line 3`, `----> 3`);
//!   Elixir's `** (RuntimeError) …` and Rust panics;
//! * otherwise a single line.
//!
//! Physical lines are first cut into the logical lines they hold
//! (`split.rs`: escaped `\n`, two writers glued together, a traceback whose
//! newlines were lost), and lines that continue the one before them —
//! hard-wrapped at a width inferred from the data, soft-wrapped after a
//! blank, reflowed under a prefix, or repeating a kernel tag — are joined
//! into it (`wrap.rs`). Markdown quote markers, code fences and inline code
//! marks of pasted text are read through ([`crate::prefix`]).
//!
//! Lines are grouped per writer: lines tagged `[rank0]:` never join an event
//! of `[rank1]:`, so interleaved ranks give separate events.

mod last_words;
mod line;
mod memo;
mod periodic;
mod shape;
mod split;
mod text;
mod wrap;

pub use last_words::last_words;
pub use line::{lines, Line};
pub(crate) use periodic::{Framed, Run};
pub use wrap::Join;

use crate::ansi;
use crate::prefix::{parse_prefix, Level, Origin, Prefix};
use shape::{shape, Shape};
use std::ops::Range;
pub use text::MAX_LINE_TEXT;

/// Continuation lines an exception message may have before the event is cut.
const MAX_CONTINUATION: u32 = 200;
/// Lines that continue an exception message after a blank line: XLA, JAX
/// and TensorFlow (`Graph execution error:`) print messages of several
/// paragraphs.
const PARAGRAPH_OPENERS: &[&[u8]] = &[
    b"Original error:",
    b"To ignore this failure",
    b"--------------------",
    b"For simplicity, JAX has removed",
    b"Detected at node",
];

/// Lines an IPython traceback's frames may take before its exception.
const MAX_IPYTHON_FRAMES: u32 = 2000;

/// Lines that continue a warning whose message starts on the next line.
const MAX_WARNING_MESSAGE: u32 = 20;

/// Lines of other writers after which an open event is closed.
const MAX_INTERLEAVE: u64 = 64;

/// Lines a torchrun summary block may have.
const MAX_SUMMARY: u32 = 1000;

/// The shape of an event.
///
/// ```
/// use cudnnlog::{sink::{EventKind, FnSink, Match}, Catalog, ScannerBuilder};
/// let mut kinds = Vec::new();
/// let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> { kinds.push((m.location.line, m.event)); Ok(true) });
/// let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n\
/// Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 21, in <module>\n    loss.backward()\n\
/// torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// ScannerBuilder::new().build(Catalog::builtin().unwrap()).scan_slice(log, &mut sink).unwrap();
/// assert_eq!(kinds, [(1, EventKind::Exception), (5, EventKind::Traceback)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A single line: one that opens none of the shapes below, or an
    /// exception logged as information or a warning (it was handled).
    Line,
    /// A Python traceback through its exception's message, also one whose
    /// header was cut off (it starts at a `File "…"` frame) or IPython's.
    Traceback,
    /// An exception line without a traceback before it.
    Exception,
    /// A C++ exception: a message with its `Exception raised from …` and
    /// `frame #N` lines, or `terminate called after throwing…` and `what():`.
    CxxException,
    /// A Python warning (`file.py:12: UserWarning: …`) and its source line.
    Warning,
    /// A torchrun failure summary, from its `=====` rule to the closing one.
    Summary,
}

/// A logical message: one or more lines of one writer.
#[derive(Debug)]
pub struct Event<'a> {
    /// Its shape.
    pub kind: EventKind,
    /// The writer of its lines; `None` for lines no tag names.
    pub origin: Option<Origin>,
    /// Its logical lines, in log order; never empty.
    pub lines: &'a [Line],
    /// For a traceback (or an exception event), the index in `lines` of its
    /// final exception line (the uncaught exception: the last one of a
    /// chain).
    pub exception: Option<usize>,
}

impl Event<'_> {
    /// Offset of the event's first byte.
    pub fn start(&self) -> usize {
        self.lines[0].start
    }
}

/// The line that opens a Python traceback.
pub(crate) const TRACEBACK_HEADER: &[u8] = b"Traceback (most recent call last)";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A single line, held until the next line of its writer shows whether
    /// a C++ exception block follows.
    Pending,
    Frames,
    /// An IPython traceback's frames, source lines and blank lines.
    IPython,
    Message,
    AfterBlank {
        kept: usize,
    },
    Chained,
    SummaryHead,
    Summary {
        rules: u8,
    },
    Warning,
    /// A warning whose message starts on the line after its header.
    WarningMessage,
    Cxx,
}

#[derive(Debug, PartialEq)]
struct Open {
    origin: Option<Origin>,
    kind: EventKind,
    state: State,
    lines: Vec<Line>,
    count: u32,
    exception: Option<usize>,
    /// The framer's line number of the event's last line.
    last_seen: u64,
    /// The indentation of a traceback nested in other output: its frames
    /// are indented deeper, its exception line as deep.
    indent: usize,
}

/// Groups lines into events; reused across regions to keep its buffers.
#[derive(Default)]
pub struct Framer {
    open: Vec<Open>,
    pool: Vec<Vec<Line>>,
    last_origin: Option<Option<Origin>>,
    scratch: Vec<u8>,
    pieces: Vec<Range<usize>>,
    /// The previous physical line, to spot continuations.
    prev: Option<wrap::Prev>,
    /// Lines pushed so far.
    seen: u64,
    /// The width the region being framed was hard-wrapped at, if it was.
    wrap_width: Option<usize>,
    /// The last few distinct lines' prefixes and pieces.
    memo: memo::LineMemo,
    /// Events emitted so far, and where the earliest one emitted since the
    /// last copy of a run started begins.
    emitted: u64,
    emitted_from: usize,
    /// The snapshot at the start of the last copy of a run, and how many
    /// the run has taken.
    track: Option<periodic::Track>,
    tries: u32,
}

/// A Python warning whose message starts on the next line: PyTorch's
/// `UserWarning: \nNVIDIA … with CUDA capability sm_120 is not compatible…`.
fn warning_message_follows(body: &[u8]) -> bool {
    let b = body.trim_ascii_end();
    b.ends_with(b"Warning:") && shape::is_warning_line(body)
}

enum Step {
    Keep,
    /// Close the event, then treat the line as a fresh one.
    CloseAndRetry,
    /// Add the line, then close the event.
    PushAndClose,
}

impl Framer {
    /// A framer with no open events, as [`Framer::default`].
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Frames `hay[range]` (which must start at a line start) and calls
    /// `emit` for every event, including those still open at the end.
    #[cfg_attr(not(any(test, fuzzing)), allow(dead_code))]
    pub fn frame(&mut self, hay: &[u8], range: Range<usize>, emit: &mut dyn FnMut(&Event<'_>)) {
        self.frame_runs(hay, range, &[], &mut |f| {
            if let Framed::Event(ev) = f {
                emit(ev)
            }
        });
    }

    /// [`Framer::frame`], told where bytes repeat (`runs`, sorted, apart):
    /// the copies of a run after the framer comes back to a state are
    /// handed on as [`Framed::Copies`] of the events before, not framed.
    pub(crate) fn frame_runs(
        &mut self,
        hay: &[u8],
        range: Range<usize>,
        runs: &[Run],
        emit: &mut dyn FnMut(Framed<'_, '_>),
    ) {
        self.wrap_width = wrap::wrap_width(hay, range.clone(), runs);
        (self.track, self.tries, self.emitted_from) = (None, 0, usize::MAX);
        let mut pieces = std::mem::take(&mut self.pieces);
        let (mut from, mut ri) = (range.start, 0);
        'copies: loop {
            for (phys, end) in lines(hay, from..range.end) {
                if !runs.is_empty() {
                    if let Some(to) = self.period(runs, &mut ri, phys, range.end, emit) {
                        from = to;
                        continue 'copies;
                    }
                }
                pieces.clear();
                // Parsed once: a line that is not split is its own piece.
                let prefix = self.memo.read(hay, phys..end, &mut pieces);
                let whole = pieces.len() == 1;
                let known = if whole { prefix } else { None };
                let mut origin = None;
                for (i, piece) in pieces.iter().enumerate() {
                    let last = i + 1 == pieces.len();
                    origin =
                        self.piece(hay, phys, piece.clone(), (whole, known), last, origin, emit);
                }
            }
            break;
        }
        self.pieces = pieces;
        self.flush(emit);
    }

    /// Frames one logical line; `whole` when it is its physical line (with
    /// its prefix, when already parsed), `last` when it ends it. A piece
    /// after the first is written by the same writer (`origin`) unless it
    /// names its own; returns the writer.
    #[allow(clippy::too_many_arguments)]
    fn piece(
        &mut self,
        hay: &[u8],
        phys: usize,
        piece: Range<usize>,
        (whole, known): (bool, Option<Prefix>),
        last: bool,
        origin: Option<Origin>,
        emit: &mut dyn FnMut(Framed<'_, '_>),
    ) -> Option<Origin> {
        let raw = &hay[piece.clone()];
        let has_escape = ansi::has_escape(raw);
        let mut scratch = std::mem::take(&mut self.scratch);
        let text = if has_escape {
            scratch.clear();
            ansi::strip_into(raw, &mut scratch);
            &scratch[..]
        } else {
            raw
        };
        let mut prefix = match known {
            Some(p) if !has_escape => p,
            _ => parse_prefix(text),
        };
        prefix.origin = prefix.origin.or(origin);
        let tail = crate::prefix::markup_tail(&text[prefix.body..]);
        let body = &text[prefix.body..text.len() - tail];
        let mut line = Line {
            start: piece.start,
            end: piece.end
                - if raw.ends_with(&text[text.len() - tail..]) {
                    tail
                } else {
                    0
                },
            phys,
            prefix,
            has_escape,
            join: Join::Newline,
        };
        let sh = shape(body);
        let here = wrap::Prev::of(text, line.end, &prefix, body);
        let joined = whole && self.continues(&mut line, text, sh, body);
        self.prev = last.then_some(here);
        if !joined {
            self.push_line(line, sh, body, emit);
        }
        self.scratch = scratch;
        prefix.origin
    }

    /// Joins `line` to the event the previous physical line ended, when it
    /// continues that line ([`wrap::continuation`]).
    fn continues(&mut self, line: &mut Line, text: &[u8], sh: Shape, body: &[u8]) -> bool {
        let Some(prev) = self.prev else {
            return false;
        };
        let plain = sh == Shape::Other;
        if !matches!(sh, Shape::Other | Shape::Indented) && !body.starts_with(b"NVRM: ") {
            return false;
        }
        let Some(o) = self
            .open
            .iter_mut()
            .find(|o| o.lines.last().map(|l| l.end) == Some(prev.end))
        else {
            return false;
        };
        if matches!(
            o.state,
            State::Frames | State::IPython | State::SummaryHead | State::Summary { .. }
        ) {
            return false;
        }
        let Some((join, body_at)) =
            wrap::continuation(&prev, self.wrap_width, text, &line.prefix, body, plain)
        else {
            return false;
        };
        line.join = join;
        if let Some(at) = body_at {
            line.prefix.body = at;
        }
        o.lines.push(*line);
        o.last_seen = self.seen;
        true
    }

    /// Closes every open event.
    pub(crate) fn flush(&mut self, emit: &mut dyn FnMut(Framed<'_, '_>)) {
        while let Some(open) = self.open.pop() {
            self.close(open, emit);
        }
        self.last_origin = None;
        self.prev = None;
    }

    fn push_line(
        &mut self,
        line: Line,
        sh: Shape,
        body: &[u8],
        emit: &mut dyn FnMut(Framed<'_, '_>),
    ) {
        self.seen += 1;
        // An event that other writers' lines have buried is over: a line
        // of its writer far below is not its continuation.
        while let Some(i) = self
            .open
            .iter()
            .position(|o| self.seen - o.last_seen > MAX_INTERLEAVE)
        {
            let open = self.open.remove(i);
            self.close(open, emit);
        }
        let mut key = line.prefix.origin;
        // PyTorch tags only the first line of a multi-line C++ message with
        // the rank; its `Exception raised from`/`frame #` lines follow bare.
        if key.is_none()
            && !line.prefix.starts_record()
            && matches!(sh, Shape::CxxRaised | Shape::CxxFrame | Shape::CxxWhat)
        {
            if let Some(last) = self.last_origin {
                if let Some(o) = self.open.iter().find(|o| o.origin == last) {
                    if matches!(o.state, State::Pending | State::Cxx | State::Message) {
                        key = last;
                    }
                }
            }
        }
        self.last_origin = Some(key);
        if let Some(idx) = self.open.iter().position(|o| o.origin == key) {
            self.open[idx].last_seen = self.seen;
            match self.advance(idx, &line, sh, body) {
                Step::Keep => return,
                Step::PushAndClose => {
                    let open = self.open.remove(idx);
                    self.close(open, emit);
                    return;
                }
                Step::CloseAndRetry => {
                    let open = self.open.remove(idx);
                    self.close(open, emit);
                }
            }
        }
        self.start(key, line, sh, body);
    }

    fn start(&mut self, origin: Option<Origin>, line: Line, sh: Shape, body: &[u8]) {
        let mut exception = None;
        let (kind, state) = match sh {
            Shape::Blank => return,
            Shape::TracebackStart | Shape::Frame => (EventKind::Traceback, State::Frames),
            Shape::IPythonStart => (EventKind::Traceback, State::IPython),
            // An exception logged below an error level (or none) ended the
            // program; one logged as information or a warning was handled.
            Shape::Exception if !matches!(line.prefix.level, Some(l) if l < Level::Error) => {
                exception = Some(0);
                (EventKind::Exception, State::Message)
            }
            Shape::Warning if warning_message_follows(body) => {
                (EventKind::Warning, State::WarningMessage)
            }
            Shape::Warning => (EventKind::Warning, State::Warning),
            Shape::Rule => (EventKind::Summary, State::SummaryHead),
            Shape::CxxRaised | Shape::CxxFrame => (EventKind::CxxException, State::Cxx),
            _ => (EventKind::Line, State::Pending),
        };
        let mut lines = self.pool.pop().unwrap_or_default();
        lines.push(line);
        self.open.push(Open {
            origin,
            kind,
            state,
            lines,
            count: 0,
            exception,
            last_seen: self.seen,
            indent: if sh == Shape::TracebackStart {
                shape::indent(body)
            } else {
                0
            },
        });
    }

    fn advance(&mut self, idx: usize, line: &Line, sh: Shape, body: &[u8]) -> Step {
        let new_record = line.prefix.starts_record();
        let o = &mut self.open[idx];
        let push = |o: &mut Open| {
            o.lines.push(*line);
            o.count += 1;
        };
        match o.state {
            State::Pending => match sh {
                Shape::CxxRaised | Shape::CxxWhat if !new_record => {
                    o.kind = EventKind::CxxException;
                    o.state = State::Cxx;
                    push(o);
                    Step::Keep
                }
                _ => Step::CloseAndRetry,
            },
            // A nested traceback's exception is the first line no deeper
            // than its header.
            State::Frames
                if o.indent > 0
                    && matches!(sh, Shape::Indented | Shape::Other | Shape::Exception)
                    && shape::indent(body) <= o.indent
                    && !new_record =>
            {
                o.state = State::Message;
                o.count = 0;
                o.exception = Some(o.lines.len());
                o.lines.push(*line);
                Step::Keep
            }
            State::Frames => match sh {
                Shape::Indented | Shape::Blank | Shape::Frame => {
                    push(o);
                    Step::Keep
                }
                Shape::TracebackStart | Shape::IPythonStart => Step::CloseAndRetry,
                _ if new_record => Step::CloseAndRetry,
                _ => {
                    o.state = State::Message;
                    o.count = 0;
                    o.exception = Some(o.lines.len());
                    o.lines.push(*line);
                    Step::Keep
                }
            },
            State::IPython => match sh {
                Shape::Exception if !new_record => {
                    o.state = State::Message;
                    o.count = 0;
                    o.exception = Some(o.lines.len());
                    o.lines.push(*line);
                    Step::Keep
                }
                Shape::TracebackStart | Shape::IPythonStart => Step::CloseAndRetry,
                _ if new_record || o.count >= MAX_IPYTHON_FRAMES => Step::CloseAndRetry,
                _ => {
                    push(o);
                    Step::Keep
                }
            },
            State::Message => match sh {
                // The worker's own traceback: its exception line becomes
                // the event's final exception.
                Shape::InnerTraceback => {
                    o.state = State::Frames;
                    push(o);
                    Step::Keep
                }
                Shape::ChainMarker => {
                    o.state = State::Chained;
                    push(o);
                    Step::Keep
                }
                Shape::Blank => {
                    o.state = State::AfterBlank {
                        kept: o.lines.len(),
                    };
                    push(o);
                    Step::Keep
                }
                Shape::Rule => {
                    o.state = State::Summary { rules: 1 };
                    o.count = 0;
                    push(o);
                    Step::Keep
                }
                Shape::TracebackStart | Shape::IPythonStart | Shape::Warning | Shape::Frame => {
                    Step::CloseAndRetry
                }
                // A second exception line ends an exception event (a
                // launcher printing one `str(exc)` after another).
                Shape::Exception if o.kind == EventKind::Exception => Step::CloseAndRetry,
                _ if new_record || o.count >= MAX_CONTINUATION => Step::CloseAndRetry,
                _ => {
                    push(o);
                    Step::Keep
                }
            },
            State::AfterBlank { kept } => match sh {
                Shape::ChainMarker => {
                    o.state = State::Chained;
                    push(o);
                    Step::Keep
                }
                Shape::Other
                    if !new_record && PARAGRAPH_OPENERS.iter().any(|p| body.starts_with(p)) =>
                {
                    o.state = State::Message;
                    push(o);
                    Step::Keep
                }
                Shape::Blank if o.lines.len() - kept < 3 => {
                    push(o);
                    Step::Keep
                }
                _ => {
                    o.lines.truncate(kept);
                    Step::CloseAndRetry
                }
            },
            State::Chained => match sh {
                Shape::Blank => {
                    push(o);
                    Step::Keep
                }
                Shape::TracebackStart => {
                    o.state = State::Frames;
                    push(o);
                    Step::Keep
                }
                _ => Step::CloseAndRetry,
            },
            State::SummaryHead => {
                if sh == Shape::Other && !new_record && body.trim_ascii_end().ends_with(b"FAILED") {
                    o.state = State::Summary { rules: 1 };
                    push(o);
                    Step::Keep
                } else {
                    o.kind = EventKind::Line;
                    Step::CloseAndRetry
                }
            }
            State::Summary { rules } => {
                if o.count >= MAX_SUMMARY {
                    return Step::CloseAndRetry;
                }
                push(o);
                if sh == Shape::Rule {
                    if rules >= 1 {
                        return Step::PushAndClose;
                    }
                    o.state = State::Summary { rules: rules + 1 };
                }
                Step::Keep
            }
            State::Warning => match sh {
                Shape::Indented if o.count < 3 && !new_record => {
                    push(o);
                    Step::Keep
                }
                _ => Step::CloseAndRetry,
            },
            State::WarningMessage => match sh {
                Shape::Other | Shape::Indented if !new_record && o.count < MAX_WARNING_MESSAGE => {
                    push(o);
                    Step::Keep
                }
                _ => Step::CloseAndRetry,
            },
            State::Cxx => match sh {
                Shape::CxxRaised | Shape::CxxFrame | Shape::CxxWhat if !new_record => {
                    push(o);
                    Step::Keep
                }
                Shape::Other | Shape::Indented
                    if !new_record && body.starts_with(b"terminate called") =>
                {
                    push(o);
                    Step::Keep
                }
                _ => Step::CloseAndRetry,
            },
        }
    }

    fn close(&mut self, mut open: Open, emit: &mut dyn FnMut(Framed<'_, '_>)) {
        if let State::AfterBlank { kept } = open.state {
            open.lines.truncate(kept);
        }
        // Trailing blank lines belong to no event.
        while open.lines.len() > 1
            && open
                .lines
                .last()
                .is_some_and(|l| l.end - l.start <= l.prefix.body)
        {
            open.lines.pop();
        }
        self.emitted += 1;
        self.emitted_from = self.emitted_from.min(open.lines[0].start);
        emit(Framed::Event(&Event {
            kind: open.kind,
            origin: open.origin,
            lines: &open.lines,
            exception: open.exception.filter(|&i| i < open.lines.len()),
        }));
        open.lines.clear();
        self.pool.push(open.lines);
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod examples;
