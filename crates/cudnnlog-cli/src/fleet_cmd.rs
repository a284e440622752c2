//! Many jobs at once: a verdict per job, then the fleet summary grouped by
//! fingerprint. Jobs are scanned on every core; NDJSON prints each verdict
//! as soon as its job is done, the other formats once all are.

use crate::markdown::md;
use crate::render::{clip, sanitize, Paint};
use crate::Format;
use cudnnlog::fleet::{self, FleetDocument, Summary, Triaged, Verdict};
use cudnnlog::job::Job;
use cudnnlog::report::Outcome;
use cudnnlog::{MmapChoice, Scanner};
use std::io::{IsTerminal, Write};
use tabled::settings::Style;
use tabled::{Table, Tabled};

/// Widest job name in the table, in characters.
const TABLE_JOB: usize = 48;
/// Widest cause or message in the table.
const TABLE_TEXT: usize = 56;
/// Groups shown in the table's summary; JSON carries them all.
const TABLE_GROUPS: usize = 10;
/// A terminal shows a progress bar over this many jobs.
const PROGRESS_MIN_JOBS: usize = 200;

/// What the jobs came to, for the exit status.
pub struct Done {
    /// Verdicts by outcome.
    pub summary: Summary,
    /// A job had a finding at least this severe: any finding.
    pub any_finding: bool,
}

/// Scans `jobs` and writes their verdicts and summary to standard output.
pub fn run(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    format: Format,
    color: bool,
    quiet: bool,
) -> anyhow::Result<Done> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let bar =
        (!quiet && jobs.len() >= PROGRESS_MIN_JOBS && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(jobs.len() as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{pos}/{len} jobs [{bar:30}] {per_sec} {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
    let mut summary = Summary::default();
    let mut kept: Vec<Option<Triaged>> = vec![None; jobs.len()];
    let mut any_finding = false;
    let mut failure: Option<anyhow::Error> = None;
    fleet::triage(scanner, jobs, mmap, |i, done| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        summary.add(&done.verdict);
        any_finding |= done.verdict.findings > 0;
        if failure.is_some() {
            return;
        }
        match format {
            Format::Ndjson => {
                if let Err(e) = write_verdict(&mut out, &done.verdict) {
                    failure = Some(e);
                }
            }
            Format::Json => kept[i] = Some(done),
            // The table and Markdown need only the verdicts.
            _ => {
                kept[i] = Some(Triaged {
                    verdict: done.verdict,
                    report: empty_report(),
                })
            }
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let summary = summary.finish();
    let done: Vec<Triaged> = kept.into_iter().flatten().collect();
    match format {
        Format::Ndjson => {
            let mut v = serde_json::to_value(&summary)?;
            let obj = v.as_object_mut().expect("a summary is an object");
            obj.insert("type".into(), "fleet_summary".into());
            obj.insert("schema".into(), fleet::SCHEMA.into());
            crate::json_out::compact(&mut out, &v)?;
            writeln!(out)?;
        }
        Format::Json => {
            let doc = FleetDocument {
                schema: fleet::SCHEMA,
                jobs: done,
                summary: summary.clone(),
            };
            crate::json_out::pretty(&mut out, &doc)?;
            writeln!(out)?;
        }
        Format::Table => table(&mut out, &done, &summary, color)?,
        Format::Markdown => markdown(&mut out, &done, &summary)?,
    }
    out.flush()?;
    Ok(Done {
        summary,
        any_finding,
    })
}

fn empty_report() -> cudnnlog::Report {
    cudnnlog::Report {
        schema: cudnnlog::report::SCHEMA.to_string(),
        sources: Vec::new(),
        environment: Default::default(),
        outcome: Outcome::Clean,
        primary: None,
        findings: Vec::new(),
        cross_run: Vec::new(),
        unclassified: Vec::new(),
    }
}

/// One `{"type":"verdict",…}` line.
fn write_verdict(out: &mut impl Write, v: &Verdict) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(v)?;
    value
        .as_object_mut()
        .expect("a verdict is an object")
        .insert("type".into(), "verdict".into());
    crate::json_out::compact(&mut *out, &value)?;
    writeln!(out)?;
    // A pipeline reads each verdict as soon as its job is done.
    out.flush()?;
    Ok(())
}

fn outcome(v: &Verdict) -> &'static str {
    v.outcome.map_or("unreadable", Outcome::as_str)
}

/// Where the primary failure was first seen: `file:line`, with the rank.
fn first(v: &Verdict) -> String {
    let Some(p) = &v.first else {
        return "-".into();
    };
    let file = if v.sources.len() > 1 {
        let name = p.path.rsplit('/').next().unwrap_or(&p.path);
        format!("{name}:")
    } else {
        "line ".to_string()
    };
    let mut s = format!("{file}{}", p.line);
    if let Some(r) = v
        .culprit
        .as_ref()
        .and_then(|c| c.ranks.first())
        .or(p.rank.as_ref())
    {
        s.push_str(&format!(" rank {r}"));
    }
    s
}

fn cause(v: &Verdict) -> String {
    match (&v.cause, &v.error) {
        (_, Some(e)) if v.outcome.is_none() => e.clone(),
        (Some(c), _) => c.id.clone(),
        (None, _) => "-".into(),
    }
}

#[derive(Tabled)]
struct Row {
    #[tabled(rename = "OUTCOME")]
    outcome: String,
    #[tabled(rename = "PRIMARY")]
    primary: String,
    #[tabled(rename = "FIRST")]
    first: String,
    #[tabled(rename = "CAUSE")]
    cause: String,
    #[tabled(rename = "JOB")]
    job: String,
}

/// One row per job, then the summary: counts, then the largest groups.
fn table(
    out: &mut impl Write,
    done: &[Triaged],
    summary: &Summary,
    color: bool,
) -> std::io::Result<()> {
    let paint = Paint { on: color };
    let rows: Vec<Row> = done
        .iter()
        .map(|t| {
            let v = &t.verdict;
            Row {
                outcome: outcome(v).to_string(),
                primary: v.primary.clone().unwrap_or_else(|| "-".into()),
                first: clip(&first(v), TABLE_TEXT),
                cause: clip(&cause(v), TABLE_TEXT),
                job: clip_left(&v.path, TABLE_JOB),
            }
        })
        .collect();
    let mut t = Table::new(rows);
    t.with(Style::sharp());
    writeln!(out, "{t}")?;
    writeln!(out)?;
    writeln!(out, "{}", paint.wrap("1", &headline(summary)))?;
    if summary.groups.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "failures by fingerprint:")?;
    for g in summary.groups.iter().take(TABLE_GROUPS) {
        let jobs = if g.count == 1 { "job" } else { "jobs" };
        writeln!(
            out,
            "  {:>5} {jobs:<4}  {}  {}  {}",
            g.count,
            paint.wrap("1", &sanitize(&g.class)),
            g.fingerprint,
            clip(&g.message, TABLE_TEXT)
        )?;
        let more = g.count as usize - g.examples.len().min(g.count as usize);
        let mut examples: Vec<String> = g.examples.iter().map(|e| clip_left(e, 60)).collect();
        if more > 0 {
            examples.push(format!("+{more} more"));
        }
        writeln!(out, "               e.g. {}", examples.join(", "))?;
    }
    if summary.groups.len() > TABLE_GROUPS {
        writeln!(
            out,
            "  … {} more groups (--format json lists them all)",
            summary.groups.len() - TABLE_GROUPS
        )?;
    }
    Ok(())
}

/// `158 jobs: 120 failed, 6 degraded, 30 clean, 2 unreadable`.
fn headline(s: &Summary) -> String {
    let mut parts = vec![format!("{} failed", s.failed)];
    if s.degraded > 0 {
        parts.push(format!("{} degraded", s.degraded));
    }
    parts.push(format!("{} clean", s.clean));
    if s.unreadable > 0 {
        parts.push(format!("{} unreadable", s.unreadable));
    }
    format!("{} jobs: {}", s.jobs, parts.join(", "))
}

/// A path clipped at its start, where paths of one fleet agree.
fn clip_left(s: &str, max: usize) -> String {
    let s = sanitize(s).replace('\n', " ");
    let n = s.chars().count();
    if n <= max {
        return s;
    }
    let tail: String = s.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}

/// The verdicts and groups as Markdown tables, for a ticket.
fn markdown(out: &mut impl Write, done: &[Triaged], summary: &Summary) -> std::io::Result<()> {
    writeln!(out, "## cudnnlog fleet report")?;
    writeln!(out)?;
    writeln!(out, "{}", md(&headline(summary)))?;
    writeln!(out)?;
    if !summary.groups.is_empty() {
        writeln!(out, "### Failures by fingerprint")?;
        writeln!(out)?;
        writeln!(out, "| jobs | class | fingerprint | message | examples |")?;
        writeln!(out, "|---:|---|---|---|---|")?;
        for g in &summary.groups {
            let examples: Vec<String> = g.examples.iter().map(|e| md(e)).collect();
            writeln!(
                out,
                "| {} | `{}` | `{}` | {} | {} |",
                g.count,
                md(&g.class),
                g.fingerprint,
                md(&clip(&g.message, 120)),
                examples.join(", ")
            )?;
        }
        writeln!(out)?;
    }
    writeln!(out, "### Jobs")?;
    writeln!(out)?;
    writeln!(out, "| outcome | primary | first | cause | job |")?;
    writeln!(out, "|---|---|---|---|---|")?;
    for t in done {
        let v = &t.verdict;
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            outcome(v),
            v.primary
                .as_ref()
                .map_or_else(|| "-".into(), |p| format!("`{}`", md(p))),
            md(&first(v)),
            md(&cause(v)),
            md(&v.path)
        )?;
    }
    Ok(())
}
