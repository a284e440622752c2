//! The wild corpus's figures may only go up: each floor is the figure a
//! change reached, less a little slack. Raise a floor when a change raises
//! its figure (`cargo xtask eval` prints them).

use std::path::Path;

/// (what, measured, floor)
fn check(figures: &[(&str, f64, f64)]) {
    let low: Vec<String> = figures
        .iter()
        .filter(|(_, got, floor)| got < floor)
        .map(|(what, got, floor)| format!("{what} {got:.3} < floor {floor:.3}"))
        .collect();
    assert!(low.is_empty(), "below the floor: {}", low.join("; "));
}

#[test]
fn wild_corpus_scores_stay_above_their_floors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/wild");
    let cases = xtask::eval::load(&dir).expect("the corpus loads");
    assert!(cases.len() >= 110, "{} cases", cases.len());
    let s = xtask::eval::score(&cases).expect("every case scans");
    let fw = &s.by_context["framework"];
    let ls = &s.by_context["launcher/serving"];
    check(&[
        ("precision", s.overall.precision(), 0.97),
        ("recall", s.overall.recall(), 0.97),
        ("recall (framework)", fw.recall(), 0.97),
        ("recall (launcher/serving)", ls.recall(), 0.97),
        ("recall (classes the catalog has)", s.known_recall(), 0.97),
        ("primary", s.overall.primary(), 0.96),
        ("primary (framework)", fw.primary(), 0.97),
        ("primary (launcher/serving)", ls.primary(), 0.95),
        ("cause@1", s.overall.cause_at1().unwrap_or(0.0), 0.79),
        ("cause@2", s.overall.cause_at2().unwrap_or(0.0), 0.89),
        ("macro-F1", s.macro_f1(), 0.96),
        // Actions the public threads confirm (retry or stop).
        ("action", s.overall.action().unwrap_or(0.0), 0.9),
    ]);
    assert!(
        s.overall.acted >= 20,
        "{} confirmed actions",
        s.overall.acted
    );
    // Healthy and near-miss logs have no error finding, whatever else moves.
    assert_eq!(
        s.overall.clean_ok, s.overall.clean,
        "a clean log has an error finding"
    );
}

#[test]
fn the_culprit_rank_is_named_on_the_labelled_multi_rank_logs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let c = xtask::culprits::score_culprits(&root, &root.join("fixtures/culprits.toml"))
        .expect("the labelled logs scan");
    // Real captures and public threads, of six launcher families at least.
    assert!(c.total >= 30, "{} labelled jobs", c.total);
    assert!(c.by_origin["capture"].total >= 10);
    assert!(c.by_origin["thread"].total >= 10);
    let families = c.by_launcher.keys().filter(|k| *k != "none").count();
    assert!(families >= 6, "{families} launcher families");
    let rate = |t: &xtask::culprits::Tally| {
        (
            f64::from(t.culprit_right) / f64::from(t.total.max(1)),
            f64::from(t.primary_right) / f64::from(t.primary_labelled.max(1)),
        )
    };
    let (dev, dev_primary) = rate(&c.by_split["dev"]);
    let (holdout, holdout_primary) = rate(&c.by_split["holdout"]);
    check(&[
        ("culprit (dev)", dev, 0.99),
        ("primary (dev)", dev_primary, 0.99),
        ("culprit (holdout)", holdout, HOLDOUT_CULPRIT),
        ("primary (holdout)", holdout_primary, HOLDOUT_PRIMARY),
    ]);
}

/// The holdout split's floors: what it scored when it was first scored,
/// after the work it was held out from (never tuned on since). Four m08
/// captures joined it on 2026-12-07, labelled before the tool read them:
/// 11 of 15 culprits (the plain Gloo run's two files name rank 0, whose
/// buffer was too small, not rank 1, whose extra collective filled it).
const HOLDOUT_CULPRIT: f64 = 0.73;
const HOLDOUT_PRIMARY: f64 = 0.90;
