//! `cudnnlog scan --follow DIR`: one long-lived command over a directory
//! where jobs' logs appear, grow and are rotated, writing one NDJSON
//! `{"type":"verdict",…}` line per job when the job ends: the contract a
//! log shipper's exec input reads (Fluent Bit, Vector, Alloy).
//!
//! **When a job ends.** A job (its files grouped as a fleet scan groups
//! them: ranks, streams, rotations `train.log.1`) has ended once none of
//! its files has changed (size, modification time or inode) for `idle`.
//! Its verdict is then the one `scan DIR` would give it, of all its files.
//! A job that changes again after its verdict is written gets another
//! verdict when it is quiet again. Files already there at the start and
//! not changing are jobs that ended before the watch: they get no verdict
//! (a `scan DIR` reports them). A job still changing when the watch stops
//! (SIGTERM, Ctrl-C, `--follow-for`) gets none either: it has not ended.
//!
//! The directory is walked again at each poll, as a scan walks it
//! (`--glob`, ignore files, hidden files); what is kept is one entry per
//! file, so memory follows the directory, not its logs.

use crate::cmd::interrupt::Stop;
use crate::render;
use anyhow::Context;
use cudnnlog::fleet::{self, JobInput, Verdict};
use cudnnlog::source::Walk;
use cudnnlog::{MmapChoice, Scanner};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// What the watch saw, for the exit status.
#[derive(Debug, Default)]
pub struct Watched {
    /// Verdicts written.
    pub jobs: u64,
    /// A job failed.
    pub failed: bool,
    /// A job had a finding.
    pub finding: bool,
    /// A job's file could not be read, or the directory could not be
    /// walked.
    pub unreadable: bool,
}

/// A file as last seen.
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
    /// When it last changed (or appeared).
    changed_at: Instant,
    /// It changed since its job's last verdict (or the watch's start).
    pending: bool,
}

impl Seen {
    fn same(&self, meta: &std::fs::Metadata) -> bool {
        self.len == meta.len() && self.modified == meta.modified().ok() && self.inode == inode(meta)
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// How often the directory is walked: a quarter of `idle`, between 100 ms
/// and 2 s.
pub fn poll_interval(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(2))
}

/// Watches `dir` until a stopping signal or `limit`, writing each ended
/// job's verdict to `out` as one NDJSON line (flushed at once). `notes`:
/// say on standard error what the walk leaves out, once per entry.
pub fn watch(
    scanner: &Scanner,
    dir: &Path,
    walk: &Walk,
    idle: Duration,
    limit: Option<Duration>,
    notes: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Watched> {
    let stop = Stop::install()?;
    let deadline = limit.map(|l| Instant::now() + l);
    let poll = poll_interval(idle);
    let mut files: HashMap<PathBuf, Seen> = HashMap::new();
    let mut said: HashSet<String> = HashSet::new();
    let mut watched = Watched::default();
    let mut first = true;
    loop {
        let now = Instant::now();
        match crate::inputs::expand(&[dir.to_path_buf()], walk) {
            Ok(expanded) => {
                for note in expanded.notes {
                    if notes && said.insert(note.clone()) {
                        let _ = writeln!(
                            std::io::stderr(),
                            "cudnnlog: {}",
                            render::sanitize_line(&note)
                        );
                    }
                }
                let paths = expanded.inputs.into_iter().filter_map(|i| match i {
                    JobInput::File(s) => Some(s.path),
                    JobInput::Stdin => None,
                });
                look(&mut files, paths, now, first);
            }
            // The directory itself is gone or unreadable: said once, and
            // waited for (a volume remounted, a directory recreated).
            Err(e) => {
                watched.unreadable = true;
                let line = format!("{}: {e}; waiting for it", dir.display());
                if said.insert(line.clone()) {
                    let _ = writeln!(
                        std::io::stderr(),
                        "cudnnlog: {}",
                        render::sanitize_line(&line)
                    );
                }
            }
        }
        if first && notes {
            // Said once the files already there are known: what changes
            // from now on is a job's.
            let line = format!(
                "watching {}: a verdict per job once its files are quiet for {} s",
                dir.display(),
                idle.as_secs_f64()
            );
            let _ = writeln!(
                std::io::stderr(),
                "cudnnlog: {}",
                render::sanitize_line(&line)
            );
        }
        first = false;
        for job in ended(&files, now, idle) {
            let done = fleet::scan_job(scanner, &job, MmapChoice::never());
            write_verdict(out, &done.verdict)?;
            count(&mut watched, &done.verdict);
            for s in &job.sources {
                if let Some(seen) = files.get_mut(&s.path) {
                    seen.pending = false;
                }
            }
        }
        if stop.requested() || deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(watched);
        }
        std::thread::sleep(poll);
    }
}

/// Takes in the files the walk found at `now`: a new one (after the first
/// walk) or one changed is pending; one gone is forgotten.
fn look(
    files: &mut HashMap<PathBuf, Seen>,
    paths: impl Iterator<Item = PathBuf>,
    now: Instant,
    first: bool,
) {
    let mut present = HashSet::new();
    for path in paths {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        match files.get_mut(&path) {
            Some(seen) if seen.same(&meta) => {}
            Some(seen) => {
                *seen = Seen {
                    changed_at: now,
                    pending: true,
                    ..seen_of(&meta, now)
                };
            }
            None => {
                let mut seen = seen_of(&meta, now);
                seen.pending = !first;
                files.insert(path.clone(), seen);
            }
        }
        present.insert(path);
    }
    files.retain(|p, _| present.contains(p));
}

fn seen_of(meta: &std::fs::Metadata, now: Instant) -> Seen {
    Seen {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: inode(meta),
        changed_at: now,
        pending: false,
    }
}

/// The jobs that have ended at `now`: a file of theirs changed since their
/// last verdict, and none has for `idle`. Files are grouped into jobs as a
/// fleet scan groups them, anew each time (a rank's file that appears
/// later joins its job).
fn ended(files: &HashMap<PathBuf, Seen>, now: Instant, idle: Duration) -> Vec<fleet::Job> {
    let mut paths: Vec<&Path> = files.keys().map(PathBuf::as_path).collect();
    paths.sort();
    fleet::group_paths(paths)
        .into_iter()
        .filter(|job| {
            let seen = || job.sources.iter().filter_map(|s| files.get(&s.path));
            seen().any(|s| s.pending) && seen().all(|s| now.duration_since(s.changed_at) >= idle)
        })
        .collect()
}

fn write_verdict(out: &mut dyn Write, verdict: &Verdict) -> anyhow::Result<()> {
    cudnnlog::ndjson::Message::Verdict(verdict)
        .write_line(&mut *out)
        .context("cannot write a verdict")?;
    out.flush().context("cannot write a verdict")?;
    Ok(())
}

fn count(watched: &mut Watched, v: &Verdict) {
    use cudnnlog::report::Outcome;
    watched.jobs += 1;
    watched.failed |= v.outcome == Some(Outcome::Failed);
    watched.finding |= v.findings > 0;
    watched.unreadable |= v.error.is_some();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_follows_idle_within_bounds() {
        assert_eq!(
            poll_interval(Duration::from_secs(60)),
            Duration::from_secs(2)
        );
        assert_eq!(
            poll_interval(Duration::from_secs(1)),
            Duration::from_millis(250)
        );
        assert_eq!(poll_interval(Duration::ZERO), Duration::from_millis(100));
    }
}
