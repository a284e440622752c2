//! A value the log supplies, filled into a sentence of advice, lands in
//! every format as what it is: the device-side assert's condition (which
//! the log writes, backticks and all) is one piece of code, the advice's
//! own commands stay code, and nothing of the log's becomes a link, an
//! image, HTML, an XML element or a workflow command.

mod common;

use common::Scratch;
use pulldown_cmark::{Event, Options, Parser};

/// A kernel's assert whose condition holds one backtick, Markdown, HTML
/// and a workflow command: filled into "the kernel `K` asserted `A`", an
/// odd backtick closed the span early and turned the rest of the advice
/// inside out (its command became text, its prose code).
const ASSERTION: &str =
    "t >= 0 && t < n_classes` <b>x</b> [click me](https://evil.example/x) <img src=y> %0A::add-mask::z";

fn log() -> String {
    format!(
        "2026-11-29 19:42:15,020 INFO train: step 6 loss 2.3553\n\
         /pytorch/aten/src/ATen/native/cuda/Loss.cu:245: nll_loss_forward_reduce_cuda_kernel_2d: \
         block: [0,0,0], thread: [17,0,0] Assertion `{ASSERTION}` failed.\n\
         RuntimeError: CUDA error: device-side assert triggered\n"
    )
}

/// The command the remediation that states the condition gives.
const COMMAND: &str = "CUDA_LAUNCH_BLOCKING=1 python train.py";

fn scan(s: &Scratch, format: &str) -> String {
    let path = s.write("assert.log", log().as_bytes());
    let out = common::cudnnlog(&["scan", "--format", format, path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{format}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The library: the condition is filled in as one code span fenced for
/// it, the command after it is still a code span of its own.
#[test]
fn a_filled_value_keeps_the_sentence_s_code_spans() {
    let s = Scratch::new("escaping-json");
    let report: cudnnlog::Report = serde_json::from_str(&scan(&s, "json")).unwrap();
    let fixes = &report.findings[0].remediations;
    let fix = fixes
        .iter()
        .find(|r| r.contains("asserted"))
        .unwrap_or_else(|| panic!("{fixes:#?}"));
    assert!(
        fix.contains(&format!(
            "asserted ``{ASSERTION}``: reproduce it with `{COMMAND}`"
        )),
        "{fix}"
    );
}

/// Markdown, as a CommonMark renderer with GitHub's extensions reads it:
/// the condition is one inline code, the command another, and there is no
/// link, image or HTML.
#[test]
fn markdown_shows_the_value_as_code_and_makes_no_markup_of_it() {
    let s = Scratch::new("escaping-markdown");
    let md = scan(&s, "markdown");
    let options = Options::ENABLE_TABLES | Options::ENABLE_GFM | Options::ENABLE_STRIKETHROUGH;
    let mut code = Vec::new();
    for event in Parser::new_ext(&md, options) {
        match event {
            Event::Code(c) => code.push(c.to_string()),
            Event::Html(h) | Event::InlineHtml(h) => panic!("raw HTML {h:?} in\n{md}"),
            Event::Start(pulldown_cmark::Tag::Link { dest_url, .. }) => {
                panic!("a link to {dest_url} in\n{md}")
            }
            Event::Start(pulldown_cmark::Tag::Image { dest_url, .. }) => {
                panic!("an image {dest_url} in\n{md}")
            }
            _ => {}
        }
    }
    assert!(code.iter().any(|c| c == ASSERTION), "{code:#?}");
    assert!(code.iter().any(|c| c == COMMAND), "{code:#?}");
}

/// The HTML page: the condition is one `<code>`, escaped; the command
/// another (with its copy button); no element of the log's.
#[test]
fn html_shows_the_value_as_one_escaped_code_element() {
    let s = Scratch::new("escaping-html");
    let html = scan(&s, "html");
    let escaped = ASSERTION
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        html.contains(&format!("asserted <code class=\"cmd\">{escaped}</code>")),
        "no whole condition"
    );
    assert!(html.contains(&format!("<code class=\"cmd\">{COMMAND}</code>")));
    assert!(!html.contains("<b>x</b>") && !html.contains("<img src=y>"));
}

/// JUnit XML is well-formed and holds the condition verbatim; GitHub
/// annotations stay one line each, the log's `%0A` kept as text; the
/// table puts the command on a line of its own.
#[test]
fn ci_formats_and_the_terminal_keep_the_value_as_text() {
    let s = Scratch::new("escaping-ci");
    let xml = scan(&s, "junit");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let text: String = doc
        .descendants()
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains(&format!("asserted ``{ASSERTION}``")),
        "{text}"
    );
    let github = scan(&s, "github");
    for line in github.lines() {
        assert!(
            line.starts_with("::error ") || line.starts_with("::warning "),
            "{line}"
        );
    }
    assert!(github.contains("%250A::add-mask::z"), "{github}");
    let table = scan(&s, "table");
    assert!(table.lines().any(|l| l.trim() == COMMAND), "{table}");
}
