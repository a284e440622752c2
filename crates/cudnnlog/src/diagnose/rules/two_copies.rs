//! Two different cuDNN versions in one log: two copies of the library on
//! the machine, and the process may load either. Versions first seen on one
//! line are one message naming both (compiled with X, loaded Y): that is
//! the mismatch rule's evidence, not two sightings of two copies.
//!
//! **Evidence:** two cuDNN versions in the environment, first seen on
//! different lines (one message naming both is the mismatch rule's)
//!
//! **Effect:** `library_conflict` ×4, `version_mismatch` ×1.5

use super::{is_cudnn_or_conv, Remedy, Rule};
use crate::catalog::ids::{cause, class};
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[Remedy {
        cause: cause::LIBRARY_CONFLICT,
        write: |ctx| conflict(ctx).or_else(|| super::framework_bundle::reinstall(ctx)),
    }],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let class = &ctx.draft().class;
    if !(is_cudnn_or_conv(class)
        || class == class::PROC_SEGFAULT
        || class == class::CUDA_NO_KERNEL_IMAGE)
    {
        return;
    }
    let copies = ctx.env.values("cudnn");
    if copies.len() < 2 || copies.iter().all(|o| o.first.line == copies[0].first.line) {
        return;
    }
    let listed: Vec<String> = copies
        .iter()
        .map(|o| format!("{} (line {})", o.value, o.first.line))
        .collect();
    let why = format!(
        "the log shows {} cuDNN versions: {}",
        copies.len(),
        listed.join(", ")
    );
    ws.add(cause::LIBRARY_CONFLICT, 4.0, Some(why.clone()));
    ws.boost(cause::VERSION_MISMATCH, 1.5, None);
}

fn conflict(ctx: &Ctx<'_>) -> Option<String> {
    let copies = ctx.env.values("cudnn");
    if copies.len() < 2 {
        return None;
    }
    let listed: Vec<String> = copies
        .iter()
        .map(|o| format!("{} (line {})", o.value, o.first.line))
        .collect();
    Some(format!(
        "Keep one cuDNN: the log shows {}. See which one the process loads with `python -c \"import torch; print(torch.backends.cudnn.version())\"` and where copies live with `ldconfig -p | grep libcudnn`; drop the other from `LD_LIBRARY_PATH` (or run `env -u LD_LIBRARY_PATH python train.py`). Check: the version it reports matches the one the framework was built with.",
        listed.join(" and ")
    ))
}
