//! Unclassified errors grouped into templates.
//!
//! Error-level lines (an `ERROR`/`FATAL`/`CRITICAL` level, a glog or
//! TensorFlow `E`/`F` header) that hold no pattern's anchor are what the
//! catalog does not know. They are grouped online, Drain-style: variable
//! tokens are masked first (numbers, hex, paths, ids, sizes, quoted
//! values), then a line joins the most similar template of the same length
//! and first token when at least [`SIMILARITY`] of the tokens agree, and
//! the tokens that differ become `<*>`. Memory is bounded by the number of
//! templates ([`MAX_TEMPLATES`]); lines beyond it are counted, not kept.
//!
//! Templates are indexed by (token count, first token), and a line is
//! compared with at most [`MAX_CANDIDATES`] templates of its bucket, the
//! most recently matched first: the time per line is bounded whatever the
//! number of templates, so a log of thousands of unrelated error lines that
//! share a first word costs what a normal log does. A template that no line
//! has matched while `MAX_CANDIDATES` newer ones of its bucket were made or
//! matched leaves the candidates: it is still reported, but a later line
//! like it starts a new template instead of joining it.

use std::collections::HashMap;

use crate::location::Location;

/// Share of equal tokens for a line to join a template.
pub const SIMILARITY: f64 = 0.6;
/// Templates kept; lines that would start another are only counted.
pub const MAX_TEMPLATES: usize = 1000;
/// Templates of one (token count, first token) bucket a line is compared
/// with: the most recently matched (or made) first. Bounds the work per line;
/// 32 keeps every template of an ordinary log's bucket (a handful) in reach.
pub const MAX_CANDIDATES: usize = 32;
/// Tokens compared; a longer line's tail is one masked token.
const MAX_TOKENS: usize = 64;
/// The wildcard a masked or differing token becomes.
pub const WILDCARD: &str = "<*>";

/// One template and what it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Tokens joined by single spaces; variable ones are `<*>`.
    pub text: String,
    /// How many lines it covers.
    pub count: u64,
    /// Where its earliest line was seen; `None` when its lines were added
    /// without a location.
    pub first: Option<Location>,
    /// Where its latest line was seen; `None` when its lines were added
    /// without a location.
    pub last: Option<Location>,
    /// The first line that made it, as the log wrote it (prefixes removed).
    pub example: String,
    tokens: Vec<String>,
}

/// The templates of a scan, in order of first appearance.
#[derive(Clone, Debug, Default)]
pub struct Templates {
    templates: Vec<Template>,
    /// (token count, first token) to the indices in `templates` a line of
    /// that shape is compared with, most recently matched first, at most
    /// [`MAX_CANDIDATES`].
    buckets: HashMap<(usize, String), Vec<usize>>,
    /// Lines that found no template once the limit was reached.
    pub dropped: u64,
    /// Templates compared with a line, for the tests' bound on work.
    #[cfg(test)]
    compared: u64,
}

/// Whether a token is variable: it has a digit (numbers, sizes, ids, hex,
/// times, versions, ports), a path separator, or is a quoted value.
fn variable(token: &str) -> bool {
    let t =
        token.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '(' | ')' | '[' | ']'));
    t.bytes().any(|b| b.is_ascii_digit())
        || t.contains('/')
        || t.contains('\\')
        || (t.len() >= 2 && (t.starts_with('\'') || t.starts_with('"')))
}

/// The masked tokens of a line.
pub fn tokens(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, raw) in line.split_whitespace().enumerate() {
        if i == MAX_TOKENS {
            out.push(WILDCARD.to_string());
            break;
        }
        if variable(raw) {
            // Keep the punctuation that ends a token (`retries:`), mask the rest.
            let tail: String = raw
                .chars()
                .rev()
                .take_while(|c| matches!(c, ',' | ';' | ':' | ')' | ']'))
                .collect();
            out.push(format!(
                "{WILDCARD}{}",
                tail.chars().rev().collect::<String>()
            ));
        } else {
            out.push(raw.to_string());
        }
    }
    out
}

impl Templates {
    /// Adds one error line (prefixes removed) seen at `at`.
    pub fn add(&mut self, line: &str, at: Option<&Location>) {
        self.add_line(line, at);
    }

    /// Adds one line; the index of the template it joined or made, `None`
    /// when it was empty or dropped.
    fn add_line(&mut self, line: &str, at: Option<&Location>) -> Option<usize> {
        let toks = tokens(line);
        if toks.is_empty() {
            return None;
        }
        let full = self.templates.len() >= MAX_TEMPLATES;
        let key = (toks.len(), toks[0].clone());
        let Some(bucket) = self.buckets.get_mut(&key) else {
            if full {
                self.dropped += 1;
                return None;
            }
            let i = self.push(line, at, toks);
            self.buckets.insert(key, vec![i]);
            return Some(i);
        };
        // The most similar candidate; on a tie the newest template, as when
        // every template was compared in order of appearance.
        let mut best: Option<(f64, usize, usize)> = None;
        for (pos, &i) in bucket.iter().enumerate() {
            #[cfg(test)]
            {
                self.compared += 1;
            }
            let t = &self.templates[i];
            let same = t.tokens.iter().zip(&toks).filter(|(a, b)| a == b).count();
            let sim = same as f64 / toks.len() as f64;
            if sim >= SIMILARITY
                && best.is_none_or(|(s, j, _)| sim.total_cmp(&s).then(i.cmp(&j)).is_gt())
            {
                best = Some((sim, i, pos));
            }
        }
        match best {
            Some((_, i, pos)) => {
                bucket[..=pos].rotate_right(1);
                let t = &mut self.templates[i];
                for (mine, theirs) in t.tokens.iter_mut().zip(&toks) {
                    if mine != theirs {
                        *mine = WILDCARD.to_string();
                    }
                }
                t.text = t.tokens.join(" ");
                t.count += 1;
                if let Some(at) = at {
                    if t.first
                        .as_ref()
                        .is_none_or(|f| (at.source, at.byte) < (f.source, f.byte))
                    {
                        t.first = Some(at.clone());
                        t.example = line.to_string();
                    }
                    if t.last
                        .as_ref()
                        .is_none_or(|l| (at.source, at.byte) >= (l.source, l.byte))
                    {
                        t.last = Some(at.clone());
                    }
                }
                Some(i)
            }
            None if full => {
                self.dropped += 1;
                None
            }
            None => {
                let i = self.templates.len();
                // The least recently matched leaves the candidates (it stays
                // a template).
                bucket.truncate(MAX_CANDIDATES - 1);
                bucket.insert(0, i);
                self.push(line, at, toks);
                Some(i)
            }
        }
    }

    /// Makes a template of one line; its index.
    fn push(&mut self, line: &str, at: Option<&Location>, toks: Vec<String>) -> usize {
        self.templates.push(Template {
            text: toks.join(" "),
            count: 1,
            first: at.cloned(),
            last: at.cloned(),
            example: line.to_string(),
            tokens: toks,
        });
        self.templates.len() - 1
    }

    /// Takes in another scan's templates (a later part of the input).
    pub fn join(&mut self, other: Templates) {
        // Into nothing: the other's templates as they are (re-adding them
        // could merge two a single pass kept apart).
        if self.templates.is_empty() && self.dropped == 0 {
            *self = other;
            return;
        }
        self.dropped += other.dropped;
        for t in other.templates {
            // Re-adding the template's example with its places, then its
            // other occurrences as counts, keeps the merge by similarity.
            let Some(i) = self.add_line(&t.example, t.first.as_ref()) else {
                // Dropped (the limit is reached), with all it covered.
                self.dropped += t.count - 1;
                continue;
            };
            let m = &mut self.templates[i];
            m.count += t.count - 1;
            for (mine, theirs) in m.tokens.iter_mut().zip(&t.tokens) {
                if mine != theirs {
                    *mine = WILDCARD.to_string();
                }
            }
            m.text = m.tokens.join(" ");
            if let Some(l) = t.last {
                if m.last
                    .as_ref()
                    .is_none_or(|x| (l.source, l.byte) >= (x.source, x.byte))
                {
                    m.last = Some(l);
                }
            }
        }
    }

    /// Numbers every location's source `by` later (a fork joining a sink
    /// that read sources before it).
    pub(crate) fn shift_sources(&mut self, by: usize) {
        for t in &mut self.templates {
            for l in [&mut t.first, &mut t.last].into_iter().flatten() {
                l.source += by;
            }
        }
    }

    /// The first and last location of every template, to complete their
    /// timestamps.
    pub(crate) fn places_mut(&mut self) -> impl Iterator<Item = &mut Location> {
        self.templates
            .iter_mut()
            .flat_map(|t| [&mut t.first, &mut t.last].into_iter().flatten())
    }

    /// All templates, most frequent first (ties: first seen first).
    pub fn templates(&self) -> Vec<&Template> {
        let mut all: Vec<&Template> = self.templates.iter().collect();
        all.sort_by(|a, b| {
            b.count.cmp(&a.count).then_with(|| {
                let key = |t: &Template| t.first.as_ref().map(|l| (l.source, l.byte));
                key(a).cmp(&key(b))
            })
        });
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(byte: u64) -> Location {
        Location {
            source: 0,
            line: byte,
            byte,
            timestamp: None,
            rank: None,
        }
    }

    #[test]
    fn variable_fields_are_masked() {
        assert_eq!(
            tokens("corrupt record at offset 0x1f2e in /data/shard-00017.tfrecord (crc 3a9f)"),
            ["corrupt", "record", "at", "offset", "<*>", "in", "<*>", "(crc", "<*>)"]
        );
        assert_eq!(
            tokens("upload 'ckpt-7' failed:"),
            ["upload", "<*>", "failed:"]
        );
    }

    #[test]
    fn two_kinds_of_error_make_two_templates() {
        let mut t = Templates::default();
        for i in 0..30u64 {
            t.add(
                &format!("checkpoint upload of shard {} failed after {} retries: connection reset by peer", i * 7, i % 5),
                Some(&at(i * 100)),
            );
        }
        for i in 0..12u64 {
            t.add(
                &format!(
                    "corrupt record at offset {} in /data/train-{:05}.tfrecord, skipping",
                    i * 4096,
                    i
                ),
                Some(&at(10_000 + i)),
            );
        }
        let all = t.templates();
        assert_eq!(all.len(), 2, "{all:#?}");
        assert_eq!((all[0].count, all[1].count), (30, 12));
        assert_eq!(all[0].first.as_ref().unwrap().byte, 0);
        assert_eq!(all[0].last.as_ref().unwrap().byte, 2900);
        assert!(all[1]
            .text
            .starts_with("corrupt record at offset <*> in <*>"));
    }

    #[test]
    fn joining_halves_equals_one_pass() {
        let lines: Vec<String> = (0..40u64)
            .map(|i| {
                if i % 3 == 0 {
                    format!("worker {i} lost heartbeat after {}s", i * 2)
                } else {
                    format!("failed to fetch batch {i} from the prefetch queue: timeout")
                }
            })
            .collect();
        let mut whole = Templates::default();
        for (i, l) in lines.iter().enumerate() {
            whole.add(l, Some(&at(i as u64)));
        }
        let (mut a, mut b) = (Templates::default(), Templates::default());
        for (i, l) in lines.iter().enumerate() {
            if i < 20 { &mut a } else { &mut b }.add(l, Some(&at(i as u64)));
        }
        a.join(b);
        assert_eq!(summary(&whole), summary(&a));
    }

    #[test]
    fn the_number_of_templates_is_bounded() {
        let mut t = Templates::default();
        for i in 0..(MAX_TEMPLATES + 50) {
            // Each line differs in its first token: a template each.
            t.add(&format!("{}error happened", "x".repeat(i % 2000 + 1)), None);
        }
        assert_eq!(t.templates().len(), MAX_TEMPLATES);
        assert_eq!(t.dropped, 50);
    }

    /// A word of letters only (a token with a digit would be masked), one
    /// for each `n`.
    fn word(mut n: usize) -> String {
        let mut w = String::new();
        loop {
            w.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                break w;
            }
        }
    }

    /// `distinct` error lines of 8 tokens sharing their first word, none
    /// like another (only the first token is shared), with a repeated one of
    /// the same shape every `every` lines.
    fn hostile(distinct: usize, every: usize) -> (Vec<String>, u64) {
        let (mut lines, mut repeats) = (Vec::new(), 0);
        for i in 0..distinct {
            if i % every == 0 {
                lines.push(format!(
                    "worker: lost connection to 10.0.{}.{} after {} retries",
                    i % 7,
                    i % 250,
                    i % 5
                ));
                repeats += 1;
            }
            let words: Vec<String> = (0..7).map(|j| word(1000 + i * 7 + j)).collect();
            lines.push(format!("worker: {}", words.join(" ")));
        }
        (lines, repeats)
    }

    fn summary(t: &Templates) -> Vec<(String, u64, Option<u64>, Option<u64>)> {
        t.templates()
            .iter()
            .map(|x| {
                (
                    x.text.clone(),
                    x.count,
                    x.first.as_ref().map(|l| l.byte),
                    x.last.as_ref().map(|l| l.byte),
                )
            })
            .collect()
    }

    #[test]
    fn a_repeated_error_among_thousands_of_distinct_ones_is_one_template() {
        let (lines, repeats) = hostile(3000, 25);
        let mut whole = Templates::default();
        for (i, l) in lines.iter().enumerate() {
            whole.add(l, Some(&at(i as u64)));
        }
        let all = whole.templates();
        assert_eq!(all.len(), MAX_TEMPLATES);
        assert_eq!(
            all[0].text,
            "worker: lost connection to <*> after <*> retries"
        );
        assert_eq!(all[0].count, repeats);
        assert_eq!(all[0].first.as_ref().unwrap().byte, 0);
        assert!(all[1..].iter().all(|t| t.count == 1));
        let kept: u64 = all.iter().map(|t| t.count).sum();
        assert_eq!(kept + whole.dropped, lines.len() as u64);

        // The same in two parts, joined.
        let (mut a, mut b) = (Templates::default(), Templates::default());
        let half = lines.len() / 2;
        for (i, l) in lines.iter().enumerate() {
            if i < half { &mut a } else { &mut b }.add(l, Some(&at(i as u64)));
        }
        a.join(b);
        assert_eq!(summary(&whole), summary(&a));
        assert_eq!(whole.dropped, a.dropped);
    }

    #[test]
    fn the_comparisons_per_line_are_bounded() {
        let (lines, _) = hostile(20_000, 40);
        let mut t = Templates::default();
        for l in &lines {
            let before = t.compared;
            t.add(l, None);
            assert!(t.compared - before <= MAX_CANDIDATES as u64);
            assert!(t.buckets.values().all(|b| b.len() <= MAX_CANDIDATES));
        }
        // Without the bound, a line would meet every template of the bucket.
        assert!(t.compared <= (lines.len() * MAX_CANDIDATES) as u64);
        assert_eq!(t.templates().len(), MAX_TEMPLATES);
        let mut other = Templates::default();
        for l in &lines[..5000] {
            other.add(l, None);
        }
        let before = t.compared;
        let n = other.templates.len() as u64;
        t.join(other);
        assert!(t.compared - before <= n * MAX_CANDIDATES as u64);
    }

    #[test]
    fn a_template_not_matched_for_long_leaves_the_candidates() {
        let mut t = Templates::default();
        t.add("worker: lost connection to 10.0.0.1 after 3 retries", None);
        for i in 0..MAX_CANDIDATES {
            let words: Vec<String> = (0..7).map(|j| word(1000 + i * 7 + j)).collect();
            t.add(&format!("worker: {}", words.join(" ")), None);
        }
        t.add("worker: lost connection to 10.0.0.2 after 1 retries", None);
        let all = t.templates();
        assert_eq!(all.len(), MAX_CANDIDATES + 2);
        assert!(all.iter().all(|x| x.count == 1));
    }

    #[test]
    fn a_joined_template_dropped_at_the_limit_counts_all_its_lines() {
        let mut a = Templates::default();
        for i in 0..MAX_TEMPLATES {
            a.add(&format!("{}error happened", "x".repeat(i + 1)), None);
        }
        let mut b = Templates::default();
        for i in 0..5 {
            b.add(&format!("disk quota exceeded on volume {i}"), None);
        }
        a.join(b);
        assert_eq!(a.templates().len(), MAX_TEMPLATES);
        assert_eq!(a.dropped, 5);
    }
}

#[cfg(test)]
mod examples;
