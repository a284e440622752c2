//! Documents generated from the catalog, so they cannot drift from it.
//!
//! `cargo xtask docs` rewrites the README's class table (between the
//! `<!-- classes:begin … -->` and `<!-- classes:end -->` markers): every
//! class the built-in catalog declares, its title, how many patterns report
//! it, and the bundled real or synthetic logs whose golden report shows it
//! (`fixtures/*/NAME.expected.json`). `cargo xtask docs --check` fails when
//! the file on disk differs, as `.ci/run` does.

use anyhow::{bail, Context as _, Result};
use cudnnlog::Catalog;
use std::collections::BTreeMap;
use std::path::Path;

const BEGIN: &str = "<!-- classes:begin";
const END: &str = "<!-- classes:end -->";

/// The fixture logs whose golden reports show each class, by directory.
fn proven_on(root: &Path) -> Result<BTreeMap<String, Vec<(String, String)>>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for dir in ["real", "gpu", "derived", "synthetic"] {
        let d = root.join("fixtures").join(dir);
        let mut names: Vec<_> = std::fs::read_dir(&d)
            .with_context(|| format!("reading {}", d.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".expected.json"))
            .collect();
        names.sort();
        for name in names {
            let text = std::fs::read_to_string(d.join(&name))?;
            let report: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("parsing {}", d.join(&name).display()))?;
            let log = name.replace(".expected.json", ".log");
            let mut classes: Vec<&str> = report["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["class"].as_str())
                .collect();
            classes.dedup();
            for c in classes {
                let kind = if dir == "synthetic" {
                    "synthetic"
                } else {
                    "real"
                };
                let entry = out.entry(c.to_string()).or_default();
                if !entry.iter().any(|(_, l)| *l == log) {
                    entry.push((kind.to_string(), log.clone()));
                }
            }
        }
    }
    Ok(out)
}

/// The class table, as markdown.
pub fn class_table(root: &Path) -> Result<String> {
    let catalog = Catalog::builtin()?;
    let proven = proven_on(root)?;
    // Wild cases whose label lists the class (and whose report has it).
    let mut wild: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let cases = crate::eval::load(&root.join("fixtures/wild"))?;
    let scores = crate::eval::score(&cases)?;
    for r in &scores.cases {
        for c in &r.found {
            wild.entry(c.clone())
                .or_default()
                .push(format!("wild/{}", &r.name[..3]));
        }
    }
    let mut t =
        String::from("| class | what the log shows | patterns | proven on |\n|---|---|---|---|\n");
    for c in catalog.classes() {
        let n = catalog
            .patterns()
            .iter()
            .filter(|p| p.class == c.id)
            .count();
        let logs = proven.get(&c.id).map(Vec::as_slice).unwrap_or(&[]);
        let real: Vec<&str> = logs
            .iter()
            .filter(|(k, _)| k == "real")
            .map(|(_, l)| l.as_str())
            .collect();
        let synthetic: Vec<&str> = logs
            .iter()
            .filter(|(k, _)| k == "synthetic")
            .map(|(_, l)| l.as_str())
            .collect();
        let list = |v: &[&str]| {
            let shown: Vec<String> = v.iter().take(2).map(|l| format!("`{l}`")).collect();
            format!(
                "{}{}",
                shown.join(", "),
                if v.len() > 2 { " …" } else { "" }
            )
        };
        let on = if !real.is_empty() {
            format!("real: {}", list(&real))
        } else if let Some(cases) = wild.get(&c.id) {
            let cases: Vec<&str> = cases.iter().map(String::as_str).collect();
            format!("real, from public threads: {}", list(&cases))
        } else if !synthetic.is_empty() {
            format!("synthetic: {}", list(&synthetic))
        } else {
            "catalog examples only (no capture here reproduces it)".to_string()
        };
        t.push_str(&format!("| `{}` | {} | {n} | {on} |\n", c.id, c.title));
    }
    Ok(t)
}

/// Replaces the text between `begin…-->` and `end` in the file at `path`
/// with `body`; with `check`, fails instead when it differs.
fn splice(path: &Path, begin: &str, end: &str, body: &str, check: bool) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let Some(b) = text.find(begin) else {
        bail!("{}: no `{begin}` marker", path.display());
    };
    let open_end = b + text[b..].find("-->").context("unterminated begin marker")? + 3;
    let Some(e) = text[open_end..].find(end).map(|e| open_end + e) else {
        bail!("{}: no `{end}` marker", path.display());
    };
    let fresh = format!("{}\n{}{}", &text[..open_end], body, &text[e..]);
    if fresh == text {
        return Ok(());
    }
    if check {
        bail!("{} is stale: run `cargo xtask docs`", path.display());
    }
    std::fs::write(path, fresh).with_context(|| format!("writing {}", path.display()))
}

/// Rewrites (or, with `check`, compares) every generated part: the
/// README's class table and `docs/accuracy.md`'s current figures.
pub fn run(root: &Path, check: bool) -> Result<()> {
    let cases = crate::eval::load(&root.join("fixtures/wild"))?;
    let scores = crate::eval::score(&cases)?;
    let figures = format!("```\n{}```\n", crate::eval::render(&scores, true));
    splice(
        &root.join("docs/accuracy.md"),
        "<!-- eval:begin",
        "<!-- eval:end -->",
        &figures,
        check,
    )?;
    splice(
        &root.join("README.md"),
        BEGIN,
        END,
        &class_table(root)?,
        check,
    )
}
