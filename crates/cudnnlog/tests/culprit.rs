//! The culprit of a distributed failure: the rank at fault, not the ranks
//! that reported the timeout. Real multi-rank captures (`fixtures/real`,
//! `fixtures/gpu`: two H200s with NCCL, four to eight ranks on one GPU with
//! Gloo) and logs in the real wording of PyTorch's messages.

mod common;

use common::{finding, report};
use cudnnlog::report::Finding;
use cudnnlog::Report;

fn culprit(r: &Report, class: &str) -> (Vec<u32>, String, Vec<u64>) {
    let f = finding(r, class);
    let c = f
        .culprit
        .as_ref()
        .unwrap_or_else(|| panic!("{class} has no culprit: {f:#?}"));
    let lines = c.evidence.iter().map(|e| e.line).collect();
    (c.ranks.clone(), c.reason.clone(), lines)
}

const WATCHDOG: &[u8] =
    include_bytes!("../../../fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log");
const STRAGGLER: &[u8] = include_bytes!("../../../fixtures/gpu/h200-d04_gloo_straggler_4ranks.log");
const EXCEPTION: &[u8] =
    include_bytes!("../../../fixtures/gpu/h200-d05_gloo_rank_exception_8ranks.log");
const BARRIER: &[u8] =
    include_bytes!("../../../fixtures/gpu/h200-d06_monitored_barrier_4ranks.log");
const DUPLICATE: &[u8] =
    include_bytes!("../../../fixtures/real/h200-torchrun-nccl-duplicate-gpu.log");
const OOM: &[u8] = include_bytes!("../../../fixtures/real/h200-torch-oom-amp-train.log");

#[test]
fn the_wavefront_names_the_rank_that_never_enqueued_the_collective() {
    // Rank 0 reports the timeout of SeqNum 3; rank 1's dump says its last
    // enqueued work is 2, and its last line is "waiting for data loader".
    let r = report(WATCHDOG);
    let f = finding(&r, "nccl.timeout");
    assert!(f.ranks.contains(&0), "rank 0 reported it: {:?}", f.ranks);
    let (ranks, reason, lines) = culprit(&r, "nccl.timeout");
    assert_eq!(ranks, [1]);
    assert!(reason.contains("collective 2"), "{reason}");
    assert!(reason.contains("collective 3"), "{reason}");
    assert!(reason.contains("waiting for data loader"), "{reason}");
    // Rank 1's dump (line 25), rank 0's for comparison (22), rank 1's last
    // line before the failure (13).
    assert_eq!(lines, [25, 22, 13]);
    // The advice starts with the rank at fault, and the cause says why.
    assert!(
        f.remediations[0].starts_with(
            "Start with rank 1: the others waited for it (line 13). Fix what it was doing then"
        ),
        "{:#?}",
        f.remediations
    );
    // A rank behind its peers is ranks out of step (work only it did), not
    // a network fault: the training code comes first, with the wavefront
    // as its evidence.
    assert_eq!(f.causes[0].id, "code_bug", "{:#?}", f.causes);
    assert!(f.causes[0].evidence[0].contains("rank 1 last enqueued collective 2"));
    assert!(f.causes[0].evidence[0].ends_with("(ranks out of step)"));
}

#[test]
fn a_rank_that_said_nothing_while_the_others_timed_out() {
    let r = report(STRAGGLER);
    let f = finding(&r, "nccl.timeout");
    assert!(!f.ranks.contains(&2), "{:?}", f.ranks);
    let (ranks, reason, lines) = culprit(&r, "nccl.timeout");
    assert_eq!(ranks, [2]);
    assert!(
        reason.contains("step 3 waiting for data loader"),
        "{reason}"
    );
    assert_eq!(lines, [17]);
}

#[test]
fn the_rank_whose_exception_the_others_waited_for() {
    let r = report(EXCEPTION);
    let primary = r.primary.as_deref();
    assert_eq!(primary, Some("python.exception"));
    let fallout: Vec<&Finding> = r.findings.iter().filter(|f| f.culprit.is_some()).collect();
    assert!(!fallout.is_empty());
    for f in fallout {
        let c = f.culprit.as_ref().unwrap();
        assert_eq!(c.ranks, [5], "{}", f.class);
        assert!(c.reason.contains("failed first"), "{}", c.reason);
        assert_eq!(c.evidence[0].line, 24);
    }
}

#[test]
fn a_monitored_barrier_names_the_late_rank() {
    let r = report(BARRIER);
    let (ranks, reason, lines) = culprit(&r, "dist.timeout");
    assert_eq!(ranks, [3]);
    assert!(reason.contains("barrier names rank 3"), "{reason}");
    // The coordinator's line naming it, then rank 3's last line.
    assert_eq!(lines, [30, 9]);
}

#[test]
fn torchruns_first_observed_failure_quotes_the_rank_line() {
    let r = report(DUPLICATE);
    let f = finding(&r, "nccl.error");
    let c = f.culprit.as_ref().expect("culprit");
    assert_eq!(c.ranks, [0]);
    assert_eq!(c.hosts, ["localhost"]);
    assert_eq!(c.evidence[0].text.trim(), "rank      : 0 (local_rank: 0)");
}

#[test]
fn the_rank_behind_in_steps_when_every_rank_timed_out() {
    // Eight ranks, every one reports the watchdog timeout (so none is silent
    // and no dump says what was enqueued); rank 6 stopped a step earlier.
    let mut log = String::new();
    for step in 40..=41 {
        for rank in 0..8 {
            if step == 41 && rank == 6 {
                continue;
            }
            log.push_str(&format!(
                "[rank{rank}]: 2026-11-30 10:0{}:00 | step {step} | loss 2.31{rank}\n",
                step - 40
            ));
        }
    }
    for rank in 0..8 {
        log.push_str(&format!(
            "[rank{rank}]:[E1130 10:31:00.000000000 ProcessGroupNCCL.cpp:632] [Rank {rank}] \
             Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8211, \
             OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800093 \
             milliseconds before timing out.\n"
        ));
    }
    let r = report(log.as_bytes());
    let (ranks, reason, lines) = culprit(&r, "nccl.timeout");
    assert_eq!(ranks, [6]);
    assert!(reason.contains("stopped at step 40"), "{reason}");
    assert_eq!(lines, [7]);
}

#[test]
fn one_rank_alone_gives_no_culprit() {
    // A single-process OOM: nothing distributed, nobody to blame.
    let r = report(OOM);
    assert!(r.findings.iter().all(|f| f.culprit.is_none()));
    // Every rank reporting the same timeout, with no other evidence: the log
    // does not show who is at fault, so the report names no one.
    let log = "[rank0]: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n\
               [rank1]: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n";
    let r = report(log.as_bytes());
    let f = finding(&r, "nccl.timeout");
    assert_eq!(f.culprit, None, "{:?}", f.culprit);
}
