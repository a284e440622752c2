//! The fleet summary: verdicts counted by outcome, primary class and
//! fingerprint.

use super::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How many example jobs a group names.
pub const EXAMPLES: usize = 5;

/// The most groups a summary keeps: with a group's message (up to 2,000
/// bytes) and its examples, a few MiB at most however many jobs failed
/// each their own way.
///
/// ```
/// assert_eq!(cudnnlog::fleet::MAX_GROUPS, 1000);
/// ```
pub const MAX_GROUPS: usize = 1000;

/// What many verdicts add up to. Add verdicts in any order; the summary
/// sorts its groups (most jobs first, then by the first job's path), so
/// the same verdicts give the same summary.
///
/// It keeps at most [`MAX_GROUPS`] groups, so its memory is bounded
/// whatever the number of jobs. Past that many fingerprints, a new one
/// takes the place of the group with the fewest jobs (counting the jobs of
/// the groups that place held before, as the Space-Saving algorithm of
/// Metwally et al. does), whose jobs are then counted in
/// [`ungrouped`](Summary::ungrouped): a fingerprint of more than one job in
/// [`MAX_GROUPS`] is always among the groups, its count short by at most
/// that many jobs (those before it last took a place), and which small
/// groups are kept depends on the order the verdicts came in.
///
/// ```
/// use cudnnlog::fleet::{Summary, Verdict};
/// let mut summary = Summary::default();
/// summary.add(&Verdict::unreadable("a.log", vec!["a.log".into()], "a.log: denied".into()));
/// assert_eq!((summary.jobs, summary.unreadable), (1, 1));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Jobs seen.
    pub jobs: u64,
    /// Jobs that failed.
    pub failed: u64,
    /// Jobs that went on with warnings.
    pub degraded: u64,
    /// Jobs with no finding.
    pub clean: u64,
    /// Jobs none of whose files could be read.
    pub unreadable: u64,
    /// Jobs by primary class.
    pub by_primary: BTreeMap<String, u64>,
    /// Jobs by action (failed and degraded ones): `retry`, `stop`,
    /// `investigate`; the actions no job had are absent.
    #[serde(default)]
    pub by_action: BTreeMap<crate::report::Action, u64>,
    /// Jobs by fingerprint: the count of each group.
    pub by_fingerprint: BTreeMap<String, u64>,
    /// One group per fingerprint, the largest first; at most
    /// [`MAX_GROUPS`].
    pub groups: Vec<Group>,
    /// Jobs whose fingerprint has no group, its place taken by a larger
    /// one (only past [`MAX_GROUPS`] fingerprints); absent from JSON when
    /// none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ungrouped: u64,
    /// Files the walk of a directory left out, by reason: `binary`,
    /// `not_a_log` (by name), `loop`, `unreadable`, `broken_link` (the keys
    /// of [`Walked::counts`](crate::source::Walked::counts), which the
    /// caller that walked sets here); absent from JSON when none was.
    /// Hidden and ignored files, and those `--glob` leaves out, are not
    /// counted: leaving them out is the user's choice.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub skipped: BTreeMap<String, u64>,
    #[serde(skip)]
    index: HashMap<String, usize>,
    /// Per group, its jobs and those of the groups whose place it took
    /// (what the place is ranked by when a new fingerprint needs one).
    #[serde(skip)]
    weights: Vec<u64>,
    /// (weight, group), the lightest first.
    #[serde(skip)]
    lightest: BTreeSet<(u64, usize)>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The jobs that share a fingerprint.
///
/// ```
/// use cudnnlog::{fleet::{Summary, Verdict}, report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
/// let mut summary = Summary::default();
/// for (job, gib) in [("job-1.log", 2), ("job-2.log", 4)] {
///     let mut sink = FindingsSink::new(scanner.catalog());
///     let log = format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {gib}.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
///     scanner.scan_slice(log.as_bytes(), &mut sink).unwrap();
///     summary.add(&Verdict::of(job, &sink.into_report()));
/// }
/// // The sizes differ, the failure is the same: one group.
/// let group = &summary.finish().groups[0];
/// assert_eq!((group.class.as_str(), group.title.as_str(), group.count), ("cuda.oom", "GPU out of memory", 2));
/// assert_eq!((group.fingerprint.len(), group.examples.as_slice()), (16, &["job-1.log".to_string(), "job-2.log".to_string()][..]));
/// assert!(group.message.contains("Tried to allocate 2.00 GiB"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The fingerprint.
    pub fingerprint: String,
    /// The primary class.
    pub class: String,
    /// Its title.
    pub title: String,
    /// The message of the first job of the group.
    pub message: String,
    /// How many jobs.
    pub count: u64,
    /// Up to [`EXAMPLES`] of them, by path.
    pub examples: Vec<String>,
}

impl Summary {
    /// Counts one verdict.
    ///
    /// ```
    /// use cudnnlog::{fleet::{Summary, Verdict}, report::FindingsSink, Catalog, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// scanner.scan_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n", &mut sink).unwrap();
    /// let report = sink.into_report();
    /// let mut summary = Summary::default();
    /// summary.add(&Verdict::of("job-1.log", &report));
    /// summary.add(&Verdict::of("job-2.log", &report));
    /// assert_eq!((summary.failed, summary.by_primary["cuda.illegal_address"]), (2, 2));
    /// // A bug in the code or the framework far more often than a failing GPU.
    /// assert_eq!(summary.by_action[&cudnnlog::report::Action::Stop], 2);
    /// assert_eq!(summary.groups[0].examples, ["job-1.log", "job-2.log"]);
    /// ```
    pub fn add(&mut self, v: &Verdict) {
        use crate::report::Outcome;
        self.reindex();
        self.jobs += 1;
        match v.outcome {
            Some(Outcome::Failed) => self.failed += 1,
            Some(Outcome::Degraded) => self.degraded += 1,
            Some(Outcome::Clean) => self.clean += 1,
            None => self.unreadable += 1,
        }
        if let Some(p) = &v.primary {
            *self.by_primary.entry(p.clone()).or_default() += 1;
        }
        if let Some(a) = v.action {
            *self.by_action.entry(a).or_default() += 1;
        }
        let Some(fp) = &v.fingerprint else { return };
        let group = || Group {
            fingerprint: fp.clone(),
            class: v.primary.clone().unwrap_or_default(),
            title: v.title.clone().unwrap_or_default(),
            message: v.message.clone().unwrap_or_default(),
            count: 1,
            examples: vec![v.path.clone()],
        };
        let Some(&i) = self.index.get(fp) else {
            let weight = match self.groups.len() < MAX_GROUPS {
                true => {
                    self.index.insert(fp.clone(), self.groups.len());
                    self.groups.push(group());
                    self.weights.push(0);
                    0
                }
                false => self.make_room(group()),
            };
            let i = self.index[fp];
            self.weigh(i, weight + 1);
            self.by_fingerprint.insert(fp.clone(), 1);
            return;
        };
        let g = &mut self.groups[i];
        g.count += 1;
        // Keep the examples that sort first, so the order verdicts came in
        // does not matter.
        let at = g.examples.partition_point(|e| e < &v.path);
        if at < EXAMPLES {
            if g.examples[..at].last() != Some(&v.path) {
                g.examples.insert(at, v.path.clone());
            }
            g.examples.truncate(EXAMPLES);
            if at == 0 {
                g.message = v.message.clone().unwrap_or_default();
            }
        }
        *self.by_fingerprint.entry(fp.clone()).or_default() += 1;
        self.weigh(i, self.weights[i] + 1);
    }

    /// Gives the place of the lightest group to `group` (once every place
    /// is taken), its jobs counted as ungrouped: the weight of the place.
    fn make_room(&mut self, group: Group) -> u64 {
        let (weight, i) = self
            .lightest
            .pop_first()
            .expect("a full summary has groups");
        let fingerprint = group.fingerprint.clone();
        let old = std::mem::replace(&mut self.groups[i], group);
        self.ungrouped += old.count;
        self.by_fingerprint.remove(&old.fingerprint);
        self.index.remove(&old.fingerprint);
        self.index.insert(fingerprint, i);
        weight
    }

    /// Sets the weight of group `i`.
    fn weigh(&mut self, i: usize, weight: u64) {
        self.lightest.remove(&(self.weights[i], i));
        self.weights[i] = weight;
        self.lightest.insert((weight, i));
    }

    /// Takes in the verdicts `other` counted: summaries made apart (one per
    /// Spark partition, one per machine) add up to the summary of all their
    /// verdicts.
    ///
    /// ```
    /// use cudnnlog::fleet::{Summary, Verdict};
    /// let v = |p: &str| Verdict::unreadable(p, vec![p.into()], "denied".into());
    /// let (mut a, mut b, mut all) = (Summary::default(), Summary::default(), Summary::default());
    /// a.add(&v("a.log"));
    /// b.add(&v("b.log"));
    /// all.add(&v("a.log"));
    /// all.add(&v("b.log"));
    /// b.skipped.insert("binary".into(), 1);
    /// all.skipped.insert("binary".into(), 1);
    /// a.merge(b);
    /// assert_eq!(a.finish(), all.finish());
    /// ```
    pub fn merge(&mut self, mut other: Summary) {
        self.reindex();
        other.reindex();
        self.jobs += other.jobs;
        self.failed += other.failed;
        self.degraded += other.degraded;
        self.clean += other.clean;
        self.unreadable += other.unreadable;
        self.ungrouped += other.ungrouped;
        for (k, n) in other.by_primary {
            *self.by_primary.entry(k).or_default() += n;
        }
        for (k, n) in other.skipped {
            *self.skipped.entry(k).or_default() += n;
        }
        for (k, n) in other.by_action {
            *self.by_action.entry(k).or_default() += n;
        }
        for (g, weight) in other.groups.into_iter().zip(other.weights) {
            match self.index.get(&g.fingerprint) {
                Some(&i) => {
                    let mine = &mut self.groups[i];
                    mine.count += g.count;
                    if g.examples.first() < mine.examples.first() || mine.examples.is_empty() {
                        mine.message = g.message;
                    }
                    mine.examples.extend(g.examples);
                    mine.examples.sort();
                    mine.examples.dedup();
                    mine.examples.truncate(EXAMPLES);
                    self.weights[i] += weight;
                }
                None => {
                    self.index.insert(g.fingerprint.clone(), self.groups.len());
                    self.groups.push(g);
                    self.weights.push(weight);
                }
            }
        }
        // Past the limit, the heaviest groups stay (of equal ones, the
        // first).
        if self.groups.len() > MAX_GROUPS {
            let mut all: Vec<(u64, usize, Group)> = std::mem::take(&mut self.weights)
                .into_iter()
                .zip(0..)
                .zip(std::mem::take(&mut self.groups))
                .map(|((w, i), g)| (w, i, g))
                .collect();
            all.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            self.ungrouped += all[MAX_GROUPS..]
                .iter()
                .map(|(_, _, g)| g.count)
                .sum::<u64>();
            all.truncate(MAX_GROUPS);
            all.sort_by_key(|(_, i, _)| *i);
            (self.weights, self.groups) = all.into_iter().map(|(w, _, g)| (w, g)).unzip();
        }
        self.by_fingerprint = self
            .groups
            .iter()
            .map(|g| (g.fingerprint.clone(), g.count))
            .collect();
        self.index.clear();
        self.lightest.clear();
        self.reindex();
    }

    /// Rebuilds the fingerprint index and the weights of a summary read
    /// back from JSON (a group's weight is then its count).
    fn reindex(&mut self) {
        if self.index.len() != self.groups.len() {
            self.index = self
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| (g.fingerprint.clone(), i))
                .collect();
        }
        if self.weights.len() != self.groups.len() {
            self.weights = self.groups.iter().map(|g| g.count).collect();
        }
        if self.lightest.len() != self.groups.len() {
            self.lightest = self.weights.iter().copied().zip(0..).collect();
        }
    }

    /// The summary with its groups in their final order.
    ///
    /// ```
    /// use cudnnlog::{fleet::{Summary, Verdict}, report::FindingsSink, Catalog, ScannerBuilder};
    /// let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    /// let report = |log: &[u8]| {
    ///     let mut sink = FindingsSink::new(scanner.catalog());
    ///     scanner.scan_slice(log, &mut sink).unwrap();
    ///     sink.into_report()
    /// };
    /// let (oom, xid) = (report(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n"), report(b"RuntimeError: CUDA error: an illegal memory access was encountered\n"));
    /// let mut summary = Summary::default();
    /// for (path, r) in [("a.log", &xid), ("b.log", &oom), ("c.log", &oom)] {
    ///     summary.add(&Verdict::of(path, r));
    /// }
    /// let groups: Vec<_> = summary.finish().groups.into_iter().map(|g| (g.class, g.count)).collect();
    /// assert_eq!(groups, [("cuda.oom".to_string(), 2), ("cuda.illegal_address".to_string(), 1)]);
    /// ```
    pub fn finish(mut self) -> Summary {
        self.groups.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.examples.first().cmp(&b.examples.first()))
        });
        self.index.clear();
        self.weights.clear();
        self.lightest.clear();
        self
    }
}
