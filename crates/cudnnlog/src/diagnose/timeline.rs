//! The job as one story: what each source is to the job, and where each
//! finding happened on the job's one time axis.
//!
//! A job's per-rank files (`rank3.log`, torchrun's `attempt_0/3/stderr.log`)
//! are ranks of one run, not runs of their own; the files of a later
//! attempt are the next run. Findings of every source are placed on one
//! time axis by their lines' clocks: a failure of one rank ten minutes
//! before the others' timeouts is first, whatever file or line it is in.
//! Where no clock is written, a finding takes the time of the finding
//! before it in its own source, and the order of the log where none has
//! one. A year is compared only when every dated finding has one: glog and
//! c10 headers write none, and no year is guessed to order them.

use super::Draft;
use crate::prefix::Timestamp;
use crate::source::SourceInfo;
use std::collections::HashMap;

/// What one source is to the job its report is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SourceRole {
    /// The rank whose file it is, when it is one of a job's per-rank files.
    pub rank: Option<u32>,
    /// The run it belongs to: the per-rank files of one attempt share one;
    /// any other source is a run of its own.
    pub run: usize,
}

impl SourceRole {
    /// The roles of a report's sources, in order. A file of no rank beside
    /// the per-rank files of one attempt (the launcher's console, the
    /// job's stdout) is part of that run: it tells the same story from the
    /// launcher's side. Beside several attempts it is a run of its own.
    pub fn of(sources: &[SourceInfo]) -> Vec<SourceRole> {
        let mut runs: HashMap<Option<u32>, usize> = HashMap::new();
        let mut next = 0;
        let mut roles: Vec<SourceRole> = sources
            .iter()
            .map(|s| {
                let run = match s.rank {
                    Some(_) => {
                        let attempt = crate::source::job::attempt_of(std::path::Path::new(&s.path));
                        *runs.entry(attempt).or_insert_with(|| {
                            next += 1;
                            next - 1
                        })
                    }
                    None => {
                        next += 1;
                        next - 1
                    }
                };
                SourceRole { rank: s.rank, run }
            })
            .collect();
        if let (1, Some(&run)) = (runs.len(), runs.values().next()) {
            for r in roles.iter_mut().filter(|r| r.rank.is_none()) {
                r.run = run;
            }
        }
        roles
    }
}

/// The run of `source`; a source of unknown role is a run of its own.
pub(crate) fn run_of(roles: &[SourceRole], source: usize) -> (bool, usize) {
    match roles.get(source) {
        Some(r) => (true, r.run),
        None => (false, source),
    }
}

/// True when two sources hold parts of one run: the same file, two
/// per-rank files of one attempt, or such a file and the launcher's.
pub(crate) fn same_run(roles: &[SourceRole], a: usize, b: usize) -> bool {
    a == b || (roles.len() > a.max(b) && run_of(roles, a) == run_of(roles, b))
}

/// The rank whose failure a finding is: the rank tag of its first line,
/// else the rank or task its message names (a launcher's report of a dead
/// rank), else one a later report of it names, else the local rank it
/// names, else the rank a launcher names as failed right after it.
pub(crate) fn rank_of(d: &Draft) -> Option<u32> {
    let fact = |f: &str| {
        d.text(f)?
            .trim()
            .parse()
            .ok()
            .or(d.int(f).and_then(|n| u32::try_from(n).ok()))
    };
    d.first
        .rank
        .or_else(|| fact("rank"))
        .or_else(|| fact("task"))
        .or(d.named_rank())
        .or_else(|| fact("local_rank"))
        .or(d.launcher.as_ref().map(|(r, _)| *r))
}

/// A point on the job's time axis, to the nanosecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Instant {
    year: u16,
    month: u8,
    day: u8,
    secs: u32,
    nanos: u64,
}

impl Instant {
    fn of(t: &Timestamp, with_year: bool) -> Option<Instant> {
        if !t.is_valid() {
            return None;
        }
        let nanos = t.frac.map_or(0, |(v, digits)| {
            if digits <= 9 {
                v * 10u64.pow(9 - u32::from(digits))
            } else {
                v / 10u64.pow(u32::from(digits) - 9)
            }
        });
        Some(Instant {
            year: if with_year { t.year.unwrap_or(0) } else { 0 },
            month: t.month,
            day: t.day,
            secs: u32::from(t.hour) * 3600 + u32::from(t.minute) * 60 + u32::from(t.second),
            nanos,
        })
    }

    /// Seconds from `self` to `later`, when both are the same day or the
    /// next; `None` further apart (a month's length is not needed for what
    /// the report says).
    pub fn seconds_to(&self, later: &Instant) -> Option<f64> {
        let day = |i: &Instant| (i.year, i.month, i.day);
        let span = f64::from(later.secs) - f64::from(self.secs)
            + (later.nanos as f64 - self.nanos as f64) / 1e9;
        if day(self) == day(later) {
            Some(span)
        } else if day(self) < day(later) && span < 0.0 {
            // Past midnight: the next day, if it is no more than a day on.
            Some(span + 86_400.0)
        } else {
            None
        }
    }
}

/// How far apart two clocks may be and still be taken as the same moment:
/// ranks on different hosts log by their own clocks.
const SKEW_SECS: f64 = 2.0;

/// Where each finding happened.
pub(crate) struct Timeline {
    at: Vec<Option<Instant>>,
}

impl Timeline {
    /// Places `drafts` (in log order: source, then byte) on one time axis.
    pub fn new(drafts: &[Draft]) -> Timeline {
        let dated: Vec<&Timestamp> = drafts
            .iter()
            .filter_map(|d| d.first.timestamp.as_ref())
            .filter(|t| t.is_calendar())
            .collect();
        let with_year = !dated.is_empty() && dated.iter().all(|t| t.year.is_some());
        let own: Vec<Option<Instant>> = drafts
            .iter()
            .map(|d| {
                d.first
                    .timestamp
                    .as_ref()
                    .filter(|t| t.is_calendar())
                    .and_then(|t| Instant::of(t, with_year))
            })
            .collect();
        // An undated finding takes the time of the dated one before it in
        // its source, or else the one after it.
        let mut at = own.clone();
        for i in 0..drafts.len() {
            if at[i].is_some() {
                continue;
            }
            let src = drafts[i].first.source;
            let before = (0..i)
                .rev()
                .take_while(|&j| drafts[j].first.source == src)
                .find_map(|j| own[j]);
            let after = || {
                (i + 1..drafts.len())
                    .take_while(|&j| drafts[j].first.source == src)
                    .find_map(|j| own[j])
            };
            at[i] = before.or_else(after);
        }
        Timeline { at }
    }

    /// Where finding `i` happened, when the log tells.
    pub fn at(&self, i: usize) -> Option<Instant> {
        self.at.get(i).copied().flatten()
    }

    /// True when finding `a` is known to have happened after finding `b`
    /// by more than the clocks' skew.
    pub fn after(&self, a: usize, b: usize) -> bool {
        match (self.at(a), self.at(b)) {
            (Some(x), Some(y)) => y.seconds_to(&x).map_or(x > y, |s| s > SKEW_SECS),
            _ => false,
        }
    }

    /// True when both findings are dated and `a` happened before `b`.
    pub fn before(&self, a: usize, b: usize) -> bool {
        matches!((self.at(a), self.at(b)), (Some(x), Some(y)) if x < y)
    }

    /// The findings' indexes in the order they happened: by time where
    /// both are dated, else in log order (a stable sort of `drafts`, which
    /// are in log order).
    pub fn order(&self, drafts: &[Draft]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..drafts.len()).collect();
        // Dated findings by time, undated ones first in log order: with no
        // clock, a source's order is all the log says.
        order.sort_by_key(|&i| (self.at(i), drafts[i].first.source, drafts[i].first.byte));
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(line: &str) -> Timestamp {
        Timestamp::of_line(line.as_bytes()).unwrap()
    }

    #[test]
    fn instants_order_across_formats_and_ignore_an_unknown_year() {
        let iso = Instant::of(&ts("2024-06-10 09:01:10,002 INFO x"), false).unwrap();
        let c10 = Instant::of(
            &ts("[E610 09:11:12.600000000 ProcessGroupNCCL.cpp:607] x"),
            false,
        )
        .unwrap();
        assert!(iso < c10);
        assert_eq!(iso.seconds_to(&c10).map(|s| s.round()), Some(603.0));
        let late = Instant::of(&ts("2024-06-10 23:59:59 INFO x"), false).unwrap();
        let next = Instant::of(&ts("2024-06-11 00:00:01 INFO x"), false).unwrap();
        assert_eq!(late.seconds_to(&next), Some(2.0));
        assert_eq!(next.seconds_to(&late), None);
    }
}
