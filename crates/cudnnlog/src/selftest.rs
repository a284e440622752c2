//! Running a catalog's examples and counterexamples.
//!
//! Every example of a pattern must, when scanned as a log with the whole
//! catalog, be reported as that pattern (and yield the facts it lists);
//! every counterexample must not match the pattern at all. The test suite
//! runs this over the built-in catalog, and users over their own.

use crate::catalog::{Catalog, Pattern};
use crate::facts::Fact;
use crate::sink::{FnSink, Match};
use crate::{Error, ScannerBuilder};
use std::fmt;

/// One example or counterexample that did not behave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailure {
    /// The pattern's id.
    pub pattern: String,
    /// The pattern's file.
    pub file: String,
    /// `example 2`, `counterexample 1`.
    pub case: String,
    /// What went wrong.
    pub problem: String,
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}): {}: {}",
            self.pattern, self.file, self.case, self.problem
        )
    }
}

struct Seen {
    pattern: String,
    class: String,
    facts: Vec<(String, Fact)>,
}

fn run(scanner: &crate::Scanner, log: &str) -> Vec<Seen> {
    let mut seen = Vec::new();
    let mut sink = FnSink(|m: &Match<'_>| {
        seen.push(Seen {
            pattern: m.pattern.id.clone(),
            class: m.class.to_string(),
            facts: m
                .facts()
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        });
        Ok::<bool, Error>(true)
    });
    scanner
        .scan_slice(log.as_bytes(), &mut sink)
        .expect("scanning memory cannot fail");
    seen
}

fn toml_to_fact(v: &toml::Value) -> Option<Fact> {
    match v {
        toml::Value::Integer(n) if *n >= 0 => Some(Fact::Int(*n as u64)),
        toml::Value::String(s) => Some(Fact::Text(s.clone())),
        _ => None,
    }
}

/// Checks every pattern of `catalog`; an empty result means all passed.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin().unwrap();
/// let failures = cudnnlog::catalog::check_catalog(&catalog);
/// assert!(failures.is_empty(), "{failures:?}");
/// ```
pub fn check_catalog(catalog: &Catalog) -> Vec<CheckFailure> {
    check_patterns(catalog, |_| true)
}

/// Checks the patterns of `catalog` that `select` picks (a user's own
/// directory, say), scanning each example with the whole catalog.
///
/// ```
/// let catalog = cudnnlog::Catalog::builtin().unwrap();
/// let failures = cudnnlog::catalog::check_patterns(&catalog, |p| p.class == "cuda.oom");
/// assert!(failures.is_empty(), "{failures:?}");
/// ```
pub fn check_patterns(
    catalog: &Catalog,
    mut select: impl FnMut(&Pattern) -> bool,
) -> Vec<CheckFailure> {
    let scanner = ScannerBuilder::new().build(catalog.clone());
    let mut failures = Vec::new();
    for p in catalog.patterns() {
        if select(p) {
            check_pattern(catalog, &scanner, p, &mut failures);
        }
    }
    check_probes(catalog, &scanner, &mut failures);
    failures
}

/// Every example of every environment probe must yield the fields it
/// expects, read by that probe.
fn check_probes(catalog: &Catalog, scanner: &crate::Scanner, failures: &mut Vec<CheckFailure>) {
    struct EnvSink<'p>(
        Vec<(String, String, String)>,
        std::marker::PhantomData<&'p ()>,
    );
    impl crate::sink::Sink for EnvSink<'_> {
        type Error = Error;
        fn matched(&mut self, _: &Match<'_>) -> Result<bool, Error> {
            Ok(true)
        }
        fn environment(&mut self, f: &crate::sink::EnvFact<'_>) -> Result<(), Error> {
            self.0
                .push((f.probe.id.clone(), f.field.to_string(), f.value.clone()));
            Ok(())
        }
    }
    for probe in catalog.probes() {
        for (i, ex) in probe.examples.iter().enumerate() {
            let mut sink = EnvSink(Vec::new(), std::marker::PhantomData);
            scanner
                .scan_slice(ex.log.as_bytes(), &mut sink)
                .expect("scanning memory cannot fail");
            for (field, want) in &ex.expect {
                let got: Vec<&str> = sink
                    .0
                    .iter()
                    .filter(|(p, f, _)| *p == probe.id && f == field)
                    .map(|(_, _, v)| v.as_str())
                    .collect();
                if !got.contains(&want.as_str()) {
                    failures.push(CheckFailure {
                        pattern: probe.id.clone(),
                        file: if probe.build.is_some() {
                            "fingerprints.toml"
                        } else {
                            "environment.toml"
                        }
                        .into(),
                        case: format!("example {}", i + 1),
                        problem: format!("{field}: expected {want:?}, got {got:?}"),
                    });
                }
            }
        }
    }
}

fn check_pattern(
    catalog: &Catalog,
    scanner: &crate::Scanner,
    p: &Pattern,
    failures: &mut Vec<CheckFailure>,
) {
    let mut fail = |case: String, problem: String| {
        failures.push(CheckFailure {
            pattern: p.id.clone(),
            file: p.file.clone(),
            case,
            problem,
        });
    };
    for (i, ex) in p.examples.iter().enumerate() {
        let case = format!("example {}", i + 1);
        let seen = run(scanner, &ex.log);
        let Some(hit) = seen.iter().find(|s| s.pattern == p.id) else {
            let got: Vec<String> = seen
                .iter()
                .filter(|s| s.class == p.class)
                .map(|s| s.pattern.clone())
                .collect();
            let problem = if got.is_empty() {
                "does not match".to_string()
            } else {
                format!("reported as {} instead", got.join(", "))
            };
            fail(case, problem);
            continue;
        };
        for (name, want) in &ex.facts {
            let got = hit.facts.iter().find(|(k, _)| k == name).map(|(_, v)| v);
            if got != toml_to_fact(want).as_ref() {
                fail(
                    case.clone(),
                    format!("fact {name}: expected {want}, got {got:?}"),
                );
            }
        }
        // Degrade, don't drop: without any one of its optional fact parts
        // (a release that leaves it out, a paste that cut it), the message
        // is still reported as the class.
        for (j, f) in p.facts.iter().enumerate() {
            let Some(m) = f.regex().find(&ex.log) else {
                continue;
            };
            let cut = format!("{}{}", &ex.log[..m.start()], &ex.log[m.end()..]);
            if !run(scanner, &cut).iter().any(|s| s.class == p.class) {
                fail(
                    case.clone(),
                    format!(
                        "without the part fact {} matches ({:?}) the class is lost",
                        j + 1,
                        m.as_str()
                    ),
                );
            }
        }
    }
    let alone = ScannerBuilder::new().build(catalog.only(&[p.id.as_str()]));
    for (i, cx) in p.counterexamples.iter().enumerate() {
        if !run(&alone, &cx.log).is_empty() {
            fail(format!("counterexample {}", i + 1), "matches".to_string());
        }
    }
}
