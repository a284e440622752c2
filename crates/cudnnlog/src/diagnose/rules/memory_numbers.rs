//! The numbers of an out-of-memory message: the request against the cap,
//! the free memory, the allocator's reserved-but-unallocated memory and
//! memory held by other processes.
//!
//! **Evidence:** an OOM's requested, allocated,
//! reserved-but-unallocated, allowed (cap), free and total bytes; for other
//! processes, PyTorch's "Process N has X memory in use", or total − free −
//! own (older messages: total − free − reserved).
//!
//! **Effect:** request > whole GPU → `code_bug` ×20;
//! request > cap → `input_shape` ×6; free < request ≤ free +
//! reserved-but-unallocated, or allocated + request ≤ usable memory but
//! cached memory made it fail → `fragmentation` ×8, `memory_pressure` ×0.6
//! (older messages: reserved − allocated is the cache);
//! reserved-but-unallocated ≥ request → `fragmentation` ×4; cap or too
//! little free → `memory_pressure` ×2; other processes holding more than max(1
//! GiB, 5%) → `foreign_process` ×5, ×10 when it exceeds the request (then
//! `memory_pressure` and `fragmentation` ×0.5).

use super::{Remedy, Rule};
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};
use crate::facts::human_bytes as h;

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[
        Remedy {
            cause: cause::MEMORY_PRESSURE,
            write: batch_size,
        },
        Remedy {
            cause: cause::FRAGMENTATION,
            write: fragmentation,
        },
        Remedy {
            cause: cause::FOREIGN_PROCESS,
            write: foreign,
        },
    ],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    let Some(req) = d.int("requested_bytes") else {
        return;
    };
    let line = d.first.line;
    let total = d.int("total_bytes");
    let free = d.int("free_bytes");
    let allowed = d.int("allowed_bytes");
    let process = d.int("process_bytes");
    let allocated = d.int("allocated_bytes");
    // Older allocator messages give what PyTorch reserved in total; what it
    // reserved beyond what is allocated is its cache.
    let reserved = d.int("reserved_bytes");
    let unalloc = d
        .int("reserved_unallocated_bytes")
        .or_else(|| Some(reserved?.saturating_sub(allocated?)));

    if let Some(t) = total {
        if req > t {
            ws.add(
                cause::CODE_BUG,
                20.0,
                Some(format!(
                    "line {line}: one allocation of {} is more than the GPU's whole {}",
                    h(req),
                    h(t)
                )),
            );
        }
    }
    if let Some(a) = allowed {
        if req > a {
            ws.add(
                cause::INPUT_SHAPE,
                6.0,
                Some(format!(
                    "line {line}: one allocation of {} exceeds the {} the process may use at all",
                    h(req),
                    h(a)
                )),
            );
        }
        ws.add(
            cause::MEMORY_PRESSURE,
            2.0,
            Some(format!(
                "line {line}: requested {} with {} allowed to the process (a per-process cap)",
                h(req),
                h(a)
            )),
        );
    } else if let Some(f) = free {
        if f < req {
            ws.add(
                cause::MEMORY_PRESSURE,
                2.0,
                Some(format!(
                    "line {line}: requested {} with only {} free",
                    h(req),
                    h(f)
                )),
            );
        }
    }
    // What the process may use: its cap, or its own share plus what is free.
    let cap = allowed.or_else(|| Some(process? + free?));
    let mut cached = false;
    // The request is more than is free but less than free plus the cache:
    // the memory exists, in pieces the allocator cannot hand out whole.
    if let (Some(f), Some(u)) = (free, unalloc) {
        if f < req && req <= f + u && !cached {
            ws.add(
                cause::FRAGMENTATION,
                8.0,
                Some(format!(
                    "line {line}: {} free + {} reserved but unallocated = {} would cover the {} request if it were one block",
                    h(f),
                    h(u),
                    h(f + u),
                    h(req)
                )),
            );
            ws.boost(cause::MEMORY_PRESSURE, 0.6, None);
            cached = true;
        }
    }
    if let (Some(cap), Some(a), Some(u)) = (cap, allocated, unalloc) {
        // Each size is at most i64::MAX (`facts::MAX_FACT_INT`): a sum of
        // two fits a u64, a third may not.
        if !cached && a + req <= cap && (a + req).saturating_add(u) > cap {
            ws.add(
                cause::FRAGMENTATION,
                8.0,
                Some(format!(
                    "line {line}: the request would fit if the cached memory could be reused: {} allocated + {} requested = {} ≤ {} usable, but {} sat reserved and unallocated",
                    h(a),
                    h(req),
                    h(a + req),
                    h(cap),
                    h(u)
                )),
            );
            ws.boost(cause::MEMORY_PRESSURE, 0.6, None);
            cached = true;
        }
    }
    if let Some(u) = unalloc.filter(|_| !cached) {
        if u >= req || (u as f64) >= 0.25 * allowed.or(total).unwrap_or(u64::MAX) as f64 {
            ws.add(
                cause::FRAGMENTATION,
                4.0,
                Some(format!(
                    "line {line}: {} reserved by the allocator but unallocated (the request was {})",
                    h(u),
                    h(req)
                )),
            );
        } else if (u as f64) < 0.05 * req as f64 {
            ws.boost(cause::FRAGMENTATION, 0.2, None);
        }
    }
    // Memory held outside this process: named by PyTorch ("Process N has X
    // memory in use"), or what the total, free and own figures leave over.
    // Older messages give no per-process figure: what is neither free nor
    // reserved by PyTorch is held elsewhere (other processes, or this
    // process's CUDA context, about 0.3-1 GiB).
    let others = d.int("other_process_bytes").or_else(|| {
        let (t, f) = (total?, free?);
        let own = process.or(reserved)?;
        Some(t.saturating_sub(f).saturating_sub(own))
    });
    if let (Some(t), Some(o)) = (total, others) {
        if o > (1u64 << 30).max(t / 20) {
            let enough = o >= req;
            ws.add(
                cause::FOREIGN_PROCESS,
                if enough { 10.0 } else { 5.0 },
                Some(format!(
                    "line {line}: other processes hold about {} of the GPU's {}{}",
                    h(o),
                    h(t),
                    if enough {
                        ", more than the request"
                    } else {
                        ""
                    }
                )),
            );
            if enough {
                // Freeing the GPU is the fix, however the cache is split.
                ws.boost(cause::MEMORY_PRESSURE, 0.5, None);
                ws.boost(cause::FRAGMENTATION, 0.5, None);
            }
        } else {
            ws.boost(cause::FOREIGN_PROCESS, 0.2, None);
        }
    }
}

fn batch_size(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let Some((needed, budget)) = budget(ctx) else {
        return request_over_free(ctx);
    };
    if budget == 0 || needed <= budget {
        return None;
    }
    let factor = needed.div_ceil(budget).max(2);
    let req = d.int("requested_bytes").unwrap_or(needed);
    let head = format!(
        "The failing step needed about {} ({} already allocated + {} requested) but the process can use about {}",
        h(needed),
        h(d.int("allocated_bytes").unwrap_or(0)),
        h(req),
        h(budget)
    );
    let action = match d.first_progress().batch {
        Some(b) if b >= factor => format!(
            "lower the batch size from {b} to {} (÷{factor}), keeping the effective batch with {factor} gradient-accumulation steps",
            b / factor
        ),
        _ => format!(
            "divide the batch size (or the input size) by at least {factor}, keeping the effective batch with gradient accumulation"
        ),
    };
    Some(format!(
        "{head}: {action}. Check: the step runs, and `torch.cuda.max_memory_allocated()` stays below {}.",
        h(budget)
    ))
}

/// Where the message gives only the request and the free memory (no
/// per-process figures): how far the request is over what was free.
fn request_over_free(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let (req, free) = (d.int("requested_bytes")?, d.int("free_bytes")?);
    // Where another process holds the memory, the step is not the problem.
    if free == 0 || req <= free || d.int("other_process_bytes").is_some() {
        return None;
    }
    let factor = req.div_ceil(free).max(2);
    Some(format!(
        "The step asked for {} with only {} free on the GPU: divide the batch size (or the input size) by at least {factor}, keeping the effective batch with gradient accumulation. Check: the step runs.",
        h(req),
        h(free)
    ))
}

fn fragmentation(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let unalloc = d.int("reserved_unallocated_bytes")?;
    let req = d.int("requested_bytes")?;
    Some(format!(
        "Let the allocator grow segments instead of splitting them: `export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` ({} was reserved but unallocated when {} was requested). Check: if an out-of-memory error recurs, its \"reserved by PyTorch but unallocated\" figure is small.",
        h(unalloc),
        h(req)
    ))
}

fn foreign(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let t = d.int("total_bytes")?;
    let others = d.int("other_process_bytes").or_else(|| {
        let (f, p) = (d.int("free_bytes")?, d.int("process_bytes")?);
        Some(t.saturating_sub(f).saturating_sub(p))
    })?;
    // PyTorch names the first other process by its PID (NVML's, as
    // nvidia-smi on the node shows it): digits, or no PID (a user's
    // pattern may capture anything under that name).
    let pid = d
        .text("other_pid")
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if let (Some(pid), Some(held)) = (pid, d.int("other_process_bytes")) {
        return Some(format!(
            "Process {pid} held {} of the GPU's {} when this one ran out: if it is a stale job of yours, stop it with `kill {pid}` on that node (`nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` lists any others). Check: only your job's processes are listed before you restart.",
            h(held),
            h(t)
        ));
    }
    Some(format!(
        "Find what else holds the GPU (about {} of {} was used by other processes): `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` on that node, then stop the stale ones. Check: only your job's processes are listed before you restart.",
        h(others),
        h(t)
    ))
}

/// How much the failed step needed against what the process may use.
fn budget(ctx: &Ctx<'_>) -> Option<(u64, u64)> {
    let d = ctx.draft();
    let req = d.int("requested_bytes")?;
    let needed = req + d.int("allocated_bytes").unwrap_or(0);
    let budget = d.int("allowed_bytes").or_else(|| {
        let (t, f, p) = (
            d.int("total_bytes")?,
            d.int("free_bytes")?,
            d.int("process_bytes")?,
        );
        // What this process could use: its own share plus what is free.
        Some((p + f).min(t))
    })?;
    Some((needed, budget))
}
