//! Grouping matches into findings: [`FindingsSink`], and where each
//! finding is placed in time and training progress.

mod burst;
mod place;

use super::occurrences::Sample;
use crate::catalog::{Catalog, Severity};
use crate::diagnose::environment::Environment;
use crate::diagnose::{diagnose_owned, place, Draft, Findings};
use crate::report::{Report, Unclassified, SCHEMA};
use crate::sink::{Copies, EnvFact, Fork, Location, Match, Sink, Window};
use crate::source::SourceInfo;
use crate::unclassified::Templates;
use place::{fill_year, locate_all, settle, Placer};

use std::collections::{BTreeMap, HashMap};

/// Distinct signatures kept per class and severity; later ones are counted
/// in one finding whose signature is [`OTHER_SIGNATURES`], marked
/// `truncated` (a log of a million distinct op names is a million findings
/// otherwise, and as much memory).
pub const MAX_SIGNATURES: usize = 256;

/// The signature of the finding later distinct signatures are folded into.
pub const OTHER_SIGNATURES: &str = "…";

/// A [`Sink`] that groups matches into findings and builds a [`Report`].
///
/// ```
/// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n";
/// scanner.scan_slice(log, &mut sink).unwrap();
/// let report = sink.into_report();
/// assert_eq!(report.primary.as_deref(), Some("cuda.oom"));
/// assert_eq!(report.findings[0].first.line, 1);
/// ```
pub struct FindingsSink<'c> {
    catalog: &'c Catalog,
    accs: Vec<Draft>,
    /// The accumulators by [`key`] of (class, severity, signature): a log
    /// of thousands of distinct findings must not cost a search per match.
    index: HashMap<u64, Vec<usize>>,
    /// Distinct signatures per class and severity (by [`key`] with no
    /// signature).
    signatures: HashMap<u64, usize>,
    env: Environment,
    templates: Templates,
    /// The sources whose scans have ended, in order: matches are numbered
    /// as the next one's until its scan ends.
    sources: Vec<SourceInfo>,
}

/// The index key of a finding: a hash of its class, severity and
/// signature (collisions are told apart by comparing them).
fn key(class: &str, severity: Severity, signature: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (class, severity as u8, signature).hash(&mut h);
    h.finish()
}

impl<'c> FindingsSink<'c> {
    /// The accumulator of this class, severity and signature.
    fn find(&self, k: u64, class: &str, severity: Severity, signature: &str) -> Option<usize> {
        self.index.get(&k)?.iter().copied().find(|&i| {
            let a = &self.accs[i];
            a.class == class && a.severity == severity && a.signature == signature
        })
    }

    /// The accumulator a match of this class, severity and signature goes
    /// to, and its key; `fold` is true when the signature is new and its
    /// class has [`MAX_SIGNATURES`] already: it goes to
    /// [`OTHER_SIGNATURES`]' accumulator then (its key and index returned).
    fn slot(&self, class: &str, severity: Severity, signature: &str) -> (u64, Option<usize>, bool) {
        let k = key(class, severity, signature);
        let found = self.find(k, class, severity, signature);
        let full = || {
            self.signatures
                .get(&key(class, severity, ""))
                .is_some_and(|&n| n >= MAX_SIGNATURES)
        };
        if found.is_some() || signature.is_empty() || signature == OTHER_SIGNATURES || !full() {
            return (k, found, false);
        }
        let k = key(class, severity, OTHER_SIGNATURES);
        (k, self.find(k, class, severity, OTHER_SIGNATURES), true)
    }

    /// Adds a new accumulator under key `k`.
    fn push(&mut self, k: u64, acc: Draft) {
        if !acc.signature.is_empty() && acc.signature != OTHER_SIGNATURES {
            *self
                .signatures
                .entry(key(&acc.class, acc.severity, ""))
                .or_default() += 1;
        }
        self.index.entry(k).or_default().push(self.accs.len());
        self.accs.push(acc);
    }

    /// An empty aggregator for matches of `catalog`'s patterns.
    ///
    /// ```
    /// use cudnnlog::{Catalog, report::{FindingsSink, Outcome}};
    /// let catalog = Catalog::builtin().unwrap();
    /// let report = FindingsSink::new(&catalog).into_report();
    /// assert!(report.findings.is_empty());
    /// assert_eq!(report.outcome, Outcome::Clean);
    /// ```
    pub fn new(catalog: &'c Catalog) -> FindingsSink<'c> {
        FindingsSink {
            catalog,
            accs: Vec::new(),
            index: HashMap::new(),
            signatures: HashMap::new(),
            env: Environment::default(),
            templates: Templates::default(),
            sources: Vec::new(),
        }
    }

    /// Builds the report for the sources scanned into this sink.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::{FindingsSink, Outcome}};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"INFO step 10 loss 0.5\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// let report = sink.into_report();
    /// assert_eq!((report.outcome, report.sources[0].lines), (Outcome::Failed, 2));
    /// assert_eq!(report.findings[0].first.line, 2);
    /// ```
    pub fn into_report(mut self) -> Report {
        let catalog = self.catalog;
        let sources = std::mem::take(&mut self.sources);
        self.years_from_files(&sources);
        let (mut findings, templates) = self.split(sources.len());
        findings.roles = crate::diagnose::SourceRole::of(&sources);
        let (dx, env) = diagnose_owned(findings, catalog);
        let unclassified = templates
            .templates()
            .into_iter()
            .filter_map(|t| {
                Some(Unclassified {
                    template: t.text.clone(),
                    count: t.count,
                    first: place(t.first.as_ref()?, None),
                    last: place(t.last.as_ref()?, None),
                    example: t.example.clone(),
                })
            })
            .collect();
        Report {
            schema: SCHEMA.to_string(),
            sources,
            environment: env.to_json(),
            outcome: dx.outcome,
            primary: dx.primary,
            retryable_because: dx.action.as_ref().map(|(_, why)| why.clone()),
            action: dx.action.map(|(a, _)| a),
            findings: dx.findings,
            cross_run: dx.cross_run,
            unclassified,
        }
    }
}

impl FindingsSink<'_> {
    /// Times still without a year (no dated line near them) take it from
    /// their file's modification time, where it is known.
    fn years_from_files(&mut self, sources: &[SourceInfo]) {
        let modified = |s: usize| sources.get(s).and_then(|s| s.modified);
        let accs = self.accs.iter_mut().flat_map(|a| {
            [&mut a.first, &mut a.last]
                .into_iter()
                .chain(a.occurrences.locations_mut())
        });
        for loc in accs.chain(self.templates.places_mut()) {
            if let (Some(t), Some(m)) = (loc.timestamp, modified(loc.source)) {
                loc.timestamp = Some(t.with_year_before(m));
            }
        }
    }

    /// The findings this sink grouped, not yet diagnosed: the input of
    /// [`diagnose`](crate::diagnose::diagnose).
    #[cfg(test)]
    pub(crate) fn into_findings(self) -> Findings {
        let sources = self.sources.len();
        self.split(sources).0
    }

    /// The sources whose scans have ended in this sink, in order: the
    /// report's `sources`.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// scanner.scan_slice(b"INFO step 1\nINFO step 2\n", &mut sink)?;
    /// scanner.scan_reader("rank1.log", &b"INFO step 1\n"[..], &mut sink)?;
    /// let lines: Vec<_> = sink.sources().iter().map(|s| (s.path.as_str(), s.lines)).collect();
    /// assert_eq!(lines, [("<memory>", 2), ("rank1.log", 1)]);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn sources(&self) -> &[SourceInfo] {
        &self.sources
    }

    fn split(self, sources: usize) -> (Findings, Templates) {
        let catalog = self.catalog;
        let mut accs = self.accs;
        let mut env = self.env;
        env.sort();
        // In log order; on one line a symptom before the status it carries.
        let kind = |class: &str| catalog.class(class).map(|c| c.kind).unwrap_or_default();
        accs.sort_by_key(|a| {
            (
                a.first.source,
                a.first.byte,
                kind(&a.class),
                a.class.clone(),
            )
        });
        let drafts = accs;
        let findings = Findings {
            drafts,
            env,
            sources,
            roles: Vec::new(),
        };
        (findings, self.templates)
    }

    /// Takes the matches this sink holds that carry no rank tag as `rank`'s:
    /// the sink scanned one rank's own log file (`rank3.log`). Call it after
    /// the scan.
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
    /// sink.assume_rank(3);
    /// let report = sink.into_report();
    /// assert_eq!((report.findings[0].first.rank, report.findings[0].ranks.as_slice()), (Some(3), &[3][..]));
    /// ```
    pub fn assume_rank(&mut self, rank: u32) {
        for s in &mut self.sources {
            s.rank.get_or_insert(rank);
        }
        for a in &mut self.accs {
            if let Some(ev) = &mut a.ranks_evidence {
                ev.assume_rank(rank);
            }
            let mut untagged = a.ranks.is_empty();
            for loc in [&mut a.first, &mut a.last]
                .into_iter()
                .chain(a.per_source.values_mut().map(|v| &mut v.0))
            {
                if loc.rank.is_none() {
                    loc.rank = Some(rank);
                    untagged = true;
                }
            }
            if untagged {
                a.ranks.insert(rank);
            }
            for loc in a.occurrences.locations_mut() {
                loc.rank.get_or_insert(rank);
            }
        }
    }

    /// Numbers everything this sink holds `by` sources later: a fork's
    /// sources follow those of the sink it joins.
    fn shift_sources(&mut self, by: usize) {
        for a in &mut self.accs {
            a.first.source += by;
            a.last.source += by;
            for loc in a.occurrences.locations_mut() {
                loc.source += by;
            }
            a.per_source = std::mem::take(&mut a.per_source)
                .into_iter()
                .map(|(s, mut v)| {
                    v.0.source += by;
                    (s + by, v)
                })
                .collect();
        }
        self.env.shift_sources(by);
        self.templates.shift_sources(by);
    }
}

impl Fork for FindingsSink<'_> {
    fn fork(&self) -> Self {
        FindingsSink::new(self.catalog)
    }

    fn join(&mut self, mut other: Self) {
        if !self.sources.is_empty() {
            other.shift_sources(self.sources.len());
        }
        self.sources.append(&mut other.sources);
        for mut b in other.accs {
            let (k, found, fold) = self.slot(&b.class, b.severity, &b.signature);
            if fold {
                b.signature = OTHER_SIGNATURES.to_string();
                b.truncated = true;
            }
            match found {
                Some(i) => self.accs[i].absorb(b),
                None => self.push(k, b),
            }
        }
        self.env.join(other.env);
        self.templates.join(other.templates);
    }
}

impl Sink for FindingsSink<'_> {
    type Error = crate::Error;

    fn matched(&mut self, m: &Match<'_>) -> Result<bool, crate::Error> {
        // The scanner reads one source per call: this sink numbers them.
        let location = Location {
            source: self.sources.len(),
            ..m.location.clone()
        };
        let facts = || {
            m.facts()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        };
        let pos = (location.source, location.byte);
        // The rank or task a message names, for a pattern that captures
        // one (read until the finding has the first one: a burst of such
        // lines costs one read).
        let named = || {
            m.pattern
                .regex
                .regex()
                .capture_names()
                .flatten()
                .any(|n| n == "rank" || n == "task")
                .then(|| {
                    m.facts().into_iter().find_map(|(k, v)| match (k, v) {
                        ("rank" | "task", crate::facts::Fact::Int(n)) => u32::try_from(n).ok(),
                        ("rank" | "task", crate::facts::Fact::Text(t)) => t.trim().parse().ok(),
                        _ => None,
                    })
                })
                .flatten()
                .map(|r| (pos, r))
        };
        // Findings are few: a linear search with borrowed strings costs less
        // than building an owned key for every match of a burst.
        let (k, found, fold) = self.slot(m.class, m.severity, &m.signature);
        match found {
            None => {
                let acc = Draft {
                    signature: match fold {
                        true => OTHER_SIGNATURES.to_string(),
                        false => m.signature.clone(),
                    },
                    truncated: m.truncated || fold,
                    pattern: m.pattern_index,
                    class: m.class.to_string(),
                    severity: m.severity,
                    carrier: m.carried_by.map(str::to_string),
                    ranks_evidence: None,
                    named_rank: named(),
                    launcher: None,
                    count: 1,
                    first: location.clone(),
                    first_event: m.event_byte,
                    first_progress: None,
                    last: location.clone(),
                    last_event: m.event_byte,
                    last_progress: None,
                    ranks: location.rank.into_iter().collect(),
                    message: m.message.to_string(),
                    facts: facts(),
                    per_source: BTreeMap::from([(
                        location.source,
                        (location.clone(), m.event_byte, None),
                    )]),
                    occurrences: Sample::one(&location, m.event_byte),
                };
                self.push(k, acc);
            }
            Some(i) => {
                if self.accs[i].named_rank.is_none_or(|(at, _)| pos < at) {
                    if let Some(n) = named() {
                        self.accs[i].named_rank = Some(n);
                    }
                }
                let a = &mut self.accs[i];
                a.count += 1;
                a.occurrences.push(&location, m.event_byte);
                a.truncated |= m.truncated;
                a.per_source
                    .entry(location.source)
                    .or_insert_with(|| (location.clone(), m.event_byte, None));
                a.ranks.extend(location.rank);
                if pos < (a.first.source, a.first.byte) {
                    a.pattern = m.pattern_index;
                    a.first = location.clone();
                    a.first_event = m.event_byte;
                    a.first_progress = None;
                    a.message = m.message.to_string();
                    a.facts = facts();
                    a.carrier = m.carried_by.map(str::to_string);
                    a.ranks_evidence = None;
                    a.launcher = None;
                }
                if pos >= (a.last.source, a.last.byte) {
                    a.last = location.clone();
                    a.last_event = m.event_byte;
                    a.last_progress = None;
                }
            }
        }
        Ok(true)
    }

    fn matched_copies(
        &mut self,
        group: &[Match<'_>],
        copies: Copies,
    ) -> Result<bool, crate::Error> {
        self.copies(group, copies)
    }

    fn unclassified(&mut self, line: &str, at: &Location) -> Result<(), crate::Error> {
        let at = Location {
            source: self.sources.len(),
            ..at.clone()
        };
        self.templates.add(line, Some(&at));
        Ok(())
    }

    fn environment(&mut self, f: &EnvFact<'_>) -> Result<(), crate::Error> {
        let at = Location {
            source: self.sources.len(),
            ..f.location.clone()
        };
        self.env.record(f.field, &f.value, &at);
        Ok(())
    }

    fn source_end(&mut self, info: &SourceInfo) -> Result<(), crate::Error> {
        self.sources.push(info.clone());
        Ok(())
    }

    fn window_end(&mut self, w: &Window<'_>) -> Result<(), crate::Error> {
        if w.rejoined {
            // The sink this fork joins places what it kept, once.
            return Ok(());
        }
        let rules = self.catalog.evidence_rules();
        let mut year_misses = 0;
        let source = self.sources.len();
        let mut placer = Placer::new(w, source);
        // The occurrences are located on all threads first; their years
        // are filled below, in the order one pass fills them.
        let asks: Vec<(&Location, u64)> = (self.accs.iter_mut())
            .flat_map(|a| a.occurrences.unplaced_mut())
            .map(|k| (&k.loc, k.event))
            .collect();
        let mut located = locate_all(w, source, &asks).into_iter();
        for a in &mut self.accs {
            // A distributed failure: read what the log says of each rank.
            let distributed = self.catalog.class(&a.class).is_some_and(|c| c.distributed);
            if distributed
                && a.ranks_evidence.is_none()
                && a.first.source == source
                && w.contains(a.first_event)
            {
                let at = (a.first.byte - w.base) as usize;
                let reach = (w.lookback, w.lookahead);
                a.ranks_evidence = Some(crate::diagnose::culprit::collect(
                    rules,
                    w.hay,
                    at,
                    a.first.line,
                    reach,
                ));
            }
            // An error no rank tag places: the rank a launcher names after it.
            let untagged = a.severity == crate::catalog::Severity::Error
                && a.first.rank.is_none()
                && !distributed
                && a.launcher.is_none();
            if untagged && a.first.source == source && w.contains(a.first_event) {
                let at = (a.first.byte - w.base) as usize;
                a.launcher =
                    crate::diagnose::culprit::launcher_named(rules, w.hay, at, w.lookahead).map(
                        |(r, mut line)| {
                            line.line += a.first.line - 1;
                            (r, line)
                        },
                    );
            }
            for (loc, event, progress) in [
                (&mut a.first, a.first_event, &mut a.first_progress),
                (&mut a.last, a.last_event, &mut a.last_progress),
            ] {
                if progress.is_none() {
                    *progress = placer.place(loc, event, &mut year_misses);
                }
            }
            if let Some((loc, event, progress)) = a.per_source.get_mut(&source) {
                if progress.is_none() && w.contains(*event) {
                    *progress = Some(placer.progress(*event, loc.rank));
                }
            }
            // Occurrences are placed by the window they were found in.
            for k in a.occurrences.unplaced_mut() {
                k.progress = located
                    .next()
                    .flatten()
                    .map(|l| settle(l, &mut k.loc, w, &mut year_misses));
            }
            a.occurrences.placed();
        }
        // glog/absl and syslog times have no year: take it from a dated
        // line nearby while the bytes are here.
        for loc in self.templates.places_mut() {
            if loc.source == source && w.contains(loc.byte) {
                fill_year(&mut year_misses, w, loc);
            }
        }
        Ok(())
    }
}
