//! What the two formats for CI share: GitHub Actions workflow commands
//! ([`github`](super::github): annotations on the log's lines) and JUnit
//! XML ([`junit`](super::junit): a test case per job), for training smoke
//! tests; and the tests of both.
//!
//! Log text is made safe for each format: a workflow command is one line
//! whatever the log holds (so a log cannot issue commands of its own, such
//! as `::add-mask::` or `::stop-commands::`), and the XML is well-formed
//! (escaped, with the characters XML 1.0 forbids removed).

use cudnnlog::catalog::Catalog;
use cudnnlog::report::{CauseBasis, Finding, PRIOR_ONLY};

/// The longest message put in an annotation or a failure's `message`.
pub(super) const MESSAGE_CHARS: usize = 1000;

/// Text without control characters (terminal escapes, `\r`, NUL, DEL, C1),
/// lines kept when `lines`, else joined by spaces.
pub(super) fn clean(s: &str, lines: bool) -> String {
    s.chars()
        .filter_map(|c| match c {
            '\n' if lines => Some('\n'),
            '\n' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// `s` cut to `max` characters, with `…` when cut.
pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The top cause of a finding, as a sentence: `Likely cause: TITLE (id,
/// 69%).`
pub(super) fn top_cause(f: &Finding, catalog: &Catalog) -> Option<String> {
    let c = f.causes.first()?;
    let title = catalog
        .cause(&c.id)
        .map_or(c.id.as_str(), |x| x.title.as_str());
    Some(match c.basis() {
        CauseBasis::Evidence => format!(
            "Likely cause: {title} ({}, {:.0}%).",
            c.id,
            c.confidence * 100.0
        ),
        CauseBasis::Prior => format!("Possible cause: {title} ({}, {PRIOR_ONLY}).", c.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::github::{gh_data, gh_property, github};
    use crate::render::junit::junit;
    use cudnnlog::report::FindingsSink;
    use cudnnlog::report::{Outcome, Report};
    use cudnnlog::{MmapChoice, ScannerBuilder};
    use std::path::{Path, PathBuf};

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(rel)
    }

    fn catalog() -> Catalog {
        Catalog::builtin().unwrap()
    }

    fn report_of(path: &Path) -> Report {
        let scanner = ScannerBuilder::new().build(catalog());
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner
            .scan_path(path, MmapChoice::never(), &mut sink)
            .unwrap();
        sink.into_report()
    }

    fn report_of_bytes(log: &[u8]) -> Report {
        let scanner = ScannerBuilder::new().build(catalog());
        let mut sink = FindingsSink::new(scanner.catalog());
        scanner.scan_reader("<stdin>", log, &mut sink).unwrap();
        sink.into_report()
    }

    fn github_of(r: &Report) -> String {
        let mut out = Vec::new();
        github(&mut out, r, &catalog()).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn junit_of(jobs: &[(&str, &Report)]) -> String {
        let mut out = Vec::new();
        junit(&mut out, jobs, &catalog()).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A workflow command read back as the runner reads it: the command,
    /// its properties (unescaped), its message (unescaped).
    fn parse_command(line: &str) -> (String, Vec<(String, String)>, String) {
        let unescape = |s: &str| {
            s.replace("%0A", "\n")
                .replace("%0D", "\r")
                .replace("%3A", ":")
                .replace("%2C", ",")
                .replace("%25", "%")
        };
        let rest = line.strip_prefix("::").expect(line);
        let (head, data) = rest.split_once("::").expect(line);
        let (command, props) = head.split_once(' ').unwrap_or((head, ""));
        let props = props
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').expect(p);
                (k.to_string(), unescape(v))
            })
            .collect();
        (command.to_string(), props, unescape(data))
    }

    #[test]
    fn github_annotates_every_finding_of_a_real_log() {
        let path = fixture("real/h200x2-torchrun-nccl-watchdog-timeout.log");
        let report = report_of(&path);
        let text = github_of(&report);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), report.findings.len(), "{text}");
        for (line, f) in lines.iter().zip(&report.findings) {
            assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
            let (command, props, message) = parse_command(line);
            assert_eq!(command, "error");
            let keys: Vec<&str> = props.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, ["file", "line", "title"]);
            assert_eq!(props[0].1, path.display().to_string());
            assert_eq!(props[1].1, f.first.line.to_string());
            assert_eq!(props[2].1, format!("{} — {}", f.class, f.title));
            let parts: Vec<&str> = message.split('\n').collect();
            assert_eq!(parts[0], f.message);
            assert!(message.contains("\nLikely cause: "), "{message}");
            // Fallout has no remedy of its own: it says to fix its cause.
            match f.fallout_of {
                None => assert!(
                    message.contains(&format!("\nWhat to do: {}", f.remediations[0])),
                    "{message}"
                ),
                Some(_) => assert!(
                    f.remediations.is_empty() && !message.contains("What to do"),
                    "{message}"
                ),
            }
        }
        // The NCCL timeout is annotated with its line and the first remedy.
        let (_, props, message) = parse_command(lines[0]);
        assert_eq!(props[1].1, "14");
        assert!(message.contains("Start with rank 1"), "{message}");
        // The segfault is fallout of the timeout.
        let (_, _, message) = parse_command(lines[1]);
        assert!(
            message.contains("Fallout of nccl.timeout (line 14)"),
            "{message}"
        );
    }

    #[test]
    fn github_warnings_and_clean_logs() {
        let degraded = report_of(&fixture("synthetic/ddp-plan-failed-burst.log"));
        assert_eq!(degraded.outcome, Outcome::Degraded);
        let text = github_of(&degraded);
        assert!(text.starts_with("::warning file="), "{text}");
        assert_eq!(text.lines().count(), degraded.findings.len());
        let clean = report_of(&fixture("real/h200-torch-healthy-train.log"));
        assert_eq!(github_of(&clean), "");
    }

    #[test]
    fn github_escapes_so_a_log_cannot_issue_commands() {
        assert_eq!(gh_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(gh_property("a: b, 5%\n"), "a%3A b%2C 5%25%0A");
        let log = b"RuntimeError: boom 100% ::add-mask::secret \x1b[31m::stop-commands::x\r\n::error::pwned, a:b\n";
        let r = report_of_bytes(log);
        let text = github_of(&r);
        assert_eq!(text.lines().count(), r.findings.len(), "{text}");
        for line in text.lines() {
            assert!(line.starts_with("::error title="), "{line}");
            assert!(!line.chars().any(|c| c.is_control()), "{line:?}");
            // The only `::` that ends the properties is the first.
            let (_, _, message) = parse_command(line);
            assert!(
                message.contains("boom 100% ::add-mask::secret"),
                "{message}"
            );
        }
        // No file for bytes from standard input.
        assert!(!text.contains("file="));
    }

    #[test]
    fn junit_has_a_test_case_per_job() {
        let failed = report_of(&fixture("real/h200x2-torchrun-nccl-watchdog-timeout.log"));
        let degraded = report_of(&fixture("synthetic/ddp-plan-failed-burst.log"));
        let clean = report_of(&fixture("real/h200-torch-healthy-train.log"));
        let oom = report_of(&fixture("real/h200-torch-oom-amp-train.log"));
        let jobs = [
            ("nccl-timeout", &failed),
            ("plan-failed", &degraded),
            ("healthy", &clean),
            ("oom", &oom),
        ];
        let xml = junit_of(&jobs);
        let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        let suite = doc.root_element();
        assert_eq!(suite.tag_name().name(), "testsuite");
        assert_eq!(suite.attribute("name"), Some("cudnnlog"));
        assert_eq!(suite.attribute("tests"), Some("4"));
        assert_eq!(suite.attribute("failures"), Some("2"));
        assert_eq!(suite.attribute("errors"), Some("0"));
        let cases: Vec<_> = suite.children().filter(|n| n.is_element()).collect();
        assert_eq!(cases.len(), 4);
        for (case, (name, _)) in cases.iter().zip(&jobs) {
            assert_eq!(case.tag_name().name(), "testcase");
            assert_eq!(case.attribute("classname"), Some("cudnnlog"));
            assert_eq!(case.attribute("name"), Some(*name));
        }
        let child = |i: usize, tag: &str| {
            cases[i]
                .children()
                .find(|n| n.has_tag_name(tag))
                .map(|n| (n, n.text().unwrap_or("").to_string()))
        };
        // Failed: the primary failure, its cause and what to do.
        let (failure, body) = child(0, "failure").unwrap();
        assert_eq!(failure.attribute("type"), Some("nccl.timeout"));
        let f = &failed.findings[0];
        assert!(failure
            .attribute("message")
            .unwrap()
            .starts_with("nccl.timeout: [Rank 0] Watchdog caught collective operation timeout"));
        assert!(body.contains(&f.message), "{body}");
        assert!(body.contains("At fault: rank 1"), "{body}");
        assert!(body.contains("Likely cause: "), "{body}");
        assert!(
            body.contains(&format!("  1. {}", f.remediations[0])),
            "{body}"
        );
        // Its other findings are in its output.
        let (_, out) = child(0, "system-out").unwrap();
        assert!(out.contains("error proc.segfault"), "{out}");
        // Degraded: passes, with its warnings in its output.
        assert!(child(1, "failure").is_none());
        let (_, out) = child(1, "system-out").unwrap();
        assert!(out.contains("warning cudnn.plan_failed"), "{out}");
        assert!(out.contains(&degraded.findings[0].remediations[0]), "{out}");
        // Clean: passes, nothing to say.
        assert_eq!(cases[2].children().count(), 0);
        let (failure, body) = child(3, "failure").unwrap();
        assert_eq!(failure.attribute("type"), Some("cuda.oom"));
        assert!(body.contains("torch.OutOfMemoryError: CUDA out of memory"));
    }

    #[test]
    fn junit_escapes_and_drops_what_xml_forbids() {
        let log = "RuntimeError: CUDA error: an illegal memory access was encountered & <b>\"it's\"</b> ]]> \x01\x08\x0b\x0c\x1b[31m\u{7f}\u{85}\u{fffe}\u{ffff}\u{1F600} end\n";
        let r = report_of_bytes(log.as_bytes());
        assert_eq!(r.outcome, Outcome::Failed);
        let name = "job <&> \"'\x00\x1b\u{fffe}";
        let xml = junit_of(&[(name, &r), ("empty", &report_of_bytes(b""))]);
        let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
        let cases: Vec<_> = doc
            .root_element()
            .children()
            .filter(|n| n.is_element())
            .collect();
        assert_eq!(cases[0].attribute("name"), Some("job <&> \"'"));
        let failure = cases[0]
            .children()
            .find(|n| n.has_tag_name("failure"))
            .unwrap();
        let message = failure.attribute("message").unwrap();
        assert!(message.contains("& <b>\"it's\"</b> ]]>"), "{message}");
        assert!(message.ends_with("\u{1F600} end"), "{message:?}");
        assert!(!message.chars().any(|c| c.is_control()), "{message:?}");
        let body = failure.text().unwrap();
        assert!(body.contains("& <b>\"it's\"</b> ]]>"), "{body}");
        assert_eq!(doc.root_element().attribute("failures"), Some("1"), "{xml}");
        assert_eq!(cases[1].attribute("name"), Some("empty"));
    }
}
