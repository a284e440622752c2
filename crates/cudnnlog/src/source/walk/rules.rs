//! Ignore files, read within bounds: `.cudnnlogignore`, `.ignore`,
//! `.gitignore` and `.git/info/exclude` of each directory walked and of
//! every directory above the walk's root, with rg's precedence.
//!
//! A rule costs memory once compiled: about 8 KiB for a short one, and up
//! to about 900 bytes per byte of its text for one full of wildcards (a
//! 4 MiB `.gitignore` took more than 1.8 GiB). So at most
//! [`MAX_IGNORE_FILE`] of each ignore file is read, and at most
//! [`MAX_IGNORE_TEXT`] of the ignore files in effect at once (those of a
//! directory and of every directory above it); the rest is not used, and a
//! note says so. An ignore file that is not a regular file (a FIFO would
//! block its reader forever) is not read, and a note says so too.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::io::Read;
use std::path::{Path, PathBuf};

/// How much of one ignore file is read: its whole lines within its first
/// 16 KiB.
///
/// ```
/// assert_eq!(cudnnlog::source::MAX_IGNORE_FILE, 16 << 10);
/// ```
pub const MAX_IGNORE_FILE: usize = 16 << 10;

/// How much ignore-file text is in effect at once: the ignore files of a
/// directory and of every directory above it, together. About 28 MiB of
/// compiled rules at worst, 14 MiB for ordinary ones.
///
/// ```
/// use cudnnlog::source::{MAX_IGNORE_FILE, MAX_IGNORE_TEXT};
/// assert_eq!(MAX_IGNORE_TEXT, 2 * MAX_IGNORE_FILE);
/// ```
pub const MAX_IGNORE_TEXT: usize = 32 << 10;

/// The ignore files of one directory, compiled.
struct Level {
    /// `.cudnnlogignore`, `.ignore`, `.gitignore`, `.git/info/exclude`, in
    /// rg's order of precedence.
    files: [Gitignore; 4],
    /// The directory holds `.git`: the git rules of directories above it
    /// do not apply below it.
    has_git: bool,
    /// Bytes of rules read, counted against [`MAX_IGNORE_TEXT`].
    text: usize,
    /// A directory above the walk's root: its rules are matched with
    /// absolute paths.
    absolute: bool,
}

/// The ignore files in effect: a stack of directories, the walk's root's
/// parents at the bottom.
pub(super) struct Rules {
    levels: Vec<Level>,
    /// Bytes of rules read by every level.
    text: usize,
    /// Ignore files are read at all (not `--no-ignore`).
    enabled: bool,
    /// The walk's root as walked, and as an absolute path.
    root: PathBuf,
    absolute_root: PathBuf,
    /// How many levels are the root's parents.
    parents: usize,
    /// Ignore files already noted, so that one is noted once.
    noted: std::collections::HashSet<PathBuf>,
}

const NAMES: [&str; 4] = [
    ".cudnnlogignore",
    ".ignore",
    ".gitignore",
    ".git/info/exclude",
];

impl Rules {
    /// The rules of the directories above `root` (none when `enabled` is
    /// false); what could not be read fully goes to `notes`.
    pub(super) fn new(root: &Path, enabled: bool, notes: &mut Vec<String>) -> Rules {
        let absolute_root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let mut rules = Rules {
            levels: Vec::new(),
            text: 0,
            enabled,
            root: root.to_path_buf(),
            absolute_root: absolute_root.clone(),
            parents: 0,
            noted: std::collections::HashSet::new(),
        };
        if enabled {
            let mut above: Vec<&Path> = absolute_root.ancestors().skip(1).collect();
            above.reverse();
            for dir in above {
                rules.push_level(dir, true, notes);
            }
        }
        rules.parents = rules.levels.len();
        rules
    }

    /// Enters `dir`: its ignore files apply to what is below it.
    pub(super) fn push(&mut self, dir: &Path, notes: &mut Vec<String>) {
        self.push_level(dir, false, notes);
    }

    /// Leaves the directory entered last.
    pub(super) fn pop(&mut self) {
        if let Some(level) = self.levels.pop() {
            self.text -= level.text;
        }
    }

    /// Back to the root's parents only, then into every directory from the
    /// root down to `dir`'s parent: the rules in effect for `dir`'s
    /// entries' siblings, where a walk through a link starts.
    pub(super) fn reenter(&mut self, dir: &Path, notes: &mut Vec<String>) {
        while self.levels.len() > self.parents {
            self.pop();
        }
        let Some(parent) = dir.parent() else { return };
        let Ok(below) = parent.strip_prefix(&self.root) else {
            return;
        };
        let mut at = self.root.clone();
        self.push(&at, notes);
        for part in below.components() {
            at.push(part);
            self.push(&at, notes);
        }
    }

    fn push_level(&mut self, dir: &Path, absolute: bool, notes: &mut Vec<String>) {
        if !self.enabled {
            return;
        }
        let has_git = dir.join(".git").is_dir();
        let mut text = 0;
        let files = NAMES.map(|name| {
            if name == NAMES[3] && !has_git {
                return Gitignore::empty();
            }
            let path = dir.join(name);
            let room = MAX_IGNORE_FILE.min(MAX_IGNORE_TEXT - (self.text + text));
            let (gitignore, read) = self.read(dir, &path, room, notes);
            text += read;
            gitignore
        });
        self.text += text;
        self.levels.push(Level {
            files,
            has_git,
            text,
            absolute,
        });
    }

    /// The rules of the ignore file at `path` (in `dir`), at most `room`
    /// bytes of them, and how many bytes were read.
    fn read(
        &mut self,
        dir: &Path,
        path: &Path,
        room: usize,
        notes: &mut Vec<String>,
    ) -> (Gitignore, usize) {
        let (file, meta) = match crate::source::open::open_nonblocking(path) {
            Ok(opened) => opened,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Gitignore::empty(), 0),
            Err(e) => {
                self.note(path, format!("cannot be read ({e}), not used"), notes);
                return (Gitignore::empty(), 0);
            }
        };
        if !meta.is_file() {
            self.note(
                path,
                "not a regular file, not read as an ignore file".into(),
                notes,
            );
            return (Gitignore::empty(), 0);
        }
        let mut bytes = Vec::new();
        if let Err(e) = file.take(room as u64 + 1).read_to_end(&mut bytes) {
            self.note(path, format!("cannot be read ({e}), not used"), notes);
            return (Gitignore::empty(), 0);
        }
        if bytes.len() > room {
            // The rest is not read: keep whole lines only.
            let end = bytes[..room]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            bytes.truncate(end);
            let why = if room == MAX_IGNORE_FILE {
                format!("an ignore file's limit, {} KiB", MAX_IGNORE_FILE >> 10)
            } else {
                format!(
                    "the ignore files above it take the rest of the {} KiB in effect at once",
                    MAX_IGNORE_TEXT >> 10
                )
            };
            self.note(
                path,
                format!(
                    "only its first {} bytes of rules are read ({why}); the rest is not used",
                    bytes.len()
                ),
                notes,
            );
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut builder = GitignoreBuilder::new(dir);
        for (i, line) in text.lines().enumerate() {
            let line = if i == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            // A rule that is not a glob is skipped, as rg skips it.
            let _ = builder.add_line(None, line);
        }
        match builder.build() {
            Ok(gitignore) => (gitignore, bytes.len()),
            Err(e) => {
                self.note(path, format!("its rules cannot be used ({e})"), notes);
                (Gitignore::empty(), 0)
            }
        }
    }

    /// Notes `what` of the ignore file at `path`, once.
    fn note(&mut self, path: &Path, what: String, notes: &mut Vec<String>) {
        if self.noted.insert(path.to_path_buf()) {
            notes.push(format!("{}: {what}", path.display()));
        }
    }

    /// What the ignore files say of `path` (below the root, as walked):
    /// the deepest directory's rule wins; `.cudnnlogignore` over `.ignore`
    /// over `.gitignore` over `.git/info/exclude`; git's rules stop at the
    /// repository that holds the path.
    pub(super) fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let mut found = [Match::None, Match::None, Match::None, Match::None];
        let mut saw_git = false;
        let mut absolute: Option<PathBuf> = None;
        for level in self.levels.iter().rev() {
            let path = if level.absolute {
                absolute.get_or_insert_with(|| match path.strip_prefix(&self.root) {
                    Ok(rest) => self.absolute_root.join(rest),
                    Err(_) => path.to_path_buf(),
                })
            } else {
                path
            };
            for (i, (slot, file)) in found.iter_mut().zip(&level.files).enumerate() {
                let git = i >= 2;
                if slot.is_none() && !(git && saw_git) && !file.is_empty() {
                    *slot = match file.matched(path, is_dir) {
                        Match::None => Match::None,
                        Match::Ignore(_) => Match::Ignore(()),
                        Match::Whitelist(_) => Match::Whitelist(()),
                    };
                }
            }
            saw_git |= level.has_git;
        }
        let [custom, ignore, git, exclude] = found;
        custom.or(ignore).or(git).or(exclude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cudnnlog-rules-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        dir
    }

    #[test]
    fn deeper_rules_and_custom_files_win() {
        let dir = scratch("precedence");
        std::fs::write(dir.join(".gitignore"), "*.log\n!keep.log\n").unwrap();
        std::fs::write(dir.join("a/.gitignore"), "!again.log\n").unwrap();
        std::fs::write(dir.join("a/.cudnnlogignore"), "keep.log\n").unwrap();
        let mut notes = Vec::new();
        let mut rules = Rules::new(&dir, true, &mut notes);
        rules.push(&dir, &mut notes);
        let at = |rules: &Rules, p: &str| rules.matched(&dir.join(p), false);
        assert!(at(&rules, "x.log").is_ignore());
        assert!(at(&rules, "keep.log").is_whitelist());
        rules.push(&dir.join("a"), &mut notes);
        assert!(at(&rules, "a/again.log").is_whitelist());
        assert!(at(&rules, "a/keep.log").is_ignore());
        assert!(at(&rules, "a/other.log").is_ignore());
        rules.pop();
        assert!(at(&rules, "a/again.log").is_ignore());
        assert!(notes.is_empty(), "{notes:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An ignore file is read up to its limit, whole lines only, the
    /// rules along one path up to theirs; a note says each was cut.
    #[test]
    fn ignore_files_are_read_within_their_limits() {
        let dir = scratch("limits");
        let mut big = String::from("first.log\n");
        while big.len() < 3 * MAX_IGNORE_FILE {
            big.push_str("some/long/enough/rule-*.tmp\n");
        }
        big.push_str("last.log\n");
        std::fs::write(dir.join(".gitignore"), &big).unwrap();
        std::fs::write(dir.join("a/.ignore"), &big).unwrap();
        std::fs::write(dir.join("a/b/.ignore"), &big).unwrap();
        let mut notes = Vec::new();
        let mut rules = Rules::new(&dir, true, &mut notes);
        for d in ["", "a", "a/b"] {
            rules.push(&dir.join(d), &mut notes);
        }
        assert!(rules.text <= MAX_IGNORE_TEXT);
        assert!(rules.levels.iter().all(|l| l.text <= MAX_IGNORE_FILE));
        assert!(rules.matched(&dir.join("first.log"), false).is_ignore());
        assert!(rules.matched(&dir.join("last.log"), false).is_none());
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("an ignore file's limit, 16 KiB"),
            "{}",
            notes[0]
        );
        assert!(
            notes[2].contains("the ignore files above it take the rest of the 32 KiB"),
            "{}",
            notes[2]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_ignore_file_that_is_a_fifo_is_not_read() {
        let dir = scratch("fifo");
        crate::source::mkfifo(&dir.join(".gitignore"));
        let mut notes = Vec::new();
        let mut rules = Rules::new(&dir, true, &mut notes);
        rules.push(&dir, &mut notes);
        assert!(rules.matched(&dir.join("x.log"), false).is_none());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].ends_with(".gitignore: not a regular file, not read as an ignore file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
