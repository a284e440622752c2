//! JSON that is safe to print on a terminal.
//!
//! serde_json escapes the C0 control characters, but writes DEL and the C1
//! controls (U+0080–U+009F, which include the one-byte CSI some terminals
//! obey) as they are. A log's text ends up in `message`, `facts` and
//! evidence, so the printers here escape those too, as `\u007f`, `\u009b`:
//! still valid JSON, and the same string once parsed. Every JSON document
//! and NDJSON line the project writes goes through [`pretty`] or
//! [`compact`].
//!
//! ```
//! let mut out = Vec::new();
//! cudnnlog::json::compact(&mut out, &"a\u{9b}31m").unwrap();
//! assert_eq!(out, br#""a\u009b31m""#);
//! ```

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io::{self, Write};

/// Wraps a serde_json formatter, escaping DEL and C1 controls in strings.
///
/// ```
/// use cudnnlog::json::Safe;
/// let mut out = Vec::new();
/// let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(serde_json::ser::CompactFormatter));
/// serde::Serialize::serialize("x\u{7f}", &mut ser).unwrap();
/// assert_eq!(out, br#""x\u007f""#);
/// ```
pub struct Safe<F>(pub F);

fn needs_escape(c: char) -> bool {
    c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c)
}

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some((at, c)) = rest.char_indices().find(|&(_, c)| needs_escape(c)) {
            self.0.write_string_fragment(w, &rest[..at])?;
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        self.0.write_string_fragment(w, rest)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes `value` as indented JSON (two spaces), DEL and C1 escaped.
///
/// # Errors
///
/// What writing to `out` returns, or a value serde cannot serialize (a map
/// with keys that are not strings; the library's types never are).
///
/// ```
/// let mut out = Vec::new();
/// cudnnlog::json::pretty(&mut out, &serde_json::json!({"a": 1})).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"a\": 1\n}");
/// ```
pub fn pretty<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Safe(PrettyFormatter::new()));
    value.serialize(&mut ser)
}

/// Writes `value` as one line of JSON (no newline), DEL and C1 escaped.
///
/// # Errors
///
/// As [`pretty`].
///
/// ```
/// let mut out = Vec::new();
/// cudnnlog::json::compact(&mut out, &serde_json::json!({"a": [1, 2]})).unwrap();
/// assert_eq!(out, br#"{"a":[1,2]}"#);
/// ```
pub fn compact<W: Write, T: Serialize + ?Sized>(out: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Safe(CompactFormatter));
    value.serialize(&mut ser)
}

#[cfg(test)]
mod tests {
    #[test]
    fn del_and_c1_are_escaped_and_round_trip() {
        let s = "a\u{7f}b\u{9b}31mc\u{1b}d é";
        let mut out = Vec::new();
        super::compact(&mut out, &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#""a\u007fb\u009b31mc\u001bd é""#);
        let back: String = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }
}
