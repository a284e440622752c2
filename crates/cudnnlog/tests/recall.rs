//! Logs the way people really produce and paste them: launchers that print
//! only `str(exc)`, pasted last lines, excerpts cut mid-traceback, notebooks,
//! JSON loggers, glued writers, wrapped terminals, markdown pastes, worker
//! tags — and the severity and primary the context gives a message. Each log
//! is written from the message's real template; each must give the report a
//! clean capture of the same failure gives, scanned whole and streamed in
//! small blocks alike.

use cudnnlog::catalog::Severity;
use cudnnlog::report::{FindingsSink, Outcome};
use cudnnlog::{Catalog, Report, ScannerBuilder};

fn report(log: &str) -> Report {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(scanner.catalog());
    scanner.scan_slice(log.as_bytes(), &mut sink).unwrap();
    let whole = sink.into_report();
    // Streamed in blocks of 4 KiB with small contexts: the same report.
    let small = ScannerBuilder::new()
        .block_size(4096)
        .context_before(2048)
        .context_after(2048)
        .lookback(2048)
        .build(Catalog::builtin().unwrap());
    let mut sink = FindingsSink::new(small.catalog());
    small
        .scan_reader("<memory>", log.as_bytes(), &mut sink)
        .unwrap();
    let mut streamed = sink.into_report();
    streamed.sources[0].path = whole.sources[0].path.clone();
    assert_eq!(classes(&streamed), classes(&whole), "streamed differs");
    assert_eq!(streamed.primary, whole.primary, "streamed primary differs");
    whole
}

fn classes(r: &Report) -> Vec<(String, Severity, u64)> {
    r.findings
        .iter()
        .map(|f| (f.class.clone(), f.severity, f.first.line))
        .collect()
}

fn has(r: &Report, class: &str) -> bool {
    r.findings.iter().any(|f| f.class == class)
}

fn finding<'r>(r: &'r Report, class: &str) -> &'r cudnnlog::report::Finding {
    r.findings
        .iter()
        .find(|f| f.class == class)
        .unwrap_or_else(|| panic!("no {class} in {:?}", classes(r)))
}

// ---------------------------------------------------------------- exceptions without a traceback

#[test]
fn a_launcher_that_prints_only_the_exception() {
    let r = report(
        "[launcher] starting 8 workers\n\
         worker 3 exited with an exception:\n\
         ModuleNotFoundError: No module named 'deepspeed'\n",
    );
    assert_eq!(r.primary.as_deref(), Some("python.missing_module"));
    assert_eq!(finding(&r, "python.missing_module").first.line, 3);
    assert_eq!(r.outcome, Outcome::Failed);
}

#[test]
fn a_pasted_last_line_names_the_gpu_failure_not_the_runtime_error() {
    let r = report("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
    assert!(!has(&r, "python.runtime_error"), "{:?}", classes(&r));
}

#[test]
fn an_excerpt_that_starts_mid_traceback() {
    let r = report(
        "  File \"/home/user/train/data.py\", line 88, in __getitem__\n    \
         return self.items[idx][\"labels\"]\n\
         KeyError: 'labels'\n",
    );
    let f = finding(&r, "python.exception");
    assert_eq!(
        (f.first.line, f.facts["exception"].to_string()),
        (3, "KeyError".to_string())
    );
}

#[test]
fn a_handled_exception_logged_as_a_warning_is_not_a_failure() {
    let r = report(
        "WARNING: ValueError: image 0042.jpg is truncated, skipping it\n\
         2026-11-29 19:41:04,724 INFO train: epoch 1 step 40 loss 0.41\n",
    );
    assert!(r.findings.is_empty(), "{:?}", classes(&r));
    assert_eq!(r.outcome, Outcome::Clean);
}

#[test]
fn an_ipython_traceback() {
    let r = report(
        "---------------------------------------------------------------------------\n\
         RuntimeError                              Traceback (most recent call last)\n\
         Cell In[4], line 3\n      \
         1 import torch\n\
         ----> 3 x = torch.zeros(1).cuda()\n\
         \n\
         File ~/miniconda3/lib/python3.10/site-packages/torch/cuda/__init__.py:298, in _lazy_init()\n    \
         296 if \"CUDA_MODULE_LOADING\" not in os.environ:\n\
         --> 298 torch._C._cuda_init()\n\
         \n\
         RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
    assert_eq!(finding(&r, "cuda.no_device").first.line, 11);
}

#[test]
fn a_traceback_nested_in_another_programs_output() {
    let r = report(
        "  error: subprocess-exited-with-error\n  \n  \
         × python setup.py egg_info did not run successfully.\n  \
         │ exit code: 1\n  \
         ╰─> [5 lines of output]\n      \
         Traceback (most recent call last):\n        \
         File \"<string>\", line 2, in <module>\n        \
         File \"/tmp/pip-install-x/apex/setup.py\", line 4, in <module>\n          \
         from packaging.version import parse\n      \
         ModuleNotFoundError: No module named 'packaging'\n      \
         [end of output]\n",
    );
    assert_eq!(r.primary.as_deref(), Some("python.missing_module"));
    assert_eq!(finding(&r, "python.missing_module").first.line, 10);
}

#[test]
fn a_rust_panic_that_carries_a_cuda_error() {
    let r = report(
        "thread 'main' panicked at src/main.rs:41:10:\n\
         called `Result::unwrap()` on an `Err` value: DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")\n\
         note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
}

// ---------------------------------------------------------------- text that was split or glued

#[test]
fn a_json_logger_with_escaped_newlines() {
    let r = report(concat!(
        r#"{"timestamp":"2024-02-13T22:19:07Z","level":"ERROR","message":"Shard 1 failed:\nTraceback (most recent call last):\n  File \"/opt/server/model.py\", line 12, in load\n    w = w.cuda()\nRuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call\n"}"#,
        "\n"
    ));
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
    assert_eq!(finding(&r, "cuda.illegal_address").first.line, 1);
}

#[test]
fn a_warning_glued_to_a_progress_bar_is_the_primary_of_a_run_that_went_on() {
    let r = report(
        "Sampling:   0%|          | 0/30 [00:00<?, ?it/s]/opt/venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  \
         return F.conv2d(input, weight, bias, self.stride,\n\
         Sampling: 100%|##########| 30/30 [00:09<00:00,  3.21it/s]\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.plan_failed"));
    assert_eq!(r.outcome, Outcome::Degraded);
    // The plan was rejected because it is not supported: one finding.
    assert!(!has(&r, "cudnn.not_supported"), "{:?}", classes(&r));
}

#[test]
fn an_exception_glued_to_a_tag() {
    let r = report("[stderr]RuntimeError: CUDA error: an illegal memory access was encountered\n");
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
}

#[test]
fn a_traceback_whose_newlines_were_lost() {
    let r = report(
        "Traceback (most recent call last):   File \"/work/run.py\", line 5, in <module>     import apex   File \"/venv/apex/__init__.py\", line 2, in <module>     from apex import amp_C ImportError: No module named 'amp_C'\n",
    );
    assert_eq!(r.primary.as_deref(), Some("python.missing_module"));
}

#[test]
fn a_message_soft_wrapped_after_blanks() {
    let r = report(
        "RuntimeError: grid_sampler_2d_backward_cuda does not have a deterministic implementation, but you set \n\
         'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, or you can use the \n\
         'warn_only=True' option, if that's acceptable for your application.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("torch.nondeterministic"));
}

#[test]
fn a_log_hard_wrapped_at_an_unusual_width_keeps_its_facts() {
    let message = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 77.95 GiB memory in use. Of the allocated memory 74.11 GiB is allocated by PyTorch, and 3.02 GiB is reserved by PyTorch but unallocated.";
    let mut log = String::from("Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 60, in <module>\n    loss.backward()\n");
    log.push_str(message);
    log.push('\n');
    let whole = report(&log);
    // The same text as a 90-column console shows it.
    let wrapped: String = log
        .lines()
        .flat_map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .chunks(90)
                .map(|c| c.iter().collect::<String>() + "\n")
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(wrapped.lines().filter(|l| l.len() == 90).count() >= 3);
    let r = report(&wrapped);
    let (a, b) = (finding(&whole, "cuda.oom"), finding(&r, "cuda.oom"));
    assert_eq!(a.facts, b.facts);
    assert!(
        b.facts.contains_key("reserved_unallocated_bytes"),
        "{:?}",
        b.facts
    );
}

// ---------------------------------------------------------------- pasted issue text

#[test]
fn a_traceback_quoted_in_markdown() {
    let r = report(
        "> Traceback (most recent call last):\n\
         >   File \"/home/user/train/train.py\", line 14, in <module>\n\
         >     loss = criterion(model(x), y)\n\
         > RuntimeError: CUDA error: device-side assert triggered\n\
         > Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.device_assert"));
    assert_eq!(finding(&r, "cuda.device_assert").first.line, 4);
}

#[test]
fn a_code_fence_glued_to_the_log() {
    let r = report(
        "```Traceback (most recent call last):\n  \
         File \"/srv/app.py\", line 3, in <module>\n    \
         import flash_attn\n\
         ModuleNotFoundError: No module named 'flash_attn'```\n",
    );
    let f = finding(&r, "python.missing_module");
    assert_eq!(f.facts["module"].to_string(), "flash_attn");
}

// ---------------------------------------------------------------- writers kept apart

#[test]
fn ray_workers_tracebacks_are_framed_apart() {
    let r = report(
        "(RayTrainWorker pid=4242, ip=10.0.0.7) Traceback (most recent call last):\n\
         (RayTrainWorker pid=4243, ip=10.0.0.8) Traceback (most recent call last):\n\
         (RayTrainWorker pid=4242, ip=10.0.0.7)   File \"/home/ray/train.py\", line 30, in train_func\n\
         (RayTrainWorker pid=4243, ip=10.0.0.8)   File \"/home/ray/train.py\", line 31, in train_func\n\
         (RayTrainWorker pid=4242, ip=10.0.0.7) KeyError: 'pixel_values'\n\
         (RayTrainWorker pid=4243, ip=10.0.0.8) ZeroDivisionError: division by zero\n",
    );
    assert_eq!(finding(&r, "python.exception").first.line, 5);
    assert_eq!(finding(&r, "python.zero_division").first.line, 6);
}

#[test]
fn an_error_line_behind_a_rank_tag_is_seen() {
    let r = report(
        "[rank3]:E1129 19:46:54.456820 12345 train.cc:88] my_custom_op failed: shard 17 unreadable\n",
    );
    assert_eq!(r.unclassified.len(), 1, "{:?}", r.unclassified);
}

// ---------------------------------------------------------------- severity and primary from context

#[test]
fn a_nan_loss_right_before_the_crash_is_the_primary() {
    let r = report(
        "2026-11-29 19:41:04,724 INFO train: epoch 3 step 2137 loss nan\n\
         \n\
         Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)\n",
    );
    assert_eq!(
        r.primary.as_deref(),
        Some("train.nan_loss"),
        "{:?}",
        classes(&r)
    );
    assert_eq!(finding(&r, "train.nan_loss").severity, Severity::Error);
    let segv = r
        .findings
        .iter()
        .position(|f| f.class == "proc.segfault")
        .unwrap();
    assert!(r.findings[segv].caused_by.is_some());
}

#[test]
fn an_abort_is_fallout_of_the_error_before_it() {
    let r = report(
        "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory\n\
         Aborted (core dumped)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.library_missing"));
    let abort = finding(&r, "proc.segfault");
    assert!(abort.caused_by.is_some());
}

#[test]
fn a_carried_status_is_linked_to_its_symptom_with_its_severity() {
    let r = report(
        "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a CuDNNError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n",
    );
    let plan = r
        .findings
        .iter()
        .position(|f| f.class == "cudnn.plan_failed")
        .unwrap();
    let status = finding(&r, "cudnn.execution_failed");
    assert_eq!(status.carried_by, Some(plan));
    assert_eq!(status.severity, Severity::Warning);
    assert_eq!(r.primary.as_deref(), Some("cudnn.plan_failed"));
}

#[test]
fn the_most_important_warning_is_primary() {
    let r = report(
        "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n\
         An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n",
    );
    assert_eq!(r.outcome, Outcome::Degraded);
    assert_eq!(r.primary.as_deref(), Some("cuda.no_device"));
}

#[test]
fn a_gpu_that_fell_off_the_bus_explains_the_errors_printed_before_it() {
    let r = report(
        "RuntimeError: CUDA error: unspecified launch failure\n\
         [ 8841.223190] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.ecc_xid"));
    assert!(finding(&r, "cuda.launch_failure").caused_by.is_some());
}

#[test]
fn a_line_exactly_as_wide_as_the_wrap_does_not_hide_the_exception_after_it() {
    // A console wrapped at 80 columns: the frame line happens to be exactly
    // 80 wide, and the exception line after it must stay its own line.
    let frame = format!("    {}", "y".repeat(76));
    let mut log = String::from("Traceback (most recent call last):\n");
    log.push_str(&format!(
        "{}\n{}\n",
        "x".repeat(80),
        "rest of the wrapped line"
    ));
    log.push_str(&format!("{frame}\n"));
    log.push_str("RuntimeError: CUDA error: an illegal memory access was encountered\n");
    log.push_str(&format!("{}\n{}\n", "z".repeat(80), "tail"));
    assert_eq!(frame.len(), 80);
    let r = report(&log);
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
    assert_eq!(finding(&r, "cuda.illegal_address").first.line, 5);
}
