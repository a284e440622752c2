//! Evidence beyond priors: the memory numbers of an out-of-memory message,
//! and the knowledge kept as data (`patterns/diagnosis.toml`) — what a path,
//! a module name or a message's own wording says about the cause. Messages
//! are in the frameworks' real wording (the templates cited in the rules).

mod common;

use common::{finding, report};
use cudnnlog::report::Finding;
use cudnnlog::Report;

fn one(log: &str) -> Report {
    report(log.as_bytes())
}

fn top(f: &Finding) -> (&str, &[String]) {
    (&f.causes[0].id, &f.causes[0].evidence)
}

#[test]
fn a_request_that_free_plus_cached_memory_covers_is_fragmentation() {
    // 1.08 GiB free < 1.96 GiB requested <= 1.08 + 1.83 reserved-unallocated.
    let r = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 79.18 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in use. Of the allocated memory 75.31 GiB is allocated by PyTorch, and 1.83 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n");
    let (id, evidence) = top(finding(&r, "cuda.oom"));
    assert_eq!(id, "fragmentation");
    assert!(
        evidence[0].contains("would cover the 1.96 GiB request"),
        "{evidence:?}"
    );
}

#[test]
fn a_request_beyond_free_plus_cached_memory_is_pressure() {
    let r = one("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.18 GiB of which 1.08 GiB is free. Including non-PyTorch memory, this process has 78.09 GiB memory in use. Of the allocated memory 76.90 GiB is allocated by PyTorch, and 250.00 MiB is reserved by PyTorch but unallocated.\n");
    assert_eq!(top(finding(&r, "cuda.oom")).0, "memory_pressure");
}

#[test]
fn the_old_allocator_message_counts_memory_held_elsewhere() {
    // PyTorch 1.x: total − free − reserved is held outside PyTorch's cache.
    let r = one("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.70 GiB total capacity; 9.81 GiB already allocated; 1.12 GiB free; 10.02 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.\n");
    let oom = finding(&r, "cuda.oom");
    let (id, evidence) = top(oom);
    assert_eq!(id, "foreign_process", "{:#?}", oom.causes);
    assert!(
        evidence[0].contains("other processes hold about 12.56 GiB"),
        "{evidence:?}"
    );
}

#[test]
fn a_permission_error_in_a_kernel_cache_is_a_stale_cache() {
    let r = one("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nPermissionError: [Errno 13] Permission denied: '/tmp/torchinductor_alice/triton/0/9Uj2sVu8sE9a79O0WWNMTtijW46yzuGzGtmRdkErpXk'\n");
    let f = finding(&r, "python.permission");
    let (id, evidence) = top(f);
    assert_eq!(id, "stale_cache", "{:#?}", f.causes);
    assert!(evidence[0].contains("torchinductor_alice"), "{evidence:?}");
    // The same error on a data file is not a cache.
    let r =
        one("PermissionError: [Errno 13] Permission denied: '/data/imagenet/train/n01440764'\n");
    assert_eq!(top(finding(&r, "python.permission")).0, "code_bug");
}

#[test]
fn a_missing_compiler_is_a_missing_library_not_a_bug() {
    let r = one("Traceback (most recent call last):\n  File \"setup.py\", line 171, in <module>\n    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)\n  File \"/usr/lib/python3.10/subprocess.py\", line 1847, in _execute_child\n    raise child_exception_type(errno_num, err_msg, err_filename)\nFileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'\n");
    let f = finding(&r, "python.file_not_found");
    assert_eq!(top(f).0, "library_missing", "{:#?}", f.causes);
}

#[test]
fn a_module_removed_by_an_upgrade_is_a_version_mismatch() {
    let r = one("Traceback (most recent call last):\n  File \"/home/user/train/models/backbone.py\", line 4, in <module>\n    from torch._six import container_abcs\nModuleNotFoundError: No module named 'torch._six'\n");
    let f = finding(&r, "python.missing_module");
    assert_eq!(top(f).0, "version_mismatch", "{:#?}", f.causes);
    // An accelerator nobody installed stays a missing library.
    let r = one("ModuleNotFoundError: No module named 'flash_attn'\n");
    assert_eq!(
        top(finding(&r, "python.missing_module")).0,
        "library_missing"
    );
    // A name a library no longer exports.
    let r = one("ImportError: cannot import name 'cached_download' from 'huggingface_hub' (/opt/venv/lib/python3.11/site-packages/huggingface_hub/__init__.py)\n");
    assert_eq!(
        top(finding(&r, "python.missing_module")).0,
        "version_mismatch"
    );
    // A circular import is the project's own doing.
    let r = one("ImportError: cannot import name 'Trainer' from partially initialized module 'trainer' (most likely due to a circular import) (/home/user/train/trainer.py)\n");
    assert_eq!(top(finding(&r, "python.missing_module")).0, "code_bug");
}

#[test]
fn an_undefined_extension_function_is_its_version() {
    let r = one("  File \"/home/user/train/model.py\", line 184, in forward\n    attn_output = flash_attn_varlen_func(\nNameError: name 'flash_attn_varlen_func' is not defined\n");
    let f = finding(&r, "python.exception");
    assert_eq!(top(f).0, "version_mismatch", "{:#?}", f.causes);
    assert_eq!(f.causes[1].id, "library_missing");
    // A NameError in the user's own code stays a bug.
    let r = one("NameError: name 'optimzer' is not defined\n");
    assert_eq!(top(finding(&r, "python.exception")).0, "code_bug");
}

#[test]
fn a_capability_check_is_an_unsupported_configuration() {
    let r = one("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.\n");
    let f = finding(&r, "python.exception");
    assert_eq!(top(f).0, "unsupported_config", "{:#?}", f.causes);
}

#[test]
fn tensorflows_cudnn_init_hint_points_at_preallocation() {
    let r = one("tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.\n\t [[node sequential/conv2d/Conv2D (defined at train.py:41) ]] [Op:__inference_train_function_1018]\n");
    let f = finding(&r, "cudnn.conv_algo_failed");
    assert_eq!(top(f).0, "tf_prealloc", "{:#?}", f.causes);
}

#[test]
fn a_broken_rule_names_its_file_and_field() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-knowledge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("diagnosis.toml"),
        "[[rule]]\nid = \"x\"\nwhat = \"w\"\nclasses = [\"cuda.oom\"]\nread = \"message\"\nregex = \"x\"\nfactors = { fragmentaton = 2.0 }\nevidence = \"e\"\n",
    )
    .unwrap();
    let err = cudnnlog::catalog::CatalogBuilder::new()
        .add_dir(&dir)
        .build()
        .map(|_| ())
        .expect_err("a typo must fail");
    std::fs::remove_dir_all(&dir).ok();
    let text = err.to_string();
    assert!(text.contains("diagnosis.toml"), "{text}");
    assert!(text.contains("fragmentaton"), "{text}");
}

#[test]
fn progress_before_the_failure_lowers_set_up_causes() {
    let failure = "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n";
    let mut mid_run = String::new();
    for step in 1..=120 {
        mid_run.push_str(&format!(
            "2026-12-01 10:00:00,000 INFO train: step {step} loss 0.{step:03}\n"
        ));
    }
    mid_run.push_str(failure);
    let r = one(&mid_run);
    let f = finding(&r, "cudnn.execution_failed");
    // After 120 good steps the set-up is sound: what public threads fixed
    // for mid-run execution failures was the framework release or memory.
    assert_eq!(top(f).0, "framework_bug", "{:#?}", f.causes);
    assert!(top(f).1[0].contains("mid-run (step 120)"), "{:?}", top(f).1);
    let rank = |f: &cudnnlog::report::Finding, id: &str| f.causes.iter().position(|c| c.id == id);
    assert!(
        rank(f, "memory_pressure") < rank(f, "version_mismatch"),
        "{:#?}",
        f.causes
    );
    assert!(
        rank(f, "memory_pressure") < rank(f, "arch_unsupported"),
        "{:#?}",
        f.causes
    );
    // The same failure at the first step keeps the set-up causes first.
    let r = one(&format!(
        "2026-12-01 10:00:00,000 INFO train: step 0 loss 2.31\n{failure}"
    ));
    let f = finding(&r, "cudnn.execution_failed");
    let firsts: Vec<&str> = f.causes.iter().take(2).map(|c| c.id.as_str()).collect();
    assert_eq!(
        firsts,
        ["arch_unsupported", "version_mismatch"],
        "{:#?}",
        f.causes
    );
}

/// Where a log names no setting and no version, the priors decide; they
/// come from a survey of public threads whose fix was confirmed (see
/// docs/diagnosis.md, "Priors"). Each case is a bare message of one class.
#[test]
fn bare_messages_rank_what_public_threads_confirmed() {
    for (log, class, first) in [
        // GPUs newer than the CUDA build (RTX 30xx on CUDA 10, 20xx on 9).
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n",
            "cudnn.execution_failed",
            "arch_unsupported",
        ),
        // Mostly Caffe or darknet on an older cuDNN than the code needs.
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM\n",
            "cudnn.bad_param",
            "version_mismatch",
        ),
        (
            "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n",
            "cudnn.not_initialized",
            "version_mismatch",
        ),
        // A shell's "Killed" after the process grew: the OOM killer.
        (
            "step 812 loss 1.93\n./run.sh: line 3: 48213 Killed                  python train.py\n",
            "host.oom_killed",
            "host_memory_pressure",
        ),
    ] {
        let r = one(log);
        assert_eq!(top(finding(&r, class)).0, first, "{log}");
    }
    // PyTorch's INTERNAL_ERROR is not TensorFlow's: no memory-reservation
    // cause without TensorFlow in the log.
    let r = one("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR\n");
    let f = finding(&r, "cudnn.internal_error");
    assert!(
        f.causes.iter().all(|c| c.id != "tf_prealloc"),
        "{:#?}",
        f.causes
    );
}

/// A crash after the log reported a version disagreement is put down to
/// the versions, with the line that said so; versions named by that one
/// message are not "two copies" of the library.
#[test]
fn a_crash_after_a_reported_version_disagreement_is_the_versions() {
    let log = "2024-01-01 10:00:00.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:361] Loaded runtime CuDNN library: 8.0.4 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version.\nSegmentation fault (core dumped)\n";
    let r = one(log);
    let crash = finding(&r, "proc.segfault");
    let (id, evidence) = top(crash);
    assert_eq!(id, "version_mismatch", "{:#?}", crash.causes);
    assert!(
        evidence.iter().any(|e| e
            .contains("line 1: the log reports a version disagreement (cudnn.version_mismatch)")),
        "{evidence:?}"
    );
    let mismatch = finding(&r, "cudnn.version_mismatch");
    assert_eq!(top(mismatch).0, "version_mismatch");
    let conflict = mismatch
        .causes
        .iter()
        .find(|c| c.id == "library_conflict")
        .unwrap();
    assert!(conflict.evidence.is_empty(), "{conflict:?}");
}

/// TensorFlow's ALLOC_FAILED handle error without memory growth is its
/// start-up reservation, like the other handle errors.
#[test]
fn tensorflow_alloc_failed_without_memory_growth_is_its_reservation() {
    let log = "2020-05-01 10:00:00.000000: I tensorflow/stream_executor/platform/default/dso_loader.cc:44] Successfully opened dynamic library libcudnn.so.7\n2020-05-01 10:00:01.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED\n";
    let r = one(log);
    let f = finding(&r, "cudnn.alloc_failed");
    assert_eq!(top(f).0, "tf_prealloc", "{:#?}", f.causes);
}

/// A standalone program's own check macro (`CUDA error at kernel.cu:20`)
/// reports the failure: its kernel or its arguments come first. Real
/// captures from the H200 machine; a framework's source path does not count.
#[test]
fn a_programs_own_check_points_at_its_code() {
    for (log, class) in [
        (
            &include_bytes!("../../../fixtures/gpu/h200-g18_cuda_illegal_address.log")[..],
            "cuda.illegal_address",
        ),
        (
            &include_bytes!("../../../fixtures/gpu/h200-g21_cudnn_status.log")[..],
            "cudnn.bad_param",
        ),
    ] {
        let r = report(log);
        let f = finding(&r, class);
        let (id, evidence) = top(f);
        assert_eq!(id, "code_bug", "{:#?}", f.causes);
        assert!(
            evidence[0].contains("the program's own check reports it"),
            "{evidence:?}"
        );
    }
    let framework = "RuntimeError: cuda runtime error (4) : unspecified launch failure at /home/ubuntu/pytorch/torch/lib/THC/THCTensorCopy.cu:85\n";
    let f = finding(&one(framework), "cuda.launch_failure").clone();
    assert!(
        f.causes
            .iter()
            .all(|c| c.evidence.iter().all(|e| !e.contains("own check"))),
        "{:#?}",
        f.causes
    );
}

/// Known issues and NCCL's own words, kept as data (`diagnosis.toml`).
#[test]
fn known_issues_and_nccls_reason_weigh_their_causes() {
    let r = one("torch 1.8.0+cu102\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n");
    let f = finding(&r, "cudnn.not_initialized");
    let (id, evidence) = top(f);
    assert_eq!(id, "framework_bug", "{:#?}", f.causes);
    assert!(evidence[0].contains("a known 1.8.0 issue"), "{evidence:?}");
    // 1.8.1 is not the known issue.
    let r = one("torch 1.8.1+cu102\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n");
    assert_ne!(top(finding(&r, "cudnn.not_initialized")).0, "framework_bug");
    let cuda = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3\n";
    let f = finding(&one(cuda), "nccl.error").clone();
    assert_eq!(top(&f).0, "version_mismatch", "{:#?}", f.causes);
    let system = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3\n";
    let f = finding(&one(system), "nccl.error").clone();
    assert_eq!(top(&f).0, "comm_failure", "{:#?}", f.causes);
    assert!(
        f.causes.iter().position(|c| c.id == "shm_exhausted")
            < f.causes.iter().position(|c| c.id == "version_mismatch"),
        "{:#?}",
        f.causes
    );
}

/// ProcessGroupWrapper's list of differences: another operation or
/// sequence number is a code path; shapes of several dimensions alone hint
/// at the data; a flat bucket of another size (DDP, ZeRO: other parameters
/// took part) and a fingerprint decoded from the length check say neither.
#[test]
fn a_collective_mismatch_reads_its_own_list_of_differences() {
    let fp = |shape: &str, op: &str| {
        format!(
            "CollectiveFingerPrint(SequenceNumber=12, OpType={op}, TensorShape=[{shape}], TensorDtypes=Float, \
             TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), \
             requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))"
        )
    };
    let line = |ours: String, theirs: String, diff: &str| {
        format!(
            "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: {ours}, \
             but Rank 3 is running collective: {theirs}.Collectives differ in the following aspects: {diff}\n"
        )
    };
    let cause = |log: String| {
        let r = one(&log);
        let f = finding(&r, "dist.collective_mismatch");
        (f.causes[0].id.clone(), f.causes[0].evidence.len())
    };
    let batch = line(
        fp("256, 4096", "ALLREDUCE"),
        fp("128, 4096", "ALLREDUCE"),
        "  Tensor Tensor shapes: 256 4096vs 128 4096",
    );
    assert_eq!(cause(batch), ("input_shape".to_string(), 1));
    let op = line(
        fp("1024", "ALLGATHER"),
        fp("1024", "BROADCAST"),
        "  Op type: ALLGATHERvs BROADCAST",
    );
    assert_eq!(cause(op), ("code_bug".to_string(), 1));
    let bucket = line(
        fp("195812480", "ALLREDUCE"),
        fp("51123456", "ALLREDUCE"),
        "  Tensor Tensor shapes: 195812480vs 51123456",
    );
    assert_eq!(cause(bucket), ("code_bug".to_string(), 0));
    let decoded = line(
        fp("4096", "ALLREDUCE"),
        "CollectiveFingerPrint(SequenceNumber=0OpType=GATHER)".to_string(),
        "\t Sequence number: 12vs 0  Op type: ALLREDUCEvs GATHER  Tensor Tensor shapes: 4096vs ",
    );
    assert_eq!(cause(decoded), ("code_bug".to_string(), 0));
}
