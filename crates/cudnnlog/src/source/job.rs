//! Jobs: which input files one verdict is about.
//!
//! A *source* is one file; a *job* is what one verdict is about. Each file
//! is its own job, except files that visibly are the ranks or streams of
//! one job:
//!
//! - files of one directory whose names differ only by a rank, worker,
//!   process, task, GPU or node number (`rank3.log`, `train.worker-1.txt`,
//!   `slurm-8812-task7.out`), by the stream (`job.out` / `job.err`,
//!   `stdout.log` / `stderr.log`), or by a rotation suffix (`train.log`,
//!   `train.log.1`, `train.log.2.gz`);
//! - torchrun's `--log-dir` layout, `<dir>/attempt_<N>/<rank>/stdout.log`
//!   and `stderr.log`: every attempt and rank under `<dir>` is one job (an
//!   attempt is a restart, a run of that job).
//!
//! A bare number is not enough (`job-1812.log` and `job-1813.log` are two
//! jobs): the number must follow a word that says what it counts.
//!
//! ```
//! use cudnnlog::fleet::group;
//! use std::path::PathBuf;
//!
//! let paths: Vec<PathBuf> = [
//!     "fleet/run-7/rank0.log",
//!     "fleet/run-7/rank1.log",
//!     "fleet/job-1812.log",
//!     "fleet/job-1813.log",
//! ]
//! .iter()
//! .map(PathBuf::from)
//! .collect();
//! let jobs = group(&paths);
//! assert_eq!(jobs.len(), 3);
//! assert_eq!(jobs[0].name, "fleet/run-7/rank*.log");
//! assert_eq!(jobs[0].sources[1].rank, Some(1));
//! assert_eq!(jobs[1].name, "fleet/job-1812.log");
//! ```

use regex::Regex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One job: the files one verdict is about, in the order given.
///
/// ```
/// use cudnnlog::fleet::{group, Job};
/// use std::path::PathBuf;
/// let paths: Vec<PathBuf> = ["logs/job.out", "logs/job.err", "logs/eval.log"].iter().map(PathBuf::from).collect();
/// let jobs = group(&paths);
/// // The two streams of one job are one job; the other file is its own.
/// assert_eq!(jobs.len(), 2);
/// assert_eq!(jobs[0].sources.iter().map(|s| s.path.to_str().unwrap()).collect::<Vec<_>>(), ["logs/job.out", "logs/job.err"]);
/// assert_eq!(jobs[1], Job::single("logs/eval.log".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// How the job is named in a verdict: the file's path for a one-file
    /// job, else the files' common pattern (`logs/rank*.log`,
    /// `logs/attempt_*/*/std*.log`).
    pub name: String,
    /// Its files.
    pub sources: Vec<JobSource>,
}

/// One file of a job.
///
/// ```
/// use cudnnlog::fleet::group;
/// use std::path::PathBuf;
/// let paths: Vec<PathBuf> = ["run/attempt_0/0/stderr.log", "run/attempt_0/1/stderr.log"].iter().map(PathBuf::from).collect();
/// let job = &group(&paths)[0];
/// // torchrun's `--log-dir` layout: the directory names the rank.
/// assert_eq!(job.sources.iter().map(|s| s.rank).collect::<Vec<_>>(), [Some(0), Some(1)]);
/// assert_eq!(job.sources[1].path, PathBuf::from("run/attempt_0/1/stderr.log"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSource {
    /// The file.
    pub path: PathBuf,
    /// The rank its name says it is the log of (`rank3.log`, torchrun's
    /// `attempt_0/3/stderr.log`): lines without a rank tag are that
    /// rank's.
    pub rank: Option<u32>,
}

impl Job {
    /// A job of one file, named by its path.
    ///
    /// ```
    /// let job = cudnnlog::fleet::Job::single("train.log".into());
    /// assert_eq!((job.name.as_str(), job.sources.len()), ("train.log", 1));
    /// ```
    pub fn single(path: PathBuf) -> Job {
        Job {
            name: path.display().to_string(),
            sources: vec![JobSource { path, rank: None }],
        }
    }

    /// One job of every path, in order: what `--job` asks for.
    ///
    /// ```
    /// let job = cudnnlog::fleet::Job::merged("all", vec!["a.log".into(), "b.log".into()]);
    /// assert_eq!(job.sources.len(), 2);
    /// ```
    pub fn merged(name: &str, paths: Vec<PathBuf>) -> Job {
        Job {
            name: name.to_string(),
            sources: paths
                .into_iter()
                .map(|path| JobSource { path, rank: None })
                .collect(),
        }
    }
}

/// A counted word and its number in a file name: `rank3`, `worker-1`,
/// `local_rank_0`, `node02`, `task.7`.
fn counter() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)(^|[^a-z])(local[_-]?rank|rank|worker|proc|process|task|gpu|device|node|host)([-_.]?)(\d{1,5})(?:$|[^0-9])",
        )
        .expect("counter regex")
    })
}

/// The words whose number is a rank (a node or host number is not).
fn is_rank_word(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    !matches!(w.as_str(), "node" | "host")
}

/// The part of a file name that says which stream it is.
fn stream() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)(^|[^a-z])(stdout|stderr|out|err|output|error)(\.|$)")
            .expect("stream regex")
    })
}

/// A rotation or compression suffix: `.1`, `.2.gz`, `.gz`, `.zst`.
fn rotation() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)(\.\d{1,3})?(\.(gz|zst|zstd))?$").expect("rotation regex"))
}

/// A file name with what tells the files of one job apart masked, and the
/// rank the name gives.
fn mask(name: &str) -> (String, Option<u32>) {
    let mut rank = None;
    let rotated = rotation().replace(name, "");
    let mut masked = String::with_capacity(name.len());
    let mut last = 0;
    for c in counter().captures_iter(&rotated) {
        let (word, digits) = (&c[2], c.get(4).expect("digits"));
        if rank.is_none() && is_rank_word(word) {
            rank = digits.as_str().parse().ok();
        }
        masked.push_str(&rotated[last..digits.start()]);
        masked.push('*');
        last = digits.end();
    }
    masked.push_str(&rotated[last..]);
    let masked = stream()
        .replace_all(&masked, |c: &regex::Captures<'_>| {
            format!("{}std*{}", &c[1], &c[3])
        })
        .into_owned();
    (masked, rank)
}

/// torchrun's `--log-dir` layout: `<dir>/attempt_<N>/<rank>/<stream>.log`.
/// Returns `<dir>` and the rank.
fn torchrun(path: &Path) -> Option<(PathBuf, u32)> {
    let name = path.file_name()?.to_str()?;
    if !matches!(name, "stdout.log" | "stderr.log") {
        return None;
    }
    let rank_dir = path.parent()?;
    let rank: u32 = rank_dir.file_name()?.to_str()?.parse().ok()?;
    let attempt = rank_dir.parent()?;
    let n = attempt.file_name()?.to_str()?.strip_prefix("attempt_")?;
    n.parse::<u32>().ok()?;
    Some((attempt.parent()?.to_path_buf(), rank))
}

/// The attempt a file of torchrun's `--log-dir` layout belongs to
/// (`<dir>/attempt_<N>/<rank>/<stream>.log`): a restart of the job.
pub(crate) fn attempt_of(path: &Path) -> Option<u32> {
    torchrun(path)?;
    let attempt = path.parent()?.parent()?.file_name()?.to_str()?;
    attempt.strip_prefix("attempt_")?.parse().ok()
}

/// Groups files into jobs, in the order of each job's first file.
///
/// ```
/// use cudnnlog::fleet::group;
/// use std::path::PathBuf;
/// let paths: Vec<PathBuf> = ["logs/train.log", "logs/train.log.1", "logs/train.log.2.gz", "out/attempt_0/3/stderr.log", "out/attempt_1/0/stdout.log"]
///     .iter()
///     .map(PathBuf::from)
///     .collect();
/// let jobs = group(&paths);
/// assert_eq!(jobs.iter().map(|j| j.sources.len()).collect::<Vec<_>>(), [3, 2]);
/// assert_eq!((jobs[1].name.as_str(), jobs[1].sources[0].rank), ("out/attempt_*/*/std*.log", Some(3)));
/// ```
pub fn group(paths: &[PathBuf]) -> Vec<Job> {
    group_paths(paths.iter().map(PathBuf::as_path))
}

/// [`group`] of paths borrowed from anywhere (the inputs of a command
/// line, say): no list of them is made. Each job holds its own copy of its
/// files' paths, and nothing else per file.
///
/// ```
/// use cudnnlog::fleet::group_paths;
/// use std::path::Path;
/// let inputs = ["run/rank0.log", "run/rank1.log", "eval.log"];
/// let jobs = group_paths(inputs.iter().map(Path::new));
/// assert_eq!(jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["run/rank*.log", "eval.log"]);
/// ```
pub fn group_paths<'p>(paths: impl IntoIterator<Item = &'p Path>) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    // The key of each job: one copy, dropped once the files are grouped.
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for path in paths {
        let (key, rank) = key_of(path);
        let source = JobSource {
            path: path.to_path_buf(),
            rank,
        };
        match index.get(&key) {
            Some(&i) => jobs[i].sources.push(source),
            None => {
                index.insert(key, jobs.len());
                jobs.push(Job {
                    name: String::new(),
                    sources: vec![source],
                });
            }
        }
    }
    drop(index);
    for job in &mut jobs {
        job.sources.shrink_to_fit();
        job.name = match job.sources.as_slice() {
            [one] => one.path.to_string_lossy().into_owned(),
            [first, ..] => key_of(&first.path).0.to_string_lossy().into_owned(),
            [] => String::new(),
        };
        // One file that is alone keeps no rank of its own: nothing to tell
        // it apart from.
        if job.sources.len() == 1 && torchrun(&job.sources[0].path).is_none() {
            job.sources[0].rank = None;
        }
    }
    jobs
}

/// What the files of one job share (`logs/rank*.log`,
/// `logs/attempt_*/*/std*.log`), and the rank `path`'s name gives.
fn key_of(path: &Path) -> (PathBuf, Option<u32>) {
    let (key, rank) = match torchrun(path) {
        Some((dir, rank)) => (dir.join("attempt_*/*/std*.log"), Some(rank)),
        None => {
            let name = path.file_name().map(|n| n.to_string_lossy());
            let (masked, rank) = mask(name.as_deref().unwrap_or(""));
            let dir = path.parent().unwrap_or(Path::new(""));
            (dir.join(masked), rank)
        }
    };
    (crate::source::walk::compact(key), rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Vec<(String, Vec<Option<u32>>)> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        group(&paths)
            .into_iter()
            .map(|j| (j.name, j.sources.iter().map(|s| s.rank).collect()))
            .collect()
    }

    #[test]
    fn rank_files_of_one_directory_are_one_job() {
        let got = names(&["d/rank0.log", "d/rank1.log", "d/rank12.log", "e/rank0.log"]);
        assert_eq!(
            got,
            [
                ("d/rank*.log".to_string(), vec![Some(0), Some(1), Some(12)]),
                ("e/rank0.log".to_string(), vec![None]),
            ]
        );
    }

    #[test]
    fn words_that_count_ranks_workers_and_tasks() {
        let got = names(&[
            "a/train.worker-0.txt",
            "a/train.worker-1.txt",
            "b/local_rank_2.log",
            "b/local_rank_3.log",
            "c/slurm-8812-task7.out",
            "c/slurm-8812-task9.out",
            "n/node01.log",
            "n/node02.log",
        ]);
        let ranks: Vec<Vec<Option<u32>>> = got.iter().map(|g| g.1.clone()).collect();
        assert_eq!(
            ranks,
            [
                vec![Some(0), Some(1)],
                vec![Some(2), Some(3)],
                vec![Some(7), Some(9)],
                vec![None, None],
            ]
        );
    }

    #[test]
    fn a_bare_number_is_a_job_id_not_a_rank() {
        let got = names(&[
            "f/job-1812.log",
            "f/job-1813.log",
            "f/run_4.log",
            "f/run_5.log",
        ]);
        assert_eq!(got.len(), 4);
    }

    #[test]
    fn streams_and_rotations_join_their_job() {
        let got = names(&[
            "s/slurm-77.out",
            "s/slurm-77.err",
            "s/slurm-78.out",
            "t/stdout.log",
            "t/stderr.log",
            "r/train.log",
            "r/train.log.1",
            "r/train.log.2.gz",
        ]);
        let sizes: Vec<usize> = got.iter().map(|g| g.1.len()).collect();
        assert_eq!(sizes, [2, 1, 2, 3]);
        assert_eq!(got[1].0, "s/slurm-78.out");
    }

    #[test]
    fn torchrun_log_dir_is_one_job_across_attempts() {
        let got = names(&[
            "logs/j1/attempt_0/0/stdout.log",
            "logs/j1/attempt_0/0/stderr.log",
            "logs/j1/attempt_0/1/stderr.log",
            "logs/j1/attempt_1/1/stderr.log",
            "logs/j2/attempt_0/0/stderr.log",
        ]);
        assert_eq!(
            got,
            [
                (
                    "logs/j1/attempt_*/*/std*.log".to_string(),
                    vec![Some(0), Some(0), Some(1), Some(1)]
                ),
                ("logs/j2/attempt_0/0/stderr.log".to_string(), vec![Some(0)]),
            ]
        );
    }

    #[test]
    fn a_torchrun_file_names_its_attempt() {
        assert_eq!(
            attempt_of(Path::new("logs/j1/attempt_2/0/stderr.log")),
            Some(2)
        );
        assert_eq!(attempt_of(Path::new("logs/j1/rank0.log")), None);
        assert_eq!(attempt_of(Path::new("attempt_x/0/stderr.log")), None);
    }

    #[test]
    fn hostile_names_do_not_panic() {
        let got = names(&["", "/", "é/rank9999999999.log", "x/.log", "x/rank.log"]);
        assert!(!got.is_empty());
    }
}
