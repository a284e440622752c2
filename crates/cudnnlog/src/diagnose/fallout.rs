//! The primary failure and its fallout.
//!
//! A finding is *fallout* (`caused_by`) of an earlier error in the same
//! source when it is a consequence the earlier one explains:
//!
//! * **sticky CUDA errors** — after an illegal address, a device-side assert,
//!   a launch failure or an Xid fault the CUDA context is broken, and every
//!   later CUDA, cuBLAS, cuDNN or NCCL call fails too;
//! * **distributed cascades** — one rank fails (out of memory, an exception,
//!   a crash); the others wait in a collective until NCCL times out or sees
//!   the connection close, so later NCCL errors and timeouts follow from the
//!   first non-NCCL error;
//! * **launcher reports** — torchrun's summary or agent line reporting a
//!   signal (a SIGABRT after the watchdog took a rank down, a SIGKILL) after
//!   an error the log already shows.
//!
//! The primary failure is the first error that is not fallout.

use super::{Ctx, Draft, Weights};
use crate::catalog::Catalog;

/// Errors that break the CUDA context for every later call.
const STICKY: &[&str] = &[
    "cuda.illegal_address",
    "cuda.device_assert",
    "cuda.launch_failure",
    "cuda.ecc_xid",
];

/// Launcher patterns that report how a child ended, not why.
const LAUNCHER_REPORTS: &[&str] = &[
    "proc-segfault-torchrun-summary",
    "proc-segfault-torchrun-agent",
    "host-oom-killed-torchrun-summary",
    "host-oom-killed-torchrun-agent",
];

fn follows_sticky(d: &Draft) -> bool {
    let family_hit = d.class.starts_with("cuda.")
        || d.class.starts_with("cudnn.")
        || d.class.starts_with("nccl.")
        || matches!(
            d.class.as_str(),
            "cublas.error" | "python.runtime_error" | "proc.segfault"
        );
    family_hit && d.class != "cuda.oom"
}

/// For each finding, the earlier finding it follows from, if any.
pub(crate) fn link(catalog: &Catalog, drafts: &[Draft]) -> Vec<Option<usize>> {
    let mut caused_by = vec![None; drafts.len()];
    for (i, d) in drafts.iter().enumerate() {
        if !d.is_error() {
            continue;
        }
        let earlier = |pred: &dyn Fn(&Draft) -> bool| {
            drafts[..i].iter().position(|e| {
                e.is_error() && e.first.source == d.first.source && e.class != d.class && pred(e)
            })
        };
        let pattern = catalog.patterns()[d.pattern].id.as_str();
        caused_by[i] = if follows_sticky(d) {
            earlier(&|e| STICKY.contains(&e.class.as_str()))
        } else {
            None
        }
        .or_else(|| {
            (d.family() == "nccl")
                .then(|| earlier(&|e| e.family() != "nccl"))
                .flatten()
        })
        .or_else(|| {
            LAUNCHER_REPORTS
                .contains(&pattern)
                .then(|| earlier(&|_| true))
                .flatten()
        });
    }
    caused_by
}

/// The first error that is not fallout.
pub(crate) fn primary(drafts: &[Draft], caused_by: &[Option<usize>]) -> Option<usize> {
    drafts
        .iter()
        .enumerate()
        .find(|(i, d)| d.is_error() && caused_by[*i].is_none())
        .map(|(i, _)| i)
}

/// Evidence for a fallout finding: it follows from `cause`.
pub(crate) fn explain(ctx: &Ctx<'_>, cause: &Draft, ws: &mut Weights) {
    let d = ctx.draft();
    let why = if STICKY.contains(&cause.class.as_str()) {
        format!(
            "follows {} on line {}: after it the CUDA context is broken and later GPU calls fail too",
            cause.class, cause.first.line
        )
    } else if d.family() == "nccl" {
        let rank = cause
            .first
            .rank
            .map_or(String::new(), |r| format!(" on rank {r}"));
        format!(
            "follows {}{rank} on line {}: the other ranks waited for it in a collective",
            cause.class, cause.first.line
        )
    } else {
        format!(
            "follows {} on line {}: the launcher reports how the process ended, not why",
            cause.class, cause.first.line
        )
    };
    let id = if d.family() == "nccl" {
        "comm_failure"
    } else {
        "code_bug"
    };
    ws.add(id, 3.0, Some(why));
}
