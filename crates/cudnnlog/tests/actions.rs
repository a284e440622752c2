//! What to do with a failed job: the catalog's decisions by class, cause
//! and pattern, and a job's attempts overruling them.

mod common;

use common::report;
use cudnnlog::fleet::{group, scan_job, Verdict};
use cudnnlog::report::{Action, Outcome};
use cudnnlog::{Catalog, CatalogBuilder, MmapChoice, ScannerBuilder};
use std::path::{Path, PathBuf};

/// PyTorch 2.x's message, as `c10/cuda/CUDACachingAllocator.cpp` writes it.
const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 77.94 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.";

/// A worker's stderr: training steps up to `last`, then `error` in a
/// traceback.
fn worker(last: u64, error: &str) -> String {
    let mut log = String::new();
    for step in (100..=last).step_by(100) {
        log.push_str(&format!(
            "[2026-11-29 10:{:02}:00,000] INFO train: step {step} loss 2.{step}\n",
            step / 100
        ));
    }
    log.push_str("Traceback (most recent call last):\n  File \"/home/user/train/train.py\", line 88, in <module>\n    loss.backward()\n");
    log.push_str(error);
    log.push('\n');
    log
}

/// A directory of its own under the system's temporary one.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let p =
            std::env::temp_dir().join(format!("cudnnlog-actions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The verdict of the one job the files make (torchrun's `--log-dir`
/// layout: each `attempt_N` a run of the job).
fn verdict(paths: &[PathBuf]) -> Verdict {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let jobs = group(paths);
    assert_eq!(jobs.len(), 1, "one job: {jobs:?}");
    scan_job(&scanner, &jobs[0], MmapChoice::never()).verdict
}

fn attempts(dir: &Dir, logs: &[(u64, &str)]) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (n, (step, error)) in logs.iter().enumerate() {
        paths.push(dir.write(
            &format!("out/attempt_{n}/0/stderr.log"),
            &worker(*step, error),
        ));
        paths.push(dir.write(&format!("out/attempt_{n}/1/stderr.log"), &worker(*step, "")));
    }
    paths
}

#[test]
fn the_same_failure_at_the_same_step_in_two_attempts_means_stop() {
    let dir = Dir::new("same-step");
    let paths = attempts(&dir, &[(300, OOM), (300, OOM)]);
    let v = verdict(&paths);
    assert_eq!(
        (v.primary.as_deref(), v.action),
        (Some("cuda.oom"), Some(Action::Stop))
    );
    let why = v.retryable_because.unwrap();
    assert!(
        why.starts_with(
            "the last two attempts failed the same way (cuda.oom) at the same step, 300"
        ),
        "{why}"
    );
}

#[test]
fn an_attempt_that_got_further_means_retry_even_for_a_class_that_stops() {
    let dir = Dir::new("progress");
    let paths = attempts(&dir, &[(300, OOM), (900, OOM)]);
    let v = verdict(&paths);
    assert_eq!(v.action, Some(Action::Retry));
    let why = v.retryable_because.unwrap();
    assert!(
        why.contains("the last attempt got further than the one before (step 900, past step 300)"),
        "{why}"
    );
    // One attempt alone: the class decides (the same memory is needed again).
    let one = verdict(&paths[..2]);
    assert_eq!(one.action, Some(Action::Stop));
}

#[test]
fn an_attempt_that_failed_earlier_leaves_the_decision_to_the_catalog() {
    let dir = Dir::new("regress");
    let paths = attempts(&dir, &[(900, OOM), (300, OOM)]);
    let v = verdict(&paths);
    let why = v.retryable_because.unwrap();
    assert_eq!(v.action, Some(Action::Stop));
    assert!(!why.contains("attempt"), "{why}");
}

#[test]
fn separate_files_of_no_layout_are_separate_jobs_with_their_own_actions() {
    let dir = Dir::new("separate");
    let a = dir.write("a.log", &worker(300, OOM));
    let b = dir.write("b.log", &worker(300, OOM));
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let jobs = group(&[a, b]);
    assert_eq!(jobs.len(), 2);
    for job in &jobs {
        let v = scan_job(&scanner, job, MmapChoice::never()).verdict;
        assert!(!v.retryable_because.unwrap().contains("attempt"));
    }
}

#[test]
fn the_catalog_decides_by_class_pattern_and_evidenced_cause() {
    // A class: a missing module is missing on a rerun too.
    let r = report(b"Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import apex\nModuleNotFoundError: No module named 'apex'\n");
    assert_eq!(r.action, Some(Action::Stop));
    // A pattern with the fact that decides: preempted, not cancelled.
    let preempted = report(b"slurmstepd: error: *** JOB 5521 ON gpu-a17 CANCELLED AT 2026-11-30T02:11:09 DUE TO PREEMPTION ***\n");
    assert_eq!(
        (preempted.primary.as_deref(), preempted.action),
        (Some("sched.cancelled"), Some(Action::Retry))
    );
    let cancelled = report(
        b"slurmstepd: error: *** JOB 5521 ON gpu-a17 CANCELLED AT 2026-11-30T02:11:09 ***\n",
    );
    assert_eq!(cancelled.action, Some(Action::Stop));
    let requeued = report(b"slurmstepd: error: *** JOB 5521 ON gpu-a17 CANCELLED AT 2026-11-30T02:11:09 DUE TO JOB REQUEUE ***\n");
    assert_eq!(requeued.action, Some(Action::Retry));
    // A hardware fault belongs to the node.
    let xid = report(b"[Sat Nov 29 10:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n");
    assert_eq!(xid.action, Some(Action::Retry));
    // An out-of-memory error whose memory another process held: the
    // evidenced cause beats the class.
    let foreign = report(format!("{}\n", OOM.replace("Including non-PyTorch memory, this process has 77.94 GiB memory in use.", "Process 4127 has 61.20 GiB memory in use. Including non-PyTorch memory, this process has 16.10 GiB memory in use.")).as_bytes());
    let top = &common::finding(&foreign, "cuda.oom").causes[0];
    assert_eq!(top.id, "foreign_process", "{top:?}");
    assert_eq!(foreign.action, Some(Action::Retry));
}

#[test]
fn a_timeout_of_the_first_collective_is_not_a_passing_stall() {
    // ProcessGroupNCCL's watchdog (PyTorch 2.x), as `WorkNCCL`'s
    // operator<< writes the work.
    let watchdog = |seq: u32| {
        format!("[rank1]:[E918 23:18:00.308397639 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=BROADCAST, NumelIn=233373696, NumelOut=233373696, Timeout(ms)=600000) ran for 600023 milliseconds before timing out.\n")
    };
    let first = report(watchdog(1).as_bytes());
    assert_eq!(
        (first.primary.as_deref(), first.action),
        (Some("nccl.timeout"), Some(Action::Stop))
    );
    assert!(first
        .retryable_because
        .unwrap()
        .contains("very first collective"));
    let later = report(watchdog(4812).as_bytes());
    assert_eq!(later.action, Some(Action::Retry));
    // PyTorch 2.2-2.3's status line: nothing completed.
    let status = report(b"[Rank 0] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: 0.\n");
    assert_eq!(status.action, Some(Action::Stop));
    let status = report(b"[Rank 0] Timeout at NCCL work: 912, last enqueued NCCL work: 912, last completed NCCL work: 911.\n");
    assert_eq!(status.action, Some(Action::Retry));
}

#[test]
fn an_investigate_class_takes_the_action_nearly_all_its_causes_share() {
    // cuDNN's execution failure: a version, the architecture, memory or a
    // framework bug far more often than a GPU fault.
    let r = report(b"RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n");
    assert_eq!(r.action, Some(Action::Stop));
    assert!(r.retryable_because.unwrap().contains("of the likely ones"));
    // An unspecified launch failure: a framework bug or a failing GPU
    // about as often, and the log does not say.
    let r = report(b"RuntimeError: CUDA error: unspecified launch failure\n");
    assert_eq!(
        (r.primary.as_deref(), r.action),
        (Some("cuda.launch_failure"), Some(Action::Investigate))
    );
}

#[test]
fn a_degraded_run_gets_its_warnings_action_and_a_clean_one_none() {
    let warned = report(b"/usr/lib/python3/dist-packages/torch/cuda/__init__.py:235: UserWarning: \nNVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n");
    assert_eq!(warned.outcome, Outcome::Degraded);
    assert_eq!(warned.action, Some(Action::Stop));
    let clean = report(b"INFO train: step 100 loss 2.31\nINFO train: step 200 loss 2.05\n");
    assert_eq!(
        (clean.outcome, clean.action, clean.retryable_because),
        (Outcome::Clean, None, None)
    );
}

#[test]
fn every_class_of_the_builtin_catalog_has_a_decision_with_a_reason() {
    let catalog = Catalog::builtin().unwrap();
    for class in catalog.classes() {
        let rule = catalog.actions().class(&class.id);
        assert!(
            rule.is_some_and(|r| r.because.ends_with('.')),
            "{}: {rule:?}",
            class.id
        );
    }
}

fn load(dir: &Path, actions: &str) -> Result<Catalog, cudnnlog::Error> {
    std::fs::write(dir.join("actions.toml"), actions).unwrap();
    CatalogBuilder::new().add_dir(dir).build()
}

#[test]
fn a_user_catalog_overrides_a_decision_and_unknown_ids_are_refused() {
    let dir = Dir::new("catalog");
    let c = load(&dir.0, "[[class]]\nid = \"cuda.oom\"\naction = \"retry\"\nbecause = \"our jobs share GPUs with notebooks.\"\n").unwrap();
    assert_eq!(c.actions().class("cuda.oom").unwrap().action, Action::Retry);
    let err = load(
        &dir.0,
        "[[cause]]\nid = \"no_such_cause\"\naction = \"stop\"\nbecause = \"x.\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("no_such_cause"), "{err}");
    let err = load(
        &dir.0,
        "[[class]]\nid = \"cuda.oom\"\naction = \"stop\"\nbecause = \"  \"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("say why"), "{err}");
    let err = load(
        &dir.0,
        "[[class]]\nid = \"cuda.oom\"\naction = \"maybe\"\nbecause = \"x.\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("maybe"), "{err}");
    let err = load(&dir.0, "[[pattern]]\nid = \"sched-cancelled-slurm-state\"\nfact = \"state\"\naction = \"retry\"\nbecause = \"x.\"\n").unwrap_err();
    assert!(err.to_string().contains("go together"), "{err}");
}
