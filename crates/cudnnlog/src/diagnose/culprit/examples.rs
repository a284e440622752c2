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
