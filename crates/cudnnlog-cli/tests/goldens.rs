//! The reports of the fixtures: the golden JSON report of every fixture
//! log, and the real GPU captures of `fixtures/gpu/` classified as the
//! failure each scenario provoked.

mod common;

use common::{cudnnlog, json, root};
use std::path::{Path, PathBuf};

/// Each `fixtures/**/NAME.log` has `NAME.expected.json`, the report of
/// `cudnnlog scan --format json fixtures/…/NAME.log`. Regenerate with
/// `CUDNNLOG_BLESS=1 cargo bless` (`cargo test -p cudnnlog-cli --test
/// goldens golden_reports`).
#[test]
fn golden_reports() {
    let bless = std::env::var_os("CUDNNLOG_BLESS").is_some();
    let mut logs = Vec::new();
    collect_logs(&root().join("fixtures"), &mut logs);
    logs.sort();
    assert!(logs.len() >= 10, "fixtures missing: {logs:?}");
    let mut stale = Vec::new();
    // A log without dated lines takes its year from the file's mtime: fix
    // it, so that a clone made in another year gives the same reports.
    let fixed = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_083_200); // 2026-12-01
    for log in logs {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&log)
            .and_then(|f| f.set_modified(fixed))
            .unwrap();
        let rel = log
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let out = cudnnlog(&["scan", "--format", "json", &rel], None);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{rel}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let expected_path = log.with_extension("expected.json");
        if bless {
            std::fs::write(&expected_path, &out.stdout).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "{} is missing: run with CUDNNLOG_BLESS=1",
                expected_path.display()
            )
        });
        let actual = String::from_utf8_lossy(&out.stdout);
        if expected != actual {
            stale.push(format!("{rel}:\n{}", diff(&expected, &actual)));
        }
    }
    assert!(
        stale.is_empty(),
        "{} reports differ from their golden files (inspect, then run with \
         CUDNNLOG_BLESS=1):\n\n{}",
        stale.len(),
        stale.join("\n")
    );
}

fn collect_logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        // `logs/` holds one job's per-rank files: a job, scored as one
        // (`fixtures/culprits.toml`), not a report per file.
        if p.is_dir()
            && p.file_name()
                .is_some_and(|n| n != "scenarios" && n != "logs")
        {
            collect_logs(&p, out);
        } else if p.extension().is_some_and(|e| e == "log") {
            out.push(p);
        }
    }
}

#[test]
fn plan_failed_burst_across_ranks_is_one_warning_finding() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "fixtures/synthetic/ddp-plan-failed-burst.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "warnings alone exit 0");
    let r = json(&out);
    assert_eq!(r.primary.as_deref(), Some("cudnn.plan_failed"));
    assert_eq!(r.outcome, cudnnlog::report::Outcome::Degraded);
    assert_eq!(r.findings.len(), 1);
    let f = &r.findings[0];
    assert_eq!(
        (f.class.as_str(), f.count, f.ranks.clone()),
        ("cudnn.plan_failed", 6, vec![0, 1])
    );
    assert_eq!(f.severity, cudnnlog::catalog::Severity::Warning);
    assert_eq!(
        f.facts["status"],
        cudnnlog::report::Fact::Text("CUDNN_STATUS_NOT_SUPPORTED".into())
    );
}

#[test]
fn real_gpu_captures_of_each_framework_are_out_of_memory() {
    for (name, line) in [
        ("h200-g01_jax_oom", 26),
        ("h200-g02_cupy_oom", 18),
        ("h200-g03_torch_conv_benchmark_oom", 19),
        ("h200-g05_cuda_oom", 1),
    ] {
        let out = cudnnlog(
            &[
                "scan",
                "--format",
                "json",
                &format!("fixtures/gpu/{name}.log"),
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let r = json(&out);
        assert_eq!(r.primary.as_deref(), Some("cuda.oom"), "{name}");
        assert_eq!(r.findings[0].first.line, line, "{name}");
    }
}

/// Each real capture of `fixtures/gpu/` (see its README) is reported as the
/// failure the scenario provoked, on the line where it shows, with the
/// classes that legitimately come with it and no others of severity error.
#[test]
fn real_gpu_captures_are_classified() {
    // (log, primary class, its line, other error classes expected)
    let cases: &[(&str, &str, u64, &[&str])] = &[
        (
            "h200-g06_torch_illegal_address",
            "cuda.illegal_address",
            8,
            &[],
        ),
        ("h200-g07_torch_matmul_gpu_full", "cuda.oom", 6, &[]),
        (
            "h200-g08_torch_deterministic",
            "torch.nondeterministic",
            17,
            &[],
        ),
        (
            "h200-g09_torch_device_mismatch",
            "torch.device_mismatch",
            24,
            &[],
        ),
        ("h200-g10_torch_invalid_ordinal", "cuda.no_device", 6, &[]),
        ("h200-g10_torch_no_visible_gpu", "cuda.no_device", 8, &[]),
        ("h200-g11_jax_no_visible_gpu", "cuda.no_device", 24, &[]),
        ("h200-g12_torch_nan_loss", "train.nan_loss", 4, &[]),
        ("h200-g13_torch_anomaly_nan", "train.nan_loss", 17, &[]),
        ("h200-g14_host_oom_numpy", "host.oom", 9, &[]),
        ("h200-g14_host_oom_python", "host.oom", 6, &[]),
        ("h200-g15_segfault", "proc.segfault", 2, &[]),
        (
            "h200-g16_torchrun_child_sigkill",
            "host.oom_killed",
            12,
            &[],
        ),
        ("h200-g16_torchrun_child_sigsegv", "proc.segfault", 12, &[]),
        ("h200-g17_torchrun_oom_cascade", "cuda.oom", 15, &[]),
        (
            "h200-g18_cuda_illegal_address",
            "cuda.illegal_address",
            1,
            &[],
        ),
        ("h200-g19_cuda_launch_trap", "cuda.launch_failure", 1, &[]),
        ("h200-g20_cublas_invalid", "cublas.error", 1, &[]),
        ("h200-g21_cudnn_status", "cudnn.bad_param", 7, &[]),
        (
            "h200-g22_torch_cudnn_preload",
            "cudnn.version_mismatch",
            11,
            &[],
        ),
        (
            "h200-g23_torch_cudnn_hidden",
            "cudnn.version_mismatch",
            11,
            &[],
        ),
        ("h200-g24_torch_no_cudnn", "cudnn.library_missing", 7, &[]),
        ("h200-g26_cudnn_fft_stride", "cudnn.not_supported", 1, &[]),
        (
            "h200-g26_cudnn_no_visible_gpu",
            "cudnn.not_initialized",
            1,
            &[],
        ),
        ("h200-p01_missing_module", "python.missing_module", 5, &[]),
        ("h200-p02_file_not_found", "python.file_not_found", 15, &[]),
        ("h200-p03_permission", "python.permission", 4, &[]),
        ("h200-p04_zero_division", "python.zero_division", 6, &[]),
        ("h200-p05_assertion", "python.assertion", 6, &[]),
        ("h200-p06_runtime_error", "python.runtime_error", 23, &[]),
        ("h200-p07_exception", "python.exception", 6, &[]),
        // the worker's own exception, under `Original Traceback`
        (
            "h200-p08_dataloader_worker",
            "python.file_not_found",
            25,
            &[],
        ),
        // catalog v2: a CUDA runtime the loader cannot find, a rendezvous
        // port already held, a JAX coordination service left waiting
        (
            "h200-d01_cuda_runtime_missing",
            "cuda.library_missing",
            1,
            &[],
        ),
        ("h200-d02_torchrun_port_in_use", "dist.rendezvous", 44, &[]),
        ("h200-d03_jax_coordination_timeout", "dist.timeout", 1, &[]),
        (
            "h200-g25_torch_no_cudnn_graph",
            "cudnn.library_missing",
            2,
            &["proc.segfault"],
        ),
    ];
    let mut wrong = Vec::new();
    for (name, class, line, others) in cases {
        let out = cudnnlog(
            &[
                "scan",
                "--format",
                "json",
                &format!("fixtures/gpu/{name}.log"),
            ],
            None,
        );
        let r = json(&out);
        let errors: Vec<(&str, u64)> = r
            .findings
            .iter()
            .filter(|f| f.severity == cudnnlog::catalog::Severity::Error)
            .map(|f| (f.class.as_str(), f.first.line))
            .collect();
        let primary = r.findings.iter().find(|f| {
            Some(&f.class) == r.primary.as_ref() && f.severity == cudnnlog::catalog::Severity::Error
        });
        let got = primary.map(|f| (f.class.as_str(), f.first.line));
        let unexpected: Vec<_> = errors
            .iter()
            .filter(|(c, _)| c != class && !others.contains(c))
            .collect();
        if got != Some((class, *line)) || !unexpected.is_empty() || out.status.code() != Some(1) {
            wrong.push(format!("{name}: primary {got:?}, errors {errors:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// JAX without cuDNN logs the failure and carries on with the CPU: a warning,
/// not an error.
#[test]
fn jax_falling_back_to_the_cpu_is_a_warning() {
    let out = cudnnlog(
        &[
            "scan",
            "--format",
            "json",
            "fixtures/gpu/h200-g24_jax_no_cudnn.log",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let r = json(&out);
    // Warnings only: the library that could not be loaded is primary, and
    // JAX's fallback that gives it as the reason is its fallout.
    assert_eq!(r.primary.as_deref(), Some("cudnn.library_missing"));
    assert_eq!(r.outcome, cudnnlog::report::Outcome::Degraded);
    assert!(r
        .findings
        .iter()
        .any(|f| f.class == "cudnn.library_missing" && f.first.line == 20));
    assert!(r
        .findings
        .iter()
        .any(|f| f.class == "cuda.no_device"
            && f.fallout_of.as_deref() == Some("cudnn.library_missing")));
}

/// A unified diff of a golden file and what the scan printed, at most
/// [`DIFF_LINES`] lines of it.
fn diff(expected: &str, actual: &str) -> String {
    let text = similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut shown = lines[..lines.len().min(DIFF_LINES)].join("\n");
    if lines.len() > DIFF_LINES {
        shown.push_str(&format!("\n… {} more lines", lines.len() - DIFF_LINES));
    }
    shown
}

/// Lines of each golden file's diff shown when it differs.
const DIFF_LINES: usize = 60;

#[test]
fn a_golden_mismatch_shows_what_changed() {
    let d = diff(
        "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
        "{\n  \"a\": 1,\n  \"b\": 3\n}\n",
    );
    assert!(
        d.contains("-  \"b\": 2") && d.contains("+  \"b\": 3"),
        "{d}"
    );
    assert!(d.starts_with("--- expected\n+++ actual"), "{d}");
    let long = diff(&"x\n".repeat(200), &"y\n".repeat(200));
    assert!(long.ends_with("more lines") && long.lines().count() == DIFF_LINES + 1);
}
