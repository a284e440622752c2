//! `cudnnlog explain ID`: what a class, a root cause or a pattern of the
//! catalog means, as text or JSON, and the ids near a mistyped one.
//! Catalog text can come from a user's directory, so everything printed
//! passes through [`sanitize`].

use crate::render::sanitize;
use cudnnlog::catalog::{Catalog, Pattern, Severity};
use cudnnlog::ids::cause;
use std::fmt::Write as _;

/// Width prose is wrapped to.
const WRAP: usize = 88;
/// Remediations of each cause shown under a class.
const CAUSE_REMEDIATIONS: usize = 2;
/// Causes whose remediations are shown under a class.
const CLASS_CAUSES: usize = 3;

/// The explanation of a class id, a root-cause id or a pattern id, or
/// `None` when the catalog knows no such id.
pub fn explain(catalog: &Catalog, id: &str) -> Option<String> {
    let mut out = String::new();
    if catalog.class(id).is_some() {
        explain_class(catalog, id, &mut out);
    } else if catalog.cause(id).is_some() {
        explain_cause(catalog, id, &mut out);
    } else if let Some(p) = catalog.pattern(id) {
        explain_pattern(catalog, p, &mut out);
    } else {
        return None;
    }
    Some(sanitize(&out))
}

/// Ids close to `id`, to suggest when it is unknown: classes, causes and
/// patterns whose id contains its last part, or is within a small edit
/// distance of it (a typo), closest first.
pub fn similar_ids(catalog: &Catalog, id: &str) -> Vec<String> {
    let needle = id.to_ascii_lowercase();
    let key = needle.rsplit(['.', '-', '_']).next().unwrap_or(&needle);
    // Classes and causes first: they are what people look up.
    let all = catalog
        .classes()
        .iter()
        .map(|c| (c.id.as_str(), 0.05))
        .chain(catalog.causes().iter().map(|c| (c.id.as_str(), 0.05)))
        .chain(catalog.patterns().iter().map(|p| (p.id.as_str(), 0.0)));
    let mut scored: Vec<(f64, &str)> = all
        .filter_map(|(c, bias)| {
            let typo = strsim::jaro_winkler(&needle, c);
            // An id that holds the word: the shorter, the closer.
            let contains = key.len() >= 3 && c.contains(key);
            let score = if contains {
                typo.max(0.88) + key.len() as f64 / c.len() as f64 / 10.0
            } else {
                typo
            };
            (score >= 0.88).then_some((score + bias, c))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(5)
        .map(|(_, c)| c.to_string())
        .collect()
}

/// A class, cause or pattern as a JSON object (`explain --format json`).
pub fn explain_json(catalog: &Catalog, id: &str) -> Option<serde_json::Value> {
    use serde_json::json;
    if let Some(class) = catalog.class(id) {
        let patterns = class_patterns(catalog, id);
        let causes: Vec<serde_json::Value> = class_causes(&patterns)
            .into_iter()
            .map(|(cid, prior)| {
                let title = catalog.cause(&cid).map(|c| c.title.clone());
                json!({"id": cid, "prior": prior, "title": title})
            })
            .collect();
        let listed: Vec<serde_json::Value> = patterns
            .iter()
            .map(|p| json!({"id": p.id, "summary": p.summary, "why": p.doc.why, "stability": p.stability}))
            .collect();
        let example = patterns
            .iter()
            .find_map(|p| p.examples.first())
            .map(|e| e.log.clone());
        return Some(json!({
            "kind": "class", "id": class.id, "title": class.title, "family": class.family,
            "summary": class.summary, "causes": causes, "patterns": listed, "example": example,
        }));
    }
    if let Some(cause) = catalog.cause(id) {
        let suspected: Vec<serde_json::Value> = catalog
            .patterns()
            .iter()
            .filter_map(|p| {
                let c = p.causes.iter().find(|c| c.id == id)?;
                Some(json!({"pattern": p.id, "class": p.class, "prior": c.prior}))
            })
            .collect();
        return Some(json!({
            "kind": "cause", "id": cause.id, "title": cause.title, "what": cause.what,
            "remediations": cause.remediations, "patterns": suspected,
        }));
    }
    let p = catalog.pattern(id)?;
    let causes: Vec<serde_json::Value> = p
        .causes
        .iter()
        .map(|c| json!({"id": c.id, "prior": c.prior}))
        .collect();
    let examples: Vec<&str> = p.examples.iter().map(|e| e.log.as_str()).collect();
    Some(json!({
        "kind": "pattern", "id": p.id, "class": p.class, "severity": p.severity,
        "stability": p.stability, "summary": p.summary, "what": p.doc.what, "why": p.doc.why,
        "anchors": p.anchors, "causes": causes, "remediations": p.remediations,
        "examples": examples, "file": p.file,
    }))
}

fn wrap(out: &mut String, indent: &str, text: &str) {
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > WRAP {
            let _ = writeln!(out, "{indent}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{line}");
    }
}

fn bullet(out: &mut String, indent: &str, text: &str) {
    let mut lines = String::new();
    wrap(&mut lines, &format!("{indent}    "), text);
    // The first line gets the bullet in place of its indent.
    let _ = write!(out, "{indent}  - {}", lines.trim_start());
}

fn indented_log(out: &mut String, log: &str) {
    for line in log.trim_matches('\n').lines() {
        let _ = writeln!(out, "    {line}");
    }
}

fn class_patterns<'c>(catalog: &'c Catalog, class: &str) -> Vec<&'c Pattern> {
    catalog
        .patterns()
        .iter()
        .filter(|p| p.class == class)
        .collect()
}

/// The causes of a class's patterns, with the highest prior any gives each.
fn class_causes(patterns: &[&Pattern]) -> Vec<(String, f64)> {
    let mut causes: Vec<(String, f64)> = Vec::new();
    for p in patterns {
        for c in &p.causes {
            match causes.iter_mut().find(|(id, _)| *id == c.id) {
                Some(e) => e.1 = e.1.max(c.prior),
                None => causes.push((c.id.clone(), c.prior)),
            }
        }
    }
    causes.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    causes
}

fn explain_class(catalog: &Catalog, id: &str, out: &mut String) {
    let class = catalog.class(id).expect("checked by the caller");
    let patterns = class_patterns(catalog, id);
    let severity = if patterns.iter().all(|p| p.severity == Severity::Warning) {
        "warning"
    } else {
        "error"
    };
    let _ = writeln!(out, "{} — {}", class.id, class.title);
    let _ = writeln!(
        out,
        "class · family {} · severity {severity} · {} pattern(s)\n",
        class.family,
        patterns.len()
    );
    wrap(out, "", &class.summary);

    let causes = class_causes(&patterns);
    if !causes.is_empty() {
        let _ = writeln!(
            out,
            "\nLikely causes (catalog priors, before the log's evidence):"
        );
        for (cid, prior) in &causes {
            let title = catalog.cause(cid).map_or("", |c| c.title.as_str());
            let _ = writeln!(out, "  {cid:<20} {prior:.2}  {title}");
        }
    }

    let fixes: Vec<&String> = causes
        .iter()
        .take(CLASS_CAUSES)
        .filter_map(|(cid, _)| catalog.cause(cid))
        .flat_map(|c| c.remediations.iter().take(CAUSE_REMEDIATIONS))
        .collect();
    if !fixes.is_empty() {
        let _ = writeln!(out, "\nWhat to do (for the likeliest causes):");
        for r in fixes {
            bullet(out, "", r);
        }
    } else {
        // Classes outside the GPU stack carry their fixes in the patterns.
        let _ = writeln!(out, "\nWhat to do:");
        let mut shown: Vec<&str> = Vec::new();
        for r in patterns.iter().flat_map(|p| p.remediations.iter()) {
            if !shown.contains(&r.as_str()) {
                shown.push(r);
                bullet(out, "", r);
            }
        }
    }

    let _ = writeln!(out, "\nPatterns:");
    for p in &patterns {
        let status = match p.stability {
            cudnnlog::catalog::Stability::Stable => "",
            cudnnlog::catalog::Stability::Preview => " (preview)",
        };
        let _ = writeln!(out, "  {}{status}", p.id);
        wrap(out, "    ", &p.summary);
        wrap(out, "    ", &format!("Why: {}", p.doc.why));
        if !causes.is_empty() {
            for r in &p.remediations {
                bullet(out, "  ", r);
            }
        }
    }

    if let Some(p) = patterns.iter().find(|p| !p.examples.is_empty()) {
        let _ = writeln!(out, "\nExample ({}):", p.id);
        indented_log(out, &p.examples[0].log);
    }
    let _ = writeln!(
        out,
        "\nMore: `cudnnlog explain PATTERN-ID` for a pattern, `cudnnlog explain CAUSE-ID` for a cause."
    );
}

fn explain_cause(catalog: &Catalog, id: &str, out: &mut String) {
    let cause = catalog.cause(id).expect("checked by the caller");
    let _ = writeln!(out, "{} — {}", cause.id, cause.title);
    let _ = writeln!(out, "root cause\n");
    wrap(out, "", &cause.what);
    let _ = writeln!(out, "\nWhat to do:");
    for r in &cause.remediations {
        bullet(out, "", r);
    }
    compat_rows(catalog, id, out);
    let mut listed: Vec<(&Pattern, f64)> = catalog
        .patterns()
        .iter()
        .filter_map(|p| p.causes.iter().find(|c| c.id == id).map(|c| (p, c.prior)))
        .collect();
    listed.sort_by(|a, b| b.1.total_cmp(&a.1));
    if !listed.is_empty() {
        let _ = writeln!(out, "\nSuspected for (pattern, class, prior):");
        for (p, prior) in &listed {
            let _ = writeln!(out, "  {:<44} {:<24} {prior:.2}", p.id, p.class);
        }
        let p = listed[0].0;
        let _ = writeln!(out, "\nExample ({}):", p.id);
        indented_log(out, &p.examples[0].log);
    }
}

/// Rows shown per compatibility table.
const COMPAT_ROWS: usize = 12;

/// The compatibility data the diagnoser uses as evidence for a cause.
fn compat_rows(catalog: &Catalog, cause: &str, out: &mut String) {
    let compat = catalog.compat();
    let mut section = |title: &str, header: &str, rows: Vec<String>| {
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title} (patterns/compat.toml):\n  {header}");
        let shown = rows.len().min(COMPAT_ROWS);
        for r in &rows[rows.len() - shown..] {
            let _ = writeln!(out, "  {r}");
        }
        if rows.len() > shown {
            let _ = writeln!(out, "  … {} older rows in the file", rows.len() - shown);
        }
    };
    if matches!(cause, cause::VERSION_MISMATCH | cause::LIBRARY_CONFLICT) {
        section(
            "PyTorch wheels and the cuDNN they bundle",
            "torch      cuda   cudnn     date        source",
            compat
                .torch
                .iter()
                .map(|b| {
                    format!(
                        "{:<10} {:<6} {:<9} {}  {}",
                        b.torch, b.cuda, b.cudnn, b.date, b.source
                    )
                })
                .collect(),
        );
        section(
            "TensorFlow tested builds",
            "tensorflow cuda   cudnn     date        source",
            compat
                .tensorflow
                .iter()
                .map(|b| {
                    format!(
                        "{:<10} {:<6} {:<9} {}  {}",
                        b.tensorflow, b.cuda, b.cudnn, b.date, b.source
                    )
                })
                .collect(),
        );
    }
    if cause == cause::DRIVER_TOO_OLD {
        section(
            "CUDA releases and the oldest Linux driver they run on",
            "cuda   min driver   date        source",
            compat
                .driver
                .iter()
                .map(|d| {
                    format!(
                        "{:<6} {:<12} {}  {}",
                        d.cuda, d.min_driver, d.date, d.source
                    )
                })
                .collect(),
        );
    }
    if cause == cause::ARCH_UNSUPPORTED {
        section(
            "GPU architectures and the first CUDA and cuDNN that support them",
            "arch        capability      min cuda  min cudnn  source",
            compat
                .arch
                .iter()
                .map(|a| {
                    format!(
                        "{:<11} {:<15} {:<9} {:<10} {}",
                        a.arch,
                        a.compute_capability.join(","),
                        a.min_cuda,
                        a.min_cudnn,
                        a.source
                    )
                })
                .collect(),
        );
    }
}

fn explain_pattern(catalog: &Catalog, p: &Pattern, out: &mut String) {
    let _ = writeln!(out, "{} — {}", p.id, p.summary);
    let _ = writeln!(
        out,
        "pattern · class {} · severity {} · {:?} since {} · {}\n",
        p.class,
        p.severity.as_str(),
        p.stability,
        p.since,
        p.file
    );
    let _ = writeln!(out, "What it matches:");
    wrap(out, "  ", &p.doc.what);
    let _ = writeln!(out, "\nWhy it happens:");
    wrap(out, "  ", &p.doc.why);
    let _ = writeln!(out, "\nAnchors: {:?}", p.anchors);
    let _ = writeln!(out, "Regex:   {}", p.regex.as_str());
    if !p.reject.is_empty() {
        let _ = writeln!(out, "Reject:  {:?}", p.reject);
    }
    if !p.causes.is_empty() {
        let _ = writeln!(out, "\nLikely causes:");
        for c in &p.causes {
            let title = catalog.cause(&c.id).map_or("", |k| k.title.as_str());
            let _ = writeln!(out, "  {:<20} {:.2}  {title}", c.id, c.prior);
        }
    }
    if !p.remediations.is_empty() {
        let _ = writeln!(out, "\nWhat to do:");
        for r in &p.remediations {
            bullet(out, "", r);
        }
    }
    for (i, ex) in p.examples.iter().enumerate() {
        let _ = writeln!(out, "\nExample {}:", i + 1);
        indented_log(out, &ex.log);
    }
    for (i, cx) in p.counterexamples.iter().enumerate() {
        let why = cx
            .why
            .as_deref()
            .map_or(String::new(), |w| format!(" ({w})"));
        let _ = writeln!(out, "\nNot matched {}{why}:", i + 1);
        indented_log(out, &cx.log);
    }
}
