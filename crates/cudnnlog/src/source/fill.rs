//! Filling a stream's windows: from a reader one read after another, or
//! from a regular file by positioned reads on all of rayon's threads.
//!
//! A window's buffer is kept at its full length (its bytes initialised once,
//! when it is allocated), and what it holds is told apart by a count: a
//! read into it costs the copy from the kernel, not also clearing the room
//! first, as `Read::read_to_end` into a `Vec`'s spare capacity does.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The fewest bytes a positioned read on a thread of its own is worth.
const PIECE_MIN: usize = 512 << 10;

/// What a stream's windows are read from.
pub(crate) trait Fill: Send {
    /// Reads into `buf` from its start, in order, until it is full or the
    /// stream ends: the bytes read (fewer than `buf.len()` only at the end),
    /// and the error of a read that failed after them.
    fn fill(&mut self, buf: &mut [u8]) -> (usize, Option<std::io::Error>);
}

/// A stream read one read after another.
pub(crate) struct Reader<R>(pub R);

impl<R: Read + Send> Fill for Reader<R> {
    fn fill(&mut self, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
        read_full(buf, |b, _| self.0.read(b))
    }
}

/// A regular file read from `at` on by positioned reads: a window's room is
/// cut in pieces, each read on a thread of its own (the copy from the page
/// cache is a tenth of a scan's work, and the window's literal pass waits
/// for it). A file that ends (or is truncated) inside a piece ends the
/// window there, and the bytes of the pieces after it are not used: what
/// the window holds is what one read after another would have read, and
/// the next window reads on from there (a file still written gets its new
/// lines next time).
pub(crate) struct Positioned {
    file: File,
    at: u64,
    /// Bytes read so far, for progress.
    read: Arc<AtomicU64>,
}

impl Positioned {
    pub(crate) fn new(file: File, read: Arc<AtomicU64>) -> Positioned {
        Positioned { file, at: 0, read }
    }

    /// How many bytes have been read so far, as the reads go on.
    pub(crate) fn progress(&self) -> Arc<AtomicU64> {
        self.read.clone()
    }
}

impl Fill for Positioned {
    fn fill(&mut self, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
        use rayon::prelude::*;
        let pieces = (2 * rayon::current_num_threads()).min(buf.len() / PIECE_MIN);
        let (n, error) = match pieces {
            0 | 1 => read_full(buf, |b, done| read_at(&self.file, b, self.at + done as u64)),
            _ => {
                let step = buf.len().div_ceil(pieces);
                let at = self.at;
                let file = &self.file;
                let read: Vec<(usize, usize, Option<std::io::Error>)> = buf
                    .par_chunks_mut(step)
                    .enumerate()
                    .map(|(i, piece)| {
                        let from = at + (i * step) as u64;
                        let (n, e) =
                            read_full(piece, |b, done| read_at(file, b, from + done as u64));
                        (piece.len(), n, e)
                    })
                    .collect();
                // The pieces read in full, in order, and the first that was
                // not: where the file ended, or failed.
                let mut n = 0;
                let mut error = None;
                for (len, got, e) in read {
                    n += got;
                    if got < len {
                        error = e;
                        break;
                    }
                }
                (n, error)
            }
        };
        self.at += n as u64;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        (n, error)
    }
}

/// Reads with `read` until `buf` is full, a read returns nothing (the end),
/// or one fails (not an interruption): the bytes read, and that failure.
/// `read` is given the room left and how many bytes are read already (a
/// read may return fewer than asked for before the end).
pub(super) fn read_full(
    buf: &mut [u8],
    mut read: impl FnMut(&mut [u8], usize) -> std::io::Result<usize>,
) -> (usize, Option<std::io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match read(&mut buf[n..], n) {
            Ok(0) => break,
            Ok(got) => n += got,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// One positioned read: `buf.len()` bytes at most, at `offset` of `file`,
/// without moving a cursor other readers share.
#[cfg(unix)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
pub(super) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    // Moves the file's cursor, which nothing else here uses.
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(not(any(unix, windows)))]
pub(super) fn read_at(_file: &File, _buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
    Err(std::io::Error::from(ErrorKind::Unsupported))
}

/// Whether a file can be read by [`Positioned`] reads on this platform.
pub(super) const POSITIONED: bool = cfg!(any(unix, windows));

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8], name: &str) -> (File, std::path::PathBuf) {
        let path =
            std::env::temp_dir().join(format!("cudnnlog-fill-{name}-{}", std::process::id()));
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        (File::open(&path).unwrap(), path)
    }

    #[test]
    fn positioned_reads_give_the_bytes_in_order_then_the_end() {
        let bytes: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let (file, path) = file_of(&bytes, "order");
        let read = Arc::new(AtomicU64::new(0));
        let mut fill = Positioned::new(file, read.clone());
        let mut got = Vec::new();
        // Windows larger than a piece (read on several threads) and smaller.
        for size in [3 << 20, 100_000, 4 << 20, 4 << 20] {
            let mut buf = vec![0u8; size];
            let (n, e) = fill.fill(&mut buf);
            assert!(e.is_none());
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got.len(), bytes.len());
        assert!(got == bytes, "the bytes differ");
        assert_eq!(read.load(Ordering::Relaxed), bytes.len() as u64);
        // At the end: nothing more.
        assert_eq!(fill.fill(&mut [0u8; 16]).0, 0);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_file_that_grows_is_read_on_from_where_it_ended() {
        let (file, path) = file_of(b"INFO step 1\n", "grows");
        let mut fill = Positioned::new(file, Arc::new(AtomicU64::new(0)));
        let mut buf = vec![0u8; 2 << 20];
        assert_eq!(fill.fill(&mut buf).0, 12);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"INFO step 2\n")
            .unwrap();
        let (n, e) = fill.fill(&mut buf);
        assert!(e.is_none());
        assert_eq!(&buf[..n], b"INFO step 2\n");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_failed_read_keeps_the_bytes_before_it() {
        let mut calls = 0;
        let mut buf = [0u8; 10];
        let (n, e) = read_full(&mut buf, |b, done| {
            assert_eq!(done, if calls == 0 { 0 } else { 4 });
            calls += 1;
            match calls {
                1 => {
                    b[..4].copy_from_slice(b"INFO");
                    Ok(4)
                }
                2 => Err(ErrorKind::Interrupted.into()),
                _ => Err(std::io::Error::other("disk gone")),
            }
        });
        assert_eq!((n, &buf[..n]), (4, &b"INFO"[..]));
        assert_eq!(e.unwrap().to_string(), "disk gone");
    }
}
