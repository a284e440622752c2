//! Decompression: gzip members and zstd frames in any order, text after
//! them, damage reported after every byte before it.

use super::Compression;
use std::io::Read;

/// The largest window a zstd frame may declare: 32 MiB. A decoder keeps a
/// window's worth of output (here in a ring buffer of twice that), so a
/// small file declaring a huge window would otherwise make it hold that
/// much memory. Every level of `zstd` up to `-19` writes at most 8 MiB
/// windows, `--ultra -20` 32 MiB; `--ultra -21`/`-22` and `--long` write
/// more, and such frames are refused (after everything before them was
/// read), like the `zstd` command line refuses windows over 128 MiB: the
/// tighter limit keeps the scan within its 128 MiB memory bound. Such a
/// file is read with `zstd -dc --long=31 FILE | cudnnlog scan -`.
pub const MAX_ZSTD_WINDOW: u64 = 32 << 20;

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
/// ([`Incomplete`](super::Incomplete)).
///
/// # Errors
///
/// An error reading the first bytes, which tell the compression.
///
/// ```
/// use cudnnlog::source::{decompressed, Compression};
/// use std::io::{Read, Write};
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// gz.write_all(b"RuntimeError: CUDA error: an illegal memory access was encountered\n").unwrap();
/// let mut gz = gz.finish().unwrap();
/// gz.extend_from_slice(b"appended after rotation\n");
/// let (kind, mut reader) = decompressed(&gz[..]).unwrap();
/// let mut text = String::new();
/// reader.read_to_string(&mut text).unwrap();
/// assert_eq!(kind, Compression::Gzip);
/// assert!(text.starts_with("RuntimeError: CUDA error") && text.ends_with("appended after rotation\n"));
/// ```
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
    Gzip(Input<R>, Box<Member>),
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
pub(super) enum Next {
    Gzip,
    Zstd,
    Skippable,
    Text,
    End,
}

/// What the bytes `head` start.
pub(super) fn what_next(head: &[u8]) -> Next {
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
            Next::Gzip => {
                gzip_header(&mut input)?;
                self.part = Part::Gzip(input, Box::new(Member::new()));
            }
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
                             (decompress it with `zstd -dc --long=31` and pipe it in)",
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
                Part::Gzip(input, member) => match member.read(input, out) {
                    Ok(Some(n)) => return Ok(n),
                    Ok(None) => {
                        if let Part::Gzip(input, _) = std::mem::replace(&mut self.part, Part::End) {
                            self.part = Part::Next(input);
                        }
                    }
                    Err(e) => {
                        let e = input.failed().unwrap_or(e);
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

/// Reads one byte of a gzip header.
fn header_byte<R: Read>(input: &mut Input<R>) -> std::io::Result<u8> {
    match input.peek(1)? {
        [b] => {
            let b = *b;
            std::io::BufRead::consume(input, 1);
            Ok(b)
        }
        _ => Err(cut_short("gzip", "a member header cut short")),
    }
}

/// Reads a gzip member's header (RFC 1952): magic, method, flags, and the
/// optional extra field, name, comment and header CRC.
fn gzip_header<R: Read>(input: &mut Input<R>) -> std::io::Result<()> {
    let mut fixed = [0u8; 10];
    for b in &mut fixed {
        *b = header_byte(input)?;
    }
    let flags = fixed[3];
    if fixed[2] != 8 || flags & 0xe0 != 0 {
        return Err(corrupt("gzip", "invalid gzip header"));
    }
    if flags & 4 != 0 {
        let len = u16::from_le_bytes([header_byte(input)?, header_byte(input)?]);
        if !input.skip(u64::from(len))? {
            return Err(cut_short("gzip", "a member header cut short"));
        }
    }
    for flag in [8u8, 16] {
        if flags & flag != 0 {
            while header_byte(input)? != 0 {}
        }
    }
    if flags & 2 != 0 {
        header_byte(input)?;
        header_byte(input)?;
    }
    Ok(())
}

/// The body of one gzip member, inflated by [`flate2::Decompress`] itself:
/// its counters say what it wrote even when it fails, so every byte
/// decoded before corrupt data is handed over, however the input arrived
/// (flate2's readers drop the output of the call that fails). It always
/// decodes into a staging buffer of [`STAGE`] bytes, more than the
/// inflater's 32 KiB dictionary: given less room it decodes ahead into the
/// dictionary, and bytes held there when it fails are never handed out.
struct Member {
    inflate: flate2::Decompress,
    crc: flate2::Crc,
    staged: Vec<u8>,
    /// How much of `staged` was read out.
    taken: usize,
    /// The error to return once the bytes decoded before it are read.
    failed: Option<std::io::Error>,
    /// The deflate stream ended: the trailer is next.
    ended: bool,
}

/// The staging buffer of a [`Member`].
const STAGE: usize = 64 << 10;

impl Member {
    fn new() -> Member {
        Member {
            inflate: flate2::Decompress::new(false),
            crc: flate2::Crc::new(),
            staged: Vec::new(),
            taken: 0,
            failed: None,
            ended: false,
        }
    }

    /// Decodes into `out`: `Some(n)` bytes, or `None` at the member's end
    /// (its trailer checked).
    fn read<R: Read>(
        &mut self,
        input: &mut Input<R>,
        out: &mut [u8],
    ) -> std::io::Result<Option<usize>> {
        while self.taken == self.staged.len() {
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if self.ended {
                return self.trailer(input).map(|()| None);
            }
            self.stage(input)?;
        }
        let n = out.len().min(self.staged.len() - self.taken);
        out[..n].copy_from_slice(&self.staged[self.taken..self.taken + n]);
        self.taken += n;
        Ok(Some(n))
    }

    /// Decodes the next bytes into `staged`: at least one, or the end of
    /// the stream (then `ended`), or an error (kept in `failed` when bytes
    /// came before it).
    fn stage<R: Read>(&mut self, input: &mut Input<R>) -> std::io::Result<()> {
        use std::io::BufRead;
        self.staged.resize(STAGE, 0);
        self.taken = 0;
        let mut have = 0;
        loop {
            let available = input.fill_buf()?;
            let at_end = available.is_empty();
            let (was_in, was_out) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self.inflate.decompress(
                available,
                &mut self.staged[have..],
                flate2::FlushDecompress::None,
            );
            let consumed = (self.inflate.total_in() - was_in) as usize;
            let produced = (self.inflate.total_out() - was_out) as usize;
            input.consume(consumed);
            self.crc.update(&self.staged[have..have + produced]);
            have += produced;
            let problem = match status {
                Ok(flate2::Status::StreamEnd) => {
                    self.ended = true;
                    None
                }
                Ok(_) if have > 0 => None,
                Ok(_) if at_end => Some(cut_short("gzip", "incomplete deflate stream")),
                Ok(_) if consumed > 0 => continue,
                Ok(_) => Some(corrupt("gzip", "deflate data that makes no progress")),
                Err(e) => Some(corrupt("gzip", e)),
            };
            self.staged.truncate(have);
            match problem {
                Some(e) if have == 0 => return Err(e),
                problem => self.failed = problem,
            }
            return Ok(());
        }
    }

    /// Checks the 8-byte trailer: the CRC-32 and the length of the text.
    fn trailer<R: Read>(&mut self, input: &mut Input<R>) -> std::io::Result<()> {
        let mut trailer = [0u8; 8];
        for b in &mut trailer {
            *b = match input.peek(1)? {
                [b] => *b,
                _ => return Err(cut_short("gzip", "the member's trailer cut short")),
            };
            std::io::BufRead::consume(input, 1);
        }
        let crc = u32::from_le_bytes(trailer[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(trailer[4..].try_into().expect("4 bytes"));
        if crc != self.crc.sum() || len != self.crc.amount() {
            return Err(corrupt(
                "gzip",
                "the member's checksum does not match its text",
            ));
        }
        Ok(())
    }
}
