//! Lines read on their own: environment probes and build fingerprints,
//! and error-level lines no pattern anchors (unclassified errors).

use crate::prefix::Origin;
use crate::prefix::Prefix;
use crate::scan::state::State;
use crate::scan::MAX_MESSAGE;
use crate::sink::EnvFact;
use crate::sink::Location;
use crate::Scanner;
use crate::Sink;

/// How many probed line texts a scan remembers (then it starts over).
pub(super) const PROBED_MEMORY: usize = 4096;

/// The line starting at `start` (at most `limit` bytes of it), read on its
/// own: its prefixes, and its text with ANSI codes removed and invalid
/// UTF-8 replaced; the body (prefixes removed) starts at the returned
/// offset of the text.
pub(super) fn read_line(
    st: &mut State,
    hay: &[u8],
    start: usize,
    limit: usize,
) -> (Prefix, String, usize) {
    let end = memchr::memchr2(b'\n', b'\r', &hay[start..]).map_or(hay.len(), |p| start + p);
    let raw = &hay[start..end.min(start.saturating_add(limit))];
    st.scratch.clear();
    let clean: &[u8] = if crate::ansi::has_escape(raw) {
        crate::ansi::strip_into(raw, &mut st.scratch);
        &st.scratch
    } else {
        raw
    };
    let prefix = crate::prefix::parse_prefix(clean);
    let mut text = String::from_utf8_lossy(&clean[..prefix.body]).into_owned();
    let body_at = text.len();
    text.push_str(&String::from_utf8_lossy(&clean[prefix.body..]));
    (prefix, text, body_at)
}

/// Where a line read on its own is, from its own prefix.
pub(super) fn line_location(st: &mut State, hay: &[u8], start: usize, prefix: &Prefix) -> Location {
    Location {
        source: 0,
        line: st.counter.line_at(hay, start),
        byte: st.base + start as u64,
        timestamp: prefix.timestamp,
        rank: match prefix.origin {
            Some(Origin::Rank(r)) => Some(r),
            _ => None,
        },
    }
}

impl Scanner {
    /// Hands an error-level line that no pattern anchors to the sink as an
    /// unclassified error (lines whose level is not an error are skipped:
    /// the anchor `ERROR` also occurs inside ordinary text).
    pub(super) fn error_line<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        start: usize,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let (prefix, text, body_at) = read_line(st, hay, start, MAX_MESSAGE);
        let body = &text[body_at..];
        if !matches!(
            prefix.level,
            Some(crate::prefix::Level::Error | crate::prefix::Level::Fatal)
        ) {
            return Ok(());
        }
        let body = body.trim();
        if body.is_empty() {
            return Ok(());
        }
        let location = line_location(st, hay, start, &prefix);
        sink.unclassified(body, &location)
    }

    /// Runs the environment probes whose anchors a line holds, on that line
    /// alone: probes read one line, so they need no framing. A line whose
    /// text (prefixes removed) was already probed is skipped: a restarted
    /// job prints the same versions again.
    pub(super) fn probe_line<S: Sink>(
        &self,
        st: &mut State,
        hay: &[u8],
        start: usize,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        // A line byte for byte like one just probed has a text already
        // probed: skipped before it is read (a burst repeats each rank's
        // copy of a warning that names a version, thousands of times).
        let end = memchr::memchr2(b'\n', b'\r', &hay[start..]).map_or(hay.len(), |p| start + p);
        let raw = &hay[start..end];
        if st.probed_lines.contains(raw) {
            return Ok(());
        }
        // Build fingerprints read the whole line (a glog header's source
        // path, `E tensorflow/…/cuda_dnn.cc:123]`, is part of the prefix);
        // other probes its body.
        let (prefix, whole, body_at) = read_line(st, hay, start, usize::MAX);
        let body = &whole[body_at..];
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            body.hash(&mut h);
            h.finish()
        };
        if st.probed.contains(&key) {
            st.probed_lines.insert(raw);
            return Ok(());
        }
        if st.probed.len() >= PROBED_MEMORY {
            st.probed.clear();
            st.probed_lines.clear();
        }
        st.probed.insert(key);
        st.probed_lines.insert(raw);
        let location = line_location(st, hay, start, &prefix);
        let n_patterns = self.catalog.patterns().len() as u32;
        let probes = self.catalog.probes();
        st.candidates.clear();
        for m in self.event_ac().find_overlapping_iter(whole.as_str()) {
            st.candidates.extend(
                self.owners[m.pattern().as_usize()]
                    .iter()
                    .filter(|&&i| i >= n_patterns),
            );
        }
        st.candidates.sort_unstable();
        st.candidates.dedup();
        for &qi in &st.candidates {
            let probe = &probes[(qi - n_patterns) as usize];
            let text = if probe.build.is_some() { &whole } else { body };
            for caps in probe.regex.regex().captures_iter(text) {
                // A fingerprint names the framework, and the release or
                // range it allows; a probe's groups and constants are fields.
                let fields: Vec<(&str, String)> = match &probe.build {
                    Some(build) => {
                        let framework = probe.set.get("framework").map_or("", String::as_str);
                        let value = build.value(self.catalog.releases(), framework, &caps);
                        std::iter::once(("framework", framework.to_string()))
                            .chain(value.map(|v| ("framework_build", v)))
                            .collect()
                    }
                    None => {
                        let captured = probe
                            .regex
                            .regex()
                            .capture_names()
                            .flatten()
                            .filter_map(|n| caps.name(n).map(|m| (n, m.as_str())));
                        let constants = probe.set.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                        captured
                            .chain(constants)
                            .filter_map(|(f, raw)| Some((f, crate::fields::normalize(f, raw)?)))
                            .collect()
                    }
                };
                for (field, value) in fields {
                    sink.environment(&EnvFact {
                        field,
                        value,
                        probe,
                        location: location.clone(),
                    })?;
                }
            }
        }
        Ok(())
    }
}
