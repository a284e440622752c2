//! The decoders of `source.rs` (`source::decompressed`): gzip members and
//! zstd frames in any order, skippable frames, text after them, damage,
//! and the zstd window cap (`MAX_ZSTD_WINDOW`).
//!
//! The first 5 bytes of the input are parameters, the rest the payload:
//!
//! * byte 0: bits 0-2 the mode (below); bit 3 the input fails with an I/O
//!   error part way (a second decode); bit 4 the stream is also scanned
//!   (when it decodes to at most 256 KiB); bits 5-6 how the input's reads
//!   are sized, bit 7 `Interrupted` errors among them;
//! * bytes 1-4: the seed of every other choice (split points, levels,
//!   cuts, mutations, read sizes).
//!
//! Modes: 0 and 6 the payload as it is (the fuzzer finds the magic numbers
//! itself); 1 one gzip member; 2 a run of 1-4 gzip members and zstd frames,
//! skippable frames among them, and maybe text after them; 3 and 7 such a
//! run cut short; 4 such a run with 1-4 bytes changed (and maybe cut); 5
//! such a run, then a zstd frame header of fuzz-chosen fields (often over
//! the window cap) and the payload's rest as its blocks.
//!
//! Asserts:
//!
//! * no panic, and output stops at 64 MiB (a bomb is fine, not a hang);
//! * `decompressed` tells the compression from the first bytes as the
//!   magic numbers say; a payload that starts with none is passed through
//!   unchanged;
//! * a valid single gzip member, and a valid run, decode to exactly the
//!   plain bytes, `Ok`;
//! * a run cut at byte `c`: cut on a member's start or in the text after
//!   the run, `Ok` with the bytes before; cut 1-3 bytes into a member (not
//!   yet a magic number), `Ok` with those bytes as text; cut anywhere else,
//!   an `UnexpectedEof` or `InvalidData` error after every member before
//!   the cut and a prefix of the cut member's bytes;
//! * a zstd frame declaring a window over `MAX_ZSTD_WINDOW` (computed here
//!   from the zstd spec, single-segment frames by their content size) is an
//!   `InvalidData` error naming the limit, after exactly the bytes of the
//!   run before it; any frame header: the run before it is decoded whole;
//! * the same bytes and the same end (`Ok`, or the same error kind and
//!   message) whatever the read sizes: the input in short reads with
//!   `Interrupted` errors, the output in varying sizes, against one big
//!   input and 64 KiB output reads; a read at the end returns 0 again.
//!   Weakened for a gzip member that meets corrupt deflate data: there the
//!   same end, and one decode's bytes a prefix of the other's (`lossy`:
//!   flate2 drops what the failing read call decoded);
//! * an input that fails with an I/O error part way: a prefix of the clean
//!   decode's bytes, and, if the clean decode reached the end, the
//!   injected error itself (kind and message), not a decoding error;
//! * scanned (`Scanner::scan_reader` on the decoder): `Ok` with the decoded
//!   byte count, or the decoder's error with an `Incomplete` counting the
//!   decoded bytes (a plain error when there were none); the report is
//!   that of the decoded bytes read in one big read (for corrupt deflate
//!   data, `lossy`: the bytes counted may differ, the report is that of
//!   that many of the decoded bytes when a decode here saw them).
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::{report_of, scanner, trace, whole, Chunked, Rng, Sizes, FAILURES, FAILURE_MESSAGE};
use cudnnlog::report::FindingsSink;
use cudnnlog::source::{decompressed, Compression, Incomplete, MAX_ZSTD_WINDOW};
use cudnnlog::Error;
use libfuzzer_sys::fuzz_target;
use std::io::{ErrorKind, Read, Write};
use std::ops::Range;

/// Output past this is not read: a bomb is fine, it must only not hang.
const CAP: usize = 64 << 20;
/// The decodes with short reads stop here (tiny reads of 64 MiB are slow).
const SHORT_CAP: usize = 4 << 20;
/// Only decodes up to this size are also scanned.
const SCAN_CAP: usize = 256 << 10;

/// What the next bytes are, by the magic numbers of the formats (as the
/// spec has them, not as `source.rs` tells them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    End,
    Gzip,
    Zstd,
    Skippable,
    Text,
}

fn next_is(head: &[u8]) -> Next {
    match head {
        [] => Next::End,
        [0x1f, 0x8b, ..] => Next::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Next::Zstd,
        [m, 0x2a, 0x4d, 0x18, ..] if m & 0xf0 == 0x50 => Next::Skippable,
        _ => Next::Text,
    }
}

/// One part of a built run: its encoded and decoded byte ranges.
#[derive(Clone, Debug)]
struct Seg {
    kind: Next,
    enc: Range<usize>,
    dec: Range<usize>,
}

/// A run of members built from plain bytes.
#[derive(Default, Debug)]
struct Built {
    enc: Vec<u8>,
    dec: Vec<u8>,
    segs: Vec<Seg>,
}

impl Built {
    fn push(&mut self, kind: Next, enc: &[u8], dec: &[u8]) {
        let (e, d) = (self.enc.len(), self.dec.len());
        self.enc.extend_from_slice(enc);
        self.dec.extend_from_slice(dec);
        self.segs.push(Seg {
            kind,
            enc: e..self.enc.len(),
            dec: d..self.dec.len(),
        });
    }
}

fn gzip(plain: &[u8], rng: &mut Rng) -> Vec<u8> {
    let level = flate2::Compression::new(rng.below(10) as u32);
    let mut builder = flate2::GzBuilder::new();
    if rng.one_in(4) {
        // Optional header fields: flate2 writes FNAME, FCOMMENT, FEXTRA.
        builder = builder
            .filename(format!("train-{}.log", rng.below(1000)))
            .comment("rotated")
            .extra(vec![b'x'; rng.below(40)])
            .mtime(rng.next() as u32);
    }
    let mut gz = builder.write(Vec::new(), level);
    gz.write_all(plain).expect("to a Vec");
    gz.finish().expect("to a Vec")
}

fn zstd(plain: &[u8], rng: &mut Rng) -> Vec<u8> {
    use ruzstd::encoding::{compress_to_vec, CompressionLevel};
    let level = match rng.one_in(3) {
        true => CompressionLevel::Uncompressed,
        false => CompressionLevel::Fastest,
    };
    compress_to_vec(plain, level)
}

/// `payload` cut into 1 to `max` pieces, each a gzip member or a zstd
/// frame, some after a skippable frame; the last one maybe left as text
/// after the run (when it does not start with a magic number).
fn build(payload: &[u8], rng: &mut Rng, max: usize, text: bool) -> Built {
    let n = 1 + rng.below(max);
    let mut cuts: Vec<usize> = (1..n).map(|_| rng.below(payload.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.insert(0, 0);
    cuts.push(payload.len());
    let mut built = Built::default();
    for (i, w) in cuts.windows(2).enumerate() {
        let piece = &payload[w[0]..w[1]];
        if rng.one_in(4) {
            let mut frame = vec![0x50 | rng.below(16) as u8, 0x2a, 0x4d, 0x18];
            let len = rng.below(40);
            frame.extend_from_slice(&(len as u32).to_le_bytes());
            frame.extend((0..len).map(|_| rng.next() as u8));
            built.push(Next::Skippable, &frame, b"");
        }
        let head = &piece[..piece.len().min(4)];
        if i == n - 1 && text && next_is(head) == Next::Text && rng.one_in(2) {
            built.push(Next::Text, piece, piece);
        } else if rng.one_in(2) {
            built.push(Next::Gzip, &gzip(piece, rng), piece);
        } else {
            built.push(Next::Zstd, &zstd(piece, rng), piece);
        }
    }
    built
}

/// A zstd frame header of random fields, and the window it declares (for
/// a single-segment frame, its content size): RFC 8878, 3.1.1.1.
fn zstd_header(rng: &mut Rng) -> (Vec<u8>, u64) {
    let fhd = rng.next() as u8;
    let single = fhd & 0x20 != 0;
    let dict = [0, 1, 2, 4][usize::from(fhd & 3)];
    let fcs = match fhd >> 6 {
        0 => usize::from(single),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut head = vec![0x28, 0xb5, 0x2f, 0xfd, fhd];
    let descriptor = rng.next() as u8;
    if !single {
        head.push(descriptor);
    }
    head.extend((0..dict).map(|_| rng.next() as u8));
    let content = rng.next().to_le_bytes();
    // Small and huge content sizes alike: keep 1 to `fcs` bytes of it.
    let keep = 1 + rng.below(fcs.max(1));
    let field: Vec<u8> = (0..fcs)
        .map(|i| if i < keep { content[i] } else { 0 })
        .collect();
    head.extend_from_slice(&field);
    let window = if single {
        let value = field
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        value + if fcs == 2 { 256 } else { 0 }
    } else {
        let exponent = u32::from(descriptor >> 3);
        let base = 1u64 << (10 + exponent);
        base + base / 8 * u64::from(descriptor & 7)
    };
    (head, window)
}

/// What the error for a window over the cap says: `over the 32 MiB limit`
/// (the cap's size as `source.rs` writes it, for a whole number of MiB or
/// GiB; otherwise only `limit`).
fn window_limit() -> String {
    match MAX_ZSTD_WINDOW {
        w if w >= 1 << 30 && w % (1 << 30) == 0 => format!("over the {} GiB limit", w >> 30),
        w if w >= 1 << 20 && w % (1 << 20) == 0 => format!("over the {} MiB limit", w >> 20),
        _ => "limit".to_string(),
    }
}

/// How a decode ended.
#[derive(Debug)]
enum End {
    Ok,
    Err(std::io::Error),
    /// Stopped at the cap, still going.
    Capped,
}

impl End {
    /// For `trace`: ok, capped, or the error's kind.
    fn brief(&self) -> String {
        match self {
            End::Ok => "ok".into(),
            End::Capped => "capped".into(),
            End::Err(e) => format!("{:?}", e.kind()),
        }
    }

    fn same(&self, other: &End) -> bool {
        match (self, other) {
            (End::Ok, End::Ok) | (End::Capped, End::Capped) => true,
            (End::Err(a), End::Err(b)) => a.kind() == b.kind() && a.to_string() == b.to_string(),
            _ => false,
        }
    }
}

/// Whether a decode ended on corrupt deflate data in a gzip member, where
/// how much comes out depends on how the reads were cut.
///
/// The library decodes gzip with `flate2::Decompress` into a 64 KiB
/// staging buffer, so the output read sizes do not matter; the input read
/// sizes can, within the inflater's 32 KiB window: what it decoded ahead
/// in the window when it met the damage is lost
/// (`fuzz/regressions/decode-gzip-corrupt-read-size.bin` lost 11 bytes to
/// the 64 KiB reads of flate2's readers before; `decode-gzip-small-reads.bin`
/// lost all but the first read's bytes to small output reads). Where it
/// ends a decode, decodes are only asked to agree up to the shorter one.
fn lossy(end: &End) -> bool {
    match end {
        End::Err(e) => {
            let m = e.to_string();
            m.starts_with("corrupt or truncated gzip data") && m.contains("deflate")
        }
        _ => false,
    }
}

/// One of the two is a prefix of the other.
fn prefix_related(a: &[u8], b: &[u8]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Reads a decoder to its end, an error, or `cap` bytes; each read of a
/// size `sizes` picks (64 KiB without).
fn drain(reader: &mut dyn Read, mut sizes: Option<(Rng, Sizes)>, cap: usize) -> (Vec<u8>, End) {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut interrupted = 0usize;
    loop {
        if out.len() >= cap {
            return (out, End::Capped);
        }
        let want = match &mut sizes {
            None => buf.len(),
            Some((rng, sizes)) => sizes.pick(rng, buf.len()),
        }
        .min(buf.len())
        .min(cap - out.len());
        match reader.read(&mut buf[..want]) {
            Ok(0) => {
                // Fused: a read at the end is the end again.
                loop {
                    match reader.read(&mut buf[..want]) {
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        again => {
                            assert_eq!(again.ok(), Some(0), "read after the end");
                            break;
                        }
                    }
                }
                return (out, End::Ok);
            }
            Ok(n) => {
                assert!(n <= want, "read {n} bytes into {want}");
                out.extend_from_slice(&buf[..n]);
            }
            // As `read_to_end` does (the input's own are retried below
            // the decoder; text passes them through).
            Err(e) if e.kind() == ErrorKind::Interrupted => {
                interrupted += 1;
                assert!(interrupted < 1 << 24, "endless Interrupted");
            }
            Err(e) => return (out, End::Err(e)),
        }
    }
}

/// Decodes `input` from a slice, in 64 KiB reads.
fn decode_whole(input: &[u8], cap: usize) -> (Compression, Vec<u8>, End) {
    let (kind, mut reader) = decompressed(input).expect("a slice never fails");
    let (out, end) = drain(&mut reader, None, cap);
    (kind, out, end)
}

/// The kind `decompressed` must tell from `input`'s first bytes.
fn compression_of(input: &[u8]) -> Compression {
    match next_is(&input[..input.len().min(4)]) {
        Next::Gzip => Compression::Gzip,
        Next::Zstd | Next::Skippable => Compression::Zstd,
        Next::End | Next::Text => Compression::None,
    }
}

/// What a clean decode of the input must give, where the mode knows.
enum Expect {
    /// Nothing beyond the general checks.
    Anything,
    /// Exactly these bytes, `Ok`.
    Exactly(Vec<u8>),
    /// An error of one of these kinds, after bytes that start with `at_least`
    /// and are a prefix of `at_most`.
    Error {
        kinds: &'static [ErrorKind],
        at_least: Vec<u8>,
        at_most: Vec<u8>,
        message: Option<String>,
    },
    /// Starts with these bytes (the run before a random frame header).
    StartsWith(Vec<u8>),
}

const DAMAGED: &[ErrorKind] = &[ErrorKind::UnexpectedEof, ErrorKind::InvalidData];

/// What a run cut at `cut` (`< enc.len()`) decodes to.
fn cut_expectation(built: &Built, cut: usize) -> Expect {
    let seg = built
        .segs
        .iter()
        .find(|s| s.enc.contains(&cut))
        .expect("the cut is inside the run");
    let before = built.dec[..seg.dec.start].to_vec();
    let into = cut - seg.enc.start;
    if into == 0 {
        return Expect::Exactly(before);
    }
    if seg.kind == Next::Text {
        return Expect::Exactly(built.dec[..seg.dec.start + into].to_vec());
    }
    let head = &built.enc[seg.enc.start..cut];
    if next_is(head) == Next::Text {
        // Fewer bytes than the magic number: text after the run.
        let mut out = before;
        out.extend_from_slice(head);
        return Expect::Exactly(out);
    }
    Expect::Error {
        kinds: DAMAGED,
        at_least: before,
        at_most: built.dec[..seg.dec.end].to_vec(),
        message: None,
    }
}

fn check(name: &str, out: &[u8], end: &End, expect: &Expect) {
    match expect {
        Expect::Anything => {}
        Expect::Exactly(want) => {
            assert!(matches!(end, End::Ok), "{name}: ended {end:?}, want Ok");
            assert!(
                out == &want[..],
                "{name}: {} bytes decoded, want {}",
                out.len(),
                want.len()
            );
        }
        Expect::Error {
            kinds,
            at_least,
            at_most,
            message,
        } => {
            let End::Err(e) = end else {
                panic!(
                    "{name}: ended {end:?} after {} bytes, want an error",
                    out.len()
                );
            };
            assert!(
                kinds.contains(&e.kind()),
                "{name}: error {e:?}, want {kinds:?}"
            );
            if let Some(m) = message {
                assert!(
                    e.to_string().contains(m.as_str()),
                    "{name}: error {e}, want {m:?}"
                );
            }
            assert!(
                out.starts_with(at_least) && at_most.starts_with(out),
                "{name}: {} bytes decoded before {e}, want {}..={} of the plain bytes",
                out.len(),
                at_least.len(),
                at_most.len()
            );
        }
        Expect::StartsWith(want) => {
            assert!(
                out.starts_with(want),
                "{name}: the run before the frame: {end:?}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut params = [0u8; 5];
    let n = data.len().min(params.len());
    params[..n].copy_from_slice(&data[..n]);
    let payload = &data[n..];
    let flags = params[0];
    let mut rng = Rng::new(u64::from(u32::from_le_bytes([
        params[1], params[2], params[3], params[4],
    ])));

    let (input, expect): (Vec<u8>, Expect) = match flags & 7 {
        1 => (gzip(payload, &mut rng), Expect::Exactly(payload.to_vec())),
        2 => {
            let built = build(payload, &mut rng, 4, true);
            let dec = built.dec.clone();
            (built.enc, Expect::Exactly(dec))
        }
        3 | 7 => {
            let built = build(payload, &mut rng, 4, true);
            let cut = rng.below(built.enc.len());
            let expect = cut_expectation(&built, cut);
            let mut enc = built.enc;
            enc.truncate(cut);
            (enc, expect)
        }
        4 => {
            let mut enc = build(payload, &mut rng, 4, true).enc;
            for _ in 0..1 + rng.below(4) {
                if enc.is_empty() {
                    break;
                }
                let at = rng.below(enc.len());
                match rng.one_in(2) {
                    true => enc[at] ^= 1 << rng.below(8),
                    false => enc[at] = rng.next() as u8,
                }
            }
            if rng.one_in(2) {
                let cut = rng.below(enc.len() + 1);
                enc.truncate(cut);
            }
            (enc, Expect::Anything)
        }
        5 => {
            let split = rng.below(payload.len() + 1);
            let (before, after) = payload.split_at(split);
            let built = match rng.one_in(3) {
                true => Built::default(),
                false => build(before, &mut rng, 2, false),
            };
            let (head, window) = zstd_header(&mut rng);
            let mut enc = built.enc;
            enc.extend_from_slice(&head);
            enc.extend_from_slice(after);
            let expect = if window > MAX_ZSTD_WINDOW {
                Expect::Error {
                    kinds: &[ErrorKind::InvalidData],
                    at_least: built.dec.clone(),
                    at_most: built.dec,
                    message: Some(window_limit()),
                }
            } else {
                Expect::StartsWith(built.dec)
            };
            (enc, expect)
        }
        _ => {
            let expect = match compression_of(payload) {
                Compression::None => Expect::Exactly(payload.to_vec()),
                _ => Expect::Anything,
            };
            (payload.to_vec(), expect)
        }
    };

    // The clean decode: one slice, 64 KiB reads.
    let (kind, clean, end) = decode_whole(&input, CAP);
    assert_eq!(kind, compression_of(&input), "told from the first bytes");
    assert!(clean.len() <= CAP);
    check("clean", &clean, &end, &expect);
    let expected = match &expect {
        Expect::Anything => "anything",
        Expect::Exactly(_) => "exactly",
        Expect::Error {
            message: Some(_), ..
        } => "error over the window cap",
        Expect::Error { .. } => "error after a prefix",
        Expect::StartsWith(_) => "starts with the run",
    };
    trace(format_args!(
        "decode mode {} {kind:?} expect {expected}: {}",
        flags & 7,
        end.brief()
    ));

    // Short reads on both sides, `Interrupted` among the input's.
    let sizes_in = Sizes::from_bits(flags >> 5);
    let chunked =
        Chunked::new(&input, Rng::new(rng.next()), sizes_in).interrupting(flags & 0x80 != 0);
    let (kind2, mut reader) = decompressed(chunked).expect("Interrupted is retried");
    assert_eq!(kind2, kind);
    let out_sizes = Sizes::from_bits(rng.next() as u8);
    let (short, short_end) = drain(
        &mut reader,
        Some((Rng::new(rng.next()), out_sizes)),
        SHORT_CAP,
    );
    drop(reader);
    match short_end {
        End::Capped if lossy(&end) => {
            assert!(prefix_related(&short, &clean), "short reads: other bytes")
        }
        End::Capped => assert!(clean.starts_with(&short), "short reads: other bytes"),
        // Weakened (see `lossy`): from exactly the same bytes to a prefix.
        _ if lossy(&end) || lossy(&short_end) => {
            trace(format_args!(
                "decode corrupt deflate: short reads {} one read {}",
                match short.len().cmp(&clean.len()) {
                    std::cmp::Ordering::Less => "fewer than",
                    std::cmp::Ordering::Equal => "as many as",
                    std::cmp::Ordering::Greater => "more than",
                },
                end.brief()
            ));
            assert!(prefix_related(&short, &clean), "short reads: other bytes");
            assert!(
                short_end.same(&end),
                "short reads ended {short_end:?}, one read {end:?}"
            );
        }
        _ => {
            assert!(
                short == clean,
                "short reads: {} bytes, one read {}",
                short.len(),
                clean.len()
            );
            assert!(
                short_end.same(&end),
                "short reads ended {short_end:?}, one read {end:?}"
            );
        }
    }
    // Both are prefixes of what the stream decodes to.
    let longest = if short.len() > clean.len() {
        &short
    } else {
        &clean
    };

    // The input fails part way.
    if flags & 8 != 0 && !input.is_empty() {
        let at = rng.below(input.len());
        let failure = FAILURES[rng.below(FAILURES.len())];
        let failing = Chunked::new(&input, Rng::new(rng.next()), sizes_in).failing_at(at, failure);
        match decompressed(failing) {
            // The magic number could not be read.
            Err(e) => {
                trace(format_args!("decode failing input: in the magic number"));
                assert!(at < 4, "decompressed failed after {at} bytes");
                assert_eq!(
                    (e.kind(), e.to_string().as_str()),
                    (failure, FAILURE_MESSAGE)
                );
            }
            Ok((_, mut reader)) => {
                assert!(at >= 4, "decompressed did not fail after {at} bytes");
                let (out, failed_end) = drain(&mut reader, None, SHORT_CAP);
                trace(format_args!(
                    "decode failing input: clean {} failing {}{}",
                    end.brief(),
                    failed_end.brief(),
                    match &failed_end {
                        End::Err(e) if e.to_string() == FAILURE_MESSAGE => " (injected)",
                        _ => "",
                    }
                ));
                match lossy(&end) || lossy(&failed_end) {
                    // Weakened (see `lossy`).
                    true => assert!(prefix_related(&out, longest), "failing input: other bytes"),
                    false => assert!(clean.starts_with(&out), "failing input: other bytes"),
                }
                match (&end, &failed_end) {
                    (_, End::Capped) => {}
                    (End::Ok, End::Err(e)) => {
                        assert_eq!(
                            (e.kind(), e.to_string().as_str()),
                            (failure, FAILURE_MESSAGE),
                            "failing input: not the injected error"
                        );
                    }
                    (End::Ok, End::Ok) => {
                        panic!("a failure at byte {at} of {} went unseen", input.len())
                    }
                    (_, End::Ok) => {
                        panic!("a failing input decoded Ok where the clean one did not")
                    }
                    (_, End::Err(_)) => {}
                }
            }
        }
    }

    // Scanned: the driver's error is the decoder's, with what it decoded.
    if flags & 0x10 != 0 && clean.len() <= SCAN_CAP && !matches!(end, End::Capped) {
        let s = scanner();
        let mut sink = FindingsSink::new(s.catalog());
        let (_, reader) = decompressed(&input[..]).expect("a slice never fails");
        let result = s.scan_reader("", reader, &mut sink);
        let want = whole(&clean);
        match (result, &end) {
            (Ok(info), End::Ok) => {
                trace(format_args!("decode scanned: ok"));
                assert_eq!(info.bytes, clean.len() as u64);
                assert_eq!(
                    report_of(sink),
                    want,
                    "scanned decoder vs its bytes"
                );
            }
            (Err(e), End::Err(clean_err)) => {
                let Error::Io { source, .. } = &e else {
                    panic!("not an I/O error: {e:?}");
                };
                assert_eq!(source.kind(), clean_err.kind());
                assert!(!e.to_string().contains('\n'), "one line: {e}");
                // Weakened where the decoder's output depends on read sizes
                // (see `lossy`): the scanner's reads are not the clean
                // decode's, so it may have seen fewer or more bytes.
                let lossy = lossy(&end);
                match Incomplete::of(&e) {
                    None => {
                        trace(format_args!("decode scanned: plain error"));
                        assert!(
                            clean.is_empty() || lossy,
                            "no Incomplete after {} bytes: {e}",
                            clean.len()
                        );
                        assert_eq!(source.to_string(), clean_err.to_string());
                        assert!(
                            report_of(sink).findings.is_empty(),
                            "findings from no bytes"
                        );
                    }
                    Some(incomplete) => {
                        assert!(
                            !clean.is_empty() || lossy,
                            "an Incomplete after no byte: {e}"
                        );
                        assert_eq!(incomplete.error.to_string(), clean_err.to_string());
                        let bytes = incomplete.info.bytes as usize;
                        let got = report_of(sink);
                        if !lossy {
                            trace(format_args!("decode scanned: Incomplete"));
                            assert_eq!(bytes, clean.len(), "Incomplete counts the bytes decoded");
                            assert_eq!(got, want, "scanned failing decoder vs its bytes");
                        } else if bytes <= longest.len() {
                            trace(format_args!("decode scanned: Incomplete, corrupt deflate"));
                            assert!(bytes > 0);
                            assert_eq!(
                                got,
                                whole(&longest[..bytes]),
                                "scanned corrupt gzip vs its bytes"
                            );
                        } else {
                            // More than any decode here saw: bytes unknown.
                            trace(format_args!(
                                "decode scanned: Incomplete, corrupt deflate, unchecked"
                            ));
                        }
                    }
                }
            }
            (result, _) => panic!("scanned: {result:?}, decoded: {end:?}"),
        }
    }
});
