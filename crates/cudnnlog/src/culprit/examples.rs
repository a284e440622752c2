//! The examples of `culprit`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `collect`.
#[test]
fn collect() -> Result<(), Box<dyn std::error::Error>> {
    use crate::{culprit::collect, Catalog};
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
    use crate::culprit::{collect, decide, Basis, Context};
    let catalog = crate::Catalog::builtin().unwrap();
    let log = b"[rank0]: Rank 3 failed to pass monitoredBarrier in 30000 ms\n[rank0]: RuntimeError: timed out\n";
    let ev = collect(catalog.evidence_rules(), log, 61, 2, (1 << 20, 1 << 20));
    let cx = Context {
        reporters: &[0],
        seq_num: None,
        cause: None,
        failing: &[],
    };
    let c = decide(&ev, &cx).unwrap();
    assert_eq!((c.ranks.as_slice(), c.basis), (&[3][..], Basis::Barrier));
    assert!(decide(&Default::default(), &cx).is_none());
    Ok(())
}
