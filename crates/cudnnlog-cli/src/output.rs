//! Where `--output` writes, for every command that has it: never onto a
//! file the command reads, and into place only once the output is whole.
//!
//! The target is compared, by device and inode after links are followed,
//! with every input (the files named, those found by walking a directory,
//! standard input) before anything is opened for writing: `scan logs/ -o
//! logs/rank0.log`, `scan -o in.log < in.log` and `-o /proc/self/fd/0` are
//! refused, and the log is left as it was. A regular file (or one that does
//! not exist yet) is written as a temporary file beside it and renamed onto
//! it by [`Landing::land`] at the end, so a scan that fails or is killed
//! part way leaves the old file whole, and a reader never sees half a
//! report. Anything else (`/dev/null`, `/dev/stdout`, a FIFO) is written
//! where it is: a rename onto it would replace the device; a FIFO nobody
//! reads is refused after [`FIFO_WAIT`] rather than waited on for ever.

use crate::render::sanitize_line;
use anyhow::Context;
use cudnnlog::source::FIFO_WAIT;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What a command reads, to be kept from its output.
#[derive(Default)]
pub struct Reads<'a> {
    /// The files, directories already walked.
    pub files: Vec<&'a Path>,
    /// Standard input is read too.
    pub stdin: bool,
}

/// When an output file gets what is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// A report, whole at the end: a temporary file renamed into place.
    AtEnd,
    /// A stream that must be seen as it grows (`--follow`): written in
    /// place, as it comes.
    AsItComes,
}

/// A temporary file waiting to be renamed onto its target; removed if it
/// never is.
#[must_use = "the output is renamed into place only by `land`"]
pub struct Landing(Option<Staged>);

struct Staged {
    temp: PathBuf,
    target: PathBuf,
    file: File,
}

impl Landing {
    /// Puts the output in place: the temporary file, synced, renamed onto
    /// the target. Nothing to do for standard output or a special file.
    pub fn land(mut self) -> anyhow::Result<()> {
        let Some(staged) = self.0.take() else {
            return Ok(());
        };
        let shown = || sanitize_line(&staged.target.display().to_string());
        staged
            .file
            .sync_all()
            .and_then(|()| std::fs::rename(&staged.temp, &staged.target))
            .with_context(|| format!("cannot write {}", shown()))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&staged.temp);
            })
    }
}

impl Drop for Landing {
    fn drop(&mut self) {
        if let Some(staged) = self.0.take() {
            let _ = std::fs::remove_file(&staged.temp);
        }
    }
}

/// Where the output goes: standard output, or the file `path` names, once
/// it is known not to be one of `reads`.
///
/// # Errors
///
/// `path` is a file the command reads (the message names it); the file
/// or its temporary file cannot be created.
pub fn open(
    path: Option<&Path>,
    reads: &Reads<'_>,
    timing: Timing,
) -> anyhow::Result<(Box<dyn Write + Send>, Landing)> {
    let Some(path) = path else {
        return Ok((Box::new(std::io::stdout()), Landing(None)));
    };
    refuse_inputs(path, reads)?;
    let shown = || sanitize_line(&path.display().to_string());
    let target = resolve(path);
    let existing = std::fs::metadata(&target).ok();
    let regular = existing.as_ref().is_none_or(|m| m.is_file());
    if !regular || names_a_descriptor(path) {
        // A device, a FIFO, a socket, or an open descriptor's file: where
        // it is, never replaced (with `>>` behind `/dev/stdout`, appended).
        let file = in_place(path).with_context(|| format!("cannot write {}", shown()))?;
        return Ok((Box::new(file), Landing(None)));
    }
    if timing == Timing::AsItComes {
        let file = File::create(&target).with_context(|| format!("cannot write {}", shown()))?;
        return Ok((Box::new(file), Landing(None)));
    }
    let (temp, file) = match temporary(&target) {
        Ok(made) => made,
        // A file we may write in a directory we may not: written in place,
        // as before there were temporary files.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && existing.is_some() => {
            let file =
                File::create(&target).with_context(|| format!("cannot write {}", shown()))?;
            return Ok((Box::new(file), Landing(None)));
        }
        Err(e) => return Err(e).with_context(|| format!("cannot write {}", shown())),
    };
    let landing = Landing(Some(Staged {
        temp,
        target,
        file: file
            .try_clone()
            .with_context(|| format!("cannot write {}", shown()))?,
    }));
    if let Some(m) = existing {
        // The new report keeps the old one's mode, and its owner where we
        // may give it (root may; others keep their own).
        file.set_permissions(std::fs::Permissions::from_mode(m.permissions().mode()))
            .with_context(|| format!("cannot write {}", shown()))?;
        let _ = std::os::unix::fs::fchown(&file, Some(m.uid()), Some(m.gid()));
    }
    Ok((Box::new(file), landing))
}

/// Opens `path` where it is, to append (created when missing), without
/// blocking in `open`: a FIFO that no process reads is waited for at most
/// [`FIFO_WAIT`], polled, then refused (it blocked for ever).
fn in_place(path: &Path) -> std::io::Result<File> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let started = std::time::Instant::now();
    loop {
        let opened = OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(path);
        match opened {
            Ok(file) => {
                // Once open, writes wait for the reader as usual.
                fcntl_setfl(&file, fcntl_getfl(&file)? - OFlags::NONBLOCK)?;
                return Ok(file);
            }
            // ENXIO: a FIFO with no reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                if started.elapsed() >= FIFO_WAIT {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "a FIFO with no reader for {} s (start its reader first)",
                            FIFO_WAIT.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Fails when `path` is the same file as one of `reads` (device and
/// inode, links followed): writing it would destroy what is being read.
fn refuse_inputs(path: &Path, reads: &Reads<'_>) -> anyhow::Result<()> {
    let Some(out) = std::fs::metadata(path).ok().filter(|m| m.is_file()) else {
        // Nothing there yet, or nothing writing could destroy.
        return Ok(());
    };
    let same = |m: &std::fs::Metadata| (m.dev(), m.ino()) == (out.dev(), out.ino());
    let stdin = || {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
        File::from(fd).metadata()
    };
    let input = if reads.stdin && stdin().is_ok_and(|m| same(&m)) {
        Some("standard input".to_string())
    } else {
        reads
            .files
            .iter()
            .find(|f| std::fs::metadata(f).is_ok_and(|m| same(&m)))
            .map(|f| f.display().to_string())
    };
    let Some(input) = input else {
        return Ok(());
    };
    let given = path.display().to_string();
    let also = if input == given {
        String::new()
    } else {
        format!(" ({})", sanitize_line(&input))
    };
    anyhow::bail!(
        "--output {} is an input of the scan{also}: writing it would destroy the log",
        sanitize_line(&given)
    )
}

/// `path` with its symlinks followed (to where a link that points
/// nowhere yet would create its target): the file a rename must replace
/// for the link to stay.
fn resolve(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // As many links as the kernel follows.
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(to) => p = p.parent().map_or(to.clone(), |dir| dir.join(&to)),
            Err(_) => break,
        }
    }
    p
}

/// Whether `path` reaches an open file descriptor (`/dev/stdout`,
/// `/dev/fd/1`, `/proc/self/fd/1`): the caller's stream, written where
/// it is even when it is a regular file.
fn names_a_descriptor(path: &Path) -> bool {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let Ok(dir) = std::fs::canonicalize(dir) else {
            return false;
        };
        if dir.starts_with("/proc") && dir.file_name().is_some_and(|n| n == "fd") {
            return true;
        }
        match std::fs::read_link(&p) {
            Ok(to) => p = dir.join(to),
            Err(_) => return false,
        }
    }
    false
}

/// A new file beside `target` (`.report.json.cudnnlog-PID-N.tmp`), with
/// the mode a new file gets (the umask applies).
fn temporary(target: &Path) -> std::io::Result<(PathBuf, File)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy());
    let mut n = 0u32;
    loop {
        let temp = dir.join(format!(".{name}.cudnnlog-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_are_told_from_files() {
        assert!(names_a_descriptor(Path::new("/dev/stdout")));
        assert!(names_a_descriptor(Path::new("/proc/self/fd/1")));
        assert!(names_a_descriptor(Path::new("/dev/fd/2")));
        assert!(!names_a_descriptor(Path::new("/tmp/report.json")));
        assert!(!names_a_descriptor(Path::new("report.json")));
    }

    #[test]
    fn a_link_resolves_to_its_target_even_one_to_nothing_yet() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-resolve-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("real")).unwrap();
        std::os::unix::fs::symlink("real/latest.json", dir.join("latest.json")).unwrap();
        let got = resolve(&dir.join("latest.json"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got, dir.join("real/latest.json"));
    }

    #[test]
    fn an_unlanded_output_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-unlanded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("report.json");
        std::fs::write(&target, "old").unwrap();
        let (mut out, landing) = open(Some(&target), &Reads::default(), Timing::AtEnd).unwrap();
        out.write_all(b"half a rep").unwrap();
        drop((out, landing));
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let old = std::fs::read_to_string(&target).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((names, old.as_str()), (vec!["report.json".into()], "old"));
    }
}
