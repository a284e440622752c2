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
    /// Recognises the gzip (`1f 8b`) and zstd (`28 b5 2f fd`) magic numbers.
    ///
    /// ```
    /// use cudnnlog::source::Compression;
    /// assert_eq!(Compression::of(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
    /// assert_eq!(Compression::of(&[0x28, 0xb5, 0x2f, 0xfd]), Compression::Zstd);
    /// assert_eq!(Compression::of(b"2026-11-29"), Compression::None);
    /// ```
    pub fn of(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// Wraps a reader so that gzip and zstd input is decompressed, detected
/// from its first bytes; other input passes through unchanged. The reader
/// must be `Send`, as [`Scanner::scan_reader`](crate::Scanner::scan_reader)
/// reads on a helper thread (`std::io::stdin()` is, its lock is not).
pub fn decompressed<'r, R: std::io::Read + Send + 'r>(
    reader: R,
) -> std::io::Result<(Compression, Box<dyn std::io::Read + Send + 'r>)> {
    use std::io::BufRead;
    let mut buffered = std::io::BufReader::with_capacity(64 << 10, reader);
    let kind = Compression::of(buffered.fill_buf()?);
    let out: Box<dyn std::io::Read + Send + 'r> = match kind {
        Compression::None => Box::new(buffered),
        // Concatenated members (`cat a.gz b.gz`) are one stream.
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(
            ruzstd::decoding::StreamingDecoder::new(buffered)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?,
        ),
    };
    Ok((kind, out))
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
