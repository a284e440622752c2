//! The commands that show and check the catalog: `explain ID` (its text in
//! [`explain`]), `patterns list`, `patterns check DIR` and `patterns
//! suggest LOG`. Catalog text can come from a user's directory, so
//! everything printed passes through [`sanitize`].

mod explain;

use crate::args::{ExplainFormat, ListFormat};
use crate::load_catalog;
use crate::render::{sanitize, sanitize_line};
use anyhow::Context;
use cudnnlog::catalog::Pattern;
use cudnnlog::report::FindingsSink;
use cudnnlog::Catalog;
use cudnnlog::{MmapChoice, ScannerBuilder};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tabled::settings::{object::Columns, Modify, Style, Width};
use tabled::{Table, Tabled};

/// `cudnnlog explain ID`: the explanation of a class, cause or pattern id
/// of `catalog`, or the ids near it.
pub fn explain(id: &str, format: ExplainFormat, catalog: Catalog) -> anyhow::Result<ExitCode> {
    let unknown = || {
        let similar = explain::similar_ids(&catalog, id);
        let hint = if similar.is_empty() {
            "; `cudnnlog patterns list` shows the patterns".to_string()
        } else {
            format!("; did you mean {}?", similar.join(", "))
        };
        anyhow::anyhow!("no class, cause or pattern has the id {id:?}{hint}")
    };
    let mut out = std::io::stdout().lock();
    match format {
        ExplainFormat::Text => {
            let text = explain::explain(&catalog, id).ok_or_else(unknown)?;
            out.write_all(text.as_bytes())?;
        }
        ExplainFormat::Json => {
            let value = explain::explain_json(&catalog, id).ok_or_else(unknown)?;
            cudnnlog::json::pretty(&mut out, &value)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `cudnnlog patterns list`: the patterns (of `class`, when given) as a
/// table, JSON or their anchors.
pub fn list(format: ListFormat, class: Option<&str>, dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    let mut patterns: Vec<&Pattern> = catalog
        .patterns()
        .iter()
        .filter(|p| class.is_none_or(|c| p.class == c || p.class.split('.').next() == Some(c)))
        .collect();
    patterns.sort_by(|a, b| a.class.cmp(&b.class).then_with(|| a.id.cmp(&b.id)));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        ListFormat::Table => list_table(&mut out, &patterns)?,
        ListFormat::Json => {
            cudnnlog::json::pretty(&mut out, &list_json(&patterns))?;
            writeln!(out)?;
        }
        ListFormat::Anchors => {
            let probes = catalog.probes().iter().filter(|_| class.is_none());
            let mut anchors: Vec<&str> = patterns
                .iter()
                .flat_map(|p| p.anchors.iter())
                .chain(probes.flat_map(|p| p.anchors.iter()))
                .map(String::as_str)
                .collect();
            anchors.sort_unstable();
            anchors.dedup();
            for a in anchors {
                writeln!(out, "{}", sanitize(a))?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `cudnnlog patterns suggest LOG…`: a starter pattern file for each of
/// the `top` most frequent unclassified templates, printed or written
/// under `out_dir`.
pub fn suggest(files: &[PathBuf], top: usize, out_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(&[])?;
    let scanner = ScannerBuilder::new().build(catalog);
    let mut sink = FindingsSink::new(scanner.catalog());
    for path in files {
        // Read, not mapped: this is a one-off look at a few logs.
        scanner
            .scan_path(path, MmapChoice::never(), &mut sink)
            .with_context(|| format!("cannot scan {}", path.display()))?;
    }
    let report = sink.into_report();
    let mut stdout = std::io::stdout().lock();
    if report.unclassified.is_empty() {
        writeln!(stdout, "no unclassified error lines: nothing to suggest")?;
        return Ok(ExitCode::SUCCESS);
    }
    for t in report.unclassified.iter().take(top) {
        let (id, text) = draft(t);
        match out_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                let path = dir.join(format!("{id}.toml"));
                std::fs::write(&path, &text)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                writeln!(
                    stdout,
                    "wrote {}",
                    sanitize_line(&path.display().to_string())
                )?;
            }
            None => {
                writeln!(stdout, "# ---- {id}.toml")?;
                stdout.write_all(sanitize(&text).as_bytes())?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `cudnnlog patterns check DIR…`: every example and counterexample of the
/// patterns `dirs` contribute (all, when none is named); exit 1 when one
/// fails.
pub fn check(dirs: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let catalog = load_catalog(dirs)?;
    // The files a directory contributed are named by paths under it.
    let prefixes: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let mine = |p: &Pattern| dirs.is_empty() || prefixes.iter().any(|d| p.file.starts_with(d));
    let checked: Vec<&Pattern> = catalog.patterns().iter().filter(|p| mine(p)).collect();
    let failures = cudnnlog::catalog::check_patterns(&catalog, |p| mine(p));
    let mut out = std::io::stdout().lock();
    for f in &failures {
        writeln!(out, "FAIL {}", sanitize(&f.to_string()))?;
    }
    let examples: usize = checked.iter().map(|p| p.examples.len()).sum();
    let counter: usize = checked.iter().map(|p| p.counterexamples.len()).sum();
    writeln!(
        out,
        "{} patterns, {examples} examples, {counter} counterexamples: {}",
        checked.len(),
        if failures.is_empty() {
            "all pass".to_string()
        } else {
            format!("{} failing", failures.len())
        }
    )?;
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[derive(Tabled)]
struct Row {
    #[tabled(rename = "PATTERN")]
    id: String,
    #[tabled(rename = "CLASS")]
    class: String,
    #[tabled(rename = "SEVERITY")]
    severity: &'static str,
    #[tabled(rename = "STATUS")]
    status: &'static str,
    #[tabled(rename = "SUMMARY")]
    summary: String,
}

/// Writes the catalog's patterns as a table, sorted by class.
fn list_table(out: &mut impl Write, patterns: &[&Pattern]) -> std::io::Result<()> {
    let rows = patterns.iter().map(|p| Row {
        id: sanitize(&p.id),
        class: sanitize(&p.class),
        severity: p.severity.as_str(),
        status: match p.stability {
            cudnnlog::catalog::Stability::Stable => "stable",
            cudnnlog::catalog::Stability::Preview => "preview",
        },
        summary: sanitize(&p.summary),
    });
    let mut table = Table::new(rows);
    table
        .with(Style::sharp())
        .with(Modify::new(Columns::single(4)).with(Width::wrap(60).keep_words(true)));
    writeln!(out, "{table}")?;
    writeln!(out, "{} patterns", patterns.len())
}

/// The catalog's patterns as JSON values.
fn list_json(patterns: &[&Pattern]) -> serde_json::Value {
    patterns
        .iter()
        .map(|p| {
            serde_json::json!({
                "id": p.id,
                "class": p.class,
                "severity": p.severity,
                "status": p.stability,
                "stability": p.stability,
                "since": p.since,
                "summary": p.summary,
                "anchors": p.anchors,
                "file": p.file,
            })
        })
        .collect()
}

/// A starter pattern file for an unclassified template: anchors from its
/// longest constant run, a regex with `\S+` for its variable tokens, its
/// example line. It loads and passes `patterns check` as written; its class,
/// documentation and causes are for the user to fill in.
fn draft(template: &cudnnlog::report::Unclassified) -> (String, String) {
    let tokens: Vec<&str> = template.template.split(' ').collect();
    let wild = |t: &str| t.starts_with(cudnnlog::report::WILDCARD);
    // The id: the first constant words, kebab-case.
    let words: Vec<String> = tokens
        .iter()
        .filter(|t| !wild(t))
        .map(|t| {
            t.chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase()
        })
        .filter(|w| !w.is_empty())
        .take(5)
        .collect();
    let id = format!("local-{}", words.join("-"));
    // The anchor: the longest run of constant tokens.
    let mut best = String::new();
    let mut run: Vec<&str> = Vec::new();
    for t in tokens.iter().chain(std::iter::once(&"<*>")) {
        if wild(t) {
            let joined = run.join(" ");
            if joined.len() > best.len() {
                best = joined;
            }
            run.clear();
        } else {
            run.push(t);
        }
    }
    let regex: Vec<String> = tokens
        .iter()
        .map(|t| match t.strip_prefix(cudnnlog::report::WILDCARD) {
            Some(tail) => format!(r"\S+?{}", regex_escape(tail)),
            None => regex_escape(t),
        })
        .collect();
    // Every value the log gave is quoted by the TOML serializer, which
    // picks a literal or a basic string and escapes what needs it: a line
    // may hold `'''`, `"""`, backslashes or control characters, and the
    // draft must load as it is written.
    let toml_str = |s: &str| toml::Value::String(s.to_string()).to_string();
    let text = format!(
        r#"# Drafted by `cudnnlog patterns suggest` from {count} unclassified line(s); first seen on
# line {line}. Edit the class, summary, doc, causes and remediations, add a
# counterexample, then run `cudnnlog patterns check DIR`.
id = {id}
class = "python.exception"  # edit: pick the class from patterns/classes.toml
severity = "error"
stability = "preview"
since = "0.1.0"
summary = {summary}
anchors = [{anchor}]
regex = {regex}

[doc]
what = {what}
why = "TODO: why it happens."

[[causes]]
id = "code_bug"  # edit: the likely causes (patterns/causes.toml)
prior = 0.5

[[examples]]
log = {example}
"#,
        id = toml_str(&id),
        count = template.count,
        line = template.first.line,
        summary = toml_str(&format!("TODO: {}", template.template)),
        anchor = toml_str(if best.len() >= 4 {
            &best
        } else {
            "TODO: an anchor"
        }),
        regex = toml_str(&regex.join(r"\s+")),
        what = toml_str(&format!("Lines like: {}", template.template)),
        example = toml_str(&format!("{}\n", template.example)),
    );
    (id, text)
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
