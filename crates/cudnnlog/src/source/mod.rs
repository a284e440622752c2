//! Sources: how a log's bytes are read.

use crate::error::Error;
use memmap2::Mmap;
use serde::{Deserialize, Serialize};
use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

mod decode;
pub use decode::{decompressed, MAX_ZSTD_WINDOW};
mod fill;
pub(crate) mod job;
pub(crate) mod open;
pub use open::{open_regular, FIFO_WAIT};
mod sniff;
pub(crate) mod walk;
pub(crate) use fill::{Fill, Positioned, Reader};

// Finding the logs under directories.
use decode::{what_next, Next};
pub use walk::{
    not_a_log_by_name, Reached, SkipReason, Skipped, Walk, Walked, MAX_IGNORE_FILE, MAX_IGNORE_TEXT,
};

/// Whether the regular file at `path` is binary by its content, as a
/// directory walk judges a file before it skips it
/// ([`SkipReason::Binary`]): the magic number of a binary format, or odd
/// control bytes throughout its first and last 8 KiB. NUL bytes alone never
/// make a file binary, and a file that cannot be read is not. A caller that
/// scans a binary file named explicitly can say so.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-binary-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("core.log"), b"\x7fELF\x02\x01\x01\x00")?; // a core dump
/// std::fs::write(dir.join("crash.log"), b"INFO step 4\n\0\0\0\0Killed\n")?; // NULs from a crash
/// assert!(cudnnlog::source::is_binary(&dir.join("core.log")));
/// assert!(!cudnnlog::source::is_binary(&dir.join("crash.log")));
/// assert!(!cudnnlog::source::is_binary(&dir.join("missing.log")));
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn is_binary(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file()) && sniff::binary(path)
}

/// Whether regular files may be memory-mapped.
///
/// As in ripgrep, the default is [`MmapChoice::never`]: mapping a file is
/// only sound while no one truncates or rewrites it, which the library cannot
/// promise. A caller that can, or that accepts the risk, opts in with the
/// `unsafe` [`MmapChoice::auto`]. When mapping fails the scanner silently
/// reads the file instead.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, MmapChoice, ScannerBuilder};
/// let path = std::env::temp_dir().join(format!("cudnnlog-doc-mmap-{}.log", std::process::id()));
/// std::fs::write(&path, "RuntimeError: CUDA error: an illegal memory access was encountered\n")?;
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// // SAFETY: nothing writes the file while it is scanned.
/// // A small file is read unless `min_len` says to map it.
/// for mmap in [MmapChoice::never(), unsafe { MmapChoice::auto() }.min_len(1)] {
///     let mut sink = FindingsSink::new(scanner.catalog());
///     scanner.scan_path(&path, mmap, &mut sink)?; // read or mapped: the same report
///     assert_eq!(sink.into_report().primary.as_deref(), Some("cuda.illegal_address"));
/// }
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmapChoice {
    enabled: bool,
    /// The least length mapped: smaller files are read.
    min_len: u64,
}

impl MmapChoice {
    /// Map regular files of at least 1 MiB that were not modified in the
    /// last 30 seconds; read everything else (a mapping costs more than
    /// reading a small file: [`min_len`](MmapChoice::min_len) changes the
    /// size).
    ///
    /// # Safety
    ///
    /// The caller promises that no file is truncated or modified while it is
    /// mapped: if one is, reading it may crash the process (SIGBUS) or show
    /// inconsistent bytes.
    ///
    /// ```
    /// use cudnnlog::MmapChoice;
    /// // SAFETY: nothing else writes the files this process scans.
    /// let mmap = unsafe { MmapChoice::auto() };
    /// assert_ne!(mmap, MmapChoice::default());
    /// ```
    pub unsafe fn auto() -> MmapChoice {
        MmapChoice {
            enabled: true,
            min_len: MIN_MAPPED,
        }
    }

    /// The same choice, mapping files of at least `bytes` bytes (the
    /// default is 1 MiB; an empty file is never mapped).
    ///
    /// ```
    /// use cudnnlog::MmapChoice;
    /// // SAFETY: nothing else writes the files this process scans.
    /// let every_file = unsafe { MmapChoice::auto() }.min_len(1);
    /// assert_ne!(every_file, unsafe { MmapChoice::auto() });
    /// ```
    pub fn min_len(self, bytes: u64) -> MmapChoice {
        MmapChoice {
            min_len: bytes.max(1),
            ..self
        }
    }

    /// Never map; always read. The default.
    ///
    /// ```
    /// use cudnnlog::MmapChoice;
    /// assert_eq!(MmapChoice::never(), MmapChoice::default());
    /// assert_ne!(MmapChoice::never(), unsafe { MmapChoice::auto() });
    /// ```
    pub fn never() -> MmapChoice {
        MmapChoice {
            enabled: false,
            min_len: MIN_MAPPED,
        }
    }

    pub(crate) fn open(self, file: &File, meta: &Metadata) -> Option<Mmap> {
        if !self.enabled || !meta.is_file() || meta.len() < self.min_len || still_written(meta) {
            return None;
        }
        // SAFETY: `auto()` passed the promise that the file is not modified
        // while mapped on to its caller.
        let map = unsafe { Mmap::map(file) }.ok()?;
        // Shrunk between `metadata` and `map`: read it instead.
        (file.metadata().ok()?.len() == meta.len() && map.len() as u64 == meta.len()).then_some(map)
    }
}

impl Default for MmapChoice {
    fn default() -> MmapChoice {
        MmapChoice::never()
    }
}

/// Unmaps a mapping: its pages are dropped first, a range at a time on
/// rayon's threads (`MADV_DONTNEED`, which holds the address space's lock
/// for reading only, so the ranges may go at once), then the mapping, left
/// with none, is unmapped. Unmapping a 1 GiB mapping whose pages were all
/// mapped took 31 ms (a tenth of a 16-thread scan, serial, after it); its
/// pages dropped first took 2.5 ms, and the unmap then 0.1 ms (strace -T,
/// this repository's 2-core VM).
pub(crate) fn unmap(map: Mmap) {
    const RANGE: usize = 32 << 20;
    #[cfg(unix)]
    if map.len() >= 2 * RANGE {
        use rayon::prelude::*;
        (0..map.len().div_ceil(RANGE))
            .into_par_iter()
            .for_each(|i| {
                let at = i * RANGE;
                // SAFETY: the mapping is of a file, read only and shared, and
                // no longer read: dropping its pages loses nothing (the file
                // keeps them), and a read after it would fault them in again.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        at,
                        RANGE.min(map.len() - at),
                    )
                };
            });
    }
    drop(map);
}

/// Files smaller than this are read, not mapped: a mapping costs more
/// than reading a small file (the map, the page faults, and an unmap that
/// interrupts every other core to flush its TLB). A fleet of 100,000 logs
/// of a few hundred bytes took 6.5 s mapped and 3.7 s read, on 2 cores.
const MIN_MAPPED: u64 = 1 << 20;

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

/// A file or directory: its device and inode.
pub(crate) type FileId = (u64, u64);

/// The device and inode `meta` describes (none off Unix).
#[cfg(unix)]
pub(crate) fn id_of(meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub(crate) fn id_of(_meta: &Metadata) -> Option<FileId> {
    None
}

/// What was read from one source.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, MmapChoice, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let info = scanner.scan_slice(b"INFO step 1\nINFO step 2", &mut sink)?;
/// assert_eq!((info.path.as_str(), info.bytes, info.lines, info.modified), ("<memory>", 23, 2, None));
/// let path = std::env::temp_dir().join(format!("cudnnlog-doc-source-info-{}.log", std::process::id()));
/// std::fs::write(&path, "INFO step 1\n")?;
/// let info = scanner.scan_path(&path, MmapChoice::never(), &mut sink)?;
/// assert_eq!((info.lines, info.modified.is_some()), (1, true)); // a file read by path has its time
/// assert_eq!(sink.into_report().sources.len(), 2);
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    /// The rank this file is the log of, when it is one of a job's per-rank
    /// files (`rank3.log`, torchrun's `attempt_0/3/stderr.log`): its
    /// untagged lines are that rank's, and it is a rank of the job, not a
    /// run of its own. Absent for a file that is a whole job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// The modification time of a regular file.
pub(crate) fn modified(path: &Path) -> Option<std::time::SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| meta.modified().ok()).flatten()
}

/// The compression of a stream, told by its first bytes (not its name: a
/// rotated `train.log.1.gz` or a `.log` that is really gzip both work).
///
/// ```
/// use cudnnlog::source::{decompressed, Compression};
/// use std::io::{Read, Write};
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// gz.write_all(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")?;
/// let gz = gz.finish()?;
/// let (kind, mut reader) = decompressed(&gz[..])?;
/// let mut text = String::new();
/// reader.read_to_string(&mut text)?;
/// assert_eq!((kind, text.as_str()), (Compression::Gzip, "RuntimeError: CUDA error: an illegal memory access was encountered\n"));
/// assert_eq!(decompressed(&b"INFO step 1\n"[..])?.0, Compression::None);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed: the bytes start with neither magic number (or there
    /// are none).
    None,
    /// A gzip stream (`1f 8b`).
    Gzip,
    /// A zstd stream (`28 b5 2f fd`), or one that opens with a skippable
    /// frame.
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

/// A stream that failed part way — a truncated or corrupt archive, a read
/// error: everything read before the failure was scanned and the sink has
/// its findings. A scan returns it as the source of an
/// [`Error::Io`], whose message is one line (`path:
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
/// let err = scanner.scan_reader("cut.gz", reader, &mut sink).unwrap_err();
/// let incomplete = Incomplete::of(&err).unwrap();
/// assert_eq!(incomplete.info.lines, 3);
/// assert!(err.to_string().starts_with("cut.gz: corrupt or truncated gzip data"));
/// // The sink has the source, as far as it was read.
/// let report = sink.into_report();
/// assert_eq!((report.sources[0].lines, report.findings[0].class.as_str()), (3, "cuda.oom"));
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
    ///
    /// ```
    /// use cudnnlog::{report::FindingsSink, source::Incomplete, Catalog, Error, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    /// std::io::Write::write_all(&mut gz, b"step 1\nstep 2\n").unwrap();
    /// let gz = gz.finish().unwrap();
    /// let (_, reader) = cudnnlog::source::decompressed(&gz[..gz.len() - 4]).unwrap(); // trailer cut
    /// let err = scanner.scan_reader("cut.gz", reader, &mut FindingsSink::new(scanner.catalog())).unwrap_err();
    /// assert_eq!(Incomplete::of(&err).map(|i| i.info.path.as_str()), Some("cut.gz"));
    /// let plain = Error::Io { path: "train.log".into(), source: std::io::ErrorKind::NotFound.into() };
    /// assert!(Incomplete::of(&plain).is_none());
    /// ```
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

/// A source ready to scan: mapped bytes, a regular file read by positioned
/// reads, or a stream (decompressed if need be).
pub(crate) enum Opened {
    Mapped(memmap2::Mmap),
    /// A regular, uncompressed file.
    Positioned(Positioned),
    /// A stream, and how many bytes of the file it has read so far
    /// (compressed bytes for a compressed file): for progress.
    Stream(
        Box<dyn Read + Send>,
        std::sync::Arc<std::sync::atomic::AtomicU64>,
    ),
}

/// A reader that counts the bytes read through it, and ends with an error
/// after `limit` bytes.
pub(crate) struct Counting<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
    limit: Option<u64>,
}

/// What is read of a `/proc` or `/sys` pseudo-file: one may never end
/// (`/proc/self/pagemap` describes the whole address space, 256 GiB).
pub const PSEUDO_FILE_LIMIT: u64 = 16 << 20;

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let so_far = self.read.load(std::sync::atomic::Ordering::Relaxed);
        if self.limit.is_some_and(|l| so_far >= l) {
            return Err(std::io::Error::other(
                "a /proc or /sys pseudo-file, read no further than its first 16 MiB",
            ));
        }
        let room = self.limit.map_or(buf.len() as u64, |l| l - so_far);
        let take = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..take])?;
        self.read
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Whether `file` is on procfs or sysfs, whose files claim a size of 0 and
/// may never end.
#[cfg(target_os = "linux")]
fn pseudo_file(file: &File) -> bool {
    const SYSFS_MAGIC: rustix::fs::FsWord = 0x6265_6572;
    rustix::fs::fstatfs(file)
        .is_ok_and(|s| s.f_type == rustix::fs::PROC_SUPER_MAGIC || s.f_type == SYSFS_MAGIC)
}

#[cfg(not(target_os = "linux"))]
fn pseudo_file(_file: &File) -> bool {
    false
}

/// Opens a path for scanning: directories and devices are refused; a
/// regular, uncompressed file is mapped when `mmap` allows it; a FIFO waits
/// at most [`FIFO_WAIT`] for its writer.
pub(crate) fn open(path: &Path, mmap: MmapChoice) -> Result<Opened, Error> {
    let io = |e: std::io::Error| Error::Io {
        path: path.display().to_string(),
        source: e,
    };
    // The type is the open handle's, not the path's: a path swapped for a
    // FIFO after a walk looked at it waits no longer than a FIFO named
    // outright.
    let (file, meta) = open::open_nonblocking(path).map_err(io)?;
    #[cfg(unix)]
    if std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()) {
        open::wait_for_writer(&file).map_err(io)?;
    }
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
    let pseudo = pseudo_file(&file);
    if fill::POSITIONED && meta.is_file() && !pseudo {
        let mut head = [0u8; 4];
        let (n, e) = fill::read_full(&mut head, |b, done| fill::read_at(&file, b, done as u64));
        if let Some(e) = e {
            return Err(io(e));
        }
        if Compression::of(&head[..n]) == Compression::None {
            return Ok(Opened::Positioned(Positioned::new(file, read)));
        }
        // A positioned read may have moved the cursor (Windows).
        std::io::Seek::rewind(&mut &file).map_err(io)?;
    }
    let limit = pseudo.then_some(PSEUDO_FILE_LIMIT);
    let counting = Counting {
        inner: file,
        read: read.clone(),
        limit,
    };
    let (_, reader) = decompressed(counting).map_err(io)?;
    Ok(Opened::Stream(reader, read))
}

/// Makes a FIFO at `path`, for tests.
#[cfg(all(test, target_os = "linux"))]
pub(crate) fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

#[cfg(test)]
mod tests {
    /// Dropping a mapping's pages before unmapping it loses nothing: the
    /// file, mapped again, reads the same bytes.
    #[test]
    fn unmapping_keeps_the_file() {
        let path = std::env::temp_dir().join(format!("cudnnlog-unmap-{}.log", std::process::id()));
        let line = b"INFO step 1 loss 0.5 lr 3e-4 grad_norm 1.25 throughput 812.5\n";
        let bytes: Vec<u8> = line.iter().copied().cycle().take(80 << 20).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the file is this test's own, not modified while mapped.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        assert_eq!(bytecount::count(&map, b'\n'), (80 << 20) / line.len());
        super::unmap(map);
        // SAFETY: as above.
        let again = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        assert!(again[..] == bytes[..]);
        drop(again);
        std::fs::remove_file(&path).unwrap();
    }
}
