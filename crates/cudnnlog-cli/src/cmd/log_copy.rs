//! The copy of a stream that is diagnosed once it ends: the output of the
//! job `cudnnlog run` wraps (`--log FILE` keeps it), and the standard input
//! `cudnnlog scan --follow -` follows. On disk, never in memory: a job's
//! output has no bound. A copy that cannot be written (a full disk) stops,
//! with one warning, and the diagnosis covers what was written.

use anyhow::Context;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A copy of a stream that the diagnosis reads afterwards.
pub(crate) struct LogCopy {
    file: LogFile,
    /// Bytes written so far; the diagnosis reads no more than these, which
    /// also keeps it off whatever a device such as /dev/full would return.
    written: u64,
    /// Copying stopped after a write failed (a full disk, say).
    broken: bool,
    /// The last byte written: whether the copy ends a line.
    last: Option<u8>,
}

enum LogFile {
    /// No `--log`: a temporary file the system removes once we close it or
    /// die, however we die (O_TMPFILE where there is one; elsewhere O_EXCL
    /// under an unpredictable name, unlinked at once).
    Temp(File),
    /// `--log FILE`: kept.
    Kept(File, PathBuf),
}

impl LogCopy {
    /// The copy at `keep`, or a temporary file.
    pub(crate) fn create(keep: Option<&Path>) -> anyhow::Result<LogCopy> {
        let file = match keep {
            Some(path) => {
                let file = File::options()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                LogFile::Kept(file, path.to_path_buf())
            }
            None => LogFile::Temp(
                tempfile::tempfile().context("cannot create a temporary file for the log copy")?,
            ),
        };
        Ok(LogCopy {
            file,
            written: 0,
            broken: false,
            last: None,
        })
    }

    fn file(&self) -> &File {
        match &self.file {
            LogFile::Temp(file) | LogFile::Kept(file, _) => file,
        }
    }

    /// The copy's name in messages.
    fn name(&self) -> String {
        match &self.file {
            LogFile::Temp(_) => "a temporary file".to_owned(),
            LogFile::Kept(_, path) => crate::render::sanitize_line(&path.display().to_string()),
        }
    }

    /// Appends `bytes`. The first failure stops the copying, with one
    /// warning: the job itself must go on whatever happens to its copy.
    pub(crate) fn append(&mut self, mut bytes: &[u8]) {
        while !self.broken && !bytes.is_empty() {
            match self.file().write(bytes) {
                Ok(0) => self.fail(&std::io::Error::from(std::io::ErrorKind::WriteZero)),
                Ok(n) => {
                    self.written += n as u64;
                    self.last = Some(bytes[n - 1]);
                    bytes = &bytes[n..];
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => self.fail(&e),
            }
        }
    }

    /// Appends `line` and a newline, on a line of its own.
    pub(crate) fn append_line(&mut self, line: &str) {
        if self.last.is_some_and(|b| b != b'\n') {
            self.append(b"\n");
        }
        self.append(line.as_bytes());
        self.append(b"\n");
    }

    fn fail(&mut self, error: &std::io::Error) {
        self.broken = true;
        let _ = writeln!(
            std::io::stderr(),
            "cudnnlog: cannot write the log copy ({}: {error}): the diagnosis covers the output up to that point",
            self.name(),
        );
    }

    /// The copy from its start, as far as it was written.
    pub(crate) fn reader(&self) -> anyhow::Result<impl Read + Send + '_> {
        let mut file = self.file();
        file.rewind()
            .with_context(|| format!("cannot read back {}", self.name()))?;
        Ok(file.take(self.written))
    }
}
