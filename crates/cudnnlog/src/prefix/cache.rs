//! The prefixes of the last few distinct lines parsed: a burst repeats a
//! handful of lines (a warning and its source line from each rank), and
//! looking back above each of its candidates parses the same lines again
//! and again. A prefix depends on the line's bytes alone.

use super::{parse_prefix, Prefix};

/// Distinct lines remembered.
const LINES: usize = 16;

/// Lines longer than this are parsed every time.
const LONGEST: usize = 512;

/// A cache of [`parse_prefix`], replaced oldest first.
#[derive(Default)]
pub(crate) struct PrefixCache {
    entries: Vec<(Vec<u8>, Prefix)>,
    next: usize,
}

impl PrefixCache {
    /// What [`parse_prefix`] returns for `line`.
    pub(crate) fn parse(&mut self, line: &[u8]) -> Prefix {
        if let Some((_, p)) = self.entries.iter().find(|(b, _)| b == line) {
            return *p;
        }
        let p = parse_prefix(line);
        if line.len() <= LONGEST {
            if self.entries.len() < LINES {
                self.entries.push((Vec::new(), p));
            }
            let e = &mut self.entries[self.next];
            self.next = (self.next + 1) % LINES;
            e.0.clear();
            e.0.extend_from_slice(line);
            e.1 = p;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_parses_as_parse_prefix_does() {
        let lines: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    "[rank{}]:2026-11-29 19:40:{:02},487 WARNING x {i}",
                    i % 5,
                    i % 7
                )
            })
            .collect();
        let mut cache = PrefixCache::default();
        for round in 0..3 {
            for (i, line) in lines.iter().enumerate() {
                // Repeats of a few lines, and lines never seen again.
                let line = if round == 1 { &lines[i % 4] } else { line };
                assert_eq!(
                    cache.parse(line.as_bytes()),
                    parse_prefix(line.as_bytes()),
                    "{line}"
                );
            }
        }
        let long = format!("[rank3]:{}", "x".repeat(LONGEST));
        assert_eq!(cache.parse(long.as_bytes()), parse_prefix(long.as_bytes()));
        assert!(cache.entries.iter().all(|(b, _)| b.len() <= LONGEST));
    }
}
