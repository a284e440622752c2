//! The walk of one directory: depth first, each directory's entries in
//! name order, filtered by the globs, the ignore files ([`Rules`]) and
//! hidden names; every file and directory reached once by device and inode.
//!
//! Links are followed after the rest: the directories and files reached by
//! a path without links are walked first, and a link is followed only to
//! what no path reached yet. So a file reached by several paths is one
//! file, named by its path without links when it has one, and links that
//! fan out (five levels of twelve links are 248,832 paths to one file)
//! cost one visit of each directory, not one per path. A link back to a
//! directory above it is a loop, skipped and noted; a link to a directory
//! already walked is counted ([`Walked::duplicates`]).
//!
//! Each file is opened once, without blocking (a FIFO where the directory
//! listed a file, or a file swapped for one since, never blocks the walk),
//! its type checked on the open handle, its device and inode read there,
//! and its first bytes sniffed from it ([`sniff`]).
//!
//! What is held: the paths of the files found (each exactly its length),
//! the device and inode of each file and directory reached, the names of
//! the entries still to visit in the directories being walked, the links
//! still to follow, and the ignore files in effect (bounded by [`Rules`]).

use super::rules::Rules;
use super::{not_a_log_by_name, Reached, SkipReason, Skipped, Walk, Walked};
use crate::source::id_of;
use crate::source::sniff::{self, Sniffed};
use crate::Error;
use ignore::overrides::{Override, OverrideBuilder};
use ignore::Match;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::FileType;
use std::path::{Path, PathBuf};

/// A path that holds no more memory than its bytes.
pub(crate) fn compact(path: PathBuf) -> PathBuf {
    let mut bytes = path.into_os_string();
    bytes.shrink_to_fit();
    PathBuf::from(bytes)
}

/// A directory being walked: the entries left to visit, in name order.
struct Frame {
    dir: PathBuf,
    depth: usize,
    entries: std::vec::IntoIter<(OsString, Option<FileType>)>,
}

impl Frame {
    /// Lists `dir` (at `depth`), sorted; `None` when it cannot be read.
    fn read(dir: PathBuf, depth: usize) -> Option<Frame> {
        let mut entries: Vec<(OsString, Option<FileType>)> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|e| (e.file_name(), e.file_type().ok()))
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        entries.shrink_to_fit();
        Some(Frame {
            dir,
            depth,
            entries: entries.into_iter(),
        })
    }
}

/// One directory's walk in progress.
struct Tree<'a> {
    walk: &'a Walk,
    overrides: Override,
    rules: Rules,
    reached: &'a mut Reached,
    walked: &'a mut Walked,
    /// The log files found.
    files: Vec<PathBuf>,
    /// Links to follow once the rest is walked, with their depth.
    links: VecDeque<(PathBuf, usize)>,
}

/// The log files under `root` (a directory already counted as reached);
/// what is left out goes to `walked`.
pub(super) fn walk(
    walk: &Walk,
    root: &Path,
    reached: &mut Reached,
    walked: &mut Walked,
) -> Result<Vec<PathBuf>, Error> {
    let mut overrides = OverrideBuilder::new(root);
    for g in &walk.globs {
        overrides.add(g).map_err(|e| Error::Glob {
            glob: g.clone(),
            message: e.to_string(),
        })?;
    }
    let overrides = overrides.build().map_err(|e| Error::Glob {
        glob: walk.globs.join(" "),
        message: e.to_string(),
    })?;
    let rules = Rules::new(root, !walk.no_ignore, &mut walked.notes);
    let mut tree = Tree {
        walk,
        overrides,
        rules,
        reached,
        walked,
        files: Vec::new(),
        links: VecDeque::new(),
    };
    tree.dir(root.to_path_buf(), 0);
    while let Some((link, depth)) = tree.links.pop_front() {
        tree.link(link, depth);
    }
    Ok(tree.files)
}

impl Tree<'_> {
    /// Whether entries at `depth` are too deep for `--max-depth`.
    fn too_deep(&self, depth: usize) -> bool {
        self.walk.max_depth.is_some_and(|max| depth > max)
    }

    fn skip(&mut self, path: PathBuf, why: SkipReason) {
        self.walked.skipped.push(Skipped { path, why });
    }

    /// Walks the directory `dir` at `depth` (the root is at 0), depth
    /// first; the links met are queued.
    fn dir(&mut self, dir: PathBuf, depth: usize) {
        if self.too_deep(depth + 1) {
            return;
        }
        let mut stack: Vec<Frame> = Vec::new();
        self.enter(&mut stack, dir, depth);
        while let Some(top) = stack.last_mut() {
            let Some((name, kind)) = top.entries.next() else {
                stack.pop();
                self.rules.pop();
                continue;
            };
            let (path, depth) = (top.dir.join(&name), top.depth + 1);
            if let Some(sub) = self.entry(path, &name, kind, depth) {
                self.enter(&mut stack, sub, depth);
            }
        }
    }

    /// Lists `dir` onto `stack`, its ignore files in effect; or notes it
    /// cannot be read.
    fn enter(&mut self, stack: &mut Vec<Frame>, dir: PathBuf, depth: usize) {
        match Frame::read(dir.clone(), depth) {
            Some(frame) => {
                self.rules.push(&frame.dir, &mut self.walked.notes);
                stack.push(frame);
            }
            None => self.skip(dir, SkipReason::Unreadable),
        }
    }

    /// One entry of a directory: a file is looked at, a link queued, a
    /// directory not reached before returned to be walked.
    fn entry(
        &mut self,
        path: PathBuf,
        name: &OsString,
        kind: Option<FileType>,
        depth: usize,
    ) -> Option<PathBuf> {
        let name = name.to_string_lossy();
        let Some(kind) = kind else {
            self.skip(path, SkipReason::Unreadable);
            return None;
        };
        let (is_dir, is_file) = if kind.is_symlink() {
            match std::fs::metadata(&path) {
                Ok(target) => (target.is_dir(), target.is_file()),
                Err(_) => {
                    if self.wanted(&path, &name, false) {
                        self.skip(path, SkipReason::BrokenLink);
                    }
                    return None;
                }
            }
        } else {
            (kind.is_dir(), kind.is_file())
        };
        // FIFOs, sockets and devices are not logs.
        if !(is_dir || is_file) || !self.wanted(&path, &name, is_dir) {
            return None;
        }
        if kind.is_symlink() {
            if is_file || !self.too_deep(depth + 1) {
                self.links.push_back((path, depth));
            }
            return None;
        }
        if is_file {
            self.file(path);
            return None;
        }
        if self.too_deep(depth + 1) {
            return None;
        }
        let id = std::fs::symlink_metadata(&path)
            .ok()
            .and_then(|m| id_of(&m));
        if id.is_some_and(|id| !self.reached.dirs.insert(id)) {
            self.again(path);
            return None;
        }
        Some(path)
    }

    /// Whether the globs, the ignore files and the hidden rule keep `path`.
    fn wanted(&self, path: &Path, name: &str, is_dir: bool) -> bool {
        let said = match self.overrides.matched(path, is_dir) {
            Match::None => self.rules.matched(path, is_dir),
            Match::Ignore(_) => Match::Ignore(()),
            Match::Whitelist(_) => Match::Whitelist(()),
        };
        match said {
            Match::Ignore(()) => false,
            Match::Whitelist(()) => true,
            Match::None => self.walk.hidden || !name.starts_with('.'),
        }
    }

    /// A file: kept unless its name says it is not a log, its content is
    /// binary, or it was reached already.
    fn file(&mut self, path: PathBuf) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if not_a_log_by_name(&name) {
            self.walked.not_logs += 1;
            return;
        }
        let (id, binary) = match sniff::sniff(&path) {
            // No longer a file (swapped for a FIFO since it was listed).
            Ok(Sniffed::Special) => return,
            Ok(Sniffed::File { id, binary }) => (id, binary),
            // The scan says why it cannot be read.
            Err(_) => (std::fs::metadata(&path).ok().and_then(|m| id_of(&m)), false),
        };
        if id.is_some_and(|id| !self.reached.files.insert(id)) {
            self.walked.duplicates += 1;
        } else if binary {
            self.skip(path, SkipReason::Binary);
        } else {
            self.files.push(compact(path));
        }
    }

    /// A link, once everything reached without links was walked: its file,
    /// or its directory walked unless it was reached already.
    fn link(&mut self, path: PathBuf, depth: usize) {
        let Ok(target) = std::fs::metadata(&path) else {
            self.skip(path, SkipReason::BrokenLink);
            return;
        };
        if target.is_file() {
            self.file(path);
            return;
        }
        if !target.is_dir() {
            return;
        }
        if id_of(&target).is_some_and(|id| !self.reached.dirs.insert(id)) {
            self.again(path);
            return;
        }
        self.rules.reenter(&path, &mut self.walked.notes);
        self.dir(path, depth);
    }

    /// A directory reached again: a loop when it is above `path` itself,
    /// else a duplicate.
    fn again(&mut self, path: PathBuf) {
        let target = std::fs::canonicalize(&path);
        let parent = path.parent().map(std::fs::canonicalize);
        let above = matches!((&target, &parent), (Ok(t), Some(Ok(p))) if p.starts_with(t));
        if above {
            self.skip(path, SkipReason::Loop);
        } else {
            self.walked.duplicates += 1;
        }
    }
}
