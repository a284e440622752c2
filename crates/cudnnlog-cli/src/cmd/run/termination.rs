//! `run --termination-log FILE`: the diagnosis in one line, written where
//! Kubernetes reads a container's termination message
//! (`terminationMessagePath`, `/dev/termination-log` by default): `kubectl
//! describe pod` and the pod's `status.containerStatuses[].state.terminated
//! .message` show it. Kubernetes keeps at most 4096 bytes of it; so the line
//! is at most [`MAX_BYTES`], cut on a character, the most important first:
//! the outcome and how the command ended, the primary class and title,
//! the action (retry, stop, investigate), then where, the culprit rank, the cause, the message and the fix. No control character
//! reaches it (a log's escape sequences, newlines, tabs).

use anyhow::Context;
use cudnnlog::fleet::Verdict;
use cudnnlog::report::Outcome;
use cudnnlog::Report;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// What Kubernetes reads of a termination message, in bytes.
pub const MAX_BYTES: usize = 4096;

/// The termination log, opened (created or truncated) before the job
/// starts: a path that cannot be written fails before the job runs.
pub struct Log {
    path: PathBuf,
    file: std::fs::File,
}

impl Log {
    /// Opens `path` for writing, creating it.
    pub fn create(path: &Path) -> anyhow::Result<Log> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .with_context(|| format!("cannot write the termination log {}", path.display()))?;
        Ok(Log {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Writes `line` as the whole file, ended by a newline.
    pub fn write(&mut self, line: &str) -> anyhow::Result<()> {
        let context = || format!("cannot write the termination log {}", self.path.display());
        self.file.set_len(0).with_context(context)?;
        self.file.rewind().with_context(context)?;
        let mut bytes = bounded(line, MAX_BYTES - 1).into_bytes();
        bytes.push(b'\n');
        self.file.write_all(&bytes).with_context(context)?;
        self.file.flush().with_context(context)?;
        Ok(())
    }
}

/// The diagnosis of `report` in one line of at most `MAX_BYTES - 1` bytes
/// (the newline makes `MAX_BYTES`), `ended` saying how the command ended:
/// `failed (the command exited with status 1): cuda.oom — GPU out of
/// memory; at line 29; cause: fragmentation; message: …; fix: …`.
pub fn message(report: &Report, ended: &str) -> String {
    let v = Verdict::of("output", report);
    let outcome = v.outcome.unwrap_or(Outcome::Clean).as_str();
    let mut parts = Vec::new();
    match (&v.primary, &v.title) {
        (Some(class), Some(title)) => parts.push(format!("{outcome} ({ended}): {class} — {title}")),
        (Some(class), None) => parts.push(format!("{outcome} ({ended}): {class}")),
        _ => parts.push(format!("{outcome} ({ended}): no finding")),
    }
    if let Some(a) = v.action {
        match &v.retryable_because {
            Some(why) => parts.push(format!("action: {a} ({})", why.trim_end_matches('.'))),
            None => parts.push(format!("action: {a}")),
        }
    }
    if let Some(p) = &v.first {
        let mut at = format!("at line {}", p.line);
        if let Some(step) = p.step {
            at.push_str(&format!(", step {step}"));
        }
        if let Some(rank) = p.rank {
            at.push_str(&format!(", rank {rank}"));
        }
        parts.push(at);
    }
    if let Some(c) = v.culprit.as_ref().filter(|c| !c.ranks.is_empty()) {
        let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
        parts.push(format!("culprit: rank {}", ranks.join(",")));
    }
    if let Some(c) = &v.cause {
        parts.push(format!("cause: {}", c.id));
    }
    if let Some(m) = &v.message {
        parts.push(format!("message: {m}"));
    }
    if let Some(r) = &v.remediation {
        parts.push(format!("fix: {r}"));
    }
    bounded(&one_line(&parts.join("; ")), MAX_BYTES - 1)
}

/// `s` with every control character (newlines and tabs too) and every
/// invisible reordering character replaced, and runs of spaces made one.
pub fn one_line(s: &str) -> String {
    let clean = crate::render::sanitize_line(s).replace('\u{fffd}', " ");
    clean.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` cut to at most `max` bytes on a character boundary, ending with
/// `…` when cut.
fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max - '…'.len_utf8();
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_of(log: &[u8]) -> Report {
        let catalog = cudnnlog::Catalog::builtin().unwrap();
        let scanner = cudnnlog::ScannerBuilder::new().build(catalog);
        let mut sink = cudnnlog::report::FindingsSink::new(scanner.catalog());
        scanner.scan_slice(log, &mut sink).unwrap();
        sink.into_report()
    }

    #[test]
    fn a_failure_is_one_line_most_important_first() {
        let log = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/real/h200-torch-oom-amp-train.log"),
        )
        .unwrap();
        let line = message(&report_of(&log), "the command exited with status 1");
        assert!(
            line.starts_with("failed (the command exited with status 1): cuda.oom — GPU out of memory; action: stop ("),
            "{line}"
        );
        assert!(
            line.contains("); at line 29, step 3; cause: fragmentation; message: "),
            "{line}"
        );
        assert!(line.contains("; fix: "), "{line}");
        assert!(!line.chars().any(char::is_control), "{line}");
    }

    #[test]
    fn hostile_text_is_bounded_and_has_no_control_characters() {
        // A message of 20 kB with escapes, newlines and multi-byte text.
        let mut log =
            b"RuntimeError: CUDA error: an illegal memory access was encountered ".to_vec();
        for _ in 0..2000 {
            log.extend_from_slice("\x1b]0;x\x07é\tñ\r".as_bytes());
        }
        log.push(b'\n');
        let line = message(
            &report_of(&log),
            "the command was killed by SIGKILL (status 137)",
        );
        assert!(line.len() < MAX_BYTES, "{}", line.len());
        // The library keeps a message's first part; the line is still cut
        // where it would pass the bound.
        let long = one_line(&"é\u{1b}[31m ".repeat(3000));
        let cut = bounded(&long, MAX_BYTES - 1);
        assert!(cut.len() < MAX_BYTES && cut.ends_with('…'), "{}", cut.len());
        assert!(!cut.chars().any(|c| c.is_control()));
        assert!(!line.chars().any(|c| c.is_control()));
        assert!(line.starts_with(
            "failed (the command was killed by SIGKILL (status 137)): cuda.illegal_address"
        ));
        assert_eq!(bounded("ééé", 5), "é…");
        assert_eq!(bounded("abc", 3), "abc");
    }

    #[test]
    fn a_clean_run_says_so() {
        let line = message(
            &report_of(b"epoch 1 loss 0.3\n"),
            "the command exited with status 0",
        );
        assert_eq!(line, "clean (the command exited with status 0): no finding");
    }

    #[test]
    fn the_file_holds_the_line_and_a_newline() {
        let path = std::env::temp_dir().join(format!("cudnnlog-term-{}", std::process::id()));
        std::fs::write(&path, "x".repeat(9000)).unwrap();
        let mut log = Log::create(&path).unwrap();
        log.write(&"y".repeat(5000)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(text.len(), MAX_BYTES);
        assert!(text.ends_with("y…\n"));
    }
}
