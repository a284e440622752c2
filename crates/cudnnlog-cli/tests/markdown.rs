//! `--format markdown` rendered by a CommonMark renderer (pulldown-cmark,
//! with GitHub's extensions): whatever a log holds, the output has no link,
//! image, raw HTML or emphasis of the log's making, the log's text shows
//! verbatim in code blocks, and the tables keep their rows and cells.

mod common;

use common::{cudnnlog, root};
use cudnnlog::Report;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use std::path::{Path, PathBuf};

fn options() -> Options {
    // Everything GitHub-like that could turn text into markup; not smart
    // punctuation (it rewrites quotes), metadata blocks or heading ids.
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
        | Options::ENABLE_MATH
        | Options::ENABLE_WIKILINKS
        | Options::ENABLE_SUPERSCRIPT
        | Options::ENABLE_SUBSCRIPT
        | Options::ENABLE_DEFINITION_LIST
}

/// What a rendering shows: the text of code blocks, of inline code, of
/// everything; the tables as rows of cell texts; the headings.
#[derive(Default, Debug)]
struct Rendered {
    html: String,
    code_blocks: Vec<String>,
    tables: Vec<Vec<Vec<String>>>,
    headings: Vec<String>,
    /// The text of each list item, code included, without its sub-lists.
    items: Vec<String>,
    paragraphs: Vec<String>,
}

fn render(md: &str) -> Result<Rendered, String> {
    let mut r = Rendered::default();
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, Parser::new_ext(md, options()));
    r.html = html;
    let mut block: Option<String> = None;
    let mut cell: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut items: Vec<String> = Vec::new();
    let mut paragraph: Option<String> = None;
    let mut strong = 0;
    for ev in Parser::new_ext(md, options()) {
        let text = match &ev {
            Event::Text(t) | Event::Code(t) => Some(t.to_string()),
            Event::SoftBreak | Event::HardBreak => Some(" ".into()),
            _ => None,
        };
        if let Some(t) = &text {
            for s in [&mut block, &mut cell, &mut heading, &mut paragraph]
                .into_iter()
                .flatten()
            {
                s.push_str(t);
            }
            if let Some(i) = items.last_mut() {
                i.push_str(t);
            }
        }
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => return Err(format!("raw HTML {h:?}")),
            Event::InlineMath(m) | Event::DisplayMath(m) => return Err(format!("math {m:?}")),
            Event::FootnoteReference(f) => return Err(format!("footnote {f:?}")),
            Event::TaskListMarker(_) => return Err("task list marker".into()),
            Event::Start(Tag::Link { dest_url, .. }) => return Err(format!("link to {dest_url}")),
            Event::Start(Tag::Image { dest_url, .. }) => {
                return Err(format!("image of {dest_url}"))
            }
            Event::Start(
                t @ (Tag::Emphasis
                | Tag::Strikethrough
                | Tag::Superscript
                | Tag::Subscript
                | Tag::HtmlBlock
                | Tag::BlockQuote(_)
                | Tag::FootnoteDefinition(_)
                | Tag::DefinitionList
                | Tag::MetadataBlock(_)),
            ) => return Err(format!("markup the report never writes: {t:?}")),
            Event::Start(Tag::Strong) => strong += 1,
            Event::End(TagEnd::Strong) => strong -= 1,
            Event::Start(Tag::CodeBlock(_)) => block = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => r.code_blocks.push(block.take().unwrap()),
            Event::Start(Tag::Table(_)) => r.tables.push(Vec::new()),
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                r.tables.last_mut().unwrap().push(Vec::new())
            }
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => {
                let c = cell.take().unwrap();
                r.tables.last_mut().unwrap().last_mut().unwrap().push(c);
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => r.headings.push(heading.take().unwrap()),
            Event::Start(Tag::Item) => items.push(String::new()),
            Event::End(TagEnd::Item) => r.items.push(items.pop().unwrap()),
            Event::Start(Tag::Paragraph) if items.is_empty() => paragraph = Some(String::new()),
            Event::End(TagEnd::Paragraph) => {
                if let Some(p) = paragraph.take() {
                    r.paragraphs.push(p);
                }
            }
            _ => {}
        }
    }
    assert_eq!(strong, 0);
    for bad in ["<a ", "<img", "<script", "<iframe", "<svg"] {
        if r.html.contains(bad) {
            return Err(format!("HTML has {bad}"));
        }
    }
    Ok(r)
}

/// `render::sanitize` then one line: what the report shows of log text.
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' => ' ',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}

/// A prefix of `s` short enough to be shown unclipped.
fn head(s: &str, n: usize) -> String {
    shown(s).chars().take(n).collect()
}

fn environment_rows(report: &Report) -> Vec<(String, String)> {
    cudnnlog::report::ENVIRONMENT_FIELDS
        .iter()
        // The release a build fingerprint allows is checked on its own.
        .filter(|f| **f != "framework_build")
        .filter_map(|f| {
            let v = report.environment.get(*f)?;
            Some((f.replace('_', " "), cudnnlog::render::env_text(v)))
        })
        .collect()
}

/// Checks the Markdown of `report` as rendered.
fn check(md: &str, report: &Report) -> Result<Rendered, String> {
    if md.contains(|c: char| c.is_control() && c != '\n') {
        return Err("a control character".into());
    }
    let r = render(md)?;
    let known = |h: &str| {
        h == "cudnnlog report"
            || h.starts_with("Diagnosis: ")
            || [
                "Other findings",
                "Environment",
                "Errors no pattern explains",
            ]
            .contains(&h)
    };
    if let Some(h) = r.headings.iter().find(|h| !known(h)) {
        return Err(format!("a heading of the log's making: {h:?}"));
    }
    let in_code = |s: &str| r.code_blocks.iter().any(|b| b.contains(s));
    // Every finding's message, verbatim, in a code block.
    for f in report.findings.iter().take(21) {
        let h = head(&f.message, 60);
        if !h.is_empty() && !in_code(&h) {
            return Err(format!("message {h:?} is in no code block"));
        }
    }
    for t in report.unclassified.iter().take(10) {
        let h = head(&t.template, 60);
        if !in_code(&h) {
            return Err(format!("template {h:?} is in no code block"));
        }
    }
    let primary = report
        .findings
        .iter()
        .find(|f| Some(&f.class) == report.primary.as_ref() && f.caused_by.is_none());
    if let Some(c) = primary.and_then(|f| f.culprit.as_ref()) {
        for e in &c.evidence {
            let h = head(&e.text, 60);
            if !in_code(&format!("line {}: {h}", e.line)) {
                return Err(format!("evidence {h:?} is in no code block"));
            }
        }
        // The reason, escaped, renders as itself.
        let reason = shown(&c.reason).trim().to_string();
        if !r.paragraphs.iter().any(|p| p.contains(&reason)) {
            return Err(format!("the reason {reason:?} does not render as itself"));
        }
    }
    // The findings table: a header and a row per finding, four cells each,
    // the class, severity, count and line where they belong.
    let mut tables = r.tables.iter();
    // A status its symptom's message carries is shown in the symptom's
    // row ("carrying ..."), not in a row of its own.
    let folded = |f: &cudnnlog::report::Finding| {
        f.carried_by.is_some_and(|i| {
            report
                .findings
                .get(i)
                .is_some_and(|c| c.carried_by.is_none())
        })
    };
    let rows = report.findings.iter().filter(|f| !folded(f)).count();
    if !report.findings.is_empty() {
        let t = tables.next().ok_or("no findings table")?;
        let header = ["class", "severity", "count", "first seen"];
        if t[0] != header {
            return Err(format!("findings header {:?}", t[0]));
        }
        let shown: Vec<(usize, &cudnnlog::report::Finding)> = report
            .findings
            .iter()
            .enumerate()
            .filter(|(_, f)| !folded(f))
            .collect();
        if t.len() != shown.len() + 1 {
            return Err(format!(
                "{} rows for {} findings shown",
                t.len() - 1,
                shown.len()
            ));
        }
        for (row, (index, f)) in t[1..].iter().zip(shown) {
            let carried = report
                .findings
                .iter()
                .filter(|s| s.carried_by == Some(index) && folded(s))
                .all(|s| row[0].contains(&format!("carrying {}", s.class)));
            let ok = row.len() == 4
                && carried
                && row[0].starts_with(&f.class)
                && row[1] == f.severity.as_str()
                && row[2] == f.count.to_string()
                && (row[3] == format!("line {}", f.first.line)
                    || row[3].starts_with(&format!("line {}, ", f.first.line)));
            if !ok {
                return Err(format!("row {row:?} for {}", f.class));
            }
            if let Some(ts) = &f.first.timestamp {
                if !row[3].contains(&ts.replace('T', " ")) {
                    return Err(format!("row {row:?} lacks {ts}"));
                }
            }
        }
    }
    let env = environment_rows(report);
    let mut env_table = 0;
    let release = !report.environment.contains_key("framework_version")
        && report.environment.contains_key("framework_build");
    if !env.is_empty() || release {
        let t = tables.next().ok_or("no environment table")?;
        env_table = t.len();
        // The release a build fingerprint allows reads as words, never
        // as the catalog's ranges (">=2.11.0,<2.15.0").
        let mut rows: Vec<(String, String)> = Vec::new();
        for c in &t[1..] {
            let (k, v) = (c[0].clone(), c.get(1).cloned().unwrap_or_default());
            if k == "framework release" {
                if !release
                    || v.contains(['<', '>', '='])
                    || !v.ends_with("(by its messages' wording)")
                {
                    return Err(format!("framework release row {v:?}"));
                }
            } else {
                rows.push((k, v));
            }
        }
        let want: Vec<(String, String)> = env
            .iter()
            .map(|(f, v)| {
                let v = shown(v).trim().to_string();
                let v = if v.chars().count() > 200 {
                    v.chars().take(199).chain(['…']).collect()
                } else {
                    v
                };
                (f.clone(), v)
            })
            .collect();
        if rows != want {
            return Err(format!("environment rows {rows:?}, want {want:?}"));
        }
    }
    if tables.next().is_some() {
        return Err("a table of the log's making".into());
    }
    let trs = r.html.matches("<tr>").count();
    let want = if report.findings.is_empty() {
        0
    } else {
        rows + 1
    } + env_table;
    if trs != want {
        return Err(format!("{trs} <tr> for {want} rows"));
    }
    Ok(r)
}

fn markdown_of(args: &[&str], stdin: Option<&[u8]>) -> (String, Report) {
    let mut md_args = vec!["scan", "--format", "markdown"];
    md_args.extend_from_slice(args);
    let out = cudnnlog(&md_args, stdin);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).unwrap();
    let mut json_args = vec!["scan", "--format", "json"];
    json_args.extend_from_slice(args);
    let report = common::json(&cudnnlog(&json_args, stdin));
    (md, report)
}

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            logs(&p, out);
        } else if p.extension().is_some_and(|e| e == "log")
            || p.file_name().is_some_and(|n| n == "log.txt")
        {
            out.push(p);
        }
    }
}

#[test]
fn every_fixture_renders_as_laid_out() {
    let mut all = Vec::new();
    logs(&root().join("fixtures"), &mut all);
    all.sort();
    assert!(all.len() > 150, "fixtures missing");
    let mut bad = Vec::new();
    let mut excerpts = 0;
    for path in all {
        let rel = path
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let (md, report) = markdown_of(&[&rel], None);
        match check(&md, &report) {
            Ok(r) => excerpts += r.code_blocks.len(),
            Err(e) => bad.push(format!("{rel}: {e}\n{md}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
    assert!(excerpts > 150);
}

/// Text that would be markup, HTML, a link or a table cell if it were not
/// escaped or fenced.
const HOSTILE: &str = "| <script>alert(1)</script> [x](http://evil) ![i](http://evil/i.png) <http://evil> \
<img src=x onerror=alert(1)> `x` ``y`` ```` z ```` &amp; &#60;b&#62; &lt;i&gt; www.evil.com a@evil.com \
*em* _u_ **b** ~~s~~ ~t~ ^u^ $x$ $$y$$ [[wiki]] [^1] [r]: http://evil \\| \\`";

#[test]
fn hostile_messages_render_as_text() {
    let oom = format!(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free. {HOSTILE} \x1b]0;t\x07 \x1b[2J\r\n"
    );
    let (md, report) = markdown_of(&["-"], Some(oom.as_bytes()));
    let r = check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
    let hostile = shown(HOSTILE);
    assert!(r.code_blocks.iter().any(|b| b.contains(&hostile)), "{md}");
    assert!(
        md.contains("is free. | <script>"),
        "verbatim in its fence: {md}"
    );
    assert!(!md.contains('\u{1b}') && !md.contains('\u{7}') && !md.contains('\r'));
}

#[test]
fn hostile_captures_in_remediations_render_as_text() {
    let log = format!(
        "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\nRuntimeError: boom {HOSTILE}\n"
    );
    let (md, report) = markdown_of(&["-"], Some(log.as_bytes()));
    let r = check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
    let f = &report.findings[0];
    assert!(
        f.remediations[0].contains("<script>alert(1)</script>"),
        "the capture is in the remediation: {:?}",
        f.remediations
    );
    // The remediation shows the capture as the log has it (with backticks,
    // as one code span); the library clips a capture, so each part is a
    // log of its own.
    let item = |r: &Rendered| {
        r.items
            .iter()
            .find(|i| i.starts_with("PyTorch reports most misuse"))
            .cloned()
            .unwrap_or_else(|| panic!("{:?}", r.items))
    };
    assert!(item(&r).contains("boom | <script>alert(1)</script> [x](http://evil)"));
    for part in [
        "![i](http://evil/i.png) <http://evil> <img src=x onerror=alert(1)>",
        "&amp; &#60;b&#62; &lt;i&gt; www.evil.com a@evil.com",
        "*em* _u_ **b** ~~s~~ ~t~ ^u^ $x$ $$y$$",
        "[[wiki]] [^1] [r]: http://evil \\| \\` # x",
        "x `a` b ``c`` d ```e``` f",
    ] {
        let log = format!("RuntimeError: {part}\n");
        let (md, report) = markdown_of(&["-"], Some(log.as_bytes()));
        let r = check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
        // A capture with backticks is one code span: shown as the log has it.
        assert!(item(&r).contains(part), "{part:?} in {:?}\n{md}", item(&r));
    }
}

#[test]
fn hostile_unclassified_lines_and_culprit_evidence_render_as_text() {
    let log = format!("2026-11-29 19:41:10,000 ERROR hostile line {HOSTILE} ```````````\n");
    let (md, report) = markdown_of(&["-"], Some(log.as_bytes()));
    assert_eq!(report.unclassified.len(), 1, "{report:#?}");
    let r = check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
    assert!(r.code_blocks.iter().any(|b| b.contains("hostile line")));
    // The NCCL fixture with the straggler's last line made hostile: it is
    // both the culprit's evidence and quoted in its reason.
    let text = std::fs::read_to_string(
        root().join("fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log"),
    )
    .unwrap()
    .replace(
        "rank 1 waiting for data loader ...",
        &format!("rank 1 waiting for data loader {HOSTILE}"),
    );
    let (md, report) = markdown_of(&["-"], Some(text.as_bytes()));
    let culprit = report.findings[0].culprit.as_ref().unwrap();
    assert!(culprit.reason.contains("<script>"), "{culprit:?}");
    assert!(culprit.evidence.iter().any(|e| e.text.contains("<script>")));
    check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
}

#[test]
fn hostile_environment_values_and_paths_render_as_text() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("markdown");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "a`b ``c [x](http:evil) <i>|{}.log",
        std::process::id()
    ));
    std::fs::write(
        &path,
        "GPU models and configuration: GPU 0: NVIDIA <b>H200</b> [x](http://evil) | `y` &amp;\n\
         RuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
    .unwrap();
    let (md, report) = markdown_of(&[path.to_str().unwrap()], None);
    std::fs::remove_file(&path).unwrap();
    let gpu = report.environment["gpu"].as_str().unwrap();
    assert!(gpu.contains("<b>H200</b>"), "{gpu}");
    let r = check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
    // The path shows in full, as code.
    assert!(
        r.paragraphs
            .iter()
            .any(|p| p.contains(&format!("Scanned {}", path.display()))),
        "{:?}",
        r.paragraphs
    );
}

#[test]
fn a_long_backtick_run_cannot_close_its_fence() {
    let log = "RuntimeError: CUDA error: an illegal memory access was encountered\n\
         RuntimeError: CUDA error: an illegal memory access was encountered ``````````\n\
         ``````````\n\
         # heading?\n\
         <script>x</script>\n";
    let (md, report) = markdown_of(&["-"], Some(log.as_bytes()));
    check(&md, &report).unwrap_or_else(|e| panic!("{e}\n{md}"));
}
