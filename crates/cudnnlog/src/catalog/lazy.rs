//! Regexes compiled on first use.
//!
//! Compiling the built-in catalog's few hundred regexes took most of a
//! scan's start-up, yet a log touches only the patterns whose anchors it
//! holds. A [`LazyRegex`] is parsed when the catalog loads — syntax errors
//! and group names are known then — and compiled the first time it is
//! used. The built-in catalog loads this way; a user's catalog is compiled
//! at load, so a regex too big to compile is reported with its file and
//! field. The test suite compiles every built-in regex.

use regex::{Regex, RegexBuilder};
use std::sync::OnceLock;

use super::REGEX_SIZE_LIMIT;

/// A regex parsed now and compiled when first used.
///
/// ```
/// use cudnnlog::catalog::LazyRegex;
/// let r = LazyRegex::parse(r"Tried to allocate (?P<size>\S+)").unwrap();
/// assert!(!r.is_compiled());
/// assert_eq!(r.names().collect::<Vec<_>>(), ["size"]);
/// assert_eq!(r.capture("Tried to allocate 2.00 GiB", "size"), Some("2.00"));
/// assert!(r.is_compiled());
/// assert!(LazyRegex::parse("(unclosed").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct LazyRegex {
    source: String,
    names: OnceLock<Vec<String>>,
    cell: OnceLock<Regex>,
}

impl LazyRegex {
    /// Parses `source` (its syntax is checked, nothing is compiled).
    ///
    /// # Errors
    ///
    /// The parser's message when `source` is not a valid regex.
    ///
    /// ```
    /// use cudnnlog::catalog::LazyRegex;
    /// let r = LazyRegex::parse(r"Tried to allocate (?P<req>\S+)").unwrap();
    /// assert!(!r.is_compiled());
    /// assert!(LazyRegex::parse("(unclosed").is_err());
    /// ```
    pub fn parse(source: &str) -> Result<LazyRegex, String> {
        let names = names_of(source)?;
        Ok(LazyRegex {
            source: source.to_string(),
            names: OnceLock::from(names),
            cell: OnceLock::new(),
        })
    }

    /// Takes `source` as it is, parsing nothing until it is used: for the
    /// built-in catalog, whose regexes the test suite compiles.
    pub(crate) fn trusted(source: &str) -> LazyRegex {
        LazyRegex {
            source: source.to_string(),
            names: OnceLock::new(),
            cell: OnceLock::new(),
        }
    }

    /// Compiles `source` now.
    ///
    /// ```
    /// let r = cudnnlog::catalog::LazyRegex::compile("a+").unwrap();
    /// assert!(r.is_compiled());
    /// ```
    pub fn compile(source: &str) -> Result<LazyRegex, String> {
        let re = build(source).map_err(|e| e.to_string())?;
        let names: Vec<String> = re.capture_names().flatten().map(str::to_string).collect();
        Ok(LazyRegex {
            source: source.to_string(),
            names: OnceLock::from(names),
            cell: OnceLock::from(re),
        })
    }

    /// The regex's text.
    ///
    /// ```
    /// assert_eq!(cudnnlog::catalog::LazyRegex::parse("a+").unwrap().as_str(), "a+");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of its capture groups, in order, without compiling it.
    ///
    /// ```
    /// let r = cudnnlog::catalog::LazyRegex::parse("(?P<a>x)(y)(?P<b>z)").unwrap();
    /// assert_eq!(r.names().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names
            .get_or_init(|| names_of(&self.source).unwrap_or_default())
            .iter()
            .map(String::as_str)
    }

    /// True once it has been compiled.
    ///
    /// ```
    /// let r = cudnnlog::catalog::LazyRegex::parse("a+").unwrap();
    /// assert!(!r.is_compiled());
    /// ```
    pub fn is_compiled(&self) -> bool {
        self.cell.get().is_some()
    }

    /// True when the regex matches somewhere in `hay` (compiling it on
    /// first use).
    ///
    /// ```
    /// let r = cudnnlog::catalog::LazyRegex::parse("a+").unwrap();
    /// assert!(r.is_match("caab") && !r.is_match("xyz"));
    /// assert!(r.is_compiled());
    /// ```
    pub fn is_match(&self, hay: &str) -> bool {
        self.regex().is_match(hay)
    }

    /// What the group `name` captured in the first match in `hay`; `None`
    /// when nothing matches or the group took no part.
    ///
    /// ```
    /// let r = cudnnlog::catalog::LazyRegex::parse(r"rank (?P<rank>\d+)( of (?P<of>\d+))?").unwrap();
    /// assert_eq!(r.capture("timeout on rank 3 of 8", "rank"), Some("3"));
    /// assert_eq!(r.capture("timeout on rank 3", "of"), None);
    /// assert_eq!(r.capture("no rank here", "rank"), None);
    /// ```
    pub fn capture<'h>(&self, hay: &'h str, name: &str) -> Option<&'h str> {
        Some(self.regex().captures(hay)?.name(name)?.as_str())
    }

    /// The compiled regex, compiling it on first use. A regex whose program
    /// exceeds the size limit (the test suite rules this out for the
    /// built-in catalog) matches nothing rather than failing a scan.
    pub(crate) fn regex(&self) -> &Regex {
        self.cell.get_or_init(|| {
            build(&self.source)
                .unwrap_or_else(|_| Regex::new(r"[^\s\S]").expect("an empty class compiles"))
        })
    }
}

fn build(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
}

/// The names of a regex's capture groups, from its parse.
fn names_of(source: &str) -> Result<Vec<String>, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(source)
        .map_err(|e| e.to_string())?;
    let mut names = Vec::new();
    collect_names(&hir, &mut names);
    Ok(names)
}

fn collect_names(hir: &regex_syntax::hir::Hir, out: &mut Vec<String>) {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(c) => {
            if let Some(n) = &c.name {
                if !out.iter().any(|o| o == n.as_ref()) {
                    out.push(n.to_string());
                }
            }
            collect_names(&c.sub, out);
        }
        HirKind::Concat(v) | HirKind::Alternation(v) => {
            for h in v {
                collect_names(h, out);
            }
        }
        HirKind::Repetition(r) => collect_names(&r.sub, out),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_compiled_regexs() {
        for src in [
            r"(?P<a>x)|(?P<b>y(?P<c>z)*)",
            r"(?x) (?P<size> \d+ ) \s (?: (?P<unit>GiB|MiB) )?",
            r"no groups",
            r"(?P<a>x)(?P<a2>y)?",
        ] {
            let lazy = LazyRegex::parse(src).unwrap();
            let re = Regex::new(src).unwrap();
            let want: Vec<&str> = re.capture_names().flatten().collect();
            assert_eq!(lazy.names().collect::<Vec<_>>(), want, "{src}");
        }
    }

    #[test]
    fn a_regex_too_big_to_compile_matches_nothing() {
        let r = LazyRegex::parse(r"\w{1000}\w{1000}\w{1000}").unwrap();
        assert!(LazyRegex::compile(r.as_str()).is_err());
        assert!(!r.is_match(&"a".repeat(3000)));
    }
}
