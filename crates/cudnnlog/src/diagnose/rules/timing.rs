//! When the failure happened: at the very first step (set-up: versions and
//! libraries), always at the same step (an input), or mid-run.
//!
//! **Evidence:** the step and epoch before the failure
//!
//! **Effect:** a cuDNN failure before any training step (step 0, or none
//! yet after the framework started) → `version_mismatch`,
//! `library_conflict`, `library_missing`, `arch_unsupported` ×2; the same
//! step twice, more than 200 lines apart (a restarted job failing again) →
//! `input_shape` ×2.5; a failure of a `gpu` class (CUDA, cuDNN, cuBLAS) mid-run (step or
//! epoch > 0) → `framework_bug` ×1.5, `memory_pressure`, `fragmentation`,
//! `input_shape` ×1.3, `hardware_fault` ×1.2 and the set-up causes
//! (`version_mismatch`, `library_conflict`, `library_missing`,
//! `driver_too_old`, `arch_unsupported`) ×0.5

use super::{is_cudnn_or_conv, Rule};
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[],
};

/// Lines between two occurrences at the same step for them to count as two
/// incidents (a restarted job failing again), not lines of one.
const RESTART_GAP: u64 = 200;

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    if !d.is_error() {
        return;
    }
    // "Before any training step": the last marker says step or epoch 0, or
    // there is none yet although the framework has started (its version is
    // in the log) — a bare program's log says nothing about training.
    let early = match (d.first_progress().step, d.first_progress().epoch) {
        (None, None) => ctx
            .env
            .values("framework_version")
            .first()
            .is_some_and(|o| o.first.byte <= d.first.byte),
        (s, e) => s.unwrap_or(0) == 0 && e.unwrap_or(0) == 0,
    };
    let memory_in_use = d.int("allocated_bytes").or(d.int("process_bytes"));
    if early && memory_in_use.is_none_or(|b| b < 2 << 30) && is_cudnn_or_conv(&d.class) {
        let why = format!(
            "line {}: it failed at the start, before any training step, with little memory in use",
            d.first.line
        );
        ws.boost(cause::VERSION_MISMATCH, 2.0, Some(why));
        ws.boost(cause::LIBRARY_CONFLICT, 2.0, None);
        ws.boost(cause::LIBRARY_MISSING, 2.0, None);
        ws.boost(cause::ARCH_UNSUPPORTED, 2.0, None);
    }
    // The same step twice, far apart: the job was restarted (resumed) and
    // failed at the same place again. Lines of one incident are close.
    if d.count > 1
        && d.first_progress().step.is_some()
        && d.first_progress().step == d.last_progress().step
        && d.last.line.saturating_sub(d.first.line) > RESTART_GAP
    {
        ws.boost(
            cause::INPUT_SHAPE,
            2.5,
            Some(format!(
                "{} occurrences, all at step {}",
                d.count,
                d.first_progress().step.unwrap_or_default()
            )),
        );
    }
    // Mid-run, after steps that worked: the set-up was sound (the same
    // libraries ran the earlier steps), so what changed is the data or the
    // memory.
    let progressed = d
        .first_progress()
        .step
        .filter(|&s| s > 0)
        .map(|s| ("step", s));
    let progressed = progressed.or(d
        .first_progress()
        .epoch
        .filter(|&e| e > 0)
        .map(|e| ("epoch", e)));
    if let Some((unit, n)) = progressed {
        if ctx.catalog.class(&d.class).is_some_and(|c| c.gpu) {
            let why = format!(
                "line {}: it failed mid-run ({unit} {n}), after earlier {unit}s worked",
                d.first.line
            );
            ws.boost(cause::MEMORY_PRESSURE, 1.3, Some(why.clone()));
            ws.boost(cause::FRAGMENTATION, 1.3, None);
            ws.boost(cause::INPUT_SHAPE, 1.3, Some(why.clone()));
            ws.boost(cause::FRAMEWORK_BUG, 1.5, Some(why));
            ws.boost(cause::HARDWARE_FAULT, 1.2, None);
            for setup in [
                cause::VERSION_MISMATCH,
                cause::LIBRARY_CONFLICT,
                cause::LIBRARY_MISSING,
                cause::DRIVER_TOO_OLD,
                cause::ARCH_UNSUPPORTED,
            ] {
                ws.boost(setup, 0.5, None);
            }
        }
    }
}
