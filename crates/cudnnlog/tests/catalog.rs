//! The built-in catalog: every example and counterexample runs here, and the
//! design card's classes must be covered.

use cudnnlog::Catalog;

/// The class ids the project promised (docs/classes.md): a public contract.
const CLASSES: [&str; 48] = [
    "cudnn.plan_failed",
    "cudnn.execution_failed",
    "cudnn.conv_algo_failed",
    "cudnn.not_initialized",
    "cudnn.internal_error",
    "cudnn.not_supported",
    "cudnn.bad_param",
    "cudnn.alloc_failed",
    "cudnn.arch_mismatch",
    "cudnn.version_mismatch",
    "cudnn.library_missing",
    "cuda.oom",
    "cuda.illegal_address",
    "cuda.device_assert",
    "cuda.no_kernel_image",
    "cuda.driver_too_old",
    "cuda.no_device",
    "cuda.launch_failure",
    "cuda.ecc_xid",
    "cublas.error",
    "nccl.error",
    "nccl.timeout",
    "torch.nondeterministic",
    "torch.device_mismatch",
    "host.oom",
    "host.oom_killed",
    "proc.segfault",
    "train.nan_loss",
    "python.missing_module",
    "python.file_not_found",
    "python.permission",
    "python.zero_division",
    "python.assertion",
    "python.runtime_error",
    "python.exception",
    "cuda.library_missing",
    "cuda.invalid_value",
    "cuda.unknown_error",
    "cuda.peer_access",
    "cuda.extension_mismatch",
    "cuda.error",
    "cudnn.error",
    "container.gpu_unavailable",
    "dist.rendezvous",
    "dist.timeout",
    "sched.time_limit",
    "sched.cancelled",
    "sched.node_fail",
];

#[test]
fn every_example_and_counterexample_behaves() {
    let catalog = Catalog::builtin().unwrap();
    let failures = cudnnlog::catalog::check_catalog(&catalog);
    let listed: Vec<String> = failures.iter().map(|f| f.to_string()).collect();
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        listed.join("\n")
    );
}

/// Every class of the design brief has at least one pattern, two examples
/// and a counterexample across its patterns, and each pattern says why it
/// happens and what to do (causes to suspect, or its own remediations):
/// what `cudnnlog explain` prints.
#[test]
fn every_class_is_covered_in_depth() {
    let catalog = Catalog::builtin().unwrap();
    let mut gaps = Vec::new();
    // Every class the catalog declares, the promised ones first: a class
    // added since is held to the same standard without a line here.
    let declared = catalog.classes().iter().map(|c| c.id.as_str());
    let mut all: Vec<&str> = CLASSES.to_vec();
    all.extend(declared.filter(|id| !CLASSES.contains(id)));
    for class in all {
        let Some(c) = catalog.class(class) else {
            gaps.push(format!("{class}: not declared in classes.toml"));
            continue;
        };
        if c.title.trim().is_empty() || c.summary.trim().is_empty() {
            gaps.push(format!("{class}: no title or summary"));
        }
        // What `cargo xtask new-class` writes for a person to replace.
        let scaffold = |s: &str| s.contains("TODO(new-class)");
        if scaffold(&c.title) || scaffold(&c.summary) {
            gaps.push(format!("{class}: title or summary left as scaffolded"));
        }
        let patterns: Vec<_> = catalog
            .patterns()
            .iter()
            .filter(|p| p.class == class)
            .collect();
        if patterns.is_empty() {
            gaps.push(format!("{class}: no pattern"));
            continue;
        }
        let examples: usize = patterns.iter().map(|p| p.examples.len()).sum();
        let counter: usize = patterns.iter().map(|p| p.counterexamples.len()).sum();
        if examples < 2 {
            gaps.push(format!("{class}: {examples} example(s)"));
        }
        if counter < 1 {
            gaps.push(format!("{class}: no counterexample"));
        }
        for p in patterns {
            // Job failures outside the GPU stack (a missing file, a
            // keyboard interrupt) may rely on their own remediations.
            if p.causes.is_empty() && p.remediations.is_empty() {
                gaps.push(format!("{}: names no cause and no remediation", p.id));
            }
            if p.doc.what.trim().is_empty() || p.doc.why.trim().is_empty() {
                gaps.push(format!("{}: empty doc", p.id));
            }
            let texts = [&p.summary, &p.doc.what, &p.doc.why];
            if texts.iter().any(|t| scaffold(t))
                || p.examples.iter().any(|e| scaffold(&e.log))
                || p.counterexamples.iter().any(|e| scaffold(&e.log))
            {
                gaps.push(format!("{}: left as scaffolded", p.id));
            }
        }
    }
    assert!(gaps.is_empty(), "catalog gaps:\n{}", gaps.join("\n"));
}

#[test]
fn plan_failed_is_a_warning_never_an_error() {
    let catalog = Catalog::builtin().unwrap();
    for p in catalog
        .patterns()
        .iter()
        .filter(|p| p.class == "cudnn.plan_failed")
    {
        assert_eq!(p.severity, cudnnlog::catalog::Severity::Warning, "{}", p.id);
    }
}

#[test]
fn every_class_and_cause_of_the_design_brief_is_declared() {
    let catalog = Catalog::builtin().unwrap();
    for c in CLASSES {
        assert!(catalog.class(c).is_some(), "class {c} missing");
    }
    let causes = [
        "memory_pressure",
        "fragmentation",
        "foreign_process",
        "tf_prealloc",
        "version_mismatch",
        "library_conflict",
        "library_missing",
        "driver_too_old",
        "arch_unsupported",
        "unsupported_config",
        "half_precision",
        "benchmark_autotune",
        "deterministic_mode",
        "stale_cache",
        "input_shape",
        "hardware_fault",
        "code_bug",
        "framework_bug",
        "int32_overflow",
        "comm_failure",
    ];
    for c in causes {
        let cause = catalog
            .cause(c)
            .unwrap_or_else(|| panic!("cause {c} missing"));
        assert!(!cause.remediations.is_empty());
    }
}

/// The status tables know every enum of the CUDA stack, and a status in any
/// spelling — name, number, error string, a number from before a
/// renumbering — names the class; an unknown member is the generic class.
#[test]
fn status_tables_name_the_class_of_any_spelling() {
    let catalog = Catalog::builtin().unwrap();
    for e in [
        "cudaError_t",
        "CUresult",
        "cudnnStatus_t",
        "ncclResult_t",
        "cublasStatus_t",
        "cusolverStatus_t",
        "cufftResult",
    ] {
        let t = catalog
            .status_table(e)
            .unwrap_or_else(|| panic!("no table {e}"));
        assert!(t.members.len() >= 8, "{e}: {} members", t.members.len());
    }
    let class = |table: &str, name: Option<&str>, code: Option<i64>, text: Option<&str>| {
        catalog
            .status_table(table)
            .unwrap()
            .resolve(name, code, text)
            .map(|r| r.class.to_string())
    };
    let some = |c: &str| Some(c.to_string());
    assert_eq!(class("cudaError_t", None, Some(2), None), some("cuda.oom"));
    assert_eq!(
        class("cudaError_t", None, Some(700), None),
        some("cuda.illegal_address")
    );
    // CUDA 10.0's 4 was a launch failure; its text says so whatever the number.
    assert_eq!(
        class(
            "cudaError_t",
            None,
            Some(4),
            Some("unspecified launch failure")
        ),
        some("cuda.launch_failure")
    );
    assert_eq!(
        class("CUresult", Some("CUDA_ERROR_OUT_OF_MEMORY"), None, None),
        some("cuda.oom")
    );
    assert_eq!(
        class("CUresult", Some("CUDA_ERROR_NOT_READY"), None, None),
        None
    );
    // cuDNN 9's numbers and cuDNN 8's.
    assert_eq!(
        class("cudnnStatus_t", None, Some(5003), None),
        some("cudnn.execution_failed")
    );
    assert_eq!(
        class("cudnnStatus_t", None, Some(8), None),
        some("cudnn.execution_failed")
    );
    assert_eq!(
        class("cudnnStatus_t", Some("CUDNN_STATUS_SUCCESS"), None, None),
        None
    );
    // A member no table lists: the family's generic class.
    assert_eq!(
        class(
            "cudnnStatus_t",
            Some("CUDNN_STATUS_FROM_THE_FUTURE"),
            None,
            None
        ),
        some("cudnn.error")
    );
    assert_eq!(
        class("ncclResult_t", Some("ncclRemoteError"), None, None),
        some("nccl.error")
    );
}

/// The generated id constants name exactly the built-in catalog's classes
/// and causes: code that names an id through them cannot name a missing one.
#[test]
fn id_constants_match_the_catalog() {
    let catalog = cudnnlog::Catalog::builtin().unwrap();
    let classes: Vec<&str> = catalog.classes().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(cudnnlog::ids::class::ALL, &classes[..]);
    let causes: Vec<&str> = catalog.causes().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(cudnnlog::ids::cause::ALL, &causes[..]);
}

/// A class a user adds takes part in fallout through its `follows`
/// attribute, as the built-in classes do: no id prefix in the code decides
/// it. After an illegal address the CUDA context is broken, so a later
/// kernel failure of a class that `follows = ["sticky"]` is its fallout,
/// and the same class without the attribute is a failure of its own.
#[test]
fn a_user_class_is_fallout_of_a_sticky_error_when_it_says_so() {
    use cudnnlog::report::FindingsSink;
    use cudnnlog::{CatalogBuilder, ScannerBuilder};
    let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n\
                myfw: kernel launch failed in fused_attention (code 7)\n";
    let run = |follows: &str| {
        let dir = std::env::temp_dir().join(format!(
            "cudnnlog-user-class-{}-{}",
            std::process::id(),
            follows.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("classes.toml"),
            format!(
                "[[class]]\nid = \"myfw.kernel_failed\"\nfamily = \"framework\"\n{follows}\n\
                 title = \"myfw kernel failed\"\nsummary = \"A myfw kernel did not run.\"\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("myfw-kernel-failed.toml"),
            "id = \"myfw-kernel-failed\"\nclass = \"myfw.kernel_failed\"\nseverity = \"error\"\n\
             status = \"stable\"\nsince = \"0.1.0\"\nsummary = \"s\"\nanchors = [\"kernel launch failed\"]\n\
             regex = 'myfw: kernel launch failed in (?P<op>\\w+)'\n\
             [doc]\nwhat = \"w\"\nwhy = \"y\"\n\
             [[causes]]\nid = \"code_bug\"\nprior = 0.5\n\
             [[examples]]\nlog = \"myfw: kernel launch failed in gemm (code 7)\"\n",
        )
        .unwrap();
        let catalog = CatalogBuilder::new().add_dir(&dir).build();
        std::fs::remove_dir_all(&dir).unwrap();
        let catalog = catalog.unwrap();
        let scanner = ScannerBuilder::new().build(catalog);
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner.scan_slice(log, &mut sink).unwrap();
        let report = sink.into_report();
        let mine = report
            .findings
            .iter()
            .find(|f| f.class == "myfw.kernel_failed")
            .expect("the user pattern matches");
        (report.primary.clone(), mine.fallout_of.clone())
    };
    let (primary, fallout_of) = run("follows = [\"sticky\"]");
    assert_eq!(primary.as_deref(), Some("cuda.illegal_address"));
    assert_eq!(fallout_of.as_deref(), Some("cuda.illegal_address"));
    let (_, alone) = run("");
    assert_eq!(alone, None, "without `follows` it is not fallout");
}
