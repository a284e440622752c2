//! The last few distinct lines the framer read, with what it read of them:
//! a burst of one warning (or a few ranks' copies of it, each with its
//! source line) repeats a handful of lines a million times, and a line's
//! prefix and logical pieces depend on its bytes alone, so a repeated line
//! is compared, not parsed again.

use crate::prefix::Prefix;
use std::ops::Range;

/// Distinct lines remembered: a warning and its source line from each of
/// eight ranks.
const LINES: usize = 16;

/// Lines longer than this are parsed every time (a burst repeats short
/// lines; a long one is copied for nothing).
const LONGEST: usize = 2 << 10;

/// One remembered line.
#[derive(Default)]
struct Entry {
    bytes: Vec<u8>,
    prefix: Option<Prefix>,
    /// Its logical pieces, as offsets in the line.
    pieces: Vec<Range<usize>>,
}

/// The memo: the entries, replaced oldest first.
#[derive(Default)]
pub(super) struct LineMemo {
    entries: Vec<Entry>,
    next: usize,
}

impl LineMemo {
    /// The prefix of the line `hay[line]` (none when it holds terminal
    /// escapes) and its logical pieces, pushed onto `pieces`: remembered,
    /// or read and remembered.
    pub(super) fn read(
        &mut self,
        hay: &[u8],
        line: Range<usize>,
        pieces: &mut Vec<Range<usize>>,
    ) -> Option<Prefix> {
        let raw = &hay[line.clone()];
        if let Some(prefix) = self.get(raw, line.start, pieces) {
            return prefix;
        }
        let prefix = (!crate::ansi::has_escape(raw)).then(|| crate::prefix::parse_prefix(raw));
        super::split::split(hay, line.clone(), prefix.map_or(0, |p| p.body), pieces);
        self.put(raw, line.start, prefix, pieces);
        prefix
    }

    /// What was read of a line with the bytes `raw`, if it is remembered:
    /// its prefix, and its pieces (pushed onto `pieces`, shifted to `at`,
    /// where the line starts).
    pub(super) fn get(
        &self,
        raw: &[u8],
        at: usize,
        pieces: &mut Vec<Range<usize>>,
    ) -> Option<Option<Prefix>> {
        let e = self.entries.iter().find(|e| e.bytes == raw)?;
        pieces.extend(e.pieces.iter().map(|r| at + r.start..at + r.end));
        Some(e.prefix)
    }

    /// Remembers what was read of the line `raw` starting at `at`.
    pub(super) fn put(
        &mut self,
        raw: &[u8],
        at: usize,
        prefix: Option<Prefix>,
        pieces: &[Range<usize>],
    ) {
        if raw.len() > LONGEST {
            return;
        }
        if self.entries.len() < LINES {
            self.entries.push(Entry::default());
        }
        let e = &mut self.entries[self.next];
        self.next = (self.next + 1) % LINES;
        e.bytes.clear();
        e.bytes.extend_from_slice(raw);
        e.prefix = prefix;
        e.pieces.clear();
        e.pieces
            .extend(pieces.iter().map(|r| r.start - at..r.end - at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_line_gives_back_its_prefix_and_pieces_where_it_is_now() {
        let mut memo = LineMemo::default();
        let line = b"[rank1]:W1203 11:58:00 conv.py:456 UserWarning: Plan failed";
        let prefix = crate::prefix::parse_prefix(line);
        memo.put(line, 100, Some(prefix), &[100..120, 120..160]);
        let mut pieces = Vec::new();
        assert_eq!(memo.get(line, 5000, &mut pieces), Some(Some(prefix)));
        assert_eq!(pieces, [5000..5020, 5020..5060]);
        pieces.clear();
        assert_eq!(memo.get(b"[rank2]:W1203 other", 0, &mut pieces), None);
        assert!(pieces.is_empty());
        // The oldest is forgotten first; long lines are not remembered.
        for i in 0..LINES {
            memo.put(format!("line {i}").as_bytes(), 0, None, &[0..6, 6..6]);
        }
        assert_eq!(memo.get(line, 0, &mut pieces), None);
        assert_eq!(memo.get(b"line 3", 0, &mut pieces), Some(None));
        let long = vec![b'x'; LONGEST + 1];
        memo.put(&long, 0, None, &[0..1, 1..long.len()]);
        assert_eq!(memo.get(&long, 0, &mut pieces), None);
    }
}
