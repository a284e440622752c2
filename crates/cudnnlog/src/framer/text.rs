//! An event's text: what patterns are matched against.

use super::{Event, Join, Line};
use crate::ansi;

/// The most bytes of one line an event's text holds (64 KiB): the head and
/// the tail of a longer line are kept.
pub const MAX_LINE_TEXT: usize = 64 << 10;

impl Event<'_> {
    /// Writes the event's text into `out`: line bodies joined by `\n`, invalid
    /// UTF-8 replaced. `line_at` receives each line's offset within `out`.
    /// A line longer than [`MAX_LINE_TEXT`] keeps its head and its tail
    /// (where a status often is) around ` … `; the result is true when a
    /// line was cut so.
    pub fn text_into(
        &self,
        hay: &[u8],
        out: &mut String,
        line_at: &mut Vec<usize>,
        scratch: &mut Vec<u8>,
    ) -> bool {
        out.clear();
        line_at.clear();
        let mut cut = false;
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                match line.join {
                    Join::Newline => out.push('\n'),
                    Join::Space => out.push(' '),
                    Join::Direct => {}
                }
            }
            line_at.push(out.len());
            scratch.clear();
            if line.end - line.start > MAX_LINE_TEXT {
                // Strip and cut only the ends: a line of hundreds of MiB is
                // never copied whole.
                let half = MAX_LINE_TEXT / 2;
                let head = Line {
                    end: (line.start + half + line.prefix.body).min(line.end),
                    ..*line
                };
                head.body_into(hay, scratch);
                push_lossy(out, scratch);
                out.push_str(" … ");
                scratch.clear();
                let tail = &hay[line.end - half..line.end];
                match line.has_escape {
                    true => ansi::strip_into(tail, scratch),
                    false => scratch.extend_from_slice(tail),
                }
                cut = true;
            } else {
                line.body_into(hay, scratch);
            }
            push_lossy(out, scratch);
        }
        cut
    }
}

/// Appends `bytes` to `out`, invalid UTF-8 replaced: checked by the
/// standard library's fast validation first, as nearly every log line is
/// valid (`from_utf8_lossy` walks it more slowly).
fn push_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn invalid_bytes_are_replaced_as_from_utf8_lossy_does() {
        for bytes in [
            &b"CUDA error: out of memory"[..],
            b"\xff\xfe bad \xe2\x82",
            "héllo ✓".as_bytes(),
            b"",
        ] {
            let mut out = String::from("> ");
            super::push_lossy(&mut out, bytes);
            assert_eq!(out, format!("> {}", String::from_utf8_lossy(bytes)));
        }
    }
}
