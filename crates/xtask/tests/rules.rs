//! The evidence rules' documentation and scaffolding: the real rule files
//! document themselves, a new rule is one file and one table line, and a
//! rule that is undocumented or missing from the table is named.

use std::path::{Path, PathBuf};
use xtask::rules::{load, new_rule, parse, table, RULES_DIR};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A copy of the real rule files under a fresh root.
fn copy_of_rules(name: &str) -> PathBuf {
    let to = std::env::temp_dir().join(format!("xtask-rules-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    let dir = to.join(RULES_DIR);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(root().join(RULES_DIR)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    to
}

#[test]
fn every_rule_file_documents_itself_in_table_order() {
    let rules = load(&root()).unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"memory_numbers"));
    assert!(
        ids.contains(&"driver") && ids.contains(&"culprit"),
        "{ids:?}"
    );
    let driver = rules.iter().find(|r| r.id == "driver").unwrap();
    assert!(
        driver.effect.contains("`driver_too_old` ×20"),
        "{}",
        driver.effect
    );
    assert_eq!(driver.remedies, ["driver_too_old"]);
    let memory = &rules[0];
    assert_eq!(
        memory.remedies,
        ["memory_pressure", "fragmentation", "foreign_process"]
    );
    // A rule writes one remedy per cause at most (the library asserts it too).
    for r in &rules {
        let mut causes = r.remedies.clone();
        causes.sort();
        causes.dedup();
        assert_eq!(causes.len(), r.remedies.len(), "{}", r.id);
    }
}

#[test]
fn a_new_rule_is_one_file_and_one_table_line() {
    let at = copy_of_rules("new");
    let before = load(&at).unwrap().len();
    let written = new_rule(&at, "gpu_clock_throttled").unwrap();
    assert_eq!(written.len(), 2);
    let rules = load(&at).unwrap();
    assert_eq!(rules.len(), before + 1);
    assert_eq!(
        rules.last().unwrap().id,
        "gpu_clock_throttled",
        "it runs last"
    );
    let module = std::fs::read_to_string(at.join(RULES_DIR).join("mod.rs")).unwrap();
    let mods: Vec<&str> = module
        .lines()
        .filter(|l| l.starts_with("mod ") && l.ends_with(';'))
        .collect();
    let mut sorted = mods.clone();
    sorted.sort();
    assert_eq!(mods, sorted, "its `mod` line keeps the list sorted");
    assert!(table(&at)
        .unwrap()
        .contains("| `gpu_clock_throttled` | TODO"));
    // The same id twice, or one that is no module name, is refused.
    assert!(new_rule(&at, "gpu_clock_throttled").is_err());
    assert!(new_rule(&at, "Two-Copies").is_err());
    std::fs::remove_dir_all(at).unwrap();
}

#[test]
fn a_rule_file_missing_from_the_table_is_named() {
    let at = copy_of_rules("stray");
    let dir = at.join(RULES_DIR);
    std::fs::copy(dir.join("driver.rs"), dir.join("driver_again.rs")).unwrap();
    let err = load(&at).unwrap_err().to_string();
    assert!(err.contains("driver_again"), "{err}");
    std::fs::remove_dir_all(at).unwrap();
}

#[test]
fn an_undocumented_effect_is_an_error_naming_the_rule() {
    let text = "//! Reads the clock.\n//!\n//! **Evidence:** the clock.\n\nfn weigh() {}\n";
    let err = parse("clock", text).unwrap_err().to_string();
    assert!(err.contains("`clock`") && err.contains("Effect"), "{err}");
    let no_summary = "//! **Evidence:** x\n//!\n//! **Effect:** y\n";
    assert!(parse("clock", no_summary).is_err());
}
