//! The survey behind the catalog's priors, checked against the catalog.
//!
//! `fixtures/survey/priors.toml` records, per failure class (or a sub-class of
//! one wording or framework), how many public threads with a confirmed fix
//! were traced to each root cause, which threads those were, and which
//! patterns' priors the tally informs (`fixtures/survey/README.md`). These
//! tests keep the file and the built-in catalog from drifting apart:
//!
//! - (a) every class, pattern and cause the file names exists, each pattern
//!   belongs to its entry's class, `counts` sums to `threads` and matches the
//!   `threads_counted` list, and no thread is counted twice;
//! - (b) every cause with at least 2 confirmed threads and at least 10% of its
//!   entry's threads is listed by each of the entry's patterns, so evidence
//!   rules can raise it (an entry's `unlisted` waives named pattern/cause pairs);
//! - (c) each pattern's highest-prior cause — the one a log without evidence
//!   gets first, ties broken as the diagnoser does, by `causes.toml` order —
//!   is one of its entry's two most-counted causes, ties included (an entry's
//!   `exceptions` names patterns that deviate on purpose);
//! - (d) no counted thread is a source of the wild corpus (`fixtures/wild`),
//!   which serves as held-out data for the priors.
//!
//! An exception or a waiver that is no longer needed fails too, so a changed
//! prior cannot leave a stale excuse behind. Failures list every broken entry,
//! pattern and cause at once.

use cudnnlog::catalog::Pattern;
use cudnnlog::Catalog;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The survey file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Survey {
    class: Vec<Entry>,
}

/// One tally: a class or sub-class and the threads counted for it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    class: String,
    what: String,
    patterns: Vec<String>,
    threads: usize,
    counts: BTreeMap<String, usize>,
    threads_counted: Vec<String>,
    note: String,
    #[serde(default)]
    exceptions: Vec<Exception>,
    #[serde(default)]
    unlisted: Vec<Unlisted>,
}

/// A pattern whose highest-prior cause deliberately differs from the tally.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Exception {
    pattern: String,
    why: String,
}

/// A cause the tally supports that a pattern deliberately does not list.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Unlisted {
    pattern: String,
    cause: String,
    why: String,
}

impl Entry {
    /// How failure messages name the entry: its place, class and wording.
    fn name(&self, index: usize) -> String {
        let what: String = self.what.chars().take(60).collect();
        let more = if what.len() < self.what.len() {
            "…"
        } else {
            ""
        };
        format!("entry #{} {} ({what}{more})", index + 1, self.class)
    }

    /// The causes counted at least as often as the second most-counted one.
    fn top_two(&self) -> BTreeSet<&str> {
        let mut n: Vec<usize> = self.counts.values().copied().collect();
        n.sort_unstable_by(|a, b| b.cmp(a));
        let bar = n.get(1).or(n.first()).copied().unwrap_or(0);
        self.counts
            .iter()
            .filter(|(_, &c)| c >= bar)
            .map(|(id, _)| id.as_str())
            .collect()
    }

    /// The causes check (b) requires: at least 2 threads and 10% of them.
    fn well_supported(&self) -> impl Iterator<Item = (&str, usize)> {
        self.counts
            .iter()
            .filter(|(_, &c)| c >= 2 && c * 10 >= self.threads)
            .map(|(id, &c)| (id.as_str(), c))
    }
}

/// A counted thread: `SOURCE CAUSE`, the source without a scheme.
fn split_thread(line: &str) -> Option<(&str, &str)> {
    let mut parts = line.split_whitespace();
    let (source, cause) = (parts.next()?, parts.next()?);
    if parts.next().is_some() || source.contains("://") || !source.contains('/') {
        return None;
    }
    Some((source, cause))
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn survey() -> Survey {
    let path = repo_root().join("fixtures/survey/priors.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn catalog() -> Catalog {
    Catalog::builtin().unwrap()
}

/// The cause the diagnoser ranks first from the priors alone: the highest
/// prior, ties broken as the diagnosis breaks them ([`Catalog::cause_order`]).
fn top_cause<'a>(catalog: &Catalog, pattern: &'a Pattern) -> Option<&'a str> {
    pattern
        .causes
        .iter()
        .min_by(|a, b| {
            b.prior
                .total_cmp(&a.prior)
                .then_with(|| catalog.cause_order(&a.id, &b.id))
        })
        .map(|c| c.id.as_str())
}

/// Fails with every problem found, one per line.
fn report(check: &str, problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{check}: {} problem(s) in fixtures/survey/priors.toml:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn survey_names_only_what_the_catalog_has_and_adds_up() {
    let (survey, catalog) = (survey(), catalog());
    let mut problems = Vec::new();
    let mut seen: BTreeMap<&str, String> = BTreeMap::new();
    assert!(
        !survey.class.is_empty(),
        "the survey file has no [[class]] entry"
    );
    for (i, e) in survey.class.iter().enumerate() {
        let name = e.name(i);
        if catalog.class(&e.class).is_none() {
            problems.push(format!("{name}: class {:?} is not in the catalog", e.class));
        }
        if e.what.trim().is_empty() || e.note.trim().is_empty() {
            problems.push(format!("{name}: `what` and `note` must say something"));
        }
        if e.patterns.is_empty() {
            problems.push(format!("{name}: names no pattern"));
        }
        let mut listed = BTreeSet::new();
        for id in &e.patterns {
            if !listed.insert(id.as_str()) {
                problems.push(format!("{name}: pattern {id:?} is listed twice"));
            }
            match catalog.pattern(id) {
                None => problems.push(format!("{name}: pattern {id:?} is not in the catalog")),
                Some(p) if p.class != e.class => problems.push(format!(
                    "{name}: pattern {id:?} is of class {:?}, not {:?}",
                    p.class, e.class
                )),
                Some(_) => {}
            }
        }
        let mut causes: Vec<&str> = e.counts.keys().map(String::as_str).collect();
        causes.extend(e.unlisted.iter().map(|u| u.cause.as_str()));
        for id in causes {
            if catalog.cause(id).is_none() {
                problems.push(format!("{name}: cause {id:?} is not in causes.toml"));
            }
        }
        for (id, &n) in &e.counts {
            if n == 0 {
                problems.push(format!("{name}: cause {id:?} is counted 0 times; drop it"));
            }
        }
        let sum: usize = e.counts.values().sum();
        if sum != e.threads {
            problems.push(format!(
                "{name}: counts sum to {sum}, threads says {}",
                e.threads
            ));
        }
        if e.threads_counted.len() != e.threads {
            problems.push(format!(
                "{name}: threads_counted lists {} threads, threads says {}",
                e.threads_counted.len(),
                e.threads
            ));
        }
        let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
        for line in &e.threads_counted {
            let Some((source, cause)) = split_thread(line) else {
                problems.push(format!(
                    "{name}: {line:?} is not \"SOURCE CAUSE\" (source without a scheme)"
                ));
                continue;
            };
            if catalog.cause(cause).is_none() {
                problems.push(format!(
                    "{name}: thread {source} has cause {cause:?}, which is not in causes.toml"
                ));
            }
            *tally.entry(cause).or_default() += 1;
            if let Some(first) = seen.insert(source, name.clone()) {
                problems.push(format!(
                    "{name}: thread {source} is already counted by {first}"
                ));
            }
        }
        let counts: BTreeMap<&str, usize> =
            e.counts.iter().map(|(k, &v)| (k.as_str(), v)).collect();
        if tally != counts {
            problems.push(format!(
                "{name}: threads_counted tallies to {tally:?}, counts says {counts:?}"
            ));
        }
        for x in &e.exceptions {
            if !listed.contains(x.pattern.as_str()) {
                problems.push(format!(
                    "{name}: exception for {:?}, which is not among its patterns",
                    x.pattern
                ));
            }
            if x.why.trim().is_empty() {
                problems.push(format!(
                    "{name}: exception for {:?} gives no why",
                    x.pattern
                ));
            }
        }
        for u in &e.unlisted {
            if !listed.contains(u.pattern.as_str()) {
                problems.push(format!(
                    "{name}: unlisted waiver for {:?}, which is not among its patterns",
                    u.pattern
                ));
            }
            if u.why.trim().is_empty() {
                problems.push(format!(
                    "{name}: unlisted waiver for {:?} / {} gives no why",
                    u.pattern, u.cause
                ));
            }
        }
    }
    report("(a) names and sums", problems);
}

#[test]
fn well_supported_causes_are_listed_by_each_pattern() {
    let (survey, catalog) = (survey(), catalog());
    let mut problems = Vec::new();
    for (i, e) in survey.class.iter().enumerate() {
        let name = e.name(i);
        let waived: BTreeSet<(&str, &str)> = e
            .unlisted
            .iter()
            .map(|u| (u.pattern.as_str(), u.cause.as_str()))
            .collect();
        let mut used = BTreeSet::new();
        for id in &e.patterns {
            let Some(p) = catalog.pattern(id) else {
                continue; // reported by (a)
            };
            for (cause, n) in e.well_supported() {
                if p.causes.iter().any(|c| c.id == cause) {
                    continue;
                }
                if waived.contains(&(id.as_str(), cause)) {
                    used.insert((id.as_str(), cause));
                    continue;
                }
                problems.push(format!(
                    "{name}: pattern {id} does not list cause {cause} ({n} of {} threads), \
                     so no evidence can raise it",
                    e.threads
                ));
            }
        }
        for &(pattern, cause) in waived.difference(&used) {
            problems.push(format!(
                "{name}: the unlisted waiver for {pattern} / {cause} is not needed \
                 (listed, or below 2 threads and 10%); remove it"
            ));
        }
    }
    report("(b) well-supported causes", problems);
}

#[test]
fn top_prior_is_among_the_two_most_counted_causes() {
    let (survey, catalog) = (survey(), catalog());
    let mut problems = Vec::new();
    for (i, e) in survey.class.iter().enumerate() {
        let name = e.name(i);
        let top_two = e.top_two();
        let excepted: BTreeSet<&str> = e.exceptions.iter().map(|x| x.pattern.as_str()).collect();
        for id in &e.patterns {
            let Some(p) = catalog.pattern(id) else {
                continue; // reported by (a)
            };
            let Some(top) = top_cause(&catalog, p) else {
                problems.push(format!("{name}: pattern {id} lists no cause"));
                continue;
            };
            let fits = top_two.contains(top);
            match (fits, excepted.contains(id.as_str())) {
                (true, false) | (false, true) => {}
                (false, false) => problems.push(format!(
                    "{name}: pattern {id}'s highest-prior cause is {top} ({} of {} threads), \
                     not one of the most counted {top_two:?}; fix the prior or record an \
                     exception with why",
                    e.counts.get(top).copied().unwrap_or(0),
                    e.threads
                )),
                (true, true) => problems.push(format!(
                    "{name}: pattern {id}'s highest-prior cause {top} is now among the most \
                     counted {top_two:?}; remove its exception"
                )),
            }
        }
    }
    report("(c) highest prior", problems);
}

#[test]
fn no_counted_thread_is_a_wild_corpus_source() {
    let survey = survey();
    let cases = repo_root().join("fixtures/wild/cases");
    let holdout = repo_root().join("fixtures/wild-holdout/cases");
    let mut wild = BTreeSet::new();
    let dirs = [&cases, &holdout]
        .into_iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap_or_else(|e| panic!("{}: {e}", d.display())));
    for dir in dirs {
        let label = dir.unwrap().path().join("label.json");
        let Ok(text) = std::fs::read_to_string(&label) else {
            continue;
        };
        let json: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", label.display()));
        if let Some(source) = json.get("source").and_then(|s| s.as_str()) {
            wild.insert(source.to_string());
        }
    }
    assert!(
        !wild.is_empty(),
        "no wild-corpus source found under {}",
        cases.display()
    );
    let mut problems = Vec::new();
    for (i, e) in survey.class.iter().enumerate() {
        for line in &e.threads_counted {
            if let Some((source, _)) = split_thread(line) {
                if wild.contains(source) {
                    problems.push(format!(
                        "{}: thread {source} is a source of the wild corpus, its held-out test",
                        e.name(i)
                    ));
                }
            }
        }
    }
    report("(d) independence from fixtures/wild", problems);
}
