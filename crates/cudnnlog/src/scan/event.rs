//! Confirming an event: the patterns whose anchors its text holds, their
//! regexes, and the matches handed to the sink.

use super::*;

impl Scanner {
    /// Confirms the candidate patterns of one event and reports the matches.
    pub(super) fn match_event<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        ev: &Event<'_>,
        sink: &mut S,
    ) -> Result<bool, S::Error> {
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
        st.candidates.clear();
        let seen = match st.memo.get(text, exception_at) {
            Some(matched) => {
                st.candidates.extend_from_slice(matched);
                true
            }
            None => {
                for m in self.event_ac().find_overlapping_iter(text) {
                    st.candidates
                        .extend_from_slice(&self.owners[m.pattern().as_usize()]);
                }
                st.candidates.sort_unstable();
                st.candidates.dedup();
                false
            }
        };
        let patterns = self.catalog.patterns();
        let confirmed = crate::confirm::confirm(
            &self.catalog,
            &st.candidates,
            text,
            exception_at,
            &mut st.matched,
        );
        if !seen {
            st.memo.put(text, exception_at, &st.matched);
        }

        for c in &confirmed {
            let (pi, caps, base) = (&c.pattern, &c.caps, &c.base);
            let p = &patterns[*pi];
            let severity = match c.carrier {
                Some((_, severity)) => severity,
                // A warning's text raised as the uncaught exception, with
                // nothing but the end of the process after it, was fatal
                // (patterns of the exception itself say what it is; a
                // traceback logged by a program that goes on is not).
                None if p.severity == Severity::Warning
                    && p.scope == Scope::Event
                    && exception_at
                        .is_some_and(|e| *base + caps.get(0).map_or(0, |m| m.start()) >= e)
                    && crate::framer::last_words(hay, ev) =>
                {
                    Severity::Error
                }
                None => p.severity,
            };
            // A group named `at` marks the finding's place when the regex
            // must first skip text (to reach the last exception of a chain).
            let at = base
                + caps
                    .name(AT_GROUP)
                    .or_else(|| caps.get(0))
                    .map_or(0, |m| m.start());
            let li = st.line_at.partition_point(|&s| s <= at).saturating_sub(1);
            let line = &ev.lines[li];
            let line_end = text[st.line_at[li]..]
                .find('\n')
                .map_or(text.len(), |e| st.line_at[li] + e);
            // A match deep inside a long line (XLA prints whole HLO
            // instructions before the status) is shown from the match on.
            let from = if at - st.line_at[li] > MESSAGE_LEAD {
                at
            } else {
                st.line_at[li]
            };
            let message = truncate(text[from..line_end].trim(), MAX_MESSAGE);
            let origin = line.prefix.origin.or(ev.origin);
            let location = Location {
                source: st.source,
                line: st.counter.line_at(hay, line.start),
                byte: st.base + line.start as u64,
                timestamp: line
                    .prefix
                    .timestamp
                    .or_else(|| ev.lines.iter().find_map(|l| l.prefix.timestamp)),
                rank: match origin {
                    Some(Origin::Rank(r)) => Some(r),
                    _ => None,
                },
            };
            // Fact regexes run on the same text as the core; most patterns
            // have none (and no signature): no allocation per match then.
            let more: Vec<Option<regex::Captures<'_>>> =
                p.facts.iter().map(|r| r.captures(&text[*base..])).collect();
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
            let m = Match {
                pattern: p,
                pattern_index: *pi,
                location,
                event: ev.kind,
                event_byte: st.base + ev.start() as u64,
                message,
                text,
                captures: caps,
                more: &more,
                severity,
                class: c.class,
                status: c.status,
                carried_by: c.carrier.map(|(class, _)| class),
                signature,
                truncated: cut,
            };
            if !sink.matched(&m)? {
                return Ok(false);
            }
        }

        Ok(true)
    }
}
