//! The library's error type.

/// Everything that can go wrong in the library.
///
/// Messages are lowercase and name the file (and, for catalog files, the
/// field) they are about.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or stream could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path as given, or `<stdin>`.
        path: String,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A catalog file is malformed or inconsistent.
    #[error("catalog file {file}: field `{field}`: {message}")]
    Catalog {
        /// The file, relative to `patterns/` for built-in files.
        file: String,
        /// The offending field (`regex`, `causes.id`, …), or `(file)`.
        field: String,
        /// What is wrong with the field.
        message: String,
    },
    /// A glob given to a directory walk is malformed.
    #[error("bad glob {glob:?}: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
}
