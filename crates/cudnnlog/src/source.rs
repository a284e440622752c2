//! Sources: how a log's bytes are read.

use crate::error::Error;
use memmap2::Mmap;
use serde::{Deserialize, Serialize};
use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

/// Whether regular files may be memory-mapped.
///
/// As in ripgrep, the default is [`MmapChoice::never`]: mapping a file is
/// only sound while no one truncates or rewrites it, which the library cannot
/// promise. A caller that can, or that accepts the risk, opts in with the
/// `unsafe` [`MmapChoice::auto`]. When mapping fails the scanner silently
/// reads the file instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapChoice {
    enabled: bool,
}

impl MmapChoice {
    /// Map regular, non-empty files; stream everything else.
    ///
    /// # Safety
    ///
    /// The caller promises that no file is truncated or modified while it is
    /// mapped: if one is, reading it may crash the process (SIGBUS) or show
    /// inconsistent bytes.
    pub unsafe fn auto() -> MmapChoice {
        MmapChoice { enabled: true }
    }

    /// Never map; always read. The default.
    pub fn never() -> MmapChoice {
        MmapChoice { enabled: false }
    }

    pub(crate) fn open(self, file: &File, meta: &Metadata) -> Option<Mmap> {
        if !self.enabled || !meta.is_file() || meta.len() == 0 || still_written(meta) {
            return None;
        }
        // SAFETY: `auto()` passed the promise that the file is not modified
        // while mapped on to its caller.
        let map = unsafe { Mmap::map(file) }.ok()?;
        // Shrunk between `metadata` and `map`: read it instead.
        (file.metadata().ok()?.len() == meta.len() && map.len() as u64 == meta.len()).then_some(map)
    }
}

/// A file modified this recently may still be written to — a live job's
/// log, which a log rotator may also truncate. Such files are read, not
/// mapped: a read of a file that shrinks returns less, while a mapped page
/// past the new end kills the process with SIGBUS.
const STILL_WRITTEN: std::time::Duration = std::time::Duration::from_secs(30);

fn still_written(meta: &Metadata) -> bool {
    match meta.modified().ok().and_then(|m| m.elapsed().ok()) {
        Some(age) => age < STILL_WRITTEN,
        // A modification time in the future, or none: be careful.
        None => true,
    }
}

/// Whether a path names a character or block device, which is refused
/// (`/dev/zero` never ends); FIFOs and sockets are read as streams.
#[cfg(unix)]
pub(crate) fn is_device(meta: &Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    t.is_char_device() || t.is_block_device()
}

#[cfg(not(unix))]
pub(crate) fn is_device(_meta: &Metadata) -> bool {
    false
}

/// What was read from one source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceInfo {
    /// The path as given, `<stdin>` or `<memory>`.
    pub path: String,
    /// Bytes read.
    pub bytes: u64,
    /// Lines read (a last line without `\n` counts).
    pub lines: u64,
    /// When the file was last written, for a regular file read by path:
    /// where the year of glog/absl and syslog times comes from when no
    /// dated line is near them. Not part of the JSON report (it would make
    /// reports of the same bytes differ).
    #[serde(skip)]
    pub modified: Option<std::time::SystemTime>,
}

/// The modification time of a regular file.
pub(crate) fn modified(path: &Path) -> Option<std::time::SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| meta.modified().ok()).flatten()
}

/// The compression of a stream, told by its first bytes (not its name: a
/// rotated `train.log.1.gz` or a `.log` that is really gzip both work).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// Recognises the gzip (`1f 8b`) and zstd (`28 b5 2f fd`) magic numbers,
    /// and zstd's skippable frames (`5? 2a 4d 18`).
    ///
    /// ```
    /// use cudnnlog::source::Compression;
    /// assert_eq!(Compression::of(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
    /// assert_eq!(Compression::of(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
    /// assert_eq!(Compression::of(&[0x50, 0x2a, 0x4d, 0x18]), Compression::Zstd);
    /// assert_eq!(Compression::of(b"2026-11-29"), Compression::None);
    /// ```
    pub fn of(head: &[u8]) -> Compression {
        match what_next(head) {
            Next::Gzip => Compression::Gzip,
            Next::Zstd | Next::Skippable => Compression::Zstd,
            Next::End | Next::Text => Compression::None,
        }
    }
}

/// The largest window a zstd frame may declare: the `zstd` command line's
/// default limit (it takes up to 2 GiB only when told `--long=31`). A
/// decoder keeps a window's worth of output, so a small file declaring a
/// huge window would otherwise make it hold that much memory. A frame
/// declaring more is refused, after everything before it was read.
pub const MAX_ZSTD_WINDOW: u64 = 128 << 20;

/// Wraps a reader so that gzip and zstd input is decompressed, detected
/// from its first bytes; other input passes through unchanged. The reader
/// must be `Send`, as [`Scanner::scan_reader`](crate::Scanner::scan_reader)
/// reads on a helper thread (`std::io::stdin()` is, its lock is not).
///
/// Compressed input is a run of gzip members and zstd frames, in any order
/// (`cat a.gz b.zst c.gz`; zstd's skippable frames are skipped); whatever
/// follows the last of them that is neither (text appended to a rotated
/// `.gz`) is passed through as it is, so no byte goes unread. A zstd frame
/// declaring a window over [`MAX_ZSTD_WINDOW`] is refused. Corrupt or
/// truncated input is an error (`InvalidData` or `UnexpectedEof`) returned
/// only after every byte decoded before the damage: a scan of the stream
/// reports what it found there, and the error
/// ([`Incomplete`]).
pub fn decompressed<'r, R: std::io::Read + Send + 'r>(
    reader: R,
) -> std::io::Result<(Compression, Box<dyn std::io::Read + Send + 'r>)> {
    let mut input = Input::new(reader);
    let kind = Compression::of(input.peek(4)?);
    let out: Box<dyn std::io::Read + Send + 'r> = match kind {
        Compression::None => Box::new(input),
        Compression::Gzip | Compression::Zstd => Box::new(Decoder {
            part: Part::Next(input),
        }),
    };
    Ok((kind, out))
}

/// A stream that failed part way — a truncated or corrupt archive, a read
/// error: everything read before the failure was scanned and the sink has
/// its findings. A scan returns it as the source of an
/// [`Error::Io`](crate::Error::Io), whose message is one line (`path:
/// error (after N lines, which were scanned)`); [`Incomplete::of`] finds
/// it, so that a caller can keep the source's findings. A failure before
/// the first byte (a damaged header) is a plain `Error::Io`: nothing was
/// read.
///
/// ```
/// use cudnnlog::{report::FindingsSink, source::{decompressed, Incomplete}, Catalog, ScannerBuilder};
/// use std::io::Write;
/// let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// gz.write_all(format!("step 1\n{oom}step 2\n").as_bytes()).unwrap();
/// let gz = gz.finish().unwrap();
/// let cut = &gz[..gz.len() - 4]; // the trailer cut short
///
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let (_, reader) = decompressed(cut).unwrap();
/// let err = scanner.scan_reader(0, "cut.gz", reader, &mut sink).unwrap_err();
/// let incomplete = Incomplete::of(&err).unwrap();
/// assert_eq!(incomplete.info.lines, 3);
/// assert!(err.to_string().starts_with("cut.gz: corrupt or truncated gzip data"));
/// let report = sink.into_report(vec![incomplete.info.clone()]);
/// assert_eq!(report.findings[0].class, "cuda.oom");
/// ```
#[derive(Debug)]
pub struct Incomplete {
    /// What was read, and scanned, before the failure.
    pub info: SourceInfo,
    /// The failure.
    pub error: std::io::Error,
}

impl Incomplete {
    /// The incomplete read `err` reports, if it is one.
    pub fn of(err: &Error) -> Option<&Incomplete> {
        match err {
            Error::Io { source, .. } => source.get_ref()?.downcast_ref::<Incomplete>(),
            _ => None,
        }
    }
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines = self.info.lines;
        let (s, were) = if lines == 1 {
            ("", "was")
        } else {
            ("s", "were")
        };
        write!(
            f,
            "{} (after {lines} line{s}, which {were} scanned)",
            self.error
        )
    }
}

// No `source()`: the message already says what `error` does.
impl std::error::Error for Incomplete {}

/// A buffered reader whose look-ahead may span the underlying reads: the
/// magic number of the next member or frame is told even when a pipe
/// hands it over a byte at a time.
struct Input<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// The last error reading `inner` (an I/O error, not bad data), as the
    /// decoders wrap it in their own.
    failure: Option<(std::io::ErrorKind, String)>,
}

impl<R: Read> Input<R> {
    fn new(inner: R) -> Input<R> {
        Input {
            inner,
            buf: vec![0; 64 << 10].into_boxed_slice(),
            start: 0,
            end: 0,
            failure: None,
        }
    }

    /// Reads from `inner`, noting a failure.
    fn read_inner(&mut self, range: std::ops::RangeFrom<usize>) -> std::io::Result<usize> {
        loop {
            match self.inner.read(&mut self.buf[range.clone()]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failure = Some((e.kind(), e.to_string()));
                    return Err(e);
                }
                done => return done,
            }
        }
    }

    /// The I/O error under a decoder's error, if reading failed: reported
    /// as it is, not as bad data.
    fn failed(&self) -> Option<std::io::Error> {
        let (kind, message) = self.failure.as_ref()?;
        Some(std::io::Error::new(*kind, message.clone()))
    }

    /// The next `n` bytes, not consumed: fewer only at the end of the input.
    fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        debug_assert!(n <= self.buf.len());
        if self.end - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            while self.end < n {
                match self.read_inner(self.end..)? {
                    0 => break,
                    k => self.end += k,
                }
            }
        }
        Ok(&self.buf[self.start..self.end.min(self.start + n)])
    }

    /// Skips `n` bytes; false if the input ended first.
    fn skip(&mut self, mut n: u64) -> std::io::Result<bool> {
        use std::io::BufRead;
        while n > 0 {
            let available = self.fill_buf()?.len();
            if available == 0 {
                return Ok(false);
            }
            let k = available.min(usize::try_from(n).unwrap_or(usize::MAX));
            self.consume(k);
            n -= k as u64;
        }
        Ok(true)
    }
}

impl<R: Read> std::io::BufRead for Input<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.start == self.end {
            self.start = 0;
            self.end = self.read_inner(0..)?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        if self.start == self.end && out.len() >= self.buf.len() {
            let read = self.inner.read(out);
            match &read {
                Err(e) if e.kind() != std::io::ErrorKind::Interrupted => {
                    self.failure = Some((e.kind(), e.to_string()));
                }
                _ => {}
            }
            return read;
        }
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

/// Decodes a run of gzip members and zstd frames, then passes whatever
/// follows them through (see [`decompressed`]).
struct Decoder<R> {
    part: Part<R>,
}

/// Where a [`Decoder`] is.
enum Part<R> {
    /// Between members: the next bytes tell what follows.
    Next(Input<R>),
    Gzip(flate2::bufread::GzDecoder<Input<R>>),
    Zstd(Input<R>, Box<ruzstd::decoding::FrameDecoder>),
    /// A zstd frame failed: what it decoded before is still to be read
    /// out, then the error.
    Failed(Box<ruzstd::decoding::FrameDecoder>, std::io::Error),
    /// Not compressed: read as it is, to the end.
    Text(Input<R>),
    End,
}

/// What the next bytes of a compressed stream are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Gzip,
    Zstd,
    Skippable,
    Text,
    End,
}

/// What the bytes `head` start.
fn what_next(head: &[u8]) -> Next {
    match head {
        [] => Next::End,
        [0x1f, 0x8b, ..] => Next::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Next::Zstd,
        [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Next::Skippable,
        _ => Next::Text,
    }
}

/// A decoding error, saying which format it is about.
fn corrupt(format: &str, e: impl std::fmt::Display) -> std::io::Error {
    decode_error(std::io::ErrorKind::InvalidData, format, e)
}

/// A decoding error for input that ends too soon.
fn cut_short(format: &str, e: impl std::fmt::Display) -> std::io::Error {
    decode_error(std::io::ErrorKind::UnexpectedEof, format, e)
}

fn decode_error(
    kind: std::io::ErrorKind,
    format: &str,
    e: impl std::fmt::Display,
) -> std::io::Error {
    std::io::Error::new(kind, format!("corrupt or truncated {format} data: {e}"))
}

/// Binary prefixes for a window size in an error message.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b => format!("{b} bytes"),
    }
}

/// The length of a zstd frame header and the window it declares (the
/// content size, for a single-segment frame), from its first bytes.
fn zstd_header(head: &[u8]) -> Option<(usize, u64)> {
    let fhd = *head.get(4)?;
    let single = fhd & 0x20 != 0;
    let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
    let fcs = match fhd >> 6 {
        0 => usize::from(single),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let descriptor = usize::from(!single);
    let len = 5 + descriptor + dict + fcs;
    let header = head.get(..len)?;
    let window = if single {
        let field = &header[5 + dict..];
        let value = field
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        value + if fcs == 2 { 256 } else { 0 }
    } else {
        let exponent = u32::from(header[5] >> 3);
        let base = 1u64 << (10 + exponent);
        base + base / 8 * u64::from(header[5] & 7)
    };
    Some((len, window))
}

impl<R: Read> Decoder<R> {
    /// Looks at what follows a member and gets ready to read it.
    fn next(&mut self) -> std::io::Result<()> {
        let Part::Next(mut input) = std::mem::replace(&mut self.part, Part::End) else {
            return Ok(());
        };
        match what_next(input.peek(4)?) {
            Next::End => {}
            Next::Text => self.part = Part::Text(input),
            Next::Gzip => self.part = Part::Gzip(flate2::bufread::GzDecoder::new(input)),
            Next::Skippable => {
                let head = input.peek(8)?;
                let Some(len) = head.get(4..8) else {
                    return Err(cut_short("zstd", "a skippable frame cut short"));
                };
                let len = u32::from_le_bytes(len.try_into().expect("4 bytes"));
                std::io::BufRead::consume(&mut input, 8);
                if !input.skip(u64::from(len))? {
                    return Err(cut_short("zstd", "a skippable frame cut short"));
                }
                self.part = Part::Next(input);
            }
            Next::Zstd => {
                let mut head = [0u8; 18];
                let peeked = input.peek(head.len())?;
                head[..peeked.len()].copy_from_slice(peeked);
                let head = &head[..peeked.len()];
                let Some((len, window)) = zstd_header(head) else {
                    return Err(cut_short("zstd", "a frame header cut short"));
                };
                if window > MAX_ZSTD_WINDOW {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "zstd frame declares a {} window, over the {} limit \
                             (the zstd command line's default)",
                            size(window),
                            size(MAX_ZSTD_WINDOW)
                        ),
                    ));
                }
                let mut frame = Box::new(ruzstd::decoding::FrameDecoder::new());
                frame.init(&head[..len]).map_err(|e| corrupt("zstd", e))?;
                std::io::BufRead::consume(&mut input, len);
                self.part = Part::Zstd(input, frame);
            }
        }
        Ok(())
    }
}

/// Reads what a zstd frame decodes: `Some(n)`, or `None` at its end.
fn zstd_read<R: Read>(
    input: &mut Input<R>,
    frame: &mut ruzstd::decoding::FrameDecoder,
    out: &mut [u8],
) -> std::io::Result<Option<usize>> {
    use ruzstd::decoding::BlockDecodingStrategy;
    while frame.can_collect() < out.len() && !frame.is_finished() {
        let want = out.len() - frame.can_collect();
        if let Err(e) = frame.decode_blocks(&mut *input, BlockDecodingStrategy::UptoBytes(want)) {
            // Cut short: say so, rather than in which field it was.
            if let Some(failed) = input.failed() {
                return Err(failed);
            }
            return Err(match input.peek(1) {
                Ok([]) => cut_short("zstd", "the input ends inside a frame"),
                _ => corrupt("zstd", e),
            });
        }
    }
    match frame.read(out)? {
        0 => match (
            frame.get_checksum_from_data(),
            frame.get_calculated_checksum(),
        ) {
            (Some(want), Some(got)) if want != got => {
                Err(corrupt("zstd", "the frame's checksum does not match"))
            }
            _ => Ok(None),
        },
        n => Ok(Some(n)),
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            match &mut self.part {
                Part::End => return Ok(0),
                Part::Text(input) => return input.read(out),
                Part::Next(_) => self.next()?,
                Part::Gzip(gz) => match gz.read(out) {
                    Ok(0) => {
                        if let Part::Gzip(gz) = std::mem::replace(&mut self.part, Part::End) {
                            self.part = Part::Next(gz.into_inner());
                        }
                    }
                    Ok(n) => return Ok(n),
                    Err(e) => {
                        let e = match (gz.get_ref().failed(), e.kind()) {
                            (Some(failed), _) => failed,
                            (None, std::io::ErrorKind::UnexpectedEof) => cut_short("gzip", e),
                            (None, _) => corrupt("gzip", e),
                        };
                        self.part = Part::End;
                        return Err(e);
                    }
                },
                Part::Zstd(input, frame) => match zstd_read(input, frame, out) {
                    Ok(Some(n)) => return Ok(n),
                    Ok(None) => {
                        if let Part::Zstd(input, _) = std::mem::replace(&mut self.part, Part::End) {
                            self.part = Part::Next(input);
                        }
                    }
                    Err(e) => {
                        // The window the decoder keeps back is good output:
                        // end the frame with an empty last block (and a
                        // checksum, if it wants one) to have it read out.
                        const LAST: [u8; 7] = [1, 0, 0, 0, 0, 0, 0];
                        if !frame.is_finished() {
                            let _ = frame.decode_blocks(
                                &LAST[..],
                                ruzstd::decoding::BlockDecodingStrategy::All,
                            );
                        }
                        if let Part::Zstd(_, frame) = std::mem::replace(&mut self.part, Part::End) {
                            self.part = Part::Failed(frame, e);
                        }
                    }
                },
                Part::Failed(frame, _) => match frame.read(out)? {
                    0 => {
                        if let Part::Failed(_, e) = std::mem::replace(&mut self.part, Part::End) {
                            return Err(e);
                        }
                    }
                    n => return Ok(n),
                },
            }
        }
    }
}

/// A source ready to scan: mapped bytes, or a stream (decompressed if need be).
pub(crate) enum Opened {
    Mapped(memmap2::Mmap),
    /// A stream, and how many bytes of the file it has read so far
    /// (compressed bytes for a compressed file): for progress.
    Stream(
        Box<dyn Read + Send>,
        std::sync::Arc<std::sync::atomic::AtomicU64>,
    ),
}

/// A reader that counts the bytes read through it.
pub(crate) struct Counting<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens a path for scanning: directories and devices are refused; a
/// regular, uncompressed file is mapped when `mmap` allows it.
pub(crate) fn open(path: &Path, mmap: MmapChoice) -> Result<Opened, Error> {
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        source: e,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(io(std::io::Error::other("is a directory")));
    }
    if crate::source::is_device(&meta) {
        return Err(io(std::io::Error::other(
            "is a device, not a log (pipe it in with `-` if you mean it)",
        )));
    }
    if let Some(map) = mmap.open(&file, &meta) {
        if Compression::of(&map[..map.len().min(4)]) == Compression::None {
            return Ok(Opened::Mapped(map));
        }
    }
    let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counting = Counting {
        inner: file,
        read: read.clone(),
    };
    let (_, reader) = decompressed(counting).map_err(io)?;
    Ok(Opened::Stream(reader, read))
}
