//! What a built catalog answers: its patterns, classes, causes, probes,
//! status tables and knowledge, looked up by id.

use crate::catalog::Cause;
use crate::catalog::Class;
use crate::catalog::Pattern;
use crate::catalog::Probe;
use crate::Catalog;
use crate::CatalogBuilder;
use crate::Error;

impl Catalog {
    /// The catalog built into the library.
    ///
    /// # Errors
    ///
    /// [`Error::Catalog`] only if an embedded file fails validation; the
    /// crate's tests load the built-in catalog, so a released build returns
    /// `Ok`.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// assert!(catalog.patterns().iter().any(|p| p.class == "cuda.illegal_address"));
    /// assert!(catalog.cause("memory_pressure").is_some());
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn builtin() -> Result<Catalog, Error> {
        CatalogBuilder::new().build()
    }

    /// Where a warning of `class` stands among warnings for `primary`: its
    /// place in `classes.toml`'s `warning_order` (0 is the most
    /// important); classes not listed come after all listed ones.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// assert!(catalog.warning_rank("cuda.no_device") < catalog.warning_rank("cudnn.plan_failed"));
    /// ```
    pub fn warning_rank(&self, class: &str) -> usize {
        self.warning_order
            .iter()
            .position(|c| c == class)
            .unwrap_or(self.warning_order.len())
    }

    /// The status table of the enum `name` (`cudaError_t`, …).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let table = catalog.status_table("cudaError_t").unwrap();
    /// assert_eq!((table.library.as_str(), table.generic.as_str()), ("CUDA runtime", "cuda.error"));
    /// assert!(table.members.iter().any(|m| m.name == "cudaErrorMemoryAllocation" && m.code == 2));
    /// assert!(catalog.status_table("cudaError").is_none());
    /// ```
    pub fn status_table(&self, name: &str) -> Option<&crate::catalog::statuses::Enum> {
        self.statuses.iter().find(|e| e.name == name)
    }

    /// The diagnosis knowledge kept as data (`diagnosis.toml`): rules that
    /// scale a cause when a fact, the message or the environment matches.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let causes = catalog.knowledge().iter().flat_map(|r| &r.factors);
    /// assert!(causes.clone().all(|(id, _)| catalog.cause(id).is_some()));
    /// ```
    pub fn knowledge(&self) -> &[crate::catalog::knowledge::KnowledgeRule] {
        &self.knowledge
    }

    /// The frameworks remediations are filtered by (`diagnosis.toml`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// assert!(catalog.frameworks().iter().any(|f| f.id == "jax"));
    /// ```
    pub fn frameworks(&self) -> &[crate::catalog::knowledge::Framework] {
        &self.frameworks
    }

    /// The signal table (`diagnosis.toml`), which names the signal a
    /// process died of from a finding's facts.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let signals = catalog.signals();
    /// assert_eq!(signals.name("Segmentation fault (core dumped)").unwrap().name, "SIGSEGV");
    /// assert_eq!(signals.name("-6").unwrap().number, 6);
    /// ```
    pub fn signals(&self) -> &crate::catalog::knowledge::Signals {
        &self.signals
    }

    /// The lines that tell which rank of a distributed job is at fault
    /// (`culprit.toml`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let rules = catalog.evidence_rules();
    /// assert!(rules.iter().any(|r| r.id == "torchrun-first-observed-failure"));
    /// assert!(rules.iter().all(|r| !r.anchor.is_empty()));
    /// ```
    pub fn evidence_rules(&self) -> &[crate::catalog::culprit::EvidenceRule] {
        &self.evidence
    }

    /// Every status table.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let names: Vec<&str> = catalog.status_tables().iter().map(|t| t.name.as_str()).collect();
    /// assert!(names.contains(&"cudnnStatus_t") && names.contains(&"ncclResult_t"));
    /// ```
    pub fn status_tables(&self) -> &[crate::catalog::statuses::Enum] {
        &self.statuses
    }

    /// All patterns, in catalog order (by file path).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let patterns = catalog.patterns();
    /// assert!(patterns.windows(2).all(|w| w[0].file <= w[1].file));
    /// let oom = patterns.iter().find(|p| p.id == "cuda-oom-pytorch-allocator").unwrap();
    /// assert_eq!(oom.class, "cuda.oom");
    /// ```
    pub fn patterns(&self) -> &[Pattern] {
        &self.patterns
    }

    /// A copy of this catalog keeping only the patterns with these ids
    /// (classes and causes are kept whole).
    ///
    /// ```
    /// use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
    /// let catalog = Catalog::builtin().unwrap().only(&["cuda-oom-pytorch-allocator"]);
    /// assert_eq!(catalog.patterns().len(), 1);
    /// let scanner = ScannerBuilder::new().build(catalog);
    /// let mut sink = FindingsSink::new(scanner.catalog());
    /// let log = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
    /// scanner.scan_slice(log, &mut sink).unwrap();
    /// let report = sink.into_report();
    /// let classes: Vec<&str> = report.findings.iter().map(|f| f.class.as_str()).collect();
    /// assert_eq!(classes, ["cuda.oom"]);
    /// ```
    pub fn only(&self, ids: &[&str]) -> Catalog {
        Catalog {
            classes: self.classes.clone(),
            statuses: self.statuses.clone(),
            evidence: self.evidence.clone(),
            knowledge: self.knowledge.clone(),
            frameworks: self.frameworks.clone(),
            signals: self.signals.clone(),
            warning_order: self.warning_order.clone(),
            causes: self.causes.clone(),
            probes: Vec::new(),
            releases: Vec::new(),
            compat: self.compat.clone(),
            actions: self.actions.clone(),
            patterns: self
                .patterns
                .iter()
                .filter(|p| ids.contains(&p.id.as_str()))
                .cloned()
                .collect(),
        }
    }

    /// All environment probes.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let probe = catalog.probes().iter().find(|p| p.id == "collect-env-pytorch-version").unwrap();
    /// assert!(!probe.anchors.is_empty() && !probe.examples.is_empty());
    /// ```
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// The dated framework releases build fingerprints resolve against
    /// (`patterns/fingerprints.toml`), oldest first per framework.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// assert!(catalog.releases().iter().any(|r| r.framework == "pytorch" && r.version == "2.0.0"));
    /// ```
    pub fn releases(&self) -> &[crate::catalog::fingerprints::Release] {
        &self.releases
    }

    /// The version-compatibility tables (`patterns/compat.toml`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let compat = catalog.compat();
    /// assert_eq!(compat.arch_of_gpu("NVIDIA H100 80GB HBM3").unwrap().arch, "hopper");
    /// assert_eq!(compat.driver_for("12.4").unwrap().min_driver, "550.54.14");
    /// ```
    pub fn compat(&self) -> &crate::catalog::compat::Compat {
        &self.compat
    }

    /// What to do with a failed job, by class, cause and pattern
    /// (`actions.toml`).
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin()?;
    /// let xid = catalog.actions().class("cuda.ecc_xid").unwrap();
    /// assert_eq!(xid.action, cudnnlog::report::Action::Retry);
    /// # Ok::<(), cudnnlog::Error>(())
    /// ```
    pub fn actions(&self) -> &crate::catalog::actions::Actions {
        &self.actions
    }

    /// All classes.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let classes = catalog.classes();
    /// assert!(classes.iter().any(|c| c.id == "cuda.illegal_address" && c.sticky));
    /// assert!(catalog.patterns().iter().all(|p| classes.iter().any(|c| c.id == p.class)));
    /// ```
    pub fn classes(&self) -> &[Class] {
        &self.classes
    }

    /// All root causes.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let causes = catalog.causes();
    /// assert_eq!(causes[0].id, "memory_pressure");
    /// assert!(causes.iter().all(|c| !c.remediations.is_empty()));
    /// ```
    pub fn causes(&self) -> &[Cause] {
        &self.causes
    }

    /// The class with this id.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let oom = catalog.class("cuda.oom").unwrap();
    /// assert_eq!((oom.family.as_str(), oom.title.as_str()), ("cuda", "GPU out of memory"));
    /// assert!(catalog.class("cuda.out_of_memory").is_none());
    /// ```
    pub fn class(&self, id: &str) -> Option<&Class> {
        self.classes.iter().find(|c| c.id == id)
    }

    /// The root cause with this id.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let cause = catalog.cause("memory_pressure").unwrap();
    /// assert_eq!(cause.title, "The job needs more GPU memory than it can get");
    /// assert!(catalog.cause("no_such_cause").is_none());
    /// ```
    pub fn cause(&self, id: &str) -> Option<&Cause> {
        self.causes.iter().find(|c| c.id == id)
    }

    /// The documented order between two causes of equal weight:
    /// `causes.toml`'s (commonest first), unknown ids last, then by id.
    /// The diagnosis breaks ties with it.
    ///
    /// ```
    /// use std::cmp::Ordering;
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// assert_eq!(catalog.cause_order("memory_pressure", "code_bug"), Ordering::Less);
    /// assert_eq!(catalog.cause_order("no_such_cause", "code_bug"), Ordering::Greater);
    /// ```
    pub fn cause_order(&self, a: &str, b: &str) -> std::cmp::Ordering {
        let rank = |id: &str| {
            self.causes
                .iter()
                .position(|c| c.id == id)
                .unwrap_or(usize::MAX)
        };
        rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
    }

    /// The pattern with this id.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let oom = catalog.pattern("cuda-oom-pytorch-allocator").unwrap();
    /// assert_eq!(oom.class, "cuda.oom");
    /// assert_eq!(oom.file, "patterns/cuda/cuda-oom-pytorch-allocator.toml");
    /// assert!(catalog.pattern("cuda.oom").is_none());
    /// ```
    pub fn pattern(&self, id: &str) -> Option<&Pattern> {
        self.patterns.iter().find(|p| p.id == id)
    }
}
