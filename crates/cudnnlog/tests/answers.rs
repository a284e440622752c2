//! What the reports of every real log in the repository say for
//! themselves: the fixtures' captures and the wild corpus's logs from public
//! threads. A cause's evidence is something the log shows, with the line
//! that shows it; a cause nothing in the log moved has none (its rank is
//! the catalog's prior, and the report says so instead of giving a reason).

use cudnnlog::fleet::primary_finding;
use cudnnlog::report::{sentences, CauseBasis, FindingsSink};
use cudnnlog::{Catalog, Report, ScannerBuilder};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every log of `fixtures/`: the captures (`*.log`, not the scenario
/// scripts' directory) and the wild corpus's `log.txt` files.
fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "scenarios") {
            logs(&p, out);
        } else if p.extension().is_some_and(|x| x == "log")
            || p.file_name().is_some_and(|n| n == "log.txt")
        {
            out.push(p);
        }
    }
}

/// The report of each log under `dir` (from the repository root), with
/// its path.
fn reports(dir: &str) -> Vec<(String, Report)> {
    let mut paths = Vec::new();
    logs(&root().join(dir), &mut paths);
    paths.sort();
    assert!(paths.len() >= 110, "fixtures missing: {}", paths.len());
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    paths
        .into_iter()
        .map(|p| {
            let mut sink = FindingsSink::new(scanner.catalog());
            let bytes = std::fs::read(&p).unwrap();
            scanner.scan_slice(&bytes, &mut sink).unwrap();
            let rel = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
            (rel, sink.into_report())
        })
        .collect()
}

/// `line 12`, `lines 3 and 9`, `line 4 of rank2.log`: where it was seen.
fn cites_a_line(evidence: &str) -> bool {
    let words: Vec<&str> = evidence.split_whitespace().collect();
    words
        .windows(2)
        .any(|w| matches!(w[0], "line" | "lines") && w[1].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn every_piece_of_evidence_names_the_line_that_shows_it() {
    let mut bare = Vec::new();
    let mut prior_only = 0;
    let mut primaries = 0;
    for (path, report) in reports("fixtures") {
        for f in &report.findings {
            for c in &f.causes {
                for e in c.evidence.iter().filter(|e| !cites_a_line(e)) {
                    bare.push(format!("{path}: {} / {}: {e}", f.class, c.id));
                }
            }
        }
        let top = primary_finding(&report).and_then(|f| f.causes.first());
        if let Some(c) = top {
            primaries += 1;
            prior_only += usize::from(c.basis() == CauseBasis::Prior);
        }
    }
    assert!(
        bare.is_empty(),
        "evidence without its line:\n{}",
        bare.join("\n")
    );
    // The check has something to check: most primaries have a top cause,
    // and both kinds occur.
    assert!(primaries > 150 && prior_only > 0 && prior_only < primaries);
}

/// Fallout goes when its cause does: it carries no remedy of its own (the
/// formats say to fix its cause first).
#[test]
fn fallout_has_no_remedy_of_its_own() {
    let mut fallout = 0;
    for (path, report) in reports("fixtures") {
        for f in report.findings.iter().filter(|f| f.fallout_of.is_some()) {
            fallout += 1;
            assert!(
                f.remediations.is_empty(),
                "{path}: {} {:?}",
                f.class,
                f.remediations
            );
        }
    }
    assert!(fallout >= 15, "{fallout}");
}

/// The answer's advice fits the framework the log comes from: on the wild
/// corpus, whose labels name each log's framework (a label, not what the
/// scan detected), no remediation of the primary finding names another
/// framework the catalog knows (`diagnosis.toml`'s `[[framework]]`).
#[test]
fn advice_never_names_another_framework_than_the_logs() {
    let catalog = Catalog::builtin().unwrap();
    let frameworks = catalog.frameworks();
    let named = |text: &str| -> Vec<&str> {
        frameworks
            .iter()
            .filter(|f| f.markers.iter().any(|m| text.contains(m.as_str())))
            .map(|f| f.id.as_str())
            .collect()
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (path, report) in reports("fixtures/wild/cases") {
        let label = Path::new(&root().join(&path)).with_file_name("label.json");
        let label: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(label).unwrap()).unwrap();
        let said = label["framework"].as_str().unwrap();
        // The label's name, as the catalog spells it (`keras` is TensorFlow's).
        let Some(fw) = frameworks
            .iter()
            .find(|f| f.id == said || f.aliases.iter().any(|a| a == said))
        else {
            continue; // `other`: a stack the catalog has no advice for
        };
        let Some(f) = primary_finding(&report) else {
            continue;
        };
        checked += 1;
        for r in &f.remediations {
            let names = named(r);
            if !names.is_empty() && !names.contains(&fw.id.as_str()) {
                wrong.push(format!("{path} ({said}): {r}"));
            }
        }
    }
    assert!(checked >= 75, "{checked}");
    assert!(
        wrong.is_empty(),
        "advice for another framework:\n{}",
        wrong.join("\n")
    );
}

/// The failing message's own stack decides, where the log names no
/// framework: PyTorch's cuBLAS check (ATen's `TORCH_CUDABLAS_CHECK`
/// wording) gets no TensorFlow advice, and a CUDA C program gets no
/// framework's (newcomer report, finding 5).
#[test]
fn a_pasted_message_gets_advice_for_its_own_stack() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let remedies = |log: &str| {
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner.scan_slice(log.as_bytes(), &mut sink).unwrap();
        let report = sink.into_report();
        primary_finding(&report).unwrap().remediations.join("\n")
    };
    let cublas = remedies(
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n",
    );
    assert!(
        !cublas.contains("TF_") && !cublas.contains("TensorFlow"),
        "{cublas}"
    );
    assert!(
        cublas.contains("torch."),
        "PyTorch's own advice stays: {cublas}"
    );
    let native =
        remedies("CUDA error at g05_cuda_oom.cu:11: out of memory (cudaErrorMemoryAllocation)\n");
    for framework in ["torch", "TF_", "tf.", "jax", "PyTorch", "TensorFlow"] {
        assert!(!native.contains(framework), "{framework}: {native}");
    }
    assert!(native.contains("cudaMalloc"), "{native}");
}

/// Whether a sentence sends the reader back into the log: a verb of
/// reading (`read`, `look`, `scroll`, `compare`, `map`, `find`, `check`,
/// `see`, `search`) together with a place in the log's own text (`above
/// the error`, `printed`, `just before`, `that follows`, `the message`,
/// `after the colon`, `the number`, `the traceback`, a quoted `Label:`).
/// Code spans are blanked first, so a command that prints something
/// (`nvidia-smi`) is not a place in the log; a span that is a log's label
/// (`Per-algorithm errors:`) stays.
fn sends_back_to_the_log(sentence: &str) -> bool {
    use regex::Regex;
    use std::sync::OnceLock;
    static RES: OnceLock<(Regex, Regex, Regex, Regex)> = OnceLock::new();
    let (span, label, verb, place) = RES.get_or_init(|| {
        (
            Regex::new(r"`[^`]*`").unwrap(),
            Regex::new(r"^`[A-Z][A-Za-z -]*:`$").unwrap(),
            Regex::new(r"\b(read|look|looks|scroll|compare|map|find|check|see|search)\b").unwrap(),
            Regex::new(concat!(
                r"\b(just|right|lines?|look|see|output|printed) above\b",
                r"|\babove (it|this|the (error|message|line|lines|banner|report|traceback|summary|warning))\b",
                r"|\bbefore it\b|just before|\bprinted\b|that follows?\b|\bfollows\b",
                r"|\bunder the (message|warning|banner|error)|after the colon",
                r"|\bthe message\b|\bin the message|\bearlier (log )?lines?\b|\bthe log\b",
                r"|\bthe number\b|\bsuffix\b|\bthe output\b|\bits output\b|\bthe traceback\b",
                r"|\bthe summary\b|came before|`[a-z][a-z -]*:`",
            ))
            .unwrap(),
        )
    });
    let text = span
        .replace_all(sentence, |c: &regex::Captures<'_>| {
            if label.is_match(&c[0]) {
                c[0].to_lowercase()
            } else {
                "`x`".to_string()
            }
        })
        .to_lowercase();
    // Scrolling is only ever done in the log.
    let scroll = text.contains("scroll up") || text.contains("scroll back");
    scroll || (verb.is_match(&text) && place.is_match(&text))
}

/// A remediation never asks the reader to do what the report did: to
/// scroll up to an earlier error (the report links fallout to it and names
/// the primary), to read a value out of the message (a placeholder states
/// it), or to look a status number up (the status tables name it). Checked
/// on every remediation the catalog holds, and on every remediation the
/// reports of the fixtures give (tailored ones included, with their
/// placeholders filled: none may be left).
#[test]
fn no_remediation_sends_the_reader_back_into_the_log() {
    assert!(sends_back_to_the_log(
        "Scroll up: the real cause is usually an earlier line."
    ));
    assert!(sends_back_to_the_log(
        "Read the `Per-algorithm errors:` that follow."
    ));
    assert!(!sends_back_to_the_log(
        "Check free GPU memory: `nvidia-smi --query-gpu=memory.used --format=csv`."
    ));
    assert!(!sends_back_to_the_log(
        "Check the launch: `threadsperblock` above 1024 is refused."
    ));
    let catalog = Catalog::builtin().unwrap();
    let mut asked = Vec::new();
    let written = catalog
        .patterns()
        .iter()
        .flat_map(|p| p.remediations.iter().map(move |r| (p.id.as_str(), r)))
        .chain(
            catalog
                .causes()
                .iter()
                .flat_map(|c| c.remediations.iter().map(move |r| (c.id.as_str(), r))),
        );
    for (id, r) in written {
        for s in sentences(r).iter().filter(|s| sends_back_to_the_log(s)) {
            asked.push(format!("{id}: {s}"));
        }
    }
    let placeholder = regex::Regex::new(r"\{[a-z_]+\}|\(`[a-z_]+`\)").unwrap();
    let mut given = 0;
    for (path, report) in reports("fixtures") {
        for f in &report.findings {
            for r in &f.remediations {
                given += 1;
                let prose: String = r.split('`').step_by(2).collect::<Vec<_>>().join(" ");
                if placeholder.is_match(&prose) {
                    asked.push(format!("{path}: {}: unfilled: {r}", f.class));
                }
                for s in sentences(r).iter().filter(|s| sends_back_to_the_log(s)) {
                    asked.push(format!("{path}: {}: {s}", f.class));
                }
            }
        }
    }
    assert!(given > 500, "{given}");
    asked.sort();
    asked.dedup();
    assert!(
        asked.is_empty(),
        "{} remediation sentences send the reader back into the log:\n{}",
        asked.len(),
        asked.join("\n")
    );
}
