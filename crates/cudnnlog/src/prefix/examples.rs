//! The examples of `prefix`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `Prefix::starts_record`.
#[test]
fn prefix_starts_record() -> Result<(), Box<dyn std::error::Error>> {
    use crate::prefix::parse_prefix;
    assert!(parse_prefix(b"2026-11-29 19:41:10,166 INFO train: step 3").starts_record());
    assert!(!parse_prefix(b"    loss.backward()").starts_record());
    Ok(())
}

/// `parse_prefix`.
#[test]
fn parse_prefix() -> Result<(), Box<dyn std::error::Error>> {
    use crate::prefix::{parse_prefix, Level, Origin};
    let line = b"[rank0]:[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog";
    let p = parse_prefix(line);
    assert_eq!(p.origin, Some(Origin::Rank(0)));
    assert_eq!(p.level, Some(Level::Error));
    assert_eq!(&line[p.body..], b"[Rank 0] Watchdog");
    Ok(())
}

/// `markup_tail`.
#[test]
fn markup_tail() -> Result<(), Box<dyn std::error::Error>> {
    use crate::prefix::markup_tail;
    assert_eq!(markup_tail(b"Aborted (core dumped)```"), 3);
    assert_eq!(markup_tail(b"compute capability 7.5.`"), 1);
    assert_eq!(markup_tail(b"Compile with `TORCH_USE_CUDA_DSA`"), 0);
    Ok(())
}
