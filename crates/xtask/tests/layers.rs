//! The floor plan guard: the library as it is holds, and a deliberate
//! upward import, a circle or a glob in a copy of its real sources is
//! caught and named.

use std::path::{Path, PathBuf};
use xtask::layers::{judge, measure, read_tree, File, Table};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn table() -> Table {
    let text = std::fs::read_to_string(root().join("crates/xtask/layers.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

fn tree() -> Vec<File> {
    read_tree(&root().join("crates/cudnnlog/src")).unwrap()
}

fn with_line(mut files: Vec<File>, rel: &str, line: &str) -> Vec<File> {
    let f = files.iter_mut().find(|f| f.rel == rel).unwrap();
    f.text = format!("{line}\n{}", f.text);
    files
}

#[test]
fn the_library_holds_its_floor_plan() {
    let plan = measure(&tree());
    let found = judge(&plan, &table()).unwrap();
    assert!(found.ok(), "{}", xtask::layers::render(&plan, &found));
    assert!(found.upward.is_empty());
    assert!(plan.arrows.len() > 40, "the measure reads the imports");
}

#[test]
fn an_upward_import_is_named_with_its_place() {
    let files = with_line(tree(), "text.rs", "use crate::diagnose::FindingsSink;");
    let found = judge(&measure(&files), &table()).unwrap();
    assert!(!found.ok());
    let a = &found.forbidden[0];
    assert_eq!(
        (a.from.as_str(), a.to.as_str(), a.at.as_str()),
        ("text", "diagnose", "text.rs:1")
    );
    assert_eq!(found.upward.len(), 1);
}

#[test]
fn a_circle_through_a_reexport_and_a_path_in_code_is_caught() {
    // `crate::Scanner` is the root's re-export of scan's type; a path in
    // code (not a `use`) counts as much as an import.
    let files = with_line(tree(), "catalog/query.rs", "fn _f(_: &crate::Scanner) {}");
    let found = judge(&measure(&files), &table()).unwrap();
    assert!(found
        .forbidden
        .iter()
        .any(|a| a.from == "catalog" && a.to == "scan"));
    assert!(found
        .circles
        .iter()
        .any(|c| c.contains(&"catalog".to_string()) && c.contains(&"scan".to_string())));
}

#[test]
fn globs_and_comments() {
    let files = with_line(
        tree(),
        "scan/stream.rs",
        "// use crate::diagnose::X;\nconst _S: &str = \"crate::fleet::Y\";\nuse super::*;",
    );
    let plan = measure(&files);
    let found = judge(&plan, &table()).unwrap();
    assert_eq!(found.globs, ["scan/stream.rs:3"]);
    assert!(
        found.forbidden.is_empty(),
        "comments and strings are not imports"
    );
}
