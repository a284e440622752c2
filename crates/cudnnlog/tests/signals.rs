//! Signals named right: the signal a process died of, in its facts and
//! title, whatever words the log used; SIGKILL without OOM-killer evidence
//! is not called the OOM killer. Real captures and real shell wording.

mod common;

use common::{finding, report};
use cudnnlog::report::Finding;

const WATCHDOG: &[u8] =
    include_bytes!("../../../fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log");
const SIGSEGV: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g16_torchrun_child_sigsegv.log");
const SIGKILL: &[u8] = include_bytes!("../../../fixtures/gpu/h200-g16_torchrun_child_sigkill.log");

fn signal(f: &Finding) -> String {
    f.facts
        .get("signal_name")
        .map(ToString::to_string)
        .unwrap_or_else(|| panic!("no signal_name in {:?}", f.facts))
}

#[test]
fn the_watchdogs_abort_is_sigabrt_and_fallout() {
    let r = report(WATCHDOG);
    let f = finding(&r, "proc.segfault");
    assert_eq!(signal(f), "SIGABRT");
    assert!(f.title.ends_with("(SIGABRT)"), "{}", f.title);
    let cause = f.caused_by.map(|i| r.findings[i].class.as_str());
    assert_eq!(cause, Some("nccl.timeout"));
    assert_eq!(r.primary.as_deref(), Some("nccl.timeout"));
}

#[test]
fn a_segfault_is_sigsegv() {
    let r = report(SIGSEGV);
    assert_eq!(signal(finding(&r, "proc.segfault")), "SIGSEGV");
}

#[test]
fn shells_words_in_several_languages() {
    for (line, want) in [
        ("Aborted (core dumped)", "SIGABRT"),
        ("Bus error (core dumped)", "SIGBUS"),
        ("Floating point exception (core dumped)", "SIGFPE"),
        ("Illegal instruction (core dumped)", "SIGILL"),
        (
            "Speicherzugriffsfehler (Speicherabzug geschrieben)",
            "SIGSEGV",
        ),
        ("段错误 (核心已转储)", "SIGSEGV"),
    ] {
        let r = report(format!("step 40 loss 2.31\n{line}\n").as_bytes());
        let f = finding(&r, "proc.segfault");
        assert_eq!(signal(f), want, "{line}");
        assert!(f.title.contains(want), "{line}: {}", f.title);
    }
}

#[test]
fn a_plain_sigkill_is_an_outside_kill_first() {
    let r = report(SIGKILL);
    let f = finding(&r, "host.oom_killed");
    assert_eq!(signal(f), "SIGKILL");
    assert_eq!(f.causes[0].id, "external_kill", "{:#?}", f.causes);
}

#[test]
fn the_kernels_oom_killer_line_makes_it_host_memory() {
    let log = "step 812 loss 1.93\n\
               [Tue Dec  1 10:31:02 2026] Out of memory: Killed process 48213 (python) total-vm:212847316kB, anon-rss:125830112kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:250004kB oom_score_adj:0\n\
               /var/spool/slurmd/job123/slurm_script: line 14: 48213 Killed                  python train.py\n";
    let r = report(log.as_bytes());
    let killed: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.class == "host.oom_killed")
        .collect();
    assert!(!killed.is_empty());
    for f in killed {
        assert_eq!(f.causes[0].id, "host_memory_pressure", "{:#?}", f.causes);
    }
}

#[test]
fn the_schedulers_time_limit_makes_it_an_outside_kill() {
    let log = "step 812 loss 1.93\n\
               slurmstepd: error: *** JOB 4242 ON gpu-node-07 CANCELLED AT 2026-12-01T10:31:02 DUE TO TIME LIMIT ***\n\
               /var/spool/slurmd/job4242/slurm_script: line 14: 48213 Killed                  python train.py\n";
    let r = report(log.as_bytes());
    let f = finding(&r, "host.oom_killed");
    assert_eq!(f.causes[0].id, "external_kill", "{:#?}", f.causes);
    assert!(
        f.causes[0]
            .evidence
            .iter()
            .any(|e| e.contains("the scheduler ended the job")),
        "{:#?}",
        f.causes
    );
}

const SIGTERM: &[u8] = include_bytes!("../../../fixtures/gpu/h200-d07_torchrun_sigterm.log");
const SIGHUP: &[u8] = include_bytes!("../../../fixtures/gpu/h200-d07_torchrun_sighup.log");
const TERMINATE: &[u8] = include_bytes!("../../../fixtures/gpu/h200-d08_cpp_terminate.log");

#[test]
fn a_launcher_stopped_from_outside_is_an_outside_kill_not_a_code_bug() {
    for (log, want) in [(SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")] {
        let r = report(log);
        assert_eq!(r.primary.as_deref(), Some("sched.cancelled"), "{want}");
        let f = finding(&r, "sched.cancelled");
        assert_eq!(f.causes[0].id, "external_kill", "{want}: {:#?}", f.causes);
        // The SignalException is the same finding, not a python.exception.
        assert!(
            r.findings.iter().all(|f| f.class != "python.exception"),
            "{want}: {:#?}",
            r.findings
        );
        assert_eq!(f.count, 2, "{want}");
    }
    assert_eq!(
        signal(finding(&report(SIGTERM), "sched.cancelled")),
        "SIGTERM"
    );
}

#[test]
fn a_signal_to_the_launcher_after_a_worker_failed_is_fallout() {
    let log = "[rank1]: Traceback (most recent call last):\n\
               [rank1]:   File \"/home/user/train/train.py\", line 40, in <module>\n\
               [rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 GiB. GPU 1 has a total capacity of 139.72 GiB of which 6.95 GiB is free.\n\
               W1201 17:00:21.486000 483 torch/distributed/elastic/agent/server/api.py:739] Received 15 death signal, shutting down workers\n";
    let r = report(log.as_bytes());
    assert_eq!(r.primary.as_deref(), Some("cuda.oom"));
    let f = finding(&r, "sched.cancelled");
    assert_eq!(
        f.caused_by.map(|i| r.findings[i].class.as_str()),
        Some("cuda.oom")
    );
}

#[test]
fn an_uncaught_cpp_exception_is_the_sigabrt_and_the_abort_its_fallout() {
    let r = report(TERMINATE);
    let first = &r.findings[0];
    assert_eq!(first.pattern, "proc-segfault-cpp-terminate");
    assert_eq!(signal(first), "SIGABRT");
    assert_eq!(
        first.facts["exception"].to_string(),
        "std::invalid_argument"
    );
    assert_eq!(
        first.facts["detail"].to_string(),
        "prefetch: shard index 17 out of range for 16 shards"
    );
    assert!(
        first.remediations[0].contains("prefetch: shard index 17 out of range"),
        "{:#?}",
        first.remediations
    );
    let abort = &r.findings[1];
    assert_eq!(signal(abort), "SIGABRT");
    assert_eq!(abort.caused_by, Some(0));
}

#[test]
fn a_known_error_in_what_is_reported_as_itself() {
    let log = "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory access was encountered\nAborted (core dumped)\n";
    let r = report(log.as_bytes());
    assert_eq!(r.primary.as_deref(), Some("cuda.illegal_address"));
    assert!(
        r.findings
            .iter()
            .all(|f| f.pattern != "proc-segfault-cpp-terminate"),
        "{:#?}",
        r.findings
    );
}
