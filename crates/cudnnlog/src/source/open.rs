//! Opening an input without ever blocking in `open(2)`.
//!
//! Opening a FIFO for reading blocks until a writer opens it, which may be
//! never. Looking at a path first (`stat`) and opening it after is a race:
//! a file swapped for a FIFO in between (a rotator, an attacker, a job's
//! launcher) hangs the open. So every input is opened with `O_NONBLOCK`,
//! and its type is read from the open handle, never from the path.

use std::fs::{File, Metadata};
use std::path::Path;

/// How long a FIFO named for scanning may wait for a writer.
pub const FIFO_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Opens `path` for reading without blocking, and the metadata of what was
/// opened (from the handle, so it is what will be read). The handle is in
/// blocking mode again unless it is a FIFO, for which it stays
/// non-blocking until [`wait_for_writer`] has seen a writer.
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<(File, Metadata)> {
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.file_type().is_fifo() {
            fcntl_setfl(&file, fcntl_getfl(&file)? - OFlags::NONBLOCK)?;
        }
        Ok((file, meta))
    }
    #[cfg(not(unix))]
    {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        Ok((file, meta))
    }
}

/// Opens `path` only if it is a regular file (a plain file, or a link to
/// one), without blocking however the path changes under us: a FIFO, a
/// device, a directory or a socket is an error, never waited on.
///
/// The error says what the path is instead (`is a FIFO, not a file`). For
/// reading an input back (the HTML page's excerpts), looking at its bytes
/// before a scan (the binary test of a directory walk), a config file or a
/// followed log.
///
/// ```
/// use cudnnlog::source::open_regular;
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-open-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("train.log"), "step 1\n").unwrap();
/// assert!(open_regular(&dir.join("train.log")).is_ok());
/// // A directory is not read back, and neither is a FIFO (no wait for a writer).
/// assert!(open_regular(&dir).is_err());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let (file, meta) = open_nonblocking(path)?;
    if meta.is_file() {
        return Ok(file);
    }
    let kind = meta.file_type();
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;
    let what = if kind.is_dir() {
        "a directory"
    } else if cfg!(unix) && kind.is_fifo() {
        "a FIFO"
    } else if cfg!(unix) && (kind.is_char_device() || kind.is_block_device()) {
        "a device"
    } else {
        "a socket or other special file"
    };
    Err(std::io::Error::other(format!("is {what}, not a file")))
}

/// Waits at most [`FIFO_WAIT`] for a writer to open the FIFO `file`
/// (opened by [`open_nonblocking`]), then puts it in blocking mode: it is
/// read as a stream until its writers close it.
#[cfg(unix)]
pub(crate) fn wait_for_writer(file: &File) -> std::io::Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let timeout = Timespec {
        tv_sec: FIFO_WAIT.as_secs() as _,
        tv_nsec: 0,
    };
    let mut fds = [PollFd::new(file, PollFlags::IN)];
    // Until a writer connects, a FIFO is neither readable nor hung up.
    if poll(&mut fds, Some(&timeout))? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "a FIFO no writer opened in {} s (pipe a job's output in with `-`)",
                FIFO_WAIT.as_secs()
            ),
        ));
    }
    fcntl_setfl(file, fcntl_getfl(file)? - OFlags::NONBLOCK)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_opened_without_a_writer_and_refused_as_a_regular_file() {
        let dir = std::env::temp_dir().join(format!("cudnnlog-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("rank0.log");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from(0o600)).unwrap();
        // Would block forever with a plain open: no writer ever comes.
        let (_, meta) = open_nonblocking(&fifo).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()));
        let err = open_regular(&fifo).unwrap_err();
        assert_eq!(err.to_string(), "is a FIFO, not a file");
        let err = open_regular(&dir).unwrap_err();
        assert_eq!(err.to_string(), "is a directory, not a file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
