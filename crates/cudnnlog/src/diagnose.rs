//! Ranking a finding's root causes: the pattern's priors, adjusted by what
//! the message's own numbers say.

use crate::catalog::{Catalog, Pattern};
use crate::facts::{human_bytes, Fact};
use crate::report::RankedCause;
use std::collections::BTreeMap;

/// How many causes contribute remediations, and how likely they must be.
const REMEDIATION_CAUSES: usize = 3;
const REMEDIATION_CONFIDENCE: f64 = 0.15;

struct Weighing {
    id: String,
    weight: f64,
    evidence: Vec<String>,
}

impl Weighing {
    fn scale(&mut self, by: f64, why: Option<String>) {
        self.weight *= by;
        self.evidence.extend(why);
    }
}

fn bytes(facts: &BTreeMap<String, Fact>, name: &str) -> Option<u64> {
    match facts.get(name) {
        Some(Fact::Int(n)) => Some(*n),
        _ => None,
    }
}

/// Ranks the causes of a finding and gathers its remediations.
pub(crate) fn rank_causes(
    catalog: &Catalog,
    pattern: &Pattern,
    facts: &BTreeMap<String, Fact>,
) -> (Vec<RankedCause>, Vec<String>) {
    let mut ws: Vec<Weighing> = pattern
        .causes
        .iter()
        .map(|c| Weighing {
            id: c.id.clone(),
            weight: c.prior,
            evidence: Vec::new(),
        })
        .collect();
    weigh_memory(&mut ws, facts);

    let total: f64 = ws.iter().map(|w| w.weight).sum();
    if total > 0.0 {
        for w in &mut ws {
            w.weight /= total;
        }
    }
    ws.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    let causes: Vec<RankedCause> = ws
        .iter()
        .map(|w| RankedCause {
            id: w.id.clone(),
            confidence: (w.weight * 100.0).round() / 100.0,
            evidence: w.evidence.clone(),
        })
        .collect();

    let mut remediations: Vec<String> = pattern.remediations.clone();
    for w in ws
        .iter()
        .take(REMEDIATION_CAUSES)
        .filter(|w| w.weight >= REMEDIATION_CONFIDENCE)
    {
        if let Some(c) = catalog.cause(&w.id) {
            for r in &c.remediations {
                if !remediations.contains(r) {
                    remediations.push(r.clone());
                }
            }
        }
    }
    (causes, remediations)
}

fn entry<'a>(ws: &'a mut Vec<Weighing>, id: &str) -> &'a mut Weighing {
    if let Some(i) = ws.iter().position(|w| w.id == id) {
        return &mut ws[i];
    }
    ws.push(Weighing {
        id: id.to_string(),
        weight: 0.05,
        evidence: Vec::new(),
    });
    ws.last_mut().expect("just pushed")
}

/// Evidence from an out-of-memory message's numbers.
fn weigh_memory(ws: &mut Vec<Weighing>, facts: &BTreeMap<String, Fact>) {
    let Some(req) = bytes(facts, "requested_bytes") else {
        return;
    };
    let total = bytes(facts, "total_bytes");
    let free = bytes(facts, "free_bytes");
    let allowed = bytes(facts, "allowed_bytes");
    let process = bytes(facts, "process_bytes");
    let unalloc = bytes(facts, "reserved_unallocated_bytes");
    let h = human_bytes;

    if let Some(t) = total {
        if req > t {
            entry(ws, "code_bug").scale(
                20.0,
                Some(format!(
                    "requested {} in one allocation, more than the GPU's whole {}",
                    h(req),
                    h(t)
                )),
            );
        }
    }
    if let Some(a) = allowed {
        if req > a {
            entry(ws, "input_shape").scale(
                6.0,
                Some(format!(
                    "one allocation of {} exceeds the {} the process may use at all",
                    h(req),
                    h(a)
                )),
            );
        }
        entry(ws, "memory_pressure").scale(
            2.0,
            Some(format!(
                "requested {} with {} allowed to the process (a per-process cap)",
                h(req),
                h(a)
            )),
        );
    } else if let Some(f) = free {
        if f < req {
            entry(ws, "memory_pressure").scale(
                2.0,
                Some(format!("requested {} with only {} free", h(req), h(f))),
            );
        }
    }
    if let Some(u) = unalloc {
        if u >= req || (u as f64) >= 0.25 * allowed.or(total).unwrap_or(u64::MAX) as f64 {
            entry(ws, "fragmentation").scale(
                4.0,
                Some(format!(
                    "{} reserved by the allocator but unallocated (the request was {})",
                    h(u),
                    h(req)
                )),
            );
        } else if (u as f64) < 0.05 * req as f64 {
            entry(ws, "fragmentation").scale(0.2, None);
        }
    }
    if let (Some(t), Some(f), Some(p)) = (total, free, process) {
        let others = t.saturating_sub(f).saturating_sub(p);
        if others > (1u64 << 30).max(t / 20) {
            entry(ws, "foreign_process").scale(
                5.0,
                Some(format!(
                    "other processes hold about {} of the GPU's {}",
                    h(others),
                    h(t)
                )),
            );
        } else {
            entry(ws, "foreign_process").scale(0.2, None);
        }
    }
}
