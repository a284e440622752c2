//! What to scan: the paths on the command line, with directories walked by
//! [`cudnnlog::source::Walk`], and `-` for standard input.

use cudnnlog::fleet::{JobInput, JobSource};
use cudnnlog::source::Walk;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The command line's paths, expanded.
pub struct Expanded {
    /// The inputs, in order, without ranks.
    pub inputs: Vec<JobInput>,
    /// One note per entry left out that may surprise (a symlink loop, an
    /// unreadable directory, a binary file), and per binary file named
    /// explicitly (scanned: it was asked for), for standard error.
    pub notes: Vec<String>,
    /// Every entry left out, counted by reason
    /// ([`cudnnlog::source::Walked::counts`]).
    pub skipped: BTreeMap<String, u64>,
}

/// Expands the command line's paths, in order, into inputs without ranks.
pub fn expand(paths: &[PathBuf], walk: &Walk) -> Result<Expanded, cudnnlog::Error> {
    let mut expanded = Expanded {
        inputs: Vec::new(),
        notes: Vec::new(),
        skipped: BTreeMap::new(),
    };
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
            let walked = walk.files(std::slice::from_ref(path))?;
            for (why, n) in walked.counts() {
                *expanded.skipped.entry(why).or_default() += n;
            }
            expanded
                .notes
                .extend(walked.skipped.iter().map(ToString::to_string));
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
