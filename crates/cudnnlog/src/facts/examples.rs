//! The examples of `facts`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `Fact::from_capture`.
#[test]
fn fact_from_capture() -> Result<(), Box<dyn std::error::Error>> {
    use crate::facts::{Fact, MAX_FACT_TEXT};
    assert_eq!(
        Fact::from_capture("requested_bytes", "20.00 MiB"),
        Fact::Int(20 << 20)
    );
    assert_eq!(
        Fact::from_capture("op", " conv2d "),
        Fact::Text("conv2d".into())
    );
    let Fact::Text(long) = Fact::from_capture("op", &"x".repeat(5000)) else {
        panic!()
    };
    assert!(long.len() <= MAX_FACT_TEXT && long.ends_with('…'));
    Ok(())
}

/// `parse_size`.
#[test]
fn parse_size() -> Result<(), Box<dyn std::error::Error>> {
    use crate::facts::parse_size;
    assert_eq!(parse_size("1.53 GiB"), Some(1_642_824_991));
    assert_eq!(parse_size("20.00 MiB"), Some(20 * 1024 * 1024));
    assert_eq!(parse_size("1,024 bytes"), Some(1024));
    assert_eq!(parse_size("17179869184"), Some(17_179_869_184));
    assert_eq!(parse_size("lots"), None);
    Ok(())
}

/// `human_bytes`.
#[test]
fn human_bytes() -> Result<(), Box<dyn std::error::Error>> {
    use crate::facts::human_bytes;
    assert_eq!(human_bytes(1_642_824_991), "1.53 GiB");
    assert_eq!(human_bytes(2 << 20), "2.00 MiB");
    assert_eq!(human_bytes(512), "512 B");
    Ok(())
}
