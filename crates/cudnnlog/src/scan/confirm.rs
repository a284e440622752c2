//! Confirming the candidate patterns of one event: which patterns match,
//! which of them is reported for each class, and how the survivors relate.
//!
//! For one event's text and the patterns whose anchors it holds,
//! [`confirm`]:
//!
//! 1. runs each pattern's core regex on its scope (the event, or its final
//!    exception) and drops vetoed matches (`reject`);
//! 2. names the class: the pattern's own, or, for a pattern with a status
//!    `table`, the class of the status it captured ([`crate::status`]);
//! 3. keeps one match per class — the surest pattern (a head before a
//!    tail), then the one whose regexes captured most, then an error before
//!    a warning;
//! 4. lets fallbacks stand back: a pattern of a higher fallback level only
//!    reports when none of a lower one matched, except that a generic status
//!    (level 1) is still reported, carried by a symptom, when no specific
//!    status explains the event;
//! 5. links each status to the symptom that carries it, or drops it when the
//!    symptom's meaning includes it (`implies`).

use crate::catalog::statuses::Resolved;
use crate::catalog::{Catalog, ClassKind, Pattern, Scope, Severity};

/// A pattern confirmed on the event.
pub(crate) struct Confirmed<'t, 'c> {
    /// The pattern's index in the catalog.
    pub pattern: usize,
    /// Its core regex's captures (offsets relative to `base`).
    pub caps: regex::Captures<'t>,
    /// Where its scope starts in the event's text.
    pub base: usize,
    /// The class reported.
    pub class: &'c str,
    /// Its fallback level for this match: a table pattern whose status has
    /// a specific class reports as a specific pattern.
    pub fallback: u8,
    /// The status the table resolved, for table patterns.
    pub status: Option<Resolved<'c>>,
    /// The symptom carrying this status: its class and severity.
    pub carrier: Option<(&'c str, Severity)>,
    score: (u32, bool, usize, bool),
    /// The fact regexes that match are in the score's count.
    facts_counted: bool,
}

impl Confirmed<'_, '_> {
    /// Adds to the score's count of captures the fact regexes that match
    /// on the scope, once.
    fn count_facts(&mut self, patterns: &[Pattern], text: &str) {
        if !self.facts_counted {
            let scope = &text[self.base..];
            let facts = &patterns[self.pattern].facts;
            self.score.2 += facts.iter().filter(|r| r.is_match(scope)).count();
            self.facts_counted = true;
        }
    }
}

/// The confirmed matches of `candidates` (pattern indices, sorted) on
/// `text`; `exception_at` is where the final exception of a traceback starts.
/// The result depends on nothing else, which is what [`Memo`] relies on.
pub(crate) fn confirm<'t, 'c>(
    catalog: &'c Catalog,
    candidates: &[u32],
    text: &'t str,
    exception_at: Option<usize>,
) -> Vec<Confirmed<'t, 'c>> {
    let patterns = catalog.patterns();
    let one = |pi: u32| -> Option<Confirmed<'t, 'c>> {
        let p = &patterns[pi as usize];
        // The regex sees its scope as a whole (`\A` at its start).
        let base = match p.scope {
            Scope::Event => 0,
            Scope::Exception => exception_at?,
        };
        let scope = &text[base..];
        let caps = p.regex.regex().captures(scope)?;
        if p.reject.iter().any(|r| text.contains(r.as_str())) {
            return None;
        }
        let (class, fallback, status) = match p.table.as_deref() {
            // A number of a known enum is named; the class stays the pattern's.
            None => {
                let named = p.decodes.as_deref().and_then(|t| decode(catalog, t, &caps));
                (p.class.as_str(), p.fallback, named)
            }
            Some(table) => match resolve(catalog, p, table, &caps, scope) {
                Some((class, status, generic)) => {
                    (class, if generic { p.fallback } else { 0 }, Some(status))
                }
                // A success status is no failure.
                None => return None,
            },
        };
        // A pattern of the class itself before a status table's reading.
        // The facts it captures count once another pattern of its class
        // confirmed too (a burst of one class runs no fact regex here).
        let score = (
            (p.confidence * 1000.0) as u32,
            p.table.is_none(),
            caps.iter().filter(|c| c.is_some()).count(),
            p.severity == Severity::Error,
        );
        let c = Confirmed {
            pattern: pi as usize,
            caps,
            base,
            class,
            fallback,
            status,
            carrier: None,
            score,
            facts_counted: false,
        };
        Some(c)
    };
    // A fallback of level 2 or more (a bare Python exception, a line that
    // says `error`) is dropped by `stand_back` once a specific pattern
    // confirmed, unless it is of that pattern's class (and may outscore
    // it): its regex runs only then. What confirmed is merged in the
    // candidates' order, as if each had run in turn.
    let deferred = |pi: u32| {
        let p = &patterns[pi as usize];
        p.fallback >= 2 && p.table.is_none()
    };
    let candidates = candidates
        .iter()
        .copied()
        .filter(|&i| (i as usize) < patterns.len());
    let mut found: Vec<(usize, Confirmed<'t, 'c>)> = candidates
        .clone()
        .enumerate()
        .filter(|&(_, pi)| !deferred(pi))
        .filter_map(|(k, pi)| Some((k, one(pi)?)))
        .collect();
    let specific = found.iter().any(|(_, c)| c.fallback == 0);
    let needed = |pi: u32| {
        let class = patterns[pi as usize].class.as_str();
        !specific || found.iter().any(|(_, c)| c.class == class)
    };
    let more: Vec<(usize, Confirmed<'t, 'c>)> = candidates
        .enumerate()
        .filter(|&(_, pi)| deferred(pi) && needed(pi))
        .filter_map(|(k, pi)| Some((k, one(pi)?)))
        .collect();
    if !more.is_empty() {
        found.extend(more);
        found.sort_by_key(|&(k, _)| k);
    }
    let mut best: Vec<Confirmed<'t, 'c>> = Vec::new();
    for (_, mut c) in found {
        match best.iter_mut().find(|b| b.class == c.class) {
            Some(b) => {
                c.count_facts(patterns, text);
                b.count_facts(patterns, text);
                if c.score > b.score {
                    *b = c;
                }
            }
            None => best.push(c),
        }
    }
    stand_back(catalog, &mut best);
    carry(catalog, &mut best);
    best
}

/// What one confirmed pattern reports on an event's text, owned: all of a
/// match that depends on the text alone (its place, time and rank come from
/// the event's lines, and whether a warning was fatal from what follows).
#[derive(Clone)]
pub(crate) struct Outcome {
    /// The pattern's index in the catalog.
    pub pattern: usize,
    /// The class reported.
    pub class: Box<str>,
    /// What a status table resolved.
    pub status: Option<Status>,
    /// The symptom carrying this status: its class and severity.
    pub carrier: Option<(Box<str>, Severity)>,
    /// The severity, unless `fatal_if_last` applies.
    pub severity: Severity,
    /// A warning's text raised as the uncaught exception: an error when
    /// nothing but the end of the process follows the event.
    pub fatal_if_last: bool,
    /// Where the finding's place is in the text.
    pub at: usize,
    /// The signature captures, joined.
    pub signature: String,
    /// Where the regexes captured.
    pub groups: crate::sink::Groups,
}

/// A [`Resolved`] status, owned.
#[derive(Clone)]
pub(crate) struct Status {
    class: Box<str>,
    name: Option<Box<str>>,
    code: Option<i64>,
}

impl Status {
    pub(crate) fn of(r: Resolved<'_>) -> Status {
        Status {
            class: r.class.into(),
            name: r.name.map(Into::into),
            code: r.code,
        }
    }

    pub(crate) fn resolved(&self) -> Resolved<'_> {
        Resolved {
            class: &self.class,
            name: self.name.as_deref(),
            code: self.code,
        }
    }
}

/// What event texts seen before reported, so that a burst of identical
/// warnings (thousands of "Plan failed with a cudnnException" with only
/// their timestamps differing) runs no regex after the first: the same text
/// confirms the same way ([`confirm`] reads nothing else).
///
/// Keyed by the event's text (prefixes removed) and where its final
/// exception starts; only short texts are kept, and the memory starts over
/// when full, so it stays under about a megabyte.
#[derive(Default)]
pub(crate) struct Memo {
    seen: std::collections::HashMap<u64, Seen>,
    /// The outcomes of a text too long to keep, while it is reported.
    unkept: Vec<Outcome>,
    /// The key of the text last asked for; `None` when it was not kept.
    last: Option<u64>,
}

struct Seen {
    text: Box<str>,
    exception_at: Option<usize>,
    outcomes: Vec<Outcome>,
}

/// The longest event text remembered.
const MEMO_TEXT_MAX: usize = 2048;
/// How many texts are remembered before the memory starts over.
const MEMO_ENTRIES: usize = 512;

impl Memo {
    fn key(text: &str, exception_at: Option<usize>) -> Option<u64> {
        use std::hash::{Hash, Hasher};
        (text.len() <= MEMO_TEXT_MAX).then(|| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut h);
            exception_at.hash(&mut h);
            h.finish()
        })
    }

    /// What `text` reported when it was last confirmed, or what
    /// `confirm` says it reports, remembered (the text is hashed once).
    pub(crate) fn get_or_confirm(
        &mut self,
        text: &str,
        exception_at: Option<usize>,
        confirm: impl FnOnce() -> Vec<Outcome>,
    ) -> &[Outcome] {
        let key = Memo::key(text, exception_at);
        self.last = key;
        let Some(key) = key else {
            self.unkept = confirm();
            return &self.unkept;
        };
        let same = |s: &Seen| *s.text == *text && s.exception_at == exception_at;
        if self.seen.get(&key).is_some_and(same) {
            return &self.seen[&key].outcomes;
        }
        let outcomes = confirm();
        if self.seen.len() >= MEMO_ENTRIES {
            self.seen.clear();
        }
        let seen = Seen {
            text: text.into(),
            exception_at,
            outcomes,
        };
        &self.seen.entry(key).insert_entry(seen).into_mut().outcomes
    }

    /// What the text last asked for reports.
    pub(crate) fn last(&self) -> &[Outcome] {
        match self.last.and_then(|k| self.seen.get(&k)) {
            Some(s) => &s.outcomes,
            None => &self.unkept,
        }
    }
}

/// The class a table pattern's captured status names: the class, what was
/// resolved, and whether the class is the table's generic one.
fn resolve<'c>(
    catalog: &'c Catalog,
    p: &Pattern,
    table: &str,
    caps: &regex::Captures<'_>,
    scope: &str,
) -> Option<(&'c str, Resolved<'c>, bool)> {
    let table = catalog.status_table(table)?;
    // The status may be captured by the core or by a fact regex.
    let find = |name: &str| {
        caps.name(name)
            .or_else(|| {
                p.facts
                    .iter()
                    .find_map(|f| f.regex().captures(scope)?.name(name))
            })
            .map(|m| m.as_str().to_string())
    };
    let name = find("status");
    let code = find("code").and_then(|c| c.trim().parse::<i64>().ok());
    let text = find("status_text");
    let r = table.resolve(name.as_deref(), code, text.as_deref())?;
    Some((r.class, r, table.is_generic(r.class)))
}

/// The member of a `decodes` table that the core regex's `code` numbers,
/// when the table names it. The core captures the code (loading checks
/// it), so no fact regex runs: those run only when a sink asks for facts.
/// A name the log spelled is a fact of its own, which the decoded name
/// only stands in for where the log did not spell one.
fn decode<'c>(
    catalog: &'c Catalog,
    table: &str,
    caps: &regex::Captures<'_>,
) -> Option<Resolved<'c>> {
    let code = caps.name("code")?.as_str().trim().parse::<i64>().ok();
    let r = catalog.status_table(table)?.resolve(None, code, None)?;
    r.name.is_some().then_some(r)
}

fn is_status(catalog: &Catalog, class: &str) -> bool {
    catalog
        .class(class)
        .is_some_and(|c| c.kind == ClassKind::Status)
}

/// Fallbacks stand back for lower levels; a generic status stands back only
/// for a specific status, or a specific pattern that read the same status.
fn stand_back(catalog: &Catalog, best: &mut Vec<Confirmed<'_, '_>>) {
    let Some(level) = best.iter().map(|b| b.fallback).min() else {
        return;
    };
    let specific_status = best
        .iter()
        .any(|b| b.fallback == 0 && is_status(catalog, b.class));
    let status_of = |b: &Confirmed<'_, '_>| {
        b.caps
            .name("status")
            .map(|m| m.as_str().to_string())
            .or_else(|| b.status.and_then(|s| s.name).map(str::to_string))
    };
    let named: Vec<String> = best
        .iter()
        .filter(|b| b.fallback == 0)
        .filter_map(status_of)
        .collect();
    best.retain(|b| {
        let fresh = status_of(b).is_none_or(|s| !named.contains(&s));
        b.fallback == level
            || (b.fallback == 1
                && level == 0
                && !specific_status
                && is_status(catalog, b.class)
                && fresh)
    });
}

/// Links each status to the event's (first) symptom, with its severity, or
/// drops it when the symptom implies it.
fn carry<'c>(catalog: &'c Catalog, best: &mut Vec<Confirmed<'_, 'c>>) {
    if best.len() < 2 {
        return;
    }
    let patterns = catalog.patterns();
    let Some((symptom, severity)) = best
        .iter()
        .find(|b| {
            catalog
                .class(b.class)
                .is_some_and(|c| c.kind == ClassKind::Symptom)
        })
        .map(|b| (b.class, patterns[b.pattern].severity))
    else {
        return;
    };
    let implies = catalog.class(symptom).map_or(&[][..], |c| &c.implies[..]);
    best.retain(|b| !(is_status(catalog, b.class) && implies.iter().any(|i| i == b.class)));
    for b in best.iter_mut() {
        if is_status(catalog, b.class) {
            b.carrier = Some((symptom, severity));
        }
    }
}
