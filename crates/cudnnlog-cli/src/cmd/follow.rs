//! `cudnnlog scan --follow FILE`: watch a growing log, `tail -f` style, and
//! report each new finding as it appears. A file that shrinks (truncated)
//! or is replaced (rotated: another inode at the path) is read again from
//! its start. `--follow -` follows standard input until it ends.
//!
//! The scanning is the library's [`Follower`]; this module reads (polling
//! the file, or a thread reading the pipe), decides when to scan and
//! prints.

use crate::render;
use cudnnlog::follow::{Announced, Follower};
use cudnnlog::Scanner;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
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

/// Follows `path` (`-`: standard input) until interrupted, or for `limit`
/// (for tests), writing a line per new finding (`ndjson`: a JSON object per
/// new finding).
pub fn follow(
    scanner: &Scanner,
    path: &Path,
    ndjson: bool,
    limit: Option<Duration>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let name = render::sanitize_line(&path.display().to_string());
    let mut show = |a: &Announced| -> anyhow::Result<()> {
        let f = &a.finding;
        if ndjson {
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
    if path == Path::new("-") {
        follow_stdin(&mut follower, limit, &mut show)
    } else {
        follow_file(&mut follower, path, &name, limit, &mut show)
    }
}

fn follow_file(
    f: &mut Follower<'_>,
    path: &Path,
    name: &str,
    limit: Option<Duration>,
    show: &mut impl FnMut(&Announced) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut pace = Pace::new();
    let mut id: Option<u64> = None;
    let mut file: Option<std::fs::File> = None;
    let mut piece = Vec::new();
    while limit.is_none_or(|l| started.elapsed() < l) {
        let Ok(meta) = std::fs::metadata(path) else {
            std::thread::sleep(POLL); // rotated away, not yet recreated
            continue;
        };
        let len = meta.len();
        if id != Some(identity(&meta)) || len < f.offset() {
            if id.is_some() {
                let why = if len < f.offset() {
                    "truncated"
                } else {
                    "replaced"
                };
                writeln!(
                    std::io::stderr(),
                    "cudnnlog: {name}: {why}, reading it again from the start"
                )?;
            }
            id = Some(identity(&meta));
            file = None;
            f.reset();
        }
        f.set_modified(meta.modified().ok());
        let mut read = 0;
        if len > f.offset() && f.room() > 0 {
            if file.is_none() {
                file = Some(std::fs::File::open(path)?);
            }
            let Some(handle) = file.as_mut() else {
                unreachable!("opened above")
            };
            let want = (len - f.offset()).min(f.room() as u64);
            handle.seek(SeekFrom::Start(f.offset()))?;
            piece.clear();
            handle.take(want).read_to_end(&mut piece)?;
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

fn follow_stdin(
    f: &mut Follower<'_>,
    limit: Option<Duration>,
    show: &mut impl FnMut(&Announced) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let started = Instant::now();
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
    while limit.is_none_or(|l| started.elapsed() < l) {
        // Full: a scan is due whatever the pace (it frees the room).
        if f.room() == 0 {
            pace.scan(f, show)?;
        }
        match rx.recv_timeout(POLL) {
            Ok(piece) => {
                f.push(&piece.map_err(|e| anyhow::anyhow!("<stdin>: {e}"))?);
                pace.grew();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // The writer closed the pipe: everything, the last line too.
                for flush in [false, true] {
                    for a in f.scan(flush)? {
                        show(&a)?;
                    }
                }
                return Ok(());
            }
        }
        pace.scan(f, show)?;
    }
    Ok(())
}
