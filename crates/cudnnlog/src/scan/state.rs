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
            stopped: false,
            split_at: None,
        }
    }
}
