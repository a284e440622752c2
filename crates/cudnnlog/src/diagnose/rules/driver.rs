//! The driver against the CUDA release the program uses.
//!
//! **Evidence:** the driver against the CUDA release's minimum
//! (`compat.toml`)
//!
//! **Effect:** below → `driver_too_old` ×20; at or above → ×0.3

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
        cause: cause::DRIVER_TOO_OLD,
        write: remedy,
    }],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let (Some((drv, dline)), Some((cuda, cline))) =
        (seen(ctx.env, "driver"), seen(ctx.env, "cuda"))
    else {
        return;
    };
    let Some(req) = ctx.catalog.compat().driver_for(cuda) else {
        return;
    };
    if cmp_versions(drv, &req.min_driver) == Ordering::Less {
        ws.add(
            cause::DRIVER_TOO_OLD,
            DEFINITIVE,
            Some(format!(
                "line {dline}: driver {drv} is older than the {} that CUDA {cuda} (line {cline}) needs",
                req.min_driver
            )),
        );
    } else {
        ws.boost(cause::DRIVER_TOO_OLD, 0.3, None);
    }
}

fn remedy(ctx: &Ctx<'_>) -> Option<String> {
    let env = ctx.env;
    let (drv, cuda) = (env.get("driver")?, env.get("cuda")?);
    let compat = ctx.catalog.compat();
    let req = compat.driver_for(cuda)?;
    if cmp_versions(drv, &req.min_driver) != Ordering::Less {
        return None;
    }
    let newest_ok = compat
        .driver
        .iter()
        .filter(|r| cmp_versions(drv, &r.min_driver) != Ordering::Less)
        .max_by(|a, b| cmp_versions(&a.cuda, &b.cuda))
        .map_or(String::new(), |r| {
            format!(
                ", or install a framework build for CUDA {} or older",
                r.cuda
            )
        });
    Some(format!(
        "Upgrade the NVIDIA driver to {} or newer (the node has {drv}; CUDA {cuda} needs it){newest_ok}. Check: `nvidia-smi` shows \"Driver Version: {}\" or higher.",
        req.min_driver, req.min_driver
    ))
}
