//! `cudnnlog scan --follow FILE`: watch a growing log, `tail -F` style, and
//! report each new finding as it appears. A file that shrinks (truncated)
//! or is replaced (rotated: another inode at the path) is read again from
//! its start; one that is not there yet (or no longer) is waited for, and
//! said so on standard error; a directory or another kind of file is an
//! error naming it. `--follow -` follows standard input until it ends,
//! keeping a copy of it on disk ([`LogCopy`]).
//!
//! The follow ends when its input does, when `--follow-for` is up, or on
//! Ctrl-C, SIGTERM or a hangup ([`Stop`]); the caller then writes the
//! report of what was followed ([`Followed`]) and exits as a scan would.
//!
//! The scanning is the library's [`Follower`]; this module reads (polling
//! the file, or a thread reading the pipe), decides when to scan and
//! prints.

use crate::cmd::interrupt::Stop;
use crate::cmd::log_copy::LogCopy;
use crate::render;
use anyhow::Context;
use cudnnlog::follow::{Announced, Follower};
use cudnnlog::Scanner;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the file is polled.
const POLL: Duration = Duration::from_millis(200);
/// New lines are scanned once the writer has been quiet this long (so that
/// a traceback written in pieces is complete), and at the latest this long
/// after they arrived, however busy the writer: a finding is reported
/// within about `QUIET + POLL`.
const QUIET: Duration = Duration::from_millis(500);
/// What one read of a pipe takes.
const PIECE: usize = 64 << 10;

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// When to scan: after quiet, or when lines have waited long enough.
struct Pace {
    grew_at: Instant,
    waiting_since: Option<Instant>,
}

impl Pace {
    fn new() -> Pace {
        Pace {
            grew_at: Instant::now(),
            waiting_since: None,
        }
    }

    fn grew(&mut self) {
        let now = Instant::now();
        self.grew_at = now;
        self.waiting_since.get_or_insert(now);
    }

    /// Scans what is due; true when it scanned.
    fn scan(
        &mut self,
        f: &mut Follower<'_>,
        show: &mut impl FnMut(&Announced) -> anyhow::Result<()>,
    ) -> anyhow::Result<bool> {
        let quiet = self.grew_at.elapsed() >= QUIET;
        let waited = self.waiting_since.is_some_and(|t| t.elapsed() >= QUIET);
        let flush = if f.ready(false) && (quiet || waited || f.room() == 0) {
            false
        } else if quiet && f.ready(true) {
            true
        } else {
            return Ok(false);
        };
        for a in f.scan(flush)? {
            show(&a)?;
        }
        self.waiting_since = (f.pending() > 0 && !flush).then(Instant::now);
        Ok(true)
    }
}

/// How each new finding is written as it appears.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Live {
    /// A line: `PATH:LINE: CLASS (SEVERITY) MESSAGE`.
    Lines,
    /// A JSON object (`--format ndjson`).
    Ndjson,
    /// Nothing: `--quiet`, or a format that is one document, written whole
    /// when the follow ends.
    Nothing,
}

/// What a follow read, for the report that closes it.
pub enum Followed {
    /// The file followed: its report is a scan of it as it is at the end.
    File(PathBuf),
    /// A copy of standard input, as far as it was written.
    Stdin(LogCopy),
}

/// Follows `path` (`-`: standard input) until it ends (standard input), a
/// stopping signal comes, or `limit` is up, writing each new finding as
/// `live` says; `notes` (not `--quiet`) says on standard error when the
/// file is waited for. Returns what was followed, for the closing report.
///
/// # Errors
///
/// `path` is, or becomes, a directory or another file that is not a
/// regular one (the message names it); reading or writing failed.
pub fn follow(
    scanner: &Scanner,
    path: &Path,
    live: Live,
    notes: bool,
    limit: Option<Duration>,
    out: &mut impl Write,
) -> anyhow::Result<Followed> {
    let name = render::sanitize_line(&path.display().to_string());
    let mut show = |a: &Announced| -> anyhow::Result<()> {
        let f = &a.finding;
        if live == Live::Nothing {
            return Ok(());
        }
        if live == Live::Ndjson {
            let path = path.display().to_string();
            let line = cudnnlog::ndjson::FindingLine {
                finding: f,
                path: Some(&path),
                line: Some(a.place.line),
            };
            cudnnlog::ndjson::Message::Finding(line).write_line(&mut *out)?;
        } else {
            writeln!(
                out,
                "{name}:{}: {} ({}) {}",
                a.place.line,
                f.class,
                f.severity.as_str(),
                render::sanitize_line(&f.message.chars().take(160).collect::<String>())
            )?;
        }
        out.flush()?;
        Ok(())
    };
    let mut follower = Follower::new(scanner);
    let until = Until {
        stop: Stop::install()?,
        deadline: limit.map(|l| Instant::now() + l),
    };
    let followed = if path == Path::new("-") {
        Followed::Stdin(follow_stdin(&mut follower, &until, &mut show)?)
    } else {
        let notes = Notes {
            name: &name,
            on: notes,
        };
        follow_file(&mut follower, path, notes, &until, &mut show)?;
        Followed::File(path.to_path_buf())
    };
    // What is left, the last line too, before the report.
    for flush in [false, true] {
        for a in follower.scan(flush)? {
            show(&a)?;
        }
    }
    Ok(followed)
}

/// Until when to follow: a stopping signal, or the end of `--follow-for`.
struct Until {
    stop: Stop,
    deadline: Option<Instant>,
}

impl Until {
    fn going(&self) -> bool {
        !self.stop.requested() && self.deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// What a followed file's notes on standard error say it is, and whether
/// they are said (not under `--quiet`).
#[derive(Clone, Copy)]
struct Notes<'a> {
    name: &'a str,
    on: bool,
}

impl Notes<'_> {
    /// `cudnnlog: NAME…`, on standard error.
    fn say(&self, what: std::fmt::Arguments<'_>) -> anyhow::Result<()> {
        if self.on {
            writeln!(std::io::stderr(), "cudnnlog: {what}")?;
        }
        Ok(())
    }
}

/// What the file at a followed path is when it is not a regular file: a
/// directory, a FIFO…, to refuse it by name.
fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    #[cfg(unix)]
    if t.is_fifo() {
        return Some("a FIFO (follow a pipe as standard input: `… | cudnnlog scan --follow -`)");
    }
    Some(if t.is_dir() {
        "a directory; --follow watches one file (name a log in it)"
    } else {
        "not a regular file; --follow watches one file"
    })
}

fn follow_file(
    f: &mut Follower<'_>,
    path: &Path,
    notes: Notes<'_>,
    until: &Until,
    show: &mut impl FnMut(&Announced) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let name = notes.name;
    let mut pace = Pace::new();
    let mut id: Option<u64> = None;
    let mut file: Option<std::fs::File> = None;
    let mut piece = Vec::new();
    // Whether the file was there at the last look.
    let mut there = true;
    while until.going() {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if there {
                    there = false;
                    match id {
                        None => notes.say(format_args!("waiting for {name} to appear"))?,
                        Some(_) => notes.say(format_args!(
                            "{name} is gone; waiting for it to appear again"
                        ))?,
                    }
                }
                std::thread::sleep(POLL); // not yet created, or rotated away
                continue;
            }
            Err(e) => return Err(e).with_context(|| name.to_owned()),
        };
        if let Some(what) = not_a_file(&meta) {
            anyhow::bail!("{name}: is {what}");
        }
        let appeared = !there;
        if appeared {
            there = true;
            notes.say(format_args!("{name} appeared; following it"))?;
        }
        let len = meta.len();
        if id != Some(identity(&meta)) || len < f.offset() {
            if id.is_some() && !appeared {
                let why = if len < f.offset() {
                    "truncated"
                } else {
                    "replaced"
                };
                notes.say(format_args!(
                    "{name}: {why}, reading it again from the start"
                ))?;
            }
            id = Some(identity(&meta));
            file = None;
            f.reset();
        }
        f.set_modified(meta.modified().ok());
        let mut read = 0;
        if len > f.offset() && f.room() > 0 {
            if file.is_none() {
                // Not a blocking open: the path may have become a FIFO
                // since it was looked at.
                file = Some(cudnnlog::source::open_regular(path).with_context(|| name.to_owned())?);
            }
            let Some(handle) = file.as_mut() else {
                unreachable!("opened above")
            };
            let want = (len - f.offset()).min(f.room() as u64);
            piece.clear();
            handle
                .seek(SeekFrom::Start(f.offset()))
                .and_then(|_| handle.take(want).read_to_end(&mut piece))
                .with_context(|| name.to_owned())?;
            read = piece.len();
            if read > 0 {
                f.push(&piece);
                pace.grew();
            }
        }
        let scanned = pace.scan(f, show)?;
        // More to read now (a big existing file), or wait for the writer.
        let behind = len > f.offset() && f.room() > 0;
        if !(scanned || behind && read > 0) {
            std::thread::sleep(POLL);
        }
    }
    Ok(())
}

/// Follows standard input until it ends (or `until` says), keeping a copy
/// of it for the report.
fn follow_stdin(
    f: &mut Follower<'_>,
    until: &Until,
    show: &mut impl FnMut(&Announced) -> anyhow::Result<()>,
) -> anyhow::Result<LogCopy> {
    let mut copy = LogCopy::create(None)?;
    // A bounded queue: a fast writer waits for the scan, memory stays put.
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        loop {
            let mut piece = vec![0; PIECE];
            let got = match stdin.read(&mut piece) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            piece.truncate(got);
            if tx.send(Ok(piece)).is_err() {
                return;
            }
        }
    });
    let mut pace = Pace::new();
    while until.going() {
        // Full: a scan is due whatever the pace (it frees the room).
        if f.room() == 0 {
            pace.scan(f, show)?;
        }
        match rx.recv_timeout(POLL) {
            Ok(piece) => {
                let piece = piece.map_err(|e| anyhow::anyhow!("<stdin>: {e}"))?;
                copy.append(&piece);
                f.push(&piece);
                pace.grew();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The writer closed the pipe.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        pace.scan(f, show)?;
    }
    Ok(copy)
}
