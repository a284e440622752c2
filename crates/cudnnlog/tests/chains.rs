//! A framework's chained errors are one story: when a library could not be
//! set up (a cuDNN version mismatch, a handle that could not be created, a
//! GPU the process cannot use), the framework's later errors for the calls
//! that needed it — TensorFlow's "Failed to get convolution algorithm" and
//! "DNN library is not found", XLA's "DNN library initialization failed" —
//! are its fallout, carry its causes, and give no advice of their own.
//! Each log follows the frameworks' templates (TensorFlow's and XLA's
//! `cuda_dnn.cc`, `conv_ops.cc`, `pjrt_stream_executor_client.cc`), with
//! the start-up and training output around them.

mod common;

use common::{finding, report};
use cudnnlog::report::Finding;

/// The fallout's first cause is its cause's, with the link as evidence.
fn takes_causes_of(fallout: &Finding, cause: &Finding) {
    let top = &fallout.causes[0];
    assert_eq!(top.id, cause.causes[0].id, "{:#?}", fallout.causes);
    assert!(
        top.evidence.iter().any(|e| e.starts_with(&format!(
            "follows {} on line {}",
            cause.class, cause.first.line
        ))),
        "{:?}",
        top.evidence
    );
    assert!(
        fallout.remediations.is_empty(),
        "{:?}",
        fallout.remediations
    );
}

#[test]
fn tensorflow_conv_algorithm_failure_follows_the_handle_that_was_not_created() {
    let r = report(
        b"2020-09-02 14:01:12.330941: I tensorflow/stream_executor/platform/default/dso_loader.cc:48] Successfully opened dynamic library libcudnn.so.7\n\
          Epoch 1/5\n\
          2020-09-02 14:01:13.101225: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n\
          2020-09-02 14:01:13.107761: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n\
          Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    model.fit(x_train, y_train, epochs=5)\n\
          tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.\n\
          \t [[node sequential/conv2d/Conv2D (defined at train.py:88) ]] [Op:__inference_train_function_1057]\n\
          \nFunction call stack:\ntrain_function\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.not_initialized"));
    let handle = finding(&r, "cudnn.not_initialized");
    let conv = finding(&r, "cudnn.conv_algo_failed");
    assert_eq!(conv.fallout_of.as_deref(), Some("cudnn.not_initialized"));
    takes_causes_of(conv, handle);
    // The status the handle's message carries stays linked to it, not
    // turned into a cause of its own.
    let status = finding(&r, "cudnn.internal_error");
    assert_eq!(status.fallout_of, None);
    assert!(status.carried_by.is_some());
}

#[test]
fn dnn_library_not_found_follows_the_cudnn_version_mismatch() {
    let r = report(
        b"2023-03-14 10:22:33.456789: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1613] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 22282 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 3090, pci bus id: 0000:01:00.0, compute capability: 8.6\n\
          Epoch 1/10\n\
          2023-03-14 10:22:36.790000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n\
          2023-03-14 10:22:36.791000: W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at conv_ops.cc:1068 : UNIMPLEMENTED: DNN library is not found.\n\
          tensorflow.python.framework.errors_impl.UnimplementedError: Graph execution error:\n\n\
          Detected at node 'sequential/conv2d/Conv2D' defined at (most recent call last):\n\
          Node: 'sequential/conv2d/Conv2D'\nDNN library is not found.\n\
          \t [[{{node sequential/conv2d/Conv2D}}]] [Op:__inference_train_function_1234]\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.version_mismatch"));
    let mismatch = finding(&r, "cudnn.version_mismatch");
    assert_eq!(mismatch.causes[0].id, "version_mismatch");
    let missing = finding(&r, "cudnn.library_missing");
    assert_eq!(
        missing.fallout_of.as_deref(),
        Some("cudnn.version_mismatch")
    );
    takes_causes_of(missing, mismatch);
}

#[test]
fn xla_dnn_initialization_failure_follows_the_version_mismatch() {
    let r = report(
        b"2024-02-11 08:15:02.123456: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n\
          2024-02-11 08:15:02.125001: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2732] Execution of replica 0 failed: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n\
          Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 31, in <module>\n    state, loss = train_step(state, batch)\n\
          jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.version_mismatch"));
    let init = finding(&r, "cudnn.not_initialized");
    assert_eq!(init.fallout_of.as_deref(), Some("cudnn.version_mismatch"));
    takes_causes_of(init, finding(&r, "cudnn.version_mismatch"));
}

/// A failed set-up explains only the calls that needed it, in its own
/// process: running out of GPU memory is not what a cuDNN mismatch makes,
/// and another rank's conv failure is that rank's own.
#[test]
fn a_set_up_failure_explains_only_its_own_process_calls_that_need_it() {
    let r = report(
        b"[rank1]: 2023-03-14 10:22:36.790000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching major version and equal or higher minor version.\n\
          [rank0]: tensorflow.python.framework.errors_impl.UnknownError:  Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.\n\
          [rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.\n",
    );
    assert_eq!(finding(&r, "cudnn.conv_algo_failed").fallout_of, None);
    assert_eq!(finding(&r, "cuda.oom").fallout_of, None);
}

/// `setup` is checked data: a user class may declare what it sets up, and
/// a scope that names no class family is refused, naming the class.
#[test]
fn a_set_up_scope_must_name_a_class_family() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-setup-scope-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("classes.toml"),
        "[[class]]\nid = \"myfw.init_failed\"\nfamily = \"framework\"\nsetup = \"myfww\"\n\
         title = \"myfw did not start\"\nsummary = \"myfw could not initialise.\"\n",
    )
    .unwrap();
    let built = cudnnlog::CatalogBuilder::new().add_dir(&dir).build();
    std::fs::remove_dir_all(&dir).unwrap();
    let Err(err) = built else {
        panic!("an unknown setup scope is refused")
    };
    let msg = err.to_string();
    assert!(
        msg.contains("class.setup") && msg.contains("myfw.init_failed") && msg.contains("myfww"),
        "{msg}"
    );
}

/// TensorFlow's "Cannot dlopen some GPU libraries" gives the libraries
/// named before it as its reason: with warnings only, the missing library
/// is the primary warning and the skipped GPU its fallout, not the other
/// way round (`warning_order` ranks "no GPU" first).
#[test]
fn tensorflow_skipping_the_gpu_follows_the_library_it_could_not_load() {
    let r = report(
        b"2021-06-01 10:00:00.000001: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n\
          2021-06-01 10:00:00.000002: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1835] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for your platform.\n\
          Skipping registering GPU devices...\nEpoch 1/3\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cudnn.library_missing"));
    let skipped = finding(&r, "cuda.no_device");
    assert_eq!(skipped.fallout_of.as_deref(), Some("cudnn.library_missing"));
    assert!(skipped.remediations.is_empty());
}
