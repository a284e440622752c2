//! A named culprit that is not another finding's rank (that case is
//! fallout, explained there). Ranks out of step — one had not reached the
//! collective its peers waited in — point at work only some ranks do (data
//! loading, evaluation, checkpointing, a rank-dependent branch): the public
//! threads on watchdog timeouts were fixed in the training code about as
//! often as in the network. Other culprits (torchrun's first failure) say
//! the ranks did not meet, without saying why.
//!
//! **Evidence:** a distributed finding's named culprit (§ below)
//!
//! **Effect:** a rank out of step (named by a barrier, behind the
//! wavefront, silent, behind in steps) → `code_bug` ×1.5: work only it did;
//! otherwise `comm_failure` ×1.5; with the culprit's reason

use super::{Remedy, Rule};
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[Remedy {
        cause: cause::COMM_FAILURE,
        write: culprit_first,
    }],
};

/// The factor for a culprit rank that fell behind its peers.
const LAGGARD: f64 = 1.5;

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let Some(c) = ctx.culprit else {
        return;
    };
    let d = &ctx.drafts[ctx.index];
    if !ctx.catalog.class(&d.class).is_some_and(|k| k.distributed) {
        return;
    }
    let line = c.evidence.first().map_or(0, |e| e.line);
    if c.basis.is_laggard() {
        ws.boost(
            cause::CODE_BUG,
            LAGGARD,
            Some(format!("line {line}: {} (ranks out of step)", c.reason)),
        );
    } else {
        ws.boost(
            cause::COMM_FAILURE,
            1.5,
            Some(format!("line {line}: {}", c.reason)),
        );
    }
}

/// Start with the rank at fault, where the log names it.
fn culprit_first(ctx: &Ctx<'_>) -> Option<String> {
    let c = ctx.culprit?;
    // Waiting ranks and their collectives: a distributed finding's advice.
    if !ctx
        .catalog
        .class(&ctx.draft().class)
        .is_some_and(|k| k.distributed)
    {
        return None;
    }
    let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
    let who = match ranks.len() {
        1 => format!("rank {}", ranks[0]),
        _ => format!("ranks {}", ranks.join(", ")),
    };
    let at = c
        .evidence
        .iter()
        .map(|e| e.line)
        .min()
        .map_or(String::new(), |l| format!(" (line {l})"));
    let host = c
        .hosts
        .first()
        .map_or(String::new(), |h| format!(" on {h}"));
    Some(format!(
        "Start with {who}{host}: the others waited for it{at}. Fix what it was doing then (a slow data loader, evaluation or checkpointing only on that rank, a hang, an error of its own); the ranks that report the timeout are victims. Check: after the fix every rank reaches the same collective sequence number."
    ))
}
