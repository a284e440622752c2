//! Several runs at once: the same failure at the same step in every run
//! points at an input; at different steps, at something sporadic (memory,
//! other processes, hardware); only in the runs whose environment differs,
//! at versions.

use super::timeline::{run_of, SourceRole};
use super::CrossRun;
use super::Draft;
use crate::catalog::ids::cause;
use crate::diagnose::environment::Environment;

/// Fields whose change between runs can explain a failure.
const VERSION_FIELDS: &[&str] = &["framework_version", "cuda", "cudnn", "driver", "nccl"];

/// Evidence for one finding: (finding index, (cause, factor, why)).
pub(crate) type RunEvidence = (usize, (String, f64, String));

/// Compares the sources of a multi-run scan.
///
/// The per-rank files of one attempt are one run (`roles`): ranks of a job
/// failing at the same step are one failure, not the same failure in
/// several runs. A run is named by its first source.
pub(crate) fn compare(
    drafts: &[Draft],
    env: &Environment,
    sources: usize,
    roles: &[SourceRole],
) -> (Vec<CrossRun>, Vec<RunEvidence>) {
    let mut notes = Vec::new();
    let mut evidence = Vec::new();
    // Each run's first source.
    let mut firsts: Vec<usize> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in 0..sources {
        if seen.insert(run_of(roles, s)) {
            firsts.push(s);
        }
    }
    let first_of = |s: usize| {
        firsts
            .iter()
            .copied()
            .find(|&f| run_of(roles, f) == run_of(roles, s))
            .unwrap_or(s)
    };
    if firsts.len() < 2 {
        return (notes, evidence);
    }
    let envs: Vec<Environment> = (0..sources).map(|s| env.of_source(s)).collect();
    for (i, d) in drafts.iter().enumerate().filter(|(_, d)| d.is_error()) {
        // The first occurrence in each run that has one.
        let mut per_run: std::collections::BTreeMap<usize, Option<u64>> = Default::default();
        for (s, step) in d.steps_per_source() {
            per_run.entry(first_of(s)).or_insert(step);
        }
        let failing: Vec<usize> = per_run.keys().copied().collect();
        let steps: Vec<Option<u64>> = per_run.values().copied().collect();
        let mut say = |kind: &str, detail: String, runs: Vec<usize>, causes: &[(&str, f64)]| {
            for (cause, by) in causes {
                evidence.push((i, (cause.to_string(), *by, detail.clone())));
            }
            notes.push(CrossRun {
                class: d.class.clone(),
                kind: kind.to_string(),
                runs,
                detail,
            });
        };
        if failing.len() >= 2 && steps.iter().all(Option::is_some) {
            let steps: Vec<u64> = steps.into_iter().flatten().collect();
            if steps.windows(2).all(|w| w[0] == w[1]) {
                say(
                    "same_step",
                    format!(
                        "{} fails at step {} in every run that fails ({} runs): the same input or shape each time",
                        d.class,
                        steps[0],
                        failing.len()
                    ),
                    failing.clone(),
                    &[(cause::INPUT_SHAPE, 3.0)],
                );
            } else {
                let listed: Vec<String> = steps.iter().map(u64::to_string).collect();
                say(
                    "different_steps",
                    format!(
                        "{} fails at different steps in different runs ({}): a sporadic cause",
                        d.class,
                        listed.join(", ")
                    ),
                    failing.clone(),
                    &[
                        (cause::MEMORY_PRESSURE, 1.5),
                        (cause::FRAGMENTATION, 1.5),
                        (cause::FOREIGN_PROCESS, 1.5),
                        (cause::HARDWARE_FAULT, 1.5),
                        (cause::INPUT_SHAPE, 0.5),
                    ],
                );
            }
        }
        let clean: Vec<usize> = firsts
            .iter()
            .copied()
            .filter(|s| !failing.contains(s))
            .collect();
        if failing.is_empty() || clean.is_empty() {
            continue;
        }
        for field in VERSION_FIELDS {
            let value_of = |s: usize| envs[s].get(field).map(str::to_string);
            let bad: Vec<Option<String>> = failing.iter().map(|&s| value_of(s)).collect();
            let good: Vec<Option<String>> = clean.iter().map(|&s| value_of(s)).collect();
            let Some(Some(b)) = bad.first().cloned() else {
                continue;
            };
            let all_bad_same = bad.iter().all(|v| v.as_deref() == Some(b.as_str()));
            let good_values: Vec<&String> = good.iter().flatten().collect();
            if all_bad_same && !good_values.is_empty() && good_values.iter().all(|g| **g != b) {
                say(
                    "after_environment_change",
                    format!(
                        "{} fails only in the runs with {field} {b}; the runs with {} are clean",
                        d.class,
                        good_values
                            .iter()
                            .map(|g| g.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    failing.clone(),
                    &[
                        (cause::VERSION_MISMATCH, 3.0),
                        (cause::LIBRARY_CONFLICT, 1.5),
                    ],
                );
                break;
            }
        }
    }
    (notes, evidence)
}
