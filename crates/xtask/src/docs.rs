//! Documents generated from the catalog, so they cannot drift from it.
//!
//! `cargo xtask docs` rewrites the README's class table (between the
//! `<!-- classes:begin … -->` and `<!-- classes:end -->` markers): every
//! class the built-in catalog declares, its title, how many patterns report
//! it, and the bundled real or synthetic logs whose golden report shows it
//! (`fixtures/*/NAME.expected.json`). `cargo xtask docs --check` fails when
//! the file on disk differs, as `.ci/run` does. It also writes
//! `docs/classes.md` (a section per class and its patterns) and the current
//! figures of `docs/accuracy.md`.

use anyhow::{bail, Context as _, Result};
use cudnnlog::Catalog;
use std::collections::BTreeMap;
use std::path::Path;

const BEGIN: &str = "<!-- classes:begin";
const END: &str = "<!-- classes:end -->";

/// The fixture logs whose golden reports show each class, by directory.
fn proven_on(root: &Path) -> Result<BTreeMap<String, Vec<(String, String)>>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let fixtures = root.join("fixtures");
    let mut dirs: Vec<(std::path::PathBuf, String)> = ["real", "gpu", "derived", "synthetic"]
        .iter()
        .map(|d| (fixtures.join(d), String::new()))
        .collect();
    // The multi-rank captures, a folder per scenario: `multirank/m07_…/console.log`.
    let multirank = fixtures.join("gpu/multirank");
    let mut scenarios: Vec<_> = std::fs::read_dir(&multirank)
        .with_context(|| format!("reading {}", multirank.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    scenarios.sort();
    dirs.extend(
        scenarios
            .into_iter()
            .map(|n| (multirank.join(&n), format!("multirank/{n}/"))),
    );
    for (d, label) in dirs {
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
            let log = format!("{label}{}", name.replace(".expected.json", ".log"));
            let mut classes: Vec<&str> = report["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["class"].as_str())
                .collect();
            classes.dedup();
            for c in classes {
                let kind = if d.ends_with("synthetic") {
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

/// `docs/classes.md`: a section per class (what it means, its patterns and
/// what each matches), the same text `cudnnlog explain` prints.
pub fn classes_page() -> Result<String> {
    let catalog = Catalog::builtin()?;
    let mut out = String::from(
        "# Classes and patterns\n\n<!-- generated by `cargo xtask docs` from patterns/; edit the catalog, not this page -->\n\n",
    );
    out.push_str("Every class the built-in catalog reports, with the patterns that report it. `cudnnlog explain ID` prints the same text for a class, a pattern or a cause.\n");
    for c in catalog.classes() {
        out.push_str(&format!("\n## `{}` — {}\n\n{}\n", c.id, c.title, c.summary));
        if c.kind == cudnnlog::catalog::ClassKind::Status {
            out.push_str(
                "\nA status class: on a symptom's line the symptom is the primary finding.\n",
            );
        }
        if c.infrastructure {
            out.push_str("\nAn infrastructure fault: the GPU and process errors of the same log are its fallout.\n");
        }
        if let Some(r) = catalog.actions().class(&c.id) {
            out.push_str(&format!(
                "\nAction for a job it ends: **{}** — {} (`patterns/actions.toml`; a job's attempts, a pattern's facts or a cause the log shows can decide otherwise.)\n",
                r.action, r.because
            ));
        }
        let patterns: Vec<_> = catalog
            .patterns()
            .iter()
            .filter(|p| p.class == c.id)
            .collect();
        if patterns.is_empty() {
            continue;
        }
        out.push_str("\n| pattern | severity | what it matches |\n|---|---|---|\n");
        for p in patterns {
            let what = p.doc.what.replace('|', "\\|").replace('\n', " ");
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                p.id,
                p.severity.as_str(),
                what
            ));
        }
    }
    Ok(out)
}

/// `docs/diagnosis.md`'s table of the knowledge kept as data
/// (`patterns/diagnosis.toml`) and of the culprit's evidence lines
/// (`patterns/culprit.toml`).
pub fn knowledge_table() -> Result<String> {
    let catalog = Catalog::builtin()?;
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut t = String::from(
        "| rule | classes | reads | what it knows | effect |\n|---|---|---|---|---|\n",
    );
    for r in catalog.knowledge() {
        let read = match &r.read {
            cudnnlog::catalog::Read::Fact(f) => format!("fact `{f}`"),
            cudnnlog::catalog::Read::Message => "message".to_string(),
            cudnnlog::catalog::Read::Env(f) => format!("environment `{f}`"),
            cudnnlog::catalog::Read::Finding => "other findings of the log".to_string(),
        };
        let classes: Vec<String> = r.classes.iter().map(|c| format!("`{c}`")).collect();
        let effect: Vec<String> = r
            .factors
            .iter()
            .map(|(c, f)| format!("`{c}` ×{f}"))
            .collect();
        let fw = r
            .framework
            .as_ref()
            .map_or(String::new(), |f| format!(" ({f} only)"));
        t.push_str(&format!(
            "| `{}` | {} | {read}{fw} | {} | {} |\n",
            r.id,
            classes.join(", "),
            cell(&r.what),
            effect.join(", ")
        ));
    }
    t.push_str("\n| culprit evidence | kind | what it reads |\n|---|---|---|\n");
    for e in catalog.evidence_rules() {
        t.push_str(&format!(
            "| `{}` | {:?} | `{}` |\n",
            e.id,
            e.kind,
            cell(e.regex.as_str()).replace('`', "'")
        ));
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
    let culprits = crate::culprits::score_culprits(root, &root.join("fixtures/culprits.toml"))?;
    let figures = format!(
        "```\n{}{}```\n",
        crate::eval::render(&scores, true),
        crate::culprits::render_culprits(&culprits, true)
    );
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
    )?;
    splice(
        &root.join("docs/diagnosis.md"),
        "<!-- knowledge:begin",
        "<!-- knowledge:end -->",
        &knowledge_table()?,
        check,
    )?;
    splice(
        &root.join("docs/diagnosis.md"),
        "<!-- rules:begin",
        "<!-- rules:end -->",
        &crate::rules::table(root)?,
        check,
    )?;
    let path = root.join("docs/classes.md");
    let fresh = classes_page()?;
    if std::fs::read_to_string(&path).unwrap_or_default() != fresh {
        if check {
            bail!("{} is stale: run `cargo xtask docs`", path.display());
        }
        std::fs::write(&path, fresh).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
