//! Recall on native-crash and numeric-status wordings found on fresh logs:
//! Windows NTSTATUS exit codes, zsh's other signal names, CUDA statuses
//! given as numbers or as the runtime's error string, and Julia's GPU
//! out-of-memory error. Each log is written from the emitting program's
//! template (the patterns' `sources`), with training output before it.

mod common;

use common::{fact, finding, has, report};

// ---------------------------------------------------------------- Windows NTSTATUS exit codes

#[test]
fn pycharm_reports_a_fail_fast_abort_as_a_crash() {
    let r = report(
        b"C:\\Users\\me\\miniconda3\\envs\\dl\\python.exe C:\\Users\\me\\proj\\train.py\n\
          Epoch 1/10: loss 2.3021\n\
          Epoch 2/10: loss 1.8817\n\
          \n\
          Process finished with exit code -1073740791 (0xC0000409)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-windows-ntstatus");
    assert_eq!(fact(&r, "proc.segfault", "exit_code"), "-1073740791");
    assert_eq!(fact(&r, "proc.segfault", "ntstatus"), "0xC0000409");
}

#[test]
fn a_subprocess_access_violation_in_unsigned_decimal() {
    let r = report(
        b"Building extension module fused_adam...\n\
          Traceback (most recent call last):\n  \
          File \"C:\\proj\\run.py\", line 14, in <module>\n    \
          subprocess.run([\"python\", \"train.py\"], check=True)\n  \
          File \"C:\\Python311\\Lib\\subprocess.py\", line 571, in run\n    \
          raise CalledProcessError(retcode, process.args,\n\
          subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 3221225477.\n",
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    assert_eq!(fact(&r, "proc.segfault", "exit_code"), "3221225477");
    assert!(!has(&r, "python.exception"), "{:?}", r.findings);
}

#[test]
fn ordinary_windows_exit_codes_are_not_crashes() {
    for line in [
        "Process finished with exit code 0",
        "Process finished with exit code 1",
        "Process finished with exit code -1073741510 (0xC000013A: interrupted by Ctrl+C)",
    ] {
        let r = report(format!("Epoch 1/10: loss 2.3021\n{line}\n").as_bytes());
        assert!(!has(&r, "proc.segfault"), "{line}: {:?}", r.findings);
    }
}

// ---------------------------------------------------------------- zsh's signal names

#[test]
fn zsh_iot_instruction_is_sigabrt() {
    let r = report(
        "epoch 2 step 1200 loss 0.8812\n\
         epoch 2 step 1300 loss 0.8710\n\
         free(): invalid pointer\n\
         zsh: IOT instruction (core dumped)  python train.py --config configs/base.yaml\n"
            .as_bytes(),
    );
    assert_eq!(r.primary.as_deref(), Some("proc.segfault"));
    let f = finding(&r, "proc.segfault");
    assert_eq!(f.pattern, "proc-segfault-shell-zsh-iot");
    assert_eq!(fact(&r, "proc.segfault", "signal_name"), "SIGABRT");
    assert!(f.title.ends_with("(SIGABRT)"), "{}", f.title);
}

#[test]
fn zsh_job_notice_and_trace_trap() {
    let r = report(b"[1]  + 48211 IOT instruction (core dumped)  python train.py\n");
    assert_eq!(fact(&r, "proc.segfault", "signal_name"), "SIGABRT");
    let r = report(b"step 10 loss 1.2\nzsh: trace trap  python bench.py\n");
    assert_eq!(fact(&r, "proc.segfault", "signal_name"), "SIGTRAP");
}

// ---------------------------------------------------------------- CUDA statuses as numbers or strings

#[test]
fn gpuassert_names_the_class_by_the_error_string() {
    let r = report(
        b"iteration 30: residual 3.1e-03\n\
          iteration 40: residual 1.2e-03\n\
          GPUassert: out of memory /home/user/solver/kernel.cu 88\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(finding(&r, "cuda.oom").pattern, "cuda-error-gpuassert");
    assert_eq!(fact(&r, "cuda.oom", "status"), "cudaErrorMemoryAllocation");
}

#[test]
fn the_samples_code_and_a_bare_cuda_error_code_follow_the_number() {
    let r = report(
        b"[Matrix Multiply Using CUDA] - Starting...\n\
          GPU Device 0: \"Ampere\" with compute capability 8.6\n\n\
          MatrixA(16000,16000), MatrixB(16000,16000)\n\
          cudaMalloc d_A returned error out of memory (code 2), line(165)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(fact(&r, "cuda.oom", "code"), "2");
    let r = report(b"launching 4096 blocks\nCUDA error code 700 at src/kernels/attention.cu:412\n");
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
}

#[test]
fn cuda_jl_names_code_and_enum_after_the_string() {
    let r = report(
        b"ERROR: LoadError: CUDA error: an illegal memory access was encountered (code 700, ERROR_ILLEGAL_ADDRESS)\n\
          Stacktrace:\n  [1] throw_api_error(res::CUDA.cudaError_enum)\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
}

#[test]
fn a_number_without_a_cuda_framing_is_not_a_status() {
    let r = report(
        b"worker exited with error code 2\n\
          cudaMemcpy returned error no error (code 0), line(170)\n",
    );
    assert!(
        !r.findings.iter().any(|f| f.class.starts_with("cuda.")),
        "{:?}",
        r.findings
    );
}

// ---------------------------------------------------------------- Julia CUDA.jl

#[test]
fn cuda_jl_out_of_gpu_memory_is_cuda_oom_with_sizes() {
    let r = report(
        b"Epoch 3, batch 100: loss = 0.4310\n\
          Epoch 3, batch 120: loss = 0.4182\n\
          ERROR: LoadError: Out of GPU memory trying to allocate 3.815 GiB\n\
          Effective GPU memory usage: 99.23% (15.561 GiB/15.682 GiB)\n\
          Memory pool usage: 11.207 GiB (11.594 GiB reserved)\n\
          Stacktrace:\n  \
          [1] throw_api_error(res::CUDA.cudaError_enum)\n    \
          @ CUDA ~/.julia/packages/CUDA/Tl08O/lib/cudadrv/libcuda.jl:30\n",
    );
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    assert_eq!(finding(&r, "cuda.oom").pattern, "cuda-oom-julia");
    assert_eq!(fact(&r, "cuda.oom", "requested_bytes"), "4096325059");
    assert_eq!(fact(&r, "cuda.oom", "reserved_bytes"), "12448962707");
    assert!(!has(&r, "python.exception"), "{:?}", r.findings);
}
