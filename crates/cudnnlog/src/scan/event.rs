//! Confirming an event: the patterns whose anchors its text holds, their
//! regexes, and the matches handed to the sink.

use crate::catalog::Scope;
use crate::catalog::Severity;
use crate::catalog::AT_GROUP;
use crate::context::LineCounter;
use crate::framer::Event;
use crate::prefix::Origin;
use crate::scan::state::State;
use crate::scan::MAX_MESSAGE;
use crate::scan::MAX_SIGNATURE;
use crate::scan::MESSAGE_LEAD;
use crate::sink::Location;
use crate::text::truncate;
use crate::Match;
use crate::Scanner;
use crate::Sink;

impl Scanner {
    /// Confirms the candidate patterns of one event and reports the matches.
    pub(super) fn match_event<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        ev: &Event<'_>,
        sink: &mut S,
    ) -> Result<bool, S::Error> {
        let (cut, _) = self.confirm_event(st, hay, ev);
        let State {
            text,
            line_at,
            memo,
            counter,
            base,
            ..
        } = st;
        let text = text.as_str();
        let outcomes = memo.last();
        for o in outcomes {
            let m = self.build_match(o, (text, line_at, cut), hay, ev, counter, *base);
            if !sink.matched(&m)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Writes the text of `ev` into `st.text` and confirms it, the outcomes
    /// left in the memo ([`Memo::last`](crate::scan::confirm::Memo::last)):
    /// whether the text was cut, and where its final exception starts.
    pub(super) fn confirm_event(
        &self,
        st: &mut State,
        hay: &[u8],
        ev: &Event<'_>,
    ) -> (bool, Option<usize>) {
        let cut = ev.text_into(hay, &mut st.text, &mut st.line_at, &mut st.scratch);
        let text = st.text.as_str();
        // Where the final exception of a traceback starts in `text` (past
        // the indentation of a nested traceback).
        let exception_at = ev.exception.map(|i| {
            let at = st.line_at[i];
            at + text[at..]
                .bytes()
                .take_while(|&c| c == b' ' || c == b'\t')
                .count()
        });
        let State {
            candidates, memo, ..
        } = st;
        // A text confirmed before reports what it did then, no regex run.
        memo.get_or_confirm(text, exception_at, || {
            candidates.clear();
            for m in self.event_ac().find_overlapping_iter(text) {
                candidates.extend_from_slice(&self.owners[m.pattern().as_usize()]);
            }
            candidates.sort_unstable();
            candidates.dedup();
            crate::scan::confirm::confirm(&self.catalog, candidates, text, exception_at)
                .iter()
                .map(|c| self.outcome(c, text, exception_at))
                .collect()
        });
        (cut, exception_at)
    }

    /// The match an outcome of `ev` makes; `text` is the event's text, with
    /// where each of its lines starts in it and whether it was cut.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_match<'m>(
        &'m self,
        o: &'m crate::scan::confirm::Outcome,
        (text, line_at, cut): (&'m str, &[usize], bool),
        hay: &[u8],
        ev: &Event<'_>,
        counter: &mut LineCounter,
        base: u64,
    ) -> Match<'m> {
        let p = &self.catalog.patterns()[o.pattern];
        // A warning's text raised as the uncaught exception, with nothing
        // but the end of the process after it, was fatal.
        let severity = match o.fatal_if_last && crate::framer::last_words(hay, ev) {
            true => Severity::Error,
            false => o.severity,
        };
        let at = o.at;
        let li = line_at.partition_point(|&s| s <= at).saturating_sub(1);
        let line = &ev.lines[li];
        let line_end = text[line_at[li]..]
            .find('\n')
            .map_or(text.len(), |e| line_at[li] + e);
        // A match deep inside a long line (XLA prints whole HLO
        // instructions before the status) is shown from the match on.
        let from = if at - line_at[li] > MESSAGE_LEAD {
            at
        } else {
            line_at[li]
        };
        let message = truncate(text[from..line_end].trim(), MAX_MESSAGE);
        let origin = line.prefix.origin.or(ev.origin);
        let location = Location {
            // One source per scan: a sink numbers them (FindingsSink).
            source: 0,
            line: counter.line_at(hay, line.start),
            byte: base + line.start as u64,
            timestamp: line
                .prefix
                .timestamp
                .or_else(|| ev.lines.iter().find_map(|l| l.prefix.timestamp)),
            rank: match origin {
                Some(Origin::Rank(r)) => Some(r),
                _ => None,
            },
        };
        Match {
            pattern: p,
            pattern_index: o.pattern,
            location,
            event: ev.kind,
            event_byte: base + ev.start() as u64,
            message,
            text,
            groups: &o.groups,
            severity,
            class: &o.class,
            status: o
                .status
                .as_ref()
                .map(crate::scan::confirm::Status::resolved),
            carried_by: o.carrier.as_ref().map(|(class, _)| &**class),
            signature: o.signature.clone(),
            truncated: cut,
        }
    }

    /// What a confirmed pattern reports on `text`, owned, for the memo.
    fn outcome(
        &self,
        c: &crate::scan::confirm::Confirmed<'_, '_>,
        text: &str,
        exception_at: Option<usize>,
    ) -> crate::scan::confirm::Outcome {
        let p = &self.catalog.patterns()[c.pattern];
        let (caps, base) = (&c.caps, c.base);
        let start = caps.get(0).map_or(0, |m| m.start());
        // Patterns of the exception itself say what it is; a traceback
        // logged by a program that goes on is not fatal.
        let fatal_if_last = c.carrier.is_none()
            && p.severity == Severity::Warning
            && p.scope == Scope::Event
            && exception_at.is_some_and(|e| base + start >= e);
        // A group named `at` marks the finding's place when the regex
        // must first skip text (to reach the last exception of a chain).
        let at = base
            + caps
                .name(AT_GROUP)
                .or_else(|| caps.get(0))
                .map_or(0, |m| m.start());
        // Fact regexes run on the same text as the core: here only when
        // the signature is made of what they capture, else when a sink
        // asks for the facts (`Match::facts`).
        let now = !p.signature.is_empty() && !p.facts.is_empty();
        let more: Vec<Option<regex::Captures<'_>>> = match now {
            true => p
                .facts
                .iter()
                .map(|r| r.regex().captures(&text[base..]))
                .collect(),
            false => Vec::new(),
        };
        let captured = |n: &str| {
            caps.name(n)
                .or_else(|| more.iter().flatten().find_map(|c| c.name(n)))
                .map_or("", |m| m.as_str())
        };
        let signature = if p.signature.is_empty() {
            String::new()
        } else {
            let whole = p
                .signature
                .iter()
                .map(|n| captured(n))
                .collect::<Vec<_>>()
                .join("|");
            truncate(&whole, MAX_SIGNATURE).to_string()
        };
        let spans = |c: &regex::Captures<'_>| crate::sink::Groups::spans(c, base);
        let mut sets = vec![Some(spans(caps))];
        sets.extend(more.iter().map(|m| m.as_ref().map(spans)));
        crate::scan::confirm::Outcome {
            pattern: c.pattern,
            class: c.class.into(),
            status: c.status.map(crate::scan::confirm::Status::of),
            carrier: c.carrier.map(|(class, severity)| (class.into(), severity)),
            severity: c.carrier.map_or(p.severity, |(_, severity)| severity),
            fatal_if_last,
            at,
            signature,
            groups: crate::sink::Groups {
                sets,
                facts_from: (!now && !p.facts.is_empty()).then_some(base),
            },
        }
    }
}
