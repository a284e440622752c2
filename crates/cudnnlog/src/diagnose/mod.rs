//! Diagnosis: from findings to a ranked, evidenced explanation.
//!
//! For each finding the pattern's causes start at their catalog priors;
//! evidence rules (`rules/`, one file each) then scale them by what the
//! log shows — the message's own numbers, the environment, settings, timing, co-occurring
//! findings and the compatibility tables — and every adjustment records the
//! evidence, with line numbers. Weights are normalised into confidences.
//! `fallout` marks findings that follow from an earlier one (a sticky CUDA
//! error, one rank's failure seen by the others as a timeout) and picks the
//! primary failure; the rules' remedies write remediations filled with the
//! log's own facts; `runs` compares several runs. `docs/diagnosis.md` explains the
//! scoring.
//!
//! The stage's interface is [`diagnose`]: [`Findings`] (from a scan's
//! [`FindingsSink`](crate::report::FindingsSink), or built by hand from
//! [`Observation`]s) in, a [`Diagnosis`] out.

mod action;
pub(crate) mod advice;
mod blame;
pub(crate) mod culprit;
mod draft;
pub(crate) mod environment;
mod fallout;
mod findings;
pub(crate) mod occurrences;

pub(crate) use fallout::escalate;
pub(crate) mod rules;
mod runs;
mod stage;
mod timeline;

pub(crate) use draft::Draft;
pub use findings::{FindingsSink, MAX_SIGNATURES, OTHER_SIGNATURES};

pub(crate) use timeline::SourceRole;

pub(crate) use stage::Findings;
#[cfg(test)]
pub(crate) use stage::{diagnose, Observation};
pub(crate) use stage::{diagnose_owned, place};

use crate::catalog::{Catalog, Pattern};
use crate::diagnose::environment::Environment;
use crate::report::{CrossRun, RankedCause};

/// The weight of a cause that evidence brings in without a catalog prior.
const UNLISTED_PRIOR: f64 = 0.05;

/// What the rules may look at for one finding.
pub(crate) struct Ctx<'a> {
    pub catalog: &'a Catalog,
    pub pattern: &'a Pattern,
    /// The environment of the finding's own source.
    pub env: &'a Environment,
    pub drafts: &'a [Draft],
    /// The finding's index in `drafts`.
    pub index: usize,
    /// For a distributed finding, the rank(s) at fault.
    pub culprit: Option<&'a crate::report::Culprit>,
}

impl Ctx<'_> {
    pub fn draft(&self) -> &Draft {
        &self.drafts[self.index]
    }
}

/// A cause being weighed, with the evidence for its weight.
#[derive(Clone, Debug)]
pub(crate) struct Weighing {
    pub id: String,
    pub weight: f64,
    pub evidence: Vec<String>,
}

/// The causes of one finding while rules adjust them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Weights(pub Vec<Weighing>);

impl Weights {
    /// Scales a cause the pattern lists; a cause it does not list is left
    /// alone (the rule does not concern this class).
    pub fn boost(&mut self, id: &str, by: f64, why: Option<String>) {
        if let Some(w) = self.0.iter_mut().find(|w| w.id == id) {
            w.weight *= by;
            w.evidence.extend(why);
        }
    }

    /// Scales a cause, bringing it in with a small weight when the pattern
    /// does not list it: the evidence is strong enough on its own.
    pub fn add(&mut self, id: &str, by: f64, why: Option<String>) {
        if !self.0.iter().any(|w| w.id == id) {
            self.0.push(Weighing {
                id: id.to_string(),
                weight: UNLISTED_PRIOR,
                evidence: Vec::new(),
            });
        }
        self.boost(id, by, why);
    }
}

/// The diagnosed findings' causes and remediations, plus the fallout links,
/// the primary finding and the cross-run notes, by index into the drafts.
pub(crate) struct Analysis {
    pub causes: Vec<Vec<RankedCause>>,
    pub remediations: Vec<Vec<String>>,
    /// For each finding, the index of the finding it follows from.
    pub caused_by: Vec<Option<usize>>,
    /// For each status finding, the index of the symptom carrying it.
    pub carried_by: Vec<Option<usize>>,
    /// For each distributed finding, the rank(s) at fault.
    pub culprits: Vec<Option<crate::report::Culprit>>,
    pub primary: Option<usize>,
    pub cross_run: Vec<CrossRun>,
}

/// Diagnoses every finding. `env` is the whole report's environment;
/// findings are in log order.
pub(crate) fn analyse(
    catalog: &Catalog,
    drafts: &[Draft],
    env: &Environment,
    sources: usize,
    roles: &[SourceRole],
) -> Analysis {
    let time = timeline::Timeline::new(drafts);
    let caused_by = fallout::link(catalog, drafts, roles, &time);
    let (cross_run, run_evidence) = runs::compare(drafts, env, sources, roles);
    let carried_by = fallout::carried(drafts);
    let primary = fallout::primary(catalog, drafts, &caused_by, &carried_by, &time);
    let mut culprits: Vec<Option<crate::report::Culprit>> = (0..drafts.len())
        .map(|i| culprit_of(catalog, drafts, i, &caused_by, roles))
        .collect();
    if let Some(p) = primary.filter(|&p| culprits[p].is_none()) {
        culprits[p] = blame::first_failure(catalog, drafts, p, &caused_by, roles, &time);
    }
    let mut causes = Vec::with_capacity(drafts.len());
    let mut remediations = Vec::with_capacity(drafts.len());
    for (i, d) in drafts.iter().enumerate() {
        let pattern = &catalog.patterns()[d.pattern];
        let source_env = env.of_source(d.first.source);
        let ctx = Ctx {
            catalog,
            pattern,
            env: &source_env,
            drafts,
            index: i,
            culprit: culprits[i].as_ref(),
        };
        let mut ws = Weights(
            pattern
                .causes
                .iter()
                .map(|c| Weighing {
                    id: c.id.clone(),
                    weight: c.prior,
                    evidence: Vec::new(),
                })
                .collect(),
        );
        rules::apply(&ctx, &mut ws);
        for (cause, by, why) in run_evidence.iter().filter(|e| e.0 == i).map(|e| &e.1) {
            ws.add(cause, *by, Some(why.clone()));
        }
        if let Some(j) = caused_by[i] {
            // A cause earlier in the drafts has its causes ranked already.
            let cause_of = causes.get(j).and_then(|c: &Vec<RankedCause>| c.first());
            fallout::explain(&ctx, &drafts[j], cause_of, &mut ws);
        }
        let ranked = normalise(catalog, ws);
        // Fallout has no remedy of its own: it goes when its cause does
        // (`fallout_of` names it, and every format says to fix it first).
        remediations.push(match caused_by[i] {
            Some(_) => Vec::new(),
            None => advice::gather(&ctx, &ranked),
        });
        causes.push(ranked);
    }
    Analysis {
        causes,
        remediations,
        caused_by,
        carried_by,
        culprits,
        primary,
        cross_run,
    }
}

/// The culprit of a distributed finding, from the ranks' evidence and the
/// other findings of its source.
fn culprit_of(
    catalog: &Catalog,
    drafts: &[Draft],
    i: usize,
    caused_by: &[Option<usize>],
    roles: &[SourceRole],
) -> Option<crate::report::Culprit> {
    let d = &drafts[i];
    let ev = d.ranks_evidence.as_ref()?;
    let cause = caused_by[i].and_then(|j| {
        let c = &drafts[j];
        // The failed rank: its tag, or the rank or task its message names.
        let rank = timeline::rank_of(c)?;
        Some((rank, c.class.clone(), c.first.line))
    });
    let failing: Vec<u32> = drafts
        .iter()
        .filter(|o| {
            // Any file of the job: one rank's log may hold the error the
            // others' timeouts follow from.
            o.is_error() && !catalog.class(&o.class).is_some_and(|c| c.distributed)
        })
        .flat_map(|o| o.ranks.iter().copied())
        .collect();
    // The ranks whose own files the job holds, of this finding's run.
    let job: Vec<u32> = roles
        .iter()
        .enumerate()
        .filter(|(s, _)| timeline::same_run(roles, *s, d.first.source))
        .filter_map(|(_, r)| r.rank)
        .collect();
    let reporters: Vec<u32> = d.ranks.iter().copied().collect();
    let seq_num = d
        .int("seq_num")
        .or_else(|| d.text("seq_num").and_then(|s| s.parse().ok()));
    crate::diagnose::culprit::decide(
        ev,
        &crate::diagnose::culprit::Context {
            reporters: &reporters,
            seq_num,
            cause,
            failing: &failing,
            job: &job,
            waited: catalog.class(&d.class).is_some_and(|c| c.waits),
        },
    )
}

/// Normalised confidences, most likely first, rounded to two decimals.
fn normalise(catalog: &Catalog, ws: Weights) -> Vec<RankedCause> {
    let mut ws = ws.0;
    let total: f64 = ws.iter().map(|w| w.weight).sum();
    if total > 0.0 {
        for w in &mut ws {
            w.weight /= total;
        }
    }
    // Ties: the documented domain order, causes.toml's (commonest first).
    ws.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then_with(|| catalog.cause_order(&a.id, &b.id))
    });
    ws.into_iter()
        .map(|w| RankedCause {
            id: w.id,
            confidence: (w.weight * 100.0).round() / 100.0,
            evidence: w.evidence,
        })
        .collect()
}

#[cfg(test)]
mod examples;
