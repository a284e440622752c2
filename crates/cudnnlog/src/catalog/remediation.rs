//! The placeholder grammar of remediations: a remediation may say `{name}`
//! for a capture of its pattern; inside backticks, other names are code
//! (an f-string's `{local_rank}`) and `{{ … }}` is literal. Loading checks
//! it; diagnosis fills it.

use super::Pattern;
use std::collections::BTreeSet;

/// The placeholders a remediation uses: `{name}`, outside `{{ … }}`.
pub(crate) fn placeholders(r: &str) -> Vec<(String, bool)> {
    let b = r.as_bytes();
    let mut out = Vec::new();
    let mut in_code = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'`' => in_code = !in_code,
            b'{' if b.get(i + 1) != Some(&b'{') && (i == 0 || b[i - 1] != b'{') => {
                let name: String = r[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                let end = i + 1 + name.len();
                let closed = b.get(end) == Some(&b'}') && b.get(end + 1) != Some(&b'}');
                if closed && name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    out.push((name, in_code));
                    i = end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Checks a pattern's remediation: a placeholder outside code must name one
/// of the pattern's captures (`captures`); inside code, other names are
/// left as they are (an f-string's `{local_rank}`).
pub(crate) fn check(r: &str, captures: &BTreeSet<String>) -> Result<(), String> {
    for (name, in_code) in placeholders(r) {
        if !in_code && !captures.contains(&name) {
            return Err(format!(
                "remediation names {{{name}}}, which is not a capture of the pattern"
            ));
        }
    }
    Ok(())
}

impl Pattern {
    /// The names of the pattern's captures: its regex's and its fact
    /// regexes', and `status` and `code` where a status table (`table` or
    /// `decodes`) resolves them as facts. A remediation's placeholders, the
    /// signature and the examples' facts name these.
    pub(crate) fn capture_names(&self) -> BTreeSet<String> {
        let mut names: BTreeSet<String> = std::iter::once(&self.regex)
            .chain(&self.facts)
            .flat_map(|r| r.names().map(str::to_string))
            .collect();
        if self.table.is_some() || self.decodes.is_some() {
            names.extend(["status".to_string(), "code".to_string()]);
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_double_braces() {
        let p = placeholders("Read ({detail}); `f\"cuda:{local_rank}\"`; `{{.State.OOMKilled}}`");
        assert_eq!(
            p,
            [
                ("detail".to_string(), false),
                ("local_rank".to_string(), true)
            ]
        );
    }

    #[test]
    fn a_placeholder_must_name_a_capture() {
        let caps: BTreeSet<String> = ["detail".to_string()].into();
        assert!(check("Read it ({detail}).", &caps).is_ok());
        assert!(check("Read it ({detial}).", &caps).is_err());
        assert!(check("Use `f\"cuda:{local_rank}\"`.", &caps).is_ok());
    }
}
