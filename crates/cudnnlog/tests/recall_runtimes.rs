//! Recall on runtime wordings found on fresh logs: NVML's unknown error on a
//! host and inside a container, JAX's wrappers of a CUDA library that could
//! not be loaded or is too old, Python's faulthandler on Windows, and crash
//! statuses given in wait()'s encoding. Each log is written from the
//! emitting program's template (the patterns' `sources`), with training
//! output around it.

mod common;

use common::{fact, finding, has, report};
use cudnnlog::catalog::Severity;
use cudnnlog::Report;

fn top_cause(r: &Report, class: &str) -> String {
    finding(r, class).causes[0].id.clone()
}

// ---------------------------------------------------------------- NVML's unknown error

#[test]
fn nvml_unknown_error_inside_a_container_is_lost_device_access() {
    let r = report(
        b"epoch 4 step 5200 loss 0.3817\n\
          epoch 4 step 5300 loss 0.3790\n\
          root@098b49afe624:/workspace# nvidia-smi\n\
          Failed to initialize NVML: Unknown Error\n\
          root@098b49afe624:/workspace# python train.py --resume ckpt/last.pt\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
    let f = finding(&r, "cuda.no_device");
    assert_eq!(f.pattern, "cuda-no-device-nvml-unknown-error");
    assert_eq!(r.environment["container"], "docker");
    assert_eq!(top_cause(&r, "cuda.no_device"), "container_lost_gpu");
    assert!(
        f.causes[0].evidence.iter().any(|e| e.contains("container")),
        "{:?}",
        f.causes[0]
    );
}

#[test]
fn nvml_unknown_error_from_kubectl_exec_names_kubernetes() {
    let r = report(
        b"$ kubectl exec -it llm-train-0 -- nvidia-smi -L\n\
          Failed to initialize NVML: Unknown Error\n\
          command terminated with exit code 255\n",
    );
    assert_eq!(r.environment["container"], "kubernetes");
    assert_eq!(top_cause(&r, "cuda.no_device"), "container_lost_gpu");
}

#[test]
fn nvml_unknown_error_on_a_bare_host_suspects_the_driver() {
    let r = report(
        b"+ nvidia-smi\n\
          Failed to initialize NVML: Unknown Error\n\
          + python train.py --config configs/base.yaml\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
    assert!(
        !r.environment.contains_key("container"),
        "{:?}",
        r.environment
    );
    assert_ne!(top_cause(&r, "cuda.no_device"), "container_lost_gpu");
}

#[test]
fn pynvml_unknown_error_is_the_same_failure() {
    let r = report(
        b"INFO 12-06 09:14:02 [__init__.py:239] Automatically detected platform cuda.\n\
          Traceback (most recent call last):\n  \
          File \"/usr/local/lib/python3.10/dist-packages/pynvml.py\", line 2248, in nvmlInit\n    \
          _nvmlCheckReturn(ret)\n  \
          File \"/usr/local/lib/python3.10/dist-packages/pynvml.py\", line 979, in _nvmlCheckReturn\n    \
          raise NVMLError(ret)\n\
          pynvml.NVMLError_Unknown: Unknown Error\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
    assert_eq!(
        fact(&r, "cuda.no_device", "exception"),
        "pynvml.NVMLError_Unknown"
    );
}

// ---------------------------------------------------------------- JAX's library checks

#[test]
fn jax_0_4_20_short_message_is_the_library_and_the_fallback_its_fallout() {
    let r = report(
        b"I1206 10:01:02.123456 140093 train.py:40] starting run, 8 hosts\n\
          WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load cuPTI. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n\
          I1206 10:01:09.554321 140093 train.py:61] step 0 loss 2.3026\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.library_missing"));
    let lib = finding(&r, "cuda.library_missing");
    assert_eq!(lib.pattern, "cuda-library-missing-jax");
    assert_eq!(fact(&r, "cuda.library_missing", "old_library"), "cuPTI");
    let wrapper = finding(&r, "cuda.no_device");
    assert_eq!(wrapper.fallout_of.as_deref(), Some("cuda.library_missing"));
}

#[test]
fn a_backend_error_naming_cudnn_follows_the_cudnn_failure() {
    let r = report(
        b"Traceback (most recent call last):\n  \
          File \"/work/train.py\", line 12, in <module>\n    \
          print(jax.devices())\n  \
          File \"/opt/venv/lib/python3.11/site-packages/jax/_src/xla_bridge.py\", line 872, in devices\n    \
          return get_backend(backend).devices()\n\
          RuntimeError: Unable to initialize backend 'cuda': Unable to load cuDNN. Is it installed? (set JAX_PLATFORMS='' to automatically choose an available backend)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.library_missing"));
    let wrapper = finding(&r, "cuda.no_device");
    assert_eq!(wrapper.pattern, "cuda-no-device-jax-backend");
    assert_eq!(wrapper.fallout_of.as_deref(), Some("cudnn.library_missing"));
    assert!(wrapper.remediations.is_empty());
}

#[test]
fn jax_found_an_older_cudnn_before_the_backend_error() {
    let r = report(
        b"RuntimeError: Unable to initialize backend 'cuda': Found cuDNN version 8500, but JAX was built against version 8600, which is newer. The copy of cuDNN that is installed must be at least as new as the version against which JAX was built. (set JAX_PLATFORMS='' to automatically choose an available backend)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.version_mismatch"));
    assert_eq!(
        finding(&r, "cuda.no_device").fallout_of.as_deref(),
        Some("cudnn.version_mismatch")
    );
}

#[test]
fn jax_outdated_cublas_is_a_library_jax_cannot_use() {
    let r = report(
        b"WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\n\
          Outdated cuBLAS installation found.\n\
          Version JAX was built against: 120304\n\
          Minimum supported: 120100\n\
          Installed version: 120002\n\
          The local installation version must be no lower than 120100..(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n\
          Epoch 1: loss=2.2914 (3.8 s/step)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.library_missing"));
    let f = finding(&r, "cuda.library_missing");
    assert_eq!(f.pattern, "cuda-library-missing-jax-outdated");
    assert_eq!(fact(&r, "cuda.library_missing", "library"), "cuBLAS");
    assert_eq!(top_cause(&r, "cuda.library_missing"), "version_mismatch");
    assert_eq!(
        finding(&r, "cuda.no_device").fallout_of.as_deref(),
        Some("cuda.library_missing")
    );
}

#[test]
fn jax_0_4_x_found_an_older_cusparse() {
    let r = report(
        b"CUDA backend failed to initialize: Found cuSPARSE version 12001, but JAX was built against version 12100, which is newer. The copy of cuSPARSE that is installed must be at least as new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.library_missing"));
    assert_eq!(
        fact(&r, "cuda.library_missing", "found_library"),
        "cuSPARSE"
    );
    assert_eq!(fact(&r, "cuda.library_missing", "built_version"), "12100");
}

#[test]
fn dnn_library_initialization_follows_the_cudnn_it_loaded() {
    let r = report(
        b"E0305 11:42:07.114212   48213 cuda_dnn.cc:535] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n\
          Traceback (most recent call last):\n  \
          File \"/home/user/train/train_jax.py\", line 58, in <module>\n    \
          state, metrics = train_step(state, batch)\n\
          jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.version_mismatch"));
    assert_eq!(
        finding(&r, "cudnn.not_initialized").fallout_of.as_deref(),
        Some("cudnn.version_mismatch")
    );
}

#[test]
fn a_jax_fallback_without_a_library_failure_stands_alone() {
    let r = report(
        b"An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n\
          step 0 loss 2.3026\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
    assert!(finding(&r, "cuda.no_device").fallout_of.is_none());
}

// ---------------------------------------------------------------- faulthandler on Windows

#[test]
fn windows_faulthandler_access_violation_is_a_crash() {
    let r = report(
        b"Epoch 1/20:  43%|####3     | 520/1200 [02:11<02:52,  3.95it/s, loss=0.812]\n\
          Windows fatal exception: access violation\n\
          \n\
          Current thread 0x00003b2c (most recent call first):\n  \
          File \"C:\\Users\\me\\miniconda3\\envs\\dl\\lib\\site-packages\\torch\\nn\\modules\\conv.py\", line 456 in _conv_forward\n  \
          File \"C:\\Users\\me\\proj\\train.py\", line 88 in train_step\n\
          \n\
          Process finished with exit code -1073741819 (0xC0000005)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-python-windows-fatal");
    assert_eq!(
        fact(&r, "proc.segfault", "exception_name"),
        "access violation"
    );
}

#[test]
fn windows_faulthandler_names_other_codes_in_hex() {
    let r = report(
        b"[W 12:03:11] dataloader: 4 workers\n\
          Windows fatal exception: code 0xc0000409\n\
          \n\
          Thread 0x00002a10 (most recent call first):\n  \
          File \"C:\\Python311\\Lib\\site-packages\\numpy\\linalg\\linalg.py\", line 561 in inv\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    assert_eq!(fact(&r, "proc.segfault", "ntstatus"), "0xc0000409");
    assert_eq!(finding(&r, "proc.segfault").severity, Severity::Error);
}

#[test]
fn a_handled_com_exception_in_a_passing_test_run_is_not_a_crash() {
    let r = report(
        b"tests\\test_presentation_mode.py ..........                   [100%]\n\
          10 passed in 3.11s\n\
          Windows fatal exception: code 0x8001010d\n\
          \n\
          Current thread 0x00001470 (most recent call first):\n  \
          File \"C:\\proj\\tests\\test_presentation_mode.py\", line 97 in _press\n",
    );
    assert!(!has(&r, "proc.segfault"), "{:?}", r.findings);
}

// ---------------------------------------------------------------- wait statuses

#[test]
fn os_system_wait_status_of_a_segfault_is_a_crash() {
    let r = report(
        // the child's stderr went elsewhere: the script's own line is all there is
        b"[2026-12-06 09:12:44] launching: python tools/train_net.py --config-file configs/mask_rcnn.yaml\n\
          [2026-12-06 09:13:02] ERROR run_all.py: training failed with exit code 35584\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-wait-status");
    assert_eq!(fact(&r, "proc.segfault", "sigsegv"), "35584");
}

#[test]
fn a_wait_status_of_an_abort_gets_its_signal_stated() {
    let r = report(b"step 900 loss 1.2040\nos.system returned 34304\n");
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-wait-status");
    assert!(
        f.remediations
            .iter()
            .any(|s| s.contains("34304") && s.contains("SIGABRT")),
        "{:?}",
        f.remediations
    );
}

#[test]
fn wait_status_256_is_exit_status_1_not_a_crash() {
    for line in [
        "RuntimeError: Command failed with exit code 256: python tools/train_net.py",
        "subprocess.CalledProcessError: Command 'bash run.sh' returned non-zero exit status 256.",
        "training script exited with code 256",
        "Process finished with exit code 1",
    ] {
        let r = report(format!("epoch 1 loss 2.31\n{line}\n").as_bytes());
        assert!(!has(&r, "proc.segfault"), "{line}: {:?}", r.findings);
        assert!(!has(&r, "host.oom_killed"), "{line}: {:?}", r.findings);
    }
}
