//! The library's error type.

/// Everything that can go wrong in the library.
///
/// Messages are lowercase and name the file (and, for catalog files, the
/// field) they are about.
///
/// ```
/// use cudnnlog::{report::FindingsSink, Catalog, CatalogBuilder, Error, MmapChoice, ScannerBuilder};
/// let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
/// let mut sink = FindingsSink::new(scanner.catalog());
/// let path = std::path::Path::new("/no/such/train.log");
/// let err = scanner.scan_path(path, MmapChoice::never(), &mut sink).unwrap_err();
/// assert!(matches!(&err, Error::Io { path, source } if path == "/no/such/train.log" && source.kind() == std::io::ErrorKind::NotFound));
/// assert!(err.to_string().starts_with("/no/such/train.log: "));
///
/// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-error-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("my-oom.toml"), "id = \"my-oom\"\nclass = \"cuda.oom\"\n").unwrap();
/// let err = CatalogBuilder::new().add_dir(&dir).build().unwrap_err();
/// assert!(matches!(&err, Error::Catalog { file, field, .. } if file.ends_with("my-oom.toml") && field == "severity"));
/// assert!(err.to_string().starts_with("catalog file "));
/// std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), cudnnlog::Error>(())
/// ```
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
