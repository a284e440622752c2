//! Logical lines inside one physical line.
//!
//! Logs do not always keep one message per physical line:
//!
//! * launchers that log JSON (or Rust's `Debug` of an error) write a whole
//!   stderr capture as one string, with its newlines escaped as `\n`;
//! * two writers share a terminal line: a progress bar redrawn with `\r` and
//!   no final newline, then a warning or a traceback (`… 0/30
//!   [00:00<?, ?it/s]/path/conv.py:456: UserWarning: …`), or a tag glued to
//!   the message (`[stderr]RuntimeError: …`);
//! * a traceback pasted with its newlines lost (`Traceback (most recent call
//!   last):   File "a.py", line 1, in <module>     import x
//!   ModuleNotFoundError: …`).
//!
//! [`split`] cuts such a line into the logical lines it holds. Each piece is
//! a byte range of the physical line; pieces are framed as lines of their
//! own, with the physical line's number.

use super::shape::{exception_name_len, is_warning_line};
use std::ops::Range;

use super::TRACEBACK_HEADER as TRACEBACK;

/// Pushes the logical lines of the physical line `hay[line]` onto `out`, in
/// order. Most lines are one piece.
/// Cuts are never made inside the line's prefix (`body` is where its body
/// starts, in `hay[line]`).
pub(super) fn split(hay: &[u8], line: Range<usize>, body: usize, out: &mut Vec<Range<usize>>) {
    let text = &hay[line.clone()];
    if !maybe_split(&text[body.min(text.len())..]) {
        out.push(line);
        return;
    }
    let mut pieces = Vec::new();
    let mut escaped = Vec::new();
    split_escaped(text, &mut escaped);
    for piece in escaped {
        split_glued(text, piece, &mut pieces);
    }
    // The prefix stays with the first piece.
    while pieces.len() > 1 && pieces[0].end <= body {
        let first = pieces.remove(0);
        pieces[0].start = first.start;
    }
    out.extend(
        pieces
            .into_iter()
            .map(|r| line.start + r.start..line.start + r.end),
    );
}

/// A cheap test that rules out most lines.
fn maybe_split(text: &[u8]) -> bool {
    memchr::memchr(b'\\', text).is_some()
        || memfind!(text, TRACEBACK).is_some_and(|p| p > 0)
        || memfind!(text, b"Warning: ").is_some()
        || memfind!(text, b"it/s]").is_some()
        || memfind!(text, b"s/it]").is_some()
        || memfind!(text, b"Error: ").is_some()
        || memfind!(text, b"Exception: ").is_some()
}

/// Where `text` holds an escaped newline (`\n`, not `\\n`): its offset.
fn escapes(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memfind_iter!(text, b"\\n").filter(move |&p| p == 0 || text[p - 1] != b'\\')
}

/// Cuts at escaped newlines when the line is plainly an escaped text: at
/// least two of them begin something that looks like a line (a capital
/// letter, a bracket, a blank, another newline, the end of the string).
/// Windows paths (`C:\Users\nora\new`) have `\n` before lower-case names.
fn split_escaped(text: &[u8], out: &mut Vec<Range<usize>>) {
    let strong = escapes(text)
        .filter(|&p| {
            text.get(p + 2).is_none_or(|&c| {
                c.is_ascii_uppercase()
                    || matches!(
                        c,
                        b'[' | b' ' | b'\t' | b'\\' | b'"' | b'(' | b'<' | b'=' | b'*'
                    )
            })
        })
        .take(2)
        .count();
    if strong < 2 {
        out.push(0..text.len());
        return;
    }
    let mut from = 0;
    for p in escapes(text) {
        // `\r\n` escapes end the line before the `\r`.
        let end = if p >= 2 && &text[p - 2..p] == b"\\r" {
            p - 2
        } else {
            p
        };
        if end >= from {
            out.push(from..end);
        }
        from = p + 2;
    }
    out.push(from..text.len());
}

/// Cuts `text[piece]` where a second writer's text begins: a traceback or a
/// Python warning after other text, text after a progress bar's closing
/// bracket, an exception glued to a tag, and the frames and final exception
/// of a traceback whose newlines were lost.
fn split_glued(text: &[u8], piece: Range<usize>, out: &mut Vec<Range<usize>>) {
    let s = &text[piece.clone()];
    let mut cuts: Vec<usize> = Vec::new();
    // A traceback header after other text (not IPython's `Type   Traceback`).
    if let Some(p) = memfind!(s, TRACEBACK) {
        let head = &s[..p];
        let name = head.trim_ascii_end();
        let ipython = head.len() - name.len() >= 2 && exception_name_len(name) == Some(name.len());
        // A DataLoader worker's `Original Traceback` is one line.
        if p > 0 && !ipython && !head.trim_ascii().is_empty() && !name.ends_with(b"Original") {
            cuts.push(p);
        }
        collapsed_traceback(s, p, &mut cuts);
    }
    // A warning location after other text: `…]/path/x.py:12: UserWarning: `.
    for w in memfind_iter!(s, b"Warning: ") {
        if let Some(p) = warning_start(s, w) {
            if p > 0 && !s[..p].trim_ascii().is_empty() {
                cuts.push(p);
            }
        }
    }
    // Text right after a progress bar: `… 3.2it/s]RuntimeError: …`.
    let bars = memfind_iter!(s, b"it/s]").chain(memfind_iter!(s, b"s/it]"));
    for p in bars {
        let after = p + b"it/s]".len();
        if s.get(after).is_some_and(|c| !c.is_ascii_whitespace()) {
            cuts.push(after);
        }
    }
    // An exception glued to a tag: `[stderr]RuntimeError: …`.
    for (i, &c) in s.iter().enumerate() {
        if (c == b']' || c == b'>') && i + 1 < s.len() && is_exception_at(s, i + 1) {
            cuts.push(i + 1);
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut from = 0;
    for c in cuts {
        if c > from {
            out.push(piece.start + from..piece.start + c);
            from = c;
        }
    }
    out.push(piece.start + from..piece.end);
}

/// An exception name followed by `: ` at `s[at..]`.
fn is_exception_at(s: &[u8], at: usize) -> bool {
    exception_name_len(&s[at..]).is_some_and(|n| s[at + n..].starts_with(b": "))
}

/// Where the `path.py:12: NameWarning: ` location whose `Warning: ` is at
/// `w` begins: the path runs back to a blank or a closing bracket or quote.
fn warning_start(s: &[u8], w: usize) -> Option<usize> {
    let name_start = s[..w]
        .iter()
        .rposition(|c| !c.is_ascii_alphanumeric() && *c != b'_')
        .map_or(0, |p| p + 1);
    let before = s[..name_start].strip_suffix(b": ")?;
    let digits = before
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let path_end = before.len().checked_sub(digits + 1)?;
    if digits == 0 || before[path_end] != b':' {
        return None;
    }
    let start = s[..path_end]
        .iter()
        .rposition(|c| c.is_ascii_whitespace() || matches!(c, b']' | b'"' | b'\'' | b'|' | b'>'))
        .map_or(0, |p| p + 1);
    (start < path_end && is_warning_line(&s[start..])).then_some(start)
}

/// A traceback whose newlines were lost: after the header at `header`, cut
/// before each `  File "…"` frame, before the code line that follows a
/// frame's `, in name`, and before the final exception.
fn collapsed_traceback(s: &[u8], header: usize, cuts: &mut Vec<usize>) {
    let body = header + TRACEBACK.len();
    let frames: Vec<usize> = memfind_iter!(&s[body..], b"File \"")
        .map(|p| body + p)
        .filter(|&p| s[..p].ends_with(b"  "))
        .collect();
    if frames.is_empty() {
        return;
    }
    for (i, &f) in frames.iter().enumerate() {
        // The frame starts at the blanks before `File`.
        let blanks = s[..f].iter().rev().take_while(|&&c| c == b' ').count();
        cuts.push(f - blanks);
        let end = frames.get(i + 1).map_or(s.len(), |&n| n);
        // `File "x.py", line 3, in name   code…`
        let Some(in_at) = memfind!(&s[f..end], b", in ").map(|p| f + p + 5) else {
            continue;
        };
        let name_end = s[in_at..end]
            .iter()
            .position(|&c| c == b' ')
            .map_or(end, |p| in_at + p);
        if s[name_end..end].starts_with(b"  ") {
            cuts.push(name_end);
        }
        if i + 1 == frames.len() {
            // The final exception: the first exception name after a blank
            // in the last frame's code.
            let code = name_end;
            if let Some(p) =
                (code + 1..end).find(|&p| s[p - 1] == b' ' && s[p] != b' ' && is_exception_at(s, p))
            {
                cuts.push(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(line: &str) -> Vec<&str> {
        let hay = line.as_bytes();
        let mut out = Vec::new();
        let body = crate::prefix::parse_prefix(hay).body;
        split(hay, 0..hay.len(), body, &mut out);
        out.into_iter().map(|r| &line[r]).collect()
    }

    #[test]
    fn ordinary_lines_are_one_piece() {
        for l in [
            "RuntimeError: CUDA error: out of memory",
            "C:\\Users\\nora\\new\\train.py",
            "Epoch 1: 100%|##########| 10/10 [00:01<00:00,  9.12it/s]",
            "Traceback (most recent call last):",
            "ValueError                                Traceback (most recent call last)",
            "/x/conv.py:456: UserWarning: Plan failed",
        ] {
            assert_eq!(pieces(l), [l], "{l}");
        }
    }

    #[test]
    fn escaped_newlines() {
        let l = r#"{"message":"Shard failed:\n\nTraceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x\n"}"#;
        assert_eq!(
            pieces(l),
            [
                r#"{"message":"Shard failed:"#,
                "",
                "Traceback (most recent call last):",
                r#"  File \"a.py\", line 1"#,
                "ValueError: x",
                r#""}"#
            ]
        );
    }

    #[test]
    fn glued_writers() {
        assert_eq!(
            pieces("  0%|    | 0/30 [00:00<?, ?it/s]/home/u/conv.py:456: UserWarning: Plan failed"),
            [
                "  0%|    | 0/30 [00:00<?, ?it/s]",
                "/home/u/conv.py:456: UserWarning: Plan failed"
            ]
        );
        assert_eq!(
            pieces("[stderr]RuntimeError: CUDA error: unknown error"),
            ["[stderr]", "RuntimeError: CUDA error: unknown error"]
        );
        // Never inside the prefix.
        assert_eq!(
            pieces("[rank1]: Traceback (most recent call last):"),
            ["[rank1]: Traceback (most recent call last):"]
        );
        assert_eq!(
            pieces("FileNotFoundError: Caught it.\nOriginal Traceback (most recent call last):"),
            ["FileNotFoundError: Caught it.\nOriginal Traceback (most recent call last):"]
        );
        assert_eq!(
            pieces("loading... done.Traceback (most recent call last):"),
            ["loading... done.", "Traceback (most recent call last):"]
        );
    }

    #[test]
    fn collapsed_traceback() {
        let l = "Traceback (most recent call last):   File \"e:\\t.py\", line 17, in <module>     from lit import GPT   File \"E:\\m.py\", line 13, in <module>     from flash_attn import f ModuleNotFoundError: No module named 'flash_attn'";
        assert_eq!(
            pieces(l),
            [
                "Traceback (most recent call last):",
                "   File \"e:\\t.py\", line 17, in <module>",
                "     from lit import GPT",
                "   File \"E:\\m.py\", line 13, in <module>",
                "     from flash_attn import f ",
                "ModuleNotFoundError: No module named 'flash_attn'",
            ]
        );
    }
}
