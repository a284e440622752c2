//! Remediations that fit the finding: gathered from the tailored ones, the
//! pattern's own and the likeliest causes', then filtered to the log's
//! framework, ordered (the framework's own advice before generic advice),
//! deduplicated by the commands they give, and their placeholders filled
//! from the finding's facts.
//!
//! A remediation belongs to a framework when it names one (markers in
//! `diagnosis.toml`'s `[[framework]]` tables: `torch.`, `TF_`, `jax.` …).
//! The failing message's stack is the log's framework, else the one its
//! message names or words (`wording`: PyTorch's "… when calling
//! `cublas…`"); advice for another framework is dropped, advice naming
//! none is generic and kept. Where no framework is known, a cause's
//! advice naming one is a guess and dropped (the pattern's own is kept);
//! a native program (a C, C++ or CUDA source line in its message) gets no
//! framework's advice. A pattern's remediation may say `{name}` for
//! one of its captures: the value is filled in, and a sentence whose
//! capture the message did not give is dropped.

use super::RankedCause;
use super::{Ctx, Draft};
use crate::catalog::remediation::placeholders;
use crate::catalog::Framework;
use std::collections::BTreeSet;

/// How many causes contribute their remediations, and how likely they must be.
const REMEDIATION_CAUSES: usize = 3;
const REMEDIATION_CONFIDENCE: f64 = 0.15;
/// The longest fact value written into a remediation.
const MAX_FILLED: usize = 120;

/// Tailored remediations first (by cause likelihood), then the pattern's
/// own (in the author's order), then those of the likeliest causes whose
/// remediations fit this class, each cause's with the framework's own
/// advice first; advice for other frameworks dropped, repeated commands
/// given once.
pub(crate) fn gather(ctx: &Ctx<'_>, ranked: &[RankedCause]) -> Vec<String> {
    let d = ctx.draft();
    let framework = framework_of(ctx);
    let likely: Vec<&RankedCause> = ranked
        .iter()
        .take(REMEDIATION_CAUSES)
        .filter(|c| c.confidence >= REMEDIATION_CONFIDENCE)
        .collect();
    let tailored: Vec<String> = likely
        .iter()
        .flat_map(|c| super::rules::tailored(ctx, &c.id))
        .collect();
    let captures = ctx.pattern.capture_names();
    let own: Vec<String> = ctx
        .pattern
        .remediations
        .iter()
        .filter_map(|r| fill(r, d, &captures))
        .collect();
    let family = d.family();
    let fw = match framework {
        Stack::Framework(f) => Some(f.id.as_str()),
        _ => None,
    };
    // Each likely cause's advice, the framework's own first.
    let shared = likely
        .iter()
        .filter_map(|c| ctx.catalog.cause(&c.id))
        .filter(|c| c.remediations_for.is_empty() || c.remediations_for.iter().any(|f| f == family))
        .flat_map(|c| {
            let (mine, generic): (Vec<&String>, Vec<&String>) = c
                .remediations
                .iter()
                .partition(|r| fw.is_some_and(|f| names(ctx, r).contains(&f)));
            mine.into_iter().chain(generic).cloned()
        });
    let mut out: Vec<String> = Vec::new();
    let mut given: BTreeSet<String> = BTreeSet::new();
    // The pattern's own advice was written for the frameworks whose
    // message it matches: in a Python program of no known framework it
    // stays; a cause's advice naming a framework would be a guess.
    let all = (tailored.into_iter().map(|r| (r, false)))
        .chain(own.into_iter().map(|r| (r, true)))
        .chain(shared.map(|r| (r, false)));
    for r in all
        .filter(|(r, own)| fits(ctx, r, framework, *own))
        .map(|(r, _)| r)
    {
        let commands = commands(&r);
        let repeated = !commands.is_empty() && commands.iter().all(|c| given.contains(c));
        if repeated || out.contains(&r) {
            continue;
        }
        given.extend(commands);
        out.push(r);
    }
    out
}

/// The ids of the frameworks a text names, by the catalog's markers.
fn names<'c>(ctx: &Ctx<'c>, text: &str) -> Vec<&'c str> {
    holding(ctx, text, |f| &f.markers)
        .into_iter()
        .map(|f| f.id.as_str())
        .collect()
}

/// The frameworks one of whose `words` (markers or wording) `text` holds.
fn holding<'c>(
    ctx: &Ctx<'c>,
    text: &str,
    words: fn(&Framework) -> &[String],
) -> Vec<&'c Framework> {
    ctx.catalog
        .frameworks()
        .iter()
        .filter(|f| words(f).iter().any(|w| text.contains(w.as_str())))
        .collect()
}

/// The stack the failing message comes from, as far as the log tells.
#[derive(Clone, Copy, Debug)]
enum Stack<'a> {
    /// A framework: the environment's, else the one the message names or
    /// words (when exactly one).
    Framework(&'a Framework),
    /// No known framework: the pattern's own advice (written for the
    /// frameworks whose message it matches) and generic advice; a cause's
    /// advice naming a framework would be a guess.
    Unknown,
    /// A native program (its message names a C, C++ or CUDA source line,
    /// or the loader refused to start it): no framework's advice fits.
    Native,
}

fn framework_of<'c>(ctx: &Ctx<'c>) -> Stack<'c> {
    let frameworks = ctx.catalog.frameworks();
    if let Some(v) = ctx.env.get("framework") {
        if let Some(f) = frameworks
            .iter()
            .find(|f| f.id == v || f.aliases.iter().any(|a| a == v))
        {
            return Stack::Framework(f);
        }
    }
    let message = &ctx.draft().message;
    let one = |found: Vec<&'c Framework>| (found.len() == 1).then(|| found[0]);
    if let Some(f) = one(holding(ctx, message, |f| &f.markers))
        .or_else(|| one(holding(ctx, message, |f| &f.wording)))
    {
        return Stack::Framework(f);
    }
    if native(&ctx.draft().message) {
        Stack::Native
    } else {
        Stack::Unknown
    }
}

/// Whether a message is a native program's own: it names a C, C++ or CUDA
/// source line (`CUDA error at g05.cu:11: …`, `Check failed` at
/// `conv.cc:97`), or the dynamic loader refused to start the program.
fn native(message: &str) -> bool {
    const SOURCES: [&str; 6] = [".cu:", ".cuh:", ".cpp:", ".cc:", ".c:", ".hpp:"];
    let at_line = SOURCES.iter().any(|s| {
        message
            .match_indices(s)
            .any(|(i, _)| message[i + s.len()..].starts_with(|c: char| c.is_ascii_digit()))
    });
    at_line || message.contains("error while loading shared libraries")
}

/// Whether a remediation applies to the failing message's stack: it names
/// no framework, or names the stack's framework; where no framework is
/// known, the pattern's `own` advice too.
fn fits(ctx: &Ctx<'_>, r: &str, stack: Stack<'_>, own: bool) -> bool {
    let named = names(ctx, r);
    match stack {
        Stack::Framework(f) => {
            (named.is_empty() || named.contains(&f.id.as_str())) && (f.python || !runs_python(r))
        }
        Stack::Unknown => own || named.is_empty(),
        Stack::Native => named.is_empty() && !runs_python(r),
    }
}

/// Whether a remediation's commands run Python (`python train.py`,
/// `PYTHONFAULTHANDLER=1`, `python -c …`): advice for a Python program,
/// which a Lua, Julia or C++ program cannot follow.
fn runs_python(r: &str) -> bool {
    r.split('`').skip(1).step_by(2).any(|c| {
        c.split_whitespace()
            .any(|w| w == "python" || w == "python3" || w.starts_with("PYTHON"))
    })
}

/// The commands and settings a remediation gives (its code spans), with
/// `export ` and spacing normalised, so that the same advice in other words
/// is given once.
fn commands(r: &str) -> Vec<String> {
    r.split('`')
        .skip(1)
        .step_by(2)
        .map(|c| {
            let c = c.trim();
            c.strip_prefix("export ")
                .unwrap_or(c)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| c.len() >= 8)
        .collect()
}

/// The remediation with its captures filled in; sentences naming a capture
/// the finding lacks are dropped (the whole remediation when none is left).
fn fill(r: &str, d: &Draft, captures: &BTreeSet<String>) -> Option<String> {
    let used: Vec<String> = placeholders(r)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| captures.contains(n))
        .collect();
    if used.is_empty() {
        return Some(r.to_string());
    }
    let value = |n: &str| {
        // A size reads as the log would print it, not as a byte count.
        let v = match d.facts.get(n)? {
            crate::facts::Fact::Int(b) if n.ends_with("_bytes") => crate::facts::human_bytes(*b),
            f => f.to_string(),
        };
        Some(clip(
            &v.chars().filter(|c| !c.is_control()).collect::<String>(),
        ))
    };
    let kept: Vec<String> = crate::text::sentences(r)
        .into_iter()
        .filter_map(|s| fill_sentence(s, &used, &value))
        .collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// One sentence with the placeholders `used` filled by `value` (`None`
/// when a value is missing), keeping its code spans whatever the values
/// hold: a value with a backtick is its own [`code_span`] in the text,
/// and a code span it lands in is re-fenced for it.
///
/// [`code_span`]: crate::text::code_span
fn fill_sentence(
    s: &str,
    used: &[String],
    value: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let parts: Vec<&str> = s.split('`').collect();
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        // A span is closed when a backtick follows it.
        let code = i % 2 == 1 && i + 1 < parts.len();
        let mut filled = part.to_string();
        let mut ticked = false;
        for n in used {
            let key = format!("{{{n}}}");
            if !filled.contains(&key) {
                continue;
            }
            let v = value(n)?;
            let v = if v.contains('`') && !code {
                crate::text::code_span(&v)
            } else {
                v
            };
            ticked |= code && v.contains('`');
            filled = filled.replace(&key, &v);
        }
        match (code, ticked) {
            (true, true) => out.push_str(&crate::text::code_span(&filled)),
            (true, false) => {
                out.push('`');
                out.push_str(&filled);
                out.push('`');
            }
            (false, _) => {
                if i % 2 == 1 {
                    // The backtick that opens no span, as written.
                    out.push('`');
                }
                out.push_str(&filled);
            }
        }
    }
    Some(out)
}

fn clip(s: &str) -> String {
    let cut = crate::text::truncate(s, MAX_FILLED);
    if cut.len() < s.len() {
        format!("{cut}…")
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_normalised() {
        assert_eq!(
            commands("Set `export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` now"),
            ["PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
        );
        assert!(commands("`x`").is_empty());
    }

    #[test]
    fn a_value_with_backticks_never_changes_the_code_spans() {
        let used = ["cond".to_string(), "pid".to_string()];
        let value = |n: &str| match n {
            "cond" => Some("a` [x](y)".to_string()),
            "pid" => Some("12".to_string()),
            _ => None,
        };
        assert_eq!(
            fill_sentence("Read {cond}, then `kill {pid}` and `x`.", &used, &value).unwrap(),
            "Read ``a` [x](y)``, then `kill 12` and `x`."
        );
        assert_eq!(
            fill_sentence("Check `grep {cond} f` now.", &used, &value).unwrap(),
            "Check ``grep a` [x](y) f`` now."
        );
        assert_eq!(
            fill_sentence("An unclosed ` {pid}", &used, &value).unwrap(),
            "An unclosed ` 12"
        );
        assert_eq!(
            fill_sentence("Needs {gone}.", &["gone".into()], &value),
            None
        );
    }
}
