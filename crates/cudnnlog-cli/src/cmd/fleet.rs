//! Many jobs at once: a verdict per job, then the fleet summary grouped by
//! fingerprint. Jobs are scanned on every core; a format that streams
//! (NDJSON) prints each verdict as soon as its job is done, the others
//! print once all are.

use crate::render::{shown_order, Ctx, Render, Shown};
use cudnnlog::fleet::{self, FleetDocument, Job, Summary, Triaged};
use cudnnlog::report::Outcome;
use cudnnlog::{MmapChoice, Scanner};
use std::collections::BTreeMap;
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
    // Each verdict written as its job is done (in input order where the
    // format asks): nothing kept.
    let live = render.streams() || render.in_order();
    let mut kept = Kept::new(match (quiet || live, render.shows_at_most()) {
        (true, _) => Keep::Nothing,
        (false, Some(shown)) => Keep::Shown(shown),
        (false, None) if render.keeps_reports() => Keep::Reports,
        (false, None) => Keep::Verdicts,
    });
    let mut any_finding = false;
    let mut any_error = false;
    let mut failure: Option<anyhow::Error> = None;
    let mut closed = false;
    let in_order = render.in_order() && !silent;
    if in_order {
        match render.begin(&mut out) {
            Err(e) if crate::is_broken_pipe(&e) => closed = true,
            Err(e) => return Err(e),
            Ok(()) => {}
        }
    }
    let (mut first, began) = (true, !closed);
    let mut take = |i: usize, done: Triaged| {
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
        if live {
            let written = match in_order {
                true => render.job(&mut out, ctx, std::mem::take(&mut first), &done),
                false => render.verdict(&mut out, &done.verdict),
            };
            match written {
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
        } else {
            kept.add(i, done);
        }
        true
    };
    match (in_order, began) {
        (_, false) => {}
        (true, true) => fleet::triage_in_order(scanner, jobs, mmap, &mut take),
        (false, true) => fleet::triage(scanner, jobs, mmap, &mut take),
    }
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
        jobs: kept.into_jobs(),
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

/// What a fleet form keeps of each job until every job is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Keep {
    /// Nothing: the verdicts were written as the jobs were done, or are
    /// not written at all.
    Nothing,
    /// Each job's verdict, its report dropped as soon as it is done.
    Verdicts,
    /// Each job's whole report.
    Reports,
    /// The jobs a page shows, and only those: a bounded number.
    Shown(Shown),
}

/// The jobs kept for a fleet form written once every job is done, by
/// [`shown_order`]: input order, failed jobs first where only part is
/// shown ([`Keep::Shown`]; then at most `rows` verdicts are held, and the
/// reports of the first `reports` failed or degraded jobs, whatever the
/// number of jobs and the order they finish in).
struct Kept {
    keep: Keep,
    jobs: BTreeMap<(u8, usize), Triaged>,
}

impl Kept {
    fn new(keep: Keep) -> Kept {
        Kept {
            keep,
            jobs: BTreeMap::new(),
        }
    }

    /// Takes in job `index`, done.
    fn add(&mut self, index: usize, done: Triaged) {
        let key = match self.keep {
            Keep::Nothing => return,
            Keep::Verdicts | Keep::Reports => (0, index),
            Keep::Shown(_) => shown_order(&done.verdict, index),
        };
        let done = match self.keep {
            Keep::Verdicts => verdict_only(done),
            _ => done,
        };
        self.jobs.insert(key, done);
        let Keep::Shown(shown) = self.keep else {
            return;
        };
        if self.jobs.len() > shown.rows {
            self.jobs.pop_last();
        }
        // Reports only for the first failed or degraded jobs: the job
        // added, unless it is one of them, and the one it pushed past them.
        let before = self.jobs.range(..key).take(shown.reports).count();
        if key.0 >= 2 || before >= shown.reports {
            if let Some(t) = self.jobs.get_mut(&key) {
                t.report = empty_report();
            }
        }
        if let Some(t) = self.jobs.values_mut().nth(shown.reports) {
            t.report = empty_report();
        }
    }

    /// The jobs kept, in order.
    fn into_jobs(self) -> Vec<Triaged> {
        self.jobs.into_values().collect()
    }
}

/// A job's verdict, its report dropped.
fn verdict_only(done: Triaged) -> Triaged {
    Triaged {
        verdict: done.verdict,
        report: empty_report(),
    }
}

fn empty_report() -> cudnnlog::Report {
    cudnnlog::Report {
        schema: cudnnlog::report::SCHEMA.to_string(),
        sources: Vec::new(),
        environment: Default::default(),
        outcome: Outcome::Clean,
        primary: None,
        action: None,
        retryable_because: None,
        findings: Vec::new(),
        cross_run: Vec::new(),
        unclassified: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudnnlog::fleet::Verdict;

    /// Job `i`: failed, degraded, clean or unreadable by `i`, with a
    /// report that names its file.
    fn job(i: usize) -> Triaged {
        let path = format!("job-{i:06}.log");
        let mut verdict = Verdict::unreadable(&path, vec![path.clone()], String::new());
        verdict.outcome = match i % 7 {
            0 => Some(Outcome::Failed),
            1 | 2 => Some(Outcome::Degraded),
            3 => None,
            _ => Some(Outcome::Clean),
        };
        let mut report = empty_report();
        report.sources.push(cudnnlog::SourceInfo {
            path,
            bytes: 1,
            lines: 1,
            modified: None,
            rank: None,
        });
        Triaged { verdict, report }
    }

    /// A page keeps what it shows and no more, whatever the order jobs
    /// finish in: the first rows in its order, reports for the first
    /// failed or degraded ones, as if every job had been kept.
    #[test]
    fn a_page_keeps_a_bounded_number_of_jobs() {
        let shown = Shown {
            rows: 50,
            reports: 5,
        };
        let n = 20_000;
        let mut kept = Kept::new(Keep::Shown(shown));
        // Finished out of order: a fixed permutation of the jobs.
        for k in 0..n {
            let i = (k * 7919) % n;
            kept.add(i, job(i));
            assert!(kept.jobs.len() <= shown.rows);
            let reports = kept.jobs.values().filter(|t| !t.report.sources.is_empty());
            assert!(reports.count() <= shown.reports);
        }
        let mut all: Vec<(usize, Triaged)> = (0..n).map(|i| (i, job(i))).collect();
        all.sort_by_key(|(i, t)| shown_order(&t.verdict, *i));
        let got = kept.into_jobs();
        let want: Vec<&str> = all[..shown.rows]
            .iter()
            .map(|(_, t)| t.verdict.path.as_str())
            .collect();
        let paths: Vec<&str> = got.iter().map(|t| t.verdict.path.as_str()).collect();
        assert_eq!(paths, want);
        for (n, t) in got.iter().enumerate() {
            let whole = n < shown.reports;
            assert_eq!(
                !t.report.sources.is_empty(),
                whole,
                "{n}: {}",
                t.verdict.path
            );
        }
    }

    /// A format that writes every job keeps every job, in input order;
    /// one that streams keeps none.
    #[test]
    fn every_job_is_kept_in_input_order_unless_the_format_streams() {
        for (keep, reports) in [(Keep::Verdicts, false), (Keep::Reports, true)] {
            let mut kept = Kept::new(keep);
            for i in (0..100).rev() {
                kept.add(i, job(i));
            }
            let jobs = kept.into_jobs();
            assert_eq!(jobs.len(), 100);
            assert!(jobs
                .iter()
                .enumerate()
                .all(|(i, t)| t.verdict.path == format!("job-{i:06}.log")));
            assert!(jobs.iter().all(|t| t.report.sources.is_empty() != reports));
        }
        let mut kept = Kept::new(Keep::Nothing);
        kept.add(0, job(0));
        assert!(kept.into_jobs().is_empty());
    }
}
