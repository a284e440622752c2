//! The examples of `templates`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

/// `templates`.
#[test]
fn module_docs() -> Result<(), Box<dyn std::error::Error>> {
    use crate::unclassified::Templates;
    let mut t = Templates::default();
    for (shard, retry) in [(3, 1), (17, 4), (250, 2)] {
        t.add(
            &format!("checkpoint upload of shard {shard} failed after {retry} retries: HTTP 503"),
            None,
        );
    }
    let all = t.templates();
    assert_eq!(all.len(), 1);
    assert_eq!(
        all[0].text,
        "checkpoint upload of shard <*> failed after <*> retries: HTTP <*>"
    );
    assert_eq!(all[0].count, 3);
    Ok(())
}
