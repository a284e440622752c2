//! The terminal: whether to colour, how wide to write, and text wrapped to
//! that width with shell commands kept whole on lines of their own.

use crate::render::markdown::{code_span, split_code_spans};
use std::io::IsTerminal;

/// Width used when the output is not a terminal and `COLUMNS` says nothing.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrowest width wrapped to; below it lines are left long.
const MIN_WIDTH: usize = 40;

/// The `--color` choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// Colour a terminal, unless `NO_COLOR` is set or `TERM=dumb`;
    /// `CLICOLOR_FORCE` colours a pipe too.
    Auto,
    Always,
    Never,
}

/// Which standard stream a decision is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    /// Whether the stream is a terminal.
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }
}

/// Whether to colour `stream`: the one place the colour conventions live
/// (`--color`, then `CLICOLOR_FORCE`, `NO_COLOR`, `TERM=dumb`, then
/// whether the stream is a terminal). Empty variables count as unset.
pub fn color(choice: Color, stream: Stream) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    match choice {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            if set("CLICOLOR_FORCE") && std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0")
            {
                return true;
            }
            !set("NO_COLOR")
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
                && stream.is_terminal()
        }
    }
}

/// How wide to write to `stream`: the terminal's width, else `COLUMNS`,
/// else [`DEFAULT_WIDTH`].
pub fn width(stream: Stream) -> usize {
    let size = match stream {
        Stream::Stdout => terminal_size::terminal_size_of(std::io::stdout()),
        Stream::Stderr => terminal_size::terminal_size_of(std::io::stderr()),
    };
    if let Some((terminal_size::Width(w), _)) = size {
        return usize::from(w).max(MIN_WIDTH);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
        .map_or(DEFAULT_WIDTH, |w| w.max(MIN_WIDTH))
}

/// Display width of a string (terminal columns).
pub fn columns(s: &str) -> usize {
    textwrap::core::display_width(s)
}

/// `text` wrapped to `width`: the first line after `first`, the others
/// after `rest` (both counted in the width). Words are never broken; a
/// word longer than a line stays whole.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let options = textwrap::Options::new(width.max(MIN_WIDTH))
        .initial_indent(first)
        .subsequent_indent(rest)
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options)
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// Column widths for a table of `natural` widths (each column's widest
/// cell) drawn with one-space padding and borders, to fit in `width`.
/// While the table fits, columns keep their natural width; else each
/// column but the last is capped at `cap`, the last (the message) takes
/// what is left, and if that is still too wide the widest columns give,
/// down to `floor` each (a column narrower than `floor` is never cut).
pub fn fit_columns(natural: &[usize], width: usize, cap: usize, floor: usize) -> Vec<usize> {
    let overhead = 3 * natural.len() + 1;
    let total = |w: &[usize]| w.iter().sum::<usize>() + overhead;
    let mut w: Vec<usize> = natural.to_vec();
    if total(&w) <= width || w.is_empty() {
        return w;
    }
    let last = w.len() - 1;
    for c in &mut w[..last] {
        *c = (*c).min(cap);
    }
    let rest = width.saturating_sub(total(&w[..last]));
    w[last] = natural[last].min(rest.max(floor.min(natural[last])));
    while total(&w) > width {
        let Some((i, _)) = w
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > floor)
            .max_by_key(|(_, &c)| c)
        else {
            break;
        };
        w[i] -= 1;
    }
    w
}

/// `text` wrapped into lines of at most `width` columns joined by `\n`
/// (a word wider than the column is broken: a table cell has no room).
pub fn fill(text: &str, width: usize) -> String {
    let options = textwrap::Options::new(width.max(1))
        .break_words(true)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(text, options).join("\n")
}

/// Programs a remediation's command starts with.
const PROGRAMS: &[&str] = &[
    "python",
    "python3",
    "pip",
    "pip3",
    "conda",
    "mamba",
    "uv",
    "nvidia-smi",
    "nvcc",
    "torchrun",
    "export",
    "unset",
    "sudo",
    "apt",
    "apt-get",
    "ldconfig",
    "ldd",
    "ls",
    "cat",
    "grep",
    "docker",
    "kubectl",
    "srun",
    "sbatch",
    "scontrol",
    "ulimit",
    "dmesg",
    "echo",
    "df",
    "du",
    "free",
    "journalctl",
    "systemctl",
    "nvidia-persistenced",
    "dcgmi",
    "import",
    "from",
    "with",
];

/// Whether a `code` span of a remediation is a command or code to copy
/// (`export X=1`, `nvidia-smi -q`, `CUDA_LAUNCH_BLOCKING=1 python …`,
/// `with torch.autocast(…):`), not a phrase quoted from a message
/// (`Tried to allocate`) or a name (`PYTORCH_CUDA_ALLOC_CONF`).
fn is_command(code: &str) -> bool {
    let code = code.trim();
    if code.chars().count() < 12 {
        return false;
    }
    let first = code.split_whitespace().next().unwrap_or("");
    let assignment = first.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    assignment
        || PROGRAMS.contains(&first)
        || (code.contains(' ') && (code.contains(" -") || assigns(code)) && {
            // A sentence quoted from a message starts with a capital.
            !first.chars().next().is_some_and(|c| c.is_uppercase())
        })
}

/// Whether `code` sets something (`name=value`, `drop_last=True`), as a
/// command line does, rather than compares (`t >= 0 && t < n`, `a == b`).
fn assigns(code: &str) -> bool {
    let b = code.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'='
            && i > 0
            && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
            && b.get(i + 1) != Some(&b'=')
    })
}

/// A remediation laid out for the terminal: its prose wrapped after
/// `first` / `rest`, each command (a `code` span that is one) on a line of
/// its own indented two more columns, never broken inside a word; a
/// command wider than the line is continued on the next with ` \`, at a
/// space outside quotes, as a shell reads it.
pub fn remediation(text: &str, width: usize, first: &str, rest: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut prose = String::new();
    let command_indent = format!("{rest}  ");
    let mut after_command = false;
    let flush = |prose: &mut String, lines: &mut Vec<String>| {
        let p = prose.trim();
        if !p.is_empty() {
            let lead = if lines.is_empty() { first } else { rest };
            lines.extend(wrap(p, width, lead, rest));
        }
        prose.clear();
    };
    // Code spans as CommonMark finds them: a value from the log may hold
    // backticks, in a span fenced with more.
    for (code, part) in split_code_spans(text) {
        if code && is_command(&part) {
            flush(&mut prose, &mut lines);
            if lines.is_empty() {
                lines.push(first.trim_end().to_string());
            }
            lines.extend(command(&part, width, &command_indent));
            after_command = true;
        } else if code {
            prose.push_str(&code_span(&part));
            after_command = false;
        } else if after_command {
            // The punctuation that closed the command's sentence would sit
            // alone on a line (or be copied with the command): drop it.
            prose.push_str(part.trim_start_matches(|c: char| {
                matches!(c, '.' | ',' | ';' | ':') || c.is_whitespace()
            }));
            after_command = false;
        } else {
            prose.push_str(&part);
        }
    }
    flush(&mut prose, &mut lines);
    lines.retain(|l| !l.trim().is_empty());
    lines
}

/// A command on lines of its own, continued with ` \` where it is wider
/// than the line.
fn command(cmd: &str, width: usize, indent: &str) -> Vec<String> {
    let room = width.saturating_sub(columns(indent) + 2).max(20);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in shell_words(cmd) {
        // Break before a word only if it then fits: a word wider than any
        // line stays where it is (copied whole, wrapped by the terminal).
        let fits_alone = columns(&word) <= room;
        if !line.is_empty() && columns(&line) + 1 + columns(&word) > room && fits_alone {
            out.push(format!("{indent}{line} \\"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        out.push(format!("{indent}{line}"));
    }
    out
}

/// A command split at spaces outside quotes (a quoted argument stays one
/// word, so a continuation never lands inside it).
fn shell_words(cmd: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    for c in cmd.chars() {
        match (quote, c) {
            (None, ' ') => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        word.push(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    const OOM_FIX: &str = "Let the allocator grow segments instead of splitting them: `export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` (2.81 GiB was reserved but unallocated when 1.53 GiB was requested). Check: if an out-of-memory error recurs, its \"reserved by PyTorch but unallocated\" figure is small.";

    #[test]
    fn commands_get_their_own_line_and_are_never_broken() {
        let lines = remediation(OOM_FIX, 80, "  fix: ", "       ");
        assert!(lines.iter().all(|l| columns(l) <= 80), "{lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.trim() == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
            "{lines:#?}"
        );
        assert!(
            lines[0].starts_with("  fix: Let the allocator"),
            "{lines:#?}"
        );
    }

    #[test]
    fn a_long_command_continues_with_a_backslash_outside_quotes() {
        let fix = "Compare: `python -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\" --and --more --flags --here`";
        let lines = remediation(fix, 60, "", "");
        let joined: String = lines[1..]
            .iter()
            .map(|l| l.trim().trim_end_matches(" \\"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            joined,
            "python -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\" --and --more --flags --here"
        );
        assert!(lines[1].ends_with(" \\"), "{lines:#?}");
    }

    #[test]
    fn quoted_phrases_and_names_stay_inline() {
        for phrase in [
            "Tried to allocate",
            "reserved by PyTorch but unallocated",
            "PYTORCH_CUDA_ALLOC_CONF",
            // A kernel's condition compares; it sets nothing.
            "t >= 0 && t < n_classes",
            "input_val >= zero && input_val <= one",
        ] {
            assert!(!is_command(phrase), "{phrase}");
        }
        for cmd in [
            "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            "CUDA_LAUNCH_BLOCKING=1 python train.py",
            "nvidia-smi --query-gpu=name,compute_cap --format=csv",
            "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):",
        ] {
            assert!(is_command(cmd), "{cmd}");
        }
    }

    #[test]
    fn no_lone_punctuation_after_a_command() {
        let lines = remediation(
            "Run `nvidia-smi --query-gpu=name --format=csv`; then compare.",
            80,
            "",
            "",
        );
        assert_eq!(
            lines,
            [
                "Run",
                "  nvidia-smi --query-gpu=name --format=csv",
                "then compare."
            ]
        );
    }

    #[test]
    fn short_code_stays_inline() {
        let lines = remediation("Set `benchmark` off.", 80, "", "");
        assert_eq!(lines, ["Set `benchmark` off."]);
    }

    #[test]
    fn columns_fit_the_width() {
        assert_eq!(fit_columns(&[8, 5, 30], 80, 24, 10), [8, 5, 30]);
        // The findings table of a real log at 80 columns: small columns
        // stay, the place is capped, the message takes the rest.
        let w = fit_columns(&[12, 8, 5, 40, 5, 200], 80, 24, 10);
        assert_eq!(w, [12, 8, 5, 21, 5, 10]);
        let w = fit_columns(&[12, 8, 5, 40, 5, 200], 120, 24, 10);
        assert_eq!(w, [12, 8, 5, 24, 5, 47]);
        // Too narrow for the caps: the widest give, down to the floor.
        let narrow = fit_columns(&[22, 8, 5, 40, 5, 200], 60, 24, 6);
        assert_eq!(narrow.iter().sum::<usize>() + 19, 60, "{narrow:?}");
        // Narrower than the floors allow: every column at its floor.
        assert_eq!(
            fit_columns(&[22, 8, 5, 40, 5, 200], 30, 24, 6),
            [6, 6, 5, 6, 5, 6]
        );
        for cell in fill("torch.OutOfMemoryError: CUDA out of memory.", 10).lines() {
            assert!(columns(cell) <= 10, "{cell}");
        }
    }

    #[test]
    fn wrap_keeps_words_whole() {
        let lines = wrap(
            "PYTORCH_CUDA_ALLOC_CONF is long enough to matter here",
            40,
            "",
            "  ",
        );
        assert!(lines.iter().any(|l| l.contains("PYTORCH_CUDA_ALLOC_CONF")));
    }
}
