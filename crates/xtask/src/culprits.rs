//! The culprit rank and the primary failure, scored on labelled multi-rank
//! jobs (`fixtures/culprits.toml`): does the report blame the rank the log
//! shows to be at fault, and is its first failure the primary?
//!
//! A label's `path` is one log (an interleaved console, say) or a folder:
//! every file under it is one job, scanned as `cudnnlog scan DIR` scans it
//! (per-rank files are the job's ranks, torchrun's `attempt_N/<rank>/`
//! layout included). Figures are given overall, per launcher family and
//! per split: `holdout` labels were set aside before the tool was tuned
//! on the others, and say how well that tuning generalises.

use anyhow::{Context as _, Result};
use cudnnlog::fleet::{group, scan_job, Job};
use cudnnlog::{Catalog, MmapChoice, Report, ScannerBuilder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One multi-rank job with the rank(s) at fault (`fixtures/culprits.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CulpritLabel {
    /// A log or a folder of one job's logs, relative to the workspace root.
    pub path: String,
    /// The global rank(s) at fault.
    pub ranks: Vec<u32>,
    /// Why, from what the log (and the thread or the script) shows.
    pub why: String,
    /// The class of the first failure, when labelled.
    #[serde(default)]
    pub primary: Option<String>,
    /// The launcher family (`torchrun`, `srun`, `mpirun`, …); `none` for
    /// ranks started by hand.
    #[serde(default = "none")]
    pub launcher: String,
    /// `capture` (a scenario run on a GPU here) or `thread` (a public
    /// issue thread).
    #[serde(default)]
    pub origin: Option<String>,
    /// The public thread a `thread` log comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// `dev` (tuned on) or `holdout` (scored, never tuned on).
    #[serde(default = "dev")]
    pub split: String,
}

fn none() -> String {
    "none".into()
}

fn dev() -> String {
    "dev".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CulpritFile {
    log: Vec<CulpritLabel>,
}

/// Right answers out of labelled ones.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Tally {
    pub culprit_right: u32,
    pub total: u32,
    pub primary_right: u32,
    pub primary_labelled: u32,
}

impl Tally {
    fn add(&mut self, culprit: bool, primary: Option<bool>) {
        self.total += 1;
        self.culprit_right += u32::from(culprit);
        if let Some(p) = primary {
            self.primary_labelled += 1;
            self.primary_right += u32::from(p);
        }
    }
}

/// How the reports compare with the labels.
#[derive(Debug, Default, Serialize)]
pub struct CulpritScores {
    pub right: u32,
    pub total: u32,
    /// Per split (`dev`, `holdout`), then per launcher family.
    pub by_split: BTreeMap<String, Tally>,
    pub by_launcher: BTreeMap<String, Tally>,
    /// Per origin (`capture`, `thread`).
    pub by_origin: BTreeMap<String, Tally>,
    /// (path, wanted, got) for every dev job whose culprit is not right
    /// (holdout jobs are counted, never listed: they are not tuned on).
    pub wrong: Vec<(String, Vec<u32>, Option<Vec<u32>>)>,
    /// (path, wanted, got) for every dev job whose primary is not right.
    pub wrong_primary: Vec<(String, String, Option<String>)>,
}

impl CulpritScores {
    pub fn accuracy(&self) -> Option<f64> {
        (self.total > 0).then(|| f64::from(self.right) / f64::from(self.total))
    }

    /// The primary's accuracy over the labels that give one.
    pub fn primary_accuracy(&self) -> Option<f64> {
        let (r, n) = self.by_split.values().fold((0, 0), |(r, n), t| {
            (r + t.primary_right, n + t.primary_labelled)
        });
        (n > 0).then(|| f64::from(r) / f64::from(n))
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

/// Every file under `dir`, sorted.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The job a label's path names: one file, or every file under a folder
/// with the ranks their names give.
pub fn job_of(path: &Path) -> Result<Job> {
    if !path.is_dir() {
        return Ok(Job::single(path.to_path_buf()));
    }
    let files = files_under(path)?;
    let sources = group(&files).into_iter().flat_map(|j| j.sources).collect();
    Ok(Job {
        name: path.display().to_string(),
        sources,
    })
}

/// Scans one labelled job as `cudnnlog scan` does.
pub fn report_of(scanner: &cudnnlog::Scanner, path: &Path) -> Result<Report> {
    let job = job_of(path)?;
    let done = scan_job(scanner, &job, MmapChoice::never());
    if let Some(e) = done.verdict.error {
        anyhow::bail!("{}: {e}", path.display());
    }
    Ok(done.report)
}

/// Scores the culprit and the primary on the labelled jobs listed in
/// `file`.
pub fn score_culprits(root: &Path, file: &Path) -> Result<CulpritScores> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let labels: CulpritFile =
        toml::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    let mut out = CulpritScores::default();
    for l in labels.log {
        let report = report_of(&scanner, &root.join(&l.path))?;
        let got = culprit_of(&report);
        let culprit_ok = got.as_deref() == Some(&l.ranks[..]);
        let primary_ok = l
            .primary
            .as_ref()
            .map(|want| report.primary.as_ref() == Some(want));
        out.total += 1;
        out.by_split
            .entry(l.split.clone())
            .or_default()
            .add(culprit_ok, primary_ok);
        out.by_launcher
            .entry(l.launcher.clone())
            .or_default()
            .add(culprit_ok, primary_ok);
        out.by_origin
            .entry(l.origin.clone().unwrap_or_else(none))
            .or_default()
            .add(culprit_ok, primary_ok);
        let listed = l.split != "holdout";
        if culprit_ok {
            out.right += 1;
        } else if listed {
            out.wrong.push((l.path.clone(), l.ranks.clone(), got));
        }
        if primary_ok == Some(false) && listed {
            out.wrong_primary.push((
                l.path.clone(),
                l.primary.clone().unwrap_or_default(),
                report.primary.clone(),
            ));
        }
    }
    Ok(out)
}

/// The culprit figures: overall, per split and per launcher.
pub fn render_culprits(c: &CulpritScores, verbose: bool) -> String {
    let ratio = |r: u32, n: u32| crate::eval::pct((n > 0).then(|| f64::from(r) / f64::from(n)));
    let mut out = format!(
        "culprit rank right on {}/{} labelled multi-rank jobs ({})\n",
        c.right,
        c.total,
        crate::eval::pct(c.accuracy())
    );
    out.push_str(&format!(
        "{:<20} {:>5} {:>9} {:>9}\n",
        "multi-rank jobs", "jobs", "culprit", "primary"
    ));
    let rows = c
        .by_split
        .iter()
        .map(|(k, t)| (format!("split {k}"), t))
        .chain(c.by_origin.iter().map(|(k, t)| (format!("origin {k}"), t)))
        .chain(
            c.by_launcher
                .iter()
                .map(|(k, t)| (format!("launcher {k}"), t)),
        );
    for (name, t) in rows {
        out.push_str(&format!(
            "{:<20} {:>5} {:>9} {:>9}\n",
            name,
            t.total,
            ratio(t.culprit_right, t.total),
            ratio(t.primary_right, t.primary_labelled)
        ));
    }
    if verbose {
        for (path, want, got) in &c.wrong {
            out.push_str(&format!("  {path}: culprit {got:?} (want {want:?})\n"));
        }
        for (path, want, got) in &c.wrong_primary {
            out.push_str(&format!("  {path}: primary {got:?} (want {want:?})\n"));
        }
    }
    out
}
