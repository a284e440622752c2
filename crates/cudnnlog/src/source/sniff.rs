//! Whether a file a directory walk finds is binary, from its bytes.
//!
//! Skipping a log hides a failure; scanning a file that is not one only
//! costs the time to read it. So a file is binary only when its bytes say
//! so beyond doubt: it opens with the magic number of a binary format, or
//! control bytes (not tabs, line ends, escapes, and not NUL) make at least
//! one in [`ODD_SHARE`] of the other bytes of its first 8 KiB and of its
//! last 8 KiB. NUL bytes count for nothing either way: a crash leaves runs
//! of them in a log (blocks allocated and never written), and so does a
//! preallocated log file; random bytes hold one control byte in ten, text
//! none. A gzip or zstd file is a compressed log, read as one.
//!
//! The file is opened once, without blocking ([`sniff`]): what it is (a
//! regular file, its device and inode) is read from the open handle, so a
//! file swapped for a FIFO after its directory was listed is seen as one,
//! not waited on forever.

use crate::source::Compression;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How many bytes are sampled at each end of a file.
pub(crate) const SAMPLE: usize = 8192;

/// A sample is binary when at least one in this many of its bytes that
/// are not NUL is an odd control byte (6.25 %; random bytes have 9.8 %).
pub(crate) const ODD_SHARE: usize = 16;

/// Fewer odd bytes than this never make a sample binary, whatever their
/// share: a few stray bytes among NULs are no evidence.
const MIN_ODD: usize = 8;

/// The magic numbers of binary formats found beside training logs, with
/// what each is: executables and core dumps, CUDA fat binaries, images,
/// archives and checkpoints, pickles, arrays, databases, and compressed
/// streams cudnnlog does not decompress.
const MAGIC: &[(&[u8], &str)] = &[
    (
        b"\x7fELF",
        "an ELF file (an executable, library, cubin or core dump)",
    ),
    (b"\x50\xed\x55\xba", "a CUDA fat binary"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (
        b"PK\x03\x04",
        "a zip archive (a PyTorch checkpoint, a wheel)",
    ),
    (b"PK\x05\x06", "a zip archive"),
    (b"\x80\x02", "a Python pickle"),
    (b"\x80\x03", "a Python pickle"),
    (b"\x80\x04\x95", "a Python pickle"),
    (b"\x80\x05\x95", "a Python pickle"),
    (b"\x93NUMPY", "a NumPy array"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"SQLite format 3\0", "an SQLite database"),
    (b"\xfd7zXZ\0", "an xz stream"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"BZh", "a bzip2 stream"),
];

/// What the magic number at the start of `head` says the file is, if it
/// is a binary format.
pub(crate) fn magic(head: &[u8]) -> Option<&'static str> {
    MAGIC
        .iter()
        .find(|(magic, _)| {
            head.starts_with(magic)
                // "BZh" is text too: a bzip2 stream goes on with a level
                // and the block magic (pi's digits).
                && (*magic != b"BZh"
                    || head.get(3).is_some_and(|l| (b'1'..=b'9').contains(l))
                        && head[4..].starts_with(b"\x31\x41\x59\x26\x53\x59"))
        })
        .map(|(_, what)| *what)
}

/// Whether a byte is a control byte no text holds: C0 controls other than
/// NUL, backspace, tab, line feed, vertical tab, form feed, carriage return
/// and escape (colour codes), and DEL.
fn odd(b: u8) -> bool {
    matches!(b, 0x01..=0x07 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f)
}

/// Whether a sample is mostly not text: odd control bytes make at least
/// one in [`ODD_SHARE`] of its bytes that are not NUL (and at least
/// [`MIN_ODD`]).
pub(crate) fn mostly_binary(sample: &[u8]) -> bool {
    let (mut odd_bytes, mut counted) = (0usize, 0usize);
    for &b in sample {
        if b != 0 {
            counted += 1;
            odd_bytes += usize::from(odd(b));
        }
    }
    odd_bytes >= MIN_ODD && odd_bytes * ODD_SHARE >= counted
}

/// What opening a file a walk found tells.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Not a regular file once opened: a FIFO, socket, device or directory
    /// (a file swapped for one since its directory was listed).
    Special,
    /// A regular file: its device and inode, and whether it is binary.
    File {
        id: Option<crate::source::FileId>,
        binary: bool,
    },
}

/// Opens the file at `path` once, without blocking (a FIFO where a file
/// was listed never blocks the walk), and tells from the open handle what
/// it is: a regular file's identity, and whether it is [`binary`].
///
/// # Errors
///
/// The open's or the `fstat`'s: the scan will say why it cannot be read.
pub(crate) fn sniff(path: &Path) -> std::io::Result<Sniffed> {
    let (mut file, meta) = crate::source::open::open_nonblocking(path)?;
    if !meta.is_file() {
        return Ok(Sniffed::Special);
    }
    Ok(Sniffed::File {
        id: crate::source::id_of(&meta),
        binary: binary_file(&mut file, meta.len()),
    })
}

/// Whether the regular file `file`, `len` bytes long, is binary: a magic
/// number at its start, or a first and a last [`SAMPLE`] that are both
/// [`mostly_binary`]. A file that cannot be read is not: the scan says why
/// it cannot.
pub(crate) fn binary(path: &Path) -> bool {
    matches!(sniff(path), Ok(Sniffed::File { binary: true, .. }))
}

/// [`binary`] of the open regular file `file`, `len` bytes long.
fn binary_file(file: &mut std::fs::File, len: u64) -> bool {
    let mut head = [0u8; SAMPLE];
    let Ok(n) = fill(file, &mut head) else {
        return false;
    };
    let head = &head[..n];
    if Compression::of(head) != Compression::None {
        return false;
    }
    if magic(head).is_some() {
        return true;
    }
    if !mostly_binary(head) {
        return false;
    }
    // Binary bytes first: a log may still follow them (a crash's garbage
    // before a restart's lines). Its end decides.
    if len <= SAMPLE as u64 {
        return true;
    }
    let start = (len - SAMPLE as u64).max(SAMPLE as u64);
    let mut tail = [0u8; SAMPLE];
    match file
        .seek(SeekFrom::Start(start))
        .and_then(|_| fill(file, &mut tail))
    {
        Ok(n) => mostly_binary(&tail[..n]),
        Err(_) => false,
    }
}

/// Reads into `buf` until it is full or the file ends; the bytes read.
fn fill(file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift bytes: every value, no structure.
    fn random(n: usize, mut x: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    const OOM: &[u8] = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";

    #[test]
    fn nul_bytes_never_make_text_binary() {
        let mut crash = b"INFO step 40\n".to_vec();
        crash.extend_from_slice(&[0; 4000]);
        crash.extend_from_slice(OOM);
        assert!(!mostly_binary(&crash));
        assert!(!mostly_binary(&[0; SAMPLE]));
        // A few stray bytes among NULs are no evidence either.
        let mut stray = vec![0u8; SAMPLE];
        stray[100..104].copy_from_slice(b"\x01\x02\x03\x04");
        assert!(!mostly_binary(&stray));
        // UTF-16 text is NULs and text.
        let utf16: Vec<u8> = "RuntimeError: CUDA error\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert!(!mostly_binary(&utf16));
    }

    #[test]
    fn text_of_any_encoding_with_colour_and_progress_bars_is_text() {
        let mut log = Vec::new();
        for i in 0..100 {
            log.extend_from_slice(
                format!("\x1b[32mINFO\x1b[0m step {i} 损失 1.2 é\r 45%|████▌ | 45/100\x08\n")
                    .as_bytes(),
            );
        }
        // Latin-1 and GBK bytes are not UTF-8, and still text.
        log.extend_from_slice(b"Erreur: m\xe9moire \xb4\xed\xce\xf3\n");
        assert!(!mostly_binary(&log));
    }

    #[test]
    fn random_bytes_and_binary_formats_are_binary() {
        assert!(mostly_binary(&random(SAMPLE, 0x2545_F491_4F6C_DD1D)));
        // Little integers, as tensors and protobufs hold them.
        let ints: Vec<u8> = (0u32..2048).flat_map(|i| (i % 20).to_le_bytes()).collect();
        assert!(mostly_binary(&ints));
        for (head, what) in [
            (&b"\x7fELF\x02\x01\x01\0"[..], "an ELF file"),
            (b"\x50\xed\x55\xba\x01\x00\x10\x00", "a CUDA fat binary"),
            (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "a PNG image"),
            (b"PK\x03\x04\x14\0\0\0", "a zip archive"),
            (b"\x80\x04\x95\x1d\0\0\0\0", "a Python pickle"),
            (b"\x80\x02}q\0(X", "a Python pickle"),
            (b"BZh91AY&SY", "a bzip2 stream"),
        ] {
            assert!(magic(head).unwrap().starts_with(what), "{what}");
        }
        for text in [&b"BZh is not bzip2\n"[..], b"PK: primary key\n", b"\x80"] {
            assert_eq!(magic(text), None);
        }
    }

    /// A walked file replaced by a FIFO before it is sniffed: the sniff's
    /// open blocked forever waiting for a writer. It never blocks now.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_sniffed_without_blocking() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-sniff-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("rank0.log");
        crate::source::mkfifo(&fifo);
        let (tx, rx) = std::sync::mpsc::channel();
        let sniffed = fifo.clone();
        std::thread::spawn(move || tx.send(sniff(&sniffed).ok()));
        let got = rx.recv_timeout(std::time::Duration::from_secs(20));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            got,
            Ok(Some(Sniffed::Special)),
            "the sniff blocked on a FIFO"
        );
    }

    #[test]
    fn a_file_is_binary_by_its_magic_or_by_both_ends() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-sniff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = random(64 << 10, 0x9E37_79B9_7F4A_7C15);
        let mut core = b"\x7fELF\x02\x01\x01\0".to_vec();
        core.extend_from_slice(OOM);
        let mut garbage_then_log = garbage.clone();
        for _ in 0..100 {
            garbage_then_log.extend_from_slice(OOM);
        }
        let mut gz = vec![0x1f, 0x8b, 8, 0];
        gz.extend_from_slice(&garbage);
        let cases: [(&str, &[u8], bool); 6] = [
            ("core", &core, true),
            ("garbage", &garbage, true),
            ("small-garbage", &garbage[..1000], true),
            ("garbage-then-log", &garbage_then_log, false),
            ("log.gz", &gz, false),
            ("empty", b"", false),
        ];
        let binary = |path: &Path| matches!(sniff(path), Ok(Sniffed::File { binary: true, .. }));
        let mut got = Vec::new();
        for (name, bytes, _) in cases {
            std::fs::write(dir.join(name), bytes).unwrap();
            got.push(binary(&dir.join(name)));
        }
        got.push(binary(&dir.join("missing")));
        std::fs::remove_dir_all(&dir).unwrap();
        let want: Vec<bool> = cases.iter().map(|c| c.2).chain([false]).collect();
        assert_eq!(got, want);
    }
}
