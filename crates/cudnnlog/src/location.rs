//! Where a match, a value or an unclassified line is in its source.

use crate::prefix::Timestamp;

/// Where a match is in its source.
///
/// ```
/// use cudnnlog::{sink::{FnSink, Match}, Catalog, ScannerBuilder};
/// let log = b"INFO step 1\n[rank2]: 2026-11-29 19:41:10,166 ERROR RuntimeError: CUDA error: an illegal memory access was encountered\n";
/// let mut at = Vec::new();
/// let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> { at.push(m.location.clone()); Ok(true) });
/// ScannerBuilder::new().build(Catalog::builtin()?).scan_slice(log, &mut sink)?;
/// let at = &at[0];
/// assert_eq!((at.source, at.line, at.byte, at.rank), (0, 2, 12, Some(2)));
/// assert_eq!(at.timestamp.unwrap().iso().as_deref(), Some("2026-11-29T19:41:10.166"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Index of the source among those a sink was given, in the order their
    /// scans ended. A scanner reads one source per call, so in a [`Match`](crate::sink::Match)
    /// it is 0; [`FindingsSink`](crate::report::FindingsSink) numbers the
    /// sources scanned into it (the report's `sources`).
    pub source: usize,
    /// 1-based line number (lines end at `\n`).
    pub line: u64,
    /// Byte offset of the start of that line.
    pub byte: u64,
    /// The line's timestamp, when its prefix has one.
    pub timestamp: Option<Timestamp>,
    /// The rank that wrote the line, when its prefix names one.
    pub rank: Option<u32>,
}
