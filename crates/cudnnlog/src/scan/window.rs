//! A stream's window: a block of memory read into again and again, the
//! context kept from the window before first, and the steps every stream
//! driver takes with it.

use crate::context::LineCounter;
use crate::scan::count_lines;
use crate::scan::line_start_before;
use crate::scan::regions;
use crate::scan::state::State;
use crate::scan::Config;
use crate::scan::Found;
use crate::source::Fill;
use crate::Scanner;
use crate::Sink;
use crate::SourceInfo;
use std::ops::Range;

/// The room a window's first read is given; it doubles as the bytes come,
/// up to the block.
pub(super) const FIRST_ROOM: usize = 64 << 10;

/// How a window's regions are had, once its literal pass is done.
pub(super) enum Planned {
    /// Not planned (the last window, or a scan that stopped): the framing
    /// finds them.
    No,
    /// Found already, planning the window.
    Regions(Vec<regions::Region>),
    /// To be found over the owned part, with where a region split from the
    /// window before starts, in this one.
    Split(Option<usize>),
}

/// One window of a stream: its bytes (the kept context first), the lines
/// it owns, and what its literal pass found.
pub(super) struct Block {
    /// Room for the window, its bytes all initialised (read into again and
    /// again, not cleared first): the window is `buf[..len]`.
    pub buf: Vec<u8>,
    pub len: usize,
    /// Where the owned lines start in `buf` (set before reading) and end.
    pub owned: Range<usize>,
    /// The stream ended: at its end, or at `error`.
    pub eof: bool,
    /// A read that failed, ending the stream after the bytes before it.
    pub error: Option<std::io::Error>,
    pub found: Found,
    /// Where the owned part ends so that its last region is not cut, and
    /// whether that region was split ([`Scanner::carried_from`]).
    pub carry: Option<(usize, bool)>,
    /// The regions the owned part frames, once it ends there.
    pub planned: Planned,
    /// Where the window starts in the stream.
    pub base: u64,
    /// Where the next window starts in this one.
    pub keep: usize,
    /// Where a region split from one before starts, in the stream
    /// ([`State::split_at`]).
    pub split_at: Option<u64>,
}

impl Block {
    /// How far before its owned part a window keeps the one before: an
    /// event may start `back` bytes before the first owned candidate, and
    /// its context is looked up `lookback` bytes before that.
    fn keep_back(cfg: &Config) -> usize {
        cfg.back + cfg.back.max(cfg.lookback)
    }

    /// What later windows need of this one, once it is planned: the
    /// context before, and the unowned rest. A region that may go on past
    /// this window is the next one's (it holds the whole region, as a
    /// mapped scan frames it): the plan says where it starts, and
    /// `split_at` becomes where it was split, if it was. The context starts
    /// on a line, unless that line began more than the context's length
    /// before it: a line with no end (a decompression bomb of zeros) is
    /// cut, not kept whole, so memory stays bounded.
    pub(super) fn hand_on(&mut self, cfg: &Config, split_at: &mut Option<u64>) {
        if let Some((first, split)) = self.carry {
            self.owned.end = first;
            *split_at = split.then_some(self.base + first as u64);
        }
        self.split_at = *split_at;
        let keep_back = Block::keep_back(cfg);
        let context = self.owned.end.saturating_sub(keep_back);
        self.keep = line_start_before(self.hay(), context).max(context.saturating_sub(keep_back));
    }

    /// Where a region split at `split_at` in the stream starts in a window
    /// starting at `base`.
    pub(super) fn split_in(split_at: Option<u64>, base: u64) -> Option<usize> {
        split_at
            .and_then(|a| a.checked_sub(base))
            .map(|a| a as usize)
    }

    /// The window's literal pass and plan, once it is read (`split_at`:
    /// where a region split in the window before starts, in this one); or,
    /// once the sink has all it wants (`stopped`), nothing: later windows
    /// are read but not searched.
    pub(super) fn prepare(&mut self, scanner: &Scanner, stopped: bool, split_at: Option<usize>) {
        match stopped {
            true => {
                self.found.clear();
                (self.carry, self.planned) = (None, Planned::No);
            }
            false => {
                self.search(scanner);
                self.plan(scanner, split_at);
            }
        }
    }

    /// A window with no room yet: [`read`](Block::read) makes what the
    /// bytes read need.
    pub(super) fn first() -> Block {
        Block {
            buf: Vec::new(),
            len: 0,
            owned: 0..0,
            eof: false,
            error: None,
            found: Found::default(),
            carry: None,
            planned: Planned::No,
            base: 0,
            keep: 0,
            split_at: None,
        }
    }

    /// Frames the window with `finish`, unless the sink has all it wants.
    pub(super) fn frame<S: Sink>(
        &mut self,
        scanner: &Scanner,
        st: &mut State,
        sink: &mut S,
        finish: Finish<S>,
    ) -> Result<(), S::Error> {
        st.base = self.base;
        st.split_at = self.split_at;
        if st.stopped {
            return Ok(());
        }
        let owned = self.owned.clone();
        let regions = self.regions(scanner);
        finish(scanner, st, self.hay(), owned, &self.found, regions, sink)
    }

    /// Counts lines on to where the next window starts, once this one is
    /// framed.
    pub(super) fn pass_on(&self, st: &mut State) {
        let line = st.counter.line_at(self.hay(), self.keep);
        st.counter = LineCounter::new(line);
    }

    /// What was read of the stream, once its last window is framed; and
    /// the error of a read that failed part way (a truncated archive), which
    /// ends the stream: what came before it was scanned.
    pub(super) fn end(
        &mut self,
        st: &mut State,
        name: &str,
    ) -> (SourceInfo, Option<std::io::Error>) {
        let lines = count_lines(&mut st.counter, self.hay());
        let info = SourceInfo {
            path: name.to_string(),
            bytes: st.base + self.len as u64,
            lines,
            modified: None,
            rank: None,
        };
        (info, self.error.take())
    }

    /// The window's bytes.
    pub(super) fn hay(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Starts the window after `before` with the bytes it keeps.
    pub(super) fn keep_from(&mut self, before: &Block) {
        let kept = &before.hay()[before.keep..];
        if self.buf.len() < kept.len() {
            self.buf.resize(kept.len(), 0);
        }
        self.buf[..kept.len()].copy_from_slice(kept);
        self.len = kept.len();
        self.owned = before.owned.end - before.keep..0;
    }

    /// The window's literal pass.
    pub(super) fn search(&mut self, scanner: &Scanner) {
        scanner.search_window(&self.buf[..self.len], &self.owned, &mut self.found);
    }

    /// Plans a window whose literal pass is done: where its owned part
    /// ends, told by its last candidates (the next window is read once
    /// that is known), and how its regions are found. The whole window's
    /// regions are found here only when the last ones cannot tell; else
    /// the thread that frames the window finds them, while this one reads
    /// and searches on. The last window frames what it owns, so is not
    /// planned.
    pub(super) fn plan(&mut self, scanner: &Scanner, split_at: Option<usize>) {
        (self.carry, self.planned) = match self.eof {
            true => (None, Planned::No),
            false => {
                let (hay, hits) = (&self.buf[..self.len], &self.found.hits);
                match scanner.carried_by_tail(hay, hits, &self.owned, split_at) {
                    Some(carry) => (carry, Planned::Split(split_at)),
                    None => {
                        let (carry, regions) =
                            scanner.carried_from(hay, hits, &self.owned, split_at);
                        (carry, Planned::Regions(regions))
                    }
                }
            }
        };
    }

    /// The regions the window frames, once its owned part is final: found
    /// now when the plan did not need them.
    pub(super) fn regions(&mut self, scanner: &Scanner) -> Option<Vec<regions::Region>> {
        match std::mem::replace(&mut self.planned, Planned::No) {
            Planned::No => None,
            Planned::Regions(regions) => Some(regions),
            Planned::Split(split_at) => {
                let owned = &self.owned;
                let (hay, hits) = (&self.buf[..self.len], &self.found.hits);
                Some(scanner.regions(hay, hits, |h| owned.contains(&h), split_at))
            }
        }
    }

    /// Reads a block after the kept bytes and the context after it, and
    /// ends the owned part at the last line end before that context (a
    /// block with no line end, one giant line, is cut where it is). A read
    /// error ends the stream, keeping the bytes read before it.
    ///
    /// The room grows with what is read, doubling from [`FIRST_ROOM`] up
    /// to the block: a small file costs about its size, not a block (two
    /// 8 MiB blocks zeroed for each file made a tree of 50,000 fresh
    /// files take 30 s and 163 MiB).
    pub(super) fn read<F: Fill>(&mut self, reader: &mut F, cfg: &Config) {
        let from = self.owned.start;
        let want = from + cfg.block + cfg.forward;
        let mut error = None;
        while self.len < want {
            let room = want.min((2 * self.len).max(self.len + FIRST_ROOM));
            if self.buf.len() < room {
                self.buf.resize(room, 0);
            }
            let (n, e) = reader.fill(&mut self.buf[self.len..room]);
            self.len += n;
            if e.is_some() || self.len < room {
                error = e;
                break;
            }
        }
        self.eof = self.len < want;
        self.error = error;
        let to = if self.eof {
            self.len
        } else {
            let limit = self.len - cfg.forward;
            match memchr::memrchr(b'\n', &self.buf[from..limit]) {
                Some(p) => from + p + 1,
                None => limit,
            }
        };
        self.owned = from..to;
    }
}

/// How a stream's window is framed, once its literal pass is done: with
/// its regions when they are known already.
pub(super) type Finish<S> = fn(
    &Scanner,
    &mut State,
    &[u8],
    Range<usize>,
    &Found,
    Option<Vec<regions::Region>>,
    &mut S,
) -> Result<(), <S as Sink>::Error>;
