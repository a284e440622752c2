//! What to scan: the paths on the command line, with directories walked by
//! [`cudnnlog::source::Walk`], and `-` for standard input.

use cudnnlog::fleet::{JobInput, JobSource};
use cudnnlog::source::Walk;
use std::path::PathBuf;

/// Expands the command line's paths, in order, into inputs without ranks.
/// Returns the inputs and one note per skipped entry that may surprise (a
/// symlink loop, an unreadable directory).
pub fn expand(
    paths: &[PathBuf],
    walk: &Walk,
) -> Result<(Vec<JobInput>, Vec<String>), cudnnlog::Error> {
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(JobInput::Stdin);
        } else {
            let walked = walk.files(std::slice::from_ref(path))?;
            inputs.extend(
                walked
                    .files
                    .into_iter()
                    .map(|path| JobInput::File(JobSource { path, rank: None })),
            );
            notes.extend(walked.skipped.iter().map(ToString::to_string));
        }
    }
    Ok((inputs, notes))
}
