//! Reading a Rust file's imports: comments and literals blanked, test code
//! left out, every `crate::`, `super::` and `self::` path resolved to a
//! module path of the library.

use std::collections::BTreeSet;

/// A file's text with comments, strings and character literals replaced by
/// spaces (newlines kept), so paths inside them are not read as imports.
pub fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let keep = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                keep(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    keep(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r' && is_raw_start(b, i) && !ident_before(b, i) {
            // r"…", r#"…"#, br#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            j += 1; // the quote
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let end = b[j..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| j + p + close.len());
            for &x in &b[i..end] {
                keep(&mut out, x);
            }
            i = end;
        } else if c == b'"' {
            keep(&mut out, c);
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    keep(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    keep(&mut out, b[i]);
                    i += 1;
                }
            }
            if i < b.len() {
                keep(&mut out, b[i]);
                i += 1;
            }
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|p| i + 3 + p)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(e) => {
                    for &x in &b[i..e] {
                        keep(&mut out, x);
                    }
                    i = e;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_raw_start(b: &[u8], i: usize) -> bool {
    let mut j = i + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    b.get(j) == Some(&b'"')
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') && b[i - 1] != b'b'
}

/// Removes `#[cfg(test)]` items: inline test modules (their braces), and
/// returns the names of out-of-line ones (`#[cfg(test)] mod examples;`),
/// whose files are test code too.
pub fn drop_tests(text: &str) -> (String, BTreeSet<String>) {
    let mut out = text.to_string();
    let mut files = BTreeSet::new();
    let mut from = 0;
    while let Some(p) = out[from..].find("#[cfg(test)]") {
        let start = from + p;
        let rest = &out[start + 12..];
        let trimmed = rest.trim_start();
        let item = start + 12 + (rest.len() - trimmed.len());
        // Skip further attributes.
        let mut at = item;
        while out[at..].starts_with("#[") {
            let close = out[at..].find(']').map_or(out.len(), |c| at + c + 1);
            at = close + (out[close..].len() - out[close..].trim_start().len());
        }
        let head: String = out[at..].chars().take(200).collect();
        let head = head
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ");
        if let Some(name) = head.strip_prefix("mod ") {
            let name: String = name
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = &out[at..];
            let semi = after.find(';');
            let brace = after.find('{');
            match (semi, brace) {
                (Some(s), b) if b.is_none_or(|b| s < b) => {
                    files.insert(name);
                    from = at + s;
                    continue;
                }
                (_, Some(b)) => {
                    let open = at + b;
                    let end = matching_brace(&out, open);
                    from = blank_range(&mut out, start..end);
                    continue;
                }
                _ => {}
            }
        }
        // A test-only function or use: drop up to its end.
        let after = &out[at..];
        let end = match (after.find(';'), after.find('{')) {
            (Some(s), Some(b)) if s < b => at + s + 1,
            (_, Some(b)) => matching_brace(&out, at + b),
            (Some(s), None) => at + s + 1,
            (None, None) => out.len(),
        };
        from = blank_range(&mut out, start..end);
    }
    (out, files)
}

/// Replaces `range` of `s` with spaces (newlines kept, so line numbers
/// hold) and returns where the blanked text ends.
fn blank_range(s: &mut String, range: std::ops::Range<usize>) -> usize {
    let blanked: String = s[range.clone()]
        .chars()
        .map(|c| if c == '\n' { '\n' } else { ' ' })
        .collect();
    s.replace_range(range.clone(), &blanked);
    range.start + blanked.len()
}

fn matching_brace(s: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// One path a file names: the module path it resolves to (from the crate
/// root), whether it came from a `use` item, the 1-based line, and whether
/// it is a glob (`*`).
#[derive(Debug, Clone)]
pub struct Ref {
    pub path: Vec<String>,
    pub line: usize,
    pub glob: bool,
    /// A `pub use` (a re-export: a face, not a dependency).
    pub reexport: bool,
}

/// Every `crate::`/`super::`/`self::` path in `text` (already blanked),
/// resolved against `module` (the file's module path from the root).
pub fn refs(text: &str, module: &[String]) -> Vec<Ref> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if !at_word {
            i += 1;
            continue;
        }
        let rest = &text[i..];
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| rest.starts_with(h));
        let Some(_) = head else {
            i += 1;
            continue;
        };
        // Is this the start of a `use` item?
        let before = text[..i].trim_end();
        let in_use = before.ends_with("use") && {
            let k = before.len() - 3;
            k == 0 || !before.as_bytes()[k - 1].is_ascii_alphanumeric()
        };
        let reexport = in_use && before[..before.len() - 3].trim_end().ends_with("pub");
        let line = text[..i].matches('\n').count() + 1;
        let end = if in_use {
            text[i..].find(';').map_or(text.len(), |p| i + p)
        } else {
            i + rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len())
        };
        let tree = &text[i..end];
        for (segs, glob) in expand_tree(tree) {
            if let Some(path) = resolve(&segs, module) {
                out.push(Ref {
                    path,
                    line,
                    glob,
                    reexport,
                });
            }
        }
        i = end.max(i + 1);
    }
    out
}

/// `a::{b::C, d, e::*}` → [a::b::C], [a::d], [a::e] (glob).
fn expand_tree(tree: &str) -> Vec<(Vec<String>, bool)> {
    let toks = tokens(tree);
    let mut out = Vec::new();
    let mut pos = 0;
    walk(&toks, &mut pos, &mut Vec::new(), &mut out);
    out
}

fn tokens(s: &str) -> Vec<String> {
    let mut t = Vec::new();
    let mut cur = String::new();
    for c in s.chars() {
        if c.is_alphanumeric() || c == '_' {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                t.push(std::mem::take(&mut cur));
            }
            if matches!(c, '{' | '}' | ',' | '*') {
                t.push(c.to_string());
            }
        }
    }
    if !cur.is_empty() {
        t.push(cur);
    }
    t
}

fn walk(
    t: &[String],
    pos: &mut usize,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, bool)>,
) {
    let base = prefix.len();
    while *pos < t.len() {
        match t[*pos].as_str() {
            "{" => {
                *pos += 1;
                loop {
                    walk(t, pos, prefix, out);
                    match t.get(*pos).map(String::as_str) {
                        Some(",") => *pos += 1,
                        Some("}") => {
                            *pos += 1;
                            break;
                        }
                        _ => break,
                    }
                    if t.get(*pos).map(String::as_str) == Some("}") {
                        *pos += 1;
                        break;
                    }
                }
                prefix.truncate(base);
                return;
            }
            "*" => {
                *pos += 1;
                out.push((prefix.clone(), true));
                prefix.truncate(base);
                return;
            }
            "," | "}" => break,
            "as" => {
                *pos += 2;
            }
            w => {
                prefix.push(w.to_string());
                *pos += 1;
            }
        }
    }
    if prefix.len() > base || base > 0 {
        out.push((prefix.clone(), false));
    }
    prefix.truncate(base);
}

fn resolve(segs: &[String], module: &[String]) -> Option<Vec<String>> {
    let mut cur: Vec<String> = module.to_vec();
    let mut it = segs.iter().peekable();
    match it.peek().map(|s| s.as_str()) {
        Some("crate") => {
            cur.clear();
            it.next();
        }
        Some("super") => {
            while it.peek().map(|s| s.as_str()) == Some("super") {
                cur.pop()?;
                it.next();
            }
        }
        Some("self") => {
            it.next();
        }
        _ => return None,
    }
    cur.extend(it.filter(|s| *s != "self").cloned());
    Some(cur)
}
