//! The timeline: an inline SVG with one lane per rank or source and a mark
//! for every occurrence the report lists, on an axis of time (or training
//! step, or line, when the log has no times).
//!
//! Every mark is a link to its finding and carries a `<title>` (the
//! browser's hover text) with its line; errors are red, warnings amber, the
//! primary failure's marks larger and outlined, a launcher's report of how
//! a process ended a diamond, and the culprit rank's lane shaded. All text
//! goes through [`esc`].

use super::esc;
use crate::render::html::excerpt::Files;
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::report::{seconds, Place, Report};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The drawing's width in SVG units (it scales to the page).
const WIDTH: f64 = 1000.0;
/// Left margin, for the lane labels.
const LABELS: f64 = 170.0;
const LANE: f64 = 26.0;
const TOP: f64 = 8.0;
const AXIS: f64 = 30.0;
/// Most lanes drawn; a job of thousands of ranks folds the rest into one.
const MAX_LANES: usize = 64;
/// Most marks whose hover text is read back from the file.
const READ_BACK: usize = 2000;
/// Most marks drawn: beyond it, findings other than the primary show an
/// even share of their occurrences (the page stays small).
const MAX_MARKS: usize = 2500;
/// A lane label's longest file name.
const LABEL_CHARS: usize = 24;

/// What the x axis measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Seconds, from the lines' timestamps.
    Time,
    /// Seconds since boot (kernel logs).
    Uptime,
    /// The training step the log had reached.
    Step,
    /// The line number.
    Line,
}

/// Who wrote a lane's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Who {
    Rank(u32),
    /// Lines with no rank tag.
    Untagged,
    /// A launcher's or shell's report of how a process ended (untagged).
    Launcher,
}

/// A lane: a source and who wrote in it.
type LaneKey = (usize, Who);

/// The lane of a mark of finding `f`.
fn lane_key(p: &Place, termination: bool) -> LaneKey {
    let who = match (p.rank, termination) {
        (Some(r), _) => Who::Rank(r),
        (None, true) => Who::Launcher,
        (None, false) => Who::Untagged,
    };
    (p.source, who)
}

/// One mark to draw.
struct Mark<'r> {
    finding: usize,
    place: &'r Place,
    /// Its finding reports how a process ended.
    termination: bool,
}

/// The marks of a report: each finding's occurrences (its first and last
/// when it lists none); at most [`MAX_MARKS`], the primary's all.
fn marks<'r>(report: &'r Report, catalog: &Catalog, primary: Option<usize>) -> Vec<Mark<'r>> {
    let listed = |i: usize| report.findings[i].occurrences.len().max(1);
    let total: usize = (0..report.findings.len()).map(listed).sum();
    let share = match total > MAX_MARKS {
        true => {
            let others = report.findings.len() - usize::from(primary.is_some());
            let left = MAX_MARKS.saturating_sub(primary.map_or(0, listed));
            (left / others.max(1)).max(2)
        }
        false => usize::MAX,
    };
    let mut out = Vec::new();
    for (i, f) in report.findings.iter().enumerate() {
        let termination = catalog.pattern(&f.pattern).is_some_and(|p| p.termination);
        let mark = |place| Mark {
            finding: i,
            place,
            termination,
        };
        if f.occurrences.is_empty() {
            out.push(mark(&f.first));
            if f.last != f.first {
                out.push(mark(&f.last));
            }
        } else if Some(i) == primary || f.occurrences.len() <= share {
            out.extend(f.occurrences.iter().map(mark));
        } else {
            // An even share: every k-th, the first and the last included.
            let n = f.occurrences.len();
            out.extend(
                (0..share)
                    .map(|j| j * (n - 1) / (share - 1))
                    .map(|j| mark(&f.occurrences[j])),
            );
        }
    }
    out
}

/// The sources' names as lane labels: their paths without the directories
/// they all share (`attempt_0/3/stderr.log`, not `stderr.log` four times),
/// at most [`LABEL_CHARS`] characters, keeping the end.
fn short_names(report: &Report) -> Vec<String> {
    let paths: Vec<Vec<&str>> = report
        .sources
        .iter()
        .map(|s| s.path.split('/').collect())
        .collect();
    let shortest = paths.iter().map(Vec::len).min().unwrap_or(0);
    // Shared leading directories (never the file name itself).
    let shared = (0..shortest.saturating_sub(1))
        .take_while(|&i| paths.iter().all(|p| p[i] == paths[0][i]))
        .count();
    paths
        .iter()
        .map(|p| {
            let name = p[shared..].join("/");
            let n = name.chars().count();
            match n > LABEL_CHARS {
                true => {
                    let tail: String = name.chars().skip(n - (LABEL_CHARS - 1)).collect();
                    format!("…{tail}")
                }
                false => name,
            }
        })
        .collect()
}

/// The x value of a place on `axis`.
fn value(p: &Place, axis: Axis, years: bool) -> Option<f64> {
    match axis {
        Axis::Time => time(
            p.timestamp.as_deref(),
            p.yearless_timestamp.as_deref(),
            years,
        ),
        Axis::Uptime => p.uptime.as_deref()?.parse().ok(),
        Axis::Step => p.step.map(|s| s as f64),
        Axis::Line => Some(p.line as f64),
    }
}

/// Seconds of a time with a year (`iso`) or without (`yearless`); with
/// `years` false every time is read without its year, so that both kinds
/// share one axis.
fn time(iso: Option<&str>, yearless: Option<&str>, years: bool) -> Option<f64> {
    match (iso, yearless) {
        (Some(t), _) if years => seconds(t),
        (Some(t), _) => seconds(&format!("--{}", t.get(5..)?)),
        (None, Some(t)) if !years => seconds(t),
        _ => None,
    }
}

/// The x value of a culprit's evidence line on `axis`: its time or line.
fn evidence_value(e: &cudnnlog::report::EvidenceLine, axis: Axis, years: bool) -> Option<f64> {
    match axis {
        Axis::Time => time(e.timestamp.as_deref(), None, years),
        Axis::Line => Some(e.line as f64),
        Axis::Uptime | Axis::Step => None,
    }
}

/// The axis every mark can be placed on, best first; and whether times
/// keep their years (every one has a year).
fn choose(marks: &[Mark<'_>]) -> (Axis, bool) {
    let all = |f: &dyn Fn(&Place) -> bool| marks.iter().all(|m| f(m.place));
    if all(&|p| p.timestamp.is_some()) {
        (Axis::Time, true)
    } else if all(&|p| p.timestamp.is_some() || p.yearless_timestamp.is_some()) {
        (Axis::Time, false)
    } else if all(&|p| p.uptime.is_some()) {
        (Axis::Uptime, false)
    } else if all(&|p| p.step.is_some()) {
        (Axis::Step, false)
    } else {
        (Axis::Line, false)
    }
}

/// A tick label for `v` on `axis`, `span` being the axis's range.
fn label(v: f64, axis: Axis, span: f64) -> String {
    match axis {
        Axis::Time => {
            let s = v.rem_euclid(86_400.0);
            let (h, m, sec) = ((s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64, s % 60.0);
            if span < 10.0 {
                format!("{h:02}:{m:02}:{sec:06.3}")
            } else {
                format!("{h:02}:{m:02}:{:02}", sec as u64)
            }
        }
        Axis::Uptime => format!("{v:.1} s"),
        Axis::Step => format!("step {}", v.round() as u64),
        Axis::Line => format!("line {}", v.round() as u64),
    }
}

/// The axis's caption.
fn caption(axis: Axis) -> &'static str {
    match axis {
        Axis::Time => "time (the lines' timestamps)",
        Axis::Uptime => "seconds since boot",
        Axis::Step => "training step (the log has no timestamps)",
        Axis::Line => "line number (the log has no timestamps or steps)",
    }
}

/// Writes the timeline of `report` as an inline `<svg>`, or nothing when
/// it has no finding. `files` gives each mark's hover text its line;
/// links go to the findings' ids, which start with `prefix`.
pub fn svg(out: &mut String, report: &Report, catalog: &Catalog, files: &Files, prefix: &str) {
    let primary = super::primary_index(report);
    let marks = marks(report, catalog, primary);
    if marks.is_empty() {
        return;
    }
    let (axis, years) = choose(&marks);
    let culprits: BTreeSet<u32> = primary
        .and_then(|i| report.findings[i].culprit.as_ref())
        .map(|c| c.ranks.iter().copied().collect())
        .unwrap_or_default();
    // Lanes: every (source, rank) a mark is on, and the culprit's ranks
    // even when they wrote nothing (a silent rank is the story).
    let mut lanes: BTreeSet<LaneKey> = marks
        .iter()
        .map(|m| lane_key(m.place, m.termination))
        .collect();
    let culprit_source = primary.map_or(0, |i| report.findings[i].first.source);
    lanes.extend(culprits.iter().map(|&r| (culprit_source, Who::Rank(r))));
    // The culprit's evidence lines that say when and which rank.
    let evidence: Vec<(&cudnnlog::report::EvidenceLine, f64)> = primary
        .and_then(|i| report.findings[i].culprit.as_ref())
        .map_or(&[][..], |c| c.evidence.as_slice())
        .iter()
        .filter(|e| e.rank.is_some())
        .filter_map(|e| Some((e, evidence_value(e, axis, years)?)))
        .collect();
    lanes.extend(
        evidence
            .iter()
            .filter_map(|(e, _)| Some((culprit_source, Who::Rank(e.rank?)))),
    );
    let mut lanes: Vec<LaneKey> = lanes.into_iter().collect();
    let folded = lanes.len() > MAX_LANES;
    if folded {
        lanes.truncate(MAX_LANES - 1);
    }
    let lane_of = |k: LaneKey| lanes.iter().position(|&l| l == k).unwrap_or(lanes.len());
    let n_lanes = lanes.len() + usize::from(folded);
    let names = short_names(report);

    let values: Vec<f64> = marks
        .iter()
        .filter_map(|m| value(m.place, axis, years))
        .chain(evidence.iter().map(|(_, v)| *v))
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let plot = WIDTH - LABELS - 20.0;
    let x = |v: f64| LABELS + 10.0 + (v - lo) / span * plot;
    let height = TOP + n_lanes as f64 * LANE + AXIS;

    let _ = write!(
        out,
        "<svg class=\"timeline\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         aria-label=\"timeline of the findings\" xmlns=\"http://www.w3.org/2000/svg\">"
    );
    for (i, &(source, who)) in lanes.iter().enumerate() {
        let y = TOP + i as f64 * LANE;
        let culprit =
            matches!(who, Who::Rank(r) if culprits.contains(&r)) && source == culprit_source;
        let class = if culprit { "lane culprit" } else { "lane" };
        let _ = write!(
            out,
            "<rect class=\"{class}\" x=\"0\" y=\"{y}\" width=\"{WIDTH}\" height=\"{LANE}\"/>"
        );
        let mut name = match who {
            Who::Rank(r) => format!("rank {r}"),
            Who::Untagged => "no rank tag".to_string(),
            Who::Launcher => "launcher, shell".to_string(),
        };
        if let Some(file) = names.get(source).filter(|_| names.len() > 1) {
            name = format!("{file} · {name}");
        }
        if culprit {
            name.push_str(" · culprit");
        }
        let _ = write!(
            out,
            "<text class=\"lane-label{}\" x=\"6\" y=\"{:.1}\">{}</text>",
            if culprit { " culprit" } else { "" },
            y + LANE * 0.65,
            esc(&name)
        );
    }
    if folded {
        let y = TOP + lanes.len() as f64 * LANE;
        let _ = write!(
            out,
            "<rect class=\"lane\" x=\"0\" y=\"{y}\" width=\"{WIDTH}\" height=\"{LANE}\"/>\
             <text class=\"lane-label\" x=\"6\" y=\"{:.1}\">other ranks</text>",
            y + LANE * 0.65
        );
    }
    // Ticks.
    let axis_y = TOP + n_lanes as f64 * LANE;
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LABELS}\" y1=\"{axis_y}\" x2=\"{WIDTH}\" y2=\"{axis_y}\"/>"
    );
    let ticks = if hi > lo { 5 } else { 1 };
    for t in 0..ticks {
        let v = lo + span * t as f64 / (ticks.max(2) - 1) as f64;
        let v = if hi > lo { v } else { lo };
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{}</text>",
            x(v),
            axis_y + 16.0,
            if t == 0 {
                "start"
            } else if t + 1 == ticks {
                "end"
            } else {
                "middle"
            },
            esc(&label(v, axis, span))
        );
    }
    // The culprit's evidence: hollow rings on its lanes.
    for (e, v) in &evidence {
        let Some(rank) = e.rank else { continue };
        let lane = lane_of((culprit_source, Who::Rank(rank)));
        let title = format!(
            "evidence for the culprit — line {}: {}",
            e.line,
            crate::render::clip(&e.text, 300)
        );
        let _ = write!(
            out,
            "<g class=\"evidence\" data-line=\"{}\"><title>{}</title><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\"/></g>",
            e.line,
            esc(&title),
            x(*v),
            TOP + lane as f64 * LANE + LANE / 2.0
        );
    }
    // Marks: warnings under errors, the primary's on top.
    let mut order: Vec<&Mark<'_>> = marks.iter().collect();
    order.sort_by_key(|m| {
        let f = &report.findings[m.finding];
        (Some(m.finding) == primary, f.severity == Severity::Error)
    });
    for (n, m) in order.into_iter().enumerate() {
        let f = &report.findings[m.finding];
        let Some(v) = value(m.place, axis, years) else {
            continue;
        };
        let lane = lane_of(lane_key(m.place, m.termination));
        let (cx, cy) = (x(v), TOP + lane as f64 * LANE + LANE / 2.0);
        let is_primary = Some(m.finding) == primary;
        let sev = if f.severity == Severity::Error {
            "error"
        } else {
            "warning"
        };
        let termination = m.termination;
        let mut class = format!("mark {sev}");
        if is_primary {
            class.push_str(" primary");
        }
        if f.caused_by.is_some() {
            class.push_str(" fallout");
        }
        let text = if n < READ_BACK {
            files.line(m.place.source, m.place.byte)
        } else {
            None
        }
        .unwrap_or_else(|| f.message.clone());
        let title = format!(
            "{} — {}: {}",
            f.class,
            crate::render::seen(m.place),
            crate::render::clip(&text, 200)
        );
        let _ = write!(
            out,
            "<a href=\"#{prefix}f{}\"><g class=\"{class}\" data-finding=\"{}\" data-line=\"{}\"><title>{}</title>",
            m.finding,
            m.finding,
            m.place.line,
            esc(&title)
        );
        let r = if is_primary { 7.0 } else { 5.0 };
        if termination {
            let _ = write!(
                out,
                "<path d=\"M{cx:.1} {:.1}L{:.1} {cy:.1}L{cx:.1} {:.1}L{:.1} {cy:.1}Z\"/>",
                cy - r,
                cx + r,
                cy + r,
                cx - r
            );
        } else {
            let _ = write!(out, "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{r}\"/>");
        }
        out.push_str("</g></a>");
    }
    let _ = write!(
        out,
        "</svg><p class=\"caption\">x: {}. <span class=\"key error\">●</span> error \
         <span class=\"key warning\">●</span> warning <span class=\"key\">◆</span> a \
         launcher's or shell's report of how a process ended; larger, outlined: the \
         primary failure{}.</p>",
        esc(caption(axis)),
        if culprits.is_empty() {
            ""
        } else {
            "; shaded lane: the culprit rank; ○ a line that shows it"
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `findings` findings of `each` occurrences, the first one
    /// primary, from a real scan's finding.
    fn crowded(findings: usize, each: u64) -> Report {
        let scanner = cudnnlog::ScannerBuilder::new().build(Catalog::builtin().unwrap());
        let mut sink = cudnnlog::report::FindingsSink::new(scanner.catalog());
        let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
        scanner.scan_slice(log, &mut sink).unwrap();
        let mut report = sink.into_report();
        let f = report.findings[0].clone();
        report.findings = (0..findings)
            .map(|i| {
                let mut f = f.clone();
                f.occurrences = (0..each)
                    .map(|n| Place {
                        line: n + 1,
                        byte: n * 70,
                        ..f.first.clone()
                    })
                    .collect();
                if i > 0 {
                    f.class = format!("x.{i}");
                }
                f
            })
            .collect();
        report
    }

    #[test]
    fn a_crowded_timeline_keeps_the_primary_and_a_share_of_the_rest() {
        let catalog = Catalog::builtin().unwrap();
        let few = crowded(3, 100);
        assert_eq!(marks(&few, &catalog, Some(0)).len(), 300);
        let many = crowded(40, 128);
        let drawn = marks(&many, &catalog, Some(0));
        assert!(drawn.len() <= MAX_MARKS, "{}", drawn.len());
        let of = |i: usize| drawn.iter().filter(|m| m.finding == i).count();
        assert_eq!(of(0), 128, "the primary's all");
        let share = (MAX_MARKS - 128) / 39;
        assert!((1..40).all(|i| of(i) == share));
        // The share spans the finding: its first and last occurrence.
        let lines: Vec<u64> = drawn
            .iter()
            .filter(|m| m.finding == 5)
            .map(|m| m.place.line)
            .collect();
        assert_eq!((lines[0], *lines.last().unwrap()), (1, 128));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(
            label(19.0 * 3600.0 + 46.0 * 60.0 + 54.5, Axis::Time, 60.0),
            "19:46:54"
        );
        assert_eq!(label(3.25, Axis::Time, 1.0), "00:00:03.250");
        assert_eq!(label(12.0, Axis::Step, 5.0), "step 12");
    }
}
