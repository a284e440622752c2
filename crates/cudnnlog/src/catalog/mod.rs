//! The pattern catalog: classes, root causes and patterns, loaded from TOML.
//!
//! The built-in catalog is the `patterns/` directory of the repository,
//! embedded at build time. Users add directories of their own with
//! [`CatalogBuilder::add_dir`]; a user pattern with the id of a built-in one
//! replaces it. Every file is validated on load: a bad file is an
//! [`Error::Catalog`] naming the file and the field. The format is
//! documented in `docs/catalog-format.md`.
//!
//! ```
//! let catalog = cudnnlog::Catalog::builtin().unwrap();
//! let oom = catalog.class("cuda.oom").unwrap();
//! assert_eq!(oom.family, "cuda");
//! assert!(catalog.patterns().iter().any(|p| p.class == "cuda.oom"));
//! ```

use crate::error::Error;
use serde::Deserialize;
use std::collections::BTreeMap;

mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_catalog.rs"));
}

/// The largest compiled size a pattern's regex may have (bytes).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The shortest anchor accepted: shorter ones would make every scan crawl.
const MIN_ANCHOR_LEN: usize = 4;
/// The largest catalog file accepted: user catalogs are untrusted input.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// The highest fallback level a pattern may have.
const MAX_FALLBACK: u8 = 3;

/// How serious a finding is.
///
/// ```
/// use cudnnlog::catalog::Severity;
/// let catalog = cudnnlog::Catalog::builtin()?;
/// assert_eq!(catalog.pattern("cuda-oom-pytorch-allocator").unwrap().severity, Severity::Error);
/// assert_eq!(catalog.pattern("cudnn-conv-algo-heuristics-fallback").unwrap().severity, Severity::Warning);
/// assert!(Severity::Warning < Severity::Error); // the worse sorts last
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The run went on: a performance or health warning.
    Warning,
    /// The run failed, or a step of it did.
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    ///
    /// ```
    /// use cudnnlog::catalog::Severity;
    /// assert_eq!(Severity::Error.as_str(), "error");
    /// assert_eq!(Severity::Warning.as_str(), "warning");
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// assert_eq!(catalog.pattern("cuda-oom-pytorch-allocator").unwrap().severity.as_str(), "error");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The part of an event a pattern's regex runs on.
///
/// ```
/// use cudnnlog::{catalog::Scope, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let pattern = scanner.catalog().pattern("python-assertion-error").unwrap();
/// // `\A` in its regex anchors at the traceback's exception line, not at the event's start.
/// assert_eq!((pattern.scope, pattern.regex.as_str().starts_with(r"\A")), (Scope::Exception, true));
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"Traceback (most recent call last):\n  File \"/home/user/train/model.py\", line 41, in __init__\n    assert cfg.hidden_size % cfg.num_heads == 0\nAssertionError: hidden size 4096 must be divisible by the number of heads 24\n", &mut sink)?;
/// assert_eq!(sink.into_report().findings[0].class, "python.assertion");
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The whole event: every line, joined with `\n`.
    #[default]
    Event,
    /// Only the final exception of a Python traceback: its exception line
    /// and the lines that continue its message. Events that are not
    /// tracebacks never match. `\A` in the regex anchors at the exception
    /// line, so `\A(?P<exception>KeyError)` is "the job died of a KeyError".
    Exception,
}

/// How settled a pattern is.
///
/// ```
/// use cudnnlog::{catalog::Stability, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// assert_eq!(scanner.catalog().pattern("cudnn-conv-algo-heuristics-fallback").unwrap().stability, Stability::Preview);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"W0312 09:41:27.350921   88213 conv_algorithm_picker.cc:582] None of the algorithms provided by cuDNN heuristics worked; trying fallback algorithms.\n", &mut sink)?;
/// assert!(sink.into_report().findings[0].preview);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stability {
    /// Proven on real logs; its findings are reported as they are.
    Stable,
    /// Written from the framework's message templates, not yet seen in a
    /// real log: its findings are reported with `"preview": true`, so a
    /// pipeline can tell them apart.
    Preview,
}

/// A failure class: the stable id reported in a finding's `class` field.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let oom = catalog.class("cuda.oom").unwrap();
/// assert_eq!((oom.family.as_str(), oom.title.as_str()), ("cuda", "GPU out of memory"));
/// assert!(catalog.class("cuda.illegal_address").unwrap().sticky && !oom.sticky); // it breaks the CUDA context
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// `cuda.oom`, `cudnn.plan_failed`, …
    pub id: String,
    /// `cudnn`, `cuda`, `distributed`, `framework` or `job`.
    pub family: String,
    /// Whether the class names what failed or only the status it returned.
    #[serde(default)]
    pub kind: ClassKind,
    /// A few words naming the failure (`GPU out of memory`): the `title` of
    /// the class's findings.
    pub title: String,
    /// What the log shows when this class is reported, in a few sentences
    /// (`docs/classes.md` and `cudnnlog explain` print it).
    pub summary: String,
    /// Status classes this symptom's own meaning includes: when one of
    /// them is carried by this symptom's message, it is not reported on
    /// its own (a cuDNN plan is rejected *because* it is not supported, so
    /// `cudnn.plan_failed` implies `cudnn.not_supported`).
    #[serde(default)]
    pub implies: Vec<String>,
    /// A hardware or infrastructure fault (a GPU Xid, a lost node): the GPU,
    /// communication and process errors of the same source are its fallout,
    /// even those printed before it (a node's failure is logged when the
    /// scheduler notices it, after the errors it caused).
    #[serde(default)]
    pub infrastructure: bool,
    /// An error that breaks the CUDA context: later CUDA, cuDNN, cuBLAS and
    /// NCCL errors of the same process are its fallout (an illegal address,
    /// a device-side assert, a launch failure, an Xid).
    #[serde(default)]
    pub sticky: bool,
    /// A failure between the ranks of a distributed job (NCCL, the process
    /// group, coordination): the report reads what the log says of every
    /// rank around it to name the culprit.
    #[serde(default)]
    pub distributed: bool,
    /// What a rank reports while it waits for its peers (a collective's
    /// timeout, a closed connection): another rank's failure before it,
    /// in any file of the same run, explains it.
    #[serde(default)]
    pub waits: bool,
    /// A failure to set up what later calls need (a library that did not
    /// load or start, a GPU the process cannot use): the errors of those
    /// calls in the same process are its fallout when their class
    /// `follows` `setup`. The value says whose calls: a class family
    /// (`"cudnn"`: a cuDNN version mismatch, a cuDNN that would not load or
    /// initialise) or `"gpu"` (every GPU class: no device, a driver too old).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// let setup = |class| catalog.class(class).unwrap().setup.clone();
    /// assert_eq!(setup("cudnn.version_mismatch").as_deref(), Some("cudnn"));
    /// assert_eq!(setup("cuda.oom"), None);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    #[serde(default)]
    pub setup: Option<String>,
    /// A fact whose value the finding's title shows: `signal_name` makes
    /// "process crashed with a fatal signal (SIGABRT)".
    #[serde(default)]
    pub title_fact: Option<String>,
    /// The failures this class's findings are fallout of, when one comes
    /// first in the same log: a broken CUDA context makes every later GPU
    /// call fail, a failed node takes its processes down.
    #[serde(default)]
    pub follows: Vec<Follows>,
    /// A failure of the GPU's own work (a CUDA, cuDNN or cuBLAS call): one
    /// that comes after training steps that worked points to memory, the
    /// input's shapes or a framework bug, not to the setup.
    #[serde(default)]
    pub gpu: bool,
    /// A status a GPU library returned (cuDNN, cuBLAS): what the library
    /// saw, which points to the library or its inputs more than to the
    /// caller's code, unless the log shows a bug in the code.
    #[serde(default)]
    pub library: bool,
}

/// A failure whose fallout a class is: a value of a class's `follows`.
///
/// ```
/// use cudnnlog::catalog::Follows;
/// let catalog = cudnnlog::Catalog::builtin()?;
/// // After an illegal address every later cuDNN call fails too.
/// assert!(catalog.class("cudnn.execution_failed").unwrap().follows.contains(&Follows::Sticky));
/// // Running out of GPU memory is not what a broken context makes.
/// assert!(!catalog.class("cuda.oom").unwrap().follows.contains(&Follows::Sticky));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Follows {
    /// An earlier error of a `sticky` class in the same process: the CUDA
    /// context is broken, and this class's calls fail with it.
    Sticky,
    /// An error of an `infrastructure` class in the same source, before or
    /// after: the hardware or the node failed under the process.
    Infrastructure,
    /// An earlier error of the same log that is not itself coordination
    /// fallout, when nothing else explains this one: a barrier timing out
    /// on one rank, the others then losing their connection to it.
    Coordination,
    /// An earlier error of the same process whose class failed to set up
    /// what this class's calls need (`setup` naming this class's family,
    /// or `"gpu"` for a GPU class): TensorFlow's "Failed to get convolution
    /// algorithm" after "Could not create cudnn handle", XLA's "DNN library
    /// initialization failed" after a cuDNN version mismatch.
    Setup,
}

/// What a class names: a failure the log shows, or a status code a failure
/// carries. On one line, a symptom outranks a status for `primary`.
///
/// ```
/// use cudnnlog::{catalog::ClassKind, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let kind = |class| scanner.catalog().class(class).unwrap().kind;
/// assert_eq!((kind("cudnn.not_initialized"), kind("cudnn.internal_error")), (ClassKind::Symptom, ClassKind::Status));
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"E1129 19:41:05.123456 4242 cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", &mut sink)?;
/// let report = sink.into_report(); // both on one line: the symptom is primary
/// let classes: Vec<_> = report.findings.iter().map(|f| f.class.as_str()).collect();
/// assert_eq!((report.primary.as_deref(), classes), (Some("cudnn.not_initialized"), vec!["cudnn.not_initialized", "cudnn.internal_error"]));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassKind {
    /// What went wrong: `cudnn.not_initialized`, `cuda.oom`, …
    #[default]
    Symptom,
    /// A status word a library returned: `cudnn.internal_error`, …
    Status,
}

/// A root cause: shared by patterns, with its remediations written once.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let cause = catalog.cause("fragmentation").unwrap();
/// assert_eq!(cause.title, "Free GPU memory is split into pieces too small to use");
/// assert!(!cause.remediations.is_empty());
/// assert!(catalog.pattern("cuda-oom-pytorch-allocator").unwrap().causes.iter().any(|c| c.id == cause.id));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cause {
    /// `memory_pressure`, `version_mismatch`, …
    pub id: String,
    /// The cause in one line (`Free GPU memory is split into pieces too
    /// small to use`).
    pub title: String,
    /// What the cause is and how it produces the errors, in a few sentences.
    pub what: String,
    /// Concrete commands or settings that address the cause, one per entry;
    /// never empty.
    pub remediations: Vec<String>,
    /// The class families whose findings these remediations fit (they
    /// speak of GPU libraries, say); empty: every family.
    #[serde(default)]
    pub remediations_for: Vec<String>,
}

/// A pattern's documentation, in the headings every entry shares.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Doc {
    /// What the pattern matches.
    pub what: String,
    /// Why it happens.
    pub why: String,
}

/// A likely root cause of a pattern, with its prior weight.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let causes = &catalog.pattern("cuda-oom-pytorch-allocator").unwrap().causes;
/// assert_eq!((causes[0].id.as_str(), causes[0].prior), ("memory_pressure", 0.5));
/// assert!(causes.iter().all(|c| catalog.cause(&c.id).is_some() && c.prior > 0.0 && c.prior <= 1.0));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CauseRef {
    /// The id of a declared cause (`causes.toml`).
    pub id: String,
    /// The cause's weight before any evidence, in (0, 1]: the diagnoser
    /// starts from it, scales it by what the log shows and normalises the
    /// weights into confidences.
    pub prior: f64,
}

/// A log snippet that must trigger the pattern, with the facts it yields.
///
/// ```
/// use cudnnlog::{report::{Fact, FindingsSink}, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let example = &scanner.catalog().pattern("python-assertion-error").unwrap().examples[0];
/// assert_eq!(example.facts["exception"].as_str(), Some("AssertionError"));
/// let mut sink = FindingsSink::new(scanner.catalog()); // scanned with the whole catalog
/// scanner.scan_slice(example.log.as_bytes(), &mut sink)?;
/// let finding = &sink.into_report().findings[0];
/// assert_eq!((finding.pattern.as_str(), &finding.facts["exception"]), ("python-assertion-error", &Fact::Text("AssertionError".into())));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// The log text; scanned with the whole catalog, it must be reported as
    /// this pattern.
    pub log: String,
    /// Facts the match must yield, by capture name: a non-negative integer
    /// or a string each. Facts not listed are not checked; empty: none are.
    #[serde(default)]
    pub facts: BTreeMap<String, toml::Value>,
}

/// A log snippet that must not trigger the pattern.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let catalog = Catalog::builtin()?;
/// let near_miss = &catalog.pattern("python-assertion-error").unwrap().counterexamples[0];
/// assert_eq!(near_miss.why.as_deref(), Some("owned by cuda.no_device"));
/// let scanner = ScannerBuilder::new().build(catalog.only(&["python-assertion-error"])); // this pattern alone
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(near_miss.log.as_bytes(), &mut sink)?;
/// assert!(sink.into_report().findings.is_empty());
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counterexample {
    /// The log text; scanned with this pattern alone, it must not match.
    pub log: String,
    /// Why it is a near miss (`memory statistics of a healthy run`), for the
    /// catalog's readers; `None` when the file gives no reason.
    #[serde(default)]
    pub why: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternFile {
    id: String,
    class: String,
    severity: Severity,
    /// `status` is the key's name before 0.2.
    #[serde(alias = "status")]
    stability: Stability,
    since: String,
    summary: String,
    anchors: Vec<String>,
    regex: String,
    #[serde(default)]
    reject: Vec<String>,
    #[serde(default)]
    signature: Vec<String>,
    #[serde(default)]
    remediations: Vec<String>,
    #[serde(default)]
    fallback: u8,
    #[serde(default)]
    scope: Scope,
    doc: Doc,
    #[serde(default)]
    causes: Vec<CauseRef>,
    #[serde(default)]
    examples: Vec<Example>,
    #[serde(default)]
    counterexamples: Vec<Counterexample>,
    #[serde(default)]
    termination: bool,
    #[serde(default)]
    wraps: Vec<String>,
    #[serde(default)]
    sources: Vec<String>,
    #[serde(default)]
    facts: Vec<String>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    table: Option<String>,
    #[serde(default)]
    decodes: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FragmentsFile {
    fragments: BTreeMap<String, String>,
}

/// One catalog entry: anchors to find candidates, a regex to confirm them.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let oom = catalog.pattern("cuda-oom-pytorch-allocator").unwrap();
/// assert_eq!((oom.class.as_str(), oom.file.as_str()), ("cuda.oom", "patterns/cuda/cuda-oom-pytorch-allocator.toml"));
/// assert_eq!(oom.anchors, ["CUDA out of memory"]);
/// let line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.";
/// assert_eq!(oom.regex.capture(line, "exception"), Some("torch.OutOfMemoryError"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Pattern {
    /// Stable kebab-case id naming the symptom, equal to the file stem.
    pub id: String,
    /// The class id reported for a match.
    pub class: String,
    /// What the pattern's text usually means; a finding is raised to an
    /// error when its log shows the text was fatal.
    pub severity: Severity,
    /// Stable, or a preview whose findings say so.
    pub stability: Stability,
    /// The version that introduced the pattern.
    pub since: String,
    /// What was detected, in one line.
    pub summary: String,
    /// Literal, case-sensitive strings; one must occur for the regex to run.
    pub anchors: Vec<String>,
    /// Confirms a candidate event (the *core*: the words that make the
    /// class unambiguous); its named groups become facts.
    pub regex: LazyRegex,
    /// Optional fact regexes, each run on the same text once the core
    /// matched: a variant that drops or changes one of these parts still
    /// reports the class, without that fact.
    pub facts: Vec<LazyRegex>,
    /// How sure a match is, in (0, 1]: below 1 for patterns that recognise
    /// a message by its tail when its head was cut off.
    pub confidence: f64,
    /// A status table (`statuses.toml`) that names the class of the status
    /// the regex captures (`status`, `code` or `status_text`); the pattern's
    /// `class` is then the table's generic class.
    pub table: Option<String>,
    /// A status table whose numbering the core regex's `code` uses, for a
    /// pattern of one class that reads a status printed as a number
    /// (`Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)`): the class
    /// stays the pattern's, and the member's name becomes the `status` fact
    /// where the log did not spell it, so that the report names the status
    /// instead of asking the reader to look the number up.
    pub decodes: Option<String>,
    /// Literal strings that veto a match when the event contains one.
    pub reject: Vec<String>,
    /// Capture names whose values split findings of the class.
    pub signature: Vec<String>,
    /// Pattern-specific remediations, shown before the causes' ones.
    pub remediations: Vec<String>,
    /// 0 for an ordinary pattern. A fallback pattern (1 to 3) is reported
    /// for an event only when no pattern of a lower level matched it: the
    /// generic `cuda.error` and `cudnn.error` (1) stand back for any
    /// specific class, `python.runtime_error` (2) for those too, and
    /// `python.exception` (3) for all of them.
    pub fallback: u8,
    /// The part of an event the regex runs on.
    pub scope: Scope,
    /// What the pattern matches and why it happens.
    pub doc: Doc,
    /// Likely root causes, most likely first.
    pub causes: Vec<CauseRef>,
    /// Log snippets that must be reported as this pattern; at least one.
    pub examples: Vec<Example>,
    /// Near misses that must not match this pattern.
    pub counterexamples: Vec<Counterexample>,
    /// The pattern reports how a process ended (an exit status, a signal,
    /// a launcher's summary), not why: such a finding is fallout of the
    /// nearest earlier failure, and a warning a few lines before it of the
    /// same writer was fatal.
    pub termination: bool,
    /// The classes whose failures this pattern's message reports again as
    /// its own reason (JAX's `Unable to initialize backend 'cuda': <the
    /// library's error>`): the nearest finding of one of them in the same
    /// source, on the same line, before it or on the few lines after it, is
    /// the cause, and this finding its fallout.
    pub wraps: Vec<String>,
    /// Where the message templates come from: `repo path (versions)` entries
    /// naming the framework source that prints them.
    pub sources: Vec<String>,
    /// Where the pattern came from (`cuda/cuda-oom-pytorch.toml`, or a path).
    pub file: String,
}

/// An environment probe: anchors and a regex whose named groups are
/// environment fields ([`crate::fields::FIELDS`]).
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let probe = scanner.catalog().probes().iter().find(|p| p.id == "collect-env-pytorch-version").unwrap();
/// assert_eq!((probe.anchors[0].as_str(), probe.set["framework"].as_str()), ("PyTorch version: ", "pytorch"));
/// let mut sink = FindingsSink::new(scanner.catalog());
/// scanner.scan_slice(b"PyTorch version: 2.11.0+cu130\n", &mut sink)?;
/// let env = sink.into_report().environment;
/// assert_eq!((&env["framework"], &env["framework_version"], &env["cuda"]), (&"pytorch".into(), &"2.11.0".into(), &"13.0".into()));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Probe {
    /// Stable kebab-case id.
    pub id: String,
    /// What the probe reads, for the catalog's readers.
    pub what: String,
    /// Literal, case-sensitive strings; one must occur for the regex to run.
    pub anchors: Vec<String>,
    /// Run over the event's text; every match yields its named groups.
    pub regex: LazyRegex,
    /// Fields set to constants whenever the regex matches
    /// (`framework = "pytorch"` for a `PyTorch version:` line).
    pub set: BTreeMap<String, String>,
    /// Log snippets with the fields they must yield.
    pub examples: Vec<ProbeExample>,
    /// For a build fingerprint (`patterns/fingerprints.toml`), how its
    /// match maps to framework releases: the probe then sets
    /// `framework_build` from it.
    pub build: Option<crate::catalog::fingerprints::Build>,
}

/// A log snippet and the environment fields a probe must read from it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeExample {
    /// The log text the probe reads.
    pub log: String,
    /// Field → normalised value.
    pub expect: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    id: String,
    what: String,
    anchors: Vec<String>,
    regex: String,
    #[serde(default)]
    set: BTreeMap<String, String>,
    examples: Vec<ProbeExample>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbesFile {
    probe: Vec<ProbeFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassesFile {
    class: Vec<Class>,
    /// Warning classes, most important first: which warning is `primary`
    /// in a log with no error.
    #[serde(default)]
    warning_order: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CausesFile {
    cause: Vec<Cause>,
}

/// A validated set of classes, causes and patterns.
///
/// ```
/// use cudnnlog::Catalog;
/// let catalog = Catalog::builtin()?;
/// let pattern = catalog.pattern("cuda-oom-pytorch-allocator").unwrap();
/// assert_eq!(catalog.class(&pattern.class).unwrap().title, "GPU out of memory");
/// assert_eq!(catalog.only(&["cuda-oom-pytorch-allocator"]).patterns().len(), 1); // a scanner for OOMs only
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Catalog {
    classes: Vec<Class>,
    statuses: Vec<crate::catalog::statuses::Enum>,
    evidence: Vec<crate::catalog::culprit::EvidenceRule>,
    knowledge: Vec<crate::catalog::knowledge::KnowledgeRule>,
    frameworks: Vec<crate::catalog::knowledge::Framework>,
    signals: crate::catalog::knowledge::Signals,
    warning_order: Vec<String>,
    causes: Vec<Cause>,
    patterns: Vec<Pattern>,
    probes: Vec<Probe>,
    releases: Vec<crate::catalog::fingerprints::Release>,
    compat: crate::catalog::compat::Compat,
    actions: crate::catalog::actions::Actions,
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".toml").unwrap_or(name)
}

fn bad(file: &str, field: &str, message: impl Into<String>) -> Error {
    Error::Catalog {
        file: file.to_string(),
        field: field.to_string(),
        message: message.into(),
    }
}

/// The field a TOML decoding error is about: named in the message for
/// missing and unknown fields, otherwise the key on the line the error
/// points at.
fn toml_field(text: &str, err: &toml::de::Error) -> String {
    let msg = err.message();
    if msg.starts_with("missing field") || msg.starts_with("unknown field") {
        if let Some(name) = msg.split('`').nth(1) {
            return name.to_string();
        }
    }
    if let Some(span) = err.span() {
        let at = span.start.min(text.len());
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let line = &text[line_start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        if let Some((key, _)) = line.split_once('=') {
            let key = key.trim().trim_matches('"');
            if !key.is_empty() && !key.starts_with('[') {
                return key.to_string();
            }
        }
    }
    String::from("(file)")
}

fn toml_error(file: &str, text: &str, err: toml::de::Error) -> Error {
    let mut message = err.message().to_string();
    if let Some(span) = err.span() {
        message.push_str(&format!(" (at byte {})", span.start));
    }
    bad(file, &toml_field(text, &err), message)
}

pub(crate) mod actions;
mod builder;
pub(crate) mod compat;
pub(crate) mod culprit;
pub(crate) mod fingerprints;
pub(crate) mod fragments;
pub mod ids;
pub(crate) mod knowledge;
mod lazy;
mod load;
mod query;
pub(crate) mod remediation;
pub(crate) mod statuses;
mod validate;

pub use builder::CatalogBuilder;
pub use lazy::LazyRegex;

/// The regex group that, when present, marks where a finding is (not a fact).
pub(crate) const AT_GROUP: &str = "at";

// What a catalog holds beyond its patterns, and its self-check.
pub use crate::catalog::actions::{Action, ActionRule, Actions};
pub use crate::catalog::compat::{Arch, Compat, DriverReq, TfBuild, TorchBuild};
pub use crate::catalog::culprit::{EvidenceKind, EvidenceRule};
pub use crate::catalog::fingerprints::{Build, Release};
pub use crate::catalog::knowledge::{Framework, KnowledgeRule, Read, Signal, Signals};
pub use crate::catalog::statuses::{Enum, Member};
pub use crate::selftest::{check_catalog, check_patterns, CheckFailure};
pub(crate) use validate::anchor_table;
#[cfg(test)]
mod tests;
