//! A burst taken at once: the first copy's matches as any others, the
//! other copies counted, sampled, and the last one kept as the last
//! occurrence.

use super::FindingsSink;
use crate::sink::{Copies, Location, Match};

impl FindingsSink<'_> {
    /// [`Sink::matched_copies`](crate::sink::Sink::matched_copies) for the
    /// findings: what [`Sink::matched`](crate::sink::Sink::matched) for
    /// every match of every copy would make of them, with one sample test
    /// per copy instead.
    pub(super) fn copies(
        &mut self,
        group: &[Match<'_>],
        copies: Copies,
    ) -> Result<bool, crate::Error> {
        use crate::sink::Sink;
        for m in group {
            self.matched(m)?;
        }
        if copies.count < 2 {
            return Ok(true);
        }
        let source = self.sources.len();
        for m in group {
            let (_, found, _) = self.slot(m.class, m.severity, &m.signature);
            let Some(i) = found else {
                // Not made by the first copy: cannot be, but each copy
                // is then taken on its own.
                for k in 1..copies.count {
                    self.matched(&m.copy(k, copies))?;
                }
                continue;
            };
            let a = &mut self.accs[i];
            a.count += copies.count - 1;
            let mut location = Location {
                source,
                ..m.location.clone()
            };
            let mut event = m.event_byte;
            for _ in 1..copies.count {
                location.line += copies.lines;
                location.byte += copies.bytes;
                event += copies.bytes;
                a.occurrences.push(&location, event);
            }
            if (location.source, location.byte) >= (a.last.source, a.last.byte) {
                a.last = location;
                a.last_event = event;
                a.last_progress = None;
            }
        }
        Ok(true)
    }
}
