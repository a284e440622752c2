//! The examples of `fingerprint`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `fingerprint`.
#[test]
fn module_docs() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fingerprints::{date_of_unix_ms, newest_release, Release};
    assert_eq!(date_of_unix_ms(1_603_729_062_494), "2020-10-26");
    let releases = [
        Release {
            framework: "pytorch".into(),
            version: "1.6.0".into(),
            date: "2020-07-28".into(),
        },
        Release {
            framework: "pytorch".into(),
            version: "1.7.0".into(),
            date: "2020-10-27".into(),
        },
    ];
    // Built a day before the 1.7.0 release: that release.
    assert_eq!(
        newest_release(&releases, "pytorch", "2020-10-26").as_deref(),
        Some("1.7.0")
    );
    assert_eq!(
        newest_release(&releases, "pytorch", "2020-09-01").as_deref(),
        Some("1.6.0")
    );
    Ok(())
}

/// `date_of_unix_ms`.
#[test]
fn date_of_unix_ms() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fingerprints::date_of_unix_ms;
    assert_eq!(date_of_unix_ms(0), "1970-01-01");
    assert_eq!(date_of_unix_ms(1_603_729_062_494), "2020-10-26");
    Ok(())
}

/// `newest_release`.
#[test]
fn newest_release() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fingerprints::{newest_release, Release};
    let r = |v: &str, d: &str| Release {
        framework: "pytorch".into(),
        version: v.into(),
        date: d.into(),
    };
    let releases = [r("2.0.0", "2023-03-15"), r("2.1.0", "2023-10-04")];
    assert_eq!(
        newest_release(&releases, "pytorch", "2023-06-01").as_deref(),
        Some("2.0.0")
    );
    assert_eq!(
        newest_release(&releases, "pytorch", "2023-09-30").as_deref(),
        Some("2.1.0")
    );
    assert_eq!(newest_release(&releases, "tensorflow", "2023-09-30"), None);
    Ok(())
}
