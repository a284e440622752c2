//! The culprit evidence rules (`patterns/culprit.toml`): lines that tell
//! which rank is behind or at fault, as data. `diagnose::culprit` reads a
//! log with them.

use serde::Deserialize;

/// What an evidence line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// The rank's last enqueued collective (`value`).
    Enqueued,
    /// Ranks named as late or at fault (`rank` or `ranks`).
    Named,
    /// torchrun's first observed failure (`rank`, optional `host`).
    RootCause,
    /// A launcher or serving stack naming the rank whose process failed,
    /// without saying how (`Shard 0 failed to start`, `Terminating
    /// remaining workers after failure of Process 3`): read after a failure
    /// no rank tag places (`rank`).
    Launcher,
    /// The collective a rank says it is running (`value`; the rank is
    /// `rank` in the regex, or the line's tag): the ranks whose collective
    /// differs from the one most ranks run are at fault.
    Collective,
}

/// A line an evidence rule must read, and the rank it must find there.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceExample {
    /// The line (or lines, for a rule that reads several).
    pub text: String,
    /// The rank the rule finds in it.
    pub rank: u32,
}

/// A line that tells which rank is behind or at fault.
#[derive(Clone, Debug)]
pub struct EvidenceRule {
    /// Stable id.
    pub id: String,
    /// What it says.
    pub kind: EvidenceKind,
    /// Run on the line (and the `lines` after it); compiled on first use
    /// for the built-in catalog.
    pub regex: crate::catalog::LazyRegex,
    /// Lines after the first that the regex sees (torchrun's summary block).
    pub lines: usize,
    /// The literal the line must contain, to skip the regex on most lines.
    pub anchor: String,
    /// For `named` rules, what naming the ranks means; `{ranks}` is
    /// "rank 3" or "ranks 2, 5".
    pub reason: Option<String>,
    /// Lines the rule must read, with the rank it finds (a test runs them).
    pub examples: Vec<EvidenceExample>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvidenceFile {
    pub evidence: Vec<EvidenceEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvidenceEntry {
    pub id: String,
    pub kind: EvidenceKind,
    pub anchor: String,
    pub regex: String,
    #[serde(default)]
    pub lines: usize,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub examples: Vec<EvidenceExample>,
    #[allow(dead_code)]
    pub what: String,
}
