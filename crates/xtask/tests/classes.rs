//! `cargo xtask new-class` on a copy of the real catalog: the class and its
//! first pattern land beside their family, the catalog still loads, and the
//! scaffold's marks are what the catalog's tests refuse.

use std::path::{Path, PathBuf};
use xtask::classes::{new_class, MARK, PATTERNS_DIR};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A copy of the real catalog under a fresh root.
fn copy_of_catalog(name: &str) -> PathBuf {
    let to = std::env::temp_dir().join(format!("xtask-classes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&to);
    copy_dir(&root().join(PATTERNS_DIR), &to.join(PATTERNS_DIR));
    to
}

#[test]
fn a_new_class_lands_beside_its_family_and_the_catalog_loads() {
    let at = copy_of_catalog("new");
    let written = new_class(&at, "cuda.graph_capture", None).unwrap();
    let dir = at.join(PATTERNS_DIR);
    assert_eq!(
        written,
        [
            dir.join("classes.toml"),
            dir.join("cuda/cuda-graph-capture.toml")
        ]
    );
    // The stanza follows the last `cuda.` class, not the end of the file.
    let classes = std::fs::read_to_string(dir.join("classes.toml")).unwrap();
    let ids: Vec<&str> = classes
        .lines()
        .filter_map(|l| l.strip_prefix("id = \""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    let at_new = ids.iter().position(|&i| i == "cuda.graph_capture").unwrap();
    assert!(ids[at_new - 1].starts_with("cuda."), "{ids:?}");
    assert!(!ids[at_new + 1..].iter().any(|i| i.starts_with("cuda.")));
    assert!(classes.contains("id = \"cuda.graph_capture\"\nfamily = \"cuda\"\n"));

    // The catalog with the scaffold loads, and its pattern reports its own
    // example as the new class: a contributor starts from a working build.
    let catalog = cudnnlog::CatalogBuilder::new()
        .builtin(false)
        .add_dir(&dir)
        .build()
        .unwrap();
    let class = catalog.class("cuda.graph_capture").unwrap();
    assert!(class.title.contains(MARK));
    let pattern = catalog.pattern("cuda-graph-capture").unwrap();
    assert_eq!(pattern.examples.len(), 2);
    let scanner = cudnnlog::ScannerBuilder::new().build(catalog);
    let mut sink = cudnnlog::report::FindingsSink::new(scanner.catalog());
    scanner
        .scan_slice(pattern_example(&dir).as_bytes(), &mut sink)
        .unwrap();
    assert_eq!(
        sink.into_report().primary.as_deref(),
        Some("cuda.graph_capture")
    );
    std::fs::remove_dir_all(&at).unwrap();
}

fn pattern_example(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("cuda/cuda-graph-capture.toml")).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    v["examples"][0]["log"].as_str().unwrap().to_string()
}

#[test]
fn a_class_with_a_new_prefix_needs_its_family_and_ids_are_checked() {
    let at = copy_of_catalog("family");
    let err = new_class(&at, "tpu.hbm_oom", None).unwrap_err();
    assert!(err.to_string().contains("give its family"), "{err}");
    // With one, the pattern goes where that family's patterns are.
    let written = new_class(&at, "tpu.hbm_oom", Some("framework")).unwrap();
    assert!(
        written[1].ends_with("framework/tpu-hbm-oom.toml"),
        "{written:?}"
    );
    let classes = std::fs::read_to_string(&written[0]).unwrap();
    assert!(classes.trim_end().ends_with(&format!(
        "summary = \"{MARK}: what the log shows when this class is reported, in a few sentences.\""
    )));
    for bad in ["cuda", "CUDA.oom", "cuda.oom-x", ".oom", "cuda."] {
        assert!(new_class(&at, bad, None).is_err(), "{bad}");
    }
    assert!(new_class(&at, "cuda.oom", None)
        .unwrap_err()
        .to_string()
        .contains("declared"));
    std::fs::remove_dir_all(&at).unwrap();
}
