//! Following a growing log (`cudnnlog scan --follow`): bytes are pushed as
//! they arrive, and each scan returns the findings not announced before.
//!
//! A [`Follower`] keeps [`CONTEXT`] bytes before the unscanned ones, so an
//! event that began in an earlier scan is framed whole when its end
//! arrives, and at most [`MAX_PENDING`] unscanned bytes: memory is bounded
//! whatever the log's size or the length of its lines. It does no I/O and
//! keeps no time: the caller reads (a file it polls, a pipe) and decides
//! when to scan.
//!
//! Each distinct finding is announced once: the identity is the class and
//! the fingerprint of its message ([`fingerprint_of`]), the one fleet
//! triage groups by, so a recurring error is announced the first time only,
//! however the bytes were split into scans.
//!
//! ```
//! use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
//! let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
//! let mut f = Follower::new(&scanner);
//! f.push(b"step 1 loss 0.5\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. ");
//! assert!(f.scan(false).unwrap().is_empty()); // the OOM line has not ended yet
//! f.push(b"GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
//! let new = f.scan(false).unwrap();
//! assert_eq!((new[0].finding.class.as_str(), new[0].place.line), ("cuda.oom", 2));
//! // The same error again, later: already announced.
//! f.push(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 3.19 GiB is free.\n");
//! assert!(f.scan(false).unwrap().is_empty());
//! ```

use crate::fleet::fingerprint_of;
use crate::report::{Finding, FindingsSink, Place};
use crate::Scanner;
use std::collections::HashSet;

/// Bytes kept before the unscanned ones, so that events that started
/// earlier are framed whole (256 KiB).
pub const CONTEXT: usize = 256 << 10;

/// The most unscanned bytes a follower holds (8 MiB): a caller scans before
/// pushing more ([`Follower::room`]); a line longer than this is cut, as a
/// stream's is.
pub const MAX_PENDING: usize = 8 << 20;

/// Distinct findings remembered as announced; past this many the memory is
/// cleared (a hostile log of endless distinct errors), and old ones may be
/// announced again.
pub const MAX_ANNOUNCED: usize = 100_000;

/// A finding seen for the first time.
///
/// ```
/// use cudnnlog::{follow::Follower, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut f = Follower::new(&scanner);
/// f.push(b"INFO step 1\nINFO step 2\n");
/// assert!(f.scan(false).unwrap().is_empty());
/// f.push(b"RuntimeError: CUDA error: an illegal memory access was encountered\n");
/// let new = f.scan(false).unwrap();
/// // Where it is in the whole input, not in the bytes of this scan.
/// assert_eq!((new[0].finding.class.as_str(), new[0].place.line, new[0].place.byte, new[0].place.step), ("cuda.illegal_address", 3, 24, Some(2)));
/// assert_eq!(new[0].finding.first, new[0].place);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Announced {
    /// The finding as this scan saw it; `first` and `last` hold offsets and
    /// line numbers in the whole followed input, not in the scan.
    pub finding: Finding,
    /// Where it is in the new bytes: its first occurrence, unless that was
    /// in the context before them (then its last).
    pub place: Place,
}

/// Follows a growing log; see the [module documentation](self).
///
/// ```
/// use cudnnlog::{follow::Follower, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut follower = Follower::new(&scanner);
/// let mut classes = Vec::new();
/// // The log arrives in pieces as a file that is polled would, a line cut between two reads.
/// let pieces: [&[u8]; 3] = [
///     b"INFO step 1\nRuntimeError: CUDA error: an illeg",
///     b"al memory access was encountered\n",
///     b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.",
/// ];
/// for piece in pieces {
///     follower.push(piece);
///     classes.extend(follower.scan(false).unwrap().into_iter().map(|a| a.finding.class));
/// }
/// assert_eq!(classes, ["cuda.illegal_address"]); // the last line has not ended
/// classes.extend(follower.scan(true).unwrap().into_iter().map(|a| a.finding.class)); // the writer went quiet
/// assert_eq!(classes, ["cuda.illegal_address", "cuda.oom"]);
/// ```
pub struct Follower<'s> {
    scanner: &'s Scanner,
    /// Bytes from offset `base` of the input: context, then unscanned.
    buf: Vec<u8>,
    base: u64,
    /// The line number of `buf[0]`.
    base_line: u64,
    /// Where the unscanned bytes start in `buf`.
    scanned: usize,
    /// `buf.len()` when an unended last line was last scanned.
    flushed: Option<usize>,
    announced: HashSet<u64>,
    modified: Option<std::time::SystemTime>,
}

impl<'s> Follower<'s> {
    /// A follower at the start of an input.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let f = Follower::new(&scanner);
    /// assert_eq!((f.offset(), f.pending()), (0, 0));
    /// ```
    pub fn new(scanner: &'s Scanner) -> Follower<'s> {
        Follower {
            scanner,
            buf: Vec::new(),
            base: 0,
            base_line: 1,
            scanned: 0,
            flushed: None,
            announced: HashSet::new(),
            modified: None,
        }
    }

    /// Appends bytes that arrived. Push at most [`room`](Follower::room)
    /// bytes between scans to keep memory bounded.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(b"INFO step 1\n");
    /// assert_eq!((f.offset(), f.pending()), (12, 12));
    /// ```
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The input's length so far: the offset the next pushed byte has.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(b"INFO step 1\n");
    /// f.scan(false).unwrap();
    /// f.push(b"INFO step 2\n");
    /// assert_eq!(f.offset(), 24);
    /// ```
    pub fn offset(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Bytes pushed and not yet scanned.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(b"INFO step 1\nINFO ste");
    /// f.scan(false).unwrap();
    /// assert_eq!(f.pending(), 8); // the unended line waits
    /// ```
    pub fn pending(&self) -> usize {
        self.buf.len() - self.scanned
    }

    /// How many more bytes may be pushed before a scan is due.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::{Follower, MAX_PENDING}};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(&[b'.'; 1000]);
    /// assert_eq!(f.room(), MAX_PENDING - 1000);
    /// ```
    pub fn room(&self) -> usize {
        MAX_PENDING.saturating_sub(self.pending())
    }

    /// Whether a scan would see anything: an ended line not scanned yet, or
    /// [`MAX_PENDING`] bytes of an unended one (with `flush`: any bytes not
    /// scanned as they are now).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(b"no end yet");
    /// assert!(!f.ready(false) && f.ready(true));
    /// f.scan(true).unwrap();
    /// assert!(!f.ready(true)); // scanned as it is; it waits for more bytes
    /// ```
    pub fn ready(&self, flush: bool) -> bool {
        let rest = &self.buf[self.scanned..];
        if flush {
            return !rest.is_empty() && self.flushed != Some(self.buf.len());
        }
        rest.len() >= MAX_PENDING || memchr::memrchr(b'\n', rest).is_some()
    }

    /// The time the followed file was last written, for the year of
    /// timestamps that have none.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.set_modified(Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000))); // 2023-11-14
    /// f.push(b"Mar 12 10:00:01 gpu-node-3 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n");
    /// let new = f.scan(false).unwrap();
    /// assert!(new[0].place.timestamp.as_deref().unwrap().starts_with("2023-03-12"));
    /// ```
    pub fn set_modified(&mut self, modified: Option<std::time::SystemTime>) {
        self.modified = modified;
    }

    /// Starts over: the input was truncated or replaced, and is read again
    /// from its start. What was announced is forgotten.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// let oom = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// f.push(oom);
    /// assert_eq!(f.scan(false).unwrap().len(), 1);
    /// f.reset();
    /// f.push(oom);
    /// assert_eq!(f.scan(false).unwrap().len(), 1);
    /// ```
    pub fn reset(&mut self) {
        let scanner = self.scanner;
        let modified = self.modified;
        *self = Follower::new(scanner);
        self.modified = modified;
    }

    /// Scans the ended lines pushed since the last scan (with `flush`, an
    /// unended last line too: the writer has gone quiet) with the context
    /// before them, and returns the findings not announced before, in the
    /// report's order.
    ///
    /// # Errors
    ///
    /// An error of the scan itself ([`Scanner::scan_slice`]).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, follow::Follower};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut f = Follower::new(&scanner);
    /// f.push(b"INFO step 7 loss 0.5\nRuntimeError: CUDA error: an illegal memory access was encountered");
    /// assert!(f.scan(false).unwrap().is_empty());
    /// let new = f.scan(true).unwrap(); // the writer went quiet: the unended line too
    /// assert_eq!((new[0].finding.class.as_str(), new[0].place.line), ("cuda.illegal_address", 2));
    /// ```
    pub fn scan(&mut self, flush: bool) -> Result<Vec<Announced>, crate::Error> {
        if !self.ready(flush) {
            return Ok(Vec::new());
        }
        let rest = &self.buf[self.scanned..];
        // Ended lines; a line longer than MAX_PENDING is cut where it is.
        let ended = match memchr::memrchr(b'\n', rest) {
            Some(nl) => self.scanned + nl + 1,
            None if rest.len() >= MAX_PENDING => self.buf.len(),
            None => self.scanned,
        };
        let end = if flush { self.buf.len() } else { ended };
        if end <= self.scanned {
            return Ok(Vec::new());
        }
        let new_from = self.scanned;
        let mut sink = FindingsSink::new(self.scanner.catalog());
        // The followed file's modification time dates its yearless times.
        let mut info = self
            .scanner
            .scan_slice_named("<memory>", &self.buf[..end], &mut sink)?;
        info.modified = self.modified;
        crate::sink::Sink::source_end(&mut sink, &info)?;
        let report = sink.into_report();
        let mut out = Vec::new();
        for mut finding in report.findings {
            if (finding.last.byte as usize) < new_from {
                continue;
            }
            for place in [&mut finding.first, &mut finding.last] {
                place.byte += self.base;
                place.line += self.base_line - 1;
            }
            let place = match finding.first.byte >= self.base + new_from as u64 {
                true => finding.first.clone(),
                false => finding.last.clone(),
            };
            // The same error, and the same line seen again (a line flushed
            // before it ended, an event that grew): announced once.
            let print = fingerprint_of(&finding.class, &finding.message);
            let same_error = hash_of((0u8, &finding.class, finding.severity.as_str(), print));
            let same_line = hash_of((1u8, &finding.class, place.byte));
            if self.announced.len() >= MAX_ANNOUNCED {
                self.announced.clear();
            }
            if self.announced.contains(&same_error) || self.announced.contains(&same_line) {
                continue;
            }
            self.announced.insert(same_error);
            self.announced.insert(same_line);
            out.push(Announced { finding, place });
        }
        self.flushed = (end > ended).then_some(self.buf.len());
        self.scanned = ended;
        self.trim();
        Ok(out)
    }

    /// Drops what lies more than [`CONTEXT`] before the unscanned bytes,
    /// from a line start when one is near.
    fn trim(&mut self) {
        let Some(floor) = self.scanned.checked_sub(CONTEXT).filter(|&f| f > 0) else {
            return;
        };
        let cut = match memchr::memrchr(b'\n', &self.buf[..floor]) {
            Some(nl) if floor - nl <= CONTEXT => nl + 1,
            _ => floor,
        };
        self.base_line += bytecount::count(&self.buf[..cut], b'\n') as u64;
        self.base += cut as u64;
        self.buf.drain(..cut);
        self.scanned -= cut;
        self.flushed = self.flushed.map(|f| f - cut);
    }
}

/// A 64-bit hash of `value`: what is remembered of an announced finding.
fn hash_of(value: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Catalog, ScannerBuilder};

    const OOM: &[u8] = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";

    fn scanner() -> Scanner {
        ScannerBuilder::new().build(Catalog::builtin().unwrap())
    }

    #[test]
    fn a_traceback_split_across_scans_is_framed_whole() {
        let s = scanner();
        let mut f = Follower::new(&s);
        f.push(b"Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n");
        assert!(f.scan(false).unwrap().is_empty());
        f.push(OOM);
        let new = f.scan(false).unwrap();
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].finding.class, "cuda.oom");
        assert_eq!(new[0].finding.last.line, 3);
    }

    #[test]
    fn memory_stays_bounded_and_places_stay_absolute() {
        let s = scanner();
        let mut f = Follower::new(&s);
        let line = b"INFO step 100 loss 0.25 lr 0.0001 throughput 1234.5 samples/s\n";
        let mut lines = 0u64;
        while f.offset() < 3 * MAX_PENDING as u64 {
            while f.room() > line.len() {
                f.push(line);
                lines += 1;
            }
            assert!(f.scan(false).unwrap().is_empty());
            assert!(f.buf.len() <= CONTEXT + line.len());
        }
        let at = f.offset();
        f.push(OOM);
        let new = f.scan(false).unwrap();
        assert_eq!(new[0].finding.last.byte, at);
        assert_eq!(new[0].finding.last.line, lines + 1);
    }

    #[test]
    fn a_line_without_end_is_cut_at_the_pending_limit() {
        let s = scanner();
        let mut f = Follower::new(&s);
        f.push(&vec![b'\r'; MAX_PENDING]);
        assert!(f.ready(false));
        f.scan(false).unwrap();
        assert_eq!(f.pending(), 0);
        assert!(f.buf.len() <= CONTEXT);
    }

    #[test]
    fn a_flushed_tail_is_not_announced_again_when_it_ends() {
        let s = scanner();
        let mut f = Follower::new(&s);
        f.push(&OOM[..OOM.len() - 1]);
        assert_eq!(f.scan(true).unwrap().len(), 1);
        assert!(!f.ready(true));
        f.push(b"\n");
        assert!(f.scan(false).unwrap().is_empty());
    }

    #[test]
    fn a_line_flushed_short_is_not_announced_again_when_it_grows() {
        // The fuzzer's case: the message of the flushed part and of the
        // whole line differ (another fingerprint), the line is the same.
        let s = scanner();
        let mut f = Follower::new(&s);
        f.push(b"INFO start\ntorch.OutOfMemoryError: CUDA out of memory.");
        assert_eq!(f.scan(true).unwrap().len(), 1);
        f.push(&OOM[b"torch.OutOfMemoryError: CUDA out of memory.".len()..]);
        assert!(f.scan(false).unwrap().is_empty());
    }

    #[test]
    fn the_split_of_the_bytes_does_not_change_what_is_announced() {
        let s = scanner();
        let log = [
            &b"INFO start\n"[..],
            OOM,
            b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
            OOM,
        ]
        .concat();
        let classes = |step: usize| {
            let mut f = Follower::new(&s);
            let mut out = Vec::new();
            for piece in log.chunks(step) {
                f.push(piece);
                out.extend(f.scan(false).unwrap());
            }
            out.extend(f.scan(true).unwrap());
            let mut got: Vec<_> = out
                .iter()
                .map(|a| (a.finding.class.clone(), a.finding.first.line))
                .collect();
            got.sort();
            got
        };
        let whole = classes(log.len());
        assert_eq!(whole.len(), 2);
        for step in [1, 7, 64, 150] {
            assert_eq!(classes(step), whole, "pieces of {step} bytes");
        }
    }
}
