//! Remediations that fit: filtered to the log's framework, the framework's
//! own first, each command given once, placeholders filled from the facts.
//! Logs are real captures (`fixtures/`).

mod common;

use common::{finding, report};

const JAX_OOM: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g01_jax_oom.log");
const TORCH_OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");

fn names_tensorflow(r: &str) -> bool {
    r.contains("TensorFlow") || r.contains("TF_") || r.contains("tf.")
}

#[test]
fn a_jax_oom_gets_jax_advice_not_tensorflows() {
    let r = report(JAX_OOM);
    assert_eq!(r.environment["framework"], "jax");
    let oom = finding(&r, "cuda.oom");
    assert!(
        oom.remediations[0].contains("XLA_PYTHON_CLIENT_PREALLOCATE"),
        "{:#?}",
        oom.remediations
    );
    assert!(
        !oom.remediations.iter().any(|r| names_tensorflow(r)),
        "{:#?}",
        oom.remediations
    );
    // JAX's preallocation switch is given once, though the pattern and the
    // tf_prealloc cause both say it.
    let n = oom
        .remediations
        .iter()
        .filter(|r| r.contains("XLA_PYTHON_CLIENT_PREALLOCATE=false"))
        .count();
    assert_eq!(n, 1, "{:#?}", oom.remediations);
}

#[test]
fn a_pytorch_oom_gets_expandable_segments_once_and_no_other_framework() {
    let r = report(TORCH_OOM);
    let oom = finding(&r, "cuda.oom");
    let advising = oom
        .remediations
        .iter()
        .filter(|r| r.contains("`export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`"))
        .count();
    assert_eq!(advising, 1, "{:#?}", oom.remediations);
    assert!(
        !oom.remediations
            .iter()
            .any(|r| names_tensorflow(r) || r.contains("CuPy")),
        "{:#?}",
        oom.remediations
    );
    // PyTorch's own advice before generic advice within a cause's list:
    // everything after the first generic one of memory_pressure's names no
    // other framework either.
    assert!(oom.remediations.len() >= 5);
}

#[test]
fn a_runtime_errors_message_is_quoted_in_its_advice() {
    let r = report(b"Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 40, in <module>\n    loss = criterion(out, y)\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n");
    let f = r
        .findings
        .iter()
        .find(|f| f.pattern == "python-runtime-error")
        .or_else(|| r.findings.first())
        .unwrap();
    let quoted = f
        .remediations
        .iter()
        .chain(r.findings.iter().flat_map(|f| &f.remediations))
        .all(|x| !x.contains("(`detail`)") && !x.contains("{detail}"));
    assert!(quoted, "{:#?}", r.findings);
}

#[test]
fn gpu_library_advice_stays_off_a_missing_python_module() {
    let r = report(b"Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 7, in <module>\n    from apex import amp\nModuleNotFoundError: No module named 'apex'\n");
    let f = finding(&r, "python.missing_module");
    assert!(
        !f.remediations
            .iter()
            .any(|x| x.contains("libcudnn") || x.contains("CUDA_LAUNCH_BLOCKING")),
        "{:#?}",
        f.remediations
    );
    assert!(f.remediations[0].contains("python -m pip install"));
}

/// A message that gives only the request and the free memory (PyTorch 2.1+
/// wording cut before the per-process figures) gets the arithmetic done,
/// not an instruction to read the numbers.
#[test]
fn an_oom_with_only_request_and_free_memory_gets_the_factor() {
    let r = report(b"epoch 0 step 3 loss 2.31\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 5.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
    let oom = finding(&r, "cuda.oom");
    assert_eq!(
        oom.remediations[0],
        "The step asked for 5.00 GiB with only 1.19 GiB free on the GPU: divide the batch size (or the input size) by at least 5, keeping the effective batch with gradient accumulation. Check: the step runs."
    );
    assert!(!oom.remediations.iter().any(|r| r.starts_with("Read the")));
}

/// When PyTorch names the process that holds the GPU, the fix names it
/// too (`kill 19230`, not `kill <pid>`), and does not tell the job to
/// shrink a 20 MiB step.
#[test]
fn an_oom_beside_another_process_names_its_pid() {
    let r = report(b"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 14.75 GiB of which 3.06 MiB is free. Process 19230 has 14.74 GiB memory in use. Of the allocated memory 14.49 GiB is allocated by PyTorch, and 128.46 MiB is reserved by PyTorch but unallocated.\n");
    let oom = finding(&r, "cuda.oom");
    assert_eq!(oom.causes[0].id, "foreign_process");
    assert!(
        oom.remediations[0].starts_with("Process 19230 held 14.74 GiB of the GPU's 14.75 GiB")
            && oom.remediations[0].contains("`kill 19230`"),
        "{:#?}",
        oom.remediations
    );
    assert!(!oom
        .remediations
        .iter()
        .any(|r| r.starts_with("The step asked for")));
}

/// The failing message's stack decides for frameworks that are not
/// Python: Lua Torch7's cutorch (whose `cutorch/lib/THC` path is not
/// PyTorch's `torch/lib/THC`), MXNet's C++ pool and a Julia program get
/// no PyTorch call, no other framework's setting and no `python …` command.
#[test]
fn lua_mxnet_and_julia_stacks_get_no_other_frameworks_advice() {
    let lua = report(b"THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-9261/cutorch/lib/THC/generic/THCStorage.cu line=66 error=2 : out of memory\n/home/user/torch/install/bin/luajit: /home/user/torch/install/share/lua/5.1/nn/Container.lua:67:\nIn 1 module of nn.Sequential:\ncuda runtime error (2) : out of memory at /tmp/luarocks_cutorch-scm-1-9261/cutorch/lib/THC/generic/THCStorage.cu:66\n");
    assert!(
        lua.environment
            .get("framework")
            .is_none_or(|f| f != "pytorch"),
        "{:?}",
        lua.environment
    );
    let oom = finding(&lua, "cuda.oom");
    assert!(!oom.remediations.is_empty());
    for r in &oom.remediations {
        assert!(
            !r.contains("torch.") && !r.contains("PyTorch") && !r.contains("python"),
            "{r}"
        );
    }
    let mx = report(b"terminate called after throwing an instance of 'dmlc::Error'\n  what():  [10:21:36] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory\nAborted (core dumped)\n");
    let oom = finding(&mx, "cuda.oom");
    assert!(
        oom.remediations[0].starts_with("MXNet:"),
        "{:#?}",
        oom.remediations
    );
    assert!(!oom.remediations.iter().any(|r| r.contains("Caffe")));
    let julia = report(b"ERROR: LoadError: CUDA error: an illegal memory access was encountered (code 700, ERROR_ILLEGAL_ADDRESS)\nStacktrace:\n  [1] throw_api_error(res::CUDA.cudaError_enum)\n    @ CUDA ~/.julia/packages/CUDA/Tl08O/lib/cudadrv/libcuda.jl:27\n");
    let f = finding(&julia, "cuda.illegal_address");
    assert!(!f.remediations.is_empty());
    for r in &f.remediations {
        assert!(!r.contains("python") && !r.contains("torch"), "{r}");
    }
}

/// A status printed as a number is named in the advice (the table's name
/// for it), never left for the reader to look up.
#[test]
fn a_numbered_cudnn_status_is_named() {
    // The log's execution failure has a remediation starting `named`.
    let names = |log: &[u8], named: &str| {
        let r = report(log);
        let f = finding(&r, "cudnn.execution_failed");
        assert!(
            f.remediations.iter().any(|x| x.starts_with(named)),
            "{named}: {:#?}",
            f.remediations
        );
    };
    names(
        b"I0312 10:01:02.123456  4567 solver.cpp:228] Iteration 100, loss = 0.69\nOSError: (External) CUDNN error(8), \n",
        "cuDNN status 8 is CUDNN_STATUS_EXECUTION_FAILED:",
    );
    // A cuDNN 9 code TensorFlow's table cannot name; cudnnlog's can.
    names(
        b"2024-09-02 16:40:18.300511: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:8421] <unknown cudnn status: 5003>\n",
        "cuDNN status 5003 is CUDNN_STATUS_EXECUTION_FAILED_CUDART",
    );
}
