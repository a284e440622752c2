//! Helpers on text that every step uses, at the bottom of the house.

/// `s` cut to at most `max` bytes, on a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` as an inline code span that holds it exactly, as CommonMark reads
/// one: fenced with one backtick more than its longest run of backticks,
/// and padded with a space each side where it starts or ends with a
/// backtick, or starts and ends with a space (CommonMark strips one space
/// each side). Remediations fill values from the log in with it, so that
/// a backtick in a value never closes or opens a span of the sentence's.
/// Empty text is no span.
///
/// ```
/// use cudnnlog::report::code_span;
/// assert_eq!(code_span("t < n"), "`t < n`");
/// assert_eq!(code_span("t < n` [x](y)"), "``t < n` [x](y)``");
/// assert_eq!(code_span("`a`"), "`` `a` ``");
/// ```
pub fn code_span(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let fence = "`".repeat(longest_run(s, '`') + 1);
    let blank = s.trim().is_empty();
    let pad = s.starts_with('`')
        || s.ends_with('`')
        || (!blank && s.starts_with(' ') && s.ends_with(' '));
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// The sentences of a remediation
/// ([`Finding::remediations`](crate::report::Finding::remediations)): split
/// after each `. ` outside code spans, trimmed, empty ones dropped. A
/// remediation whose placeholder the log gave no value for loses the
/// sentences, so split, that name it.
///
/// ```
/// use cudnnlog::report::sentences;
/// assert_eq!(
///     sentences("Run `a. b` first. Then {x}. Done"),
///     ["Run `a. b` first.", "Then {x}.", "Done"]
/// );
/// ```
pub fn sentences(r: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    let b = r.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'`' => in_code = !in_code,
            b'.' if !in_code && b.get(i + 1) == Some(&b' ') => {
                out.push(r[start..=i].trim());
                start = i + 2;
            }
            _ => {}
        }
    }
    if start < r.len() {
        out.push(r[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The longest run of `c` in `s`.
pub(crate) fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}
