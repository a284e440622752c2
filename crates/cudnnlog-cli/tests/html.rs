//! `--format html`: one self-contained page per job or fleet, whatever the
//! log holds; rendered in headless Chromium where it is installed (CI sets
//! `CUDNNLOG_REQUIRE_BROWSER=1`, which makes a missing browser a failure).

mod common;

use common::{cudnnlog, json, Scratch, FLEET_LOGS};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

const WATCHDOG: &str = "fixtures/real/h200x2-torchrun-nccl-watchdog-timeout.log";

fn page(args: &[&str]) -> String {
    let out = cudnnlog(args, None);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every value of attribute `name` in `html`.
fn attributes<'h>(html: &'h str, name: &str) -> Vec<&'h str> {
    let needle = format!(" {name}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

/// The page names no other resource: no `src`, `href` only within the
/// page, no `url(` or `@import` in the style, one script (its own).
fn assert_self_contained(html: &str) {
    assert!(attributes(html, "src").is_empty(), "a src attribute");
    for href in attributes(html, "href") {
        assert!(href.starts_with('#'), "href {href:?}");
    }
    assert!(!html.contains("url("), "url( in the page");
    assert!(!html.contains("@import"));
    assert_eq!(html.matches("<script").count(), 1, "one script");
    assert!(html.contains("Content-Security-Policy"));
}

/// How many occurrence marks the report's findings make on the timeline.
fn occurrences(report: &cudnnlog::Report) -> usize {
    report.findings.iter().map(|f| f.occurrences.len()).sum()
}

#[test]
fn the_watchdog_log_is_one_page_with_its_timeline() {
    let html = page(&["scan", "--format", "html", WATCHDOG]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_self_contained(&html);
    assert!(html.len() < 1 << 20, "{} bytes", html.len());
    assert!(html.contains("<svg class=\"timeline\""));
    // The verdict: the class, the culprit, the causes, what to do.
    assert!(html.contains("<h2>What failed</h2>"));
    assert!(html.contains("nccl.timeout"));
    assert!(html.contains("At fault: <strong>rank 1</strong>"));
    assert!(html.contains("<h3>What to do</h3>"));
    // One lane per rank (the silent culprit too) and one mark per
    // occurrence, each a link to its finding with the line as hover text.
    assert!(html.contains(">rank 0</text>"));
    assert!(html.contains(">rank 1 · culprit</text>"));
    assert!(html.contains(">launcher, shell</text>"));
    // Rank 1's last line, 20 s before the timeout, is on its lane.
    assert!(html.contains("<g class=\"evidence\" data-line=\"13\"><title>evidence for the culprit — line 13: 2026-11-29 19:46:34,003 INFO ddp: rank 1 waiting"));
    let report = json(&cudnnlog(&["scan", "--format", "json", WATCHDOG], None));
    let marks = html.matches("<g class=\"mark ").count();
    assert_eq!(marks, occurrences(&report));
    assert_eq!(marks, 5, "3 timeouts, 2 launcher reports");
    assert!(html.contains("data-line=\"14\"><title>nccl.timeout — line 14, 2026-11-29 19:46:54"));
    // The log around the first line, read back from the file.
    assert!(
        html.contains("<mark><span class=\"ln\">    14</span> [rank0]:[E1129 19:46:54.456820794")
    );
    assert!(html.contains("<span class=\"ln\">    13</span> 2026-11-29 19:46:34,003 INFO ddp: rank 1 waiting for data loader"));
    // The environment.
    assert!(html.contains("<th>nccl</th><td>2.28.9</td>"));
}

#[test]
fn output_goes_to_the_file_named_and_its_extension_picks_the_format() {
    let s = Scratch::new("html-output");
    let file = s.0.join("report.html");
    let out = cudnnlog(&["scan", WATCHDOG, "-o", file.to_str().unwrap()], None);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("nccl.timeout"));
    // --format wins over the extension.
    let md = s.0.join("x.html");
    cudnnlog(
        &[
            "scan",
            WATCHDOG,
            "--format",
            "markdown",
            "-o",
            md.to_str().unwrap(),
        ],
        None,
    );
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("## cudnnlog report"));
    // The log itself is never the output: it is refused, and left whole.
    let log = s.copy(WATCHDOG, "train.log");
    let before = std::fs::read(&log).unwrap();
    let same = cudnnlog(
        &["scan", log.to_str().unwrap(), "-o", log.to_str().unwrap()],
        None,
    );
    assert_eq!(same.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&same.stderr).contains("is an input of the scan"));
    assert_eq!(std::fs::read(&log).unwrap(), before);
    // A file that cannot be created is one line on standard error.
    let bad = cudnnlog(&["scan", WATCHDOG, "-o", "/nonexistent/dir/r.html"], None);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr)
        .starts_with("cudnnlog: cannot write /nonexistent/dir/r.html"));
}

/// A log whose error messages carry markup, scripts, style breakers,
/// `javascript:` links and SVG payloads; under a file name that does too.
fn hostile_log(s: &Scratch) -> PathBuf {
    let payloads = [
        "<script>document.title='pwned'</script>",
        "</style><script>document.title='pwned'</script>",
        "\"><img src=x onerror=\"document.title='pwned'\">",
        "<a href=\"javascript:document.title='pwned'\">click</a>",
        "<svg onload=\"document.title='pwned'\"><circle r=9/></svg>",
        "]]></title></g></svg><iframe src=\"data:text/html,x\"></iframe>",
        "\u{1b}]8;;http://evil\u{7}link\u{1b}]8;;\u{7} \u{202e}txt.exe",
    ];
    let mut log = String::from("step 1 loss 2.0\n");
    for (i, p) in payloads.iter().enumerate() {
        log.push_str(&format!(
            "2026-11-29 10:00:0{i},000 ERROR RuntimeError: CUDA error: an illegal memory access was encountered {p}\n"
        ));
        log.push_str(&format!(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {i}.00 GiB. {p}\n"
        ));
        log.push_str(&format!("worker {i} failed: {p}\n"));
    }
    s.write("<img src=x onerror=alert(1)>.log", log.as_bytes())
}

#[test]
fn nothing_in_a_log_becomes_markup() {
    let s = Scratch::new("html-hostile");
    let log = hostile_log(&s);
    let html = page(&["scan", "--format", "html", log.to_str().unwrap()]);
    assert_self_contained(&html);
    for raw in [
        "<img",
        "<iframe",
        "<svg onload",
        "onerror=\"",
        "</style><script",
        "javascript:document",
    ] {
        // `javascript:` may appear as escaped text, never as a link.
        if raw == "javascript:document" {
            assert!(!html.contains("href=\"javascript:"));
            continue;
        }
        assert!(!html.contains(raw), "{raw} in the page");
    }
    assert!(html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"));
    assert!(!html.contains('\u{1b}') && !html.contains('\u{202e}') && !html.contains('\u{7}'));
    // The page is still whole: its findings, the end of the document.
    assert!(html.contains("cuda.illegal_address") && html.trim_end().ends_with("</html>"));
    assert_eq!(html.matches("</style>").count(), 1);
}

/// The fleet of the fleet tests (real logs, two copies of one failure, a
/// compressed one, a healthy run), and the 2-GPU watchdog job.
fn fleet(s: &Scratch) {
    for (from, to) in FLEET_LOGS {
        s.copy(from, to);
    }
    s.copy(WATCHDOG, "e/job-108.log");
}

#[test]
fn a_fleet_page_has_the_summary_and_a_section_per_failed_job() {
    let s = Scratch::new("html-fleet");
    fleet(&s);
    let html = page(&["scan", "--format", "html", s.path()]);
    assert_self_contained(&html);
    let doc: serde_json::Value =
        serde_json::from_slice(&cudnnlog(&["scan", "--format", "json", s.path()], None).stdout)
            .unwrap();
    let n = |k: &str| doc["summary"][k].as_u64().unwrap();
    assert_eq!((n("jobs"), n("clean")), (8, 1), "{}", doc["summary"]);
    assert!(html.contains(&format!(
        "8 jobs: <strong>{} failed</strong>, {} degraded, 1 clean, 0 unreadable",
        n("failed"),
        n("degraded")
    )));
    assert!(html.contains("<svg class=\"bars\""));
    let ooms = doc["summary"]["by_primary"]["cuda.oom"].as_u64().unwrap();
    assert!(ooms >= 3, "three copies of one out-of-memory failure");
    assert!(html.contains(&format!("<title>{ooms} jobs: cuda.oom</title>")));
    assert!(html.contains("<h2>Top fingerprints</h2>"));
    // A section per failed or degraded job, each with its own timeline and
    // ids; the compressed one shows its message (it is not read back).
    let sections = (n("failed") + n("degraded")) as usize;
    assert_eq!(html.matches("<section class=\"job\"").count(), sections);
    assert_eq!(html.matches("<svg class=\"timeline\"").count(), sections);
    assert!(html.contains(">rank 1 · culprit</text>"));
    assert!(html.contains("id=\"j0-f0\""));
    assert!(!html.contains("id=\"f0\""));
    for href in attributes(&html, "href") {
        let id = &href[1..];
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "a link to {id} that is not there"
        );
    }
}

// ---------------------------------------------------------------- in a browser

/// Headless Chromium, when installed; `None` (and a note) when not, unless
/// `CUDNNLOG_REQUIRE_BROWSER` is set.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .map(|n| Path::new("/usr/bin").join(n))
        .find(|p| p.exists());
    if found.is_none() {
        assert!(
            std::env::var_os("CUDNNLOG_REQUIRE_BROWSER").is_none(),
            "CUDNNLOG_REQUIRE_BROWSER is set but no Chromium is installed"
        );
        let _ = writeln!(
            std::io::stderr(),
            "no Chromium in /usr/bin: the browser tests are skipped"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `what` (`--dump-dom`,
/// `--screenshot=…`), offline; its standard output.
fn browse(chrome: &Path, page: &Path, profile: &Path, what: &[&str]) -> String {
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1200,1600",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The share of a screenshot's pixels that are not the background, and how
/// many distinct colours it has.
fn ink(png: &Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let inked = pixels
        .iter()
        .filter(|p| p[..3].iter().any(|&c| c < 235))
        .count();
    let colours: std::collections::HashSet<&[u8]> = pixels.iter().map(|p| &p[..3]).collect();
    (inked as f64 / pixels.len() as f64, colours.len())
}

/// Renders `html` (written to `name` in `s`): the DOM after its script
/// ran, and the screenshot's ink.
fn render(chrome: &Path, s: &Scratch, name: &str, html: &str) -> (String, (f64, usize)) {
    let file = s.write(name, html.as_bytes());
    let dom = browse(chrome, &file, &s.0.join("profile-dom"), &["--dump-dom"]);
    let shot = s.0.join(format!("{name}.png"));
    browse(
        chrome,
        &file,
        &s.0.join("profile-shot"),
        &[&format!("--screenshot={}", shot.display())],
    );
    (dom, ink(&shot))
}

#[test]
fn chromium_renders_the_pages_and_runs_only_their_own_script() {
    let Some(chrome) = chromium() else { return };
    let s = Scratch::new("html-browser");
    // The watchdog log: the verdict, a mark per occurrence, the script ran
    // (under the page's policy, which allows it by hash).
    let html = page(&["scan", "--format", "html", WATCHDOG]);
    let (dom, (inked, colours)) = render(&chrome, &s, "watchdog.html", &html);
    assert!(
        dom.contains("<html lang=\"en\" class=\"js\">"),
        "the page's script did not run"
    );
    assert!(dom.contains("<h2>What failed</h2>") && dom.contains("nccl.timeout"));
    let report = json(&cudnnlog(&["scan", "--format", "json", WATCHDOG], None));
    assert_eq!(
        dom.matches("<g class=\"mark ").count(),
        occurrences(&report)
    );
    assert!(dom.matches("class=\"copy\"").count() >= 3, "copy buttons");
    assert!(
        inked > 0.03 && colours > 16,
        "a blank screenshot: {inked} inked, {colours} colours"
    );

    // The hostile log: nothing of it ran or became an element.
    let log = hostile_log(&s);
    let html = page(&["scan", "--format", "html", log.to_str().unwrap()]);
    let (dom, _) = render(&chrome, &s, "hostile.html", &html);
    assert!(dom.contains("class=\"js\""));
    assert!(!dom.contains("<title>pwned</title>"));
    assert_eq!(dom.matches("<script").count(), 1);
    for tag in ["<img", "<iframe", "<a href=\"javascript"] {
        assert!(!dom.contains(tag), "{tag} in the DOM");
    }

    // A fleet scan.
    let jobs = Scratch::new("html-browser-fleet");
    fleet(&jobs);
    let html = page(&["scan", "--format", "html", jobs.path()]);
    let (dom, (inked, _)) = render(&chrome, &s, "fleet.html", &html);
    assert!(dom.contains("cudnnlog fleet report") && dom.contains("class=\"bar-fill\""));
    assert!(inked > 0.03);
}
