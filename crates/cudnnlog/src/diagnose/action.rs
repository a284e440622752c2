//! What to do with a failed job: `retry`, `stop` or `investigate`, and why.
//!
//! A job's attempts speak first. When its sources are several runs (the
//! attempts of torchrun's `--log-dir`, the logs of a requeued job given
//! together), the last two runs that failed are compared: the same failure
//! at the same step means the next run will fail there too (stop); a later
//! run that got further means the job progresses between failures (retry).
//! Otherwise the catalog decides (`actions.toml`): a rule for the primary
//! finding's pattern and facts (Slurm's `PREEMPTED`), then its top cause
//! when the log shows evidence for it (a cause that is only the message's
//! commonest one does not decide), then its class. A class whose message
//! alone does not tell (`investigate`) still gets an answer when nearly all
//! of its likely causes, weighed by their confidence, agree: a cuDNN
//! execution failure is a version, an architecture, memory or a framework
//! bug far more often than a GPU fault, and all of those repeat.
//!
//! A run that went on with warnings (degraded) gets the action of its
//! primary warning: what a rerun as it is would meet again.

use super::timeline::SourceRole;
use crate::catalog::{Action, Catalog, Severity};
use crate::report::{CauseBasis, Finding, Place};


/// The share of its causes' confidence that must agree for an
/// `investigate` class to take their action.
const AGREE: f64 = 0.75;

/// The action for a job whose findings are `findings` and whose primary
/// finding is `findings[primary]`, with the sentence that says why; `None`
/// when there is no finding (a clean run).
pub(crate) fn decide(
    catalog: &Catalog,
    findings: &[Finding],
    primary: Option<usize>,
    roles: &[SourceRole],
) -> Option<(Action, String)> {
    let p = findings.get(primary?)?;
    if let Some(decided) = attempts(findings, roles) {
        return Some(decided);
    }
    let actions = catalog.actions();
    let said = |r: &crate::catalog::ActionRule| (r.action, r.because.clone());
    if let Some(r) = actions.pattern(&p.pattern, &p.facts) {
        return Some(said(r));
    }
    let evidenced = p
        .causes
        .first()
        .filter(|c| c.basis() == CauseBasis::Evidence)
        .and_then(|c| actions.cause(&c.id));
    if let Some(r) = evidenced {
        return Some(said(r));
    }
    let class = actions.class(&p.class);
    if let Some(r) = class.filter(|r| r.action != Action::Investigate) {
        return Some(said(r));
    }
    if let Some(agreed) = agreed(catalog, p) {
        return Some(agreed);
    }
    Some(match class {
        Some(r) => said(r),
        None => (
            Action::Investigate,
            format!("the catalog has no decision for {}.", p.class),
        ),
    })
}

/// The action nearly all of a finding's causes share, by confidence
/// ([`AGREE`]); causes with no action of their own count against.
fn agreed(catalog: &Catalog, f: &Finding) -> Option<(Action, String)> {
    let total: f64 = f.causes.iter().map(|c| c.confidence).sum();
    let of = |c: &crate::report::RankedCause| catalog.actions().cause(&c.id).map(|r| r.action);
    [Action::Retry, Action::Stop].into_iter().find_map(|action| {
        let share: Vec<&str> = f
            .causes
            .iter()
            .filter(|c| of(c) == Some(action))
            .map(|c| c.id.as_str())
            .collect();
        let mass: f64 = f
            .causes
            .iter()
            .filter(|c| of(c) == Some(action))
            .map(|c| c.confidence)
            .sum();
        (total > 0.0 && mass / total >= AGREE).then(|| {
            let how = match action {
                Action::Retry => "are transient",
                _ => "repeat on a rerun",
            };
            let named = share.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            let pct = (mass / total * 100.0).round();
            (
                action,
                format!("the log does not show which cause it is, but {pct}% of the likely ones ({named}, …) {how}."),
            )
        })
    })
}

/// Where each run's own failure happened: (run, finding, step), in run
/// order; a run's failure is its first error that is nobody's fallout.
fn failures(findings: &[Finding], roles: &[SourceRole]) -> Vec<(usize, usize, Option<u64>)> {
    let run = |place: &Place| roles.get(place.source).map(|r| r.run);
    let mut first: std::collections::BTreeMap<usize, (u64, usize, usize, Option<u64>)> =
        Default::default();
    for (i, f) in findings.iter().enumerate() {
        if f.severity != Severity::Error || f.caused_by.is_some() || f.carried_by.is_some() {
            continue;
        }
        for place in std::iter::once(&f.first).chain(&f.occurrences) {
            let Some(r) = run(place) else { continue };
            let key = (place.source as u64, place.line as usize, i, place.step);
            let e = first.entry(r).or_insert(key);
            if (key.0, key.1) < (e.0, e.1) {
                *e = key;
            }
        }
    }
    first.into_iter().map(|(r, (_, _, i, s))| (r, i, s)).collect()
}

/// The decision of the job's attempts, when it has several runs that
/// failed and the last two say something.
fn attempts(findings: &[Finding], roles: &[SourceRole]) -> Option<(Action, String)> {
    let runs: std::collections::BTreeSet<usize> = roles.iter().map(|r| r.run).collect();
    if runs.len() < 2 {
        return None;
    }
    // Runs are numbered for the reader in the order of their first source.
    let number = |run: usize| runs.iter().position(|&r| r == run).map_or(0, |n| n + 1);
    let failed = failures(findings, roles);
    let [.., (ra, ia, sa), (rb, ib, sb)] = failed.as_slice() else {
        return None;
    };
    let (a, b) = (number(*ra), number(*rb));
    let (sa, sb) = ((*sa)?, (*sb)?);
    if ia == ib && sa == sb {
        return Some((
            Action::Stop,
            format!(
                "attempts {a} and {b} failed the same way ({}) at the same step, {sa}: the next one will too.",
                findings[*ib].class
            ),
        ));
    }
    (sb > sa).then(|| {
        let how = match ia == ib {
            true => format!("the same way ({})", findings[*ib].class),
            false => format!("with {}", findings[*ib].class),
        };
        (
            Action::Retry,
            format!("attempt {b} got further than attempt {a} (step {sb}, past step {sa}) before it failed {how}: the job progresses between failures."),
        )
    })
}
