//! What to scan: the paths on the command line, with directories walked by
//! [`cudnnlog::source::Walk`], and `-` for standard input.

use cudnnlog::fleet::{JobInput, JobSource};
use cudnnlog::source::{Reached, Walk};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The command line's paths, expanded.
pub struct Expanded {
    /// The inputs, in order, without ranks.
    pub inputs: Vec<JobInput>,
    /// One note per entry left out that may surprise (a symlink loop, an
    /// unreadable directory, a binary file), per binary file named
    /// explicitly (scanned: it was asked for) and per ignore file read only
    /// in part or not at all, for standard error.
    pub notes: Vec<String>,
    /// Every entry left out, counted by reason
    /// ([`cudnnlog::source::Walked::counts`]).
    pub skipped: BTreeMap<String, u64>,
}

/// Expands the command line's paths, in order, into inputs without ranks:
/// each file once, however many of the paths reach it (by device and
/// inode: a link, a file named and inside a directory named).
pub fn expand(paths: &[PathBuf], walk: &Walk) -> Result<Expanded, cudnnlog::Error> {
    let mut expanded = Expanded {
        inputs: Vec::new(),
        notes: Vec::new(),
        skipped: BTreeMap::new(),
    };
    let mut reached = Reached::default();
    for path in paths {
        if path.as_os_str() == "-" {
            expanded.inputs.push(JobInput::Stdin);
        } else {
            if cudnnlog::source::is_binary(path) {
                expanded.notes.push(format!(
                    "{}: binary content, scanned as text because it was named",
                    path.display()
                ));
            }
            let walked = walk.files_once(std::slice::from_ref(path), &mut reached)?;
            for (why, n) in walked.counts() {
                *expanded.skipped.entry(why).or_default() += n;
            }
            expanded
                .notes
                .extend(walked.skipped.iter().map(ToString::to_string));
            expanded.notes.extend(walked.notes);
            expanded.inputs.extend(
                walked
                    .files
                    .into_iter()
                    .map(|path| JobInput::File(JobSource { path, rank: None })),
            );
        }
    }
    Ok(expanded)
}
