//! The culprit of a distributed failure, as the report carries it.

use serde::{Deserialize, Serialize};

/// A line of the log, as evidence.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let log = b"[rank1]:2026-12-01 12:16:27,455 INFO train: epoch 0 step 40 done\n\
/// [rank0]:[E1201 12:16:37.380117495 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 3 failed to pass monitoredBarrier in 10000 ms\n\
/// [rank0]: RuntimeError: [Rank 0]: Rank 3 failed to pass monitoredBarrier in 10000 ms\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let report = sink.into_report();
/// let line = &report.findings[0].culprit.as_ref().unwrap().evidence[0];
/// assert_eq!((line.line, line.rank, line.timestamp.as_deref()), (2, Some(0), None)); // rank 0's line; glog gives no year
/// assert!(line.text.starts_with("[rank0]:[E1201 12:16:37.380117495 ProcessGroupGloo.cpp:67]"));
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceLine {
    /// 1-based line number.
    pub line: u64,
    /// The line's text (prefixes kept, at most 300 bytes).
    pub text: String,
    /// The line's time, when its prefix has one with a year (ISO 8601, as
    /// [`Place::timestamp`](crate::report::Place::timestamp)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The rank the line is about: its rank tag, or the rank its text names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// The rank(s) at fault, as the report shows them.
///
/// ```
/// use cudnnlog::{report::{Basis, FindingsSink}, Catalog, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// // Rank 0 reports the failed barrier; the rank at fault is the one it names.
/// let log = b"[rank1]:2026-12-01 12:16:27,455 INFO train: epoch 0 step 40 done\n\
/// [rank0]:[E1201 12:16:37.380117495 ProcessGroupGloo.cpp:67] [Rank 0]: Rank 3 failed to pass monitoredBarrier in 10000 ms\n\
/// [rank0]: RuntimeError: [Rank 0]: Rank 3 failed to pass monitoredBarrier in 10000 ms\n";
/// scanner.scan_slice(log, &mut sink)?;
/// let report = sink.into_report();
/// let culprit = report.findings[0].culprit.as_ref().unwrap();
/// assert_eq!((culprit.ranks.as_slice(), culprit.basis), (&[3][..], Basis::Barrier));
/// assert_eq!(culprit.reason, "the barrier names rank 3 as late");
/// assert_eq!(culprit.evidence[0].line, 2);
/// # Ok::<(), cudnnlog::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Culprit {
    /// The ranks at fault, ascending.
    pub ranks: Vec<u32>,
    /// Their hosts, where the log names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Why these ranks, in a sentence.
    pub reason: String,
    /// The lines that show it.
    pub evidence: Vec<EvidenceLine>,
    /// Which kind of evidence named the culprit (JSON `basis`: `barrier`,
    /// `mismatch`, `wavefront`, `first_failure`, `silent`, `behind`,
    /// `root_cause`, `launcher`).
    #[serde(default)]
    pub basis: Basis,
}

/// Which kind of evidence named a [`Culprit`], strongest first.
///
/// ```
/// use cudnnlog::report::Basis;
/// assert!(Basis::Wavefront.is_laggard());
/// assert!(!Basis::FirstFailure.is_laggard());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// A barrier named the ranks as late.
    Barrier,
    /// The collective they said they were running differs from the one most
    /// ranks ran (`TORCH_DISTRIBUTED_DEBUG=DETAIL`'s mismatch check).
    Mismatch,
    /// Their last enqueued collective is behind the one the others waited in.
    Wavefront,
    /// Their own earlier failure; the others waited for them.
    FirstFailure,
    /// They reported nothing while the others timed out.
    Silent,
    /// Their last training step is behind the others'.
    Behind,
    /// torchrun's "Root Cause (first observed failure)".
    #[default]
    RootCause,
    /// A launcher's or serving stack's report that the rank died (torchrun's
    /// summary or agent line, mpirun's "exited on signal", srun's task
    /// line), with no failure of its own before it.
    Launcher,
}

impl Basis {
    /// True when the evidence shows ranks out of step: the culprit had not
    /// reached the collective its peers waited in, rather than failing.
    ///
    /// ```
    /// assert!(cudnnlog::report::Basis::Behind.is_laggard());
    /// ```
    pub fn is_laggard(self) -> bool {
        matches!(
            self,
            Basis::Barrier | Basis::Wavefront | Basis::Silent | Basis::Behind
        )
    }
}
