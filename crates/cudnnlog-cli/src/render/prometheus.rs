//! `--format prometheus`: the text exposition format (version 0.0.4), for
//! node_exporter's textfile collector or any scrape. Gauges of the jobs a
//! scan saw, by outcome, by primary class and by action,
//! and the time of the scan; counts only, so a fleet of any size is written
//! from its summary, no verdict kept ([`Render::counts_only`]).
//!
//! Label values are bounded: the outcomes, the built-in catalog's class ids
//! plus `unknown` (a class of a user's `--patterns` directory, or anything
//! else, is counted as `unknown`: a dashboard's series are the same on
//! every machine of one release), and every value is escaped as the format
//! asks (backslash, double quote, newline). Every series of a family is
//! written, 0 when no job has it, so that a query never meets a gap.

use super::{Ctx, Render};
use cudnnlog::fleet::FleetDocument;
use cudnnlog::report::{Action, Outcome};
use cudnnlog::Report;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::OnceLock;

/// The Prometheus renderer.
pub struct Prometheus;

/// The class label of a primary class that is not one of the built-in
/// catalog's.
pub const UNKNOWN_CLASS: &str = "unknown";

/// What the metrics are made of: a scan's jobs counted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Jobs by outcome: failed, degraded, clean.
    pub failed: u64,
    /// Jobs whose most important finding is a warning.
    pub degraded: u64,
    /// Jobs with no finding.
    pub clean: u64,
    /// Jobs none of whose files could be read.
    pub unreadable: u64,
    /// Jobs by primary class id, as the scan named them (bounded when
    /// written: [`class_label`]).
    pub by_class: BTreeMap<String, u64>,
    /// Failed jobs by what to do about them.
    pub by_action: BTreeMap<Action, u64>,
}

impl Counts {
    /// One job's report, counted.
    pub fn of_report(report: &Report) -> Counts {
        let mut counts = Counts::default();
        match report.outcome {
            Outcome::Failed => counts.failed = 1,
            Outcome::Degraded => counts.degraded = 1,
            Outcome::Clean => counts.clean = 1,
        }
        if let Some(p) = cudnnlog::fleet::primary_finding(report) {
            counts.by_class.insert(p.class.clone(), 1);
        }
        if let Some(a) = report.action {
            counts.by_action.insert(a, 1);
        }
        counts
    }

    /// A fleet's summary, counted.
    pub fn of_summary(summary: &cudnnlog::fleet::Summary) -> Counts {
        Counts {
            failed: summary.failed,
            degraded: summary.degraded,
            clean: summary.clean,
            unreadable: summary.unreadable,
            by_class: summary.by_primary.clone(),
            by_action: summary.by_action.clone(),
        }
    }
}

/// The built-in catalog's class ids, sorted: the `class` label's values
/// besides [`UNKNOWN_CLASS`]. Loaded once.
pub fn builtin_classes() -> &'static [String] {
    static CLASSES: OnceLock<Vec<String>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut ids: Vec<String> = cudnnlog::Catalog::builtin()
            .map(|c| c.classes().iter().map(|c| c.id.clone()).collect())
            .unwrap_or_default();
        ids.sort();
        ids
    })
}

/// The `class` label value of a primary class id: itself when the built-in
/// catalog has it, else [`UNKNOWN_CLASS`].
pub fn class_label<'a>(class: &'a str, builtin: &[String]) -> &'a str {
    match builtin.binary_search_by(|c| c.as_str().cmp(class)) {
        Ok(_) => class,
        Err(_) => UNKNOWN_CLASS,
    }
}

/// A label value escaped as the text format asks: `\` as `\\`, `"` as
/// `\"`, a newline as `\n`.
///
/// ```ignore
/// assert_eq!(escape_label("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
/// ```
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// One metric family: its name, help, label name and its series (label
/// value, number), each written in the order given.
pub struct Family {
    /// The metric name, `cudnnlog_…`.
    pub name: &'static str,
    /// The HELP text (one line).
    pub help: &'static str,
    /// The one label its series differ by; `None` for a single series.
    pub label: Option<&'static str>,
    /// The series.
    pub series: Vec<(String, f64)>,
}

/// The families a scan's counts make, taken at `now` (seconds since the
/// Unix epoch). A new family is one more entry here.
pub fn families(counts: &Counts, builtin: &[String], now: f64) -> Vec<Family> {
    let outcomes = [
        ("failed", counts.failed),
        ("degraded", counts.degraded),
        ("clean", counts.clean),
        ("unreadable", counts.unreadable),
    ];
    let mut by_class: BTreeMap<&str, u64> = builtin.iter().map(|c| (c.as_str(), 0)).collect();
    by_class.insert(UNKNOWN_CLASS, 0);
    for (class, n) in &counts.by_class {
        *by_class.entry(class_label(class, builtin)).or_default() += n;
    }
    vec![
        Family {
            name: "cudnnlog_jobs",
            help: "Jobs scanned, by outcome (unreadable: no file of the job could be read).",
            label: Some("outcome"),
            series: outcomes
                .iter()
                .map(|(o, n)| (o.to_string(), *n as f64))
                .collect(),
        },
        Family {
            name: "cudnnlog_jobs_by_class",
            help: "Failed or degraded jobs, by the class of their primary finding \
                   (unknown: a class the built-in catalog does not have).",
            label: Some("class"),
            series: by_class
                .into_iter()
                .map(|(c, n)| (c.to_string(), n as f64))
                .collect(),
        },
        Family {
            name: "cudnnlog_jobs_by_action",
            help: "Failed or degraded jobs, by what to do about them: retry, stop or investigate.",
            label: Some("action"),
            series: Action::ALL
                .iter()
                .map(|a| {
                    let n = counts.by_action.get(a).copied().unwrap_or(0);
                    (a.as_str().to_string(), n as f64)
                })
                .collect(),
        },
        Family {
            name: "cudnnlog_scan_timestamp_seconds",
            help: "When the scan that wrote these metrics ended, in seconds since the Unix epoch.",
            label: None,
            series: vec![(String::new(), now)],
        },
    ]
}

/// Writes `families` in the text exposition format: HELP, TYPE (gauge),
/// then each series.
pub fn write_families(out: &mut dyn Write, families: &[Family]) -> std::io::Result<()> {
    for f in families {
        writeln!(out, "# HELP {} {}", f.name, f.help)?;
        writeln!(out, "# TYPE {} gauge", f.name)?;
        for (value, n) in &f.series {
            match f.label {
                Some(label) => {
                    writeln!(out, "{}{{{label}=\"{}\"}} {n}", f.name, escape_label(value))?
                }
                None => writeln!(out, "{} {n}", f.name)?,
            }
        }
    }
    Ok(())
}

/// Seconds since the Unix epoch, to the millisecond.
fn now() -> f64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_millis() as f64) / 1000.0
}

impl Prometheus {
    fn write(out: &mut dyn Write, counts: &Counts) -> anyhow::Result<()> {
        write_families(out, &families(counts, builtin_classes(), now()))?;
        Ok(())
    }
}

impl Render for Prometheus {
    fn report(&self, out: &mut dyn Write, _: &Ctx<'_>, report: &Report) -> anyhow::Result<()> {
        Prometheus::write(out, &Counts::of_report(report))
    }

    fn fleet(&self, out: &mut dyn Write, _: &Ctx<'_>, fleet: &FleetDocument) -> anyhow::Result<()> {
        Prometheus::write(out, &Counts::of_summary(&fleet.summary))
    }

    fn counts_only(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(counts: &Counts, builtin: &[String]) -> String {
        let mut out = Vec::new();
        write_families(&mut out, &families(counts, builtin, 1_700_000_000.5)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label("a\"b\\c\nd"), r#"a\"b\\c\nd"#);
        assert_eq!(escape_label("cuda.oom"), "cuda.oom");
        assert_eq!(escape_label("é\t"), "é\t");
        let fam = Family {
            name: "cudnnlog_x",
            help: "x",
            label: Some("class"),
            series: vec![("evil\"} 1\ncudnnlog_y 2".into(), 3.0)],
        };
        let mut out = Vec::new();
        write_families(&mut out, &[fam]).unwrap();
        let out = String::from_utf8(out).unwrap();
        // One series line: the newline and quote cannot forge another.
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(out.ends_with("cudnnlog_x{class=\"evil\\\"} 1\\ncudnnlog_y 2\"} 3\n"));
    }

    #[test]
    fn classes_outside_the_builtin_catalog_are_unknown() {
        let builtin = vec!["cuda.oom".to_string(), "nccl.timeout".to_string()];
        let mut counts = Counts {
            failed: 5,
            ..Counts::default()
        };
        for (c, n) in [("cuda.oom", 2), ("mine.a", 1), ("mine.b", 2)] {
            counts.by_class.insert(c.into(), n);
        }
        let out = text(&counts, &builtin);
        assert!(out.contains("cudnnlog_jobs_by_class{class=\"cuda.oom\"} 2\n"));
        assert!(out.contains("cudnnlog_jobs_by_class{class=\"unknown\"} 3\n"));
        assert!(out.contains("cudnnlog_jobs_by_class{class=\"nccl.timeout\"} 0\n"));
        assert!(!out.contains("mine."));
        let series = out
            .lines()
            .filter(|l| l.starts_with("cudnnlog_jobs_by_class{"))
            .count();
        assert_eq!(series, builtin.len() + 1);
    }

    #[test]
    fn every_outcome_is_written_zero_when_none() {
        let out = text(&Counts::default(), &[]);
        for o in ["failed", "degraded", "clean", "unreadable"] {
            assert!(
                out.contains(&format!("cudnnlog_jobs{{outcome=\"{o}\"}} 0\n")),
                "{out}"
            );
        }
        assert!(out.contains("cudnnlog_scan_timestamp_seconds 1700000000.5\n"));
        for a in ["retry", "stop", "investigate"] {
            assert!(out.contains(&format!("cudnnlog_jobs_by_action{{action=\"{a}\"}} 0\n")));
        }
        assert!(out.contains("# TYPE cudnnlog_jobs gauge\n"));
    }

    #[test]
    fn the_builtin_classes_are_the_catalogs() {
        let ids = builtin_classes();
        assert!(ids.len() > 10);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(class_label("cuda.oom", ids), "cuda.oom");
        assert_eq!(class_label("cuda.oom\"", ids), UNKNOWN_CLASS);
    }
}
