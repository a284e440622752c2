//! The culprit of a distributed failure: the rank(s) at fault, not the
//! ranks that reported the timeout.
//!
//! When a collective times out, the ranks that report it are the ones that
//! *waited*; the one at fault is the rank that never arrived. Around the
//! first occurrence of a distributed finding, [`collect`] reads what the log
//! says of each rank: its last line and last training step before the
//! failure, the last collective it enqueued (the flight recorder's dumps),
//! the ranks a barrier names as late, torchrun's "Root Cause (first observed
//! failure)". [`decide`] then names the culprit, in this order of strength:
//!
//! 1. ranks a barrier names as late (`Rank 3 failed to pass monitoredBarrier`);
//! 2. ranks whose collective differs from the one most ranks say they run
//!    (`TORCH_DISTRIBUTED_DEBUG=DETAIL`'s "Detected mismatch between
//!    collectives on ranks", which every rank prints of its own collective);
//! 3. the wavefront: ranks whose last enqueued collective is behind the one
//!    that timed out (what NCCL's flight-recorder analysis does);
//! 4. the rank whose own failure the finding is fallout of (one rank's OOM
//!    or exception, seen by the others as a timeout or a closed connection);
//! 5. the silent ranks: ranks of the job that reported no failure while the
//!    others timed out waiting;
//! 6. the rank whose last reported training step is behind all others;
//! 7. torchrun's first observed failure.
//!
//! The wavefront, the silent and the lagging ranks speak only of a finding
//! a rank reports while it waits for its peers (a timeout, a closed
//! connection): of a failure that is the reporting rank's own (ranks that
//! never formed a group, a collective that does not match), they say
//! nothing.
//!
//! The lines that read this evidence are data (`patterns/culprit.toml`).

use crate::catalog::culprit::{EvidenceKind, EvidenceRule};
use crate::prefix::{parse_prefix, Origin};
use crate::report::{Basis, Culprit, EvidenceLine};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// How far before a failure the ranks' lines are read.
const BEFORE: usize = 1 << 20;
/// How far after it (dumps, summaries).
const AFTER: usize = 256 << 10;
/// The most ranks remembered.
const MAX_RANKS: usize = 4096;
/// The longest evidence line kept.
const MAX_TEXT: usize = 300;

/// What the log says of one rank around a failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankSeen {
    /// Its last line before the failure.
    pub last_line: Option<EvidenceLine>,
    /// Its last training step before the failure, and the line saying so.
    pub last_step: Option<(u64, EvidenceLine)>,
    /// The last collective it enqueued, and the line saying so.
    pub enqueued: Option<(u64, EvidenceLine)>,
}

/// What the log says of every rank around one failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankEvidence {
    /// What the lines around the failure say of each rank, by rank number
    /// (at most 4096 ranks).
    pub ranks: BTreeMap<u32, RankSeen>,
    /// Ranks named as late or at fault, with the line naming them and
    /// what naming them means.
    pub named: Vec<(u32, EvidenceLine)>,
    /// The reason template of the first rule that named a rank.
    pub named_reason: Option<String>,
    /// torchrun's first observed failure: rank, host, line.
    pub root_cause: Option<(u32, Option<String>, EvidenceLine)>,
    /// The collective each rank says it is running, and the line saying so.
    pub collectives: BTreeMap<u32, (String, EvidenceLine)>,
    /// The reason template of the rule that read the collectives.
    pub collective_reason: Option<String>,
}

/// The key under which [`collect`] keeps lines that name no rank: in one
/// rank's own file (`rank3.log`), they are that rank's, and
/// [`RankEvidence::assume_rank`] files them under it once the file's rank
/// is known. [`decide`] never reads them.
const UNTAGGED: u32 = u32::MAX;

impl RankSeen {
    /// Fills what `self` does not know from `other`.
    fn fill(&mut self, other: RankSeen) {
        if self.last_line.is_none() {
            self.last_line = other.last_line;
        }
        if self.last_step.is_none() {
            self.last_step = other.last_step;
        }
        if self.enqueued.is_none() {
            self.enqueued = other.enqueued;
        }
    }
}

impl RankEvidence {
    /// Files the lines that named no rank under `rank`: the evidence was
    /// read from that rank's own file.
    pub fn assume_rank(&mut self, rank: u32) {
        if let Some(untagged) = self.ranks.remove(&UNTAGGED) {
            let mut own = untagged;
            if let Some(tagged) = self.ranks.remove(&rank) {
                own.fill(tagged);
            }
            self.ranks.insert(rank, own);
        }
    }

    /// Adds what another file of the same job says of its ranks.
    pub fn merge(&mut self, other: RankEvidence) {
        for (r, seen) in other.ranks {
            if self.ranks.len() < MAX_RANKS || self.ranks.contains_key(&r) {
                self.ranks.entry(r).or_default().fill(seen);
            }
        }
        for (r, line) in other.named {
            if !self.named.iter().any(|(x, _)| *x == r) {
                self.named.push((r, line));
            }
        }
        if self.named_reason.is_none() {
            self.named_reason = other.named_reason;
        }
        if self.root_cause.is_none() {
            self.root_cause = other.root_cause;
        }
        for (r, stated) in other.collectives {
            if self.collectives.len() < MAX_RANKS {
                self.collectives.entry(r).or_insert(stated);
            }
        }
        if self.collective_reason.is_none() {
            self.collective_reason = other.collective_reason;
        }
    }

    /// The evidence without the lines that named no rank.
    fn tagged(&self) -> RankEvidence {
        let mut ev = self.clone();
        ev.ranks.remove(&UNTAGGED);
        ev
    }
}

/// `rank 3`, `Rank 3`, `rank3` inside a line that carries no rank tag.
fn rank_in_text() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)\brank[ :=]?(\d{1,5})\b").expect("rank regex"))
}

fn clip(s: &str) -> String {
    crate::text::truncate(s, MAX_TEXT).trim_end().to_string()
}

/// Reads the ranks' evidence around the failure whose first line starts at
/// `at` in `hay` and is line `line`, at most `reach.0` bytes before it and
/// `reach.1` after (what a streaming scan is sure to hold, so that a mapped
/// and a streamed scan read the same evidence).
pub fn collect(
    rules: &[EvidenceRule],
    hay: &[u8],
    at: usize,
    line: u64,
    reach: (usize, usize),
) -> RankEvidence {
    let at = at.min(hay.len());
    let from = at.saturating_sub(BEFORE.min(reach.0));
    let from = memchr::memrchr(b'\n', &hay[..from]).map_or(0, |p| p + 1);
    let to = (at + AFTER.min(reach.1)).min(hay.len());
    let first = line - bytecount::count(&hay[from..at], b'\n') as u64;
    let mut n = first;
    let mut ev = RankEvidence::default();
    // Each rank's lines with text before the failure, by index: its last
    // line and last step are read from them at the end (a step is looked
    // for from its last line back, not in every line).
    let mut said: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let lines: Vec<(usize, usize)> = crate::framer::lines(hay, from..to)
        .filter(|&(s, _)| s == from || hay[s - 1] == b'\n')
        .collect();
    // The failure's time: a line after it that its clock puts before it
    // (one rank's output after another's, as in a concatenation of the
    // ranks' files) still shows where that rank was.
    // A failure line without a clock (a traceback's last line) takes the
    // time of its writer's last dated line before it.
    let head = |&(s, e): &(usize, usize)| parse_prefix(&hay[s..e.min(s + 4096)]);
    let at_index = lines.iter().position(|&(s, e)| s <= at && at <= e);
    let when = at_index.and_then(|i| {
        let writer = head(&lines[i]).origin;
        lines[..=i]
            .iter()
            .rev()
            .map(head)
            .filter(|p| writer.is_none() || p.origin == writer)
            .find_map(|p| p.timestamp)
    });
    for (i, &(s, e)) in lines.iter().enumerate() {
        let raw = &hay[s..e];
        let text = String::from_utf8_lossy(&raw[..raw.len().min(4096)]);
        let prefix = parse_prefix(text.as_bytes());
        let body = text.get(prefix.body..).unwrap_or("");
        let tagged = match prefix.origin {
            Some(Origin::Rank(r)) => Some(r),
            _ => None,
        };
        let rank = tagged.or_else(|| {
            rank_in_text()
                .captures(body)
                .and_then(|c| c[1].parse().ok())
        });
        // A line that names no rank: its file's rank, if the file is one
        // rank's (see `RankEvidence::assume_rank`).
        let own = rank.unwrap_or(UNTAGGED);
        let here = || EvidenceLine {
            line: n,
            text: clip(&text),
            timestamp: prefix.timestamp.and_then(|t| t.iso()),
            rank,
        };
        let before = s < at
            || prefix
                .timestamp
                .zip(when)
                .is_some_and(|(t, w)| t.is_before(&w));
        if let Some(r) = Some(own).filter(|_| before && (ev.ranks.len() < MAX_RANKS)) {
            if !body.trim().is_empty() {
                ev.ranks.entry(r).or_default();
                said.entry(r).or_default().push(i);
            }
        }
        for rule in rules.iter().filter(|r| text.contains(r.anchor.as_str())) {
            let span = if rule.lines == 0 {
                text.to_string()
            } else {
                let end = lines[(i + rule.lines).min(lines.len() - 1)].1;
                String::from_utf8_lossy(&hay[s..end]).into_owned()
            };
            let Some(c) = rule.regex.regex().captures(&span) else {
                continue;
            };
            let num = |name: &str| c.name(name).and_then(|m| m.as_str().parse::<u64>().ok());
            match rule.kind {
                EvidenceKind::Enqueued => {
                    if let (Some(r), Some(v)) = (
                        tagged.or(num("rank").map(|r| r as u32)).or(Some(UNTAGGED)),
                        num("value"),
                    ) {
                        if ev.ranks.len() < MAX_RANKS || ev.ranks.contains_key(&r) {
                            ev.ranks.entry(r).or_default().enqueued = Some((v, here()));
                        }
                    }
                }
                EvidenceKind::Named => {
                    let named = c
                        .name("ranks")
                        .map(|m| m.as_str().to_string())
                        .or_else(|| c.name("rank").map(|m| m.as_str().to_string()))
                        .unwrap_or_default();
                    for r in named
                        .split(|ch: char| !ch.is_ascii_digit())
                        .filter_map(|x| x.parse().ok())
                    {
                        if !ev.named.iter().any(|(x, _)| *x == r) {
                            ev.named.push((r, here()));
                            if ev.named_reason.is_none() {
                                ev.named_reason = rule.reason.clone();
                            }
                        }
                    }
                }
                // Read on its own, after a failure no tag places.
                EvidenceKind::Launcher => {}
                EvidenceKind::Collective => {
                    let r = num("rank").map(|r| r as u32).or(tagged);
                    if let (Some(r), Some(v)) = (r, c.name("value")) {
                        if ev.collectives.len() < MAX_RANKS {
                            let stated = (v.as_str().to_string(), here());
                            ev.collectives.entry(r).or_insert(stated);
                            if ev.collective_reason.is_none() {
                                ev.collective_reason = rule.reason.clone();
                            }
                        }
                    }
                }
                EvidenceKind::RootCause => {
                    if ev.root_cause.is_none() {
                        if let Some(r) = num("rank") {
                            let host = c.name("host").map(|m| m.as_str().to_string());
                            // Quote the line that names the rank, not the heading.
                            let m = c.name("rank").map_or(0, |m| m.start());
                            let k = span[..m].matches('\n').count();
                            let line = match lines.get(i + k) {
                                Some(&(ls, le)) if k > 0 => EvidenceLine {
                                    line: n + k as u64,
                                    text: clip(&String::from_utf8_lossy(&hay[ls..le])),
                                    timestamp: parse_prefix(&hay[ls..le])
                                        .timestamp
                                        .and_then(|t| t.iso()),
                                    rank: Some(r as u32),
                                },
                                _ => here(),
                            };
                            ev.root_cause = Some((r as u32, host, line));
                        }
                    }
                }
            }
        }
        n += 1;
    }
    for (r, said) in said {
        let seen = ev.ranks.entry(r).or_default();
        let rank = (r != UNTAGGED).then_some(r);
        let read = |i: usize| {
            let (s, e) = lines[i];
            let raw = &hay[s..e];
            let text = String::from_utf8_lossy(&raw[..raw.len().min(4096)]);
            let prefix = parse_prefix(text.as_bytes());
            (text, prefix)
        };
        let evidence = |i: usize, text: &str, prefix: crate::prefix::Prefix| EvidenceLine {
            line: first + i as u64,
            text: clip(text),
            timestamp: prefix.timestamp.and_then(|t| t.iso()),
            rank,
        };
        // The last line is read once, for itself and as the first place
        // a step is looked for.
        for (k, &i) in said.iter().rev().enumerate() {
            let (text, prefix) = read(i);
            if k == 0 {
                seen.last_line = Some(evidence(i, &text, prefix));
            }
            let body = text.get(prefix.body..).unwrap_or("");
            if let Some(step) = crate::context::progress_of(body.as_bytes()).step {
                seen.last_step = Some((step, evidence(i, &text, prefix)));
                break;
            }
        }
    }
    ev
}

/// The rank a launcher names as failed in the lines after `at` (at most
/// `reach` bytes on, and [`AFTER`]): the first `launcher` rule's line
/// found, with the rank it names and its line number counted from `at`'s
/// line (1). Only lines holding a rule's anchor are read.
pub(crate) fn launcher_named(
    rules: &[EvidenceRule],
    hay: &[u8],
    at: usize,
    reach: usize,
) -> Option<(u32, EvidenceLine)> {
    let at = at.min(hay.len());
    let to = (at + AFTER.min(reach)).min(hay.len());
    let window = &hay[at..to];
    let mut best: Option<(usize, u32, EvidenceLine)> = None;
    for rule in rules.iter().filter(|r| r.kind == EvidenceKind::Launcher) {
        // The first line holding the anchor that the rule confirms (a few
        // dozen tries at most: an anchor may be a common word).
        let hits = memchr::memmem::find_iter(window, rule.anchor.as_bytes()).take(64);
        for hit in hits {
            if best.as_ref().is_some_and(|b| b.0 <= hit) {
                break;
            }
            let start = memchr::memrchr(b'\n', &window[..hit]).map_or(0, |p| p + 1);
            let mut end = start;
            for _ in 0..=rule.lines {
                end = memchr::memchr(b'\n', &window[end..]).map_or(window.len(), |p| end + p + 1);
            }
            let span = String::from_utf8_lossy(&window[start..end]);
            let Some(r) = rule
                .regex
                .regex()
                .captures(&span)
                .and_then(|c| c.name("rank")?.as_str().parse::<u32>().ok())
            else {
                continue;
            };
            let first = span.lines().next().unwrap_or("");
            let line = EvidenceLine {
                line: 1 + bytecount::count(&window[..start], b'\n') as u64,
                text: clip(first),
                timestamp: parse_prefix(first.as_bytes())
                    .timestamp
                    .and_then(|t| t.iso()),
                rank: Some(r),
            };
            best = Some((hit, r, line));
            break;
        }
    }
    best.map(|(_, r, l)| (r, l))
}

/// What [`decide`] needs of the findings.
pub struct Context<'a> {
    /// The ranks that reported the finding.
    pub reporters: &'a [u32],
    /// The timed-out collective's sequence number, if the message gives it.
    pub seq_num: Option<u64>,
    /// The rank and description of the failure this finding is fallout of.
    pub cause: Option<(u32, String, u64)>,
    /// Ranks with a failure of their own in the same source.
    pub failing: &'a [u32],
    /// The ranks the job's files are the logs of (`rank0.log` …), where
    /// they are one file per rank: a rank that wrote nothing near the
    /// failure is still one of the job.
    pub job: &'a [u32],
    /// Whether the finding is what a rank reports while it waits for its
    /// peers (its class's `waits`): only then are the ranks behind, silent
    /// or lagging the ones it waited for.
    pub waited: bool,
}

fn list(ranks: &[u32]) -> String {
    let s: Vec<String> = ranks.iter().map(u32::to_string).collect();
    match s.len() {
        1 => format!("rank {}", s[0]),
        _ => format!("ranks {}", s.join(", ")),
    }
}

/// The culprit of one distributed finding, from the log's evidence.
pub fn decide(ev: &RankEvidence, cx: &Context<'_>) -> Option<Culprit> {
    let ev = &ev.tagged();
    let culprit = |ranks: Vec<u32>, reason: String, evidence: Vec<EvidenceLine>, basis: Basis| {
        let hosts = ev
            .root_cause
            .as_ref()
            .filter(|(r, ..)| ranks.contains(r))
            .and_then(|(_, h, _)| h.clone())
            .into_iter()
            .collect();
        Some(Culprit {
            ranks,
            hosts,
            reason,
            evidence,
            basis,
        })
    };
    let last_words = |ranks: &[u32]| -> String {
        ranks
            .first()
            .and_then(|r| ev.ranks.get(r)?.last_line.as_ref())
            .map(|l| {
                format!(
                    "; its last line before the failure: {:?} (line {})",
                    clip_body(&l.text),
                    l.line
                )
            })
            .unwrap_or_default()
    };
    let last_lines = |ranks: &[u32]| -> Vec<EvidenceLine> {
        ranks
            .iter()
            .filter_map(|r| ev.ranks.get(r)?.last_line.clone())
            .collect()
    };
    // 1. Named by a barrier.
    if !ev.named.is_empty() {
        let mut ranks: Vec<u32> = ev.named.iter().map(|(r, _)| *r).collect();
        ranks.sort_unstable();
        let mut evidence: Vec<EvidenceLine> = ev.named.iter().map(|(_, l)| l.clone()).collect();
        evidence.dedup();
        evidence.extend(last_lines(&ranks));
        let reason = ev
            .named_reason
            .as_deref()
            .unwrap_or("the barrier names {ranks} as late")
            .replace("{ranks}", &list(&ranks));
        return culprit(ranks, reason, evidence, Basis::Barrier);
    }
    // 2. The ranks whose collective is not the one most ranks run.
    if let Some((ranks, reason, mut evidence)) = odd_collective(ev) {
        evidence.extend(last_lines(&ranks));
        return culprit(ranks, reason, evidence, Basis::Mismatch);
    }
    // 3. The wavefront of enqueued collectives.
    let enqueued: Vec<(u32, u64, &EvidenceLine)> = ev
        .ranks
        .iter()
        .filter_map(|(r, s)| s.enqueued.as_ref().map(|(v, l)| (*r, *v, l)))
        .collect();
    if cx.waited && (enqueued.len() >= 2 || (enqueued.len() == 1 && cx.seq_num.is_some())) {
        let front = cx
            .seq_num
            .unwrap_or_else(|| enqueued.iter().map(|e| e.1).max().unwrap_or(0));
        let behind: Vec<&(u32, u64, &EvidenceLine)> =
            enqueued.iter().filter(|e| e.1 < front).collect();
        if !behind.is_empty() && behind.len() < enqueued.len().max(2) {
            let ranks: Vec<u32> = behind.iter().map(|e| e.0).collect();
            let last = behind.iter().map(|e| e.1).min().unwrap_or(0);
            let mut evidence: Vec<EvidenceLine> = behind.iter().map(|e| e.2.clone()).collect();
            evidence.extend(
                enqueued
                    .iter()
                    .filter(|e| e.1 >= front)
                    .map(|e| e.2.clone())
                    .take(1),
            );
            let tail = last_words(&ranks);
            evidence.extend(last_lines(&ranks));
            let reason = format!(
                "{} last enqueued collective {last}, behind the collective {front} the others waited in{tail}",
                list(&ranks)
            );
            return culprit(ranks, reason, evidence, Basis::Wavefront);
        }
    }
    // 4. The rank whose own failure this is fallout of.
    if let Some((rank, what, line)) = &cx.cause {
        let reason =
            format!("rank {rank} failed first ({what} at line {line}); the others waited for it");
        return culprit(
            vec![*rank],
            reason,
            last_lines(&[*rank]),
            Basis::FirstFailure,
        );
    }
    // 5. The ranks that said nothing while the others timed out.
    let mut job: Vec<u32> = ev
        .ranks
        .keys()
        .copied()
        .chain(cx.reporters.iter().copied())
        .chain(cx.job.iter().copied())
        .collect();
    job.sort_unstable();
    job.dedup();
    // Sorted, so that a job of 100,000 ranks is not a search of each in
    // the others.
    let sorted = |ranks: &[u32]| {
        let mut v = ranks.to_vec();
        v.sort_unstable();
        v
    };
    let (reporters, failing) = (sorted(cx.reporters), sorted(cx.failing));
    let silent: Vec<u32> = job
        .iter()
        .copied()
        .filter(|r| reporters.binary_search(r).is_err() && failing.binary_search(r).is_err())
        .collect();
    if cx.waited && !cx.reporters.is_empty() && !silent.is_empty() && silent.len() < job.len() {
        let evidence = last_lines(&silent);
        let last = last_words(&silent);
        let reason = format!(
            "{} reported no failure while {} timed out waiting for it{last}",
            list(&silent),
            list(cx.reporters)
        );
        return culprit(silent, reason, evidence, Basis::Silent);
    }
    // 6. The rank whose training is behind.
    let steps: Vec<(u32, u64)> = ev
        .ranks
        .iter()
        .filter_map(|(r, s)| s.last_step.as_ref().map(|(st, _)| (*r, *st)))
        .collect();
    if cx.waited && steps.len() >= 2 {
        let min = steps.iter().map(|s| s.1).min().unwrap_or(0);
        let behind: Vec<u32> = steps.iter().filter(|s| s.1 == min).map(|s| s.0).collect();
        if behind.len() < steps.len() {
            let evidence: Vec<EvidenceLine> = behind
                .iter()
                .filter_map(|r| Some(ev.ranks.get(r)?.last_step.as_ref()?.1.clone()))
                .collect();
            let at = evidence.first().map_or(0, |l| l.line);
            let reason = format!(
                "{} stopped at step {min} (line {at}), behind the others",
                list(&behind)
            );
            return culprit(behind, reason, evidence, Basis::Behind);
        }
    }
    // 7. torchrun's first observed failure.
    let (rank, _, line) = ev.root_cause.as_ref()?;
    let reason = format!("torchrun names rank {rank} as the first observed failure");
    let mut evidence = vec![line.clone()];
    evidence.extend(last_lines(&[*rank]));
    culprit(vec![*rank], reason, evidence, Basis::RootCause)
}

/// The ranks whose stated collective differs from the one most ranks
/// state, with the reason and the lines showing it: none unless at least
/// three ranks stated one and a single collective has more ranks than any
/// other, two at least.
fn odd_collective(ev: &RankEvidence) -> Option<(Vec<u32>, String, Vec<EvidenceLine>)> {
    if ev.collectives.len() < 3 {
        return None;
    }
    let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
    for (v, _) in ev.collectives.values() {
        *groups.entry(v.as_str()).or_default() += 1;
    }
    let mut sizes: Vec<(usize, &str)> = groups.into_iter().map(|(v, n)| (n, v)).collect();
    sizes.sort_unstable_by_key(|s| std::cmp::Reverse(s.0));
    let (count, ours) = sizes[0];
    if sizes.len() < 2 || count < 2 || sizes[1].0 == count {
        return None;
    }
    let odd: Vec<u32> = (ev.collectives.iter())
        .filter(|(_, (v, _))| v != ours)
        .map(|(r, _)| *r)
        .collect();
    let (theirs, ours_part) = differing(&ev.collectives[&odd[0]].0, ours);
    let reason = (ev.collective_reason.as_deref())
        .unwrap_or("{ranks} ran {theirs} where the other {count} ranks ran {ours}")
        .replace("{ranks}", &list(&odd))
        .replace("{count}", &count.to_string())
        .replace("{theirs}", crate::text::truncate(theirs, 80))
        .replace("{ours}", crate::text::truncate(ours_part, 80));
    let mut evidence: Vec<EvidenceLine> = odd.iter().map(|r| ev.collectives[r].1.clone()).collect();
    evidence.extend(
        (ev.collectives.values())
            .find(|(v, _)| v == ours)
            .map(|(_, l)| l.clone()),
    );
    Some((odd, reason, evidence))
}

/// The parts of two collectives' fingerprints that differ, each widened to
/// the `Name=` fields around the difference: `TensorShape=[128, 4096]`
/// against `TensorShape=[256, 4096]`.
fn differing<'a>(a: &'a str, b: &'a str) -> (&'a str, &'a str) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let pre = x.iter().zip(y).take_while(|(p, q)| p == q).count();
    let room = x.len().min(y.len()) - pre;
    let suf = (x.iter().rev().zip(y.iter().rev()))
        .take_while(|(p, q)| p == q)
        .count()
        .min(room);
    // A field `Name=` starts at `i`, after `(` or `, `.
    let field = |s: &[u8], i: usize| {
        let after = (i >= 1 && s[i - 1] == b'(') || (i >= 2 && &s[i - 2..i] == b", ");
        let name = s[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        after && name > 0 && s.get(i + name) == Some(&b'=')
    };
    let start = (1..=pre).rev().find(|&i| field(x, i)).unwrap_or(0);
    let end = |s: &'a str, from: usize| -> &'a str {
        let b = s.as_bytes();
        let stop = (from..b.len())
            .find(|&i| b[i..].starts_with(b", ") && field(b, i + 2))
            .unwrap_or(b.len());
        let mut piece = &s[start..stop];
        // A closing parenthesis of the fingerprint itself, not of the field.
        while piece.ends_with(')') && piece.matches(')').count() > piece.matches('(').count() {
            piece = &piece[..piece.len() - 1];
        }
        piece
    };
    (end(a, a.len() - suf), end(b, b.len() - suf))
}

/// A line's text without its prefixes, for a sentence.
fn clip_body(text: &str) -> String {
    let p = parse_prefix(text.as_bytes());
    let body = text.get(p.body..).unwrap_or(text).trim();
    crate::text::truncate(body, 80).to_string()
}

#[cfg(test)]
mod examples;
