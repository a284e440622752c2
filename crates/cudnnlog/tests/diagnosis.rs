//! The diagnosis: environment extraction, each evidence rule on real message
//! text, fallout and the primary failure, tailored remediations, and the
//! cross-run view. Logs are real captures (`fixtures/`) or real wording.

use cudnnlog::report::{Finding, FindingsSink};
use cudnnlog::{Catalog, Report, ScannerBuilder};

fn report(logs: &[&[u8]]) -> Report {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    for log in logs {
        scanner.scan_slice(log, &mut sink).unwrap();
    }
    sink.into_report()
}

fn one(log: &str) -> Report {
    report(&[log.as_bytes()])
}

fn finding<'r>(r: &'r Report, class: &str) -> &'r Finding {
    r.findings
        .iter()
        .find(|f| f.class == class)
        .unwrap_or_else(|| panic!("no {class} in {:#?}", r.findings))
}

fn top(f: &Finding) -> &str {
    &f.causes[0].id
}

fn evidence_of<'f>(f: &'f Finding, cause: &str) -> Vec<&'f str> {
    f.causes
        .iter()
        .filter(|c| c.id == cause)
        .flat_map(|c| c.evidence.iter().map(String::as_str))
        .collect()
}

const COLLECT_ENV: &[u8] = include_bytes!("../../../fixtures/real/h200-collect-env-nvidia-smi.log");
const AMP_OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");
const PRELOAD: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g22_torch_cudnn_preload.log");
const WATCHDOG: &[u8] =
    include_bytes!("../../../fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log");
const CASCADE: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g17_torchrun_oom_cascade.log");
const ASSERT: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-device-assert.log");

#[test]
fn collect_env_is_fully_extracted_with_both_cudnn_copies() {
    let r = report(&[COLLECT_ENV]);
    let env = &r.environment;
    let s = |k: &str| {
        env[k]
            .as_str()
            .unwrap_or_else(|| panic!("{k}: {:?}", env[k]))
    };
    assert_eq!(s("framework"), "pytorch");
    assert_eq!(s("framework_version"), "2.11.0");
    assert_eq!(s("cuda"), "13.0");
    assert_eq!(s("driver"), "580.159.04");
    assert_eq!(s("gpu"), "NVIDIA H200");
    assert_eq!(s("nccl"), "2.28.9");
    // The system's cuDNN (listed as files) and the wheel's (pip): both.
    assert_eq!(env["cudnn"], serde_json::json!(["9.14.0", "9.19.0"]));
    assert!(r.findings.is_empty());
}

#[test]
fn startup_lines_give_versions_gpu_and_settings() {
    let r = report(&[AMP_OOM]);
    let env = &r.environment;
    assert_eq!(env["framework_version"], "2.11.0");
    assert_eq!(env["cudnn"], "9.19.0");
    assert_eq!(env["compute_capability"], "9.0");
    assert_eq!(env["cudnn_benchmark"], "true");
    assert_eq!(env["deterministic"], "false");
}

#[test]
fn tensorflow_startup_lines() {
    let r = one("2023-06-12 09:14:06.013377: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 21822 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n2023-06-12 09:14:09.550310: I tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:424] Loaded cuDNN version 8600\n");
    assert_eq!(r.environment["framework"], "tensorflow");
    assert_eq!(r.environment["gpu"], "NVIDIA GeForce RTX 3090");
    assert_eq!(r.environment["compute_capability"], "8.6");
    assert_eq!(r.environment["cudnn"], "8.6.0");
}

/// Rule: reserved-but-unallocated memory that would have satisfied the
/// request → fragmentation (the real AMP run: 4.77 GiB allocated + 1.53 GiB
/// requested fit in the 8.39 GiB cap; 2.81 GiB sat cached).
#[test]
fn cached_memory_that_would_have_fit_means_fragmentation() {
    let r = report(&[AMP_OOM]);
    let oom = finding(&r, "cuda.oom");
    assert_eq!(top(oom), "fragmentation");
    assert!(evidence_of(oom, "fragmentation")[0].contains("would fit"));
    assert!(oom.remediations[0].contains("expandable_segments:True"));
    assert!(oom.remediations[0].contains("Check:"));
}

/// Rule: memory held by other processes → foreign_process.
#[test]
fn memory_held_elsewhere_means_another_process() {
    let r = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free. Process 3171 has 40.00 GiB memory in use. Including non-PyTorch memory, this process has 37.94 GiB memory in use. Of the allocated memory 36.10 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but unallocated.\n");
    let oom = finding(&r, "cuda.oom");
    assert_eq!(top(oom), "foreign_process", "{:#?}", oom.causes);
    assert!(evidence_of(oom, "foreign_process")[0].contains("other processes hold about 40.00 GiB"));
    assert!(oom.remediations[0].contains("nvidia-smi --query-compute-apps"));
}

/// Rule: one allocation larger than the whole GPU → code_bug.
#[test]
fn a_request_larger_than_the_gpu_is_a_bug() {
    let r = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 78.02 GiB is free. Including non-PyTorch memory, this process has 1.13 GiB memory in use. Of the allocated memory 612.00 MiB is allocated by PyTorch, and 11.99 MiB is reserved by PyTorch but unallocated.\n");
    assert_eq!(top(finding(&r, "cuda.oom")), "code_bug");
}

/// Rule: a step that needs more than the cap → a batch size to try, from the
/// batch size the log shows.
#[test]
fn the_batch_size_to_try_comes_from_the_log() {
    let r = one("2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 batch 128 loss 2.3145\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free. Including non-PyTorch memory, this process has 8.32 GiB memory in use. 8.39 GiB allowed; Of the allocated memory 7.77 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.\n");
    let oom = finding(&r, "cuda.oom");
    assert_eq!(top(oom), "memory_pressure");
    let fix = &oom.remediations[0];
    assert!(fix.contains("from 128 to 64"), "{fix}");
    assert!(fix.contains("Check:"));
}

/// Rule: TensorFlow without memory growth → tf_prealloc; with growth on, not.
#[test]
fn tensorflow_without_memory_growth_suspects_preallocation() {
    let created = "2023-06-12 09:14:06.013377: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1635] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 21822 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n";
    let handle = "2023-06-12 09:14:12.663201: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n";
    let without = one(&format!("{created}{handle}"));
    let f = finding(&without, "cudnn.not_initialized");
    assert!(!evidence_of(f, "tf_prealloc").is_empty(), "{:#?}", f.causes);
    let with = one(&format!(
        "env: TF_FORCE_GPU_ALLOW_GROWTH=true\n{created}{handle}"
    ));
    let g = finding(&with, "cudnn.not_initialized");
    let conf = |f: &Finding| {
        f.causes
            .iter()
            .find(|c| c.id == "tf_prealloc")
            .map_or(0.0, |c| c.confidence)
    };
    assert!(conf(g) < conf(f));
}

/// Rule: runtime vs compiled-with versions in the message → version_mismatch.
#[test]
fn built_with_one_cudnn_and_loaded_another() {
    let r = one("2021-03-02 10:11:12.345678: E tensorflow/stream_executor/cuda/cuda_dnn.cc:362] Loaded runtime CuDNN library: 8.0.4 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n");
    let f = finding(&r, "cudnn.version_mismatch");
    assert_eq!(top(f), "version_mismatch");
    assert!(evidence_of(f, "version_mismatch")
        .iter()
        .any(|e| e.contains("built with cuDNN 8.1.0, loaded 8.0.4")));
}

/// Rule: two copies of cuDNN in one log → library_conflict (real: the
/// system's 9.14 preloaded in front of the wheel's 9.19).
#[test]
fn two_cudnn_copies_mean_a_library_conflict() {
    let r = report(&[PRELOAD]);
    let f = finding(&r, "cudnn.version_mismatch");
    assert_eq!(
        r.environment["cudnn"],
        serde_json::json!(["9.19.0", "9.14.0"])
    );
    assert!(!evidence_of(f, "library_conflict").is_empty());
    assert!(f.remediations[0].contains("Keep one cuDNN"));
}

/// Rule: cudnn.plan_failed on PyTorch 2.3.0 → a known framework issue that
/// does not affect results.
#[test]
fn plan_failed_on_pytorch_2_3_0_is_a_known_harmless_issue() {
    let log = "2024-05-20 10:00:00,000 INFO train: torch 2.3.0+cu121 cuda 12.1 cudnn 8902\n/usr/local/lib/python3.10/dist-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";
    let r = one(log);
    let f = finding(&r, "cudnn.plan_failed");
    assert_eq!(top(f), "framework_bug", "{:#?}", f.causes);
    assert!(evidence_of(f, "framework_bug")[0].contains("not affected"));
    // A warnings-only log: the run went on, its warning is the primary.
    assert_eq!(r.primary.as_deref(), Some("cudnn.plan_failed"));
    assert_eq!(r.outcome, cudnnlog::report::Outcome::Degraded);
}

/// Rule: deterministic mode on → deterministic_mode; benchmark on → autotune.
#[test]
fn settings_in_the_log_weigh_their_causes() {
    let log = "2026-11-29 19:40:51,487 INFO train: cudnn.benchmark=True deterministic=True\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.\n";
    let r = one(log);
    let f = finding(&r, "cudnn.not_supported");
    assert!(
        !evidence_of(f, "deterministic_mode").is_empty(),
        "{:#?}",
        f.causes
    );
}

/// Rule: out-of-memory near a cuDNN failure → memory causes.
#[test]
fn an_oom_near_a_cudnn_failure_points_at_memory() {
    let log = "2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 batch 128 loss 2.3145\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.\n2026-11-29 19:41:05,001 INFO train: epoch 2 step 4 batch 128 loss 2.3100\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.execution_failed");
    assert!(evidence_of(f, "memory_pressure")
        .iter()
        .any(|e| e.contains("out-of-memory error")));
    assert_eq!(top(f), "memory_pressure", "{:#?}", f.causes);
}

/// Rule: failing at the very start with little memory in use → versions and
/// libraries.
#[test]
fn failing_at_the_first_convolution_points_at_versions() {
    let log = "2026-11-29 19:40:51,487 INFO train: torch 2.4.0+cu121 cuda 12.1 cudnn 90100\nTraceback (most recent call last):\n  File \"/home/user/train/train.py\", line 40, in <module>\n    y = conv(x)\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.execution_failed");
    assert!(evidence_of(f, "version_mismatch")
        .iter()
        .any(|e| e.contains("before any training step")));
}

/// Fallout: a device-side assert makes later CUDA calls fail; the assert is
/// the primary failure.
#[test]
fn errors_after_a_device_assert_are_its_fallout() {
    let mut log = ASSERT.to_vec();
    log.extend_from_slice(b"RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n");
    let r = report(&[&log]);
    assert_eq!(r.primary.as_deref(), Some("cuda.device_assert"));
    let blas = finding(&r, "cublas.error");
    let cause = &r.findings[blas.caused_by.expect("fallout")];
    assert_eq!(cause.class, "cuda.device_assert");
}

/// Fallout: the watchdog's SIGABRT reported by torchrun follows the timeout.
#[test]
fn the_launchers_signal_report_follows_the_timeout() {
    let r = report(&[WATCHDOG]);
    assert_eq!(r.primary.as_deref(), Some("nccl.timeout"));
    let crash = finding(&r, "proc.segfault");
    assert_eq!(r.findings[crash.caused_by.unwrap()].class, "nccl.timeout");
}

/// Fallout: one rank's out-of-memory error, then NCCL errors on the other.
#[test]
fn nccl_errors_after_one_ranks_oom_are_fallout() {
    let mut log = CASCADE.to_vec();
    log.extend_from_slice(b"[rank0]:[E1130 15:17:43.699000 2219 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=16781312, NumelOut=16781312, Timeout(ms)=20000) ran for 20009 milliseconds before timing out.\n");
    let r = report(&[&log]);
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    let timeout = finding(&r, "nccl.timeout");
    assert_eq!(r.findings[timeout.caused_by.unwrap()].class, "cuda.oom");
    assert!(evidence_of(timeout, "comm_failure")[0].contains("rank 1"));
}

/// Several runs: the same failure at the same step in each → input_shape.
#[test]
fn the_same_step_in_every_run_points_at_an_input() {
    let run = |seed: &str| {
        format!("2026-11-29 19:41:01,000 INFO train: run {seed}\n2026-11-29 19:41:02,000 INFO train: epoch 3 step 1200 loss 0.5\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n")
    };
    let (a, b, c) = (run("a"), run("b"), run("c"));
    let r = report(&[a.as_bytes(), b.as_bytes(), c.as_bytes()]);
    let note = r
        .cross_run
        .iter()
        .find(|n| n.kind == "same_step")
        .expect("cross-run note");
    assert_eq!(note.runs, [0, 1, 2]);
    let f = finding(&r, "cudnn.execution_failed");
    assert!(!evidence_of(f, "input_shape").is_empty());
}

/// Several runs: failing only after the environment changed → versions.
#[test]
fn failing_only_after_an_upgrade_points_at_versions() {
    let ok = "2026-11-29 19:41:01,000 INFO train: torch 2.4.0+cu121 cuda 12.1 cudnn 90100\n2026-11-29 19:41:02,000 INFO train: epoch 3 step 1200 loss 0.5\n";
    let bad = "2026-11-30 09:00:01,000 INFO train: torch 2.5.1+cu124 cuda 12.4 cudnn 90100\n2026-11-30 09:00:02,000 INFO train: epoch 0 step 200 loss 0.9\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let r = report(&[ok.as_bytes(), bad.as_bytes()]);
    let note = r
        .cross_run
        .iter()
        .find(|n| n.kind == "after_environment_change")
        .expect("cross-run note");
    assert!(
        note.detail.contains("framework_version 2.5.1"),
        "{}",
        note.detail
    );
    let f = finding(&r, "cudnn.execution_failed");
    assert!(!evidence_of(f, "version_mismatch").is_empty());
}

/// Rule (compat data): the cuDNN in use is not the one the PyTorch wheel
/// bundles → version_mismatch, with the exact reinstall command.
#[test]
fn a_cudnn_the_wheel_does_not_bundle_is_a_mismatch() {
    let log = "2024-08-01 10:00:00,000 INFO train: torch 2.4.0+cu121 cuda 12.1 cudnn 8902\n2024-08-01 10:00:05,000 INFO train: epoch 0 step 10 loss 1.2\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.execution_failed");
    let ev = evidence_of(f, "version_mismatch");
    assert!(
        ev.iter()
            .any(|e| e
                .contains("cuDNN 8.9.2 is in use, but PyTorch 2.4.0 (cu121) ships cuDNN 9.1.0")),
        "{ev:?}"
    );
    assert!(f
        .remediations
        .iter()
        .any(|r| r.contains("pip install --force-reinstall torch==2.4.0 --index-url https://download.pytorch.org/whl/cu121")
            && r.contains("prints 90100")));
}

/// Rule (compat data): a driver older than the CUDA release needs →
/// driver_too_old, with the driver to install.
#[test]
fn a_driver_older_than_cuda_needs() {
    let log = "CUDA used to build PyTorch: 12.4\nNvidia driver version: 470.82.01\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.not_initialized");
    let ev = evidence_of(f, "driver_too_old");
    assert!(
        ev.iter()
            .any(|e| e.contains("driver 470.82.01 is older than")),
        "{:#?}",
        f.causes
    );
    assert_eq!(top(f), "driver_too_old");
    assert!(f.remediations[0].contains("Upgrade the NVIDIA driver to"));
}

/// Rule (compat data): an Ampere GPU with a cuDNN before 8.4 → the seed
/// documents' arch advice; a CUDA before the architecture → arch_unsupported.
#[test]
fn ampere_with_an_old_cudnn() {
    let created = "2021-05-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1418] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22302 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n";
    let old = format!("{created}2021-05-01 10:00:01.000000: I tensorflow/stream_executor/cuda/cuda_dnn.cc:369] Loaded cuDNN version 8101\n2021-05-01 10:00:02.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:1857] failed to enqueue convolution on stream: CUDNN_STATUS_EXECUTION_FAILED\n");
    let r = one(&old);
    let f = finding(&r, "cudnn.execution_failed");
    assert!(
        evidence_of(f, "arch_unsupported")
            .iter()
            .any(|e| e.contains("Ampere")),
        "{:#?}",
        f.causes
    );
    let older = old.replace("Loaded cuDNN version 8101", "Loaded cuDNN version 7605");
    let r = one(&older);
    let f = finding(&r, "cudnn.execution_failed");
    assert_eq!(top(f), "arch_unsupported", "{:#?}", f.causes);
}

/// Rule: mixed precision → half_precision for cuDNN failures (Lightning's
/// real banner).
#[test]
fn mixed_precision_weighs_half_precision() {
    let log = "Using 16bit Automatic Mixed Precision (AMP)\n/usr/local/lib/python3.10/dist-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,\n";
    let r = one(log);
    let f = finding(&r, "cudnn.plan_failed");
    assert!(
        evidence_of(f, "half_precision")[0].contains("mixed precision"),
        "{:#?}",
        f.causes
    );
}

/// Rule: cudnn.benchmark on with memory tight → benchmark_autotune.
#[test]
fn benchmark_mode_with_tight_memory() {
    let log = "2026-11-29 19:40:51,487 INFO train: cudnn.benchmark=True deterministic=False\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free. Including non-PyTorch memory, this process has 8.32 GiB memory in use. 8.39 GiB allowed; Of the allocated memory 7.90 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.execution_failed");
    assert!(evidence_of(f, "benchmark_autotune")
        .iter()
        .any(|e| e.contains("cudnn.benchmark is on")));
}

/// Build fingerprints: the raising code's source path and a conda build
/// stamp say which release ran, when no line says so.
#[test]
fn build_fingerprints_name_the_framework_and_its_release() {
    // A real PyTorch 1.0 traceback (wild corpus, 067): the conda stamp is
    // 2018-12-07, the day 1.0.0 was released; the THC path allows 0.4 to 1.10.
    let r = report(&[include_bytes!(
        "../../../fixtures/wild/cases/067-deepsdf-launch-failure-then-terminate/log.txt"
    )]);
    assert_eq!(r.environment["framework"], "pytorch");
    let builds = r.environment["framework_build"].to_string();
    assert!(builds.contains("\"1.0.0\""), "{builds}");
    // A glog header's path is part of the line's prefix, and still read.
    let r = one("2023-09-28 19:19:50.298229: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9342] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered\n");
    assert_eq!(r.environment["framework"], "tensorflow");
    assert_eq!(r.environment["framework_build"], ">=2.15.0");
}

/// Versions and GPUs in the reporter's own words around a pasted error.
#[test]
fn versions_and_gpus_in_prose() {
    let r = one("I use torch=1.6 with cuda=10.1 on a single RTX 3090\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n");
    assert_eq!(r.environment["cuda"], "10.1");
    assert_eq!(r.environment["gpu"], "GeForce RTX 3090");
    // CUDA 10.1 predates Ampere: the architecture rule is definitive.
    let f = finding(&r, "cudnn.execution_failed");
    assert_eq!(f.causes[0].id, "arch_unsupported", "{:#?}", f.causes);
    // nvidia-smi's "CUDA Version" is the driver's limit, not the CUDA in use.
    let r =
        one("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n");
    assert!(!r.environment.contains_key("cuda"), "{:?}", r.environment);
}

/// A kernel's failed assertion that is one of PyTorch's input checks is
/// evidence of bad input, and only the advice for that check is given,
/// first: a label out of range gets the label advice, an index out of range
/// the index advice, and neither the other's.
#[test]
fn a_kernels_input_check_names_what_was_out_of_range() {
    let label = report(&[include_bytes!(
        "../../../fixtures/real/h200-torch-device-assert.log"
    )]);
    let f = finding(&label, "cuda.device_assert");
    assert_eq!(f.causes[0].id, "code_bug");
    assert!(
        f.causes[0]
            .evidence
            .iter()
            .any(|e| e.contains("`t >= 0 && t < n_classes`")),
        "{:#?}",
        f.causes[0]
    );
    assert!(f.remediations[0].starts_with("A target label is negative"));
    assert!(!f
        .remediations
        .iter()
        .any(|r| r.contains("num_embeddings") || r.contains("BCELoss")));
    let index = report(&[
        b"step 120 loss 3.2210\n\
          /opt/conda/conda-bld/pytorch_1695392036766/work/aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [372,0,0], thread: [64,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n\
          RuntimeError: CUDA error: device-side assert triggered\n",
    ]);
    let f = finding(&index, "cuda.device_assert");
    assert_eq!(f.causes[0].id, "code_bug");
    assert!(
        f.remediations[0].contains("num_embeddings"),
        "{:#?}",
        f.remediations
    );
    assert!(!f.remediations.iter().any(|r| r.contains("n_classes")));
    // A custom kernel's own check is not evidence of either.
    let custom = report(&[
        b"my_ops.cu:88: fused_kernel: block: [0,0,0], thread: [3,0,0] Assertion `ptr != nullptr` failed.\n",
    ]);
    let f = finding(&custom, "cuda.device_assert");
    assert!(f
        .causes
        .iter()
        .all(|c| c.evidence.iter().all(|e| !e.contains("tests the values"))));
    assert!(!f
        .remediations
        .iter()
        .any(|r| r.contains("n_classes") || r.contains("num_embeddings")));
}
