//! Fleet triage: a [`Verdict`] per [`Job`], and a [`Summary`]
//! that groups the same failure across jobs by fingerprint.
//!
//! [`scan_job`] scans the files of one job into one report, each file's
//! untagged lines taken as the rank its name gives; [`triage`] does that
//! for many jobs on every core and hands each verdict over as soon as its
//! job is done. The verdict of a job is the verdict of scanning that job
//! alone.
//!
//! ```
//! use cudnnlog::fleet::{triage, Summary};
//! use cudnnlog::fleet::group;
//! use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
//!
//! let dir = std::env::temp_dir().join(format!("cudnnlog-fleet-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
//! for job in ["a", "b"] {
//!     std::fs::write(dir.join(format!("{job}.log")), oom).unwrap();
//! }
//! std::fs::write(dir.join("c.log"), "epoch 1 done\n").unwrap();
//! let paths: Vec<_> = ["a", "b", "c"].iter().map(|j| dir.join(format!("{j}.log"))).collect();
//!
//! let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
//! let mut summary = Summary::default();
//! triage(&scanner, &group(&paths), MmapChoice::never(), |_, done| {
//!     summary.add(&done.verdict);
//!     true
//! });
//! let summary = summary.finish();
//! assert_eq!((summary.jobs, summary.failed, summary.clean), (3, 2, 1));
//! assert_eq!(summary.groups[0].count, 2);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), cudnnlog::Error>(())
//! ```

mod summary;
mod verdict;

pub use summary::{Group, Summary, EXAMPLES};
pub use verdict::{
    fingerprint_of, primary_finding, Verdict, VerdictCause, VerdictPlace, FINGERPRINT_TOKENS,
};

// Jobs: the logs of one run, grouped from a list of files.
pub use crate::source::job::{group, Job, JobSource};

use crate::report::{FindingsSink, Report};
use crate::sink::Fork;
use crate::{MmapChoice, Scanner};
use serde::Serialize;

/// The schema of a fleet document (`--format json` over many jobs).
pub const SCHEMA: &str = "cudnnlog.fleet/1";

/// One job, scanned.
///
/// ```
/// use cudnnlog::{fleet::{scan_job, Job}, report::Outcome, Catalog, MmapChoice, ScannerBuilder};
/// let path = std::env::temp_dir().join(format!("cudnnlog-doc-triaged-{}.log", std::process::id()));
/// std::fs::write(&path, "RuntimeError: CUDA error: an illegal memory access was encountered\n").unwrap();
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let done = scan_job(&scanner, &Job::single(path.clone()), MmapChoice::never());
/// assert_eq!((done.verdict.outcome, done.verdict.primary.as_deref()), (Some(Outcome::Failed), Some("cuda.illegal_address")));
/// assert_eq!((done.report.sources.len(), done.report.findings[0].first.line), (1, 1));
/// std::fs::remove_file(&path).unwrap();
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Triaged {
    /// Its verdict.
    pub verdict: Verdict,
    /// Its report (the sources that could be read).
    pub report: Report,
}

/// A fleet document: one report per job, then the summary.
#[derive(Clone, Debug, Serialize)]
pub struct FleetDocument {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The jobs, in input order.
    pub jobs: Vec<Triaged>,
    /// What they add up to.
    pub summary: Summary,
}

/// Scans the files of one job into one report and its verdict. A file
/// that cannot be read is named in the verdict's `error`; the others are
/// still scanned, and a job none of whose files could be read has no
/// outcome.
///
/// ```
/// use cudnnlog::{fleet::scan_job, fleet::Job, Catalog, MmapChoice, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let done = scan_job(&scanner, &Job::single("/no/such/file.log".into()), MmapChoice::never());
/// assert!(done.verdict.outcome.is_none());
/// assert!(done.verdict.error.unwrap().contains("file.log"));
/// ```
pub fn scan_job(scanner: &Scanner, job: &Job, mmap: MmapChoice) -> Triaged {
    let mut sink = FindingsSink::new(scanner.catalog());
    let mut errors = Vec::new();
    for source in &job.sources {
        // Each file into a fork of its own: its untagged lines are its
        // rank's. A truncated archive keeps what was read before the
        // damage (the fork has that source), and the error is noted.
        let mut fork = sink.fork();
        if let Err(e) = scanner.scan_path_parallel(&source.path, mmap, &mut fork, &|_| {}) {
            errors.push(e.to_string());
        }
        if let Some(rank) = source.rank {
            fork.assume_rank(rank);
        }
        sink.join(fork);
    }
    let read = sink.sources().len();
    let report = sink.into_report();
    let mut verdict = if read == 0 && !errors.is_empty() {
        Verdict::unreadable(
            &job.name,
            job.sources
                .iter()
                .map(|s| s.path.display().to_string())
                .collect(),
            String::new(),
        )
    } else {
        Verdict::of(&job.name, &report)
    };
    if !errors.is_empty() {
        verdict.error = Some(errors.join("; "));
    }
    Triaged { verdict, report }
}

/// Scans every job on all cores (a job's files one after another) and
/// calls `done` with each job's index and result as soon as it is
/// finished, in the order they finish, on the calling thread. `done`
/// returns whether to go on: `false` (the reader of the verdicts went
/// away) stops the jobs not yet started.
///
/// ```
/// use cudnnlog::{fleet::triage, fleet::Job, report::Outcome, Catalog, MmapChoice, ScannerBuilder};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-triage-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("a.log"), "RuntimeError: CUDA error: an illegal memory access was encountered\n").unwrap();
/// let jobs = [Job::single(dir.join("a.log")), Job::single(dir.join("missing.log"))];
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut outcomes = [None; 2];
/// triage(&scanner, &jobs, MmapChoice::never(), |i, done| { outcomes[i] = Some(done.verdict.outcome); true });
/// assert_eq!(outcomes, [Some(Some(Outcome::Failed)), Some(None)]);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn triage(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    mut done: impl FnMut(usize, Triaged) -> bool,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || {
            use rayon::prelude::*;
            jobs.par_iter()
                .enumerate()
                .for_each_with(tx, |tx, (i, job)| {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return;
                    }
                    // The receiver outlives the senders; nothing to do if it
                    // has gone.
                    let _ = tx.send((i, scan_job(scanner, job, mmap)));
                });
        });
        for (i, t) in rx {
            if !stop.load(std::sync::atomic::Ordering::Relaxed) && !done(i, t) {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
}
