//! What to scan: the paths on the command line, with directories walked by
//! [`cudnnlog::source::Walk`], and `-` for standard input.

use cudnnlog::source::Walk;
use std::path::PathBuf;

/// One thing to scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

/// Expands the command line's paths, in order. Returns the inputs and one
/// note per skipped entry that may surprise (a symlink loop, an unreadable
/// directory).
pub fn expand(
    paths: &[PathBuf],
    walk: &Walk,
) -> Result<(Vec<Input>, Vec<String>), cudnnlog::Error> {
    let mut inputs = Vec::new();
    let mut notes = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
        } else {
            let walked = walk.files(std::slice::from_ref(path))?;
            inputs.extend(walked.files.into_iter().map(Input::File));
            notes.extend(walked.skipped.iter().map(ToString::to_string));
        }
    }
    Ok((inputs, notes))
}
