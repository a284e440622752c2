//! The examples of `fragments`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `fragments`.
#[test]
fn module_docs() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fragments::Fragments;
    let mut f = Fragments::default();
    f.insert("size", r"\d+(?:\.\d+)? ?[KMGT]i?B");
    assert_eq!(
        f.expand("of (?P<free_bytes>{{size}}) free").unwrap(),
        r"of (?P<free_bytes>(?:\d+(?:\.\d+)? ?[KMGT]i?B)) free"
    );
    assert!(f.expand("{{nope}}").is_err());
    Ok(())
}

/// `Fragments::insert`.
#[test]
fn fragments_insert() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fragments::Fragments;
    let mut f = Fragments::default();
    f.insert("device", r"\d+");
    f.insert("device", r"[0-9]+");
    assert_eq!(f.expand("GPU {{device}}").unwrap(), "GPU (?:[0-9]+)");
    Ok(())
}

/// `Fragments::names`.
#[test]
fn fragments_names() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fragments::Fragments;
    let mut f = Fragments::default();
    f.insert("version", r"\d+\.\d+");
    f.insert("size", r"\d+ ?[KMG]iB");
    assert_eq!(f.names().collect::<Vec<_>>(), ["size", "version"]);
    Ok(())
}

/// `Fragments::expand`.
#[test]
fn fragments_expand() -> Result<(), Box<dyn std::error::Error>> {
    use crate::catalog::fragments::Fragments;
    let mut f = Fragments::default();
    f.insert("size", r"\d+(?:\.\d+)? ?[KMGT]i?B");
    let re = regex::Regex::new(
        &f.expand("Tried to allocate (?P<requested_bytes>{{size}})")
            .unwrap(),
    )
    .unwrap();
    let caps = re.captures("Tried to allocate 2.00 GiB. GPU 0").unwrap();
    assert_eq!(&caps["requested_bytes"], "2.00 GiB");
    assert_eq!(
        f.expand("{{device}}").unwrap_err(),
        "unknown fragment {{device}}"
    );
    Ok(())
}
