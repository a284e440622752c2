//! `cargo xtask new-class`: a new failure class is its stanza in
//! `patterns/classes.toml` and its first pattern file; the scaffold writes
//! both where they belong, with `TODO(new-class)` where a person writes
//! (the catalog's tests fail until none is left).

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The built-in catalog's directory, from the workspace root.
pub const PATTERNS_DIR: &str = "crates/cudnnlog/patterns";

/// What a scaffolded text holds where a person must write.
pub const MARK: &str = "TODO(new-class)";

/// Scaffolds class `id` (`family.name`): appends its stanza to
/// `classes.toml` after the last class of its id prefix, and writes its
/// first pattern, `<dir>/<id with dashes>.toml`, in the directory holding
/// most patterns of classes of the same `family`. `family` is the class's
/// `family` field; without it, that of the classes sharing the id's prefix.
/// Returns the files written.
pub fn new_class(root: &Path, id: &str, family: Option<&str>) -> Result<Vec<PathBuf>> {
    let snake = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let Some((prefix, name)) = id.split_once('.').filter(|(p, n)| snake(p) && snake(n)) else {
        bail!("a class id is `family.name` in snake_case (`cuda.graph_capture`), not `{id}`");
    };
    let dir = root.join(PATTERNS_DIR);
    let classes_path = dir.join("classes.toml");
    let text = std::fs::read_to_string(&classes_path)
        .with_context(|| format!("reading {}", classes_path.display()))?;
    let classes = declared(&text)?;
    if classes.contains_key(id) {
        bail!("class {id} is declared in classes.toml already");
    }
    let family = match family {
        Some(f) => f.to_string(),
        None => classes
            .iter()
            .find(|(c, _)| c.split('.').next() == Some(prefix))
            .map(|(_, f)| f.clone())
            .with_context(|| {
                format!("no class starts with `{prefix}.`: give its family (`cargo xtask new-class {id} FAMILY`)")
            })?,
    };
    let pattern_dir = dir.join(pattern_dir(&dir, &classes, &family)?);
    let pattern_id = format!("{prefix}-{}", name.replace('_', "-"));
    let pattern_path = pattern_dir.join(format!("{pattern_id}.toml"));
    if pattern_path.exists() {
        bail!("{} exists already", pattern_path.display());
    }
    let stanza = format!(
        "\n[[class]]\nid = \"{id}\"\nfamily = \"{family}\"\n\
         # Optional attributes (docs/catalog-format.md): kind, implies, sticky,\n\
         # infrastructure, distributed, waits, follows, gpu, library, title_fact.\n\
         title = \"{MARK}: a few words naming the failure\"\n\
         summary = \"{MARK}: what the log shows when this class is reported, in a few sentences.\"\n"
    );
    let updated = insert_after_prefix(&text, prefix, &stanza);
    std::fs::create_dir_all(&pattern_dir)?;
    std::fs::write(&pattern_path, pattern(&pattern_id, id))
        .with_context(|| format!("writing {}", pattern_path.display()))?;
    std::fs::write(&classes_path, updated)
        .with_context(|| format!("writing {}", classes_path.display()))?;
    Ok(vec![classes_path, pattern_path])
}

/// Each declared class id with its `family`.
fn declared(classes_toml: &str) -> Result<BTreeMap<String, String>> {
    #[derive(serde::Deserialize)]
    struct File {
        class: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        id: String,
        family: String,
    }
    let file: File = toml::from_str(classes_toml).context("parsing classes.toml")?;
    Ok(file.class.into_iter().map(|c| (c.id, c.family)).collect())
}

/// The directory under `patterns/` holding most patterns of classes of
/// `family` (ties: the first by name); `family` itself when none does.
fn pattern_dir(dir: &Path, classes: &BTreeMap<String, String>, family: &str) -> Result<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        class: Option<String>,
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut subdirs: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .collect();
    subdirs.sort_by_key(|e| e.file_name());
    for sub in subdirs {
        let name = sub.file_name().to_string_lossy().into_owned();
        for f in std::fs::read_dir(sub.path())? {
            let path = f?.path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path)?;
            let Ok(head) = toml::from_str::<Head>(&text) else {
                continue;
            };
            if head.class.and_then(|c| classes.get(&c).cloned()).as_deref() == Some(family) {
                *counts.entry(name.clone()).or_default() += 1;
            }
        }
    }
    let best = counts
        .iter()
        .max_by_key(|(name, n)| (**n, std::cmp::Reverse(*name)));
    Ok(best.map_or_else(|| family.to_string(), |(name, _)| name.clone()))
}

/// `text` with `stanza` after the last `[[class]]` stanza whose id starts
/// with `prefix.` (so families stay together), else at the end.
fn insert_after_prefix(text: &str, prefix: &str, stanza: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == "[[class]]")
        .collect();
    let id_of = |start: usize| {
        lines[start..]
            .iter()
            .find_map(|l| l.strip_prefix("id = \""))
            .and_then(|rest| rest.split('"').next())
    };
    let last = starts
        .iter()
        .rposition(|&s| id_of(s).is_some_and(|id| id.starts_with(&format!("{prefix}."))));
    let Some(k) = last else {
        return format!("{}\n{stanza}", text.trim_end());
    };
    // The stanza ends before the next one's comment block or header.
    let mut end = starts.get(k + 1).copied().unwrap_or(lines.len());
    while end > starts[k] + 1 {
        let l = lines[end - 1].trim();
        if l.is_empty() || l.starts_with('#') {
            end -= 1;
        } else {
            break;
        }
    }
    let mut out = lines[..end].join("\n");
    out.push_str(stanza.trim_end_matches('\n'));
    out.push('\n');
    if end < lines.len() {
        out.push_str(&lines[end..].join("\n"));
        out.push('\n');
    }
    out
}

/// The first pattern of a scaffolded class: it loads and matches its own
/// examples, so the catalog builds, and every text to write says
/// [`MARK`], so the catalog's tests fail until it is written.
fn pattern(pattern_id: &str, class: &str) -> String {
    format!(
        r#"id = "{pattern_id}"
class = "{class}"
severity = "error"
stability = "preview"   # "stable" once a real log shows it (docs/catalog-format.md)
since = "{MARK}: the first framework or library version that prints it"
summary = "{MARK}: the message, in a sentence."
# Write the regex from the message's template in the framework's source,
# over several versions, never from one pasted line.
anchors = ["{MARK}"]
regex = '''{MARK_RE}: (?P<detail>[^\n]*)'''

[doc]
what = "{MARK}: every wording this pattern reports, and what it leaves to others."
why = "{MARK}: how the failure comes about."

[[causes]]
id = "code_bug"   # the causes in causes.toml this failure comes from, with priors
prior = 1.0

[[examples]]
log = '''
{MARK}: a real log line, with the lines around it
'''

[[examples]]
log = '''
{MARK}: a second wording or version
'''

[[counterexamples]]
# a near miss that must not match
log = '''
{MARK} a near miss
'''
"#,
        MARK_RE = regex_escape(MARK),
    )
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain(Some(c))
        })
        .collect()
}
