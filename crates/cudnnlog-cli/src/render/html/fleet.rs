//! The page of a fleet scan: how the jobs ended, a bar chart of jobs by
//! primary class, the largest fingerprint groups, a row per job, and a
//! section per failed or degraded job with its own verdict and timeline.
//! A page of a large fleet lists its first [`JOB_ROWS`] jobs and shows its
//! first [`JOB_SECTIONS`] failed or degraded ones whole (failed first),
//! and says how many more there are: only those are kept while the fleet
//! is scanned ([`Render::shows_at_most`](crate::render::Render::shows_at_most)),
//! so the page costs the same memory for a hundred jobs or a million.

use super::excerpt::Files;
use super::{esc, foot, head, job, sources_line};
use crate::render::{clip, shown_order};
use cudnnlog::catalog::Catalog;
use cudnnlog::fleet::{Summary, Triaged};
use cudnnlog::report::{CauseBasis, Outcome};
use std::fmt::Write as _;
use std::io::Write;

/// Jobs with a section of their own (verdict, timeline, findings); the
/// rest are rows of the jobs table only.
pub const JOB_SECTIONS: usize = 40;
/// Rows of the jobs table.
pub const JOB_ROWS: usize = 2000;
/// Groups and classes shown.
const GROUPS: usize = 15;

/// Writes the page of a fleet scan: `done`, the jobs it lists, in the
/// order scanned or in [`shown_order`] (the jobs kept of a large fleet:
/// their number is the summary's).
pub fn fleet_page(
    out: &mut impl Write,
    done: &[Triaged],
    summary: &Summary,
    catalog: &Catalog,
) -> std::io::Result<()> {
    let mut s = String::new();
    head(
        &mut s,
        &format!("cudnnlog: {} jobs, {} failed", summary.jobs, summary.failed),
    );
    let _ = write!(
        s,
        "<header><h1>cudnnlog fleet report</h1><p class=\"sources\">{} jobs: \
         <strong>{} failed</strong>, {} degraded, {} clean, {} unreadable</p></header>\n<main>\n",
        summary.jobs, summary.failed, summary.degraded, summary.clean, summary.unreadable
    );
    bars(&mut s, summary);
    groups(&mut s, summary);
    // Failed jobs first, then degraded, each in scan order.
    let mut order: Vec<usize> = (0..done.len()).collect();
    order.sort_by_key(|&i| shown_order(&done[i].verdict, i));
    let whole = |i: &usize| shown_order(&done[*i].verdict, *i).0 < 2;
    let detailed: Vec<usize> = order
        .iter()
        .copied()
        .filter(whole)
        .take(JOB_SECTIONS)
        .collect();
    s.push_str(
        "<section class=\"jobs\"><h2>Jobs</h2><table><tr><th>job</th><th>outcome</th>\
                <th>primary</th><th>first seen</th><th>likely cause</th></tr>",
    );
    for &i in order.iter().take(JOB_ROWS) {
        let v = &done[i].verdict;
        let name = match detailed.iter().position(|&d| d == i) {
            Some(n) => format!("<a href=\"#j{n}\">{}</a>", esc(&v.path)),
            None => esc(&v.path),
        };
        let outcome = v.outcome.map_or("unreadable", Outcome::as_str);
        let first = v
            .first
            .as_ref()
            .map_or(String::new(), |p| format!("line {}", p.line));
        let cause = v.cause.as_ref().map_or(String::new(), |c| match c.basis {
            CauseBasis::Evidence => format!("{} ({:.0}%)", c.id, c.confidence * 100.0),
            CauseBasis::Prior => format!("{} (commonest; no evidence in the log)", c.id),
        });
        let primary = v
            .primary
            .as_deref()
            .unwrap_or(v.error.as_deref().unwrap_or(""));
        let _ = write!(
            s,
            "<tr class=\"{outcome}\"><td>{name}</td><td>{outcome}</td><td><code>{}</code></td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&clip(primary, 120)),
            esc(&first),
            esc(&cause)
        );
    }
    s.push_str("</table>");
    let listed = done.len().min(JOB_ROWS) as u64;
    if summary.jobs > listed {
        let _ = write!(
            s,
            "<p>… {} more jobs with <code>--format json</code>.</p>",
            summary.jobs - listed
        );
    }
    s.push_str("</section>\n");
    for (n, &i) in detailed.iter().enumerate() {
        let t = &done[i];
        let _ = write!(
            s,
            "<section class=\"job\" id=\"j{n}\"><h2>{}</h2>",
            esc(&t.verdict.path)
        );
        sources_line(&mut s, &t.report);
        let files = Files::open(&t.report.sources);
        job(&mut s, &t.report, catalog, &files, &format!("j{n}-"));
        s.push_str("</section>\n");
    }
    let more = (summary.failed + summary.degraded).saturating_sub(detailed.len() as u64);
    if more > 0 {
        let _ = write!(
            s,
            "<p>{more} more failed or degraded jobs are rows of the table only.</p>"
        );
    }
    s.push_str("</main>\n");
    foot(&mut s, cudnnlog::fleet::SCHEMA);
    out.write_all(s.as_bytes())
}

/// A horizontal bar chart (inline SVG) of jobs by primary class.
fn bars(s: &mut String, summary: &Summary) {
    let mut rows: Vec<(&String, u64)> = summary.by_primary.iter().map(|(k, &v)| (k, v)).collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    rows.truncate(GROUPS);
    let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1) as f64;
    let (label_w, bar_w, row_h) = (230.0, 640.0, 22.0);
    let height = rows.len() as f64 * row_h + 8.0;
    let _ = write!(
        s,
        "<section class=\"by-class\"><h2>Jobs by primary class</h2>\
         <svg class=\"bars\" viewBox=\"0 0 1000 {height}\" role=\"img\" aria-label=\"jobs by primary class\" \
         xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, (class, n)) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * row_h;
        let w = (*n as f64 / max * bar_w).max(2.0);
        let _ = write!(
            s,
            "<g class=\"bar-row\"><title>{} jobs: {}</title>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect class=\"bar-fill\" x=\"{label_w}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{n}</text></g>",
            n,
            esc(class),
            label_w - 8.0,
            y + row_h * 0.68,
            esc(&clip(class, 34)),
            y + 3.0,
            row_h - 6.0,
            label_w + w + 6.0,
            y + row_h * 0.68
        );
    }
    s.push_str("</svg></section>\n");
}

/// The largest groups of jobs that failed the same way.
fn groups(s: &mut String, summary: &Summary) {
    if summary.groups.is_empty() {
        return;
    }
    s.push_str(
        "<section class=\"groups\"><h2>Top fingerprints</h2><table><tr><th>jobs</th>\
                <th>class</th><th>message</th><th>fingerprint</th><th>examples</th></tr>",
    );
    for g in summary.groups.iter().take(GROUPS) {
        let examples: Vec<String> = g.examples.iter().take(3).map(|e| esc(e)).collect();
        let _ = write!(
            s,
            "<tr><td>{}</td><td><code>{}</code> {}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            g.count,
            esc(&g.class),
            esc(&g.title),
            esc(&clip(&g.message, 200)),
            esc(&g.fingerprint),
            examples.join("<br>")
        );
    }
    s.push_str("</table></section>\n");
}
