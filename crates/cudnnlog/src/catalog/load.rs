//! Assembling a catalog from its files: each file by its name
//! (`classes.toml`, `causes.toml`, `diagnosis.toml`, …, else one pattern),
//! then every id one file names checked against the others.

use super::validate::{
    compile, validate_fingerprint, validate_probe, validate_release, validate_table,
};
use super::*;

impl Catalog {
    /// Builds a catalog from (name, contents) pairs, validating everything
    /// and compiling every regex.
    pub fn from_files(files: Vec<(String, String)>) -> Result<Catalog, Error> {
        Catalog::assemble(files.into_iter().map(|(n, t)| (n, t, false)).collect())
    }

    /// Builds a catalog from (name, contents, built-in) triples. A built-in
    /// file is the JSON form `build.rs` made of a `patterns/` file (it
    /// parses faster than TOML), already checked by the test suite: its
    /// regexes compile on first use.
    pub(super) fn assemble(files: Vec<(String, String, bool)>) -> Result<Catalog, Error> {
        let mut classes: Vec<Class> = Vec::new();
        let mut warning_order: Option<(String, Vec<String>)> = None;
        let mut class_files: std::collections::HashMap<String, String> = Default::default();
        let mut causes: Vec<Cause> = Vec::new();
        let mut fragments = crate::fragments::Fragments::default();
        let mut statuses: Vec<(String, crate::status::Enum)> = Vec::new();
        let mut evidence: Vec<crate::culprit::EvidenceRule> = Vec::new();
        let mut knowledge: Vec<(String, crate::knowledge::RuleEntry, bool)> = Vec::new();
        let mut frameworks: Vec<crate::knowledge::Framework> = Vec::new();
        let mut signals = crate::knowledge::Signals::default();
        let mut raw: Vec<(String, PatternFile, bool)> = Vec::new();
        let mut probes: Vec<Probe> = Vec::new();
        let mut releases: Vec<crate::fingerprint::Release> = Vec::new();
        let mut compat = crate::compat::Compat::default();
        for (name, text, lazy) in &files {
            let lazy = *lazy;
            match file_stem(name) {
                "environment" => {
                    let f: ProbesFile = de(name, text, lazy)?;
                    for p in f.probe {
                        let p = validate_probe(name, p, lazy)?;
                        probes.retain(|old| old.id != p.id);
                        probes.push(p);
                    }
                }
                "fingerprints" => {
                    let f: crate::fingerprint::FingerprintsFile = de(name, text, lazy)?;
                    for fp in f.fingerprint {
                        let p = validate_fingerprint(name, fp, lazy)?;
                        probes.retain(|old| old.id != p.id);
                        probes.push(p);
                    }
                    for r in f.release {
                        validate_release(name, &r)?;
                        releases.retain(|old| {
                            (&old.framework, &old.version) != (&r.framework, &r.version)
                        });
                        releases.push(r);
                    }
                }
                "culprit" => {
                    let f: crate::culprit::EvidenceFile = de(name, text, lazy)?;
                    for e in f.evidence {
                        let regex = compile(name, "evidence.regex", &e.regex)?;
                        if e.anchor.is_empty() {
                            return Err(bad(name, "evidence.anchor", "an anchor is needed"));
                        }
                        evidence.retain(|old| old.id != e.id);
                        evidence.push(crate::culprit::EvidenceRule {
                            id: e.id,
                            kind: e.kind,
                            regex,
                            lines: e.lines.min(64),
                            anchor: e.anchor,
                            reason: e.reason,
                        });
                    }
                }
                "diagnosis" => {
                    let f: crate::knowledge::KnowledgeFile = de(name, text, lazy)?;
                    knowledge.extend(f.rule.into_iter().map(|r| (name.clone(), r, lazy)));
                    for fw in f.framework {
                        if fw.markers.iter().any(String::is_empty) {
                            return Err(bad(name, "framework.markers", "an empty marker"));
                        }
                        frameworks.retain(|old| old.id != fw.id);
                        frameworks.push(fw);
                    }
                    if let Some(sf) = f.signals {
                        signals.facts = sf.facts;
                    }
                    for sig in f.signal {
                        if sig
                            .words
                            .iter()
                            .any(|w| w.is_empty() || w.to_lowercase() != *w)
                        {
                            return Err(bad(
                                name,
                                "signal.words",
                                format!("{}: words are non-empty and lower case", sig.name),
                            ));
                        }
                        signals.signals.retain(|old| old.name != sig.name);
                        signals.signals.push(sig);
                    }
                }
                "statuses" => {
                    let f: crate::status::StatusesFile = de(name, text, lazy)?;
                    for e in f.enums {
                        statuses.retain(|(_, old)| old.name != e.name);
                        statuses.push((name.clone(), e));
                    }
                }
                "fragments" => {
                    let f: FragmentsFile = de(name, text, lazy)?;
                    for (k, v) in &f.fragments {
                        if !lazy {
                            compile(name, &format!("fragments.{k}"), v)?;
                        }
                        fragments.insert(k, v);
                    }
                }
                "compat" => {
                    let c: crate::compat::Compat = de(name, text, lazy)?;
                    compat.extend(c);
                }
                "classes" => {
                    let f: ClassesFile = de(name, text, lazy)?;
                    for c in f.class {
                        if c.id.is_empty() || !c.id.contains('.') {
                            return Err(bad(
                                name,
                                "class.id",
                                format!("class id {:?} must look like `family.name`", c.id),
                            ));
                        }
                        classes.retain(|old| old.id != c.id);
                        class_files.insert(c.id.clone(), name.clone());
                        classes.push(c);
                    }
                    if let Some(order) = f.warning_order {
                        warning_order = Some((name.clone(), order));
                    }
                }
                "causes" => {
                    let f: CausesFile = de(name, text, lazy)?;
                    for c in f.cause {
                        if c.remediations.is_empty() {
                            return Err(bad(
                                name,
                                "cause.remediations",
                                format!("cause {:?} has no remediation", c.id),
                            ));
                        }
                        causes.retain(|old| old.id != c.id);
                        causes.push(c);
                    }
                }
                _ => {
                    let p: PatternFile = de(name, text, lazy)?;
                    // A later file with the same id (a user catalog) replaces an earlier one.
                    raw.retain(|(_, old, _)| old.id != p.id);
                    raw.push((name.clone(), p, lazy));
                }
            }
        }
        let class_ids: HashSet<&str> = classes.iter().map(|c| c.id.as_str()).collect();
        let cause_ids: HashSet<&str> = causes.iter().map(|c| c.id.as_str()).collect();
        let (order_file, warning_order) = warning_order.unwrap_or_default();
        for id in &warning_order {
            if !class_ids.contains(id.as_str()) {
                return Err(bad(
                    &order_file,
                    "warning_order",
                    format!("unknown class id {id:?}"),
                ));
            }
        }
        for c in &classes {
            for id in &c.implies {
                if !class_ids.contains(id.as_str()) {
                    return Err(bad(
                        &class_files[&c.id],
                        "class.implies",
                        format!("class {:?} implies unknown class id {id:?}", c.id),
                    ));
                }
            }
        }
        let families: HashSet<&str> = classes
            .iter()
            .filter_map(|c| c.id.split('.').next())
            .collect();
        let mut rules: Vec<crate::knowledge::KnowledgeRule> = Vec::new();
        for (file, r, lazy) in knowledge {
            let r = r
                .validate(
                    &|c| class_ids.contains(c),
                    &|f| families.contains(f),
                    &|c| cause_ids.contains(c),
                    lazy,
                )
                .map_err(|(field, m)| bad(&file, &field, m))?;
            rules.retain(|old| old.id != r.id);
            rules.push(r);
        }
        for c in &causes {
            if let Some(f) = c
                .remediations_for
                .iter()
                .find(|f| !families.contains(f.as_str()))
            {
                return Err(bad(
                    "causes.toml",
                    "cause.remediations_for",
                    format!("cause {:?}: unknown class family {f:?}", c.id),
                ));
            }
        }
        for (file, e) in &statuses {
            crate::status::validate(e, &|c| class_ids.contains(c))
                .map_err(|m| bad(file, "enum", m))?;
        }
        let statuses: Vec<crate::status::Enum> = statuses.into_iter().map(|(_, e)| e).collect();
        let mut patterns = Vec::with_capacity(raw.len());
        for (file, p, lazy) in raw {
            let p = super::validate::validate(&file, p, &class_ids, &cause_ids, &fragments, lazy)?;
            validate_table(&file, &p, &statuses, lazy)?;
            patterns.push(p);
        }
        Ok(Catalog {
            classes,
            statuses,
            evidence,
            knowledge: rules,
            frameworks,
            signals,
            warning_order,
            causes,
            patterns,
            probes,
            releases: {
                releases.sort_by(|a, b| {
                    (
                        a.framework.as_str(),
                        crate::fingerprint::parse_date(&a.date),
                    )
                        .cmp(&(
                            b.framework.as_str(),
                            crate::fingerprint::parse_date(&b.date),
                        ))
                });
                releases
            },
            compat,
        })
    }
}

/// One catalog file's contents: TOML, or for a built-in file its JSON form.
fn de<T: serde::de::DeserializeOwned>(name: &str, text: &str, json: bool) -> Result<T, Error> {
    if json {
        serde_json::from_str(text).map_err(|e| bad(name, "(file)", e.to_string()))
    } else {
        toml::from_str(text).map_err(|e| toml_error(name, text, e))
    }
}
