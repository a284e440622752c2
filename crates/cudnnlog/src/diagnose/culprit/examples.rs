//! The examples of `culprit`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `collect`.
#[test]
fn collect() -> Result<(), Box<dyn std::error::Error>> {
    use crate::{diagnose::culprit::collect, Catalog};
    let catalog = Catalog::builtin().unwrap();
    let log = b"[rank1]: step 120 loss 0.41\n[rank0]: Rank 3 failed to pass monitoredBarrier in 30000 ms\n[rank0]: RuntimeError: timed out\n";
    let at = log.len() - 30;
    let ev = collect(catalog.evidence_rules(), log, at, 3, (1 << 20, 1 << 20));
    assert_eq!(ev.named.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [3]);
    assert_eq!(ev.ranks[&1].last_step.as_ref().map(|(s, _)| *s), Some(120));
    Ok(())
}

/// `decide`.
#[test]
fn decide() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::culprit::{collect, decide, Context};
    use crate::report::Basis;
    let catalog = crate::Catalog::builtin().unwrap();
    let log = b"[rank0]: Rank 3 failed to pass monitoredBarrier in 30000 ms\n[rank0]: RuntimeError: timed out\n";
    let ev = collect(catalog.evidence_rules(), log, 61, 2, (1 << 20, 1 << 20));
    let cx = Context {
        reporters: &[0],
        seq_num: None,
        cause: None,
        failing: &[],
        job: &[],
        waited: true,
    };
    let c = decide(&ev, &cx).unwrap();
    assert_eq!((c.ranks.as_slice(), c.basis), (&[3][..], Basis::Barrier));
    assert!(decide(&Default::default(), &cx).is_none());
    Ok(())
}

/// `RankEvidence::assume_rank` and `merge`: the lines of one rank's own
/// file name no rank; once the file's rank is known they are that rank's,
/// and the files of one job together show every rank.
#[test]
fn untagged_lines_are_the_files_rank() {
    use crate::diagnose::culprit::collect;
    let catalog = crate::Catalog::builtin().unwrap();
    let rank0 = b"INFO step 3 done\n[E610 09:11:12.1 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout\n";
    let rank2 = b"INFO step 2 done\nINFO waiting for data loader\n[E610 09:11:13.1 ProcessGroupNCCL.cpp:607] [Rank 2] Watchdog caught collective operation timeout\n";
    let at = |log: &[u8]| log.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut a = collect(
        catalog.evidence_rules(),
        rank0,
        at(rank0),
        2,
        (1 << 20, 1 << 20),
    );
    let mut b = collect(
        catalog.evidence_rules(),
        rank2,
        at(rank2),
        2,
        (1 << 20, 1 << 20),
    );
    a.assume_rank(0);
    b.assume_rank(2);
    a.merge(b);
    let steps: Vec<(u32, u64)> = a
        .ranks
        .iter()
        .filter_map(|(r, s)| Some((*r, s.last_step.as_ref()?.0)))
        .collect();
    assert_eq!(steps, [(0, 3), (2, 2)]);
}

/// `launcher_named`, and every evidence rule's own examples.
#[test]
fn launcher_lines_name_the_failed_rank() {
    use crate::catalog::culprit::EvidenceKind;
    use crate::diagnose::culprit::launcher_named;
    let catalog = crate::Catalog::builtin().unwrap();
    let rules = catalog.evidence_rules();
    let log = b"ValueError: `num_heads` must be divisible by `num_shards`\n rank=0\n2023-12-16T09:36:24.632149Z ERROR text_generation_launcher: Shard 0 failed to start\n";
    let (rank, line) = launcher_named(rules, log, 0, 1 << 20).unwrap();
    assert_eq!((rank, line.line), (0, 3));
    assert!(line.text.ends_with("Shard 0 failed to start"));
    // Out of reach: not read.
    assert!(launcher_named(rules, log, 0, 20).is_none());
    for rule in rules {
        if rule.kind == EvidenceKind::Launcher {
            assert!(!rule.examples.is_empty(), "{}: no examples", rule.id);
        }
        for ex in &rule.examples {
            assert!(
                ex.text.contains(&rule.anchor),
                "{}: anchor not in {:?}",
                rule.id,
                ex.text
            );
            let got = rule
                .regex
                .regex()
                .captures(&ex.text)
                .and_then(|c| c.name("rank")?.as_str().parse::<u32>().ok());
            assert_eq!(got, Some(ex.rank), "{}: {:?}", rule.id, ex.text);
        }
    }
}

/// The collective-mismatch vote: every rank states its own collective; the
/// one most ranks state is the right one, and a tie names nobody.
#[test]
fn the_rank_whose_collective_differs_is_the_culprit() {
    use crate::diagnose::culprit::{collect, decide, Context};
    use crate::report::Basis;
    let catalog = crate::Catalog::builtin().unwrap();
    let fp = |rank: u32, shape: &str, other: u32, theirs: &str| {
        format!(
            "[rank{rank}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {rank} is running collective: \
             CollectiveFingerPrint(SequenceNumber=8, OpType=ALLREDUCE, TensorShape=[{shape}], TensorDtypes=Float, \
             TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu)), but Rank {other} is running collective: \
             CollectiveFingerPrint(SequenceNumber=8, OpType=ALLREDUCE, TensorShape=[{theirs}], TensorDtypes=Float, \
             TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu)).Collectives differ in the following aspects: \n"
        )
    };
    let cx = Context {
        reporters: &[0, 1, 2, 3],
        seq_num: None,
        cause: None,
        failing: &[],
        job: &[],
        waited: false,
    };
    let rules = catalog.evidence_rules();
    // Ranks 0-2 name rank 3; rank 3 names rank 0.
    let log = [
        fp(1, "256, 4096", 3, "128, 4096"),
        fp(3, "128, 4096", 0, "256, 4096"),
        fp(0, "256, 4096", 3, "128, 4096"),
        fp(2, "256, 4096", 3, "128, 4096"),
    ]
    .concat();
    let ev = collect(rules, log.as_bytes(), 0, 1, (1 << 20, 1 << 20));
    let c = decide(&ev, &cx).unwrap();
    assert_eq!((c.ranks.as_slice(), c.basis), (&[3][..], Basis::Mismatch));
    assert_eq!(
        c.reason,
        "rank 3 ran TensorShape=[128, 4096] where the other 3 ranks ran TensorShape=[256, 4096]"
    );
    assert_eq!(c.evidence[0].line, 2);
    // Two ranks that each name the other: no majority, no culprit.
    let two = [fp(0, "256", 1, "128"), fp(1, "128", 0, "256")].concat();
    let ev = collect(rules, two.as_bytes(), 0, 1, (1 << 20, 1 << 20));
    assert!(decide(&ev, &cx).is_none());
    // PyTorch 1.10-1.12 names only the rank's own collective.
    let old = (0..4)
        .map(|r| {
            let op = if r == 2 { "ALLGATHER" } else { "ALLREDUCE" };
            format!(
                "RuntimeError: Detected mismatch between collectives on ranks. Rank {r} is running inconsistent \
                 collective: CollectiveFingerPrint(OpType={op}, TensorShape=[32], TensorDtypes=Float)\n"
            )
        })
        .collect::<String>();
    let ev = collect(rules, old.as_bytes(), 0, 1, (1 << 20, 1 << 20));
    let c = decide(&ev, &cx).unwrap();
    assert_eq!(c.ranks, [2]);
    assert_eq!(
        c.reason,
        "rank 2 ran OpType=ALLGATHER where the other 3 ranks ran OpType=ALLREDUCE"
    );
}

/// Silent and lagging ranks speak only of a finding a rank reports while
/// it waits: of a failure that is the reporter's own, they say nothing.
#[test]
fn silent_ranks_are_culprits_only_of_a_wait() {
    use crate::diagnose::culprit::{collect, decide, Context};
    let catalog = crate::Catalog::builtin().unwrap();
    let log = b"[rank0]: step 4 done\n[rank1]: step 4 done\n[rank2]: step 4 done\n[rank2]: RuntimeError: something failed\n";
    let ev = collect(catalog.evidence_rules(), log, 60, 4, (1 << 20, 1 << 20));
    let mut cx = Context {
        reporters: &[2],
        seq_num: None,
        cause: None,
        failing: &[],
        job: &[],
        waited: true,
    };
    assert_eq!(decide(&ev, &cx).unwrap().ranks, [0, 1]);
    cx.waited = false;
    assert!(decide(&ev, &cx).is_none());
}
