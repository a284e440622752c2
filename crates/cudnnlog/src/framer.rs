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
//! * otherwise a single line.
//!
//! Lines are grouped per writer: lines tagged `[rank0]:` never join an event
//! of `[rank1]:`, so interleaved ranks give separate events.

use crate::ansi;
use crate::prefix::{parse_prefix, Origin, Prefix};
use std::ops::Range;

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

/// Terminal widths at which consoles hard-wrap long lines.
const WRAP_WIDTHS: &[usize] = &[80, 100, 120, 132, 160, 200, 250];

/// Lines of other writers after which an open event is closed.
const MAX_INTERLEAVE: u64 = 64;

/// Lines a torchrun summary block may have.
const MAX_SUMMARY: u32 = 1000;

/// One physical line of a haystack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// Offset of the first byte of the line.
    pub start: usize,
    /// Offset just past the content (the terminator excluded).
    pub end: usize,
    /// The line's prefixes; `prefix.body` is relative to the line with ANSI
    /// sequences removed.
    pub prefix: Prefix,
    /// The line holds an escape byte, so its text must be stripped.
    pub has_escape: bool,
    /// The line is the rest of the previous one, cut by a console that
    /// wraps at a fixed width: the event's text joins them with no newline.
    pub wrapped: bool,
}

impl Line {
    /// Appends the message body of this line (prefixes and ANSI sequences
    /// removed) to `out`.
    pub fn body_into(&self, hay: &[u8], out: &mut Vec<u8>) {
        let raw = &hay[self.start..self.end];
        if self.has_escape {
            let at = out.len();
            ansi::strip_into(raw, out);
            out.drain(at..at + self.prefix.body.min(out.len() - at));
        } else {
            out.extend_from_slice(&raw[self.prefix.body..]);
        }
    }
}

/// The shape of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Line,
    Traceback,
    CxxException,
    Warning,
    Summary,
}

/// A logical message: one or more lines of one writer.
#[derive(Debug)]
pub struct Event<'a> {
    pub kind: EventKind,
    pub origin: Option<Origin>,
    pub lines: &'a [Line],
    /// For a traceback, the index in `lines` of its final exception line
    /// (the uncaught exception: the last one of a chain).
    pub exception: Option<usize>,
}

impl Event<'_> {
    /// Offset of the event's first byte.
    pub fn start(&self) -> usize {
        self.lines[0].start
    }

    /// Writes the event's text into `out`: line bodies joined by `\n`, invalid
    /// UTF-8 replaced. `line_at` receives each line's offset within `out`.
    pub fn text_into(
        &self,
        hay: &[u8],
        out: &mut String,
        line_at: &mut Vec<usize>,
        scratch: &mut Vec<u8>,
    ) {
        out.clear();
        line_at.clear();
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 && !line.wrapped {
                out.push('\n');
            }
            line_at.push(out.len());
            scratch.clear();
            line.body_into(hay, scratch);
            out.push_str(&String::from_utf8_lossy(scratch));
        }
    }
}

/// Iterates the physical lines of `hay[range]`.
pub fn lines(hay: &[u8], range: Range<usize>) -> impl Iterator<Item = (usize, usize)> + '_ {
    let end = range.end;
    let mut pos = range.start;
    std::iter::from_fn(move || {
        if pos >= end {
            return None;
        }
        let start = pos;
        match memchr::memchr2(b'\n', b'\r', &hay[pos..end]) {
            Some(off) => {
                let content_end = pos + off;
                pos = content_end + 1;
                if hay[content_end] == b'\r' && pos < end && hay[pos] == b'\n' {
                    pos += 1;
                }
                Some((start, content_end))
            }
            None => {
                pos = end;
                Some((start, end))
            }
        }
    })
}

/// What a line's body looks like, as far as grouping is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Blank,
    TracebackStart,
    /// `Original Traceback (most recent call last):` inside a DataLoader
    /// worker's re-raised exception message.
    InnerTraceback,
    ChainMarker,
    Indented,
    CxxRaised,
    CxxFrame,
    CxxWhat,
    Rule,
    Warning,
    Other,
}

fn shape(body: &[u8]) -> Shape {
    // PyTorch's DataLoader crash handler ends its message with a NUL byte,
    // which then leads the next line.
    let body = &body[body.iter().take_while(|&&c| c == 0).count()..];
    let trimmed = body.trim_ascii();
    if trimmed.is_empty() {
        return Shape::Blank;
    }
    if body.starts_with(b"Traceback (most recent call last)") {
        return Shape::TracebackStart;
    }
    if body.starts_with(b"Original Traceback (most recent call last)") {
        return Shape::InnerTraceback;
    }
    if body.starts_with(b"During handling of the above exception")
        || body.starts_with(b"The above exception was the direct cause")
    {
        return Shape::ChainMarker;
    }
    if body.starts_with(b"Exception raised from ") {
        return Shape::CxxRaised;
    }
    if body.starts_with(b"frame #") {
        return Shape::CxxFrame;
    }
    if trimmed.starts_with(b"what():") {
        return Shape::CxxWhat;
    }
    if trimmed.len() >= 20 && trimmed.iter().all(|&c| c == b'=') {
        return Shape::Rule;
    }
    if body[0] == b' ' || body[0] == b'\t' {
        return Shape::Indented;
    }
    if is_warning_line(body) {
        return Shape::Warning;
    }
    Shape::Other
}

/// `path.py:123: SomethingWarning: message`.
fn is_warning_line(body: &[u8]) -> bool {
    let Some(at) = memchr::memmem::find(body, b"Warning: ") else {
        return false;
    };
    let head = &body[..at];
    // The category name: letters back to ": ".
    let name_start = head
        .iter()
        .rposition(|c| !c.is_ascii_alphanumeric() && *c != b'_')
        .map_or(0, |p| p + 1);
    let before = &head[..name_start];
    let Some(before) = before.strip_suffix(b": ") else {
        return false;
    };
    let digits = before
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    digits > 0 && before[..before.len() - digits].ends_with(b":")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A single line, held until the next line of its writer shows whether
    /// a C++ exception block follows.
    Pending,
    Frames,
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
    Cxx,
}

struct Open {
    origin: Option<Origin>,
    kind: EventKind,
    state: State,
    lines: Vec<Line>,
    count: u32,
    exception: Option<usize>,
    /// The framer's line number of the event's last line.
    last_seen: u64,
}

/// Groups lines into events; reused across regions to keep its buffers.
#[derive(Default)]
pub struct Framer {
    open: Vec<Open>,
    pool: Vec<Vec<Line>>,
    last_origin: Option<Option<Origin>>,
    scratch: Vec<u8>,
    /// End and width of the previous physical line, to spot hard wraps.
    prev_end: Option<usize>,
    prev_width: usize,
    /// Lines pushed so far.
    seen: u64,
    /// The width the region being framed was hard-wrapped at, if it was.
    wrap_width: Option<usize>,
}

/// The width `hay[range]` was hard-wrapped at, if it looks wrapped: no line
/// is longer than a common terminal width and at least two lines are exactly
/// that wide. An unwrapped log has longer lines (tracebacks, allocator
/// messages), so a line that merely happens to be 80 bytes long is not
/// taken for a wrap.
fn wrap_width(hay: &[u8], range: Range<usize>) -> Option<usize> {
    let (mut widest, mut count) = (0usize, 0u32);
    for (s, e) in lines(hay, range) {
        let w = e - s;
        if w > widest {
            (widest, count) = (w, 1);
        } else if w == widest {
            count += 1;
        }
    }
    (WRAP_WIDTHS.contains(&widest) && count >= 2).then_some(widest)
}

enum Step {
    Keep,
    /// Close the event, then treat the line as a fresh one.
    CloseAndRetry,
    /// Add the line, then close the event.
    PushAndClose,
}

impl Framer {
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Frames `hay[range]` (which must start at a line start) and calls
    /// `emit` for every event, including those still open at the end.
    pub fn frame(&mut self, hay: &[u8], range: Range<usize>, emit: &mut dyn FnMut(&Event<'_>)) {
        self.wrap_width = wrap_width(hay, range.clone());
        for (start, end) in lines(hay, range) {
            let raw = &hay[start..end];
            let has_escape = ansi::has_escape(raw);
            let mut scratch = std::mem::take(&mut self.scratch);
            let text = if has_escape {
                scratch.clear();
                ansi::strip_into(raw, &mut scratch);
                &scratch[..]
            } else {
                raw
            };
            let prefix = parse_prefix(text);
            let body = &text[prefix.body..];
            let mut line = Line {
                start,
                end,
                prefix,
                has_escape,
                wrapped: false,
            };
            let sh = shape(body);
            if self.continues_wrap(&line, sh) {
                line.wrapped = true;
                let o = self
                    .open
                    .iter_mut()
                    .find(|o| o.lines.last().map(|l| l.end) == self.prev_end)
                    .expect("continues_wrap found the event");
                o.lines.push(line);
                self.prev_end = Some(end);
                self.prev_width = end - start;
                self.scratch = scratch;
                continue;
            }
            self.prev_end = Some(end);
            self.prev_width = end - start;
            self.push_line(line, sh, body, emit);
            self.scratch = scratch;
        }
        self.flush(emit);
    }

    /// Whether `line` is the rest of the previous physical line, cut by a
    /// console that wraps at a fixed width: the region was wrapped (see
    /// [`wrap_width`]), the previous line is exactly that wide, and this one
    /// has no prefix of its own and starts with no blank or block marker.
    fn continues_wrap(&self, line: &Line, sh: Shape) -> bool {
        if sh != Shape::Other
            || line.prefix.origin.is_some()
            || line.prefix.starts_record()
            || self.wrap_width != Some(self.prev_width)
        {
            return false;
        }
        let Some(prev_end) = self.prev_end else {
            return false;
        };
        self.open
            .iter()
            .any(|o| o.lines.last().map(|l| l.end) == Some(prev_end))
    }

    /// Closes every open event.
    pub fn flush(&mut self, emit: &mut dyn FnMut(&Event<'_>)) {
        while let Some(open) = self.open.pop() {
            self.close(open, emit);
        }
        self.last_origin = None;
        self.prev_end = None;
    }

    fn push_line(&mut self, line: Line, sh: Shape, body: &[u8], emit: &mut dyn FnMut(&Event<'_>)) {
        self.seen += 1;
        // An event that other writers' lines have buried is over: a line
        // of its writer far below is not its continuation.
        while let Some(i) = self
            .open
            .iter()
            .position(|o| self.seen - o.last_seen > MAX_INTERLEAVE)
        {
            let open = self.open.swap_remove(i);
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
                    let open = self.open.swap_remove(idx);
                    self.close(open, emit);
                    return;
                }
                Step::CloseAndRetry => {
                    let open = self.open.swap_remove(idx);
                    self.close(open, emit);
                }
            }
        }
        self.start(key, line, sh);
    }

    fn start(&mut self, origin: Option<Origin>, line: Line, sh: Shape) {
        let (kind, state) = match sh {
            Shape::Blank => return,
            Shape::TracebackStart => (EventKind::Traceback, State::Frames),
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
            exception: None,
            last_seen: self.seen,
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
            State::Frames => match sh {
                Shape::Indented | Shape::Blank => {
                    push(o);
                    Step::Keep
                }
                Shape::TracebackStart => Step::CloseAndRetry,
                _ if new_record => Step::CloseAndRetry,
                _ => {
                    o.state = State::Message;
                    o.count = 0;
                    o.exception = Some(o.lines.len());
                    o.lines.push(*line);
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
                Shape::TracebackStart | Shape::Warning => Step::CloseAndRetry,
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

    fn close(&mut self, mut open: Open, emit: &mut dyn FnMut(&Event<'_>)) {
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
        emit(&Event {
            kind: open.kind,
            origin: open.origin,
            lines: &open.lines,
            exception: open.exception.filter(|&i| i < open.lines.len()),
        });
        open.lines.clear();
        self.pool.push(open.lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames `log` and returns each event's kind, origin and line texts.
    fn frame(log: &str) -> Vec<(EventKind, Option<Origin>, Vec<String>)> {
        let hay = log.as_bytes();
        let mut out = Vec::new();
        let mut f = Framer::new();
        f.frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
            let lines: Vec<String> = ev
                .lines
                .iter()
                .map(|l| String::from_utf8_lossy(&hay[l.start..l.end]).into_owned())
                .collect();
            out.push((ev.start(), (ev.kind, ev.origin, lines)));
        });
        out.sort_by_key(|e| e.0);
        out.into_iter().map(|e| e.1).collect()
    }

    fn kinds(log: &str) -> Vec<(EventKind, usize)> {
        frame(log)
            .into_iter()
            .map(|(k, _, l)| (k, l.len()))
            .collect()
    }

    #[test]
    fn physical_lines_split_on_cr_and_crlf() {
        let hay = b"a\r\nb\rc\nd";
        let l: Vec<_> = lines(hay, 0..hay.len()).map(|(s, e)| &hay[s..e]).collect();
        assert_eq!(l, [&b"a"[..], b"b", b"c", b"d"]);
    }

    /// The final exception line of each traceback event.
    fn final_exceptions(log: &str) -> Vec<String> {
        let hay = log.as_bytes();
        let mut out = Vec::new();
        Framer::new().frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
            if let Some(i) = ev.exception {
                let l = ev.lines[i];
                out.push(String::from_utf8_lossy(&hay[l.start..l.end]).into_owned());
            }
        });
        out
    }

    #[test]
    fn the_final_exception_of_a_chain_or_a_worker_is_recorded() {
        let chained = "\
Traceback (most recent call last):
  File \"a.py\", line 1, in <module>
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"a.py\", line 3, in <module>
ValueError: bad preset
known presets: a, b
";
        assert_eq!(final_exceptions(chained), ["ValueError: bad preset"]);
        let worker = "\
Traceback (most recent call last):
  File \"train.py\", line 88, in <module>
    for batch in loader:
FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 3.
Original Traceback (most recent call last):
  File \"worker.py\", line 358, in _worker_loop
    data = fetcher.fetch(index)
FileNotFoundError: [Errno 2] No such file or directory: 'data/0001.jpg'
";
        assert_eq!(
            final_exceptions(worker),
            ["FileNotFoundError: [Errno 2] No such file or directory: 'data/0001.jpg'"]
        );
    }

    #[test]
    fn an_event_buried_by_other_writers_is_closed() {
        // An unprefixed traceback, 100 lines of rank-tagged step lines, then
        // an unprefixed line: not the traceback's continuation.
        let mut log = String::from("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: bad\n");
        for i in 0..100 {
            log.push_str(&format!(
                "[rank1]:2026-11-29 19:40:51,487 INFO train: step {i}\n"
            ));
        }
        log.push_str("Epoch 3:  45%|####      | 450/1000\n");
        let events = frame(&log);
        let tb = events.iter().find(|e| e.0 == EventKind::Traceback).unwrap();
        assert_eq!(tb.2.len(), 3, "{:?}", tb.2);
    }

    #[test]
    fn a_nul_before_a_traceback_does_not_hide_it() {
        let log = "ERROR: Unexpected segmentation fault encountered in worker.\n\0Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nRuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault.\n";
        assert_eq!(
            final_exceptions(log),
            ["RuntimeError: DataLoader worker (pid 4242) is killed by signal: Segmentation fault."]
        );
    }

    #[test]
    fn hard_wrapped_lines_are_joined_without_a_newline() {
        // Wrapped at 80: no line is longer, two are exactly 80.
        let first = format!("2026-11-29 19:41:04,724 ERROR train: {}", "a".repeat(43));
        let second = format!("{}b", "c".repeat(79));
        assert_eq!((first.len(), second.len()), (80, 80));
        let log =
            format!("{first}\n{second}\ntail of the message\n2026-11-29 19:41:05,000 INFO next\n");
        let hay = log.as_bytes();
        let mut texts = Vec::new();
        let (mut text, mut at, mut scratch) = (String::new(), Vec::new(), Vec::new());
        Framer::new().frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
            ev.text_into(hay, &mut text, &mut at, &mut scratch);
            texts.push(text.clone());
        });
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts
            .iter()
            .any(|t| *t == format!("train: {}{second}tail of the message", "a".repeat(43))));
    }

    #[test]
    fn traceback_through_exception_and_its_continuation() {
        let log = "\
2026-11-29 19:42:15,020 INFO train: step 6 loss 2.3553
Traceback (most recent call last):
  File \"/home/user/train/s06_device_assert.py\", line 15, in <module>
    log.info(\"step %d loss %.4f\", step, loss.item())
                                        ^^^^^^^^^^^
torch.AcceleratorError: CUDA error: device-side assert triggered
Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1

2026-11-29 19:42:16,000 INFO train: next
";
        assert_eq!(
            kinds(log),
            [
                (EventKind::Line, 1),
                (EventKind::Traceback, 7),
                (EventKind::Line, 1)
            ]
        );
    }

    #[test]
    fn chained_tracebacks_stay_together() {
        let log = "\
Traceback (most recent call last):
  File \"a.py\", line 1, in <module>
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"a.py\", line 3, in <module>
RuntimeError: CUDA error: an illegal memory access was encountered
next line of output
";
        let ev = frame(log);
        assert_eq!(ev[0].0, EventKind::Traceback);
        assert_eq!(ev[0].2.len(), 10, "{:?}", ev[0].2);
        assert!(ev[0].2[8].starts_with("RuntimeError"));
    }

    #[test]
    fn blank_line_without_chain_ends_the_traceback() {
        let log = "Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x\n\nEpoch 3 starting\n";
        assert_eq!(
            kinds(log),
            [(EventKind::Traceback, 3), (EventKind::Line, 1)]
        );
    }

    #[test]
    fn xla_message_paragraphs_stay_in_the_traceback() {
        let log = "\
Traceback (most recent call last):
  File \"/home/user/train/train_jax.py\", line 102, in <module>
jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to determine best cudnn convolution algorithm for:
%cudnn-conv = (f32[64,128,56,56]{3,2,1,0}, u8[0]{0}) custom-call(...)

Original error: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4294967296 bytes.

To ignore this failure and try to use a fallback algorithm, use XLA_FLAGS=--xla_gpu_strict_conv_algorithm_picker=false.

Epoch 2 starting
";
        assert_eq!(
            kinds(log),
            [(EventKind::Traceback, 8), (EventKind::Line, 1)]
        );
    }

    #[test]
    fn interleaved_ranks_give_separate_events() {
        let log = "\
[rank1]: Traceback (most recent call last):
[rank0]: Traceback (most recent call last):
[rank1]:   File \"/home/user/train/s09.py\", line 11, in <module>
[rank0]:   File \"/home/user/train/s09.py\", line 11, in <module>
[rank1]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, invalid usage
[rank0]: torch.distributed.DistBackendError: NCCL error in: NCCLUtils.cpp:93, invalid usage
[rank1]: Last error:
[rank0]: Last error:
";
        let ev = frame(log);
        assert_eq!(ev.len(), 2);
        for (kind, origin, lines) in &ev {
            assert_eq!(*kind, EventKind::Traceback);
            assert_eq!(lines.len(), 4);
            let tag = match origin {
                Some(Origin::Rank(r)) => format!("[rank{r}]"),
                other => panic!("{other:?}"),
            };
            assert!(lines.iter().all(|l| l.starts_with(&tag)), "{lines:?}");
        }
    }

    #[test]
    fn cxx_exception_block_joins_its_message_line() {
        let log = "\
[rank0]:[E1129 19:47:59.751215521 ProcessGroupNCCL.cpp:2119] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: timeout
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:692 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f6048d7305d in libc10.so)
frame #1: <unknown function> + 0x9cb84 (0x7f6049e9cb84 in /lib/x86_64-linux-gnu/libc.so.6)

terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception
Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:692 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f6048d7305d in libc10.so)
";
        let ev = frame(log);
        assert_eq!(ev.len(), 2, "{ev:?}");
        assert_eq!(
            (ev[0].0, ev[0].1, ev[0].2.len()),
            (EventKind::CxxException, Some(Origin::Rank(0)), 4)
        );
        assert_eq!((ev[1].0, ev[1].2.len()), (EventKind::CxxException, 4));
    }

    #[test]
    fn warning_with_its_source_line() {
        let log = "\
/usr/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)
  return F.conv2d(input, weight, bias, self.stride,
2026-11-29 19:41:01,366 INFO train: epoch 0 step 0
<frozen runpy>:128: RuntimeWarning: 'torch.utils.collect_env' found in sys.modules
";
        assert_eq!(
            kinds(log),
            [
                (EventKind::Warning, 2),
                (EventKind::Line, 1),
                (EventKind::Warning, 1)
            ]
        );
    }

    #[test]
    fn torchrun_summary_block_is_one_event() {
        let log = "\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
s09_nccl_duplicate.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_19:42:51
  rank      : 1 (local_rank: 1)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  exitcode  : 1 (pid: 833)
============================================================
after
";
        let ev = frame(log);
        assert_eq!(ev[1].0, EventKind::Summary);
        assert_eq!(ev[1].2.len(), 12);
        assert_eq!(ev[2].2, ["after"]);
        // Inside a traceback, the block continues the exception message.
        let tb = format!("Traceback (most recent call last):\n  File \"x\", line 1\n{log}");
        let ev = frame(&tb);
        assert_eq!((ev[0].0, ev[0].2.len()), (EventKind::Traceback, 15));
    }

    #[test]
    fn progress_bar_redraws_are_lines() {
        let log = "Epoch 0:  10%|#   | 1/10\rEpoch 0:  20%|##  | 2/10\rEpoch 0: 100%|####| 10/10\n";
        assert_eq!(kinds(log).len(), 3);
    }

    #[test]
    fn ansi_codes_do_not_hide_structure() {
        let log = "\x1b[31mTraceback (most recent call last):\x1b[0m\n  File \"a.py\", line 1\n\x1b[1mValueError\x1b[0m: x\n";
        let hay = log.as_bytes();
        let mut f = Framer::new();
        let mut texts = Vec::new();
        f.frame(hay, 0..hay.len(), &mut |ev: &Event<'_>| {
            let (mut t, mut at, mut s) = (String::new(), Vec::new(), Vec::new());
            ev.text_into(hay, &mut t, &mut at, &mut s);
            texts.push(t);
        });
        assert_eq!(
            texts,
            ["Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x"]
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let alphabet: &[&[u8]] = &[
            b"\n",
            b"\r",
            b" ",
            b"Traceback (most recent call last):",
            b"[rank1]:",
            b"=========================",
            b"frame #0: x",
            b"Exception raised from x",
            b"\x1b[",
            b"\xff\xfe",
            b"\0",
            b"x.py:1: UserWarning: y",
            b"FAILED",
            b"  what():",
        ];
        for _ in 0..2000 {
            let mut hay = Vec::new();
            for _ in 0..(seed % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                hay.extend_from_slice(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let mut f = Framer::new();
            let mut covered = 0;
            f.frame(&hay, 0..hay.len(), &mut |ev: &Event<'_>| {
                assert!(!ev.lines.is_empty());
                assert!(ev.lines.windows(2).all(|w| w[0].start < w[1].start));
                covered += ev.lines.len();
            });
            assert!(covered <= hay.len() + 1);
        }
    }
}
