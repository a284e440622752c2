//! An embedder gets the CLI's words from the library: for every real log
//! of the fixtures, `cudnnlog::render::text` and `cudnnlog::render::markdown`
//! of the report `--format json` prints are, byte for byte, what
//! `--format compact` and `--format markdown` print.

mod common;

use common::{cudnnlog, json, root};
use cudnnlog::Catalog;

/// The real logs of several layouts: captures on a GPU, multi-rank
/// consoles, public threads' excerpts.
fn logs() -> Vec<String> {
    let mut logs = Vec::new();
    for dir in ["fixtures/real", "fixtures/gpu", "fixtures/wild/cases"] {
        let mut paths: Vec<_> = walk(&root().join(dir))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "log" || e == "txt"))
            .collect();
        paths.sort();
        logs.extend(
            paths
                .into_iter()
                .step_by(7)
                .map(|p| p.strip_prefix(root()).unwrap().display().to_string()),
        );
    }
    logs
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_library_renders_the_words_the_cli_prints() {
    let catalog = Catalog::builtin().unwrap();
    let logs = logs();
    assert!(logs.len() > 20, "{logs:?}");
    let mut failed = 0;
    for log in &logs {
        let report = json(&cudnnlog(&["scan", "--format", "json", log], None));
        failed += usize::from(report.action.is_some());
        for (format, want) in [
            ("compact", cudnnlog::render::text(&report)),
            ("markdown", cudnnlog::render::markdown(&report, &catalog)),
        ] {
            let out = cudnnlog(&["scan", "--format", format, log], None);
            let got = String::from_utf8(out.stdout).unwrap();
            assert_eq!(got, want, "{format} of {log}");
        }
    }
    assert!(failed > 10, "failed logs with an action: {failed}");
}
