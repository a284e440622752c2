//! The catalog's knowledge kept as data (`diagnosis.toml`): known
//! framework issues, what a path, a module name or a message's wording
//! tells.
//!
//! **Evidence:** `patterns/diagnosis.toml` (the knowledge table below)
//!
//! **Effect:** each entry's factors

use super::{seen, temper, Rule};
use crate::catalog::knowledge::{evidence, Read};
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    for rule in ctx
        .catalog
        .knowledge()
        .iter()
        .filter(|r| r.applies_to(&d.class))
    {
        if let Some(fw) = &rule.framework {
            if !ctx.env.values("framework").iter().any(|o| &o.value == fw) {
                continue;
            }
        }
        let mut inferred = false;
        let read: Vec<(String, u64)> = match &rule.read {
            Read::Fact(f) => d
                .facts
                .get(f)
                .map(|v| (v.to_string(), d.first.line))
                .into_iter()
                .collect(),
            Read::Message => vec![(d.message.clone(), d.first.line)],
            Read::Env(f) if f == "framework_version" => match ctx.env.framework_version() {
                Some(v) => {
                    inferred = v.inferred;
                    vec![(v.value.to_string(), v.line)]
                }
                None => Vec::new(),
            },
            Read::Env(f) => seen(ctx.env, f)
                .map(|(v, l)| (v.to_string(), l))
                .into_iter()
                .collect(),
            Read::Finding => ctx
                .drafts
                .iter()
                .enumerate()
                .filter(|(j, o)| *j != ctx.index && o.first.source == d.first.source)
                .map(|(_, o)| {
                    let id = &ctx.catalog.patterns()[o.pattern].id;
                    (format!("{} {id}", o.class), o.first.line)
                })
                .collect(),
        };
        let Some((m, value, line)) = read
            .iter()
            .find_map(|(v, l)| rule.regex.regex().find(v).map(|m| (m, v, *l)))
        else {
            continue;
        };
        for (cause, factor) in &rule.factors {
            let factor = &if inferred { temper(*factor) } else { *factor };
            if *factor >= 1.0 {
                let mut why = evidence(rule, m.as_str(), value, line);
                if inferred {
                    why.push_str(&format!(
                        " (the version is inferred from a build fingerprint on line {line}, so this counts for less)"
                    ));
                }
                let why = Some(why);
                if rule.add {
                    ws.add(cause, *factor, why);
                } else {
                    ws.boost(cause, *factor, why);
                }
            } else {
                ws.boost(cause, *factor, None);
            }
        }
    }
}
