//! The lines around a finding, read back from its file: the page shows
//! each evidence line with a few lines of the log around it.
//!
//! The report holds the byte offset of every place it names, so a plain
//! file is read back with one positioned read per excerpt, however large
//! it is. Standard input and compressed files are not read again (the first
//! is gone, the second would mean decompressing up to the place); the page
//! shows the finding's own message then.
//!
//! Only a source the scan read as a regular file is read back (one with a
//! modification time: a FIFO, a socket, standard input never is; a FIFO
//! read to its end would block the open forever), and it is opened without
//! blocking and checked on the open handle to be a regular file still, of
//! at least the size scanned: a path swapped for a FIFO since the scan is
//! not read.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes read on each side of a place: enough for several long lines.
const READ: u64 = 16 << 10;
/// The longest line shown; longer lines keep their start.
pub const LINE_CHARS: usize = 400;

/// One line of an excerpt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// Its 1-based number in the file.
    pub number: u64,
    /// Its text, invalid UTF-8 replaced, cut at [`LINE_CHARS`].
    pub text: String,
    /// The line the place names.
    pub here: bool,
}

/// Opened sources, by index in the report: `None` for one that cannot be
/// read back.
pub struct Files {
    files: Vec<Option<File>>,
}

impl Files {
    /// Opens the report's sources that the scan read as plain files, and
    /// that still are, of at least the size the scan read (a file that has
    /// grown is still fine: its start is the same).
    pub fn open(sources: &[cudnnlog::source::SourceInfo]) -> Files {
        let files = sources
            .iter()
            .map(|s| {
                // Only a regular file read by path has a modification time.
                s.modified?;
                let file = open_nonblocking(Path::new(&s.path)).ok()?;
                let meta = file.metadata().ok()?;
                if !meta.is_file() || meta.len() < s.bytes {
                    return None;
                }
                let mut magic = [0u8; 4];
                let n = file.read_at(&mut magic, 0).ok()?;
                match cudnnlog::source::Compression::of(&magic[..n]) {
                    cudnnlog::source::Compression::None => Some(file),
                    _ => None,
                }
            })
            .collect();
        Files { files }
    }

    /// `before` lines, the line at byte `byte` (line number `line`) of
    /// source `source`, and `after` lines; empty when the source cannot be
    /// read back or the bytes there no longer start that line.
    pub fn around(
        &self,
        source: usize,
        byte: u64,
        line: u64,
        before: usize,
        after: usize,
    ) -> Vec<Line> {
        let Some(Some(file)) = self.files.get(source) else {
            return Vec::new();
        };
        let start = byte.saturating_sub(READ);
        let mut buf = vec![0u8; (byte - start + READ) as usize];
        let n = match read_full_at(file, &mut buf, start) {
            Ok(n) => n,
            Err(_) => return Vec::new(),
        };
        buf.truncate(n);
        let at = (byte - start) as usize;
        // The place starts a line: the byte before it ends one.
        if at > buf.len() || (at > 0 && buf[at - 1] != b'\n') {
            return Vec::new();
        }
        let mut lines = Vec::new();
        // Back from the place, nearest first; the furthest piece is cut
        // unless the read began at the start of the file.
        if at > 0 {
            let mut earlier: Vec<&[u8]> = buf[..at - 1].rsplit(|&b| b == b'\n').collect();
            if start > 0 {
                earlier.pop();
            }
            for (i, text) in earlier.iter().enumerate().take(before).rev() {
                if let Some(number) = line.checked_sub(i as u64 + 1).filter(|&n| n > 0) {
                    lines.push(Line {
                        number,
                        text: text_of(text),
                        here: false,
                    });
                }
            }
        }
        // On from the place; the last piece is cut when the read filled
        // the buffer, and empty after a final newline.
        let filled = n == (byte - start + READ) as usize;
        let mut later: Vec<&[u8]> = buf[at..].split(|&b| b == b'\n').collect();
        if later.len() > 1 && (filled || later.last().is_some_and(|l| l.is_empty())) {
            later.pop();
        }
        for (i, text) in later.iter().enumerate().take(after + 1) {
            lines.push(Line {
                number: line + i as u64,
                text: text_of(text),
                here: i == 0,
            });
        }
        lines
    }

    /// The text of the line at byte `byte` of source `source` (one small
    /// read: the byte before it, which must end a line, and the line).
    pub fn line(&self, source: usize, byte: u64) -> Option<String> {
        let file = self.files.get(source)?.as_ref()?;
        let start = byte.saturating_sub(1);
        let mut buf = vec![0u8; (byte - start) as usize + LINE_CHARS * 4];
        let n = read_full_at(file, &mut buf, start).ok()?;
        let buf = &buf[..n];
        let body = match byte {
            0 => buf,
            _ => buf.strip_prefix(b"\n")?,
        };
        let end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
        Some(text_of(&body[..end]))
    }
}

/// Opens `path` to read without blocking in the open, whatever it has
/// become (a FIFO without a writer would block it forever).
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Reads until `buf` is full or the file ends.
fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A line's text as shown: lossy UTF-8 without its `\r`, at most
/// [`LINE_CHARS`] characters.
fn text_of(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(LINE_CHARS * 4)]);
    crate::render::clip(&text, LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn open(content: &[u8]) -> (tempfile::NamedTempFile, Files) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        let info = cudnnlog::source::SourceInfo {
            path: f.path().display().to_string(),
            bytes: content.len() as u64,
            lines: 0,
            modified: Some(std::time::SystemTime::now()),
            rank: None,
        };
        let files = Files::open(&[info]);
        (f, files)
    }

    fn numbers(lines: &[Line]) -> Vec<(u64, &str, bool)> {
        lines
            .iter()
            .map(|l| (l.number, l.text.as_str(), l.here))
            .collect()
    }

    #[test]
    fn lines_around_a_place() {
        let (_f, files) = open(b"one\ntwo\nthree\nfour\nfive\n");
        assert_eq!(
            numbers(&files.around(0, 8, 3, 2, 1)),
            [
                (1, "one", false),
                (2, "two", false),
                (3, "three", true),
                (4, "four", false)
            ]
        );
        assert_eq!(numbers(&files.around(0, 0, 1, 3, 0)), [(1, "one", true)]);
        assert_eq!(
            numbers(&files.around(0, 19, 5, 1, 3)),
            [(4, "four", false), (5, "five", true)]
        );
        assert_eq!(files.line(0, 4).as_deref(), Some("two"));
        assert_eq!(files.line(0, 0).as_deref(), Some("one"));
        assert_eq!(files.line(0, 5), None);
    }

    #[test]
    fn a_place_that_does_not_start_a_line_shows_nothing() {
        let (_f, files) = open(b"one\ntwo\n");
        assert!(files.around(0, 5, 2, 1, 1).is_empty());
        assert!(files.around(0, 500, 2, 1, 1).is_empty());
        assert!(files.around(7, 0, 1, 1, 1).is_empty());
    }

    /// A source the scan read as a stream (a FIFO, standard input: no
    /// modification time) is never opened again, and a path that is no
    /// longer a regular file is not read back.
    #[test]
    fn only_regular_files_are_read_back() {
        let (f, _) = open(b"one\ntwo\n");
        let info = |path: &Path, modified| cudnnlog::source::SourceInfo {
            path: path.display().to_string(),
            bytes: 8,
            lines: 2,
            modified,
            rank: None,
        };
        let files = Files::open(&[info(f.path(), None)]);
        assert!(files.around(0, 0, 1, 0, 0).is_empty());
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("train.fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let files = Files::open(&[info(&fifo, Some(std::time::SystemTime::now()))]);
        assert!(files.line(0, 0).is_none());
    }

    #[test]
    fn compressed_files_are_not_read_back() {
        let (_f, files) = open(&[0x1f, 0x8b, 8, 0, 0, 0, b'\n', b'x']);
        assert!(files.around(0, 0, 1, 0, 0).is_empty());
    }

    #[test]
    fn long_lines_far_from_the_start_are_cut() {
        let mut log = vec![b'a'; 40_000];
        log.push(b'\n');
        log.extend_from_slice(b"hit\n");
        log.extend(vec![b'b'; 40_000]);
        let (_f, files) = open(&log);
        // The lines on both sides were cut by the reads: only the place's.
        let lines = files.around(0, 40_001, 2, 1, 1);
        assert_eq!(numbers(&lines), [(2, "hit", true)]);
        // A long line that is read whole is shown clipped.
        let (_f, files) = open(
            &[
                &b"x
"[..],
                &[b'c'; 5000],
                b"
",
            ]
            .concat(),
        );
        let lines = files.around(0, 0, 1, 0, 1);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].text.chars().count() <= LINE_CHARS + 1);
    }
}
