//! Which files to read: the paths given, with directories walked the way
//! rg and fd walk them.
//!
//! In a directory, `.gitignore`, `.ignore` and `.cudnnlogignore` files are
//! honoured (also outside a git repository), hidden entries skipped, and so
//! are files that are not logs: by name (checkpoints, tensors, images,
//! TensorBoard event files, archives, source, documentation, JSON) and by
//! content, when it is binary beyond doubt: the magic number of a binary
//! format (ELF, a CUDA fat binary, PNG, zip, a pickle…), or control bytes
//! throughout its first and last 8 KiB. NUL bytes alone never make a file
//! binary: a crash or a preallocated file leaves them in logs (rg's test,
//! a NUL in the first 8 KiB, dropped such logs and their failures). Rotated
//! and compressed logs (`train.log.1`, `rank0.log.2.gz`) are kept. A file
//! named explicitly is always read. Every file left out is accounted for:
//! [`Walked::skipped`] names those whose content or path is the reason,
//! [`Walked::not_logs`] counts those left out by name.
//!
//! Each file and each directory is reached once, by device and inode,
//! however many paths lead to it (links, a file named twice or named and
//! inside a directory given): the path without links is kept where there
//! is one, and the others are counted ([`Walked::duplicates`]). Ignore
//! files are read within bounds ([`MAX_IGNORE_FILE`], [`MAX_IGNORE_TEXT`]),
//! and no open in a walk blocks (a FIFO where a file or an ignore file was
//! listed is not read).
//!
//! ```
//! use cudnnlog::source::Walk;
//! let dir = std::env::temp_dir().join(format!("cudnnlog-walk-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join(".cache")).unwrap();
//! for name in ["rank0.log", "rank1.log.1.gz", "README.md", "model.safetensors", ".cache/old.log"] {
//!     std::fs::write(dir.join(name), "NCCL WARN\n").unwrap();
//! }
//! let walked = Walk::default().files(&[dir.clone()])?;
//! let names: Vec<_> = walked.files.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
//! assert_eq!(names, ["rank0.log", "rank1.log.1.gz"]);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), cudnnlog::Error>(())
//! ```

use crate::Error;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

mod rules;
mod tree;
use crate::source::{id_of, FileId};
pub use rules::{MAX_IGNORE_FILE, MAX_IGNORE_TEXT};
pub(crate) use tree::compact;

/// How directories are walked. The default is rg's: ignore files read,
/// hidden entries skipped, no depth limit, no globs.
///
/// ```
/// use cudnnlog::source::Walk;
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-walk-struct-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join(".old"))?;
/// for name in ["rank0.log", "rank1.log", ".old/rank0.log"] {
///     std::fs::write(dir.join(name), "NCCL WARN\n")?;
/// }
/// std::fs::write(dir.join(".cudnnlogignore"), "rank1.log\n")?;
/// let names = |walk: Walk| -> Result<Vec<String>, cudnnlog::Error> {
///     let files = walk.files(&[dir.clone()])?.files;
///     Ok(files.iter().map(|p| p.strip_prefix(&dir).unwrap().display().to_string()).collect())
/// };
/// assert_eq!(names(Walk::default())?, ["rank0.log"]);
/// assert_eq!(names(Walk { hidden: true, no_ignore: true, ..Walk::default() })?, [".old/rank0.log", "rank0.log", "rank1.log"]);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// `--glob`s, rg's syntax: a match includes, `!` in front excludes.
    pub globs: Vec<String>,
    /// `--max-depth`: 1 is the directory's own files.
    pub max_depth: Option<usize>,
    /// `--hidden`: walk hidden entries too.
    pub hidden: bool,
    /// `--no-ignore`: ignore files are not read.
    pub no_ignore: bool,
}

/// File name endings that are not logs (lower case, matched at the end of
/// the name once a compression suffix is removed).
const NOT_LOGS: &[&str] = &[
    // Checkpoints, tensors, models, data.
    ".pt",
    ".pth",
    ".ckpt",
    ".safetensors",
    ".bin",
    ".npy",
    ".npz",
    ".pkl",
    ".pickle",
    ".h5",
    ".hdf5",
    ".onnx",
    ".pb",
    ".tflite",
    ".engine",
    ".plan",
    ".msgpack",
    ".parquet",
    ".arrow",
    ".tfrecord",
    ".tfrecords",
    ".index",
    ".gguf",
    ".ggml",
    ".mar",
    ".nemo",
    // Images, media, documents.
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".bmp",
    ".webp",
    ".svg",
    ".ico",
    ".tiff",
    ".mp4",
    ".wav",
    ".mp3",
    ".pdf",
    // Archives and binaries.
    ".zip",
    ".tar",
    ".tgz",
    ".whl",
    ".egg",
    ".so",
    ".o",
    ".a",
    ".dll",
    ".exe",
    ".pyc",
    ".nsys-rep",
    ".qdrep",
    ".sqlite",
    ".db",
    // Source, configuration, documentation, structured records.
    ".py",
    ".ipynb",
    ".sh",
    ".c",
    ".cc",
    ".cpp",
    ".cu",
    ".cuh",
    ".h",
    ".hpp",
    ".rs",
    ".go",
    ".java",
    ".js",
    ".ts",
    ".css",
    ".html",
    ".htm",
    ".md",
    ".rst",
    ".tex",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".cfg",
    ".ini",
    ".csv",
    ".tsv",
    ".lock",
];

/// Whether a file's name says it is not a log.
///
/// ```
/// use cudnnlog::source::not_a_log_by_name;
/// assert!(not_a_log_by_name("model.safetensors") && not_a_log_by_name("README.md"));
/// assert!(!not_a_log_by_name("rank0.log.2.gz") && !not_a_log_by_name("slurm-8812.out"));
/// ```
pub fn not_a_log_by_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("events.out.tfevents.")
        || matches!(lower.as_str(), ".gitignore" | ".ignore" | ".cudnnlogignore")
    {
        return true;
    }
    let base = ["gz", "zst", "zstd"]
        .iter()
        .find_map(|ext| lower.strip_suffix(&format!(".{ext}")))
        .unwrap_or(&lower);
    NOT_LOGS.iter().any(|ext| base.ends_with(ext))
}

/// What a walk found.
///
/// ```
/// use cudnnlog::source::Walk;
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-walked-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("train.log"), "INFO step 1\n")?;
/// std::fs::write(dir.join("model.pt"), "not a log")?;
/// // A path that is not a directory is kept as given, even a missing one.
/// let walked = Walk::default().files(&[dir.clone(), "missing.log".into()])?;
/// assert_eq!(walked.files, [dir.join("train.log"), "missing.log".into()]);
/// assert!(walked.skipped.is_empty());
/// assert_eq!(walked.not_logs, 1); // model.pt
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walked {
    /// The files to read: each path given that is not a directory, as
    /// given (a missing one fails when read), then each directory's log
    /// files, sorted.
    pub files: Vec<PathBuf>,
    /// The entries skipped that may surprise: a symlink loop, an
    /// unreadable directory, a broken link, a file whose content is binary
    /// (not the files whose name says they are not logs: those are
    /// [`not_logs`](Walked::not_logs)).
    pub skipped: Vec<Skipped>,
    /// How many files were left out because their name says they are not
    /// logs ([`not_a_log_by_name`]): counted, not listed.
    pub not_logs: u64,
    /// How many files and directories were reached again by another path
    /// (a link, a path given twice): each is walked once, by its device
    /// and inode. Counted, not listed.
    pub duplicates: u64,
    /// What else the walk has to say, one line each: an ignore file read
    /// only in part ([`MAX_IGNORE_FILE`], [`MAX_IGNORE_TEXT`]), or not at
    /// all (not a regular file).
    pub notes: Vec<String>,
}

impl Walked {
    /// How many entries were left out, by reason: the
    /// [`SkipReason::key`] of each of [`skipped`](Walked::skipped),
    /// `not_a_log` for [`not_logs`](Walked::not_logs) and `duplicate` for
    /// [`duplicates`](Walked::duplicates). Reasons with none are absent.
    ///
    /// ```
    /// use cudnnlog::source::Walk;
    /// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-counts-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("train.log"), "INFO step 1\n")?;
    /// std::fs::write(dir.join("model.pt"), "not a log")?;
    /// std::fs::write(dir.join("rank1.log"), b"\x7fELF\x02\x01\x01\x00")?; // a core dump
    /// let counts = Walk::default().files(&[dir.clone()])?.counts();
    /// assert_eq!(counts.into_iter().collect::<Vec<_>>(), [("binary".to_string(), 1), ("not_a_log".to_string(), 1)]);
    /// std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn counts(&self) -> BTreeMap<String, u64> {
        let mut counts = BTreeMap::new();
        for s in &self.skipped {
            *counts.entry(s.why.key().to_string()).or_default() += 1;
        }
        if self.not_logs > 0 {
            counts.insert(NOT_A_LOG.to_string(), self.not_logs);
        }
        if self.duplicates > 0 {
            counts.insert(DUPLICATE.to_string(), self.duplicates);
        }
        counts
    }
}

/// The [`Walked::counts`] key of the files left out by name.
const NOT_A_LOG: &str = "not_a_log";

/// The [`Walked::counts`] key of the entries reached again.
const DUPLICATE: &str = "duplicate";

/// The files and directories a walk reached, by device and inode: each is
/// walked once. One `Reached` kept across walks ([`Walk::files_once`])
/// makes each file one input however many paths given reach it.
///
/// ```
/// use cudnnlog::source::{Reached, Walk};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-reached-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("train.log"), "INFO step 1\n")?;
/// let mut reached = Reached::default();
/// let walk = Walk::default();
/// assert_eq!(walk.files_once(&[dir.clone()], &mut reached)?.files, [dir.join("train.log")]);
/// // Named again, alone: already reached.
/// let again = walk.files_once(&[dir.join("train.log")], &mut reached)?;
/// assert!(again.files.is_empty());
/// assert_eq!(again.duplicates, 1);
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Reached {
    files: HashSet<FileId>,
    dirs: HashSet<FileId>,
}

/// An entry a walk left out that may surprise: one it could not follow,
/// or a file whose content is binary.
///
/// ```
/// # #[cfg(unix)] {
/// use cudnnlog::source::{SkipReason, Walk};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-skipped-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("logs")).unwrap();
/// std::os::unix::fs::symlink(&dir, dir.join("logs/up")).unwrap(); // a link back up
/// let skipped = Walk::default().files(&[dir.clone()]).unwrap().skipped;
/// assert_eq!((skipped[0].path.clone(), skipped[0].why), (dir.join("logs/up"), SkipReason::Loop));
/// assert_eq!(skipped[0].to_string(), format!("{}: a symlink loop, skipped", dir.join("logs/up").display()));
/// std::fs::remove_dir_all(&dir).unwrap();
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The entry.
    pub path: PathBuf,
    /// Why.
    pub why: SkipReason,
}

/// Why a walk skipped an entry.
///
/// ```
/// # #[cfg(unix)] {
/// use cudnnlog::source::{SkipReason, Walk};
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-skip-reason-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("logs")).unwrap();
/// std::fs::write(dir.join("logs/train.log"), "INFO step 1\n").unwrap();
/// std::os::unix::fs::symlink(&dir, dir.join("logs/up")).unwrap(); // a link back up
/// let walked = Walk::default().files(&[dir.clone()]).unwrap();
/// assert_eq!(walked.files, [dir.join("logs/train.log")]);
/// assert_eq!(walked.skipped.iter().map(|s| s.why).collect::<Vec<_>>(), [SkipReason::Loop]);
/// std::fs::remove_dir_all(&dir).unwrap();
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// A link back to a directory above it.
    Loop,
    /// A directory or file that cannot be read.
    Unreadable,
    /// A link to nothing.
    BrokenLink,
    /// A file whose content is binary: the magic number of a binary format
    /// (ELF, a CUDA fat binary, PNG, zip, a pickle…), or control bytes
    /// throughout its first and last 8 KiB. NUL bytes alone never are.
    Binary,
}

impl SkipReason {
    /// The reason's key in [`Walked::counts`] and in the JSON fleet
    /// summary's `skipped`: `loop`, `unreadable`, `broken_link`, `binary`.
    ///
    /// ```
    /// use cudnnlog::source::SkipReason;
    /// assert_eq!(SkipReason::BrokenLink.key(), "broken_link");
    /// ```
    pub fn key(self) -> &'static str {
        match self {
            SkipReason::Loop => "loop",
            SkipReason::Unreadable => "unreadable",
            SkipReason::BrokenLink => "broken_link",
            SkipReason::Binary => "binary",
        }
    }
}

impl std::fmt::Display for Skipped {
    /// `logs/a/loop: a symlink loop, skipped`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.why {
            SkipReason::Loop => "a symlink loop",
            SkipReason::Unreadable => "cannot be read",
            SkipReason::BrokenLink => "a broken or looping link",
            SkipReason::Binary => "binary content (name the file to scan it anyway)",
        };
        write!(f, "{}: {why}, skipped", self.path.display())
    }
}

impl Walk {
    /// The files of `paths`, in order, directories expanded.
    ///
    /// # Errors
    ///
    /// [`Error::Glob`] for a malformed glob, when a directory is walked;
    /// entries that cannot be read are [`Walked::skipped`], not errors.
    ///
    /// ```
    /// use cudnnlog::source::Walk;
    /// let dir = std::env::temp_dir().join(format!("cudnnlog-walk-files-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(dir.join("old")).unwrap();
    /// for name in ["job.out", "job.err", "old/job.out"] {
    ///     std::fs::write(dir.join(name), "NCCL WARN\n").unwrap();
    /// }
    /// let walk = Walk { globs: vec!["!*.err".into()], max_depth: Some(1), ..Walk::default() };
    /// assert_eq!(walk.files(&[dir.clone()]).unwrap().files, [dir.join("job.out")]);
    /// assert!(Walk { globs: vec!["[".into()], ..Walk::default() }.files(&[dir.clone()]).is_err());
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn files(&self, paths: &[PathBuf]) -> Result<Walked, Error> {
        self.files_once(paths, &mut Reached::default())
    }

    /// [`files`](Walk::files), leaving out what `reached` holds already
    /// (counted in [`Walked::duplicates`]) and adding what it finds: each
    /// file is one input however many of the paths given reach it.
    ///
    /// # Errors
    ///
    /// As for [`files`](Walk::files).
    ///
    /// ```
    /// use cudnnlog::source::{Reached, Walk};
    /// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-files-once-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("rank0.log"), "INFO step 1\n")?;
    /// let mut reached = Reached::default();
    /// let named = Walk::default().files_once(&[dir.join("rank0.log")], &mut reached)?;
    /// let walked = Walk::default().files_once(&[dir.clone()], &mut reached)?;
    /// assert_eq!((named.files.len(), walked.files.len(), walked.duplicates), (1, 0, 1));
    /// std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn files_once(&self, paths: &[PathBuf], reached: &mut Reached) -> Result<Walked, Error> {
        let mut walked = Walked::default();
        for path in paths {
            let meta = std::fs::metadata(path).ok();
            let id = meta.as_ref().and_then(id_of);
            match meta {
                Some(m) if m.is_dir() => {
                    if id.is_some_and(|id| !reached.dirs.insert(id)) {
                        walked.duplicates += 1;
                        continue;
                    }
                    let before = walked.skipped.len();
                    let mut files = tree::walk(self, path, reached, &mut walked)?;
                    files.sort();
                    walked.skipped[before..].sort_by(|a, b| a.path.cmp(&b.path));
                    walked.files.extend(files);
                }
                // A path that is not a directory is kept as given (even a
                // missing one: the scan says why it cannot be read).
                _ if id.is_some_and(|id| !reached.files.insert(id)) => walked.duplicates += 1,
                _ => walked.files.push(path.clone()),
            }
        }
        Ok(walked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[cfg(unix)]
    #[test]
    fn a_link_to_nothing_is_a_broken_link_and_the_rest_is_walked() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-walk-broken-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("train.log"), "INFO step 1\n").unwrap();
        std::os::unix::fs::symlink(dir.join("gone.log"), dir.join("rank1.log")).unwrap();
        let walked = Walk::default().files(std::slice::from_ref(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        let walked = walked.unwrap();
        assert_eq!(walked.files, [dir.join("train.log")]);
        let why: Vec<_> = walked
            .skipped
            .iter()
            .map(|s| (s.path.clone(), s.why))
            .collect();
        assert_eq!(why, [(dir.join("rank1.log"), SkipReason::BrokenLink)]);
    }

    /// `levels` directories under `home`, each but the last holding `fan`
    /// links to the next (the first `fan` links in `top`), the last a log.
    #[cfg(unix)]
    fn fan_out(top: &Path, home: &Path, levels: usize, fan: usize) -> PathBuf {
        let dir = |i: usize| home.join(format!("d{i}"));
        for i in 1..levels {
            std::fs::create_dir_all(dir(i)).unwrap();
        }
        std::fs::create_dir_all(top).unwrap();
        for level in 0..levels - 1 {
            let at = if level == 0 {
                top.to_path_buf()
            } else {
                dir(level)
            };
            for k in 0..fan {
                std::os::unix::fs::symlink(dir(level + 1), at.join(format!("l{k}"))).unwrap();
            }
        }
        let log = dir(levels - 1).join("train.log");
        std::fs::write(&log, "INFO step 1\n").unwrap();
        log
    }

    /// Links that fan out reach one file by many paths: it is one file,
    /// named by its path without links, every other way to it counted;
    /// each directory is walked once.
    #[cfg(unix)]
    #[test]
    fn each_file_and_directory_is_reached_once() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-walk-fan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // Inside the root: 4 × 4 × 4 paths to the log, and a link to it.
        let inside = dir.join("inside");
        let log = fan_out(&inside.join("top"), &inside, 4, 4);
        std::os::unix::fs::symlink(&log, inside.join("latest.log")).unwrap();
        // Outside it: the first path in name order is the one kept.
        let outside = dir.join("outside");
        fan_out(&outside, &dir.join("elsewhere"), 4, 4);
        let got = |root: &Path| Walk::default().files(&[root.to_path_buf()]).unwrap();
        let (a, b) = (got(&inside), got(&outside));
        // A path given twice, or a file named beside its directory.
        let twice = Walk::default()
            .files(&[inside.clone(), log.clone(), inside.clone()])
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(a.files, std::slice::from_ref(&log));
        assert_eq!((a.duplicates, a.skipped.len()), (3 * 4 + 1, 0), "{a:?}");
        assert_eq!(b.files, [outside.join("l0/l0/l0/train.log")]);
        assert_eq!(b.duplicates, 3 * 3, "{b:?}");
        assert_eq!(b.counts().get("duplicate"), Some(&9));
        assert_eq!((twice.files, twice.duplicates), (vec![log], 3 * 4 + 1 + 2));
    }

    /// Logs with NUL bytes in their first 8 KiB (a crash's unwritten
    /// blocks, a preallocated file's tail, a file that is all NULs so far)
    /// are walked like any other log.
    #[test]
    fn a_log_with_nul_bytes_is_walked() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-walk-nul-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let oom = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
        let mut crash = b"INFO step 40 loss 2.44\n".to_vec();
        crash.extend_from_slice(&[0; 3000]);
        crash.extend_from_slice(oom);
        let mut tail = oom.to_vec();
        tail.extend_from_slice(&[0; 9000]);
        let mut zeros_then_text = vec![0; 20_000];
        zeros_then_text.extend_from_slice(oom);
        for (name, bytes) in [
            ("crash.log", &crash),
            ("prealloc.log", &tail),
            ("zeros.log", &zeros_then_text),
        ] {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let walked = Walk::default().files(std::slice::from_ref(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        let walked = walked.unwrap();
        let names: Vec<_> = walked
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["crash.log", "prealloc.log", "zeros.log"]);
        assert!(walked.skipped.is_empty(), "{:?}", walked.skipped);
    }

    #[test]
    fn names_that_are_not_logs() {
        for name in [
            "model.safetensors",
            "ckpt-100.pt",
            "events.out.tfevents.1733.host.12.0",
            "README.md",
            "config.json",
            "train.py",
            "plot.png",
            "results.csv.gz",
        ] {
            assert!(not_a_log_by_name(name), "{name}");
        }
        for name in [
            "train.log",
            "train.log.1",
            "rank0.log.2.gz",
            "slurm-8812.out",
            "stderr",
            "job.err",
            "worker.txt",
            "run.jsonl",
        ] {
            assert!(!not_a_log_by_name(name), "{name}");
        }
    }
}
