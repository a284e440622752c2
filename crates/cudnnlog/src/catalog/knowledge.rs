//! Diagnosis knowledge kept as data: `patterns/diagnosis.toml`.
//!
//! Each [`KnowledgeRule`] reads one thing about a finding — one of its
//! facts, its message, or a field of the environment — and, when a regex
//! matches it, scales causes by factors and says why. Known framework
//! issues (PyTorch 2.3's harmless plan-failed warnings), what a path or a
//! module name tells (a cache directory, a compiler, a module removed in a
//! newer release) and what a message's own wording implies live here, not
//! in code, and every class and cause id they name is checked when the
//! catalog loads.
//!
//! ```
//! let catalog = cudnnlog::Catalog::builtin().unwrap();
//! let rule = catalog
//!     .knowledge()
//!     .iter()
//!     .find(|r| r.id == "pytorch-2-3-plan-failed-warning")
//!     .unwrap();
//! assert_eq!(rule.factors, [("framework_bug".to_string(), 8.0)]);
//! assert!(rule.applies_to("cudnn.plan_failed"));
//! ```

use serde::Deserialize;

/// What a rule reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// A fact of the finding (`fact:path`).
    Fact(String),
    /// The finding's message.
    Message,
    /// An environment field of the finding's source (`env:framework_version`).
    Env(String),
    /// Another finding of the same source, as `CLASS PATTERN-ID`
    /// (`host.oom_killed host-oom-killed-kernel`): evidence that co-occurs.
    Finding,
}

impl Read {
    fn parse(s: &str) -> Option<Read> {
        match s.split_once(':') {
            Some(("fact", f)) if !f.is_empty() => Some(Read::Fact(f.to_string())),
            Some(("env", f)) if !f.is_empty() => Some(Read::Env(f.to_string())),
            None if s == "message" => Some(Read::Message),
            None if s == "finding" => Some(Read::Finding),
            _ => None,
        }
    }
}

/// One rule of `diagnosis.toml`.
#[derive(Clone, Debug)]
pub struct KnowledgeRule {
    /// Stable id.
    pub id: String,
    /// What the rule knows, in a sentence (documentation).
    pub what: String,
    /// The classes it applies to: ids, or `family.*`.
    pub classes: Vec<String>,
    /// What it reads.
    pub read: Read,
    /// Matched against what it reads.
    pub regex: crate::catalog::LazyRegex,
    /// Only when the environment's `framework` is this.
    pub framework: Option<String>,
    /// The causes it scales, with their factors: above 1 for evidence for
    /// the cause, below 1 against. Ordered by cause id.
    pub factors: Vec<(String, f64)>,
    /// Bring a cause it supports in when the pattern does not list it.
    pub add: bool,
    /// The evidence sentence; `{match}` is the matched text, `{value}` what
    /// was read, `{line}` the line it is on.
    pub evidence: String,
}

impl KnowledgeRule {
    /// Whether the rule concerns findings of `class`.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let rule = catalog.knowledge().iter().find(|r| r.id == "capability-below-what-a-feature-needs").unwrap();
    /// assert!(rule.applies_to("python.missing_module") && rule.applies_to("cuda.error")); // `python.*`
    /// assert!(!rule.applies_to("python") && !rule.applies_to("cuda.oom"));
    /// ```
    pub fn applies_to(&self, class: &str) -> bool {
        self.classes.iter().any(|c| match c.strip_suffix(".*") {
            Some(family) => class
                .strip_prefix(family)
                .is_some_and(|rest| rest.starts_with('.')),
            None => c == class,
        })
    }
}

/// A framework, and the words that show a remediation is about it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framework {
    /// The environment's `framework` value: `pytorch`, `tensorflow`, `jax`.
    pub id: String,
    /// Other `framework` values meaning the same (`keras`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Literals that show a text is about this framework.
    pub markers: Vec<String>,
    /// Literals of the framework's own error messages, from its source
    /// (PyTorch's cuBLAS check writes "… when calling `cublas…`"): a
    /// message holding one is the framework's even where the log never
    /// names it (a pasted line).
    #[serde(default)]
    pub wording: Vec<String>,
    /// Whether its programs are Python programs (`true` unless the table
    /// says otherwise): advice that runs `python …` is dropped for a stack
    /// that is not (Lua Torch7, Caffe's tools, Julia).
    #[serde(default = "python_by_default")]
    pub python: bool,
}

fn python_by_default() -> bool {
    true
}

/// A signal a process can die of, and how logs spell it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    /// `SIGSEGV`, …
    pub name: String,
    /// Its number on Linux.
    pub number: u32,
    /// How shells and libraries describe it (lower case), in several
    /// languages.
    pub words: Vec<String>,
}

/// The facts that may give a signal.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalFacts {
    /// Fact names, in the order they are read (`signal`, `exit_code`).
    pub facts: Vec<String>,
}

/// The signal table: names a signal from a finding's facts.
#[derive(Clone, Debug, Default)]
pub struct Signals {
    /// The facts read, in order.
    pub facts: Vec<String>,
    /// Every signal the table knows (the `[[signal]]` entries).
    pub signals: Vec<Signal>,
}

impl Signals {
    /// The signal one value means: a name (`SIGABRT`, `Signals.SIGABRT`),
    /// a number, an exit code (`-6`, `134`), or a description (`Aborted`,
    /// `Speicherzugriffsfehler (Speicherabzug geschrieben)`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let s = catalog.signals();
    /// assert_eq!(s.name("Aborted (core dumped)").unwrap().name, "SIGABRT");
    /// assert_eq!(s.name("-6").unwrap().name, "SIGABRT");
    /// assert_eq!(s.name("139").unwrap().name, "SIGSEGV");
    /// assert_eq!(s.name("SIGBUS").unwrap().number, 7);
    /// assert!(s.name("1").is_none());
    /// ```
    pub fn name(&self, value: &str) -> Option<&Signal> {
        let v = value.trim();
        if let Some(sig) = self.signals.iter().find(|s| v.ends_with(s.name.as_str())) {
            return Some(sig);
        }
        if let Ok(n) = v.parse::<i64>() {
            let n = match n {
                -64..=-1 => -n,
                129..=192 => n - 128,
                1..=64 if !v.starts_with('+') => n,
                _ => return None,
            };
            // A bare small number is a signal number only where the fact
            // says so; exit codes 1..=64 are ordinary failures.
            return self.signals.iter().find(|s| i64::from(s.number) == n);
        }
        let lower = v.to_lowercase();
        self.signals
            .iter()
            .find(|s| s.words.iter().any(|w| lower.starts_with(w.as_str())))
    }

    /// The signal a finding's facts give, reading the configured facts in
    /// order. `exit_code` is read as an exit code only (1..=64 is not a
    /// signal there).
    ///
    /// ```
    /// use cudnnlog::report::Fact;
    /// use std::collections::BTreeMap;
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let facts = |k: &str, v: Fact| BTreeMap::from([(k.to_string(), v)]);
    /// let s = catalog.signals();
    /// assert_eq!(s.of_facts(&facts("exit_code", Fact::Int(134))).unwrap().name, "SIGABRT");
    /// assert_eq!(s.of_facts(&facts("signal", Fact::Text("Segmentation fault".into()))).unwrap().name, "SIGSEGV");
    /// assert!(s.of_facts(&facts("exit_code", Fact::Int(1))).is_none());
    /// ```
    pub fn of_facts(
        &self,
        facts: &std::collections::BTreeMap<String, crate::facts::Fact>,
    ) -> Option<&Signal> {
        self.facts.iter().find_map(|f| {
            let v = facts.get(f)?.to_string();
            if f == "exit_code" {
                let n: i64 = v.trim().parse().ok()?;
                if (1..=64).contains(&n) {
                    return None;
                }
            }
            self.name(&v)
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KnowledgeFile {
    #[serde(default)]
    pub rule: Vec<RuleEntry>,
    #[serde(default)]
    pub framework: Vec<Framework>,
    #[serde(default)]
    pub signals: Option<SignalFacts>,
    #[serde(default)]
    pub signal: Vec<Signal>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleEntry {
    id: String,
    what: String,
    classes: Vec<String>,
    read: String,
    regex: String,
    #[serde(default)]
    framework: Option<String>,
    factors: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    add: bool,
    evidence: String,
    /// Where the knowledge comes from (documentation only).
    #[allow(dead_code)]
    #[serde(default)]
    source: Option<String>,
}

impl RuleEntry {
    /// Validates the entry against the catalog's class and cause ids; a
    /// `trusted` (built-in) rule's regex is compiled on first use.
    pub(crate) fn validate(
        self,
        is_class: &dyn Fn(&str) -> bool,
        is_family: &dyn Fn(&str) -> bool,
        is_cause: &dyn Fn(&str) -> bool,
        trusted: bool,
    ) -> Result<KnowledgeRule, (String, String)> {
        let fail =
            |field: &str, m: String| Err((field.to_string(), format!("rule {:?}: {m}", self.id)));
        if self.id.is_empty() {
            return fail("rule.id", "an id is needed".into());
        }
        if self.classes.is_empty() {
            return fail("rule.classes", "name at least one class".into());
        }
        for c in &self.classes {
            let known = match c.strip_suffix(".*") {
                Some(family) => is_family(family),
                None => is_class(c),
            };
            if !known {
                return fail("rule.classes", format!("unknown class id {c:?}"));
            }
        }
        if self.factors.is_empty() {
            return fail("rule.factors", "name at least one cause".into());
        }
        for (cause, factor) in &self.factors {
            if !is_cause(cause) {
                return fail("rule.factors", format!("unknown cause id {cause:?}"));
            }
            if !(factor.is_finite() && *factor > 0.0 && *factor <= 100.0) {
                return fail(
                    "rule.factors",
                    format!("{cause}: factor {factor} is not in (0, 100]"),
                );
            }
        }
        let Some(read) = Read::parse(&self.read) else {
            return fail(
                "rule.read",
                format!(
                    "{:?} is not `message`, `finding`, `fact:NAME` or `env:FIELD`",
                    self.read
                ),
            );
        };
        let regex = if trusted {
            crate::catalog::LazyRegex::trusted(&self.regex)
        } else {
            match crate::catalog::LazyRegex::compile(&self.regex) {
                Ok(r) => r,
                Err(e) => return fail("rule.regex", e),
            }
        };
        Ok(KnowledgeRule {
            id: self.id,
            what: self.what,
            classes: self.classes,
            read,
            regex,
            framework: self.framework,
            factors: self.factors.into_iter().collect(),
            add: self.add,
            evidence: self.evidence,
        })
    }
}

/// Fills a rule's evidence template.
pub(crate) fn evidence(rule: &KnowledgeRule, matched: &str, value: &str, line: u64) -> String {
    let clip = |s: &str| crate::text::truncate(s, 160).to_string();
    rule.evidence
        .replace("{match}", &clip(matched))
        .replace("{value}", &clip(value))
        .replace("{line}", &line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(classes: &[&str], cause: &str, read: &str, regex: &str) -> RuleEntry {
        let factors = [(cause.to_string(), 2.0)].into_iter().collect();
        RuleEntry {
            id: "r".into(),
            what: "w".into(),
            classes: classes.iter().map(|s| s.to_string()).collect(),
            read: read.into(),
            regex: regex.into(),
            framework: None,
            factors,
            add: false,
            evidence: "e".into(),
            source: None,
        }
    }

    fn check(e: RuleEntry) -> Result<KnowledgeRule, (String, String)> {
        e.validate(
            &|c| c == "cuda.oom" || c == "python.permission",
            &|f| f == "python" || f == "cuda",
            &|c| c == "stale_cache",
            false,
        )
    }

    #[test]
    fn ids_are_checked() {
        assert!(check(entry(&["cuda.oom"], "stale_cache", "message", "x")).is_ok());
        let (field, m) = check(entry(&["cuda.ooom"], "stale_cache", "message", "x")).unwrap_err();
        assert_eq!(field, "rule.classes");
        assert!(m.contains("cuda.ooom"), "{m}");
        let (field, _) = check(entry(&["cuda.oom"], "stale_cahce", "message", "x")).unwrap_err();
        assert_eq!(field, "rule.factors");
        let (field, _) = check(entry(&["pyton.*"], "stale_cache", "message", "x")).unwrap_err();
        assert_eq!(field, "rule.classes");
        let (field, _) = check(entry(&["cuda.oom"], "stale_cache", "facts:path", "x")).unwrap_err();
        assert_eq!(field, "rule.read");
        let (field, _) = check(entry(&["cuda.oom"], "stale_cache", "message", "(")).unwrap_err();
        assert_eq!(field, "rule.regex");
    }

    #[test]
    fn families_match_whole_components() {
        let r = check(entry(&["python.*"], "stale_cache", "fact:path", "x")).unwrap();
        assert!(r.applies_to("python.permission"));
        assert!(!r.applies_to("pythonx.permission"));
        assert!(!r.applies_to("cuda.oom"));
        assert_eq!(r.read, Read::Fact("path".into()));
    }
}
