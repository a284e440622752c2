//! The culprit rank, scored on labelled multi-rank logs
//! (`fixtures/culprits.toml`): does the report blame the rank the log shows
//! to be at fault?

use anyhow::{Context as _, Result};
use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, ScannerBuilder};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One multi-rank log with the rank(s) at fault (`fixtures/culprits.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CulpritLabel {
    /// Relative to the workspace root.
    pub path: String,
    pub ranks: Vec<u32>,
    pub why: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CulpritFile {
    log: Vec<CulpritLabel>,
}

/// How the report's culprit compares with the labels.
#[derive(Debug, Default, Serialize)]
pub struct CulpritScores {
    pub right: u32,
    pub total: u32,
    /// (path, wanted, got) for every log not right.
    pub wrong: Vec<(String, Vec<u32>, Option<Vec<u32>>)>,
}

impl CulpritScores {
    pub fn accuracy(&self) -> Option<f64> {
        (self.total > 0).then(|| f64::from(self.right) / f64::from(self.total))
    }
}

/// The rank(s) a report blames: the primary finding's culprit, else the
/// primary finding's one rank, else the first culprit any finding names.
pub fn culprit_of(report: &Report) -> Option<Vec<u32>> {
    let primary = report
        .primary
        .as_deref()
        .and_then(|p| report.findings.iter().find(|f| f.class == p));
    primary
        .and_then(|f| f.culprit.as_ref().map(|c| c.ranks.clone()))
        .or_else(|| {
            primary
                .filter(|f| f.ranks.len() == 1)
                .map(|f| f.ranks.clone())
        })
        .or_else(|| {
            report
                .findings
                .iter()
                .find_map(|f| f.culprit.as_ref().map(|c| c.ranks.clone()))
        })
}

/// Scores the culprit on the labelled multi-rank logs listed in `file`.
pub fn score_culprits(root: &Path, file: &Path) -> Result<CulpritScores> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let labels: CulpritFile =
        toml::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    let mut out = CulpritScores::default();
    for l in labels.log {
        let path = root.join(&l.path);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner.scan_slice(&bytes, &mut sink)?;
        let got = culprit_of(&sink.into_report());
        out.total += 1;
        if got.as_deref() == Some(&l.ranks[..]) {
            out.right += 1;
        } else {
            out.wrong.push((l.path, l.ranks, got));
        }
    }
    Ok(out)
}

/// The culprit line of the figures.
pub fn render_culprits(c: &CulpritScores, verbose: bool) -> String {
    let mut out = format!(
        "culprit rank right on {}/{} labelled multi-rank logs ({})\n",
        c.right,
        c.total,
        crate::eval::pct(c.accuracy())
    );
    if verbose {
        for (path, want, got) in &c.wrong {
            out.push_str(&format!("  {path}: culprit {got:?} (want {want:?})\n"));
        }
    }
    out
}
