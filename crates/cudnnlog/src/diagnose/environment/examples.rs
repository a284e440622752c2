//! The examples of `environment`'s items: internal, so run as unit tests
//! (a doc example must go through the public API).

use crate::location::Location;

/// Line `line` at byte `byte` of source `source`, untimed and untagged.
fn at(source: usize, line: u64, byte: u64) -> Location {
    Location {
        source,
        line,
        byte,
        timestamp: None,
        rank: None,
    }
}

/// `environment`.
#[test]
fn module_docs() -> Result<(), Box<dyn std::error::Error>> {
    use crate::fields::normalize;
    assert_eq!(normalize("cudnn", "91900").as_deref(), Some("9.19.0"));
    assert_eq!(normalize("cudnn", "8600").as_deref(), Some("8.6.0"));
    assert_eq!(normalize("cudnn", "(8, 9, 2)").as_deref(), Some("8.9.2"));
    assert_eq!(
        normalize("compute_capability", "sm_86").as_deref(),
        Some("8.6")
    );
    assert_eq!(normalize("cuda", "cu130").as_deref(), Some("13.0"));
    assert_eq!(
        normalize("gpu", "RTX3090").as_deref(),
        Some("GeForce RTX 3090")
    );
    Ok(())
}

/// `normalize`.
#[test]
fn normalize() -> Result<(), Box<dyn std::error::Error>> {
    use crate::fields::normalize;
    assert_eq!(normalize("cudnn", "8.9.2.26").as_deref(), Some("8.9.2"));
    assert_eq!(
        normalize("framework", "PyTorch").as_deref(),
        Some("pytorch")
    );
    assert_eq!(normalize("deterministic", "True").as_deref(), Some("true"));
    assert_eq!(normalize("cuda", "  "), None);
    Ok(())
}

/// `Environment::record`.
#[test]
fn environment_record() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    env.record("gpu", "GeForce RTX 3090", &at);
    env.record("gpu", "NVIDIA GeForce RTX 3090", &at);
    assert_eq!(env.get("gpu"), Some("NVIDIA GeForce RTX 3090"));
    assert_eq!(env.values("gpu")[0].count, 2);
    Ok(())
}

/// `Environment::join`.
#[test]
fn environment_join() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let (mut a, mut b) = (Environment::default(), Environment::default());
    a.record("cudnn", "8.9.2", &at);
    b.record("cudnn", "8.9.2", &at);
    b.record("cudnn", "9.1.0", &at);
    a.join(b);
    let seen: Vec<_> = a
        .values("cudnn")
        .iter()
        .map(|o| (o.value.as_str(), o.count))
        .collect();
    assert_eq!(seen, [("8.9.2", 2), ("9.1.0", 1)]);
    Ok(())
}

/// `Environment::values`.
#[test]
fn environment_values() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    env.record("cudnn", "8.9.2", &at);
    env.record("cudnn", "9.1.0", &at);
    assert_eq!(env.values("cudnn")[1].value, "9.1.0");
    assert!(env.values("nccl").is_empty());
    Ok(())
}

/// `Environment::get`.
#[test]
fn environment_get() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    env.record("cudnn", "8.9.2", &at);
    env.record("cudnn", "9.1.0", &at);
    assert_eq!(env.get("cudnn"), Some("8.9.2"));
    assert_eq!(env.get("driver"), None);
    Ok(())
}

/// `Environment::framework_version`.
#[test]
fn environment_framework_version() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let mut env = Environment::default();
    let at = at(0, 3, 80);
    env.record("framework_build", "1.7.0", &at);
    let v = env.framework_version().unwrap();
    assert_eq!((v.value, v.line, v.inferred), ("1.7.0", 3, true));
    env.record("framework_version", "1.7.1", &at);
    assert!(!env.framework_version().unwrap().inferred);
    Ok(())
}

/// `Environment::of_source`.
#[test]
fn environment_of_source() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    env.record("cuda", "12.4", &at);
    env.record(
        "cuda",
        "11.8",
        &Location {
            source: 1,
            ..at.clone()
        },
    );
    assert_eq!(env.of_source(1).get("cuda"), Some("11.8"));
    assert!(env.of_source(5).is_empty());
    Ok(())
}

/// `Environment::is_empty`.
#[test]
fn environment_is_empty() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    assert!(env.is_empty());
    env.record("framework", "pytorch", &at);
    assert!(!env.is_empty());
    Ok(())
}

/// `Environment::to_json`.
#[test]
fn environment_to_json() -> Result<(), Box<dyn std::error::Error>> {
    use crate::diagnose::environment::Environment;
    let at = at(0, 3, 80);
    let mut env = Environment::default();
    env.record("framework", "pytorch", &at);
    env.record("cudnn", "8.9.2", &at);
    env.record("cudnn", "9.1.0", &at);
    let json = env.to_json();
    assert_eq!(json["framework"], serde_json::json!("pytorch"));
    assert_eq!(json["cudnn"], serde_json::json!(["8.9.2", "9.1.0"]));
    Ok(())
}
