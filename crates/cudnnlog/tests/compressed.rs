//! Compressed input from hostile or damaged files: truncated and corrupt
//! archives keep what came before the damage, every gzip member and zstd
//! frame is read (and text after them), a zstd window is capped, and a
//! decompression bomb stays in bounded memory. Every input is made here,
//! at run time.

use cudnnlog::report::FindingsSink;
use cudnnlog::source::{decompressed, Compression, Incomplete, SourceInfo, MAX_ZSTD_WINDOW};
use cudnnlog::{Catalog, Error, MmapChoice, Report, Scanner, ScannerBuilder};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");
const MISMATCH: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g09_torch_device_mismatch.log");
const MISMATCH_LINE: &str = "RuntimeError: Expected all tensors to be on the same device, but got mat1 is on cpu, different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)\n";

fn scanner() -> Scanner {
    // Small blocks: a damaged stream is cut across many windows.
    ScannerBuilder::new()
        .block_size(16 << 10)
        .build(Catalog::builtin().unwrap())
}

/// The OOM capture (its error on line 29), then `filler` lines of training
/// progress that compress like real ones.
fn long_log(filler: usize) -> Vec<u8> {
    let mut log = OOM.to_vec();
    for i in 0..filler {
        let loss = (i * 7919) % 10007;
        log.extend_from_slice(
            format!(
                "INFO 2026-11-29 19:41:{:02} step {i} loss 0.{loss:04} lr 3e-4\n",
                i % 60
            )
            .as_bytes(),
        );
    }
    log
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// Scans `bytes` as standard input is scanned: decompressed, streamed.
fn scan(bytes: &[u8]) -> (Report, Result<SourceInfo, Error>) {
    scan_reader(bytes)
}

fn scan_reader(reader: impl Read + Send) -> (Report, Result<SourceInfo, Error>) {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    let result = match decompressed(reader) {
        Ok((_, reader)) => scanner.scan_reader("<stdin>", reader, &mut sink),
        Err(source) => Err(Error::Io {
            path: "<stdin>".into(),
            source,
        }),
    };
    // A read cut short leaves the sink with what was read before it.
    (sink.into_report(), result)
}

fn classes(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.class.as_str()).collect()
}

/// The incomplete read an error reports; panics if it is another error.
fn incomplete(result: &Result<SourceInfo, Error>) -> &Incomplete {
    match result {
        Ok(info) => panic!("no error: {info:?}"),
        Err(e) => Incomplete::of(e).unwrap_or_else(|| panic!("not incomplete: {e}")),
    }
}

fn one_line(e: &Error) -> String {
    let s = e.to_string();
    assert_eq!(s.lines().count(), 1, "{s}");
    s
}

/// A scratch file, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, bytes: &[u8]) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("cudnnlog-compressed-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Scans a file as the CLI does (`scan_path_parallel`, mapping allowed).
fn scan_file(path: &Path) -> (Report, Result<SourceInfo, Error>) {
    let scanner = scanner();
    let mut sink = FindingsSink::new(scanner.catalog());
    // SAFETY: the files scanned here are not modified while scanned.
    let mmap = unsafe { MmapChoice::auto() };
    let result = scanner.scan_path_parallel(path, mmap, &mut sink, &|_| {});
    // A read cut short leaves the sink with what was read before it.
    (sink.into_report(), result)
}

#[test]
fn a_truncated_gzip_keeps_every_line_before_the_cut() {
    let log = long_log(20_000);
    let gz = gzip(&log);
    for cut in [
        gz.len() / 5,
        gz.len() / 2,
        gz.len() - 9,
        gz.len() - 4,
        gz.len() - 1,
    ] {
        let (report, result) = scan(&gz[..cut]);
        let cut_short = incomplete(&result);
        let msg = one_line(result.as_ref().unwrap_err());
        assert!(
            msg.starts_with("<stdin>: corrupt or truncated gzip data"),
            "{msg}"
        );
        assert!(msg.ends_with(" lines, which were scanned)"), "{msg}");
        assert_eq!(classes(&report), ["cuda.oom"], "cut at {cut}");
        assert_eq!(report.findings[0].first.line, 29);
        // Deflate streams: everything but the last few bytes decodes.
        let info = &cut_short.info;
        assert_eq!(&log[..info.bytes as usize], &decoded_prefix(&gz[..cut])[..]);
        let share = cut as f64 / gz.len() as f64;
        assert!(
            info.bytes as f64 >= share * log.len() as f64 * 0.9,
            "cut at {cut}/{}: {} of {} bytes",
            gz.len(),
            info.bytes,
            log.len()
        );
        let lines = log[..info.bytes as usize].split(|&b| b == b'\n').count() as u64
            - u64::from(log[..info.bytes as usize].ends_with(b"\n"));
        assert_eq!(info.lines, lines);
    }
    // Only the 8-byte trailer (CRC and length) missing: all of the text.
    let (_, result) = scan(&gz[..gz.len() - 8]);
    assert_eq!(incomplete(&result).info.bytes, log.len() as u64);
}

/// What flate2 decodes of a damaged gzip stream before its error.
fn decoded_prefix(gz: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = flate2::read::GzDecoder::new(gz).read_to_end(&mut out);
    out
}

#[test]
fn a_truncated_zstd_keeps_every_block_before_the_cut() {
    let log = long_log(20_000);
    let zst = zstd(&log);
    for cut in [zst.len() / 5, zst.len() / 2, zst.len() - 5, zst.len() - 1] {
        let (report, result) = scan(&zst[..cut]);
        let info = &incomplete(&result).info;
        let msg = one_line(result.as_ref().unwrap_err());
        assert_eq!(
            incomplete(&result).error.kind(),
            std::io::ErrorKind::UnexpectedEof
        );
        assert!(
            msg.starts_with(
                "<stdin>: corrupt or truncated zstd data: the input ends inside a frame"
            ),
            "{msg}"
        );
        assert_eq!(classes(&report), ["cuda.oom"], "cut at {cut}");
        // A block decodes whole or not at all: the decoder's window
        // (which it holds back while a frame goes on) comes out too, so
        // at most the last block (128 KiB) is lost.
        assert!(
            info.bytes + (128 << 10) >= (cut as f64 / zst.len() as f64 * log.len() as f64) as u64,
            "cut at {cut}/{}: {} of {} bytes",
            zst.len(),
            info.bytes,
            log.len()
        );
        assert!(log.starts_with(&decode_all(&zst[..cut], info.bytes)));
    }
    // Only the checksum cut: every byte.
    let (_, result) = scan(&zst[..zst.len() - 2]);
    assert_eq!(incomplete(&result).info.bytes, log.len() as u64);
}

/// The first `n` bytes the library decodes of `bytes`, error or not.
fn decode_all(bytes: &[u8], n: u64) -> Vec<u8> {
    let (_, mut reader) = decompressed(bytes).unwrap();
    let mut out = Vec::new();
    let _ = reader.read_to_end(&mut out);
    assert_eq!(out.len() as u64, n);
    out
}

#[test]
fn a_corrupt_checksum_is_reported_after_the_text() {
    let mut zst = zstd(OOM);
    let n = zst.len();
    zst[n - 1] ^= 0xff;
    let (report, result) = scan(&zst);
    assert_eq!(incomplete(&result).info.lines, 29);
    assert!(one_line(result.as_ref().unwrap_err()).contains("checksum"));
    assert_eq!(classes(&report), ["cuda.oom"]);

    let mut gz = gzip(OOM);
    let n = gz.len();
    gz[n - 6] ^= 0xff; // the CRC
    let (report, result) = scan(&gz);
    assert_eq!(incomplete(&result).info.lines, 29);
    assert_eq!(classes(&report), ["cuda.oom"]);
}

#[test]
fn garbage_in_the_middle_of_a_stream_keeps_what_came_before() {
    let log = long_log(20_000);
    for mut packed in [gzip(&log), zstd(&log)] {
        let half = packed.len() / 2;
        for b in &mut packed[half..half + 64] {
            *b = b.wrapping_mul(31).wrapping_add(7);
        }
        let (report, result) = scan(&packed);
        // Undetected damage decodes to garbage; detected damage ends the
        // stream. Either way the OOM before it is found.
        assert_eq!(report.findings[0].class, "cuda.oom");
        if let Err(e) = &result {
            one_line(e);
            assert!(incomplete(&result).info.bytes > 0);
        }
    }
}

#[test]
fn a_cut_in_the_header_is_an_error_with_nothing_read() {
    let gz = gzip(OOM);
    let zst = zstd(OOM);
    for head in [&gz[..5], &zst[..5], &gz[..2], &zst[..4]] {
        let (report, result) = scan(head);
        let err = result.unwrap_err();
        assert!(Incomplete::of(&err).is_none(), "{err}");
        let msg = one_line(&err);
        assert!(msg.contains("corrupt or truncated"), "{msg}");
        assert!(report.findings.is_empty());
    }
}

/// The fixture the CLI's tests use: a rotation cut short.
#[test]
fn the_truncated_fixture_is_read_up_to_its_cut() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/compressed/truncated.gz");
    let (report, result) = scan_file(&path);
    let info = &incomplete(&result).info;
    // All 2,534 bytes its 900 hold (as `zcat` decodes them): 28 lines and
    // most of the OOM message.
    assert_eq!((info.bytes, info.lines), (2534, 29), "{info:?}");
    assert!(info.path.ends_with("truncated.gz"), "{info:?}");
    assert_eq!(classes(&report), ["cuda.oom"]);
    assert_eq!(report.sources[0].lines, 29);
    let msg = one_line(result.as_ref().unwrap_err());
    assert!(
        msg.contains("truncated.gz: corrupt or truncated gzip data"),
        "{msg}"
    );
}

#[test]
fn a_truncated_file_scanned_by_path_keeps_its_findings() {
    let log = long_log(5_000);
    for (name, packed) in [("cut.gz", gzip(&log)), ("cut.zst", zstd(&log))] {
        let file = Scratch::new(name, &packed[..packed.len() * 2 / 3]);
        let (report, result) = scan_file(&file.0);
        assert!(incomplete(&result).info.lines > 29, "{name}");
        assert_eq!(classes(&report), ["cuda.oom"], "{name}");
        assert_eq!(report.sources[0].path, file.0.display().to_string());
    }
}

#[test]
fn every_gzip_member_and_the_text_after_them_are_read() {
    let mut bytes = gzip(OOM);
    bytes.extend(gzip(b"INFO resumed\n"));
    bytes.extend_from_slice(MISMATCH_LINE.as_bytes());
    let (report, result) = scan(&bytes);
    let info = result.unwrap();
    assert_eq!(info.lines, 29 + 1 + 1);
    assert_eq!(classes(&report), ["cuda.oom", "torch.device_mismatch"]);
    let mismatch = report
        .findings
        .iter()
        .find(|f| f.class == "torch.device_mismatch");
    assert_eq!(mismatch.unwrap().first.line, 31);

    // Text appended straight after one member, with no newline at its end.
    let mut bytes = gzip(b"INFO epoch 1\n");
    bytes.extend_from_slice(MISMATCH_LINE.trim_end().as_bytes());
    let (report, result) = scan(&bytes);
    assert_eq!(result.unwrap().lines, 2);
    assert_eq!(classes(&report), ["torch.device_mismatch"]);
}

#[test]
fn every_zstd_frame_and_the_text_after_them_are_read() {
    let mut bytes = zstd(OOM);
    // A skippable frame between them (as `zstd` writes for seekable
    // archives), then a second frame.
    bytes.extend_from_slice(&[0x5e, 0x2a, 0x4d, 0x18, 5, 0, 0, 0]);
    bytes.extend_from_slice(b"\n\n\nxx");
    bytes.extend(zstd(b"INFO resumed\n"));
    bytes.extend_from_slice(MISMATCH_LINE.as_bytes());
    let (report, result) = scan(&bytes);
    assert_eq!(result.unwrap().lines, 31);
    assert_eq!(classes(&report), ["cuda.oom", "torch.device_mismatch"]);

    // gzip and zstd in one stream (`cat a.gz b.zst`).
    let mut mixed = gzip(OOM);
    mixed.extend(zstd(MISMATCH));
    let (report, result) = scan(&mixed);
    assert_eq!(result.unwrap().lines, 29 + 24);
    assert_eq!(classes(&report), ["cuda.oom", "torch.device_mismatch"]);
}

/// A pipe that hands over one byte at a time: magic numbers and member
/// boundaries are still told.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((&b, rest)), Some(out)) => {
                *out = b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn a_stream_read_a_byte_at_a_time_is_decoded_the_same() {
    let mut bytes = gzip(OOM);
    bytes.extend(zstd(b"INFO resumed\n"));
    bytes.extend(gzip(MISMATCH_LINE.as_bytes()));
    let (report, result) = scan_reader(Trickle(&bytes));
    assert_eq!(result.unwrap().lines, 31);
    assert_eq!(classes(&report), ["cuda.oom", "torch.device_mismatch"]);
    assert_eq!(decompressed(Trickle(&bytes)).unwrap().0, Compression::Gzip);
}

/// A zstd frame header declaring `window` bytes of window, then RLE blocks
/// of `block` bytes `fill`, `blocks` of them.
fn zstd_rle(window_log: u8, fill: u8, block: u32, blocks: usize) -> Vec<u8> {
    assert!(block <= 128 << 10);
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, (window_log - 10) << 3];
    for i in 0..blocks {
        let last = u32::from(i + 1 == blocks);
        let header = last | (1 << 1) | (block << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(fill);
    }
    out
}

#[test]
fn a_zstd_window_over_32_mib_is_refused_after_what_came_before() {
    // 2 GiB declared: the attack that reached 804 MiB.
    let mut bytes = zstd(OOM);
    bytes.extend(zstd_rle(31, b'\n', 128 << 10, 64));
    let (report, result) = scan(&bytes);
    assert_eq!(incomplete(&result).info.lines, 29);
    let msg = one_line(result.as_ref().unwrap_err());
    assert!(
        msg.contains("zstd frame declares a 2 GiB window, over the 32 MiB limit"),
        "{msg}"
    );
    assert_eq!(classes(&report), ["cuda.oom"]);

    // Alone, it is an error with nothing read.
    let (_, result) = scan(&zstd_rle(31, b'\n', 1, 1));
    assert!(Incomplete::of(result.as_ref().unwrap_err()).is_none());

    // A single-segment frame's window is its content size: 4 GiB declared.
    let mut single = vec![0x28, 0xb5, 0x2f, 0xfd, 0xa0];
    single.extend_from_slice(&(4u32 << 30).wrapping_sub(1).to_le_bytes());
    single.extend_from_slice(&[1 | (1 << 1) | (1 << 3), 0, 0, b'x']);
    let msg = one_line(&scan(&single).1.unwrap_err());
    assert!(msg.contains("over the 32 MiB limit"), "{msg}");

    // 32 MiB itself is allowed (`zstd --ultra -20`), 64 MiB is not.
    assert_eq!(MAX_ZSTD_WINDOW, 32 << 20);
    let (_, result) = scan(&zstd_rle(25, b'\n', 1000, 3));
    assert_eq!(result.unwrap().lines, 3000);
    let msg = one_line(&scan(&zstd_rle(26, b'\n', 1000, 3)).1.unwrap_err());
    assert!(
        msg.contains("a 64 MiB window, over the 32 MiB limit"),
        "{msg}"
    );
}

/// Peak resident memory of this process, from `/proc/self/status`.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Set to a path in the child process of [`a_decompression_bomb_stays_bounded`].
const BOMB: &str = "CUDNNLOG_TEST_BOMB";

/// The child's half: scans the bomb named by `CUDNNLOG_TEST_BOMB` as the
/// CLI does (default scanner, by path) and prints its peak memory.
#[test]
#[allow(clippy::print_stdout)] // what the parent reads
fn bomb_child() {
    let Some(path) = std::env::var_os(BOMB) else {
        return;
    };
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    let info = scanner
        .scan_path_parallel(Path::new(&path), MmapChoice::never(), &mut sink, &|_| {})
        .unwrap();
    let report = sink.into_report();
    let classes = classes(&report).join(",");
    println!(
        "bomb bytes={} lines={} peak_rss_kib={} findings={classes}",
        info.bytes,
        info.lines,
        peak_rss_kib().unwrap_or(0)
    );
}

/// Runs [`bomb_child`] on `file` in a fresh process: (bytes, lines, peak
/// KiB, classes found).
fn bomb(file: &Path) -> (u64, u64, u64, String) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["bomb_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(BOMB, file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("bomb bytes=").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("{stdout}"));
    let line = format!("bytes={line}");
    let field = |name: &str| -> u64 {
        let at = line.find(&format!("{name}=")).unwrap() + name.len() + 1;
        line[at..].split(' ').next().unwrap().parse().unwrap()
    };
    let classes = line.split_once("findings=").unwrap().1.to_string();
    (
        field("bytes"),
        field("lines"),
        field("peak_rss_kib"),
        classes,
    )
}

/// 256 MiB of zeros — one line with no end — then the OOM capture, gzip'd
/// (about 256 KiB) and as zstd (8 KiB of RLE blocks, then a frame with the
/// capture): scanned in bounded memory, not in memory proportional to what
/// they expand to, and the error after the zeros is found. A zstd decoder
/// holds its frame's window (in a ring buffer of the next power of two
/// above it), so there the bound is the window's: small for a common 8 MiB
/// window (`zstd -19`), about 64 MiB more for the largest allowed (32 MiB):
/// all within the 128 MiB bound.
#[test]
fn a_decompression_bomb_stays_bounded() {
    const SIZE: u64 = 256 << 20;
    let started = std::time::Instant::now();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..SIZE >> 20 {
        gz.write_all(&zeros).unwrap();
    }
    gz.write_all(OOM).unwrap();
    let gz = gz.finish().unwrap();
    assert!(gz.len() < 1 << 20, "{}", gz.len());
    let zst = |window_log| {
        let mut zst = zstd_rle(window_log, 0, 128 << 10, (SIZE >> 17) as usize);
        zst.extend(zstd(OOM));
        zst
    };
    let bombs = [
        // (file, the most memory it may take, in MiB)
        (Scratch::new("bomb.gz", &gz), 120),
        (Scratch::new("bomb-8m.zst", &zst(23)), 120),
        (Scratch::new("bomb-32m.zst", &zst(25)), 128),
    ];
    for (file, most) in &bombs {
        let (bytes, lines, peak, found) = bomb(&file.0);
        let name = file.0.display();
        assert_eq!(bytes, SIZE + OOM.len() as u64, "{name}");
        assert_eq!((lines, found.as_str()), (29, "cuda.oom"), "{name}");
        if cfg!(target_os = "linux") {
            // Measured: see docs/robustness.md.
            assert!(peak > 0 && peak < most << 10, "{name}: peak {peak} KiB");
        }
    }
    // Generous, for a debug build on a busy machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(300));
}

/// A reader that hands over `bytes`, then fails.
struct FailsAfter<'a>(&'a [u8]);

impl Read for FailsAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::Error::other("input/output error on the device"));
        }
        let n = self.0.len().min(buf.len()).min(1000);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// A read that fails part way — compressed or not — keeps what came
/// before, and is reported as the I/O error it is, not as bad data.
#[test]
fn a_read_error_part_way_keeps_what_came_before() {
    let log = long_log(2_000);
    for bytes in [gzip(&log), zstd(&log), log.clone()] {
        let (report, result) = scan_reader(FailsAfter(&bytes));
        let cut_short = incomplete(&result);
        assert_eq!(cut_short.info.bytes, log.len() as u64);
        let msg = one_line(result.as_ref().unwrap_err());
        assert_eq!(
            msg,
            "<stdin>: input/output error on the device (after 2029 lines, which were scanned)"
        );
        assert_eq!(classes(&report), ["cuda.oom"]);
    }
    // Inside a member or frame (past zstd's first 128 KiB block).
    let log = long_log(20_000);
    for packed in [gzip(&log), zstd(&log)] {
        let (report, result) = scan_reader(FailsAfter(&packed[..packed.len() / 2]));
        assert!(incomplete(&result).info.lines > 29);
        let msg = one_line(result.as_ref().unwrap_err());
        assert!(
            msg.starts_with("<stdin>: input/output error on the device (after "),
            "{msg}"
        );
        assert_eq!(classes(&report), ["cuda.oom"]);
    }
}

/// Reads `r` to its end or error with reads of `size` bytes.
fn drain_in(mut r: impl Read, size: usize) -> (Vec<u8>, String) {
    let (mut out, mut buf) = (Vec::new(), vec![0u8; size]);
    loop {
        match r.read(&mut buf) {
            Ok(0) => return (out, "end".into()),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, e.to_string()),
        }
    }
}

/// A reader that hands over at most `step` bytes a read.
struct Steps<'a>(&'a [u8], usize);

impl Read for Steps<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Corrupt deflate data in a member: the bytes before the error come out
/// whatever the output read sizes, and whatever the input read sizes to
/// within the inflater's 32 KiB window (what it decoded ahead in its window
/// when it failed). flate2's readers dropped what the failing call decoded,
/// up to a whole output buffer: 2,700 lines of a 2.2 MB log went unscanned
/// depending on the read sizes (the fuzzer found it).
#[test]
fn corrupt_deflate_data_gives_the_same_bytes_however_it_is_read() {
    let log = long_log(20_000);
    let mut gz = gzip(&log);
    let at = gz.len() / 2;
    gz[at..at + 64].fill(0xff);
    let (whole, end) = drain_in(decompressed(&gz[..]).unwrap().1, 1 << 20);
    assert!(end.starts_with("corrupt or truncated gzip data"), "{end}");
    assert!(!whole.is_empty() && whole.len() < log.len());
    for size in [1, 17, 512, 1 << 16] {
        let (got, got_end) = drain_in(decompressed(&gz[..]).unwrap().1, size);
        assert_eq!((got.len(), &got_end), (whole.len(), &end), "output {size}");
    }
    for step in [1, 7, 4096, 1 << 16] {
        let (got, got_end) = drain_in(decompressed(Steps(&gz, step)).unwrap().1, 1 << 16);
        assert_eq!(got_end, end);
        let (short, long) = if got.len() < whole.len() {
            (&got, &whole)
        } else {
            (&whole, &got)
        };
        assert!(
            long.starts_with(short) && long.len() - short.len() <= 32 << 10,
            "input {step} B a read: {} vs {}",
            got.len(),
            whole.len()
        );
    }
}
