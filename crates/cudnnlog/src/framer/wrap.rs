//! Text that was split: lines that continue the line before them.
//!
//! One message can reach the framer as several physical lines:
//!
//! * **hard wraps** — a console (or `fold`, or a paste) cut every long line
//!   at a fixed width; the width is inferred from the region
//!   ([`wrap_width`]): several lines end at exactly that width and are
//!   followed by lines with no prefix of their own;
//! * **soft wraps** — a line ends in a blank and the next one continues the
//!   sentence (`… but you set ` / `'torch.use_deterministic_algorithms(True)'`);
//! * **indented continuations** — a message reflowed by hand under its
//!   prefix (`ERROR: This container was built for … but` /
//!   `       version 418.87.01 was detected …`);
//! * **tag continuations** — kernel messages continued on lines that repeat
//!   their tag (`NVRM: API mismatch: the client has the version …, but` /
//!   `NVRM: this kernel module has the version …`).
//!
//! [`Join`] says how a continuation joins the line before it in an event's
//! text.

use super::Run;
use crate::prefix::{parse_prefix, Prefix};
use std::collections::HashMap;
use std::ops::Range;

/// How a line joins the previous line of its event in the event's text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Join {
    /// A line of its own: joined with `\n`.
    #[default]
    Newline,
    /// The rest of a line cut at a width or after a blank: joined directly.
    Direct,
    /// A reflowed continuation: joined with a blank, its indentation or
    /// repeated tag left out.
    Space,
}

/// Terminal widths at which consoles commonly wrap: at these, two wrapped
/// lines are evidence enough; at any other width it takes three.
const COMMON_WIDTHS: &[usize] = &[80, 100, 120, 132, 160, 200, 250];

/// The narrowest width taken for a wrap.
const MIN_WIDTH: usize = 60;

/// Tags that kernel messages repeat on each line of a long message.
pub(super) const CONTINUED_TAGS: &[&[u8]] = &[b"NVRM: "];

/// A line's display width: characters, not bytes.
pub(super) fn width(line: &[u8]) -> usize {
    line.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// The width `hay[range]` was hard-wrapped at, if it looks wrapped: the
/// width at which most lines end that are followed by a line with no
/// prefix of its own, seen at least twice (three times at an unusual
/// width) with different texts, and rarely exceeded. A log that merely has
/// two equally long lines, or one line of a common width, is not wrapped.
///
/// Where bytes repeat (`runs`, sorted, apart), each copy after the second
/// counts what the second did: it follows the same line, so it is read
/// the same.
pub(super) fn wrap_width(hay: &[u8], range: Range<usize>, runs: &[Run]) -> Option<usize> {
    /// Lines ending at each width followed by a continuation (with the
    /// first one's hash, and whether another differed), and how many
    /// widths had been read.
    type Counts = (HashMap<usize, (u32, u64, bool)>, usize);
    let mut at_width: HashMap<usize, (u32, u64, bool)> = HashMap::new();
    let mut prev: Option<(usize, u64)> = None;
    // Each line's width, and widths counted more than once (a run's
    // copies), with how many more times.
    let mut widths: Vec<usize> = Vec::new();
    let mut more: Vec<(usize, u32)> = Vec::new();
    // Widths at which two consecutive lines line up as table rows
    // (`sacct`, `nvidia-smi`): a table is not a wrap.
    let mut tables: Vec<usize> = Vec::new();
    let mut last_line: &[u8] = &[];
    let (mut from, mut ri) = (range.start, 0);
    // The counts when the second copy of the run `ri` began.
    let mut second: Option<Counts> = None;
    'copies: loop {
        for (s, e) in super::lines(hay, from..range.end) {
            while runs.get(ri).is_some_and(|r| s >= r.end()) {
                (ri, second) = (ri + 1, None);
            }
            if let Some(r) = runs.get(ri).filter(|r| s >= r.start && s > range.start) {
                let whole = ((range.end - r.start) / r.period).min(r.copies);
                if s == r.start + r.period && whole > 3 {
                    second = Some((at_width.clone(), widths.len()));
                }
                let third = s == r.start + 2 * r.period;
                if let Some((w0, c0)) = second.take_if(|_| third) {
                    // Copies 2..whole count what copy 1 did.
                    let times = (whole - 2) as u32;
                    for (w, entry) in at_width.iter_mut() {
                        entry.0 += (entry.0 - w0.get(w).map_or(0, |e| e.0)) * times;
                    }
                    more.extend(widths[c0..].iter().map(|&w| (w, times)));
                    from = r.start + whole * r.period;
                    ri += 1;
                    continue 'copies;
                }
            }
            let line = &hay[s..e];
            let w = width(line);
            if w >= MIN_WIDTH && w == width(last_line) && table_rows(last_line, line) {
                tables.push(w);
            }
            last_line = line;
            widths.push(w);
            if let Some((pw, ph)) = prev.take() {
                let p = parse_prefix(line);
                if !line.trim_ascii().is_empty() && p.origin.is_none() && !p.starts_record() {
                    let entry = at_width.entry(pw).or_insert((0, ph, false));
                    entry.0 += 1;
                    entry.2 |= entry.1 != ph;
                }
            }
            if w >= MIN_WIDTH {
                prev = Some((w, fnv(line)));
            }
        }
        break;
    }
    let (&w, &(count, _, distinct)) = at_width
        .iter()
        .filter(|(w, _)| !tables.contains(w))
        .max_by_key(|(w, (count, _, _))| (*count, **w))?;
    let wider = widths.iter().filter(|&&x| x > w).count() as u32
        + more.iter().filter(|m| m.0 > w).map(|m| m.1).sum::<u32>();
    let enough = if COMMON_WIDTHS.contains(&w) { 2 } else { 3 };
    (count >= enough && distinct && wider <= count / 4).then_some(w)
}

/// Whether two lines of one width are rows of a table: both split into
/// columns by runs of blanks (or `|`), as `sacct`, `nvidia-smi` and
/// `squeue` print them; wrapped prose has single blanks between words.
fn table_rows(a: &[u8], b: &[u8]) -> bool {
    let columns = |l: &[u8]| {
        let gaps = l
            .trim_ascii()
            .windows(3)
            .filter(|w| w[0] != b' ' && w[1] == b' ' && w[2] == b' ')
            .count();
        let bars = l.iter().filter(|&&c| c == b'|').count();
        gaps >= 3
            || bars >= 3
            || l.trim_ascii()
                .iter()
                .all(|&c| c == b'-' || c == b' ' || c == b'=' || c == b'+')
    };
    columns(a) && columns(b)
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

/// What the framer remembers of the previous physical line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Prev {
    /// Offset just past its content.
    pub end: usize,
    /// Its display width.
    pub width: usize,
    /// It ends in a blank after some text.
    pub trailing_blank: bool,
    /// Where its body starts, when a timestamp or level prefix precedes it.
    pub prefixed_body: Option<usize>,
    /// The continued tag its body starts with, if any.
    pub tag: Option<&'static [u8]>,
    /// Its body ends a sentence (`.`).
    pub ends_sentence: bool,
}

impl Prev {
    pub fn of(raw: &[u8], end: usize, prefix: &Prefix, body: &[u8]) -> Prev {
        let trimmed = raw.trim_ascii_end();
        Prev {
            end,
            width: width(raw),
            trailing_blank: trimmed.len() < raw.len() && !body.trim_ascii().is_empty(),
            prefixed_body: prefix.starts_record().then_some(prefix.body),
            tag: CONTINUED_TAGS.iter().copied().find(|t| body.starts_with(t)),
            ends_sentence: body.trim_ascii_end().ends_with(b"."),
        }
    }
}

/// How `line` (whose prefix is `prefix` and body `body`, a whole physical
/// line of shape "other" or "indented") continues `prev`, if it does; and
/// where its text starts then, when that is not its body.
pub(super) fn continuation(
    prev: &Prev,
    wrap: Option<usize>,
    raw: &[u8],
    prefix: &Prefix,
    body: &[u8],
    plain: bool,
) -> Option<(Join, Option<usize>)> {
    let bare = prefix.origin.is_none() && !prefix.starts_record();
    // A repeated kernel tag continues an unfinished sentence in lower case
    // (`NVRM: this kernel module has the version …`); `NVRM: Xid …` is a
    // message of its own.
    if let Some(tag) = prev.tag {
        let next = body.get(tag.len()).copied().unwrap_or(b' ');
        if !prev.ends_sentence
            && body.starts_with(tag)
            && next.is_ascii_lowercase()
            && prefix.origin.is_none()
        {
            return Some((Join::Space, Some(prefix.body + tag.len())));
        }
    }
    if !bare {
        return None;
    }
    if plain && wrap == Some(prev.width) {
        return Some((Join::Direct, None));
    }
    let first = body.first().copied().unwrap_or(b' ');
    if plain
        && prev.trailing_blank
        && (first.is_ascii_lowercase()
            || first.is_ascii_digit()
            || matches!(first, b'\'' | b'"' | b'`' | b'('))
    {
        return Some((Join::Direct, None));
    }
    if let Some(col) = prev.prefixed_body {
        let indent = raw.iter().take_while(|&&c| c == b' ').count();
        if col >= 2 && indent == col && raw.get(indent).is_some_and(|c| !c.is_ascii_whitespace()) {
            return Some((Join::Space, Some(indent)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies of a run counted as the second one, not read, give the width
    /// reading every line gives, at the edge of "rarely exceeded": 19 or
    /// 20 wrapped lines, and five copies of a wider line after them.
    #[test]
    fn a_run_is_counted_as_reading_each_copy_would() {
        for (wrapped, want) in [(19, None), (20, Some(80))] {
            let mut log = String::new();
            for i in 0..wrapped {
                log.push_str(&format!(
                    "{:a<80}\nrest of line {i}\n",
                    format!("line {i} ")
                ));
            }
            let start = log.len();
            let copy = format!("{}\n", "x".repeat(100));
            log.push_str(&copy.repeat(5));
            log.push_str("end\n");
            let hay = log.as_bytes();
            let run = Run {
                start,
                period: copy.len(),
                copies: 5,
            };
            assert_eq!(wrap_width(hay, 0..hay.len(), &[]), want, "{wrapped}");
            assert_eq!(wrap_width(hay, 0..hay.len(), &[run]), want, "{wrapped}");
        }
    }

    #[test]
    fn widths_are_inferred_from_the_data() {
        let mut log = String::new();
        for i in 0..3 {
            log.push_str(&format!("{i} {}\n", "x".repeat(93)));
            log.push_str("rest of it\n");
        }
        assert_eq!(wrap_width(log.as_bytes(), 0..log.len(), &[]), Some(95));
        // Two equal lines of an unusual width, or the same text twice: no wrap.
        let same = format!("{}\nrest\n{}\nrest\n", "y".repeat(95), "y".repeat(95));
        assert_eq!(wrap_width(same.as_bytes(), 0..same.len(), &[]), None);
        // Lines followed by timestamped records are not wrapped.
        let records = format!(
            "{}\n2026-11-29 19:41:04,724 INFO a\n{}\n2026-11-29 19:41:04,725 INFO b\n",
            "a".repeat(80),
            "b".repeat(80)
        );
        assert_eq!(wrap_width(records.as_bytes(), 0..records.len(), &[]), None);
        // Rows of a table are as wide as each other, and not wrapped.
        let table = "\
JobID           JobName  Partition    Account  AllocCPUS      State ExitCode
------------ ---------- ---------- ---------- ---------- ---------- --------
5120              train        gpu     vision         16 CANCELLED+      0:0
5120.batch        batch                vision         16  CANCELLED     0:15
";
        assert_eq!(wrap_width(table.as_bytes(), 0..table.len(), &[]), None);
    }
}
