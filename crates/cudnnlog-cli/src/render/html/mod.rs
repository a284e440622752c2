//! The report as one self-contained HTML page, for a post-mortem: the
//! verdict, a timeline of every occurrence per rank, the findings with the
//! log around them, the environment, and what to do.
//!
//! The page needs nothing but itself: CSS, SVG and one small script are
//! inline, and it names no other resource (no `src`, no `href` but links
//! within the page). A Content-Security-Policy in the page forbids every
//! request, and every script but its own (by hash); the script only adds
//! filters and copy buttons, and the page reads the same without it.
//!
//! Whatever a log holds cannot become markup: every piece of text, the
//! log's or the catalog's, goes through [`esc`], which replaces control
//! characters and escapes `& < > " '`, in element text and in (always
//! double-quoted) attribute values alike.

pub mod excerpt;
mod fleet;
mod timeline;

use crate::render::markdown::split_code_spans;
use crate::render::{clip, plural, seen, shown_environment, Ctx, Render, Shown, TABLE_TEMPLATES};
use cudnnlog::catalog::{Catalog, Severity};
use cudnnlog::fleet::FleetDocument;
use cudnnlog::report::{Finding, Outcome, Report};
use excerpt::Files;
use std::fmt::Write as _;
use std::io::Write;

/// The HTML renderer: the page of one job, or of a fleet.
pub struct Html;

impl Render for Html {
    fn report(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        report: &Report,
    ) -> anyhow::Result<()> {
        let files = Files::open(&report.sources);
        Ok(page(&mut out, report, ctx.catalog, &files)?)
    }

    fn fleet(
        &self,
        mut out: &mut dyn Write,
        ctx: &Ctx<'_>,
        fleet: &FleetDocument,
    ) -> anyhow::Result<()> {
        Ok(fleet::fleet_page(
            &mut out,
            &fleet.jobs,
            &fleet.summary,
            ctx.catalog,
        )?)
    }

    fn keeps_reports(&self) -> bool {
        true
    }

    /// The page lists [`fleet::JOB_ROWS`] jobs and shows
    /// [`fleet::JOB_SECTIONS`] whole: only those are kept.
    fn shows_at_most(&self) -> Option<Shown> {
        Some(Shown {
            rows: fleet::JOB_ROWS,
            reports: fleet::JOB_SECTIONS,
        })
    }
}

/// The page's style sheet.
const CSS: &str = include_str!("page.css");
/// The page's script: filters, copy buttons, opening a linked finding.
const SCRIPT: &str = include_str!("page.js");
/// Findings shown with the log around their first line.
const EXCERPTS: usize = 30;
/// Lines of log shown before and after a finding's first line.
const CONTEXT_BEFORE: usize = 4;
const CONTEXT_AFTER: usize = 6;
/// Findings listed; a report of more says how many more JSON has.
const FINDINGS_SHOWN: usize = 300;

/// Text made safe for HTML element content and double-quoted attribute
/// values: control characters (terminal escapes, `\r`, NUL) and invisible
/// direction marks become U+FFFD, and `& < > " '` become entities.
///
/// ```text
/// esc("<script>alert('x')</script>") == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
/// ```
pub fn esc(s: &str) -> String {
    let clean = crate::render::sanitize(s);
    let mut out = String::with_capacity(clean.len() + 16);
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Catalog text with `code` spans (a remediation) as HTML: the spans as
/// `<code class="cmd">` (a copy button is added by the script), the rest as
/// text, all escaped.
fn rich(s: &str) -> String {
    split_code_spans(s)
        .into_iter()
        .map(|(code, part)| match code {
            true => format!("<code class=\"cmd\">{}</code>", esc(&part)),
            false => esc(&part),
        })
        .collect()
}

/// The index of the report's primary finding.
pub(crate) fn primary_index(report: &Report) -> Option<usize> {
    let p = cudnnlog::fleet::primary_finding(report)?;
    report.findings.iter().position(|f| std::ptr::eq(f, p))
}

/// The base64 of `bytes` (standard alphabet, padded).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The page's head: the policy that allows no request and no script but
/// [`SCRIPT`], the title, the style sheet.
fn head(out: &mut String, title: &str) {
    use sha2::Digest;
    let hash = base64(&sha2::Sha256::digest(SCRIPT.as_bytes()));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{hash}'; \
         base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"cudnnlog {}\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    );
}

/// The page's end: the footer and the script.
fn foot(out: &mut String, schema: &str) {
    let _ = write!(
        out,
        "<footer>Made by cudnnlog {} (report schema {}). This page is self-contained: \
         it loads nothing and runs only its own script.</footer>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(schema)
    );
}

/// Writes the page of one job's report. `files` reads the log back for the
/// lines around each finding (where it cannot, the page shows the
/// findings' messages).
pub fn page(
    out: &mut impl Write,
    report: &Report,
    catalog: &Catalog,
    files: &Files,
) -> std::io::Result<()> {
    let mut s = String::new();
    let paths: Vec<&str> = report.sources.iter().map(|s| s.path.as_str()).collect();
    let title = match &report.primary {
        Some(p) => format!("cudnnlog: {p} — {}", paths.join(", ")),
        None => format!("cudnnlog: {}", paths.join(", ")),
    };
    head(&mut s, &title);
    s.push_str("<header><h1>cudnnlog report</h1>");
    sources_line(&mut s, report);
    s.push_str("</header>\n<main>\n");
    job(&mut s, report, catalog, files, "");
    s.push_str("</main>\n");
    foot(&mut s, &report.schema);
    out.write_all(s.as_bytes())
}

/// What was read: the paths, lines and bytes.
fn sources_line(s: &mut String, report: &Report) {
    let lines: u64 = report.sources.iter().map(|s| s.lines).sum();
    let names: Vec<String> = report
        .sources
        .iter()
        .map(|s| format!("<code>{}</code>", esc(&s.path)))
        .collect();
    let _ = write!(
        s,
        "<p class=\"sources\">{} · {lines} line{}</p>",
        names.join(", "),
        plural(lines as usize)
    );
}

/// One job's sections: verdict, timeline, findings, environment,
/// unclassified errors. Ids inside start with `prefix` (unique per job on
/// a fleet page).
fn job(s: &mut String, report: &Report, catalog: &Catalog, files: &Files, prefix: &str) {
    verdict(s, report, catalog, prefix);
    if !report.findings.is_empty() {
        s.push_str("<section class=\"timeline-box\"><h2>Timeline</h2>\n");
        timeline::svg(s, report, catalog, files, prefix);
        s.push_str("</section>\n");
    }
    findings(s, report, catalog, files, prefix);
    environment(s, report);
    unclassified(s, report);
}

/// The answer: what failed, why, what to do.
fn verdict(s: &mut String, report: &Report, catalog: &Catalog, prefix: &str) {
    let outcome = report.outcome.as_str();
    let _ = write!(s, "<section class=\"verdict outcome-{outcome}\">");
    let Some(i) = primary_index(report) else {
        s.push_str("<h2>No failure found</h2><p>No pattern of the catalog matched this log.</p></section>\n");
        return;
    };
    let f = &report.findings[i];
    let head = match report.outcome {
        Outcome::Degraded => "Primary warning (the run went on)",
        _ => "What failed",
    };
    let _ = write!(
        s,
        "<h2>{head}</h2><p class=\"what\"><a href=\"#{prefix}f{i}\"><code class=\"class\">{}</code></a> {} \
         <span class=\"seen\">{}</span></p><pre class=\"message\">{}</pre>",
        esc(&f.class),
        esc(&f.title),
        esc(&format!("first at {}", seen(&f.first))),
        esc(&clip(&f.message, 1000))
    );
    if let Some(c) = &f.culprit {
        let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
        let _ = write!(
            s,
            "<p class=\"culprit\">At fault: <strong>rank {}</strong> — {}</p>",
            esc(&ranks.join(", ")),
            esc(&c.reason)
        );
        if !c.evidence.is_empty() {
            s.push_str("<pre class=\"evidence\">");
            for e in &c.evidence {
                let _ = writeln!(s, "line {}: {}", e.line, esc(&clip(&e.text, 300)));
            }
            s.push_str("</pre>");
        }
    }
    s.push_str("<h3>Why</h3>");
    if !f.causes.is_empty() && f.causes.iter().all(|c| c.evidence.is_empty()) {
        s.push_str(
            "<p class=\"prior\">The log shows no evidence for any cause: the \
             percentages are how often each is behind this message.</p>",
        );
    }
    causes(s, f, catalog, 4);
    if !f.remediations.is_empty() {
        s.push_str("<h3>What to do</h3><ol class=\"remedies\">");
        for r in f.remediations.iter().take(5) {
            let _ = write!(s, "<li>{}</li>", rich(r));
        }
        s.push_str("</ol>");
    }
    s.push_str("</section>\n");
}

/// A finding's ranked causes with their evidence.
fn causes(s: &mut String, f: &Finding, catalog: &Catalog, max: usize) {
    if f.causes.is_empty() {
        return;
    }
    s.push_str("<ol class=\"causes\">");
    for c in f.causes.iter().take(max) {
        let title = catalog.cause(&c.id).map_or("", |c| c.title.as_str());
        let pct = (c.confidence * 100.0).round();
        let _ = write!(
            s,
            "<li><span class=\"conf\"><span class=\"bar\" style=\"width:{pct}%\"></span></span>\
             <span class=\"pct\">{pct}%</span> <code>{}</code> {}",
            esc(&c.id),
            esc(title)
        );
        if !c.evidence.is_empty() {
            s.push_str("<ul class=\"why\">");
            for e in &c.evidence {
                let _ = write!(s, "<li>{}</li>", esc(&clip(e, 500)));
            }
            s.push_str("</ul>");
        }
        s.push_str("</li>");
    }
    s.push_str("</ol>");
}

/// Every finding, folded (errors open), with the log around its first
/// line, its causes and remediations.
fn findings(s: &mut String, report: &Report, catalog: &Catalog, files: &Files, prefix: &str) {
    if report.findings.is_empty() {
        return;
    }
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let _ = writeln!(
        s,
        "<section class=\"findings\"><h2>Findings ({} error{}, {} warning{})</h2>\
         <p class=\"filters\"><label><input type=\"checkbox\" data-filter=\"warning\" checked> warnings</label> \
         <label><input type=\"checkbox\" data-filter=\"fallout\" checked> fallout of another finding</label></p>",
        errors,
        plural(errors),
        report.findings.len() - errors,
        plural(report.findings.len() - errors)
    );
    let primary = primary_index(report);
    for (i, f) in report.findings.iter().enumerate().take(FINDINGS_SHOWN) {
        let sev = f.severity.as_str();
        let fallout = f.caused_by.is_some();
        let mut class = format!("finding {sev}");
        if fallout {
            class.push_str(" fallout");
        }
        if Some(i) == primary {
            class.push_str(" primary");
        }
        let open = if f.severity == Severity::Error && !fallout {
            " open"
        } else {
            ""
        };
        let ranks = if f.ranks.is_empty() {
            String::new()
        } else {
            let r: Vec<String> = f.ranks.iter().take(16).map(u32::to_string).collect();
            let more = if f.ranks.len() > 16 { " …" } else { "" };
            format!(" · rank{} {}{more}", plural(f.ranks.len()), r.join(", "))
        };
        let _ = write!(
            s,
            "<details id=\"{prefix}f{i}\" class=\"{class}\"{open}><summary><span class=\"sev {sev}\">{sev}</span> \
             <code class=\"class\">{}</code> {} <span class=\"seen\">×{} · {}{}</span></summary><div class=\"body\">",
            esc(&f.class),
            esc(&f.title),
            f.count,
            esc(&seen(&f.first)),
            esc(&ranks)
        );
        for (label, link) in [
            ("fallout of", f.caused_by),
            ("the status carried by", f.carried_by),
        ] {
            if let Some(j) = link.filter(|&j| j < report.findings.len()) {
                let _ = write!(
                    s,
                    "<p class=\"link\">{label} <a href=\"#{prefix}f{j}\"><code>{}</code></a></p>",
                    esc(&report.findings[j].class)
                );
            }
        }
        let context = if i < EXCERPTS {
            files.around(
                f.first.source,
                f.first.byte,
                f.first.line,
                CONTEXT_BEFORE,
                CONTEXT_AFTER,
            )
        } else {
            Vec::new()
        };
        if context.is_empty() {
            let _ = write!(
                s,
                "<pre class=\"message\">{}</pre>",
                esc(&clip(&f.message, 1000))
            );
        } else {
            s.push_str("<pre class=\"context\">");
            for l in &context {
                let (open, close) = if l.here {
                    ("<mark>", "</mark>")
                } else {
                    ("", "")
                };
                let _ = write!(
                    s,
                    "{open}<span class=\"ln\">{:>6}</span> {}\n{close}",
                    l.number,
                    esc(&l.text)
                );
            }
            s.push_str("</pre>");
        }
        if f.count > 1 {
            let _ = write!(s, "<p class=\"last\">last at {}</p>", esc(&seen(&f.last)));
        }
        causes(s, f, catalog, 3);
        if !f.remediations.is_empty() {
            s.push_str("<ol class=\"remedies\">");
            for r in f.remediations.iter().take(3) {
                let _ = write!(s, "<li>{}</li>", rich(r));
            }
            s.push_str("</ol>");
        }
        s.push_str("</div></details>\n");
    }
    if report.findings.len() > FINDINGS_SHOWN {
        let _ = write!(
            s,
            "<p>… {} more findings with <code>--format json</code>.</p>",
            report.findings.len() - FINDINGS_SHOWN
        );
    }
    s.push_str("</section>\n");
}

/// The versions and hardware the log shows.
fn environment(s: &mut String, report: &Report) {
    if report.environment.is_empty() {
        return;
    }
    s.push_str("<section class=\"env\"><h2>Environment</h2><table>");
    for (label, text, _) in shown_environment(report) {
        let _ = write!(
            s,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(&label),
            esc(&clip(&text, 200))
        );
    }
    s.push_str("</table></section>\n");
}

/// Error lines no pattern explains, by template.
fn unclassified(s: &mut String, report: &Report) {
    if report.unclassified.is_empty() {
        return;
    }
    s.push_str("<section class=\"unclassified\"><h2>Errors no pattern explains</h2><ul>");
    for t in report.unclassified.iter().take(TABLE_TEMPLATES) {
        let _ = write!(
            s,
            "<li>{} line{}, first at line {}: <pre>{}</pre></li>",
            t.count,
            plural(t.count as usize),
            t.first.line,
            esc(&clip(&t.template, 500))
        );
    }
    s.push_str("</ul></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        assert_eq!(
            esc("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(esc("a\"b&c"), "a&quot;b&amp;c");
        assert_eq!(esc("x\u{1b}[2J\r\0"), "x\u{fffd}[2J\u{fffd}\u{fffd}");
    }

    #[test]
    fn commands_in_remediations_become_code() {
        assert_eq!(
            rich("Set `A=1 <b>` then <i>"),
            "Set <code class=\"cmd\">A=1 &lt;b&gt;</code> then &lt;i&gt;"
        );
    }

    #[test]
    fn base64_of_known_values() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
