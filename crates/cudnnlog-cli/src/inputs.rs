//! What to scan: the paths on the command line, with directories walked
//! recursively (filtered by `--glob`), symlink loops detected, and `-` for
//! standard input.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One thing to scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

/// Expands the command line's paths. Files named directly are kept as
/// given (a missing one fails when scanned); directories contribute their
/// files, sorted, whose names match `glob` (all files without one).
/// Returns the inputs and one note per skipped directory (a symlink loop,
/// an unreadable directory).
pub fn expand(paths: &[PathBuf], glob: Option<&globset::GlobMatcher>) -> (Vec<Input>, Vec<String>) {
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else if path.is_dir() {
            let mut seen = HashSet::new();
            let mut files = Vec::new();
            walk(path, glob, &mut seen, &mut files, &mut notes);
            files.sort();
            inputs.extend(files.into_iter().map(Input::File));
        } else {
            inputs.push(Input::File(path.clone()));
        }
    }
    (inputs, notes)
}

#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::canonicalize(path).ok().map(|p| {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        p.hash(&mut h);
        (0, h.finish())
    })
}

fn walk(
    dir: &Path,
    glob: Option<&globset::GlobMatcher>,
    seen: &mut HashSet<(u64, u64)>,
    files: &mut Vec<PathBuf>,
    notes: &mut Vec<String>,
) {
    match identity(dir) {
        Some(id) if !seen.insert(id) => {
            notes.push(format!("{}: a symlink loop, skipped", dir.display()));
            return;
        }
        None => {
            notes.push(format!("{}: cannot be read, skipped", dir.display()));
            return;
        }
        _ => {}
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        notes.push(format!("{}: cannot be read, skipped", dir.display()));
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, glob, seen, files, notes);
        } else if path.is_file() {
            let name_matches = glob.is_none_or(|g| path.file_name().is_some_and(|n| g.is_match(n)));
            if name_matches {
                files.push(path);
            }
        } else if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            // A dangling link or a link loop between files.
            notes.push(format!(
                "{}: a broken or looping link, skipped",
                path.display()
            ));
        }
    }
}
