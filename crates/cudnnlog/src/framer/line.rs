//! Lines: the physical lines of a haystack, and the logical lines the
//! framer groups into events.

use super::Join;
use crate::ansi;
use crate::prefix::Prefix;
use std::ops::Range;

/// One logical line of a haystack: a physical line, or a piece of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line {
    /// Offset of the first byte of the line.
    pub start: usize,
    /// Offset just past the content (the terminator and trailing markup
    /// of pasted text excluded).
    pub end: usize,
    /// Offset of the physical line this line is (part of).
    pub phys: usize,
    /// The line's prefixes; `prefix.body` is relative to the line with ANSI
    /// sequences removed.
    pub prefix: Prefix,
    /// The line holds an escape byte, so its text must be stripped.
    pub has_escape: bool,
    /// How the line joins the previous line of its event.
    pub join: Join,
}

impl Line {
    /// The same line `by` bytes further on: its copy in a repeated run.
    pub(crate) fn moved(&self, by: usize) -> Line {
        Line {
            start: self.start + by,
            end: self.end + by,
            phys: self.phys + by,
            ..*self
        }
    }

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
