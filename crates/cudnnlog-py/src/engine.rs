//! The Rust side of the bindings, free of Python: building (and caching)
//! scanners, scanning a file or bytes into a report or a verdict, and
//! expanding the paths given to `triage` into jobs.
//!
//! Nothing here holds the GIL; the Python layer calls these inside
//! `Python::detach`.

use cudnnlog::fleet::Job;
use cudnnlog::fleet::{scan_job, Verdict};
use cudnnlog::report::FindingsSink;
use cudnnlog::source::{decompressed, Compression};
use cudnnlog::source::{SkipReason, Walk};
use cudnnlog::{Catalog, CatalogBuilder, Error, MmapChoice, Report, Scanner, ScannerBuilder};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The name of bytes scanned without one.
pub const MEMORY: &str = "<memory>";

/// The scanner of the built-in catalog, built on first use and shared by
/// every call that gives no pattern directory.
static BUILTIN: Mutex<Option<Arc<Scanner>>> = Mutex::new(None);

/// A scanner of the built-in catalog plus the patterns in `dirs` (each a
/// directory of `.toml` files, as `cudnnlog scan --patterns DIR` takes).
/// Without directories, the shared built-in scanner; with some, a new one
/// (building costs some 50 ms): the directories are read afresh each time.
pub fn scanner(dirs: &[PathBuf]) -> Result<Arc<Scanner>, Error> {
    if dirs.is_empty() {
        if let Some(s) = lock(&BUILTIN).as_ref() {
            return Ok(Arc::clone(s));
        }
        // Built outside the lock: two first callers may both build one; the
        // first to finish is kept.
        let built = Arc::new(ScannerBuilder::new().build(Catalog::builtin()?));
        let mut slot = lock(&BUILTIN);
        return Ok(Arc::clone(slot.get_or_insert(built)));
    }
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
pub fn scan_path(scanner: &Scanner, path: &Path) -> Result<Report, Error> {
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_path_parallel(path, MmapChoice::never(), &mut sink, &|_| {})?;
    Ok(sink.into_report())
}

/// The report of a log held in memory, its source named `name`. gzip and
/// zstd data (told by their magic numbers) are decompressed.
pub fn scan_bytes(scanner: &Scanner, name: &str, bytes: &[u8]) -> Result<Report, Error> {
    let mut sink = FindingsSink::new(scanner.catalog());
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
    let mut report = sink.into_report();
    report.sources[0].path = name.to_string();
    Ok(report)
}

/// The verdict of one file as a job of its own: an unreadable file gives
/// a verdict with `error` set, not an error. `name` renames the job.
pub fn verdict_of_path(scanner: &Scanner, path: &Path, name: Option<&str>) -> Verdict {
    let mut verdict = scan_job(
        scanner,
        &Job::single(path.to_path_buf()),
        MmapChoice::never(),
    )
    .verdict;
    if let Some(name) = name {
        verdict.path = name.to_string();
    }
    verdict
}

/// The verdict of a log held in memory, the job and its source named
/// `name`; data that cannot be decompressed gives a verdict with `error`
/// set.
pub fn verdict_of_bytes(scanner: &Scanner, name: &str, bytes: &[u8]) -> Verdict {
    match scan_bytes(scanner, name, bytes) {
        Ok(report) => Verdict::of(name, &report),
        Err(e) => Verdict::unreadable(name, vec![name.to_string()], e.to_string()),
    }
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
