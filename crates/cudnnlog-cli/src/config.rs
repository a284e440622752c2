//! Defaults a user sets once: a config file and `CUDNNLOG_*` variables.
//!
//! The file is `$CUDNNLOG_CONFIG` when set (empty: no file), else
//! `$XDG_CONFIG_HOME/cudnnlog/config.toml`, else
//! `~/.config/cudnnlog/config.toml`; a missing file at the default place
//! is no file:
//!
//! ```toml
//! patterns = ["~/team-patterns", "/shared/cudnnlog/patterns"]  # added to every scan
//! format = "table"                                             # when --format is not given
//! color = "auto"                                               # when --color is not given
//! ```
//!
//! Relative pattern directories are relative to the file. The variables
//! `CUDNNLOG_PATTERNS` (directories separated by `:`), `CUDNNLOG_FORMAT`
//! and `CUDNNLOG_COLOR` override the file; flags override both.
//!
//! Settings that cannot be used are errors, never ignored (as `rg` does
//! with `RIPGREP_CONFIG_PATH`): a file `CUDNNLOG_CONFIG` names that is
//! missing, or any config file that is not a regular file (a directory, a
//! device, a FIFO: refused without waiting on it), is over
//! [`MAX_CONFIG_BYTES`] (never read further), is not UTF-8 or not valid;
//! a variable that is not UTF-8 or not one of its values. Errors are one
//! line, quoting at most an excerpt of a value.

use crate::args::Format;
use crate::render::clip;
use crate::term::Color;
use anyhow::Context;
use clap::ValueEnum;
use cudnnlog::Catalog;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a config file may hold (a real one is a few lines): a
/// larger file, or one that never ends (`/proc/self/pagemap`), is refused
/// after reading this much and one more block.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// The most characters of a value an error quotes.
const VALUE_SHOWN: usize = 40;

/// The most characters of a path or a parser's message an error quotes.
const TEXT_SHOWN: usize = 240;

/// What the config file and the environment set.
///
/// ```ignore
/// let c: Config = toml::from_str("format = \"json\"\n")?;
/// assert_eq!(c.format, Some(Format::Json));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Pattern directories added to every catalog.
    #[serde(default)]
    pub patterns: Vec<PathBuf>,
    /// The scan's format when `--format` is not given.
    #[serde(default, deserialize_with = "one_of")]
    pub format: Option<Format>,
    /// The colour choice when `--color` is not given.
    #[serde(default, deserialize_with = "one_of")]
    pub color: Option<Color>,
    /// What named `patterns` (`the config file …`, `CUDNNLOG_PATTERNS`),
    /// for an error about one of them.
    #[serde(skip)]
    pub patterns_from: Option<String>,
}

impl Config {
    /// The built-in catalog with the config's pattern directories, then
    /// `flags`' (`--patterns`); an error about one of the config's
    /// directories says what named it.
    ///
    /// ```ignore
    /// let catalog = config.catalog(&args.patterns)?;
    /// ```
    pub fn catalog(&self, flags: &[PathBuf]) -> anyhow::Result<Catalog> {
        let dirs: Vec<PathBuf> = self.patterns.iter().chain(flags).cloned().collect();
        crate::load_catalog(&dirs).map_err(|err| {
            let failed = err
                .chain()
                .find_map(|e| match e.downcast_ref::<cudnnlog::Error>()? {
                    cudnnlog::Error::Io { path, .. } => Some(PathBuf::from(path)),
                    cudnnlog::Error::Catalog { file, .. } => Some(PathBuf::from(file)),
                    _ => None,
                });
            let ours = failed.is_some_and(|f| self.patterns.iter().any(|d| f.starts_with(d)));
            match &self.patterns_from {
                Some(from) if ours => err.context(format!("in `patterns` of {from}")),
                _ => err,
            }
        })
    }
}

/// Where the config file is, if anywhere, and whether `CUDNNLOG_CONFIG`
/// named it.
fn path() -> Option<(PathBuf, bool)> {
    if let Some(p) = std::env::var_os("CUDNNLOG_CONFIG") {
        return (!p.is_empty()).then(|| (PathBuf::from(p), true));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some((base.join("cudnnlog").join("config.toml"), false))
}

/// `~/x` as the home directory's `x`.
fn expand_home(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => p.to_path_buf(),
    }
}

/// The config file (if any), then the environment over it.
///
/// # Errors
///
/// The config file cannot be used (see the module's documentation), or a
/// variable holds what it cannot.
pub fn load() -> anyhow::Result<Config> {
    let mut config = match path() {
        Some((p, named)) => from_file(&p, named)?,
        None => Config::default(),
    };
    if let Some(dirs) = std::env::var_os("CUDNNLOG_PATTERNS").filter(|v| !v.is_empty()) {
        config.patterns = std::env::split_paths(&dirs).collect();
        config.patterns_from = Some("CUDNNLOG_PATTERNS".into());
    }
    if let Some(f) = env_value::<Format>("CUDNNLOG_FORMAT")? {
        config.format = Some(f);
    }
    if let Some(c) = env_value::<Color>("CUDNNLOG_COLOR")? {
        config.color = Some(c);
    }
    Ok(config)
}

/// The config file at `path`; `named` when `CUDNNLOG_CONFIG` named it
/// (then even a missing file is an error).
pub(crate) fn from_file(path: &Path, named: bool) -> anyhow::Result<Config> {
    let shown = clip(&path.display().to_string(), TEXT_SHOWN);
    let by = if named { " (CUDNNLOG_CONFIG)" } else { "" };
    let text = match read(path) {
        Ok(text) => text,
        Err(e)
            if !named
                && matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
        {
            return Ok(Config::default())
        }
        Err(e) => return Err(e).with_context(|| format!("config file {shown}{by}")),
    };
    let mut config: Config = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("bad config file {shown}{}", located(&text, &e)))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    config.patterns = config
        .patterns
        .iter()
        .map(|d| dir.join(expand_home(d)))
        .collect();
    if !config.patterns.is_empty() {
        config.patterns_from = Some(format!("the config file {shown}"));
    }
    Ok(config)
}

/// Reads a config file in bounded time and memory: opened without
/// blocking (a FIFO with no writer would block `open`), refused unless the
/// open handle is a regular file, read no further than
/// [`MAX_CONFIG_BYTES`] and one more block.
fn read(path: &Path) -> std::io::Result<String> {
    let mut file = cudnnlog::source::open_regular(path)?;
    // Blocks of 64 KiB: procfs files such as /proc/self/pagemap take reads
    // of whole entries.
    let mut text = Vec::new();
    let mut block = vec![0u8; 64 << 10];
    while text.len() <= MAX_CONFIG_BYTES {
        match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&block[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if text.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "is over the {} MiB limit of a config file",
            MAX_CONFIG_BYTES >> 20
        )));
    }
    String::from_utf8(text).map_err(|e| {
        std::io::Error::other(format!(
            "is not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Where in `text` a TOML error is and what it says, on one line: `
/// line 2: format: unknown value "jsonn" (expected …)`.
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = clip(e.message().trim(), TEXT_SHOWN);
    let Some(span) = e.span() else {
        return format!(": {message}");
    };
    let start = span.start.min(text.len());
    let n = text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    // The key of a `key = value` line, unless the message names it.
    let key = text
        .lines()
        .nth(n)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim())
        .filter(|k| {
            !k.is_empty()
                && k.len() <= VALUE_SHOWN
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
                && !message.contains(&format!("`{k}`"))
        })
        .map_or(String::new(), |k| format!("{k}: "));
    format!(" line {}: {key}{message}", n + 1)
}

/// A setting that holds one of a flag's values, in the config file.
fn one_of<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: ValueEnum,
{
    let s = String::deserialize(d)?;
    value_of(&s).map(Some).map_err(serde::de::Error::custom)
}

/// One of a flag's values, or what is wrong: `unknown value "jsonn"
/// (expected table, compact, … or html)`, the value cut to an excerpt.
fn value_of<T: ValueEnum>(s: &str) -> Result<T, String> {
    T::from_str(s, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect();
        let expected = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        format!(
            "unknown value \"{}\" (expected {expected})",
            clip(s, VALUE_SHOWN)
        )
    })
}

/// A variable holding one of a flag's values; unset or empty: none.
fn env_value<T: ValueEnum>(name: &str) -> anyhow::Result<Option<T>> {
    let Some(v) = std::env::var_os(name).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let Some(v) = v.to_str() else {
        anyhow::bail!(
            "{name}: \"{}\" is not UTF-8",
            clip(&v.to_string_lossy(), VALUE_SHOWN)
        );
    };
    value_of(v)
        .map(Some)
        .map_err(|why| anyhow::anyhow!("{name}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_parses_and_rejects_unknown_keys() {
        let c: Config =
            toml::from_str("patterns = [\"p\"]\nformat = \"json\"\ncolor = \"never\"\n").unwrap();
        assert_eq!(c.format, Some(Format::Json));
        assert_eq!(c.color, Some(Color::Never));
        assert!(toml::from_str::<Config>("colour = \"never\"\n").is_err());
    }

    #[test]
    fn a_bad_value_is_located_and_quoted_short() {
        let text = format!("format = \"json\"\ncolor = \"{}\"\n", "z".repeat(5000));
        let e = toml::from_str::<Config>(&text).unwrap_err();
        let shown = located(&text, &e);
        assert!(
            shown.starts_with(" line 2: color: unknown value \"zzz"),
            "{shown}"
        );
        assert!(
            shown.ends_with("…\" (expected auto, always or never)"),
            "{shown}"
        );
        assert!(shown.len() < 200, "{shown}");
    }
}
