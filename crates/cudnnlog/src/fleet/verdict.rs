//! A verdict: one job's report in a line.

use crate::report::Culprit;
use crate::report::{CauseBasis, Finding, Outcome, Report};
use crate::unclassified::WILDCARD;
use serde::{Deserialize, Serialize};

/// What a fleet needs to know of one job: how it ended, the primary
/// failure and where it started, the rank at fault, the top cause and the
/// first remediation, and a fingerprint that groups the same failure
/// across jobs.
///
/// ```
/// use cudnnlog::fleet::Verdict;
/// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
///
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// scanner.scan_reader("job-17.log", &log[..], &mut sink)?;
/// let report = sink.into_report();
///
/// let v = Verdict::of("job-17.log", &report);
/// assert_eq!(v.primary.as_deref(), Some("cuda.oom"));
/// assert_eq!(v.first.as_ref().unwrap().path, "job-17.log");
/// assert_eq!(v.fingerprint.as_ref().unwrap().len(), 16);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The job's name: its file, or its files' common pattern.
    pub path: String,
    /// The files read, in order.
    pub sources: Vec<String>,
    /// `failed`, `degraded` or `clean`; absent when no file could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The primary finding's class id.
    pub primary: Option<String>,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its message, as the log wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Where it was first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<VerdictPlace>,
    /// For a distributed failure, the rank(s) at fault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Culprit>,
    /// The most likely root cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<VerdictCause>,
    /// The first remediation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    /// What to do with the job (a failed one): the report's
    /// [`action`](crate::Report::action).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<crate::report::Action>,
    /// Why that action, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable_because: Option<String>,
    /// A stable hash of the primary class and its normalised message: the
    /// same failure in a thousand jobs has one fingerprint. 16 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The findings of the job, errors and warnings.
    pub findings: usize,
    /// Why a file of the job could not be read (the others still were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a job's primary failure was first seen.
///
/// ```
/// use cudnnlog::{fleet::Verdict, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"[rank1]:2026-11-29 19:41:04,724 INFO train: step 40 loss 0.3\n[rank1]:RuntimeError: CUDA error: an illegal memory access was encountered\n";
/// scanner.scan_reader("job-17/rank1.log", &log[..], &mut sink)?;
/// let first = Verdict::of("job-17", &sink.into_report()).first.unwrap();
/// assert_eq!((first.path.as_str(), first.line, first.step, first.rank), ("job-17/rank1.log", 2, Some(40), Some(1)));
/// assert_eq!(first.timestamp.as_deref(), Some("2026-11-29T19:41:04.724"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictPlace {
    /// The file.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The line's time, ISO 8601, as the report's
    /// [`Place::timestamp`](crate::report::Place::timestamp); absent when it
    /// has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The last training step the log printed before the failure; absent
    /// when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// The rank that wrote the line; absent when its prefix names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// The top cause of a verdict, with its key evidence.
///
/// ```
/// use cudnnlog::{fleet::Verdict, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let report = sink.into_report();
/// let cause = Verdict::of("job-17.log", &report).cause.unwrap();
/// // The report's top cause, with its first piece of evidence.
/// assert_eq!((cause.id.as_str(), cause.confidence), ("memory_pressure", report.findings[0].causes[0].confidence));
/// assert_eq!(cause.evidence.as_deref(), Some("line 1: requested 2.00 GiB with only 1.19 GiB free"));
/// assert_eq!(cause.basis, cudnnlog::report::CauseBasis::Evidence);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictCause {
    /// A root-cause id.
    pub id: String,
    /// Between 0 and 1.
    pub confidence: f64,
    /// The first piece of evidence, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// `evidence` when the log moved it, `prior` when it is only the
    /// commonest cause of the message: show it then as
    /// [`PRIOR_ONLY`](crate::report::PRIOR_ONLY), not as a reason.
    #[serde(default)]
    pub basis: CauseBasis,
}

impl Verdict {
    /// The verdict of a job named `path` from its report.
    ///
    /// ```
    /// use cudnnlog::{fleet::Verdict, report::{FindingsSink, Outcome}, Catalog, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"INFO step 40 loss 0.3\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// let v = Verdict::of("job-17.log", &sink.into_report());
    /// assert_eq!((v.outcome, v.findings), (Some(Outcome::Failed), 1));
    /// assert_eq!(v.first.as_ref().map(|p| (p.line, p.step)), Some((2, Some(40))));
    /// assert!(v.cause.is_some() && v.remediation.is_some());
    /// // The same model and batch need the same memory on a rerun.
    /// assert_eq!(v.action, Some(cudnnlog::report::Action::Stop));
    /// ```
    pub fn of(path: &str, report: &Report) -> Verdict {
        let primary = primary_finding(report);
        let source_path = |i: usize| {
            report
                .sources
                .get(i)
                .map_or_else(String::new, |s| s.path.clone())
        };
        Verdict {
            path: path.to_string(),
            sources: report.sources.iter().map(|s| s.path.clone()).collect(),
            outcome: Some(report.outcome),
            primary: report.primary.clone(),
            title: primary.map(|f| f.title.clone()),
            message: primary.map(|f| f.message.clone()),
            first: primary.map(|f| VerdictPlace {
                path: source_path(f.first.source),
                line: f.first.line,
                timestamp: f.first.timestamp.clone(),
                step: f.first.step,
                rank: f.first.rank,
            }),
            culprit: primary.and_then(|f| f.culprit.clone()),
            cause: primary
                .and_then(|f| f.causes.first())
                .map(|c| VerdictCause {
                    id: c.id.clone(),
                    confidence: c.confidence,
                    evidence: c.evidence.first().cloned(),
                    basis: c.basis(),
                }),
            remediation: primary.and_then(|f| f.remediations.first().cloned()),
            action: report.action,
            retryable_because: report.retryable_because.clone(),
            fingerprint: primary.map(fingerprint),
            findings: report.findings.len(),
            error: None,
        }
    }

    /// The verdict of a job none of whose files could be read.
    ///
    /// ```
    /// let v = cudnnlog::fleet::Verdict::unreadable("gone.log", vec!["gone.log".into()], "gone.log: No such file or directory".into());
    /// assert!(v.outcome.is_none() && v.error.is_some());
    /// ```
    pub fn unreadable(path: &str, sources: Vec<String>, error: String) -> Verdict {
        Verdict {
            path: path.to_string(),
            sources,
            outcome: None,
            primary: None,
            title: None,
            message: None,
            first: None,
            culprit: None,
            cause: None,
            remediation: None,
            action: None,
            retryable_because: None,
            fingerprint: None,
            findings: 0,
            error: Some(error),
        }
    }
}

/// The report's primary finding: the first finding of the primary class
/// that is neither fallout nor a carried status.
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
/// let report = sink.into_report();
/// let f = cudnnlog::fleet::primary_finding(&report).unwrap();
/// assert_eq!(f.class, "cuda.illegal_address");
/// ```
pub fn primary_finding(report: &Report) -> Option<&Finding> {
    let class = report.primary.as_ref()?;
    let of_class = || report.findings.iter().filter(|f| &f.class == class);
    of_class()
        .find(|f| f.caused_by.is_none() && f.carried_by.is_none())
        .or_else(|| of_class().next())
}

/// How many leading tokens of a message make its fingerprint: the words
/// that name the failure come first; what follows (a list of processes, a
/// hint) varies between jobs that failed the same way.
pub const FINGERPRINT_TOKENS: usize = 16;

/// The fingerprint of a finding: FNV-1a (64 bits, so stable across
/// platforms and releases) of its class and the first
/// [`FINGERPRINT_TOKENS`] tokens of its message with the variable ones
/// masked, as unclassified templates are (numbers, addresses, paths, quoted
/// values), and the unit after a masked number too (`MiB`, `GiB`).
///
/// ```
/// use cudnnlog::fleet::fingerprint_of;
/// let a = fingerprint_of("cuda.oom", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0");
/// let b = fingerprint_of("cuda.oom", "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 3");
/// let c = fingerprint_of("cuda.illegal_address", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0");
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// ```
pub fn fingerprint_of(class: &str, message: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(class.as_bytes());
    let mut masked = false;
    for token in crate::unclassified::tokens(message)
        .iter()
        .take(FINGERPRINT_TOKENS)
    {
        let unit = token.trim_end_matches(|c: char| c.is_ascii_punctuation());
        let token = if masked && is_unit(unit) {
            WILDCARD
        } else {
            token
        };
        masked = token.starts_with(WILDCARD);
        eat(b"\x00");
        eat(token.as_bytes());
    }
    format!("{h:016x}")
}

/// A unit of size or time that follows a number.
fn is_unit(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "b" | "bytes"
            | "kb"
            | "kib"
            | "mb"
            | "mib"
            | "gb"
            | "gib"
            | "tb"
            | "tib"
            | "ms"
            | "s"
            | "seconds"
            | "milliseconds"
            | "minutes"
    )
}

fn fingerprint(f: &Finding) -> String {
    fingerprint_of(&f.class, &f.message)
}
