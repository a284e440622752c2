//! Other findings of the same source: an out-of-memory error near a cuDNN
//! failure points at memory.
//!
//! **Evidence:** an out-of-memory finding within 2000 lines of a cuDNN or
//! cuBLAS failure
//!
//! **Effect:** `memory_pressure` ×3, `version_mismatch` ×0.6

use super::{is_cudnn_or_conv, Rule};
use crate::catalog::ids::{cause, class};
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    if !is_cudnn_or_conv(&d.class) && d.class != class::CUBLAS_ERROR {
        return;
    }
    let near = ctx.drafts.iter().find(|o| {
        matches!(o.class.as_str(), class::CUDA_OOM | class::HOST_OOM)
            && o.first.source == d.first.source
            && o.first.line.abs_diff(d.first.line) <= 2000
    });
    if let Some(o) = near {
        ws.add(
            cause::MEMORY_PRESSURE,
            3.0,
            Some(format!(
                "line {}: an out-of-memory error ({}) near this failure",
                o.first.line, o.class
            )),
        );
        ws.boost(cause::VERSION_MISMATCH, 0.6, None);
    }
}
