//! The fleet summary: verdicts counted by outcome, primary class and
//! fingerprint.

use super::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// How many example jobs a group names.
pub const EXAMPLES: usize = 5;

/// What many verdicts add up to. Add verdicts in any order; the summary
/// sorts its groups (most jobs first, then by the first job's path), so
/// the same verdicts give the same summary.
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
    /// Jobs by fingerprint.
    pub by_fingerprint: BTreeMap<String, u64>,
    /// One group per fingerprint, the largest first.
    pub groups: Vec<Group>,
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
        let Some(fp) = &v.fingerprint else { return };
        *self.by_fingerprint.entry(fp.clone()).or_default() += 1;
        match self.index.get(fp) {
            Some(&i) => {
                let g = &mut self.groups[i];
                g.count += 1;
                // Keep the examples that sort first, so the order verdicts
                // came in does not matter.
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
            }
            None => {
                self.index.insert(fp.clone(), self.groups.len());
                self.groups.push(Group {
                    fingerprint: fp.clone(),
                    class: v.primary.clone().unwrap_or_default(),
                    title: v.title.clone().unwrap_or_default(),
                    message: v.message.clone().unwrap_or_default(),
                    count: 1,
                    examples: vec![v.path.clone()],
                });
            }
        }
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
    pub fn merge(&mut self, other: Summary) {
        self.reindex();
        self.jobs += other.jobs;
        self.failed += other.failed;
        self.degraded += other.degraded;
        self.clean += other.clean;
        self.unreadable += other.unreadable;
        for (k, n) in other.by_primary {
            *self.by_primary.entry(k).or_default() += n;
        }
        for (k, n) in other.by_fingerprint {
            *self.by_fingerprint.entry(k).or_default() += n;
        }
        for (k, n) in other.skipped {
            *self.skipped.entry(k).or_default() += n;
        }
        for g in other.groups {
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
                }
                None => {
                    self.index.insert(g.fingerprint.clone(), self.groups.len());
                    self.groups.push(g);
                }
            }
        }
    }

    /// Rebuilds the fingerprint index of a summary read back from JSON.
    fn reindex(&mut self) {
        if self.index.len() != self.groups.len() {
            self.index = self
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| (g.fingerprint.clone(), i))
                .collect();
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
        self
    }
}
