//! The GPU's architecture against the CUDA and cuDNN in use.
//!
//! **Evidence:** the GPU (by compute capability or model name) against the
//! first CUDA/cuDNN that support it
//!
//! **Effect:** below → `arch_unsupported` ×20; Ampere with cuDNN < 8.4 (the
//! seed documents' advice) → `arch_unsupported` ×3, `version_mismatch`
//! ×1.5; supported → ×0.3

use super::{seen, Remedy, Rule, DEFINITIVE};
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};
use crate::fields::cmp_versions;
use std::cmp::Ordering;

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[Remedy {
        cause: cause::ARCH_UNSUPPORTED,
        write: arch,
    }],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let compat = ctx.catalog.compat();
    let env = ctx.env;
    let arch = seen(env, "compute_capability")
        .and_then(|(cc, _)| compat.arch_of_capability(cc))
        .or_else(|| seen(env, "gpu").and_then(|(g, _)| compat.arch_of_gpu(g)));
    let Some(arch) = arch else {
        return;
    };
    let gpu = seen(env, "gpu").map_or(arch.arch.clone(), |(g, _)| g.to_string());
    let mut unsupported = false;
    if let Some((cudnn, line)) = seen(env, "cudnn") {
        if cmp_versions(cudnn, &arch.min_cudnn) == Ordering::Less {
            unsupported = true;
            ws.add(
                cause::ARCH_UNSUPPORTED,
                DEFINITIVE,
                Some(format!(
                    "line {line}: cuDNN {cudnn} predates {} support for {gpu} ({}; first supported by cuDNN {})",
                    arch.arch, arch.compute_capability.join("/"), arch.min_cudnn
                )),
            );
        } else if arch.arch == "ampere" && cmp_versions(cudnn, "8.4") == Ordering::Less {
            // The seed documents' advice: Ampere with cuDNN before 8.4 often
            // fails to build execution plans for some convolutions.
            ws.add(
                cause::ARCH_UNSUPPORTED,
                3.0,
                Some(format!(
                    "line {line}: cuDNN {cudnn} on an Ampere GPU ({gpu}); releases before 8.4 handle some Ampere convolutions poorly"
                )),
            );
            ws.boost(cause::VERSION_MISMATCH, 1.5, None);
        }
    }
    if let Some((cuda, line)) = seen(env, "cuda") {
        if cmp_versions(cuda, &arch.min_cuda) == Ordering::Less {
            unsupported = true;
            ws.add(
                cause::ARCH_UNSUPPORTED,
                DEFINITIVE,
                Some(format!(
                    "line {line}: CUDA {cuda} predates {} support for {gpu} (first supported by CUDA {})",
                    arch.arch, arch.min_cuda
                )),
            );
        }
    }
    if !unsupported {
        ws.boost(cause::ARCH_UNSUPPORTED, 0.3, None);
    }
}

fn arch(ctx: &Ctx<'_>) -> Option<String> {
    let compat = ctx.catalog.compat();
    let gpu = ctx.env.get("gpu")?;
    let a = compat.arch_of_gpu(gpu)?;
    Some(format!(
        "Use a build that supports the {gpu} ({} architecture, compute capability {}): CUDA {} or newer and cuDNN {} or newer. Check: `python -c \"import torch; print(torch.cuda.get_arch_list())\"` lists sm_{}.",
        a.arch,
        a.compute_capability.join("/"),
        a.min_cuda,
        a.min_cudnn,
        a.compute_capability
            .first()
            .map_or(String::new(), |c| c.replace('.', ""))
    ))
}
