//! The fleet as a table of jobs (at most [`TABLE_JOBS`](super::TABLE_JOBS), the failed
//! first), then the counts and the largest fingerprint groups.

use super::super::{clip, sanitize, sanitize_line, Paint, Style};
use crate::term::{self, columns, wrap};
use cudnnlog::fleet::{Summary, Triaged};
use cudnnlog::render::{action, cause, first, headline, outcome};
use std::io::Write;
use tabled::settings::Style as TableStyle;

/// Columns from which the fleet table has room for each job's cause.
const WIDE: usize = 120;
/// Widest cause or message in the fleet table.
const TABLE_TEXT: usize = 56;
/// Groups shown in the fleet table's summary; JSON carries them all.
const TABLE_GROUPS: usize = 10;

/// One row per job (at most [`TABLE_JOBS`](super::TABLE_JOBS), the failed first), then the
/// summary: counts, then the largest groups.
pub fn fleet(
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
                action(v).to_string(),
                v.primary.clone().unwrap_or_else(|| "-".into()),
                clip(&first(v), TABLE_TEXT),
            ];
            if with_cause {
                row.push(clip(&cause(v), TABLE_TEXT));
            }
            row.push(sanitize_line(&v.path));
            row
        })
        .collect();
    let mut header = vec!["OUTCOME", "ACTION", "PRIMARY", "FIRST"];
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
    let widths = term::fit_columns(&natural, style.width, 24, 8);
    let mut builder = tabled::builder::Builder::default();
    builder.push_record(header.iter().map(|h| h.to_string()));
    for row in rows {
        let last = row.len() - 1;
        builder.push_record(row.into_iter().enumerate().map(|(c, cell)| {
            if c == last {
                // Paths of one fleet agree at their start: clip that.
                clip_left(&cell, widths[c])
            } else {
                term::fill(&cell, widths[c])
            }
        }));
    }
    let mut t = builder.build();
    t.with(TableStyle::sharp());
    writeln!(out, "{t}")?;
    let unlisted = summary.jobs.saturating_sub(done.len() as u64);
    if unlisted > 0 {
        writeln!(
            out,
            "… {unlisted} more jobs not listed (the failed come first); \
             `--format ndjson` gives every job's verdict"
        )?;
    }
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
        for line in wrap(
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
