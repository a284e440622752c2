//! Defaults a user sets once: a config file and `CUDNNLOG_*` variables.
//!
//! The file is `$CUDNNLOG_CONFIG` when set (empty: no file), else
//! `$XDG_CONFIG_HOME/cudnnlog/config.toml`, else
//! `~/.config/cudnnlog/config.toml`; a missing file is no file:
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

use crate::args::Format;
use crate::term::Color;
use anyhow::Context;
use clap::ValueEnum;
use std::path::{Path, PathBuf};

/// What the config file and the environment set.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Pattern directories added to every catalog.
    #[serde(default)]
    pub patterns: Vec<PathBuf>,
    /// The scan's format when `--format` is not given.
    pub format: Option<Format>,
    /// The colour choice when `--color` is not given.
    pub color: Option<Color>,
}

/// Where the config file is, if anywhere.
fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CUDNNLOG_CONFIG") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("cudnnlog").join("config.toml"))
}

/// `~/x` as the home directory's `x`.
fn expand_home(p: &Path) -> PathBuf {
    match (p.strip_prefix("~"), std::env::var_os("HOME")) {
        (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => p.to_path_buf(),
    }
}

/// The config file (if any), then the environment over it.
pub fn load() -> anyhow::Result<Config> {
    let mut config = match path() {
        Some(p) if p.is_file() => {
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("cannot read the config file {}", p.display()))?;
            let mut c: Config = toml::from_str(&text)
                .with_context(|| format!("bad config file {}", p.display()))?;
            let dir = p.parent().unwrap_or(Path::new("."));
            c.patterns = c
                .patterns
                .iter()
                .map(|d| dir.join(expand_home(d)))
                .collect();
            c
        }
        _ => Config::default(),
    };
    if let Some(dirs) = std::env::var_os("CUDNNLOG_PATTERNS").filter(|v| !v.is_empty()) {
        config.patterns = std::env::split_paths(&dirs).collect();
    }
    if let Some(f) = env_value::<Format>("CUDNNLOG_FORMAT")? {
        config.format = Some(f);
    }
    if let Some(c) = env_value::<Color>("CUDNNLOG_COLOR")? {
        config.color = Some(c);
    }
    Ok(config)
}

/// A variable holding one of a flag's values.
fn env_value<T: ValueEnum>(name: &str) -> anyhow::Result<Option<T>> {
    let Ok(v) = std::env::var(name) else {
        return Ok(None);
    };
    if v.is_empty() {
        return Ok(None);
    }
    T::from_str(&v, true)
        .map(Some)
        .map_err(|_| anyhow::anyhow!("{name}={v:?} is not a value it takes"))
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
}
