//! A library status (cuDNN, cuBLAS) with none of a bug's usual evidence
//! (a device-side assert, an illegal address, an index error nearby): the
//! user's code is a less likely cause than the priors say.
//!
//! **Evidence:** an error of a `library` class (cuDNN, cuBLAS) with no device-side assert,
//! illegal address or Python exception in the log
//!
//! **Effect:** `code_bug` ×0.6

use super::{Remedy, Rule};
use crate::catalog::ids::{cause, class};
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[Remedy {
        cause: cause::CODE_BUG,
        write: launch_blocking,
    }],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    let library = ctx.catalog.class(&d.class).is_some_and(|c| c.library);
    if !library || !d.is_error() {
        return;
    }
    let bug_sign = ctx.drafts.iter().any(|o| {
        o.first.source == d.first.source
            && matches!(
                o.class.as_str(),
                class::CUDA_DEVICE_ASSERT | class::CUDA_ILLEGAL_ADDRESS | class::PYTHON_EXCEPTION
            )
    });
    if !bug_sign {
        ws.boost(cause::CODE_BUG, 0.6, None);
    }
}

fn launch_blocking(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    if !matches!(
        d.class.as_str(),
        class::CUDA_DEVICE_ASSERT | class::CUDA_ILLEGAL_ADDRESS | class::CUDA_LAUNCH_FAILURE
    ) {
        return None;
    }
    // A kernel's failed check names the operation and what was out of
    // range: the pattern's advice for that check comes first.
    if d.text("assertion").is_some() {
        return None;
    }
    Some(
        "Rerun with synchronous kernel launches so the traceback points at the failing operation: `CUDA_LAUNCH_BLOCKING=1 python train.py`. Check: the new traceback ends at that operation; then fix its input (an index or label out of range, a wrong size).".to_string()
    )
}
