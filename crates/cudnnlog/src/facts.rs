//! Facts: the values a pattern's named captures pull out of a message.
//!
//! A capture whose name ends in `_bytes` holds a size (`1.53 GiB`,
//! `20.00 MiB`, `1.00GiB`, `17179869184`, `1,024 bytes`) and becomes an
//! integer number of bytes, at most [`MAX_FACT_INT`]; every other capture,
//! and a size that is not one or is larger, stays text.

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

/// The largest integer fact: `i64::MAX` (8 EiB less a byte), the largest
/// integer every JSON reader holds (Go's and Java's `int64`, BigQuery's
/// `INT64`). A size over it in a log (`9000 PiB`, `18446744073709551615`
/// bytes) stays the text the log wrote, as a size that does not parse does.
pub const MAX_FACT_INT: u64 = i64::MAX as u64;

impl Fact {
    /// Turns a capture into a fact according to its name: a `*_bytes` size
    /// up to [`MAX_FACT_INT`] is an integer. Text is trimmed and cut to
    /// [`MAX_FACT_TEXT`] bytes.
    pub(crate) fn from_capture(name: &str, text: &str) -> Fact {
        if name.ends_with("_bytes") {
            if let Some(n) = parse_size(text).filter(|&n| n <= MAX_FACT_INT) {
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

    #[test]
    fn a_size_over_int64_stays_text() {
        assert_eq!(
            Fact::from_capture("requested_bytes", "8388607 TiB"),
            Fact::Int(8_388_607 << 40)
        );
        for big in ["8388608 TiB", "9000000.00 TiB", "18446744073709551615"] {
            assert_eq!(
                Fact::from_capture("requested_bytes", big),
                Fact::Text(big.into())
            );
        }
    }

    /// Every number in a report's JSON is an int64 (or a float): facts
    /// from a log with absurd sizes included.
    #[test]
    fn every_json_integer_fits_int64() {
        use crate::report::FindingsSink;
        use crate::{Catalog, ScannerBuilder};
        let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
        let mut sink = FindingsSink::new(scanner.catalog());
        let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9000000.00 TiB. \
GPU 0 has a total capacity of 16777215.00 TiB of which 18446744073709551615 bytes is free. \
Including non-PyTorch memory, this process has 8388607.00 TiB memory in use.\n";
        scanner.scan_slice(log, &mut sink).unwrap();
        let report = sink.into_report();
        let facts = &report.findings[0].facts;
        assert_eq!(
            facts["requested_bytes"],
            Fact::Text("9000000.00 TiB".into())
        );
        assert_eq!(facts["process_bytes"], Fact::Int(8_388_607 << 40));
        fn numbers(v: &serde_json::Value, out: &mut Vec<serde_json::Number>) {
            match v {
                serde_json::Value::Number(n) => out.push(n.clone()),
                serde_json::Value::Array(a) => a.iter().for_each(|x| numbers(x, out)),
                serde_json::Value::Object(o) => o.values().for_each(|x| numbers(x, out)),
                _ => {}
            }
        }
        // Sizes just under the cap: their arithmetic overflowed u64 (a
        // panic in a debug build, nonsense in a release one).
        let mut sink = FindingsSink::new(scanner.catalog());
        let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4194305.00 TiB. \
GPU 0 has a total capacity of 8388607.00 TiB of which 8388607.00 TiB is free. \
Including non-PyTorch memory, this process has 8388607.00 TiB memory in use. \
Of the allocated memory 4194305.00 TiB is allocated by PyTorch, \
and 8388607.00 TiB is reserved by PyTorch but unallocated.\n";
        scanner.scan_slice(log, &mut sink).unwrap();
        let near = sink.into_report();
        assert_eq!(
            near.findings[0].facts["allocated_bytes"],
            Fact::Int(4_194_305 << 40)
        );
        let mut all = Vec::new();
        numbers(&serde_json::to_value(&near).unwrap(), &mut all);
        numbers(&serde_json::to_value(&report).unwrap(), &mut all);
        assert!(!all.is_empty());
        for n in all {
            assert!(n.is_i64() || n.is_f64(), "{n} does not fit int64");
        }
    }
}

#[cfg(test)]
mod examples;
