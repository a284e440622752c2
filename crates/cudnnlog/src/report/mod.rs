//! The report: findings grouped from matches, with causes and remediations.
//!
//! # JSON format, version 1 (`"schema": "cudnnlog.report/1"`)
//!
//! [`Report`] serializes to the document `cudnnlog scan --format json`
//! prints. Fields may be added in later versions; none is removed or changes
//! meaning within a version. Absent values are omitted (`timestamp`, `step`,
//! `epoch`, `rank`) or `null` (`primary`).
//!
//! ```json
//! {
//!   "schema": "cudnnlog.report/1",
//!   "sources": [{"path": "train.log", "bytes": 2655, "lines": 31}],
//!   "environment": {"framework": "pytorch", "framework_version": "2.11.0", "cudnn": "9.19.0"},
//!   "primary": "cuda.oom",
//!   "findings": [{
//!     "class": "cuda.oom", "title": "GPU out of memory", "severity": "error",
//!     "pattern": "cuda-oom-pytorch", "count": 1,
//!     "first": {"source": 0, "line": 31, "byte": 1722, "timestamp": "2026-11-29T19:41:04.724",
//!               "step": 3, "epoch": 2},
//!     "last":  {"source": 0, "line": 31, "byte": 1722},
//!     "ranks": [],
//!     "message": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. …",
//!     "facts": {"requested_bytes": 1642824991, "exception": "torch.OutOfMemoryError"},
//!     "causes": [{"id": "fragmentation", "confidence": 0.58,
//!                 "evidence": ["line 29: the request would fit if the cached memory could be reused: …"]}],
//!     "remediations": ["…"]
//!   }]
//! }
//! ```
//!
//! The full field list is in `docs/json-format.md`.

use crate::catalog::Severity;
use crate::source::SourceInfo;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod culprit;
pub use crate::diagnose::occurrences::MAX_OCCURRENCES;
pub use crate::diagnose::{FindingsSink, MAX_SIGNATURES, OTHER_SIGNATURES};

// What a report holds, from the steps that produce it.
pub use crate::catalog::Action;
pub use crate::facts::Fact;
pub use crate::fields::FIELDS as ENVIRONMENT_FIELDS;
pub use crate::framer::MAX_LINE_TEXT;
pub use crate::prefix::{Timestamp, Zone};
pub use crate::text::{code_span, sentences};
pub use crate::unclassified::WILDCARD;
pub use culprit::{Basis, Culprit, EvidenceLine};

/// How one failure class shows across several runs.
///
/// ```
/// let c = cudnnlog::report::CrossRun {
///     class: "cuda.oom".into(), kind: "same_step".into(), runs: vec![0, 1], detail: "step 300".into(),
/// };
/// assert_eq!(c.runs.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossRun {
    /// The class id.
    pub class: String,
    /// `same_step`, `different_steps` or `after_environment_change`.
    pub kind: String,
    /// The sources (indexes into `sources`) where it fails.
    pub runs: Vec<usize>,
    /// What was compared, in words.
    pub detail: String,
}

/// A ranked root cause of a finding.
///
/// ```
/// let c = cudnnlog::report::RankedCause { id: "fragmentation".into(), confidence: 0.6, evidence: vec![] };
/// assert_eq!(serde_json::to_value(&c).unwrap()["id"], "fragmentation");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RankedCause {
    /// A root-cause id (`memory_pressure`, …).
    pub id: String,
    /// Between 0 and 1; a finding's confidences sum to 1.
    pub confidence: f64,
    /// What in the log supports this cause, each with its line. Empty: the
    /// cause is ranked by the catalog's prior alone (how often it is behind
    /// this message), which a report must not show as a reason
    /// ([`PRIOR_ONLY`]).
    pub evidence: Vec<String>,
}

impl RankedCause {
    /// What ranks this cause: the log's evidence, or the prior alone.
    ///
    /// ```
    /// use cudnnlog::report::{CauseBasis, RankedCause};
    /// let prior = RankedCause { id: "arch_unsupported".into(), confidence: 0.65, evidence: vec![] };
    /// assert_eq!(prior.basis(), CauseBasis::Prior);
    /// let seen = RankedCause { evidence: vec!["line 3: sm_120 is not in the build's arch list".into()], ..prior };
    /// assert_eq!(seen.basis(), CauseBasis::Evidence);
    /// ```
    pub fn basis(&self) -> CauseBasis {
        if self.evidence.is_empty() {
            CauseBasis::Prior
        } else {
            CauseBasis::Evidence
        }
    }
}

/// What ranks a cause: something the log shows, or only how often the
/// cause is behind the message (the catalog's prior).
///
/// ```
/// use cudnnlog::report::CauseBasis;
/// assert_eq!(serde_json::to_value(CauseBasis::Prior).unwrap(), "prior");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseBasis {
    /// A line of the log moved it: a number, a version, a setting, the
    /// progress before the failure, another finding.
    Evidence,
    /// Nothing in the log did: it is the commonest cause of the message.
    #[default]
    Prior,
}

/// What a report says instead of a reason when its top cause is ranked
/// by the prior alone: a percentage with nothing behind it is not a why.
///
/// ```
/// assert!(cudnnlog::report::PRIOR_ONLY.contains("no evidence in the log"));
/// ```
pub const PRIOR_ONLY: &str = "the most common cause of this message (no evidence in the log)";

/// The `schema` value of this version of the report.
pub const SCHEMA: &str = "cudnnlog.report/1";

/// A whole report: what was read and what was found.
///
/// ```
/// use cudnnlog::{report::{FindingsSink, Outcome, SCHEMA}, Catalog, Report, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"PyTorch version: 2.11.0+cu130\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
/// scanner.scan_reader("train.log", &log[..], &mut sink)?;
/// let report = sink.into_report();
/// assert_eq!((report.schema.as_str(), report.sources[0].path.as_str(), report.outcome), (SCHEMA, "train.log", Outcome::Failed));
/// assert_eq!((report.primary.as_deref(), &report.environment["framework_version"]), (Some("cuda.illegal_address"), &"2.11.0".into()));
/// // The JSON document reads back as the same report.
/// let json = serde_json::to_string(&report).unwrap();
/// assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// One entry per source, in the order given.
    pub sources: Vec<SourceInfo>,
    /// Versions and hardware the log shows (empty when it shows none).
    pub environment: BTreeMap<String, serde_json::Value>,
    /// How the run ended, as far as the log shows: `failed` (an error
    /// finding), `degraded` (warnings only: the run went on, perhaps on the
    /// CPU or slower), `clean` (no finding).
    #[serde(default)]
    pub outcome: Outcome,
    /// The class of the primary finding: the first error finding that is
    /// not fallout of another; in a log with warnings only, the most
    /// important warning (`warning_order` in `patterns/classes.toml`);
    /// `null` when there is no finding.
    pub primary: Option<String>,
    /// What to do with the job, for a failed one: `retry`, `stop` or
    /// `investigate` (absent for a clean or degraded run). Decided by the
    /// job's attempts when it has several (the same failure at the same
    /// step twice: stop; a later attempt that got further: retry), else by
    /// the catalog's `actions.toml` for the primary finding's pattern, its
    /// top cause when the log shows evidence for it, and its class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// Why that action, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable_because: Option<String>,
    /// Findings in order of first occurrence.
    pub findings: Vec<Finding>,
    /// With several sources: how a failure recurs across them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cross_run: Vec<CrossRun>,
    /// Error-level lines no pattern explains, grouped into templates, most
    /// frequent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unclassified: Vec<Unclassified>,
}

/// How the run ended, as far as the log shows.
///
/// ```
/// use cudnnlog::{report::{FindingsSink, Outcome}, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let outcome = |log: &[u8]| -> Result<Outcome, cudnnlog::Error> {
///     let mut sink = FindingsSink::new(scanner.catalog());
///     scanner.scan_slice(log, &mut sink)?;
///     Ok(sink.into_report().outcome)
/// };
/// assert_eq!(outcome(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")?, Outcome::Failed);
/// let fallback = b"W0312 09:41:27.350921   88213 conv_algorithm_picker.cc:582] None of the algorithms provided by cuDNN heuristics worked; trying fallback algorithms.\n";
/// assert_eq!(outcome(fallback)?, Outcome::Degraded); // a warning: the run went on
/// assert_eq!(outcome(b"INFO train: epoch 2 step 3 loss 2.31\n")?, Outcome::Clean);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// At least one error finding: the run (or a part of it) failed.
    Failed,
    /// Warnings only: the run went on, maybe on the CPU or slower.
    Degraded,
    /// No finding.
    #[default]
    Clean,
}

impl Outcome {
    /// The outcome of a report with these findings.
    ///
    /// ```
    /// use cudnnlog::report::Outcome;
    /// assert_eq!(Outcome::of(&[]), Outcome::Clean);
    /// ```
    pub fn of(findings: &[Finding]) -> Outcome {
        if findings.iter().any(|f| f.severity == Severity::Error) {
            Outcome::Failed
        } else if findings.is_empty() {
            Outcome::Clean
        } else {
            Outcome::Degraded
        }
    }

    /// `failed`, `degraded` or `clean`.
    ///
    /// ```
    /// use cudnnlog::report::Outcome;
    /// assert_eq!(Outcome::Failed.as_str(), "failed");
    /// assert_eq!(Outcome::of(&[]).as_str(), "clean");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Failed => "failed",
            Outcome::Degraded => "degraded",
            Outcome::Clean => "clean",
        }
    }
}

/// A template of error lines the catalog does not know.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"2026-11-29 19:41:04,724 ERROR data: shard /data/train-00017.tar is corrupt: unexpected end of file\n\
/// 2026-11-29 19:41:09,310 ERROR data: shard /data/train-00342.tar is corrupt: unexpected end of file\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let report = sink.into_report();
/// assert!(report.findings.is_empty());
/// let u = &report.unclassified[0];
/// assert_eq!((u.template.as_str(), u.count), ("data: shard <*> is corrupt: unexpected end of file", 2));
/// assert_eq!((u.first.line, u.last.line, u.example.as_str()), (1, 2, "data: shard /data/train-00017.tar is corrupt: unexpected end of file"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unclassified {
    /// The line with variable parts (numbers, paths, ids) as `<*>`.
    pub template: String,
    /// How many lines it covers.
    pub count: u64,
    /// Where its first line is (with no `step` or `epoch`).
    pub first: Place,
    /// Where its last line is (with no `step` or `epoch`).
    pub last: Place,
    /// The first line that made the template.
    pub example: String,
}

/// A place in a source, as reported.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"[rank3]:2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 loss 2.31\n[rank3]:RuntimeError: CUDA error: an illegal memory access was encountered\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let at = &sink.into_report().findings[0].first;
/// assert_eq!((at.source, at.line, at.byte, at.rank), (0, 2, 69, Some(3)));
/// assert_eq!((at.step, at.epoch), (Some(3), Some(2)));
/// // The line has no time of its own: it is the nearest earlier one of its rank.
/// assert_eq!(at.timestamp.as_deref(), Some("2026-11-29T19:41:04.724"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// Index of the source in the report's `sources`.
    pub source: usize,
    /// 1-based line number (lines end at `\n`; `\r` redraws do not count).
    pub line: u64,
    /// Byte offset of the start of that line.
    pub byte: u64,
    /// The line's time, ISO 8601 (`2026-11-29T19:46:54.456820794`, with
    /// `Z` or `±HH:MM` when the log wrote a zone): see
    /// [`Timestamp::iso`](crate::prefix::Timestamp::iso).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// When the line's time has no year and none could be inferred (bytes
    /// from memory or a pipe, no dated line near): `--11-29T19:46:54.456820`,
    /// and no `timestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yearless_timestamp: Option<String>,
    /// For a dmesg line: seconds since boot, as written (`4821.553190`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime: Option<String>,
    /// The last step the log printed before the event, within the scanner's
    /// context; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The last epoch the log printed before the event, within the
    /// scanner's context; absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// The rank that wrote the line; absent when its prefix names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// All matches of one class and signature.
///
/// ```
/// use cudnnlog::{report::{Fact, FindingsSink}, catalog::Severity, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.";
/// scanner.scan_slice(format!("INFO step 7\n{oom}\nINFO step 8\n{oom}\n").as_bytes(), &mut sink)?;
/// let report = sink.into_report();
/// let f = &report.findings[0];
/// assert_eq!((report.findings.len(), f.class.as_str(), f.title.as_str(), f.severity), (1, "cuda.oom", "GPU out of memory", Severity::Error));
/// assert_eq!((f.pattern.as_str(), f.count, f.first.line, f.last.line), ("cuda-oom-pytorch-allocator", 2, 2, 4));
/// assert_eq!((f.message.as_str(), &f.facts["requested_bytes"]), (oom, &Fact::Int(2 << 30)));
/// assert_eq!(f.causes[0].id, "memory_pressure");
/// assert!(!f.remediations.is_empty() && f.caused_by.is_none());
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The class id.
    pub class: String,
    /// The class's title.
    pub title: String,
    /// `error`, or `warning` for something the run survived.
    pub severity: Severity,
    /// The id of the pattern that matched first.
    pub pattern: String,
    /// How many events matched.
    pub count: u64,
    /// Where the first matched event is.
    pub first: Place,
    /// Where the last matched event is.
    pub last: Place,
    /// Ranks that reported it, ascending.
    pub ranks: Vec<u32>,
    /// The first matched line.
    pub message: String,
    /// Values captured from the first match.
    pub facts: BTreeMap<String, Fact>,
    /// Most likely first.
    pub causes: Vec<RankedCause>,
    /// What to do, most specific first: sentences with CommonMark inline
    /// code spans (`` `export X=1` ``) for commands, settings and names.
    /// A value from the log filled into one is always a code span of its
    /// own, fenced for it ([`code_span`]), or inside one of the sentence's
    /// spans re-fenced for it, so a renderer that splits code spans as
    /// CommonMark does finds the sentence's code and text whatever the
    /// value holds (a backtick in a device-side assert's condition closed
    /// the span early).
    pub remediations: Vec<String>,
    /// When this finding is fallout of an earlier one (a cuBLAS error after
    /// a device-side assert, a timeout on the ranks that waited for a failed
    /// one): the index in `findings` of that finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<usize>,
    /// The class of that finding, when this one is its fallout: one rank's
    /// `cuda.oom` for the others' `nccl.timeout`, whichever file of the job
    /// each is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallout_of: Option<String>,
    /// True when the pattern that matched first is a preview: written from
    /// the framework's templates, not yet proven on a real log.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preview: bool,
    /// How sure the match is, when less than certain: a message recognised
    /// by its tail when its head was cut off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// For a distributed failure: the rank(s) the log shows to be at fault
    /// (the one that never reached the collective, the first to fail), not
    /// the ranks that reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<crate::report::Culprit>,
    /// When this finding is a status carried by a symptom's message
    /// (`Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR`): the
    /// index in `findings` of the symptom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_by: Option<usize>,
    /// True when what the finding holds was cut to keep memory bounded: a
    /// line of its event longer than
    /// [`MAX_LINE_TEXT`] kept only its ends,
    /// or its class had [`MAX_SIGNATURES`] distinct
    /// signatures already and this finding counts the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Where its occurrences are, in log order: every one while `count` is
    /// at most [`MAX_OCCURRENCES`], else a sample of them spread over the
    /// log that does not depend on how the input was cut (`first` and
    /// `last` are always exact). What a timeline draws.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub occurrences: Vec<Place>,
}

impl<'de> Deserialize<'de> for Fact {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Fact, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Int(n) => Fact::Int(n),
            Raw::Text(s) => Fact::Text(s),
        })
    }
}

/// Seconds since 1970-01-01T00:00 of a time as the report writes it: ISO
/// 8601 `2026-11-29T19:46:54.456820794` ([`Place::timestamp`], fractions
/// kept, a zone suffix ignored: the lines of one log share one), or the
/// yearless `--11-29T19:46:54` ([`Place::yearless_timestamp`], read as in
/// the year 2000: only differences between such times mean anything).
/// What a timeline's x axis needs; `None` for any other text.
///
/// ```
/// use cudnnlog::report::seconds;
/// assert_eq!(seconds("1970-01-02T00:00:01.5"), Some(86_401.5));
/// let a = seconds("2026-11-29T19:46:54.456820794").unwrap();
/// let b = seconds("2026-11-29T19:47:59.751").unwrap();
/// assert!((b - a - 65.294).abs() < 1e-3);
/// assert_eq!(seconds("--11-29T19:47:54").unwrap() - seconds("--11-29T19:46:54").unwrap(), 60.0);
/// assert_eq!(seconds("19:46:54"), None);
/// ```
pub fn seconds(t: &str) -> Option<f64> {
    let (year, rest) = match t.strip_prefix("--") {
        Some(rest) => (2000, rest),
        None => (t.get(..4)?.parse().ok()?, t.get(5..)?),
    };
    let number = |s: Option<&str>| -> Option<i64> {
        let s = s?;
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let month = number(rest.get(..2))?;
    let day = number(rest.get(3..5))?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || rest.get(5..6) != Some("T") {
        return None;
    }
    let hour = number(rest.get(6..8))?;
    let min = number(rest.get(9..11))?;
    let sec: String = rest
        .get(12..)?
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let sec: f64 = sec.parse().ok()?;
    let days = crate::prefix::time::days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3600 + min * 60) as f64 + sec)
}

#[cfg(test)]
mod examples;
