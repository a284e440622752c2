//! `cudnnlog scan --follow FILE`: watch a growing log, `tail -f` style, and
//! report each new finding as it appears. A file that shrinks (truncated)
//! or is replaced (rotated: another inode at the path) is read again from
//! its start.

use crate::{json_out, render};
use cudnnlog::report::FindingsSink;
use cudnnlog::Scanner;
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often the file is polled.
const POLL: Duration = Duration::from_millis(200);
/// Output is scanned once the writer has been quiet this long (so that a
/// traceback is complete), or once this much has piled up.
const QUIET: Duration = Duration::from_millis(500);
const PILE: u64 = 8 << 20;
/// Context kept before new bytes, so events that started earlier are framed.
const CONTEXT: u64 = 256 << 10;

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// Follows `path` until interrupted (or for `limit`, for tests), writing a
/// line per new finding (`ndjson`: a JSON object per new finding).
pub fn follow(
    scanner: &Scanner,
    path: &Path,
    ndjson: bool,
    limit: Option<Duration>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut announced: HashSet<(String, String, u64)> = HashSet::new();
    let mut id: Option<u64> = None;
    // Bytes already scanned, and the line number of the first of the rest.
    let (mut offset, mut line) = (0u64, 1u64);
    let (mut seen_len, mut grew_at) = (0u64, Instant::now());
    loop {
        if limit.is_some_and(|l| started.elapsed() >= l) {
            return Ok(());
        }
        let Ok(meta) = std::fs::metadata(path) else {
            std::thread::sleep(POLL); // rotated away, not yet recreated
            continue;
        };
        let len = meta.len();
        if id != Some(identity(&meta)) || len < offset {
            if id.is_some() {
                let why = if len < offset {
                    "truncated"
                } else {
                    "replaced"
                };
                writeln!(
                    std::io::stderr(),
                    "cudnnlog: {}: {why}, reading it again from the start",
                    render::sanitize_line(&path.display().to_string())
                )?;
            }
            id = Some(identity(&meta));
            (offset, line, seen_len) = (0, 1, 0);
            announced.clear();
        }
        if len != seen_len {
            (seen_len, grew_at) = (len, Instant::now());
        }
        let pending = len.saturating_sub(offset);
        if pending == 0 || (grew_at.elapsed() < QUIET && pending < PILE) {
            std::thread::sleep(POLL);
            continue;
        }
        // Read the new bytes with context before them; keep whole lines.
        let from = offset.saturating_sub(CONTEXT);
        let mut file = std::fs::File::open(path)?;
        file.seek(SeekFrom::Start(from))?;
        let mut bytes = Vec::with_capacity((len - from) as usize);
        (&mut file).take(len - from).read_to_end(&mut bytes)?;
        let Some(last_nl) = memchr_last(&bytes) else {
            std::thread::sleep(POLL);
            continue;
        };
        bytes.truncate(last_nl + 1);
        // No complete new line yet, or the file was rewritten in place and
        // is now shorter than what was read: the next look sees which.
        if bytes.len() <= (offset - from) as usize {
            std::thread::sleep(POLL);
            continue;
        }
        let mut sink = FindingsSink::new(scanner.catalog());
        let mut info = scanner.scan_slice(0, &bytes, &mut sink)?;
        // A yearless timestamp with no dated line near takes the file's year.
        info.modified = file.metadata().and_then(|m| m.modified()).ok();
        let report = sink.into_report(vec![info]);
        // Line numbers in the slice are relative to `from`.
        let context_lines = bytes[..(offset - from) as usize]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        let line_of = |l: u64| line + l - 1 - context_lines;
        for f in &report.findings {
            let at = from + f.last.byte;
            if at < offset {
                continue;
            }
            let key = (f.class.clone(), f.pattern.clone(), f.first.byte + from);
            if !announced.insert(key) {
                continue;
            }
            if ndjson {
                let mut v = serde_json::to_value(f)?;
                let o = v.as_object_mut().expect("a finding is an object");
                o.insert("type".into(), "finding".into());
                o.insert("path".into(), path.display().to_string().into());
                o.insert("line".into(), line_of(f.last.line).into());
                json_out::compact(&mut *out, &v)?;
                writeln!(out)?;
            } else {
                writeln!(
                    out,
                    "{}:{}: {} ({}) {}",
                    render::sanitize_line(&path.display().to_string()),
                    line_of(f.last.line),
                    f.class,
                    f.severity.as_str(),
                    render::sanitize_line(&f.message.chars().take(160).collect::<String>())
                )?;
            }
        }
        out.flush()?;
        let new_bytes = &bytes[(offset - from) as usize..];
        line += new_bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        offset = from + bytes.len() as u64;
    }
}

fn memchr_last(bytes: &[u8]) -> Option<usize> {
    bytes.iter().rposition(|&b| b == b'\n')
}
