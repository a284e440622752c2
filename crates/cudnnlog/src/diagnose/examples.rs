//! Diagnosis without a scan: observations built by hand ([`Observation`]),
//! as a scan's findings would hold them, and what [`diagnose`] makes of
//! them. Internal, so unit tests rather than doc examples.

use crate::diagnose::{diagnose, Findings, Observation};
use crate::location::Location;
use crate::report::{Fact, Outcome};
use crate::Catalog;

fn oom(catalog: &Catalog) -> Observation {
    Observation::new(
        catalog,
        "cuda-oom-pytorch-allocator",
        "torch.OutOfMemoryError: CUDA out of memory.",
    )
    .expect("a built-in pattern")
}

#[test]
fn an_observation_becomes_a_finding_with_its_place_and_facts() {
    let catalog = Catalog::builtin().unwrap();
    let o = oom(&catalog)
        .line(40)
        .source(1)
        .rank(3)
        .step(Some(300), Some(2))
        .fact("requested_bytes", Fact::Int(2 << 30))
        .count(7);
    assert_eq!(o.class(), "cuda.oom");
    let mut findings = Findings::new(2);
    findings.push(o);
    assert_eq!((findings.len(), findings.is_empty()), (1, false));
    let dx = diagnose(&findings, &catalog);
    assert_eq!(dx.primary.as_deref(), Some("cuda.oom"));
    let f = &dx.findings[0];
    assert_eq!((f.first.line, f.first.source), (40, 1));
    assert_eq!((f.first.step, f.first.epoch), (Some(300), Some(2)));
    assert_eq!((f.ranks.as_slice(), f.count), (&[3][..], 7));
    assert_eq!(f.facts.get("requested_bytes"), Some(&Fact::Int(2 << 30)));
}

#[test]
fn an_unknown_pattern_makes_no_observation() {
    let catalog = Catalog::builtin().unwrap();
    assert!(Observation::new(&catalog, "no-such-pattern", "x").is_none());
}

#[test]
fn no_findings_is_a_clean_outcome() {
    let findings = Findings::new(1);
    assert!(findings.is_empty() && findings.environment().is_empty());
    let dx = diagnose(&findings, &Catalog::builtin().unwrap());
    assert!(dx.findings.is_empty());
    assert_eq!((dx.outcome, dx.primary), (Outcome::Clean, None));
}

#[test]
fn the_environment_recorded_is_the_findings() {
    let mut findings = Findings::new(1);
    let at = Location {
        source: 0,
        line: 1,
        byte: 0,
        timestamp: None,
        rank: None,
    };
    findings
        .environment_mut()
        .record("framework", "pytorch", &at);
    assert_eq!(findings.environment().get("framework"), Some("pytorch"));
}

#[test]
fn a_request_that_fits_in_reserved_memory_is_fragmentation() {
    // The request would fit in free + reserved-but-unallocated memory:
    // fragmentation, from the message's own numbers.
    let catalog = Catalog::builtin().unwrap();
    let mut findings = Findings::new(1);
    findings.push(
        oom(&catalog)
            .fact("requested_bytes", Fact::Int(2 << 30))
            .fact("free_bytes", Fact::Int(1 << 30))
            .fact("reserved_unallocated_bytes", Fact::Int(6 << 30)),
    );
    let dx = diagnose(&findings, &catalog);
    assert_eq!(dx.findings[0].causes[0].id, "fragmentation");
    // Without the reserved memory, the same request is memory pressure.
    let mut findings = Findings::new(1);
    findings.push(
        oom(&catalog)
            .fact("requested_bytes", Fact::Int(2 << 30))
            .fact("free_bytes", Fact::Int(1 << 30)),
    );
    let dx = diagnose(&findings, &catalog);
    assert_ne!(dx.findings[0].causes[0].id, "fragmentation");
}
