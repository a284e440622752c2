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

pub use summary::{Group, Summary, EXAMPLES, MAX_GROUPS};
pub use verdict::{
    fingerprint_of, primary_finding, Verdict, VerdictCause, VerdictPlace, FINGERPRINT_TOKENS,
};

// Jobs: the logs of one run, grouped from a list of files.
pub use crate::source::job::{group, group_paths, Job, JobSource};

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
    scan_job_with(scanner, job, mmap, &NoHooks)
}

/// [`scan_job`], each file scanned into the sink `hooks` makes
/// ([`scan_inputs`]): a sink that fails (a caller's cancellation, at the
/// next window) ends that file's scan, its error in the verdict's `error`.
///
/// ```
/// use cudnnlog::fleet::{scan_job, scan_job_with, Job, NoHooks};
/// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
/// let path = std::env::temp_dir().join(format!("cudnnlog-doc-scan-job-with-{}.log", std::process::id()));
/// std::fs::write(&path, "RuntimeError: CUDA error: an illegal memory access was encountered\n")?;
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let job = Job::single(path.clone());
/// let done = scan_job_with(&scanner, &job, MmapChoice::never(), &NoHooks);
/// assert_eq!(done.verdict, scan_job(&scanner, &job, MmapChoice::never()).verdict);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan_job_with<'c, H: ScanHooks<'c>>(
    scanner: &'c Scanner,
    job: &Job,
    mmap: MmapChoice,
    hooks: &H,
) -> Triaged {
    let inputs: Vec<JobInput> = job.sources.iter().cloned().map(JobInput::File).collect();
    let Scanned { sink, errors } = scan_inputs(scanner, &inputs, mmap, hooks);
    let errors: Vec<String> = errors.iter().map(|(_, e)| e.to_string()).collect();
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

/// One input of a job, for [`scan_inputs`]: one of its files (with the
/// rank its name gives), or standard input.
///
/// ```
/// use cudnnlog::fleet::{group, JobInput};
/// let job = &group(&["logs/rank1.log".into()])[0];
/// let input = JobInput::File(job.sources[0].clone());
/// assert_eq!(input.name(), "logs/rank1.log");
/// assert_eq!(JobInput::Stdin.name(), "<stdin>");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobInput {
    /// A file; its untagged lines are its rank's, when it has one.
    File(JobSource),
    /// Standard input ([`Scanner::scan_stdin`]).
    Stdin,
}

impl JobInput {
    /// The input as a report names it: the path as given, or `<stdin>`.
    ///
    /// ```
    /// use cudnnlog::fleet::{JobInput, JobSource};
    /// let file = JobInput::File(JobSource { path: "train.log".into(), rank: None });
    /// assert_eq!(file.name(), "train.log");
    /// ```
    pub fn name(&self) -> String {
        match self {
            JobInput::File(source) => source.path.display().to_string(),
            JobInput::Stdin => "<stdin>".to_string(),
        }
    }
}

/// What a caller adds to [`scan_inputs`]: a sink around each input's fork
/// of the job's [`FindingsSink`] (one that also streams what it sees, say),
/// progress as each file is read, and whether the inputs are scanned at
/// once. The forks, the ranks and the join stay [`scan_inputs`]' own, so
/// the report is the one [`scan_job`] gives.
///
/// ```
/// use cudnnlog::fleet::{scan_inputs, JobInput, JobSource, ScanHooks};
/// use cudnnlog::report::FindingsSink;
/// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// /// Counts the bytes read, over all files.
/// struct Bytes(AtomicU64);
///
/// impl<'c> ScanHooks<'c> for Bytes {
///     type Sink = FindingsSink<'c>;
///     fn sink(&self, _: usize, _: &JobInput, fork: FindingsSink<'c>) -> FindingsSink<'c> {
///         fork
///     }
///     fn findings(&self, sink: FindingsSink<'c>) -> FindingsSink<'c> {
///         sink
///     }
///     fn progress(&self, _: usize, done: u64) {
///         self.0.fetch_max(done, Ordering::Relaxed);
///     }
/// }
///
/// let path = std::env::temp_dir().join(format!("cudnnlog-doc-hooks-{}.log", std::process::id()));
/// std::fs::write(&path, "RuntimeError: CUDA error: an illegal memory access was encountered\n")?;
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let inputs = [JobInput::File(JobSource { path: path.clone(), rank: Some(2) })];
/// let hooks = Bytes(AtomicU64::new(0));
/// let scanned = scan_inputs(&scanner, &inputs, MmapChoice::never(), &hooks);
/// assert_eq!(hooks.0.load(Ordering::Relaxed), std::fs::metadata(&path)?.len());
/// assert_eq!(scanned.sink.into_report().findings[0].ranks, [2]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ScanHooks<'c>: Sync {
    /// The sink each input is scanned into: its fork, perhaps wrapped.
    type Sink: Fork<Error = crate::Error>;

    /// The sink input `index` is scanned into, around `fork`, an empty
    /// fork of the job's sink.
    fn sink(&self, index: usize, input: &JobInput, fork: FindingsSink<'c>) -> Self::Sink;

    /// The fork inside `sink`, once its input is scanned, to be joined.
    fn findings(&self, sink: Self::Sink) -> FindingsSink<'c>;

    /// Called with the bytes of file `index` read so far, from the
    /// thread that reads it. Nothing by default.
    fn progress(&self, index: usize, done: u64) {
        let _ = (index, done);
    }

    /// Whether the inputs are scanned at once on rayon's threads (the
    /// report is the same): a job of many files is done sooner, but a
    /// fleet, whose jobs already fill every core, gains nothing. `false`
    /// by default: one after the other.
    fn parallel(&self) -> bool {
        false
    }
}

/// No hooks: each input straight into its fork, one after the other; what
/// [`scan_job`] uses.
///
/// ```
/// use cudnnlog::fleet::{scan_inputs, JobInput, NoHooks};
/// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let scanned = scan_inputs(&scanner, &[], MmapChoice::never(), &NoHooks);
/// assert!(scanned.errors.is_empty() && scanned.sink.sources().is_empty());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl<'c> ScanHooks<'c> for NoHooks {
    type Sink = FindingsSink<'c>;

    fn sink(&self, _: usize, _: &JobInput, fork: FindingsSink<'c>) -> FindingsSink<'c> {
        fork
    }

    fn findings(&self, sink: FindingsSink<'c>) -> FindingsSink<'c> {
        sink
    }
}

/// The inputs of one job, scanned by [`scan_inputs`].
///
/// ```
/// use cudnnlog::fleet::{scan_inputs, JobInput, JobSource, NoHooks};
/// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let missing = JobInput::File(JobSource { path: "/no/such/rank0.log".into(), rank: Some(0) });
/// let scanned = scan_inputs(&scanner, &[missing], MmapChoice::never(), &NoHooks);
/// assert_eq!(scanned.errors[0].0, 0);
/// assert!(scanned.errors[0].1.to_string().contains("rank0.log"));
/// ```
pub struct Scanned<'c> {
    /// Every input's findings, joined in the order of the inputs, the
    /// untagged lines of a file with a rank taken as that rank's: call
    /// [`FindingsSink::into_report`] for the report.
    pub sink: FindingsSink<'c>,
    /// The inputs that could not be read, or not to their end, by index,
    /// in order. What was read before a read failed part way is in
    /// [`sink`](Scanned::sink).
    pub errors: Vec<(usize, crate::Error)>,
}

impl<'c> Scanned<'c> {
    /// Takes in the fork input `index` was scanned into, and its error.
    fn join(
        &mut self,
        input: &JobInput,
        index: usize,
        error: Option<crate::Error>,
        mut fork: FindingsSink<'c>,
    ) {
        if let Some(e) = error {
            self.errors.push((index, e));
        }
        if let JobInput::File(JobSource {
            rank: Some(rank), ..
        }) = input
        {
            fork.assume_rank(*rank);
        }
        self.sink.join(fork);
    }
}

/// Scans the inputs of one job, each into a fork of one [`FindingsSink`]
/// (made by `hooks`), the files with [`Scanner::scan_path_parallel`] and
/// standard input with [`Scanner::scan_stdin`]; takes each file's untagged
/// lines as its rank's ([`FindingsSink::assume_rank`]) and joins the forks
/// in order, so each input's sources are numbered after those before it.
/// [`scan_job`] is this without hooks, and its verdict.
///
/// ```
/// use cudnnlog::fleet::{group, scan_inputs, JobInput, NoHooks};
/// use cudnnlog::{Catalog, MmapChoice, ScannerBuilder};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-scan-inputs-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("rank0.log"), "INFO step 1\n")?;
/// std::fs::write(dir.join("rank1.log"), "RuntimeError: CUDA error: an illegal memory access was encountered\n")?;
/// let job = &group(&[dir.join("rank0.log"), dir.join("rank1.log")])[0];
/// let inputs: Vec<JobInput> = job.sources.iter().cloned().map(JobInput::File).collect();
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let report = scan_inputs(&scanner, &inputs, MmapChoice::never(), &NoHooks).sink.into_report();
/// assert_eq!((report.sources.len(), report.findings[0].first.source), (2, 1));
/// assert_eq!(report.findings[0].ranks, [1]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn scan_inputs<'c, H: ScanHooks<'c>>(
    scanner: &'c Scanner,
    inputs: &[JobInput],
    mmap: MmapChoice,
    hooks: &H,
) -> Scanned<'c> {
    let mut scanned = Scanned {
        sink: FindingsSink::new(scanner.catalog()),
        errors: Vec::new(),
    };
    // Each input into a fork of its own: a file's untagged lines are its
    // rank's. A truncated archive keeps what was read before the damage
    // (the fork has that source), and the error is noted.
    let scan = |index: usize, input: &JobInput, fork: FindingsSink<'c>| {
        let mut sink = hooks.sink(index, input, fork);
        let result = match input {
            JobInput::Stdin => scanner.scan_stdin(&mut sink),
            JobInput::File(source) => {
                let progress = |done| hooks.progress(index, done);
                scanner.scan_path_parallel(&source.path, mmap, &mut sink, &progress)
            }
        };
        (result.err(), hooks.findings(sink))
    };
    if hooks.parallel() {
        use rayon::prelude::*;
        let forks: Vec<FindingsSink<'c>> = inputs.iter().map(|_| scanned.sink.fork()).collect();
        let done: Vec<_> = inputs
            .par_iter()
            .zip(forks)
            .enumerate()
            .map(|(i, (input, fork))| scan(i, input, fork))
            .collect();
        for (i, (error, fork)) in done.into_iter().enumerate() {
            scanned.join(&inputs[i], i, error, fork);
        }
    } else {
        for (i, input) in inputs.iter().enumerate() {
            let (error, fork) = scan(i, input, scanned.sink.fork());
            scanned.join(input, i, error, fork);
        }
    }
    scanned
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
    done: impl FnMut(usize, Triaged) -> bool,
) {
    triage_batches(scanner, jobs, mmap, jobs.len().max(1), done);
}

/// Scans `jobs` on all cores `batch` at a time (the next batch once the
/// one before it is done) and calls `done` on the calling thread with each
/// result as it comes; once `done` returns `false`, the jobs not yet
/// started are not scanned and no more results are given.
fn triage_batches(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    batch: usize,
    mut done: impl FnMut(usize, Triaged) -> bool,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Bounded: a caller slower than the scans (one that writes each
    // verdict to a pipe) makes them wait, instead of queueing every job's
    // whole report (100,000 jobs queued 130 MiB of them for NDJSON).
    let (tx, rx) = std::sync::mpsc::sync_channel(2 * rayon::current_num_threads());
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || {
            use rayon::prelude::*;
            for (b, jobs) in jobs.chunks(batch).enumerate() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let base = b * batch;
                jobs.par_iter()
                    .enumerate()
                    .for_each_with(tx.clone(), |tx, (i, job)| {
                        if !stop.load(Ordering::Relaxed) {
                            // The receiver outlives the senders; nothing
                            // to do if it has gone.
                            let _ = tx.send((base + i, scan_job(scanner, job, mmap)));
                        }
                    });
            }
        });
        for (i, t) in rx {
            if !stop.load(Ordering::Relaxed) && !done(i, t) {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
}

/// How many jobs [`triage_in_order`] scans at once at most: the results it
/// holds until their turn.
pub const IN_ORDER_BATCH: usize = 1024;

/// [`triage`], `done` called in the jobs' order: for a format that writes
/// each job in input order as it goes (compact lines), in memory that does
/// not grow with the number of jobs.
///
/// Jobs are scanned on all cores a batch of [`IN_ORDER_BATCH`] at a time,
/// and each batch's results are handed over in order as they become due:
/// at most a batch of results is held. A batch starts once the one before
/// it is done (a job of a huge log holds the next batch back while the
/// cores help scan it). `done` returns whether to go on.
///
/// ```
/// use cudnnlog::{fleet::triage_in_order, fleet::Job, Catalog, MmapChoice, ScannerBuilder};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-triage-order-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let jobs: Vec<Job> = (0..5)
///     .map(|i| {
///         let path = dir.join(format!("job{i}.log"));
///         std::fs::write(&path, "INFO step 1\n").unwrap();
///         Job::single(path)
///     })
///     .collect();
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut order = Vec::new();
/// triage_in_order(&scanner, &jobs, MmapChoice::never(), |i, _| { order.push(i); true });
/// assert_eq!(order, [0, 1, 2, 3, 4]);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn triage_in_order(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    mut done: impl FnMut(usize, Triaged) -> bool,
) {
    // Results not yet due, by index: at most a batch of them.
    let mut pending = std::collections::BTreeMap::new();
    let mut due = 0;
    triage_batches(scanner, jobs, mmap, IN_ORDER_BATCH, |i, t| {
        pending.insert(i, t);
        while let Some(t) = pending.remove(&due) {
            due += 1;
            if !done(due - 1, t) {
                return false;
            }
        }
        true
    });
}
