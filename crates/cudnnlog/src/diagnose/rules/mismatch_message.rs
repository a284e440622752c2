//! Versions inside the message itself: built with one, loaded another.
//!
//! **Evidence:** `loaded_version` ≠ `compiled_version` captured from the
//! message
//!
//! **Effect:** `version_mismatch` ×3

use super::Rule;
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    let version = |name| {
        d.text(name)
            .map(|v| crate::fields::normalize("cudnn", v).unwrap_or_else(|| v.to_string()))
    };
    if let (Some(loaded), Some(compiled)) = (version("loaded_version"), version("compiled_version"))
    {
        if loaded != compiled {
            ws.add(
                cause::VERSION_MISMATCH,
                3.0,
                Some(format!(
                    "line {}: built with cuDNN {compiled}, loaded {loaded}",
                    d.first.line
                )),
            );
        }
    }
}
