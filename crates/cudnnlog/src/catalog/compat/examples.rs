//! The examples of `compat`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `cmp_versions`.
#[test]
fn cmp_versions() -> Result<(), Box<dyn std::error::Error>> {
    use crate::fields::cmp_versions;
    use std::cmp::Ordering;
    assert_eq!(cmp_versions("8.10", "8.9.7"), Ordering::Greater);
    assert_eq!(cmp_versions("12.4", "12.4.0"), Ordering::Equal);
    assert_eq!(cmp_versions("535.104.05", "550.54.14"), Ordering::Less);
    Ok(())
}
