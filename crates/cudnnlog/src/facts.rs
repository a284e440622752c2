//! Facts: the values a pattern's named captures pull out of a message.
//!
//! A capture whose name ends in `_bytes` holds a size (`1.53 GiB`,
//! `20.00 MiB`, `1.00GiB`, `17179869184`, `1,024 bytes`) and becomes an
//! integer number of bytes; every other capture stays text.

use serde::Serialize;
use std::fmt;

/// The value of one fact.
///
/// ```
/// use cudnnlog::{report::{Fact, FindingsSink}, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let facts = &sink.into_report().findings[0].facts;
/// // A `*_bytes` capture is a number of bytes; any other stays text.
/// assert_eq!(facts["requested_bytes"], Fact::Int(2 << 30));
/// assert_eq!(facts["exception"], Fact::Text("torch.OutOfMemoryError".into()));
/// assert_eq!((facts["requested_bytes"].to_string(), facts["device"].to_string()), ("2147483648".into(), "0".into()));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Fact {
    /// A size in bytes, or another integer.
    Int(u64),
    /// Anything else, as written.
    Text(String),
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::Int(n) => write!(f, "{n}"),
            Fact::Text(s) => f.write_str(s),
        }
    }
}

/// The most bytes of a text fact; a longer capture is cut, ending in `…`.
pub const MAX_FACT_TEXT: usize = 1024;

impl Fact {
    /// Turns a capture into a fact according to its name. Text is trimmed
    /// and cut to [`MAX_FACT_TEXT`] bytes.
    pub(crate) fn from_capture(name: &str, text: &str) -> Fact {
        if name.ends_with("_bytes") {
            if let Some(n) = parse_size(text) {
                return Fact::Int(n);
            }
        }
        let text = text.trim();
        if text.len() <= MAX_FACT_TEXT {
            return Fact::Text(text.to_string());
        }
        let cut = crate::text::truncate(text, MAX_FACT_TEXT - '…'.len_utf8());
        Fact::Text(format!("{cut}…"))
    }
}

/// Parses a size as frameworks print it. Units are binary whether or not
/// they carry the `i` (PyTorch and TensorFlow print `MiB`/`GiB` and `MB`/`GB`
/// alike for powers of 1024); a bare number is bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let num_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(t.len());
    let number: String = t[..num_end].chars().filter(|&c| c != ',').collect();
    if number.is_empty() || number == "." {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let unit = t[num_end..].trim().to_ascii_lowercase();
    let unit = unit.trim_end_matches('.');
    let power = match unit {
        "" | "b" | "byte" | "bytes" => 0,
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 2,
        "g" | "gb" | "gib" => 3,
        "t" | "tb" | "tib" => 4,
        "p" | "pb" | "pib" => 5,
        _ => return None,
    };
    let bytes = value * 1024f64.powi(power);
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return None;
    }
    Some(bytes.round() as u64)
}

/// Formats a byte count for people: `1.53 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1.00GiB"), Some(1 << 30));
        assert_eq!(parse_size("64.00 GiB"), Some(64 << 30));
        assert_eq!(
            parse_size("2.20GB"),
            Some((2.2f64 * (1u64 << 30) as f64).round() as u64)
        );
        assert_eq!(parse_size("0 bytes"), Some(0));
        assert_eq!(parse_size("12 parsecs"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(
            Fact::from_capture("requested_bytes", "1.21 MiB"),
            Fact::Int(1268777)
        );
        assert_eq!(
            Fact::from_capture("status", " CUDNN_STATUS_NOT_SUPPORTED "),
            Fact::Text("CUDNN_STATUS_NOT_SUPPORTED".into())
        );
        assert_eq!(human_bytes(1_642_824_991), "1.53 GiB");
        assert_eq!(human_bytes(12), "12 B");
    }
}

#[cfg(test)]
mod examples;
