//! The state a scan keeps per source, and the buffers it reuses.

use super::literal::Found;
use crate::context::LineCounter;

/// Per-source scanning state and reusable buffers.
pub(super) struct State {
    pub base: u64,
    pub counter: LineCounter,
    /// The literal pass's findings, reused across windows.
    pub found: Found,
    pub text: String,
    pub line_at: Vec<usize>,
    pub scratch: Vec<u8>,
    pub candidates: Vec<u32>,
    pub memo: crate::scan::confirm::Memo,
    /// Hashes of line texts already probed.
    pub probed: std::collections::HashSet<u64>,
    /// The last raw lines whose texts are in `probed`.
    pub probed_lines: RecentLines,
    pub stopped: bool,
    /// In a stream: the offset of the candidate line where a region split
    /// from one in an earlier window starts.
    pub split_at: Option<u64>,
}

impl State {
    /// [`split_at`](State::split_at) as an offset in the window.
    pub fn split_at_in_window(&self) -> Option<usize> {
        self.split_at
            .and_then(|a| a.checked_sub(self.base))
            .map(|a| a as usize)
    }

    pub fn new() -> State {
        State {
            base: 0,
            counter: LineCounter::new(1),
            found: Found::default(),
            text: String::new(),
            line_at: Vec::new(),
            scratch: Vec::new(),
            candidates: Vec::new(),
            memo: crate::scan::confirm::Memo::default(),
            probed: std::collections::HashSet::new(),
            probed_lines: Default::default(),
            stopped: false,
            split_at: None,
        }
    }
}

/// The last few raw lines whose texts were probed: a line equal to one of
/// them is skipped before it is read (its prefix parsed, its text built
/// and hashed), which cost about 2 µs a line. Whenever a line is here, its
/// text's hash is in [`State::probed`]: both are cleared together.
#[derive(Default)]
pub(super) struct RecentLines {
    lines: Vec<Vec<u8>>,
    next: usize,
}

impl RecentLines {
    /// Lines remembered: a warning from each of 16 ranks.
    const LINES: usize = 16;
    /// Longer lines are read every time.
    const LONGEST: usize = 1 << 10;

    pub fn contains(&self, raw: &[u8]) -> bool {
        self.lines.iter().any(|l| l.as_slice() == raw)
    }

    pub fn insert(&mut self, raw: &[u8]) {
        if raw.len() > Self::LONGEST {
            return;
        }
        if self.lines.len() < Self::LINES {
            self.lines.push(Vec::new());
        }
        let line = &mut self.lines[self.next];
        self.next = (self.next + 1) % Self::LINES;
        line.clear();
        line.extend_from_slice(raw);
    }

    pub fn clear(&mut self) {
        self.lines.clear();
        self.next = 0;
    }
}
