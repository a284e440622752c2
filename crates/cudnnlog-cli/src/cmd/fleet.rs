//! Many jobs at once: a verdict per job, then the fleet summary grouped by
//! fingerprint. Jobs are scanned on every core; a format that streams
//! (NDJSON) prints each verdict as soon as its job is done, the others
//! print once all are.

use crate::render::{Ctx, Render};
use cudnnlog::fleet::{self, FleetDocument, Job, Summary, Triaged};
use cudnnlog::report::Outcome;
use cudnnlog::{MmapChoice, Scanner};
use std::io::{IsTerminal, Write};

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
    /// The reader left (`| head`) and the scan stopped: the jobs not
    /// triaged were not scanned, which is no error.
    pub closed: bool,
}

/// Scans `jobs` and writes their verdicts and summary with `render` to
/// `out` (nothing when there is none: `--quiet`, where each job that could
/// not be read is said on standard error instead; `quiet` also leaves the
/// progress bar out). A reader that goes away (`| head`) stops the scan;
/// the verdicts so far decide the exit status.
pub fn run(
    scanner: &Scanner,
    jobs: &[Job],
    mmap: MmapChoice,
    render: &dyn Render,
    ctx: &Ctx<'_>,
    quiet: bool,
    out: Option<Box<dyn Write + Send>>,
) -> anyhow::Result<Done> {
    let silent = out.is_none();
    let mut out = std::io::BufWriter::new(out.unwrap_or_else(|| Box::new(std::io::sink())));
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
        if silent {
            if let Some(error) = &done.verdict.error {
                let _ = writeln!(
                    std::io::stderr(),
                    "cudnnlog: {}",
                    crate::render::sanitize_line(error)
                );
            }
            return true;
        }
        if render.streams() {
            match render.verdict(&mut out, &done.verdict) {
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
            }
        } else if render.keeps_reports() {
            kept[i] = Some(done);
        } else {
            // The others need only the verdicts.
            kept[i] = Some(Triaged {
                verdict: done.verdict,
                report: empty_report(),
            });
        }
        true
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let mut summary = summary.finish();
    summary.skipped = ctx.skipped.clone();
    let fleet = FleetDocument {
        schema: fleet::SCHEMA,
        jobs: kept.into_iter().flatten().collect(),
        summary,
    };
    let result = if silent || closed {
        Ok(())
    } else {
        render
            .fleet(&mut out, ctx, &fleet)
            .and_then(|()| Ok(out.flush()?))
    };
    match result {
        Err(e) if crate::is_broken_pipe(&e) => {}
        Err(e) => return Err(e),
        Ok(()) => {}
    }
    Ok(Done {
        summary: fleet.summary,
        any_finding,
        any_error,
        closed,
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
