//! The stream driver (`Scanner::scan_reader`) fed through short reads.
//!
//! The first 4 bytes of the input are parameters, the rest is the stream:
//!
//! * byte 0: bits 0-1 how reads are sized (1-16 B, 1-600 B, 1 B-8 KiB,
//!   log-uniform up to 16 KiB); bit 2 `Interrupted` errors before about one
//!   read in four (the driver's `fill` reads with `read_to_end`, which
//!   retries them); bits 3-4 both set (one input in four): the reader fails
//!   with an I/O error part way; bits 5-7 which error kind;
//! * bytes 1-2: the seed of the read sizes;
//! * byte 3: where the reader fails: after n bytes for n < 8, else after
//!   the fraction n/255 of the stream.
//!
//! Asserts, with the small-block scanner of `scan.rs` (4 KiB blocks, 1 KiB
//! contexts):
//!
//! * no panic;
//! * a stream read to its end: `Ok`, its source's bytes are the bytes
//!   delivered and its lines those of one big read; its set of finding
//!   classes is that of the same bytes read in one big read, and so is the
//!   whole report (stronger than the classes: `fill` reads until a block is
//!   full or the stream ends, so how the reads were cut cannot matter);
//! * a stream that fails after `k` bytes: an `Error::Io` of the injected
//!   kind; for `k > 0` its source is a `source::Incomplete` whose info
//!   counts exactly `k` bytes and the lines of those bytes, whose error is
//!   the injected one, and the sink's report is that of the first `k`
//!   bytes read to their end; for `k = 0` a plain error and no finding.
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::{
    classes, report_of, scanner, trace, whole, Chunked, Rng, Sizes, FAILURES, FAILURE_MESSAGE,
};
use cudnnlog::report::FindingsSink;
use cudnnlog::source::Incomplete;
use cudnnlog::Error;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut params = [0u8; 4];
    let n = data.len().min(params.len());
    params[..n].copy_from_slice(&data[..n]);
    let body = &data[n..];
    let [flags, seed_lo, seed_hi, cut] = params;
    let rng = Rng::new(u64::from(u16::from_le_bytes([seed_lo, seed_hi])));
    let mut reader = Chunked::new(body, rng, Sizes::from_bits(flags)).interrupting(flags & 4 != 0);
    let fail = (flags & 0x18 == 0x18).then(|| {
        // 0 to 7 bytes (none at all: a plain error), or a fraction.
        let at = match cut {
            0..8 => usize::from(cut),
            _ => body.len() * usize::from(cut) / 255,
        }
        .min(body.len());
        let kind = FAILURES[usize::from(flags >> 5) % FAILURES.len()];
        (at, kind)
    });
    if let Some((at, kind)) = fail {
        reader = reader.failing_at(at, kind);
    }

    let s = scanner();
    let mut sink = FindingsSink::new(s.catalog());
    let result = s.scan_reader("", &mut reader, &mut sink);

    let interrupted = if reader.interrupted > 0 {
        " interrupted"
    } else {
        ""
    };
    match (fail, result) {
        (None, Ok(info)) => {
            trace(format_args!("stream read to the end{interrupted}"));
            assert_eq!(info.bytes, body.len() as u64, "bytes delivered");
            assert_eq!(reader.delivered(), body.len());
            let short = report_of(sink);
            let big = whole(body);
            assert_eq!(
                classes(&short),
                classes(&big),
                "classes: short reads vs one read"
            );
            assert_eq!(short, big, "report: short reads vs one read");
        }
        (None, Err(e)) => panic!("a reader that never fails gave an error: {e}"),
        (Some(_), Ok(info)) => panic!("a failing reader gave Ok({info:?})"),
        (Some((at, kind)), Err(e)) => {
            let Error::Io { source, .. } = &e else {
                panic!("not an I/O error: {e:?}");
            };
            assert_eq!(source.kind(), kind, "the injected error's kind: {e}");
            let message = e.to_string();
            assert!(!message.contains('\n'), "one line: {message:?}");
            assert!(
                message.contains(FAILURE_MESSAGE),
                "the injected error: {message:?}"
            );
            assert_eq!(reader.delivered(), at);
            let prefix = &body[..at];
            match Incomplete::of(&e) {
                None => {
                    trace(format_args!("stream failed before a byte{interrupted}"));
                    assert_eq!(at, 0, "no Incomplete after {at} bytes: {e:?}");
                    let report = report_of(sink);
                    assert!(report.findings.is_empty(), "findings from no bytes");
                }
                Some(incomplete) => {
                    trace(format_args!(
                        "stream failed part way: Incomplete{interrupted}"
                    ));
                    assert!(at > 0, "an Incomplete after no byte: {e:?}");
                    assert_eq!(
                        incomplete.info.bytes, at as u64,
                        "Incomplete counts the bytes before"
                    );
                    assert_eq!(incomplete.error.kind(), kind);
                    assert_eq!(incomplete.error.to_string(), FAILURE_MESSAGE);
                    let short = report_of(sink);
                    let big = whole(prefix);
                    assert_eq!(
                        classes(&short),
                        classes(&big),
                        "classes: failed stream vs its prefix"
                    );
                    assert_eq!(short, big, "report: failed stream vs its prefix");
                }
            }
        }
    }
});
