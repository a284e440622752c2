//! The regexes a scan will need, compiled on all threads before the
//! stage that needs them.
//!
//! The built-in catalog's regexes are compiled on first use
//! ([`LazyRegex`]): a log needs a few dozen of its several hundred. On
//! many threads, first use is the wrong time. Every thread that frames
//! a region or reads a probe line needs the same regexes at about the same
//! moment, the first to ask compiles one (up to a few milliseconds) and the
//! others wait for it, so the compiles of every regex a stage needs line
//! up on its critical path. The literal pass notes which anchors it found
//! ([`Fired`]); the regexes of their patterns and probes are then compiled
//! at once, one a thread, longest first. What the pass did not note (an
//! anchor after the first few on a line, a fact's regex) is still compiled
//! on first use: warming changes when a regex is compiled, never a report.

use crate::catalog::LazyRegex;
use crate::Scanner;

/// The anchors (indices into the scanner's anchor table) a literal pass
/// found, as a set of bits.
#[derive(Clone, Debug, Default)]
pub(super) struct Fired(Vec<u64>);

impl Fired {
    /// Notes the anchor `anchor`.
    pub(super) fn insert(&mut self, anchor: usize) {
        let word = anchor / 64;
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        self.0[word] |= 1 << (anchor % 64);
    }

    /// Adds the anchors `other` noted.
    pub(super) fn union(&mut self, other: &Fired) {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (w, o) in self.0.iter_mut().zip(&other.0) {
            *w |= o;
        }
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The anchors noted, in increasing order.
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            (0..64)
                .filter(move |b| w & (1 << b) != 0)
                .map(move |b| i * 64 + b)
        })
    }
}

impl Scanner {
    /// Compiles, on rayon's threads, the regexes of the patterns and probes
    /// that own the anchors in `fired` and are not compiled yet, and builds
    /// the event automaton, which every framing thread and probe line needs
    /// first.
    pub(super) fn warm(&self, fired: &Fired) {
        use rayon::prelude::*;
        let (patterns, probes) = (self.catalog.patterns(), self.catalog.probes());
        let mut todo: Vec<&LazyRegex> = fired
            .iter()
            .filter_map(|a| self.owners.get(a))
            .flatten()
            .map(|&o| match patterns.get(o as usize) {
                Some(p) => &p.regex,
                None => &probes[o as usize - patterns.len()].regex,
            })
            .filter(|r| !r.is_compiled())
            .collect();
        // Longest first; a regex owned by several anchors once (two
        // regexes of one text stay two: each has its own cell).
        todo.sort_by_key(|r| (std::cmp::Reverse(r.as_str().len()), *r as *const LazyRegex));
        todo.dedup_by(|a, b| std::ptr::eq(*a, *b));
        if todo.is_empty() {
            return;
        }
        rayon::join(
            || {
                self.event_ac();
            },
            // One regex a task: the first taken are the longest.
            || {
                todo.par_iter().with_max_len(1).for_each(|r| {
                    r.regex();
                })
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Catalog, ScannerBuilder};

    #[test]
    fn fired_anchors_are_kept_as_a_set() {
        let (mut a, mut b) = (Fired::default(), Fired::default());
        for i in [3, 64, 3, 900] {
            a.insert(i);
        }
        b.insert(1);
        b.union(&a);
        assert_eq!(b.iter().collect::<Vec<_>>(), [1, 3, 64, 900]);
        b.clear();
        assert_eq!(b.iter().count(), 0);
    }

    /// A mapped scan of a log with an out-of-memory error compiles that
    /// pattern's regex before framing, and nothing a log lacks.
    #[test]
    fn the_literal_pass_notes_the_anchors_whose_regexes_are_warmed() {
        let mut log = b"step 1 loss 0.5\n".repeat(200);
        log.extend_from_slice(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
        // The NFA (a small span), then the DFA, whose anchors are fewer.
        for dfa in [false, true] {
            let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
            let compiled = |class: &str| {
                (scanner.catalog().patterns().iter())
                    .filter(|p| p.class.starts_with(class) && p.regex.is_compiled())
                    .count()
            };
            let mut found = super::super::literal::Found::default();
            let (ac, kinds) = scanner.scan_ac(if dfa { usize::MAX } else { 0 });
            scanner.plain_pass(ac, kinds, &log, 0..log.len(), &mut found);
            assert_eq!(compiled("cuda.oom"), 0);
            scanner.warm(&found.fired);
            assert!(compiled("cuda.oom") > 0, "dfa {dfa}");
            assert_eq!(compiled("nccl."), 0, "dfa {dfa}");
        }
    }
}
