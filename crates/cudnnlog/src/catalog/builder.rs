//! Where a catalog's files come from: the built-in `patterns/` embedded at
//! build time, and the directories a user adds.

use super::{builtin, load, Catalog};
use crate::error::Error;
use std::path::Path;

/// Assembles a [`Catalog`] from the built-in files and user directories.
///
/// ```no_run
/// let catalog = cudnnlog::CatalogBuilder::new()
///     .add_dir("my-patterns")
///     .build()
///     .unwrap();
/// # let _ = catalog;
/// ```
#[derive(Clone, Debug)]
pub struct CatalogBuilder {
    builtin: bool,
    dirs: Vec<std::path::PathBuf>,
}

impl Default for CatalogBuilder {
    fn default() -> Self {
        CatalogBuilder::new()
    }
}

impl CatalogBuilder {
    /// A builder that starts from the built-in catalog.
    ///
    /// ```
    /// let catalog = cudnnlog::CatalogBuilder::new().build().unwrap();
    /// assert!(catalog.pattern("cuda-oom-pytorch-allocator").is_some());
    /// let builtin = cudnnlog::Catalog::builtin().unwrap();
    /// assert_eq!(catalog.patterns().len(), builtin.patterns().len());
    /// ```
    pub fn new() -> CatalogBuilder {
        CatalogBuilder {
            builtin: true,
            dirs: Vec::new(),
        }
    }

    /// Whether to include the built-in catalog. Default: true.
    ///
    /// ```
    /// use cudnnlog::CatalogBuilder;
    /// // Without the built-in files and with no directory added, nothing is left.
    /// let empty = CatalogBuilder::new().builtin(false).build().unwrap();
    /// assert!(empty.patterns().is_empty() && empty.classes().is_empty());
    /// let full = CatalogBuilder::new().builtin(true).build().unwrap();
    /// assert!(full.class("cuda.oom").is_some());
    /// ```
    pub fn builtin(&mut self, yes: bool) -> &mut CatalogBuilder {
        self.builtin = yes;
        self
    }

    /// Adds every `.toml` file under `dir`. A `classes.toml` or `causes.toml`
    /// adds classes or causes; any other file is one pattern. Default: none.
    ///
    /// ```
    /// use cudnnlog::{CatalogBuilder, Error};
    /// let dir = std::env::temp_dir().join(format!("cudnnlog-doc-add-dir-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// std::fs::write(dir.join("my-oom.toml"), "id = \"my-oom\"\nclass = \"cuda.oom\"\n").unwrap();
    /// // The file is read and validated on `build`: it lacks `severity`.
    /// let err = CatalogBuilder::new().add_dir(&dir).build().unwrap_err();
    /// assert!(matches!(err, Error::Catalog { ref field, .. } if field == "severity"));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn add_dir(&mut self, dir: impl AsRef<Path>) -> &mut CatalogBuilder {
        self.dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Reads, validates and assembles the catalog.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when an added directory or one of its files cannot be
    /// read (or a file is not UTF-8); [`Error::Catalog`], naming the file and
    /// the field, when a file is malformed or inconsistent (bad TOML, a missing
    /// or unknown field, a regex that does not compile, an anchor too short,
    /// an unknown class or cause), or when the user files together pass the
    /// load limits (`docs/catalog-format.md`). Nothing is loaded in part.
    ///
    /// ```
    /// use cudnnlog::{CatalogBuilder, Error};
    /// let catalog = CatalogBuilder::new().build().unwrap();
    /// assert_eq!(catalog.class("cuda.oom").unwrap().title, "GPU out of memory");
    /// let err = CatalogBuilder::new().add_dir("/no/such/patterns").build().unwrap_err();
    /// assert!(matches!(err, Error::Io { ref path, .. } if path == "/no/such/patterns"));
    /// ```
    pub fn build(&self) -> Result<Catalog, Error> {
        let mut files: Vec<(String, std::borrow::Cow<'static, str>, bool)> = Vec::new();
        if self.builtin {
            files.extend(
                builtin::FILES
                    .iter()
                    .zip(builtin::FILES_JSON)
                    .map(|((p, _), &json)| (format!("patterns/{p}"), json.into(), true)),
            );
        }
        files.extend(load::read_user_dirs(&self.dirs)?);
        Catalog::assemble(files)
    }
}
