//! Many jobs at once: a verdict per job, then the fleet summary grouped by
//! fingerprint. Jobs are scanned on every core; NDJSON prints each verdict
//! as soon as its job is done, the other formats once all are.

use crate::args::Format;
use crate::render::markdown::{code_span, md};
use crate::render::{clip, sanitize, Paint, Style};
use crate::term::columns;
use cudnnlog::fleet::Job;
use cudnnlog::fleet::{self, FleetDocument, Summary, Triaged, Verdict};
use cudnnlog::ndjson::{FleetSummary, Message};
use cudnnlog::report::Outcome;
use cudnnlog::{MmapChoice, Scanner};
use std::io::{IsTerminal, Write};
use tabled::settings::Style as TableStyle;

/// Columns from which the table has room for each job's cause.
const WIDE: usize = 120;
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
    /// A job had an input that could not be read, or not to its end.
    pub any_error: bool,
}

/// Scans `jobs` and writes their verdicts and summary to standard output
/// (nothing when `quiet`). A reader that goes away (`| head`) stops the
/// scan; the verdicts so far decide the exit status.
pub fn run(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    format: Format,
    style: &Style,
    quiet: bool,
    out: Box<dyn Write + Send>,
) -> anyhow::Result<Done> {
    let mut out = std::io::BufWriter::new(out);
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
    let mut any_error = false;
    let mut failure: Option<anyhow::Error> = None;
    let mut closed = false;
    fleet::triage(scanner, jobs, mmap, |i, done| {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        summary.add(&done.verdict);
        any_finding |= done.verdict.findings > 0;
        any_error |= done.verdict.error.is_some();
        if quiet {
            return true;
        }
        match format {
            Format::Ndjson => match write_verdict(&mut out, &done.verdict) {
                Err(e) if crate::is_broken_pipe(&e) => {
                    // Nobody reads on: stop, the findings so far decide.
                    closed = true;
                    return false;
                }
                Err(e) => {
                    failure = Some(e);
                    return false;
                }
                Ok(()) => {}
            },
            // These need every job's whole report.
            Format::Json | Format::Github | Format::Junit | Format::Html => kept[i] = Some(done),
            // The others need only the verdicts.
            _ => {
                kept[i] = Some(Triaged {
                    verdict: done.verdict,
                    report: empty_report(),
                })
            }
        }
        true
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let summary = summary.finish();
    let done: Vec<Triaged> = kept.into_iter().flatten().collect();
    let result = if quiet || closed {
        Ok(())
    } else {
        write_all(&mut out, format, done, &summary, style, scanner.catalog())
    };
    match result {
        Err(e) if crate::is_broken_pipe(&e) => {}
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    Ok(Done {
        summary,
        any_finding,
        any_error,
    })
}

/// Everything after the verdicts: the summary, or the whole document.
fn write_all(
    out: &mut impl Write,
    format: Format,
    done: Vec<Triaged>,
    summary: &Summary,
    style: &Style,
    catalog: &cudnnlog::Catalog,
) -> anyhow::Result<()> {
    match format {
        Format::Ndjson => Message::FleetSummary(FleetSummary::of(summary)).write_line(&mut *out)?,
        Format::Json => {
            let doc = FleetDocument {
                schema: fleet::SCHEMA,
                jobs: done,
                summary: summary.clone(),
            };
            cudnnlog::json::pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        Format::Table => table(out, &done, summary, style)?,
        Format::Compact => compact(out, &done, summary)?,
        Format::Markdown => markdown(out, &done, summary)?,
        Format::Github => {
            for t in &done {
                crate::render::ci_formats::github(&mut *out, &t.report, catalog)?;
            }
        }
        Format::Junit => {
            let jobs: Vec<(&str, &cudnnlog::Report)> = done
                .iter()
                .map(|t| (t.verdict.path.as_str(), &t.report))
                .collect();
            crate::render::ci_formats::junit(&mut *out, &jobs, catalog)?;
        }
        Format::Html => crate::render::html::fleet_page(&mut *out, &done, summary, catalog)?,
    }
    out.flush()?;
    Ok(())
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
    Message::Verdict(v).write_line(&mut *out)?;
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

/// One row per job, then the summary: counts, then the largest groups.
fn table(
    out: &mut impl Write,
    done: &[Triaged],
    summary: &Summary,
    style: &Style,
) -> std::io::Result<()> {
    let paint = Paint { on: style.color };
    // The cause column only where there is room for it.
    let with_cause = style.width >= WIDE;
    let rows: Vec<Vec<String>> = done
        .iter()
        .map(|t| {
            let v = &t.verdict;
            let mut row = vec![
                outcome(v).to_string(),
                v.primary.clone().unwrap_or_else(|| "-".into()),
                clip(&first(v), TABLE_TEXT),
            ];
            if with_cause {
                row.push(clip(&cause(v), TABLE_TEXT));
            }
            row.push(crate::render::sanitize_line(&v.path));
            row
        })
        .collect();
    let mut header = vec!["OUTCOME", "PRIMARY", "FIRST"];
    if with_cause {
        header.push("CAUSE");
    }
    header.push("JOB");
    let natural: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| columns(&r[c]))
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let widths = crate::term::fit_columns(&natural, style.width, 24, 8);
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(header.iter().map(|h| h.to_string()));
    for row in rows {
        let last = row.len() - 1;
        builder.push_record(row.into_iter().enumerate().map(|(c, cell)| {
            if c == last {
                // Paths of one fleet agree at their start: clip that.
                clip_left(&cell, widths[c])
            } else {
                crate::term::fill(&cell, widths[c])
            }
        }));
    }
    let mut t = builder.build();
    t.with(TableStyle::sharp());
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
        let lead = format!("  {:>5} {jobs:<4}  ", g.count);
        let head = format!("{}  {}  ", sanitize(&g.class), g.fingerprint);
        let room = style
            .width
            .saturating_sub(columns(&lead) + columns(&head))
            .max(20);
        writeln!(
            out,
            "{lead}{}  {}  {}",
            paint.wrap("1", &sanitize(&g.class)),
            g.fingerprint,
            clip(&g.message, room)
        )?;
        let more = g.count as usize - g.examples.len().min(g.count as usize);
        let mut examples: Vec<String> = g.examples.iter().map(|e| sanitize(e)).collect();
        if more > 0 {
            examples.push(format!("+{more} more"));
        }
        for line in crate::term::wrap(
            &examples.join(", "),
            style.width,
            "               e.g. ",
            "                    ",
        ) {
            writeln!(out, "{line}")?;
        }
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

/// A line per job (`path: outcome class: message`), then the counts and
/// a line per group: for pipes.
fn compact(out: &mut impl Write, done: &[Triaged], summary: &Summary) -> std::io::Result<()> {
    let one_line = |s: &str| sanitize(s).replace('\n', " ");
    for t in done {
        let v = &t.verdict;
        let what = match (&v.primary, &v.message, &v.error) {
            (_, _, Some(e)) if v.outcome.is_none() => one_line(e),
            (Some(p), Some(m), _) => format!("{p}: {}", one_line(m)),
            _ => String::new(),
        };
        let at = v
            .first
            .as_ref()
            .map_or(String::new(), |p| format!(":{}", p.line));
        writeln!(out, "{}{at}: {} {what}", one_line(&v.path), outcome(v))?;
    }
    writeln!(out, "{}", headline(summary))?;
    for g in &summary.groups {
        writeln!(
            out,
            "group {} {} {}: {}",
            g.fingerprint,
            g.count,
            g.class,
            one_line(&g.message)
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
                "| {} | {} | {} | {} | {} |",
                g.count,
                code_span(&g.class),
                code_span(&g.fingerprint),
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
                .map_or_else(|| "-".into(), |p| code_span(p)),
            md(&first(v)),
            md(&cause(v)),
            md(&v.path)
        )?;
    }
    Ok(())
}
