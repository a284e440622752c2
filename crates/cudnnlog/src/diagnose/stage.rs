//! Diagnosis as a stage of its own: [`Findings`] in, [`Diagnosis`] out.
//!
//! A scan's [`FindingsSink`](crate::report::FindingsSink) groups matches
//! into [`Findings`] (what the log shows, not yet explained); [`diagnose`]
//! weighs causes, links fallout, names the culprit and the primary failure
//! and writes remediations. Findings can also be built by hand, so that
//! diagnosis rules are tested without a log.

use super::{analyse, Draft};
use crate::catalog::Catalog;
use crate::context::Progress;
use crate::diagnose::environment::Environment;
use crate::facts::Fact;
use crate::location::Location;
use crate::report::{CrossRun, Finding, Outcome, Place};
#[cfg(test)]
use std::collections::BTreeMap;

/// What a log shows before diagnosis: one entry per class and signature,
/// in log order, and the environment its probes read.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    pub(crate) drafts: Vec<Draft>,
    pub(crate) env: Environment,
    pub(crate) sources: usize,
    /// What each source is to the job (a rank's file, or a run of its
    /// own); empty when unknown: every source is then a run.
    pub(crate) roles: Vec<super::SourceRole>,
}

impl Findings {
    /// No findings yet, for a report over `sources` sources.
    #[cfg(test)]
    pub fn new(sources: usize) -> Findings {
        Findings {
            sources,
            ..Findings::default()
        }
    }

    /// Adds one finding; findings are kept in log order (source, byte).
    #[cfg(test)]
    pub fn push(&mut self, o: Observation) {
        let key = |d: &Draft| (d.first.source, d.first.byte);
        let at = self
            .drafts
            .iter()
            .position(|d| key(d) > key(&o.0))
            .unwrap_or(self.drafts.len());
        self.drafts.insert(at, o.0);
    }

    /// The environment the findings' sources show, to read or add to.
    #[cfg(test)]
    pub fn environment_mut(&mut self) -> &mut Environment {
        &mut self.env
    }

    /// The environment the findings' sources show.
    #[cfg(test)]
    pub fn environment(&self) -> &Environment {
        &self.env
    }

    /// How many findings.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.drafts.len()
    }

    /// True when there is none.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.drafts.is_empty()
    }
}

/// One finding before diagnosis, built by hand: a pattern of the catalog
/// matched a message somewhere.
#[cfg(test)]
#[derive(Clone, Debug)]
pub struct Observation(Draft);

#[cfg(test)]
impl Observation {
    /// A finding of pattern `pattern` (its id) with this message, seen once
    /// on line 1 of source 0; `None` for an id the catalog does not have.
    pub fn new(catalog: &Catalog, pattern: &str, message: &str) -> Option<Observation> {
        let index = catalog.patterns().iter().position(|p| p.id == pattern)?;
        let p = &catalog.patterns()[index];
        let at = Location {
            source: 0,
            line: 1,
            byte: 0,
            timestamp: None,
            rank: None,
        };
        Some(Observation(Draft {
            pattern: index,
            class: p.class.clone(),
            severity: p.severity,
            count: 1,
            first: at.clone(),
            first_event: 0,
            first_progress: None,
            last: at,
            last_event: 0,
            last_progress: None,
            ranks: Default::default(),
            message: message.to_string(),
            facts: BTreeMap::new(),
            signature: String::new(),
            truncated: false,
            carrier: None,
            ranks_evidence: None,
            named_rank: None,
            launcher: None,
            per_source: BTreeMap::new(),
            occurrences: Default::default(),
        }))
    }

    /// Its class id.
    pub fn class(&self) -> &str {
        &self.0.class
    }

    /// Seen first (and last) on `line`; its byte offset is taken to be
    /// 100 per line, which keeps hand-built findings in order.
    pub fn line(mut self, line: u64) -> Observation {
        self.0.first.line = line;
        self.0.first.byte = line.saturating_sub(1) * 100;
        self.0.last = self.0.first.clone();
        self
    }

    /// In source `source` (an index into the report's sources).
    pub fn source(mut self, source: usize) -> Observation {
        self.0.first.source = source;
        self.0.last.source = source;
        self
    }

    /// Written by rank `rank`.
    pub fn rank(mut self, rank: u32) -> Observation {
        self.0.first.rank = Some(rank);
        self.0.last.rank = Some(rank);
        self.0.ranks.insert(rank);
        self
    }

    /// The training step and epoch the log had reached before it.
    pub fn step(mut self, step: Option<u64>, epoch: Option<u64>) -> Observation {
        let p = Progress {
            step,
            epoch,
            batch: None,
        };
        self.0.first_progress = Some(p);
        self.0.last_progress = Some(p);
        self
    }

    /// A value its pattern captured (`requested_bytes`, `status`, …).
    pub fn fact(mut self, name: &str, value: Fact) -> Observation {
        self.0.facts.insert(name.to_string(), value);
        self
    }

    /// Seen `count` times in all (at least once).
    pub fn count(mut self, count: u64) -> Observation {
        self.0.count = count.max(1);
        self
    }
}

/// The explained findings: causes with evidence, remediations, fallout,
/// the culprit, the primary failure.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnosis {
    /// The findings as a report shows them (warnings made fatal by a
    /// following termination report are errors here, and merged).
    pub findings: Vec<Finding>,
    /// The class of the primary finding.
    pub primary: Option<String>,
    /// How the run ended.
    pub outcome: Outcome,
    /// With several sources: how a failure recurs across them.
    pub cross_run: Vec<CrossRun>,
    /// What to do with the job, and why (a failed one only).
    pub action: Option<(crate::catalog::Action, String)>,
}

/// Diagnoses findings against the catalog's causes, rules and
/// remediations.
#[cfg(test)]
pub fn diagnose(findings: &Findings, catalog: &Catalog) -> Diagnosis {
    diagnose_owned(findings.clone(), catalog).0
}

/// Compiles, on all threads, the regexes of the knowledge rules that the
/// findings' classes may run: compiled one at a time as each rule was first
/// weighed, they took most of the diagnosis (5 ms of a 1 GiB scan's
/// serial end), while the cores stood idle.
fn compile_knowledge(catalog: &Catalog, drafts: &[Draft]) {
    use rayon::prelude::*;
    catalog
        .knowledge()
        .par_iter()
        .filter(|r| drafts.iter().any(|d| r.applies_to(&d.class)))
        .for_each(|r| {
            r.regex.regex();
        });
}

/// [`diagnose`] taking the findings, so a scan's report does not copy
/// them; the environment comes back for the report.
pub(crate) fn diagnose_owned(findings: Findings, catalog: &Catalog) -> (Diagnosis, Environment) {
    let Findings {
        mut drafts,
        env,
        sources,
        roles,
    } = findings;
    super::escalate(catalog, &mut drafts);
    // Name the signal a process died of, whatever words the log used.
    for d in &mut drafts {
        if let Some(sig) = catalog.signals().of_facts(&d.facts) {
            d.facts
                .insert("signal_name".to_string(), Fact::Text(sig.name.clone()));
        }
    }
    compile_knowledge(catalog, &drafts);
    let a = analyse(catalog, &drafts, &env, sources, &roles);
    let fallout_of: Vec<Option<String>> = a
        .caused_by
        .iter()
        .map(|c| c.map(|j| drafts[j].class.clone()))
        .collect();
    let mut fallout_of = fallout_of.into_iter();
    let primary = a.primary.map(|i| drafts[i].class.clone());
    let primary_index = a.primary;
    let mut per_finding = a
        .causes
        .into_iter()
        .zip(a.remediations)
        .zip(a.caused_by.into_iter().zip(a.carried_by).zip(a.culprits));
    let findings: Vec<Finding> = drafts
        .into_iter()
        .map(|d| {
            let ((causes, remediations), ((caused_by, carried_by), culprit)) =
                per_finding.next().expect("one diagnosis per finding");
            let pattern = &catalog.patterns()[d.pattern];
            Finding {
                title: catalog.class(&d.class).map_or_else(String::new, |c| {
                    match c.title_fact.as_ref().and_then(|f| d.facts.get(f)) {
                        Some(v) => format!("{} ({v})", c.title),
                        None => c.title.clone(),
                    }
                }),
                pattern: pattern.id.clone(),
                confidence: Some(pattern.confidence).filter(|c| *c < 1.0),
                preview: pattern.stability == crate::catalog::Stability::Preview,
                first: place(&d.first, Some(d.first_progress())),
                last: place(&d.last, Some(d.last_progress())),
                class: d.class,
                severity: d.severity,
                count: d.count,
                ranks: d.ranks.into_iter().collect(),
                message: d.message,
                facts: d.facts,
                causes,
                remediations,
                caused_by,
                fallout_of: fallout_of.next().flatten(),
                carried_by,
                culprit,
                truncated: d.truncated,
                occurrences: d
                    .occurrences
                    .into_sorted()
                    .iter()
                    .map(|k| place(&k.loc, k.progress))
                    .collect(),
            }
        })
        .collect();
    let action = super::action::decide(catalog, &findings, primary_index, &roles);
    let dx = Diagnosis {
        outcome: Outcome::of(&findings),
        action,
        findings,
        primary,
        cross_run: a.cross_run,
    };
    (dx, env)
}

/// A location as the report shows it.
pub(crate) fn place(l: &Location, p: Option<Progress>) -> Place {
    let p = p.unwrap_or_default();
    Place {
        source: l.source,
        line: l.line,
        byte: l.byte,
        timestamp: l.timestamp.and_then(|t| t.iso()),
        yearless_timestamp: l.timestamp.and_then(|t| t.yearless()),
        uptime: l.timestamp.and_then(|t| t.uptime_secs()),
        step: p.step,
        epoch: p.epoch,
        rank: l.rank,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ids::{cause, class};

    fn catalog() -> Catalog {
        Catalog::builtin().unwrap()
    }

    #[test]
    fn a_termination_report_after_an_error_is_its_fallout() {
        let c = catalog();
        let mut f = Findings::new(1);
        f.push(
            Observation::new(
                &c,
                "cuda-illegal-address-cuda-error",
                "CUDA error: an illegal memory access was encountered",
            )
            .unwrap()
            .line(10),
        );
        f.push(
            Observation::new(
                &c,
                "proc-segfault-torchrun-agent",
                "failed (exitcode: -6) local_rank: 0 (pid: 604)",
            )
            .unwrap()
            .line(30)
            .fact("exit_code", Fact::Text("-6".into())),
        );
        let dx = diagnose(&f, &c);
        assert_eq!(dx.primary.as_deref(), Some(class::CUDA_ILLEGAL_ADDRESS));
        assert_eq!(dx.findings[1].caused_by, Some(0));
        assert_eq!(
            dx.findings[1].facts["signal_name"],
            Fact::Text("SIGABRT".into())
        );
        assert_eq!(dx.outcome, Outcome::Failed);
    }

    #[test]
    fn an_inferred_framework_version_counts_for_less_than_a_version_line() {
        let c = catalog();
        let at = Location {
            source: 0,
            line: 2,
            byte: 100,
            timestamp: None,
            rank: None,
        };
        let plan_failed = |env: &[(&str, &str)]| {
            let mut f = Findings::new(1);
            for (k, v) in env {
                f.environment_mut().record(k, v, &at);
            }
            f.push(
                Observation::new(
                    &c,
                    "cudnn-plan-failed-cudnn-exception",
                    "UserWarning: Plan failed with a cudnnException",
                )
                .unwrap()
                .line(5),
            );
            let dx = diagnose(&f, &c);
            let bug = |dx: &Diagnosis| {
                dx.findings[0]
                    .causes
                    .iter()
                    .find(|r| r.id == cause::FRAMEWORK_BUG)
                    .map_or(0.0, |r| r.confidence)
            };
            (bug(&dx), dx)
        };
        let (explicit, _) =
            plan_failed(&[("framework", "pytorch"), ("framework_version", "2.3.1")]);
        let (inferred, dx) = plan_failed(&[("framework", "pytorch"), ("framework_build", "2.3.1")]);
        let (none, _) = plan_failed(&[("framework", "pytorch")]);
        assert!(
            explicit > inferred && inferred > none,
            "{explicit} {inferred} {none}"
        );
        let ev = &dx.findings[0].causes[0].evidence;
        assert!(
            ev.iter()
                .any(|e| e.contains("inferred from a build fingerprint on line 2")),
            "{ev:?}"
        );
    }
}
