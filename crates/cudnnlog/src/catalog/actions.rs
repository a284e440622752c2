//! What an operator should do with a job that died: run it again as it is
//! (`retry`), change something first (`stop`), or read the log because the
//! message alone does not say (`investigate`).
//!
//! `patterns/actions.toml` holds the decision as data: one entry per class
//! (every class of the built-in catalog has one), entries for the causes
//! whose nature decides by itself (a hardware fault is worth a retry, a
//! version mismatch is not) and entries for the patterns whose message
//! says more than their class (Slurm's `DUE TO PREEMPTION` is a
//! cancellation worth retrying; a plain `CANCELLED` is someone's choice).
//! Each entry says why, in a sentence the report shows as
//! `retryable_because`.

use serde::{Deserialize, Serialize};

/// What to do with a failed job.
///
/// ```
/// use cudnnlog::report::Action;
/// assert_eq!(Action::Retry.as_str(), "retry");
/// assert_eq!(serde_json::to_string(&Action::Stop).unwrap(), "\"stop\"");
/// assert_eq!(Action::ALL.len(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A transient fault (a flaky node, the network, a preemption, a GPU
    /// fault on one machine): the same job, run again, is likely to go
    /// further.
    Retry,
    /// A deterministic failure (a bug, the same out-of-memory error, a
    /// missing or mismatched library): run unchanged, it fails again.
    Stop,
    /// The message alone does not tell which: someone should read the log.
    Investigate,
}

impl Action {
    /// Every action, in the order reports list them.
    ///
    /// ```
    /// let names: Vec<_> = cudnnlog::report::Action::ALL.iter().map(|a| a.as_str()).collect();
    /// assert_eq!(names, ["retry", "stop", "investigate"]);
    /// ```
    pub const ALL: [Action; 3] = [Action::Retry, Action::Stop, Action::Investigate];

    /// The action's name, as JSON writes it.
    ///
    /// ```
    /// assert_eq!(cudnnlog::report::Action::Investigate.as_str(), "investigate");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Retry => "retry",
            Action::Stop => "stop",
            Action::Investigate => "investigate",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One decision of `actions.toml`: for a class, a cause or a pattern.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let oom = catalog.actions().class("cuda.oom").unwrap();
/// assert_eq!(oom.action, cudnnlog::report::Action::Stop);
/// assert!(!oom.because.is_empty());
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRule {
    /// The class, cause or pattern id it is about.
    pub id: String,
    /// What to do.
    pub action: Action,
    /// Why, in a sentence an operator reads (`retryable_because`).
    pub because: String,
    /// For a pattern: the fact whose value decides (Slurm's `state`:
    /// `PREEMPTED` or `CANCELLED by 1234`); the rule holds when the
    /// finding's fact is one of `values`.
    #[serde(default)]
    pub fact: Option<String>,
    /// The values of `fact` the rule is for, compared exactly.
    #[serde(default)]
    pub values: Vec<String>,
}

impl ActionRule {
    /// True when the rule's fact condition (if any) holds for `facts`.
    fn holds(&self, facts: &std::collections::BTreeMap<String, crate::facts::Fact>) -> bool {
        match &self.fact {
            None => true,
            Some(f) => facts
                .get(f)
                .is_some_and(|v| self.values.iter().any(|w| *w == v.to_string())),
        }
    }
}

/// `actions.toml` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ActionsFile {
    #[serde(default)]
    pub class: Vec<ActionRule>,
    #[serde(default)]
    pub cause: Vec<ActionRule>,
    #[serde(default)]
    pub pattern: Vec<ActionRule>,
}

/// The catalog's decisions, by class, cause and pattern.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin()?;
/// let actions = catalog.actions();
/// use cudnnlog::report::Action;
/// assert_eq!(actions.cause("hardware_fault").map(|r| r.action), Some(Action::Retry));
/// assert_eq!(actions.pattern("sched-cancelled-slurm-preemption", &Default::default()).map(|r| r.action), Some(Action::Retry));
/// assert_eq!(actions.class("sched.cancelled").map(|r| r.action), Some(Action::Stop));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Actions {
    classes: Vec<ActionRule>,
    causes: Vec<ActionRule>,
    patterns: Vec<ActionRule>,
}

impl Actions {
    /// The decision for a class, when the catalog has one.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// assert!(catalog.actions().class("nccl.timeout").is_some());
    /// assert!(catalog.actions().class("no.such_class").is_none());
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn class(&self, id: &str) -> Option<&ActionRule> {
        self.classes.iter().find(|r| r.id == id)
    }

    /// The decision for a cause, when its nature decides by itself.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// assert_eq!(catalog.actions().cause("version_mismatch").unwrap().action, cudnnlog::report::Action::Stop);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn cause(&self, id: &str) -> Option<&ActionRule> {
        self.causes.iter().find(|r| r.id == id)
    }

    /// The decision for a finding of pattern `id` with `facts`, when its
    /// message says more than its class; the last rule that holds wins.
    ///
    /// ```
    /// use cudnnlog::report::{Action, Fact};
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// let facts = |state: &str| [("state".to_string(), Fact::Text(state.into()))].into_iter().collect();
    /// let actions = catalog.actions();
    /// let rule = actions.pattern("sched-cancelled-slurm-state", &facts("PREEMPTED")).unwrap();
    /// assert_eq!(rule.action, Action::Retry);
    /// assert!(actions.pattern("sched-cancelled-slurm-state", &facts("CANCELLED by 1234")).is_none());
    /// assert!(actions.pattern("cuda-oom-pytorch-allocator", &Default::default()).is_none());
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn pattern(
        &self,
        id: &str,
        facts: &std::collections::BTreeMap<String, crate::facts::Fact>,
    ) -> Option<&ActionRule> {
        self.patterns
            .iter()
            .rev()
            .find(|r| r.id == id && r.holds(facts))
    }

    /// Adds a file's decisions; a later one for the same id (and, for a
    /// pattern, the same condition) replaces an earlier one: a user's
    /// catalog overrides the built-in one.
    pub(crate) fn extend(&mut self, f: ActionsFile) {
        for (into, from) in [
            (&mut self.classes, f.class),
            (&mut self.causes, f.cause),
            (&mut self.patterns, f.pattern),
        ] {
            for r in from {
                into.retain(|old| (&old.id, &old.fact, &old.values) != (&r.id, &r.fact, &r.values));
                into.push(r);
            }
        }
    }

    /// The first pattern rule with a fact but no values, or values but no
    /// fact, or a condition on a class or cause.
    pub(crate) fn bad_condition(&self) -> Option<&str> {
        let odd = |r: &&ActionRule| r.fact.is_some() == r.values.is_empty();
        let conditioned = |r: &&ActionRule| r.fact.is_some() || !r.values.is_empty();
        self.patterns
            .iter()
            .find(odd)
            .or_else(|| self.classes.iter().chain(&self.causes).find(conditioned))
            .map(|r| r.id.as_str())
    }

    /// The first decision whose id the catalog does not know, with what
    /// kind of id it should have been: `("class", "no.such")`.
    pub(crate) fn unknown(
        &self,
        class: &dyn Fn(&str) -> bool,
        cause: &dyn Fn(&str) -> bool,
        pattern: &dyn Fn(&str) -> bool,
    ) -> Option<(&'static str, &str)> {
        let kinds: [(&'static str, &Vec<ActionRule>, &dyn Fn(&str) -> bool); 3] = [
            ("class", &self.classes, class),
            ("cause", &self.causes, cause),
            ("pattern", &self.patterns, pattern),
        ];
        kinds.into_iter().find_map(|(kind, rules, known)| {
            rules
                .iter()
                .find(|r| !known(&r.id))
                .map(|r| (kind, r.id.as_str()))
        })
    }

    /// The first decision with no reason written.
    pub(crate) fn without_reason(&self) -> Option<&str> {
        self.classes
            .iter()
            .chain(&self.causes)
            .chain(&self.patterns)
            .find(|r| r.because.trim().is_empty())
            .map(|r| r.id.as_str())
    }
}
