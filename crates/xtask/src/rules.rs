//! The evidence rules' table in `docs/diagnosis.md`, generated from the
//! rule files themselves (`crates/cudnnlog/src/diagnose/rules/`), and
//! `cargo xtask new-rule`, which scaffolds one.
//!
//! A rule's documentation is its file's module comment: a first paragraph
//! saying what it reads and why, then `**Evidence:**` and `**Effect:**`
//! paragraphs. The table lists the rules in the order of the `RULES` table
//! in `rules/mod.rs` (the order they run), with the causes each writes a
//! tailored remediation for (`cause: cause::NAME` in its `Remedy` list).

use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};

/// Where the rule files are, from the workspace root.
pub const RULES_DIR: &str = "crates/cudnnlog/src/diagnose/rules";

/// One rule's documentation, read from its file.
#[derive(Debug, PartialEq, Eq)]
pub struct RuleDoc {
    /// The file's name without `.rs`.
    pub id: String,
    /// What it reads and why (the module comment's first paragraph).
    pub summary: String,
    /// The `**Evidence:**` paragraph.
    pub evidence: String,
    /// The `**Effect:**` paragraph.
    pub effect: String,
    /// The cause ids its remedies are for.
    pub remedies: Vec<String>,
}

/// The rule ids in `RULES` order, from `rules/mod.rs`.
pub fn order(mod_rs: &str) -> Result<Vec<String>> {
    let start = mod_rs
        .find("pub(crate) const RULES")
        .context("rules/mod.rs: no `RULES` table")?;
    let body = &mod_rs[start..];
    let end = body
        .find("];")
        .context("rules/mod.rs: unterminated `RULES`")?;
    Ok(body[..end]
        .lines()
        .filter_map(|l| l.trim().strip_suffix("::RULE,"))
        .map(str::to_string)
        .collect())
}

/// The documentation of the rule in file `id`, from its text.
pub fn parse(id: &str, text: &str) -> Result<RuleDoc> {
    let comment: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .map(|l| l.trim_start_matches("//!").trim())
        .collect();
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in comment.iter().chain([&""]) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    let labelled = |label: &str| {
        paragraphs
            .iter()
            .find_map(|p| p.strip_prefix(&format!("**{label}:** ")))
            .map(str::to_string)
            .with_context(|| {
                format!("rule `{id}`: its module comment has no **{label}:** paragraph")
            })
    };
    let summary = paragraphs
        .first()
        .filter(|p| !p.starts_with("**"))
        .cloned()
        .with_context(|| format!("rule `{id}`: its module comment does not say what it reads"))?;
    let remedies = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cause: cause::"))
        .map(|c| c.trim_end_matches(',').to_ascii_lowercase())
        .collect();
    Ok(RuleDoc {
        id: id.to_string(),
        summary,
        evidence: labelled("Evidence")?,
        effect: labelled("Effect")?,
        remedies,
    })
}

/// Every rule's documentation, in `RULES` order; an error names a file
/// that is not in the table or a table line with no file.
pub fn load(root: &Path) -> Result<Vec<RuleDoc>> {
    let dir = root.join(RULES_DIR);
    let read = |p: PathBuf| {
        std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))
    };
    let ids = order(&read(dir.join("mod.rs"))?)?;
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".rs")
                .map(str::to_string)
        })
        .filter(|n| n != "mod")
        .collect();
    files.sort();
    let mut listed = ids.clone();
    listed.sort();
    if files != listed {
        bail!(
            "{}: the rule files {files:?} and the `RULES` table {listed:?} differ",
            dir.display()
        );
    }
    ids.iter()
        .map(|id| parse(id, &read(dir.join(format!("{id}.rs")))?))
        .collect()
}

/// The rules' table, as markdown.
pub fn table(root: &Path) -> Result<String> {
    let mut t = String::from(
        "| rule | reads | evidence | effect | tailored remediation for |\n|---|---|---|---|---|\n",
    );
    for r in load(root)? {
        let remedies: Vec<String> = r.remedies.iter().map(|c| format!("`{c}`")).collect();
        t.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.summary.replace('|', "\\|"),
            r.evidence.replace('|', "\\|"),
            r.effect.replace('|', "\\|"),
            if remedies.is_empty() {
                "–".to_string()
            } else {
                remedies.join(", ")
            }
        ));
    }
    Ok(t)
}

/// The file `cargo xtask new-rule` writes: a rule that compiles, runs and
/// changes nothing until its `weigh` is written.
fn template(id: &str) -> String {
    format!(
        r#"//! TODO: what this rule reads, and why it tells a cause (one paragraph:
//! it is the rule's row in docs/diagnosis.md).
//!
//! **Evidence:** TODO: the facts, environment fields or findings it reads.
//!
//! **Effect:** TODO: each cause it scales and by how much (`cause` ×N).

use super::Rule;
use crate::diagnose::{{Ctx, Weights}};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {{
    weigh,
    remedies: &[],
}};

/// `{id}`: scales the causes of `ctx`'s finding by what the log shows
/// (`ws.boost(cause::X, factor, Some(why))` with the line it saw).
fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {{
    let _ = (ctx.draft(), ws);
}}
"#
    )
}

/// Scaffolds rule `id`: writes `rules/<id>.rs` and adds it to `mod.rs`
/// (its `mod` line and its line at the end of `RULES`). Returns the files
/// written.
pub fn new_rule(root: &Path, id: &str) -> Result<Vec<PathBuf>> {
    let valid = !id.is_empty()
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid || id == "mod" {
        bail!("a rule id is a Rust module name in snake_case (`two_copies`), not `{id}`");
    }
    let dir = root.join(RULES_DIR);
    let file = dir.join(format!("{id}.rs"));
    if file.exists() {
        bail!("{} exists already", file.display());
    }
    let mod_path = dir.join("mod.rs");
    let text = std::fs::read_to_string(&mod_path)
        .with_context(|| format!("reading {}", mod_path.display()))?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // `mod` lines are sorted: the new one goes before the first that sorts after it.
    let mods: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("mod ") && lines[i].ends_with(';'))
        .collect();
    let (&first, &last) = mods
        .first()
        .zip(mods.last())
        .context("rules/mod.rs: no `mod` lines")?;
    let at = mods
        .iter()
        .copied()
        .find(|&i| lines[i].as_str() > format!("mod {id};").as_str())
        .unwrap_or(last + 1)
        .max(first);
    lines.insert(at, format!("mod {id};"));
    let table = lines
        .iter()
        .position(|l| l.starts_with("pub(crate) const RULES"))
        .context("rules/mod.rs: no `RULES` table")?;
    let close = (table..lines.len())
        .find(|&i| lines[i] == "];")
        .context("rules/mod.rs: unterminated `RULES`")?;
    lines.insert(close, format!("    {id}::RULE,"));
    std::fs::write(&file, template(id)).with_context(|| format!("writing {}", file.display()))?;
    std::fs::write(&mod_path, lines.join("\n") + "\n")
        .with_context(|| format!("writing {}", mod_path.display()))?;
    Ok(vec![file, mod_path])
}
