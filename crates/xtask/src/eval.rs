//! The wild-corpus scorer: how right cudnnlog is on real logs.
//!
//! `fixtures/wild/cases/NNN-slug/` holds a real log excerpt copied from a
//! public issue thread (`log.txt`) and its hand-written label
//! (`label.json`: the classes the excerpt shows, the primary one, the root
//! cause where the thread confirms it, classes a tool may also report).
//! [`score`] scans every log with the built-in catalog, exactly as
//! `cudnnlog scan` does, and compares the report with the label:
//!
//! * **classes** — a reported class is a true positive when the label lists
//!   it, neutral when the label allows it (`allowed_extra`), a false
//!   positive otherwise; a labelled class not reported is a false negative;
//! * **primary** — the report's `primary` equals the label's (both null
//!   for a clean log);
//! * **cause@1 / cause@2** — for labels with a confirmed root cause, the
//!   cause is first (or in the first two) of the primary finding's causes;
//! * **action** — for labels whose thread confirms a retry or a stop
//!   (`action`), the report's `action` is the same;
//! * **clean** — a clean or near-miss log has no `error` finding.
//!
//! Figures are given overall, per family of the labelled primary class and
//! per log context: *launcher/serving* logs (schedulers, launchers, serving
//! stacks, notebooks, one-line pastes — told from the corpus index's
//! "framework / launcher" column) against plain *framework* logs.

use anyhow::{bail, Context as _, Result};
use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, ScannerBuilder};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A case's label, as `label.json` writes it.
#[derive(Clone, Debug, Deserialize)]
pub struct Label {
    /// The public thread the excerpt comes from.
    pub source: String,
    /// `pytorch`, `tensorflow`, … as the corpus README lists them.
    pub framework: String,
    /// Every class the excerpt shows.
    pub classes: Vec<String>,
    /// The class that ended the run or matters most; null for a clean log.
    pub primary: Option<String>,
    /// The confirmed root cause, if the thread confirms one.
    #[serde(default)]
    pub root_cause: Option<String>,
    /// Classes a tool may report without being wrong.
    #[serde(default)]
    pub allowed_extra: Vec<String>,
    /// `retry` or `stop`, when the thread confirms which.
    #[serde(default)]
    pub action: Option<String>,
}

/// Where a log comes from, as far as reading it is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogContext {
    /// A script's own output: a traceback, a framework's log lines.
    Framework,
    /// A launcher, scheduler, container, serving stack, notebook, or a
    /// pasted last line.
    LauncherServing,
}

impl LogContext {
    fn name(self) -> &'static str {
        match self {
            LogContext::Framework => "framework",
            LogContext::LauncherServing => "launcher/serving",
        }
    }
}

/// Words of the index's "framework / launcher" column that mark a log
/// written through a launcher, scheduler, container or serving stack, or
/// pasted as its last lines only.
const LAUNCHER_WORDS: &[&str] = &[
    "vllm",
    "sglang",
    "text generation inference",
    "tgi",
    "triton",
    "dynamo",
    "aphrodite",
    "deepstream",
    "tensorrt",
    "llama.cpp",
    "llamacpp",
    "comfyui",
    "webui",
    "forge",
    "fooocus",
    "gradio",
    "slurm",
    "srun",
    "salloc",
    "submitit",
    "ray",
    "horovod",
    "mpirun",
    "openmpi",
    "deepspeed",
    "torchrun",
    "elastic",
    "accelerate",
    "kubernetes",
    "k8s",
    "docker",
    "compose",
    "ngc",
    "jupyter",
    "ipython",
    "repl",
    "colab",
    "yarn",
    "tony",
    "sagemaker",
    "megatron",
    "one line",
    "one quoted line",
    "one e line",
    "last lines",
    "-line tail",
    "server",
];

/// Where the corpus and cudnnlog name one failure differently: the
/// corpus has no `torch.device_mismatch` (it labels tensors on different
/// devices `python.runtime_error`) and an extra id for an impossible launch
/// configuration, which cudnnlog reports as `cuda.launch_failure`. Both
/// sides are read through this table before they are compared.
const SAME_CLASS: &[(&str, &str)] = &[
    ("torch.device_mismatch", "python.runtime_error"),
    ("other.cuda_invalid_configuration", "cuda.launch_failure"),
];

/// A class id as the comparison sees it ([`SAME_CLASS`]).
pub fn canonical(class: &str) -> &str {
    SAME_CLASS
        .iter()
        .find(|(from, _)| *from == class)
        .map_or(class, |(_, to)| to)
}

/// One labelled log.
#[derive(Clone, Debug)]
pub struct Case {
    /// The case directory's name (`022-vllm-oom-hard-wrapped`).
    pub name: String,
    /// Its `log.txt`.
    pub log: PathBuf,
    /// Its `label.json`.
    pub label: Label,
    /// Framework or launcher/serving.
    pub context: LogContext,
}

/// Loads every case under `dir` (the corpus root holding `README.md` and
/// `cases/`), in name order.
pub fn load(dir: &Path) -> Result<Vec<Case>> {
    let readme = std::fs::read_to_string(dir.join("README.md"))
        .with_context(|| format!("reading {}", dir.join("README.md").display()))?;
    let contexts = index_contexts(&readme);
    let cases_dir = dir.join("cases");
    let mut names: Vec<String> = std::fs::read_dir(&cases_dir)
        .with_context(|| format!("reading {}", cases_dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut cases = Vec::with_capacity(names.len());
    for name in names {
        let case_dir = cases_dir.join(&name);
        let label_path = case_dir.join("label.json");
        let text = std::fs::read_to_string(&label_path)
            .with_context(|| format!("reading {}", label_path.display()))?;
        let label: Label = serde_json::from_str(&text)
            .with_context(|| format!("parsing {}", label_path.display()))?;
        if let Some(p) = &label.primary {
            if !label.classes.contains(p) {
                bail!(
                    "{}: primary {p} is not one of its classes",
                    label_path.display()
                );
            }
        }
        let Some(&context) = contexts.get(&name) else {
            bail!("case {name} is not in the corpus index (README.md)");
        };
        cases.push(Case {
            log: case_dir.join("log.txt"),
            name,
            label,
            context,
        });
    }
    Ok(cases)
}

/// Each case's context, from the index table of the corpus README:
/// `| [NNN-slug](cases/NNN-slug/) | classes | primary | cause | framework / launcher | source |`.
fn index_contexts(readme: &str) -> BTreeMap<String, LogContext> {
    let mut out = BTreeMap::new();
    for line in readme.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        if cols.len() < 7 || !cols[1].starts_with('[') {
            continue;
        }
        let Some(name) = cols[1].strip_prefix('[').and_then(|s| s.split(']').next()) else {
            continue;
        };
        let how = cols[5].to_lowercase();
        let launcher = LAUNCHER_WORDS.iter().any(|w| {
            // Whole words for the short ones (`ray` is not in `array`).
            how.match_indices(w).any(|(at, _)| {
                let before = how[..at].chars().next_back();
                let after = how[at + w.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
        });
        let context = if launcher {
            LogContext::LauncherServing
        } else {
            LogContext::Framework
        };
        out.insert(name.to_string(), context);
    }
    out
}

/// What the tool said about one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case directory's name.
    pub name: String,
    /// Framework or launcher/serving.
    pub context: LogContext,
    /// The labelled primary class's family (`clean` for a clean log).
    pub family: String,
    /// Labelled classes the report has.
    pub found: Vec<String>,
    /// Labelled classes the report lacks.
    pub missed: Vec<String>,
    /// Reported classes the label neither lists nor allows.
    pub extra: Vec<String>,
    /// The label's primary class.
    pub want_primary: Option<String>,
    /// The report's primary class.
    pub got_primary: Option<String>,
    /// The confirmed root cause, when the label has one.
    pub root_cause: Option<String>,
    /// The primary finding's causes, most likely first.
    pub causes: Vec<String>,
    /// For a clean log: the classes of its error findings.
    pub clean_errors: Vec<String>,
    /// The label's action, when the thread confirms one.
    pub want_action: Option<String>,
    /// The report's action.
    pub got_action: Option<String>,
}

impl CaseResult {
    /// Whether the case is scored right on every count.
    pub fn perfect(&self) -> bool {
        self.missed.is_empty()
            && self.extra.is_empty()
            && self.want_primary == self.got_primary
            && self.clean_errors.is_empty()
            && self
                .want_action
                .as_ref()
                .is_none_or(|a| self.got_action.as_ref() == Some(a))
            && self
                .root_cause
                .as_ref()
                .is_none_or(|c| self.causes.first() == Some(c))
    }
}

/// The family a class belongs to, as the corpus README groups them.
pub fn family(class: Option<&str>) -> &'static str {
    let Some(class) = class else {
        return "clean";
    };
    let (head, _) = class.split_once('.').unwrap_or((class, ""));
    match head {
        "cudnn" => "cuDNN",
        _ if class == cudnnlog::ids::class::CUDA_OOM => "GPU memory",
        "cuda" | "cublas" | "other" => "CUDA",
        "nccl" | "dist" => "distributed",
        "container" | "sched" => "container/scheduler",
        "host" | "proc" => "host/process",
        "train" | "torch" => "training/determinism",
        "python" => "python/job",
        _ => "other",
    }
}

/// Scans one case's log with `scanner` and compares the report with its label.
pub fn run_case(scanner: &cudnnlog::Scanner, case: &Case) -> Result<(CaseResult, Report)> {
    let bytes =
        std::fs::read(&case.log).with_context(|| format!("reading {}", case.log.display()))?;
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner
        .scan_slice(&bytes, &mut sink)
        .with_context(|| format!("scanning {}", case.log.display()))?;
    let report = sink.into_report();
    Ok((judge(case, &report), report))
}

/// Compares a report with a case's label.
pub fn judge(case: &Case, report: &Report) -> CaseResult {
    let label = &case.label;
    let reported: BTreeSet<&str> = report
        .findings
        .iter()
        .map(|f| canonical(&f.class))
        .collect();
    let want: BTreeSet<&str> = label.classes.iter().map(|c| canonical(c)).collect();
    let allowed: BTreeSet<&str> = label.allowed_extra.iter().map(|c| canonical(c)).collect();
    let same = |c: &Option<String>| c.as_deref().map(|c| canonical(c).to_string());
    let owned = |s: BTreeSet<&str>| s.into_iter().map(str::to_string).collect::<Vec<_>>();
    let primary_finding = report
        .primary
        .as_deref()
        .and_then(|p| report.findings.iter().find(|f| f.class == p));
    let clean_errors = if label.primary.is_none() {
        report
            .findings
            .iter()
            .filter(|f| f.severity == cudnnlog::catalog::Severity::Error)
            .map(|f| f.class.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    CaseResult {
        name: case.name.clone(),
        context: case.context,
        family: family(label.primary.as_deref()).to_string(),
        found: owned(want.intersection(&reported).copied().collect()),
        missed: owned(want.difference(&reported).copied().collect()),
        extra: owned(
            reported
                .difference(&want)
                .copied()
                .filter(|c| !allowed.contains(c))
                .collect(),
        ),
        want_primary: same(&label.primary),
        got_primary: same(&report.primary),
        root_cause: label.root_cause.clone(),
        causes: primary_finding
            .map(|f| f.causes.iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default(),
        clean_errors,
        want_action: label.action.clone(),
        got_action: report.action.map(|a| a.as_str().to_string()),
    }
}

/// Counts behind a line of figures.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Tally {
    /// Cases.
    pub cases: u32,
    /// Class true positives, false positives, false negatives.
    pub tp: u32,
    pub fp: u32,
    pub fn_: u32,
    /// Cases whose primary is right.
    pub primary_ok: u32,
    /// Cases with a confirmed root cause, and how many have it first / in
    /// the first two.
    pub caused: u32,
    pub cause1: u32,
    pub cause2: u32,
    /// Clean logs, and how many have no error finding.
    pub clean: u32,
    pub clean_ok: u32,
    /// Cases whose thread confirms an action, and how many get it.
    pub acted: u32,
    pub action_ok: u32,
}

impl Tally {
    fn add(&mut self, r: &CaseResult) {
        self.cases += 1;
        self.tp += r.found.len() as u32;
        self.fp += r.extra.len() as u32;
        self.fn_ += r.missed.len() as u32;
        self.primary_ok += u32::from(r.want_primary == r.got_primary);
        if let Some(c) = &r.root_cause {
            self.caused += 1;
            self.cause1 += u32::from(r.causes.first() == Some(c));
            self.cause2 += u32::from(r.causes.iter().take(2).any(|x| x == c));
        }
        if let Some(a) = &r.want_action {
            self.acted += 1;
            self.action_ok += u32::from(r.got_action.as_ref() == Some(a));
        }
        if r.want_primary.is_none() {
            self.clean += 1;
            self.clean_ok += u32::from(r.clean_errors.is_empty());
        }
    }

    fn ratio(n: u32, d: u32) -> Option<f64> {
        (d > 0).then(|| f64::from(n) / f64::from(d))
    }

    /// Class precision (1 when nothing was reported).
    pub fn precision(&self) -> f64 {
        Tally::ratio(self.tp, self.tp + self.fp).unwrap_or(1.0)
    }

    /// Class recall (1 when nothing was labelled).
    pub fn recall(&self) -> f64 {
        Tally::ratio(self.tp, self.tp + self.fn_).unwrap_or(1.0)
    }

    /// The harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    /// Share of cases whose primary is right.
    pub fn primary(&self) -> f64 {
        Tally::ratio(self.primary_ok, self.cases).unwrap_or(1.0)
    }

    /// Share of confirmed causes ranked first, if any case has one.
    pub fn cause_at1(&self) -> Option<f64> {
        Tally::ratio(self.cause1, self.caused)
    }

    /// Share of confirmed causes in the first two, if any case has one.
    pub fn cause_at2(&self) -> Option<f64> {
        Tally::ratio(self.cause2, self.caused)
    }

    /// Share of confirmed actions the report gives, if any case has one.
    pub fn action(&self) -> Option<f64> {
        Tally::ratio(self.action_ok, self.acted)
    }
}

/// Per-class counts.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ClassTally {
    pub tp: u32,
    pub fp: u32,
    pub fn_: u32,
}

/// The figures for a whole corpus.
#[derive(Clone, Debug, Serialize)]
pub struct Scores {
    pub overall: Tally,
    pub by_context: BTreeMap<&'static str, Tally>,
    pub by_family: BTreeMap<String, Tally>,
    pub by_class: BTreeMap<String, ClassTally>,
    /// The class ids the built-in catalog has.
    pub catalog_classes: BTreeSet<String>,
    pub cases: Vec<CaseResult>,
}

impl Scores {
    /// Class recall counting only labelled classes the catalog has: what
    /// the engine misses, apart from what the taxonomy lacks.
    pub fn known_recall(&self) -> f64 {
        let (tp, fn_) = self
            .by_class
            .iter()
            .filter(|(c, _)| self.catalog_classes.contains(*c))
            .fold((0, 0), |(tp, fn_), (_, t)| (tp + t.tp, fn_ + t.fn_));
        Tally::ratio(tp, tp + fn_).unwrap_or(1.0)
    }

    /// Macro-averaged F1 over the classes the labels list.
    pub fn macro_f1(&self) -> f64 {
        let f1s: Vec<f64> = self
            .by_class
            .values()
            .filter(|c| c.tp + c.fn_ > 0)
            .map(|c| {
                let d = 2 * c.tp + c.fp + c.fn_;
                if d == 0 {
                    1.0
                } else {
                    f64::from(2 * c.tp) / f64::from(d)
                }
            })
            .collect();
        if f1s.is_empty() {
            1.0
        } else {
            f1s.iter().sum::<f64>() / f1s.len() as f64
        }
    }
}

/// Scans every case with the built-in catalog and scores the reports.
pub fn score(cases: &[Case]) -> Result<Scores> {
    let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    let mut results = Vec::with_capacity(cases.len());
    for case in cases {
        results.push(run_case(&scanner, case)?.0);
    }
    let classes = scanner
        .catalog()
        .classes()
        .iter()
        .map(|c| canonical(&c.id).to_string())
        .collect();
    Ok(tally(results, classes))
}

/// Adds up case results; `catalog_classes` are the ids the catalog has.
pub fn tally(results: Vec<CaseResult>, catalog_classes: BTreeSet<String>) -> Scores {
    let mut overall = Tally::default();
    let mut by_context: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut by_family: BTreeMap<String, Tally> = BTreeMap::new();
    let mut by_class: BTreeMap<String, ClassTally> = BTreeMap::new();
    for r in &results {
        overall.add(r);
        by_context.entry(r.context.name()).or_default().add(r);
        by_family.entry(r.family.clone()).or_default().add(r);
        for c in &r.found {
            by_class.entry(c.clone()).or_default().tp += 1;
        }
        for c in &r.extra {
            by_class.entry(c.clone()).or_default().fp += 1;
        }
        for c in &r.missed {
            by_class.entry(c.clone()).or_default().fn_ += 1;
        }
    }
    Scores {
        overall,
        by_context,
        by_family,
        by_class,
        catalog_classes,
        cases: results,
    }
}

pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{:.3}", x))
}

/// The figures as a plain-text table (what `cargo xtask eval` prints).
pub fn render(scores: &Scores, verbose: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let row = |out: &mut String, name: &str, t: &Tally| {
        let _ = writeln!(
            out,
            "{name:<22} {:>5} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7}",
            t.cases,
            pct(Some(t.precision())),
            pct(Some(t.recall())),
            pct(Some(t.f1())),
            pct(Some(t.primary())),
            pct(t.cause_at1()),
            pct(t.cause_at2()),
            pct(t.action()),
            if t.clean > 0 {
                format!("{}/{}", t.clean_ok, t.clean)
            } else {
                "-".to_string()
            },
        );
    };
    let _ = writeln!(
        out,
        "{:<22} {:>5} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>7}",
        "", "cases", "prec", "recall", "F1", "primary", "cause@1", "cause@2", "action", "clean"
    );
    row(&mut out, "overall", &scores.overall);
    out.push('\n');
    for (name, t) in &scores.by_context {
        row(&mut out, name, t);
    }
    out.push('\n');
    for (name, t) in &scores.by_family {
        row(&mut out, name, t);
    }
    let _ = writeln!(
        out,
        "\nclass macro-F1 {:.3} over {} labelled classes; recall on the classes the catalog has {:.3}; confirmed causes: {}; confirmed actions: {}",
        scores.macro_f1(),
        scores.by_class.values().filter(|c| c.tp + c.fn_ > 0).count(),
        scores.known_recall(),
        scores.overall.caused,
        scores.overall.acted
    );
    if verbose {
        let _ = writeln!(out, "\n{:<34} {:>4} {:>4} {:>4}", "class", "tp", "fp", "fn");
        for (name, c) in &scores.by_class {
            let _ = writeln!(out, "{name:<34} {:>4} {:>4} {:>4}", c.tp, c.fp, c.fn_);
        }
        out.push('\n');
        for r in scores.cases.iter().filter(|r| !r.perfect()) {
            let _ = write!(out, "{}", r.name);
            if !r.missed.is_empty() {
                let _ = write!(out, "  missed {}", r.missed.join(","));
            }
            if !r.extra.is_empty() {
                let _ = write!(out, "  extra {}", r.extra.join(","));
            }
            if r.want_primary != r.got_primary {
                let _ = write!(
                    out,
                    "  primary {} (want {})",
                    r.got_primary.as_deref().unwrap_or("null"),
                    r.want_primary.as_deref().unwrap_or("null")
                );
            }
            if let Some(c) = &r.root_cause {
                if r.causes.first() != Some(c) {
                    let _ = write!(
                        out,
                        "  cause {} (want {c})",
                        r.causes.first().map_or("none", String::as_str)
                    );
                }
            }
            if !r.clean_errors.is_empty() {
                let _ = write!(out, "  clean log has errors {}", r.clean_errors.join(","));
            }
            if let Some(a) = r.want_action.as_ref().filter(|a| r.got_action.as_ref() != Some(*a)) {
                let got = r.got_action.as_deref().unwrap_or("none");
                let _ = write!(out, "  action {got} (want {a})");
            }
            out.push('\n');
        }
    }
    out
}
