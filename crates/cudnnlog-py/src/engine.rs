//! The Rust side of the bindings, free of Python: building scanners,
//! scanning a file or bytes into a report or a verdict (each scan stopped
//! at its next window once its caller's cancel flag is set), and expanding
//! the paths given to `triage` into jobs.
//!
//! Nothing here holds the GIL; the Python layer calls these on its thread
//! pool ([`crate::wait::run`]).

use cudnnlog::fleet::{scan_job_with, Job, JobInput, ScanHooks, Verdict};
use cudnnlog::report::FindingsSink;
use cudnnlog::sink::{Copies, EnvFact, Fork, Location, Match, Sink, Window};
use cudnnlog::source::{decompressed, Compression, SourceInfo};
use cudnnlog::source::{SkipReason, Walk};
use cudnnlog::{CatalogBuilder, Error, MmapChoice, Report, Scanner, ScannerBuilder};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The name of bytes scanned without one.
pub const MEMORY: &str = "<memory>";

/// The name of a file-like object scanned without one.
pub const STREAM: &str = "<stream>";

/// A scanner of the built-in catalog plus the patterns in `dirs` (each a
/// directory of `.toml` files, as `cudnnlog scan --patterns DIR` takes),
/// built afresh (some 50 ms): the directories are read each time. The
/// scanner of the built-in catalog alone is shared
/// ([`crate::process::builtin`]).
pub fn scanner(dirs: &[PathBuf]) -> Result<Arc<Scanner>, Error> {
    let mut builder = CatalogBuilder::new();
    for dir in dirs {
        builder.add_dir(dir);
    }
    Ok(Arc::new(ScannerBuilder::new().build(builder.build()?)))
}

/// A mutex's value, even if a thread panicked while holding it (the values
/// guarded here are never left half-updated).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The report of one file, as `cudnnlog scan --format json FILE` gives
/// it. The file is read, not memory-mapped (a file truncated while mapped
/// would kill the interpreter); gzip and zstd files are decompressed.
pub fn scan_path(scanner: &Scanner, path: &Path, cancel: &AtomicBool) -> Result<Report, Error> {
    let mut sink = Cancellable::new(FindingsSink::new(scanner.catalog()), cancel);
    scanner.scan_path_parallel(path, MmapChoice::never(), &mut sink, &|_| {})?;
    Ok(sink.sink.into_report())
}

/// The report of a log held in memory, its source named `name`. gzip and
/// zstd data (told by their magic numbers) are decompressed.
pub fn scan_bytes(
    scanner: &Scanner,
    name: &str,
    bytes: &[u8],
    cancel: &AtomicBool,
) -> Result<Report, Error> {
    let mut sink = Cancellable::new(FindingsSink::new(scanner.catalog()), cancel);
    match Compression::of(&bytes[..bytes.len().min(4)]) {
        Compression::None => scanner.scan_slice_parallel(bytes, &mut sink, &|_| {})?,
        Compression::Gzip | Compression::Zstd => {
            let (_, reader) = decompressed(bytes).map_err(|source| Error::Io {
                path: name.to_string(),
                source,
            })?;
            scanner.scan_reader(name, reader, &mut sink)?
        }
    };
    let mut report = sink.sink.into_report();
    report.sources[0].path = name.to_string();
    Ok(report)
}

/// The report of a log read from `reader` (a stream of any length, read
/// window by window: memory stays bounded), its source named `name`.
/// gzip and zstd streams (told by their magic numbers) are decompressed.
pub fn scan_read(
    scanner: &Scanner,
    name: &str,
    reader: impl Read + Send,
    cancel: &AtomicBool,
) -> Result<Report, Error> {
    let mut sink = Cancellable::new(FindingsSink::new(scanner.catalog()), cancel);
    let (_, reader) = decompressed(reader).map_err(|source| Error::Io {
        path: name.to_string(),
        source,
    })?;
    scanner.scan_reader(name, reader, &mut sink)?;
    let mut report = sink.sink.into_report();
    report.sources[0].path = name.to_string();
    Ok(report)
}

/// The verdict of a log read from `reader` ([`scan_read`]), the job and
/// its source named `name`; a stream that cannot be read or decompressed
/// gives a verdict with `error` set.
pub fn verdict_of_read(
    scanner: &Scanner,
    name: &str,
    reader: impl Read + Send,
    cancel: &AtomicBool,
) -> Verdict {
    match scan_read(scanner, name, reader, cancel) {
        Ok(report) => Verdict::of(name, &report),
        Err(e) => Verdict::unreadable(name, vec![name.to_string()], e.to_string()),
    }
}

/// The verdict of one file as a job of its own: an unreadable file gives
/// a verdict with `error` set, not an error. `name` renames the job.
pub fn verdict_of_path(
    scanner: &Scanner,
    path: &Path,
    name: Option<&str>,
    cancel: &AtomicBool,
) -> Verdict {
    let mut verdict = verdict_of_job(scanner, &Job::single(path.to_path_buf()), cancel);
    if let Some(name) = name {
        verdict.path = name.to_string();
    }
    verdict
}

/// The verdict of a log held in memory, the job and its source named
/// `name`; data that cannot be decompressed gives a verdict with `error`
/// set.
pub fn verdict_of_bytes(
    scanner: &Scanner,
    name: &str,
    bytes: &[u8],
    cancel: &AtomicBool,
) -> Verdict {
    match scan_bytes(scanner, name, bytes, cancel) {
        Ok(report) => Verdict::of(name, &report),
        Err(e) => Verdict::unreadable(name, vec![name.to_string()], e.to_string()),
    }
}

/// The verdict of one job, as `cudnnlog scan` gives it in a fleet: an
/// unreadable file is named in its `error`.
pub fn verdict_of_job(scanner: &Scanner, job: &Job, cancel: &AtomicBool) -> Verdict {
    scan_job_with(scanner, job, MmapChoice::never(), &Cancel(cancel)).verdict
}

/// The default name of the job a report is about: its one source's path,
/// or its sources' paths joined with `, `.
pub fn report_name(report: &Report) -> String {
    match report.sources.as_slice() {
        [] => MEMORY.to_string(),
        sources => sources
            .iter()
            .map(|s| s.path.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The files `triage` reads, and a verdict for each directory that could
/// not be read.
#[derive(Debug, Default)]
pub struct Expanded {
    /// Files named directly, as given; files found in directories, sorted
    /// per directory given.
    pub files: Vec<PathBuf>,
    /// One unreadable verdict per directory that could not be listed.
    pub unreadable: Vec<Verdict>,
}

/// Expands paths as `cudnnlog scan` does ([`cudnnlog::source::Walk`]): a file (or
/// anything not a directory, even a missing path: its verdict says why it
/// cannot be read) is kept as given; a directory contributes its log files,
/// recursively, sorted, honouring ignore files and skipping hidden entries,
/// binaries and files that are not logs (checkpoints, images, source,
/// JSON). Each path is kept once.
pub fn expand(paths: &[PathBuf]) -> Expanded {
    let mut out = Expanded::default();
    // A file given twice (or named and also inside a directory given) is
    // read once.
    let mut listed = HashSet::new();
    for path in paths {
        let walked = match Walk::default().files(std::slice::from_ref(path)) {
            Ok(walked) => walked,
            Err(e) => {
                let name = path.display().to_string();
                out.unreadable.push(Verdict::unreadable(
                    &name,
                    vec![name.clone()],
                    e.to_string(),
                ));
                continue;
            }
        };
        for skipped in walked.skipped {
            if skipped.why == SkipReason::Unreadable {
                let name = skipped.path.display().to_string();
                out.unreadable.push(Verdict::unreadable(
                    &name,
                    vec![name.clone()],
                    skipped.to_string(),
                ));
            }
        }
        out.files.extend(
            walked
                .files
                .into_iter()
                .filter(|f| listed.insert(f.clone())),
        );
    }
    out
}

/// The jobs of `files`: grouped as `cudnnlog scan` groups them (the rank
/// files of one job are one job), or one job per file.
pub fn jobs(files: &[PathBuf], group: bool) -> Vec<Job> {
    if group {
        cudnnlog::fleet::group(files)
    } else {
        files.iter().cloned().map(Job::single).collect()
    }
}

/// A [`FindingsSink`] that ends its scan once `cancel` is set: at its next
/// match or window (a window is a few MiB of log), with an error that the
/// caller, who set the flag, discards. Its forks share the flag.
pub struct Cancellable<'c, 'a> {
    /// The findings.
    pub sink: FindingsSink<'c>,
    cancel: &'a AtomicBool,
}

impl<'c, 'a> Cancellable<'c, 'a> {
    /// `sink`, stopped when `cancel` is set.
    pub fn new(sink: FindingsSink<'c>, cancel: &'a AtomicBool) -> Self {
        Cancellable { sink, cancel }
    }

    /// The error that ends a cancelled scan.
    fn go_on(&self) -> Result<(), Error> {
        match self.cancel.load(Ordering::Relaxed) {
            false => Ok(()),
            true => Err(Error::Io {
                path: MEMORY.to_string(),
                source: std::io::Error::new(std::io::ErrorKind::Interrupted, "scan cancelled"),
            }),
        }
    }
}

impl Sink for Cancellable<'_, '_> {
    type Error = Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, Error> {
        self.go_on()?;
        self.sink.matched(m)
    }

    fn matched_copies(&mut self, group: &[Match<'_>], copies: Copies) -> Result<bool, Error> {
        self.go_on()?;
        self.sink.matched_copies(group, copies)
    }

    fn window_end(&mut self, window: &Window<'_>) -> Result<(), Error> {
        self.go_on()?;
        self.sink.window_end(window)
    }

    fn environment(&mut self, fact: &EnvFact<'_>) -> Result<(), Error> {
        self.sink.environment(fact)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), Error> {
        self.sink.unclassified(line, at)
    }

    fn source_end(&mut self, info: &SourceInfo) -> Result<(), Error> {
        self.sink.source_end(info)
    }
}

impl Fork for Cancellable<'_, '_> {
    fn fork(&self) -> Self {
        Cancellable::new(self.sink.fork(), self.cancel)
    }

    fn join(&mut self, other: Self) {
        self.sink.join(other.sink);
    }
}

/// Each file of a job scanned into a [`Cancellable`] sink.
struct Cancel<'a>(&'a AtomicBool);

impl<'c, 'a> ScanHooks<'c> for Cancel<'a> {
    type Sink = Cancellable<'c, 'a>;

    fn sink(&self, _: usize, _: &JobInput, fork: FindingsSink<'c>) -> Cancellable<'c, 'a> {
        Cancellable::new(fork, self.0)
    }

    fn findings(&self, sink: Cancellable<'c, 'a>) -> FindingsSink<'c> {
        sink.sink
    }
}
