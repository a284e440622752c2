//! The NDJSON messages: one JSON object per line, its kind in `type`
//! (written first). Every producer — a scan streaming its findings, a
//! `--follow`, a fleet scan — writes these, so a consumer reads one
//! vocabulary:
//!
//! | `type` | written | fields |
//! |---|---|---|
//! | `finding`, `"partial": true` | as soon as a finding's first match is found, while the scan goes on | `class`, `severity`, `pattern`, `path`, `line`, `byte`, `rank`, `message`, `facts` |
//! | `finding` | after the scan, one per diagnosed finding (a `--follow` adds the `path` and `line` where it appeared) | those of a report's finding (`docs/json-format.md`) |
//! | `unclassified` | after the findings | those of a report's unclassified template |
//! | `summary` | last, for one job | `schema`, `sources`, `environment`, `outcome`, `primary`, `action` and `retryable_because` (absent for a clean run), `cross_run`, `findings` and `errors` (counts) |
//! | `verdict` | one per job of a fleet, as each is done | those of a [`Verdict`] |
//! | `fleet_summary` | last, for a fleet | `schema` and those of a fleet [`Summary`] |
//!
//! ```
//! use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink, ndjson};
//! let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
//! let mut sink = FindingsSink::new(scanner.catalog());
//! let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
//! scanner.scan_slice(log, &mut sink).unwrap();
//! let report = sink.into_report();
//! let mut out = Vec::new();
//! for message in ndjson::report_messages(&report) {
//!     message.write_line(&mut out).unwrap();
//! }
//! let text = String::from_utf8(out).unwrap();
//! let lines: Vec<&str> = text.lines().collect();
//! assert!(lines[0].starts_with(r#"{"type":"finding","class":"cuda.illegal_address""#));
//! assert!(lines[1].starts_with(r#"{"type":"summary","schema":"cudnnlog.report/1""#));
//! ```

use crate::catalog::Severity;
use crate::facts::Fact;
use crate::fleet::{Summary, Verdict};
use crate::report::CrossRun;
use crate::report::{Finding, Outcome, Report, Unclassified};
use crate::sink::Match;
use crate::source::SourceInfo;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;

/// One NDJSON line; see the [module documentation](self) for each kind.
///
/// ```
/// use cudnnlog::{ndjson::{self, Message}, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n\
/// 2026-11-29 19:41:09,310 ERROR data: shard /data/train-00342.tar is corrupt: unexpected end of file\n";
/// scanner.scan_slice(log, &mut sink).unwrap();
/// let report = sink.into_report();
/// let kinds: Vec<&str> = ndjson::report_messages(&report)
///     .map(|m| match m {
///         Message::Finding(_) => "finding",
///         Message::Unclassified(_) => "unclassified",
///         Message::Summary(_) => "summary",
///         _ => "other",
///     })
///     .collect();
/// assert_eq!(kinds, ["finding", "unclassified", "summary"]);
/// let mut out = Vec::new();
/// Message::Unclassified(&report.unclassified[0]).write_line(&mut out).unwrap();
/// assert!(out.starts_with(br#"{"type":"unclassified","template":"data: shard <*> is corrupt: unexpected end of file""#));
/// ```
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message<'a> {
    /// A finding's first match, while the scan goes on.
    #[serde(rename = "finding")]
    Partial(Partial<'a>),
    /// A diagnosed finding.
    Finding(FindingLine<'a>),
    /// Error lines no pattern explains, as one template.
    Unclassified(&'a Unclassified),
    /// The end of one job's report.
    Summary(JobSummary<'a>),
    /// One job of a fleet.
    Verdict(&'a Verdict),
    /// The end of a fleet scan.
    FleetSummary(FleetSummary<'a>),
}

impl Message<'_> {
    /// Writes the message as one line of JSON and a newline (DEL and C1
    /// controls escaped, as [`json::compact`](crate::json::compact) does).
    ///
    /// # Errors
    ///
    /// What writing to `out` returns.
    ///
    /// ```
    /// use cudnnlog::ndjson::{FleetSummary, Message};
    /// let summary = cudnnlog::fleet::Summary::default();
    /// let mut out = Vec::new();
    /// Message::FleetSummary(FleetSummary::of(&summary)).write_line(&mut out).unwrap();
    /// assert!(out.starts_with(br#"{"type":"fleet_summary","schema":"cudnnlog.fleet/1","jobs":0"#));
    /// assert!(out.ends_with(b"}\n"));
    /// ```
    pub fn write_line(&self, mut out: impl Write) -> std::io::Result<()> {
        crate::json::compact(&mut out, self).map_err(std::io::Error::from)?;
        out.write_all(b"\n")
    }
}

/// A finding's first match, announced while the scan goes on.
///
/// ```
/// use cudnnlog::{ndjson::{Message, Partial}, sink::{Match, Sink}, Catalog, ScannerBuilder};
/// struct Stream(Vec<u8>);
/// impl Sink for Stream {
///     type Error = cudnnlog::Error;
///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, Self::Error> {
///         Message::Partial(Partial::of(m, "train.log")).write_line(&mut self.0).unwrap();
///         Ok(true)
///     }
/// }
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut stream = Stream(Vec::new());
/// let log = b"INFO step 1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// scanner.scan_slice(log, &mut stream).unwrap();
/// let line = String::from_utf8(stream.0).unwrap();
/// assert!(line.starts_with(r#"{"type":"finding","partial":true,"class":"cuda.oom","severity":"error","pattern":"cuda-oom-pytorch-allocator","path":"train.log","line":2,"byte":12,"rank":null,"#));
/// assert!(line.contains(r#""requested_bytes":2147483648"#));
/// ```
#[derive(Debug, Serialize)]
pub struct Partial<'a> {
    /// Always true: the diagnosed finding follows after the scan.
    pub partial: bool,
    /// The class id.
    pub class: &'a str,
    /// As the pattern says; the diagnosis may raise it.
    pub severity: Severity,
    /// The pattern that matched.
    pub pattern: &'a str,
    /// The source's path.
    pub path: &'a str,
    /// The matched line's number.
    pub line: u64,
    /// The matched line's byte offset.
    pub byte: u64,
    /// The rank that wrote it, when its prefix names one (`null` if not).
    pub rank: Option<u32>,
    /// The matched line.
    pub message: &'a str,
    /// The values the pattern captured.
    pub facts: BTreeMap<&'a str, Fact>,
}

impl<'a> Partial<'a> {
    /// The announcement of match `m` in the source at `path`.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, ndjson::Partial, sink::{Match, Sink}};
    /// struct First(Option<String>);
    /// impl Sink for First {
    ///     type Error = cudnnlog::Error;
    ///     fn matched(&mut self, m: &Match<'_>) -> Result<bool, Self::Error> {
    ///         self.0 = Some(Partial::of(m, "train.log").class.to_string());
    ///         Ok(false)
    ///     }
    /// }
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut first = First(None);
    /// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut first).unwrap();
    /// assert_eq!(first.0.as_deref(), Some("cuda.illegal_address"));
    /// ```
    pub fn of(m: &'a Match<'a>, path: &'a str) -> Partial<'a> {
        Partial {
            partial: true,
            class: m.class,
            severity: m.severity,
            pattern: &m.pattern.id,
            path,
            line: m.location.line,
            byte: m.location.byte,
            rank: m.location.rank,
            message: m.message,
            facts: m.facts().into_iter().collect(),
        }
    }
}

/// A diagnosed finding, and where a `--follow` saw it appear.
///
/// ```
/// use cudnnlog::{ndjson::{FindingLine, Message}, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
/// let report = sink.into_report();
/// let line = FindingLine { path: Some("train.log"), line: Some(812), ..FindingLine::of(&report.findings[0]) };
/// let mut out = Vec::new();
/// Message::Finding(line).write_line(&mut out).unwrap();
/// assert!(out.starts_with(br#"{"type":"finding","class":"cuda.illegal_address","title":"illegal GPU memory access""#));
/// assert!(out.ends_with(b",\"path\":\"train.log\",\"line\":812}\n"));
/// ```
#[derive(Debug, Serialize)]
pub struct FindingLine<'a> {
    /// The finding, its fields at the top level.
    #[serde(flatten)]
    pub finding: &'a Finding,
    /// The followed file's path (`--follow` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    /// The line where it appeared in the followed file (`--follow` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl<'a> FindingLine<'a> {
    /// A report's finding as it is.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink, ndjson::{FindingLine, Message}};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// let report = sink.into_report();
    /// let line = FindingLine::of(&report.findings[0]);
    /// assert_eq!((line.path, line.line), (None, None));
    /// let mut out = Vec::new();
    /// Message::Finding(line).write_line(&mut out).unwrap();
    /// assert!(out.starts_with(br#"{"type":"finding","class":"cuda.oom""#));
    /// ```
    pub fn of(finding: &'a Finding) -> FindingLine<'a> {
        FindingLine {
            finding,
            path: None,
            line: None,
        }
    }
}

/// The end of one job's report: what a consumer needs besides the findings.
///
/// ```
/// use cudnnlog::{ndjson::{JobSummary, Message}, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_reader("train.log", &b"RuntimeError: CUDA error: an illegal memory access was encountered\n"[..], &mut sink).unwrap();
/// let report = sink.into_report();
/// let mut out = Vec::new();
/// Message::Summary(JobSummary::of(&report)).write_line(&mut out).unwrap();
/// assert_eq!(
///     String::from_utf8(out).unwrap(),
///     concat!(
///         r#"{"type":"summary","schema":"cudnnlog.report/1","sources":[{"path":"train.log","bytes":67,"lines":1}],"#,
///         r#""environment":{},"outcome":"failed","primary":"cuda.illegal_address","action":"stop","#,
///         r#""retryable_because":"the log does not show which cause it is, but 93% of the likely ones (framework_bug, code_bug, int32_overflow, …) repeat on a rerun.","#,
///         r#""cross_run":[],"findings":1,"errors":1}"#,
///         "\n",
///     )
/// );
/// ```
#[derive(Debug, Serialize)]
pub struct JobSummary<'a> {
    /// The report's schema ([`report::SCHEMA`](crate::report::SCHEMA)).
    pub schema: &'a str,
    /// What was read.
    pub sources: &'a [SourceInfo],
    /// Versions and hardware the log shows.
    pub environment: &'a BTreeMap<String, serde_json::Value>,
    /// How the run ended.
    pub outcome: Outcome,
    /// The primary finding's class (`null` when none).
    pub primary: Option<&'a str>,
    /// What to do with the job (absent for a clean run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<crate::report::Action>,
    /// Why that action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable_because: Option<&'a str>,
    /// How a failure recurs across sources.
    pub cross_run: &'a [CrossRun],
    /// How many findings.
    pub findings: usize,
    /// How many of them are errors.
    pub errors: usize,
}

impl<'a> JobSummary<'a> {
    /// The summary of `report`.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink, ndjson::JobSummary};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// let report = sink.into_report();
    /// let summary = JobSummary::of(&report);
    /// assert_eq!((summary.schema, summary.primary), ("cudnnlog.report/1", Some("cuda.oom")));
    /// assert_eq!((summary.findings, summary.errors, summary.sources.len()), (1, 1, 1));
    /// ```
    pub fn of(report: &'a Report) -> JobSummary<'a> {
        JobSummary {
            schema: &report.schema,
            sources: &report.sources,
            environment: &report.environment,
            outcome: report.outcome,
            primary: report.primary.as_deref(),
            action: report.action,
            retryable_because: report.retryable_because.as_deref(),
            cross_run: &report.cross_run,
            findings: report.findings.len(),
            errors: report
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .count(),
        }
    }
}

/// The end of a fleet scan.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, ndjson::{FleetSummary, Message}, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
/// let mut summary = Summary::default();
/// summary.add(&Verdict::of("a.log", &sink.into_report()));
/// summary.add(&Verdict::unreadable("b.log", vec!["b.log".into()], "b.log: permission denied".into()));
/// let summary = summary.finish();
/// let mut out = Vec::new();
/// Message::FleetSummary(FleetSummary::of(&summary)).write_line(&mut out).unwrap();
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with(r#"{"type":"fleet_summary","schema":"cudnnlog.fleet/1","jobs":2,"failed":1,"degraded":0,"clean":0,"unreadable":1,"#));
/// assert!(text.contains(r#""by_primary":{"cuda.illegal_address":1}"#));
/// ```
#[derive(Debug, Serialize)]
pub struct FleetSummary<'a> {
    /// Always [`fleet::SCHEMA`](crate::fleet::SCHEMA).
    pub schema: &'static str,
    /// The summary, its fields at the top level.
    #[serde(flatten)]
    pub summary: &'a Summary,
}

impl<'a> FleetSummary<'a> {
    /// The message of `summary`.
    ///
    /// ```
    /// use cudnnlog::{fleet::{Summary, Verdict}, ndjson::{FleetSummary, Message}};
    /// let mut summary = Summary::default();
    /// summary.add(&Verdict::unreadable("a.log", vec!["a.log".into()], "a.log: denied".into()));
    /// let message = FleetSummary::of(&summary);
    /// assert_eq!((message.schema, message.summary.jobs), ("cudnnlog.fleet/1", 1));
    /// let mut out = Vec::new();
    /// Message::FleetSummary(message).write_line(&mut out).unwrap();
    /// assert!(out.starts_with(br#"{"type":"fleet_summary","schema":"cudnnlog.fleet/1","jobs":1"#));
    /// ```
    pub fn of(summary: &'a Summary) -> FleetSummary<'a> {
        FleetSummary {
            schema: crate::fleet::SCHEMA,
            summary,
        }
    }
}

/// A report's messages, in order: each finding, each unclassified
/// template, the summary.
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink, ndjson::{self, Message}};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
/// scanner.scan_slice(log, &mut sink).unwrap();
/// let report = sink.into_report();
/// let messages: Vec<Message<'_>> = ndjson::report_messages(&report).collect();
/// assert_eq!(messages.len(), report.findings.len() + report.unclassified.len() + 1);
/// assert!(matches!(messages[0], Message::Finding(_)));
/// assert!(matches!(messages.last(), Some(Message::Summary(s)) if s.findings == report.findings.len()));
/// ```
pub fn report_messages(report: &Report) -> impl Iterator<Item = Message<'_>> {
    report
        .findings
        .iter()
        .map(|f| Message::Finding(FindingLine::of(f)))
        .chain(report.unclassified.iter().map(Message::Unclassified))
        .chain(std::iter::once(Message::Summary(JobSummary::of(report))))
}
