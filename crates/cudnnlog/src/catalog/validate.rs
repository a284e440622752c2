//! Validation of each catalog file's entries: patterns, probes, anchors,
//! regexes and status tables, with errors naming the file and the field.

use crate::catalog::bad;
use crate::catalog::file_stem;
use crate::catalog::LazyRegex;
use crate::catalog::Pattern;
use crate::catalog::PatternFile;
use crate::catalog::Probe;
use crate::catalog::ProbeExample;
use crate::catalog::ProbeFile;
use crate::catalog::MAX_FALLBACK;
use crate::catalog::MIN_ANCHOR_LEN;
use crate::catalog::REGEX_SIZE_LIMIT;
use crate::Error;
use regex::Regex;
use std::collections::HashMap;
use std::collections::HashSet;

pub(super) fn validate_anchors(file: &str, field: &str, anchors: &[String]) -> Result<(), Error> {
    if anchors.is_empty() {
        return Err(bad(file, field, "at least one anchor is needed"));
    }
    if let Some(a) = anchors.iter().find(|a| a.len() < MIN_ANCHOR_LEN) {
        return Err(bad(
            file,
            field,
            format!("anchor {a:?} is shorter than {MIN_ANCHOR_LEN} bytes"),
        ));
    }
    if let Some(a) = anchors
        .iter()
        .find(|a| a.contains('\n') || a.contains('\r'))
    {
        return Err(bad(file, field, format!("anchor {a:?} spans lines")));
    }
    Ok(())
}

pub(super) fn compile(file: &str, field: &str, regex: &str) -> Result<Regex, Error> {
    regex::RegexBuilder::new(regex)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| bad(file, field, e.to_string()))
}

/// A catalog regex: compiled now, or parsed now and compiled on first use
/// (`lazy`, for the built-in files the test suite has compiled).
pub(super) fn lazy_regex(
    file: &str,
    field: &str,
    regex: &str,
    lazy: bool,
) -> Result<LazyRegex, Error> {
    if lazy {
        Ok(LazyRegex::trusted(regex))
    } else {
        LazyRegex::compile(regex).map_err(|e| bad(file, field, e))
    }
}

pub(super) fn validate_probe(file: &str, p: ProbeFile, lazy: bool) -> Result<Probe, Error> {
    let field = |f: &str| format!("probe.{f}");
    validate_anchors(file, &field("anchors"), &p.anchors)?;
    let regex = lazy_regex(file, &field("regex"), &p.regex, lazy)?;
    let known = |n: &str| crate::fields::FIELDS.contains(&n);
    // Asking a lazy regex its names parses it: the built-in catalog's
    // probes are checked by the test suite instead.
    if let Some(n) = (!lazy).then(|| regex.names().find(|n| !known(n))).flatten() {
        return Err(bad(
            file,
            &field("regex"),
            format!("probe {:?}: group {n:?} is not an environment field", p.id),
        ));
    }
    if let Some(n) = p.set.keys().find(|n| !known(n)) {
        return Err(bad(
            file,
            &field("set"),
            format!("probe {:?}: {n:?} is not an environment field", p.id),
        ));
    }
    if p.examples.is_empty() {
        return Err(bad(
            file,
            &field("examples"),
            format!("probe {:?} has no example", p.id),
        ));
    }
    Ok(Probe {
        id: p.id,
        what: p.what,
        anchors: p.anchors,
        regex,
        set: p.set,
        examples: p.examples,
        build: None,
    })
}

/// A build fingerprint as a probe that sets `framework` and
/// `framework_build`.
pub(super) fn validate_fingerprint(
    file: &str,
    f: crate::catalog::fingerprints::FingerprintEntry,
    lazy: bool,
) -> Result<Probe, Error> {
    use crate::catalog::fingerprints::{Build, FRAMEWORKS};
    use crate::fields::is_version;
    let field = |x: &str| format!("fingerprint.{x}");
    let id = &f.id;
    validate_anchors(file, &field("anchors"), &f.anchors)?;
    let regex = lazy_regex(file, &field("regex"), &f.regex, lazy)?;
    if !FRAMEWORKS.contains(&f.framework.as_str()) {
        return Err(bad(
            file,
            &field("framework"),
            format!(
                "fingerprint {id:?}: {:?} is not one of {FRAMEWORKS:?}",
                f.framework
            ),
        ));
    }
    let groups: Vec<&str> = regex.names().collect();
    if let Some(g) = groups
        .iter()
        .find(|g| !["version", "built_ms", "built_yymm"].contains(g))
    {
        return Err(bad(
            file,
            &field("regex"),
            format!("fingerprint {id:?}: group {g:?} is not `version`, `built_ms` or `built_yymm`"),
        ));
    }
    if groups.len() > 1 {
        return Err(bad(
            file,
            &field("regex"),
            format!("fingerprint {id:?}: at most one named group"),
        ));
    }
    for (name, v) in [("since", &f.since), ("until", &f.until)] {
        if let Some(v) = v.as_deref().filter(|v| !is_version(v)) {
            return Err(bad(
                file,
                &field(name),
                format!("fingerprint {id:?}: {v:?} is not a three-part version"),
            ));
        }
    }
    let build = match groups.first() {
        Some(g) if f.since.is_some() || f.until.is_some() => {
            return Err(bad(
                file,
                &field("since"),
                format!("fingerprint {id:?}: a `{g}` group takes no since/until"),
            ));
        }
        Some(&"version") => Build::Explicit,
        Some(_) => Build::Dated,
        None => Build::Range {
            since: f.since,
            until: f.until,
        },
    };
    if f.examples.is_empty() || f.what.trim().is_empty() || f.source.trim().is_empty() {
        return Err(bad(
            file,
            &field("examples"),
            format!("fingerprint {id:?} needs `what`, `source` and an example"),
        ));
    }
    let mut examples = Vec::new();
    for ex in f.examples {
        // `pytorch` alone: a fingerprint of the framework, not of a release.
        let (fw, value) = match ex.expect.split_once(' ') {
            Some((fw, value)) => (fw, Some(value)),
            None => (ex.expect.as_str(), None),
        };
        if fw != f.framework {
            return Err(bad(
                file,
                &field("examples.expect"),
                format!(
                    "fingerprint {id:?}: the example expects {fw:?}, the fingerprint names {:?}",
                    f.framework
                ),
            ));
        }
        examples.push(ProbeExample {
            log: ex.log,
            expect: std::iter::once(("framework".to_string(), fw.to_string()))
                .chain(value.map(|v| ("framework_build".to_string(), v.to_string())))
                .collect(),
        });
    }
    Ok(Probe {
        id: f.id,
        what: f.what,
        anchors: f.anchors,
        regex,
        set: [("framework".to_string(), f.framework)]
            .into_iter()
            .collect(),
        examples,
        build: Some(build),
    })
}

/// A release row: a known framework, a three-part version, a real date.
pub(super) fn validate_release(
    file: &str,
    r: &crate::catalog::fingerprints::Release,
) -> Result<(), Error> {
    use crate::catalog::fingerprints::{parse_date, FRAMEWORKS};
    use crate::fields::is_version;
    if !FRAMEWORKS.contains(&r.framework.as_str())
        || !is_version(&r.version)
        || parse_date(&r.date).is_none()
    {
        return Err(bad(
            file,
            "release",
            format!(
                "{} {} {:?}: a framework of {FRAMEWORKS:?}, a three-part version and a YYYY-MM-DD date",
                r.framework, r.version, r.date
            ),
        ));
    }
    Ok(())
}

pub(super) fn validate(
    file: &str,
    p: PatternFile,
    classes: &HashSet<&str>,
    causes: &HashSet<&str>,
    fragments: &crate::catalog::fragments::Fragments,
    lazy: bool,
) -> Result<Pattern, Error> {
    let kebab = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    };
    if !kebab(&p.id) {
        return Err(bad(
            file,
            "id",
            format!("{:?} is not a kebab-case id", p.id),
        ));
    }
    if file_stem(file) != p.id {
        return Err(bad(
            file,
            "id",
            format!("id {:?} must equal the file name", p.id),
        ));
    }
    if !classes.contains(p.class.as_str()) {
        return Err(bad(file, "class", format!("unknown class {:?}", p.class)));
    }
    if let Some(c) = p
        .wraps
        .iter()
        .find(|c| !classes.contains(c.as_str()) || **c == p.class)
    {
        return Err(bad(
            file,
            "wraps",
            format!("{c:?} is not a class other than the pattern's own"),
        ));
    }
    validate_anchors(file, "anchors", &p.anchors)?;
    if p.fallback > MAX_FALLBACK {
        return Err(bad(
            file,
            "fallback",
            format!("fallback {} is not 0, 1, 2 or 3", p.fallback),
        ));
    }
    let expand = |field: &str, r: &str| fragments.expand(r).map_err(|e| bad(file, field, e));
    let regex = lazy_regex(file, "regex", &expand("regex", &p.regex)?, lazy)?;
    let mut facts = Vec::with_capacity(p.facts.len());
    for f in &p.facts {
        let r = lazy_regex(file, "facts", &expand("facts", f)?, lazy)?;
        if !lazy && r.names().next().is_none() {
            return Err(bad(file, "facts", format!("{f:?} has no named group")));
        }
        facts.push(r);
    }
    let mut pattern = Pattern {
        id: p.id,
        class: p.class,
        severity: p.severity,
        stability: p.stability,
        since: p.since,
        summary: p.summary,
        anchors: p.anchors,
        regex,
        facts,
        confidence: p.confidence.unwrap_or(1.0),
        table: p.table,
        decodes: p.decodes,
        reject: p.reject,
        signature: p.signature,
        remediations: p.remediations,
        fallback: p.fallback,
        scope: p.scope,
        doc: p.doc,
        causes: p.causes,
        examples: p.examples,
        counterexamples: p.counterexamples,
        termination: p.termination,
        wraps: p.wraps,
        sources: p.sources,
        file: file.to_string(),
    };
    // What needs the regexes' group names is checked for a user's catalog;
    // the built-in one's were checked by the test suite (and parsing every
    // regex would cost its start-up what compiling them used to).
    if !lazy {
        check_names(file, &pattern)?;
    }
    let confidence = pattern.confidence;
    if !(confidence > 0.0 && confidence <= 1.0) {
        return Err(bad(
            file,
            "confidence",
            format!("{confidence} is not in (0, 1]"),
        ));
    }
    for c in &pattern.causes {
        if !causes.contains(c.id.as_str()) {
            return Err(bad(file, "causes.id", format!("unknown cause {:?}", c.id)));
        }
        if !(c.prior > 0.0 && c.prior <= 1.0) {
            return Err(bad(
                file,
                "causes.prior",
                format!("prior {} of {:?} is not in (0, 1]", c.prior, c.id),
            ));
        }
    }
    if pattern.examples.is_empty() {
        return Err(bad(
            file,
            "examples",
            "a pattern needs at least one example",
        ));
    }
    pattern.causes.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    Ok(pattern)
}

/// The checks that need a pattern's group names: remediation placeholders,
/// the signature, the facts its examples expect.
fn check_names(file: &str, p: &Pattern) -> Result<(), Error> {
    let captures = p.capture_names();
    for r in &p.remediations {
        super::remediation::check(r, &captures).map_err(|m| bad(file, "remediations", m))?;
    }
    if let Some(s) = p.signature.iter().find(|s| !captures.contains(*s)) {
        return Err(bad(
            file,
            "signature",
            format!("{s:?} is not a named group of the regex"),
        ));
    }
    for ex in &p.examples {
        if let Some(k) = ex.facts.keys().find(|k| !captures.contains(*k)) {
            return Err(bad(
                file,
                "examples.facts",
                format!("{k:?} is not a named group of the regex"),
            ));
        }
    }
    Ok(())
}

/// A pattern's status table must exist, be of its class, and its regexes
/// must capture a status.
pub(super) fn validate_table(
    file: &str,
    p: &Pattern,
    statuses: &[crate::catalog::statuses::Enum],
    lazy: bool,
) -> Result<(), Error> {
    if let Some(table) = &p.decodes {
        if p.table.is_some() {
            return Err(bad(
                file,
                "decodes",
                "a pattern has `table` or `decodes`, not both".to_string(),
            ));
        }
        if !statuses.iter().any(|e| &e.name == table) {
            return Err(bad(
                file,
                "decodes",
                format!("unknown status table {table:?}"),
            ));
        }
        // Scanning decodes the core's `code` only: a fact regex runs only
        // when a sink asks for facts.
        if !lazy && !p.regex.names().any(|n| n == "code") {
            return Err(bad(
                file,
                "decodes",
                "the core regex captures no `code` to decode".to_string(),
            ));
        }
        return Ok(());
    }
    let Some(table) = &p.table else {
        return Ok(());
    };
    let Some(e) = statuses.iter().find(|e| &e.name == table) else {
        return Err(bad(
            file,
            "table",
            format!("unknown status table {table:?}"),
        ));
    };
    if e.generic != p.class {
        return Err(bad(
            file,
            "table",
            format!("class must be the table's generic class {:?}", e.generic),
        ));
    }
    if lazy {
        return Ok(());
    }
    let names: HashSet<&str> = p
        .regex
        .names()
        .chain(p.facts.iter().flat_map(|f| f.names()))
        .collect();
    if !["status", "code", "status_text"]
        .iter()
        .any(|n| names.contains(n))
    {
        return Err(bad(
            file,
            "table",
            "the regex captures no `status`, `code` or `status_text`",
        ));
    }
    Ok(())
}

/// Maps every anchor to the patterns that list it, then the probes: the
/// owner `patterns.len() + i` is probe `i`.
pub(crate) fn anchor_table(patterns: &[Pattern], probes: &[Probe]) -> (Vec<String>, Vec<Vec<u32>>) {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut anchors: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<u32>> = Vec::new();
    let lists = patterns
        .iter()
        .map(|p| &p.anchors)
        .chain(probes.iter().map(|p| &p.anchors));
    for (pi, list) in lists.enumerate() {
        for a in list {
            let i = *index.entry(a.as_str()).or_insert_with(|| {
                anchors.push(a.clone());
                owners.push(Vec::new());
                anchors.len() - 1
            });
            if !owners[i].contains(&(pi as u32)) {
                owners[i].push(pi as u32);
            }
        }
    }
    (anchors, owners)
}
