//! The examples of `ansi`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `has_escape`.
#[test]
fn has_escape() -> Result<(), Box<dyn std::error::Error>> {
    use crate::ansi::has_escape;
    assert!(has_escape(
        b"\x1b[31mRuntimeError: CUDA error: out of memory\x1b[0m"
    ));
    assert!(!has_escape(b"RuntimeError: CUDA error: out of memory"));
    Ok(())
}

/// `strip_into`.
#[test]
fn strip_into() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    crate::ansi::strip_into(b"\x1b[31mERROR\x1b[0m: \x1b]0;title\x07boom", &mut out);
    assert_eq!(out, b"ERROR: boom");
    Ok(())
}
