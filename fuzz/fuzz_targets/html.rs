//! The HTML pages on arbitrary logs with arbitrary file names: up to four
//! files (the input split at its 0xff bytes; each part's first line names its
//! file, any bytes but `/` and NUL), scanned as one job and as a fleet of
//! one-file jobs, each page rendered. No panic, and nothing from a log or
//! a name is live in the page: every `<` outside the page's own style sheet
//! and script opens one of the page's own elements, every attribute is one
//! the page writes (no event handler), double-quoted, and every link stays
//! on the page (`href="#…"`).
#![no_main]

#[path = "common/mod.rs"]
mod common;

use common::scanner;
use cudnnlog::fleet::{scan_job, Job};
use cudnnlog::MmapChoice;
use libfuzzer_sys::fuzz_target;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// The elements the page writes (`render/html`).
const ELEMENTS: &[&str] = &[
    "a", "b", "body", "br", "circle", "code", "details", "div", "footer", "g", "h1", "h2", "h3",
    "head", "header", "html", "i", "input", "label", "li", "line", "main", "mark", "meta", "ol",
    "p", "path", "pre", "rect", "script", "section", "span", "strong", "style", "summary", "svg",
    "table", "td", "text", "th", "title", "tr", "ul",
];

/// The attributes it writes.
const ATTRIBUTES: &[&str] = &[
    "aria-label", "charset", "class", "content", "cx", "cy", "d", "data-filter", "data-finding",
    "data-line", "height", "href", "http-equiv", "id", "lang", "name", "r", "role", "style",
    "text-anchor", "title", "type", "width", "x", "x1", "x2", "xmlns", "y", "y1", "y2", "open",
    "placeholder", "value", "checked", "for", "viewBox", "viewbox", "stroke", "fill",
    "transform", "points", "tabindex", "hidden", "colspan", "rowspan", "datetime",
];

/// Checks that every tag of `page` is one of the page's own.
fn check(page: &str) {
    let b = page.as_bytes();
    let mut i = 0;
    while let Some(off) = page[i..].find('<') {
        let at = i + off;
        let rest = &page[at + 1..];
        if rest.starts_with("!DOCTYPE") || rest.starts_with("!doctype") {
            i = at + 1;
            continue;
        }
        if let Some(r) = rest.strip_prefix("!--") {
            let end = r.find("-->").expect("an unclosed comment");
            i = at + 4 + end + 3;
            continue;
        }
        let closing = rest.starts_with('/');
        let name_start = at + 1 + usize::from(closing);
        let name_len = page[name_start..]
            .bytes()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        let name = &page[name_start..name_start + name_len];
        assert!(
            ELEMENTS.contains(&name),
            "a `<` that opens no element of the page: {:?}",
            &page[at..page.len().min(at + 80)]
        );
        let mut j = name_start + name_len;
        if !closing {
            // Attributes until `>`.
            loop {
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                assert!(j < b.len(), "a tag runs to the end");
                if b[j] == b'>' {
                    break;
                }
                if b[j] == b'/' && b.get(j + 1) == Some(&b'>') {
                    j += 1;
                    break;
                }
                let n = page[j..]
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == b'-')
                    .count();
                let attr = &page[j..j + n];
                assert!(
                    n > 0 && ATTRIBUTES.contains(&attr),
                    "an attribute the page does not write: {:?} in {:?}",
                    attr,
                    &page[at..page.len().min(at + 120)]
                );
                j += n;
                if b.get(j) == Some(&b'=') {
                    assert_eq!(b.get(j + 1), Some(&b'"'), "an unquoted value");
                    let end = page[j + 2..].find('"').expect("an unclosed value") + j + 2;
                    let value = &page[j + 2..end];
                    assert!(!value.contains('<'), "a `<` in an attribute: {value:?}");
                    if attr == "href" {
                        assert!(value.starts_with('#'), "a link off the page: {value:?}");
                    }
                    j = end + 1;
                }
            }
        }
        i = j.max(at + 1);
        // The page's own style sheet and script: skip to their end.
        if !closing && (name == "script" || name == "style") {
            let close = format!("</{name}>");
            let end = page[i..].find(&close).expect("an unclosed script or style");
            i += end;
        }
    }
}

static RUN: AtomicU64 = AtomicU64::new(0);

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!(
        "cudnnlog-fuzz-html-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (k, part) in data.split(|&b| b == 0xff).take(4).enumerate() {
        let (name, text) = match part.iter().position(|&b| b == b'\n') {
            Some(n) => (&part[..n], &part[n + 1..]),
            None => (&b""[..], part),
        };
        let mut name: Vec<u8> = name
            .iter()
            .copied()
            .filter(|&c| c != b'/' && c != 0)
            .take(200)
            .collect();
        // Distinct, never `.` or `..`, never empty.
        name.extend_from_slice(format!(".{k}").as_bytes());
        let path = dir.join(OsStr::from_bytes(&name));
        std::fs::write(&path, text).unwrap();
        paths.push(PathBuf::from(path));
    }
    let s = scanner();
    let job = Job::merged("job <b>&\"all\"", paths.clone());
    let report = scan_job(s, &job, MmapChoice::never()).report;
    check(&cudnnlog_cli::fuzzing::html_report(&report, s.catalog()));
    let jobs: Vec<Job> = paths.into_iter().map(Job::single).collect();
    check(&cudnnlog_cli::fuzzing::html_fleet(s, &jobs));
    let _ = std::fs::remove_dir_all(&dir);
});
