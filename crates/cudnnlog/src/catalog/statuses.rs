//! Status tables: every member of the CUDA stack's status enums
//! (`patterns/statuses.toml`), with its numeric code and error-string text,
//! mapped to a class.
//!
//! A pattern with `table = "cudaError_t"` captures a status in any spelling
//! — the enum name (`status`), the number (`code`), the library's error
//! string (`status_text`) — and the table names the class: `(2 vs. 0)` in a
//! CHECK against `cudaSuccess` is `cuda.oom`. A member the table lists
//! without a class, and a member it does not know at all (a newer release),
//! is the enum's generic class with the name and code as facts, never "no
//! findings". Success members are no class.
//!
//! ```
//! use cudnnlog::Catalog;
//! let catalog = Catalog::builtin().unwrap();
//! let cuda = catalog.status_table("cudaError_t").unwrap();
//! assert_eq!(cuda.resolve(None, Some(2), None).map(|r| r.class), Some("cuda.oom"));
//! assert_eq!(cuda.resolve(Some("cudaErrorNotPermitted"), None, None).map(|r| r.class), Some("cuda.error"));
//! assert_eq!(cuda.resolve(Some("cudaSuccess"), None, None), None);
//! ```

use serde::Deserialize;

/// The class a member names when it is no failure at all.
pub const NONE: &str = "none";

/// One status enum.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enum {
    /// The C type: `cudaError_t`, `cudnnStatus_t`, …
    pub name: String,
    /// The library that returns it.
    pub library: String,
    /// The class of members with no class of their own, and of unknown ones.
    pub generic: String,
    /// Where the members come from (headers, versions).
    #[serde(default)]
    pub sources: Vec<String>,
    /// Its members (`[[enum.member]]`), in file order.
    #[serde(rename = "member", default)]
    pub members: Vec<Member>,
}

/// One member of a status enum.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// As the header spells it: `cudaErrorMemoryAllocation`.
    pub name: String,
    /// Its value in current releases.
    pub code: i64,
    /// Its value before a renumbering (CUDA 10.0 and older).
    #[serde(default)]
    pub old_code: Option<i64>,
    /// Its value in cuDNN 7 and 8 (cuDNN 9 renumbered the statuses).
    #[serde(default)]
    pub code_v8: Option<i64>,
    /// The library's error string for it.
    #[serde(default)]
    pub text: Option<String>,
    /// Its class; absent means the enum's generic class; `none` a success.
    #[serde(default)]
    pub class: Option<String>,
    /// Other spellings seen in logs.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The first release that has it, where the compared releases pin it
    /// down: a CUDA toolkit version for the CUDA libraries, a cuDNN or NCCL
    /// version for those.
    #[serde(default)]
    pub since: Option<String>,
    /// The last release that had it, for a member later removed.
    #[serde(default)]
    pub until: Option<String>,
}

/// What a status resolves to.
///
/// ```
/// use cudnnlog::{sink::{FnSink, Match, Resolved}, Catalog, ScannerBuilder};
/// let mut statuses = Vec::new();
/// let mut sink = FnSink(|m: &Match<'_>| -> Result<bool, cudnnlog::Error> {
///     statuses.extend(m.status.map(|r| (r.class.to_string(), r.name.map(str::to_string), r.code)));
///     Ok(true)
/// });
/// // A CHECK against cudaSuccess prints the code only: the table names it.
/// let log = b"F1130 09:01:44.310101  1207 base.h:381] Check failed: e == cudaSuccess (800 vs. 0) CUDA: operation not permitted\n";
/// ScannerBuilder::new().build(Catalog::builtin().unwrap()).scan_slice(log, &mut sink).unwrap();
/// assert_eq!(statuses, [("cuda.error".to_string(), Some("cudaErrorNotPermitted".to_string()), Some(800))]);
/// // The same from the table directly.
/// let catalog = Catalog::builtin().unwrap();
/// let r: Resolved<'_> = catalog.status_table("cudaError_t").unwrap().resolve(None, Some(2), None).unwrap();
/// assert_eq!((r.class, r.name, r.code), ("cuda.oom", Some("cudaErrorMemoryAllocation"), Some(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved<'t> {
    /// The class to report.
    pub class: &'t str,
    /// The member's name, when the table knows it.
    pub name: Option<&'t str>,
    /// The member's code, when known.
    pub code: Option<i64>,
}

impl Enum {
    /// The class of a status seen as `name`, `code` or `text`; `None` for a
    /// success member. The name is tried first, then the text (the longest
    /// member text it starts with: it is unambiguous where codes were
    /// renumbered, as CUDA 10.1 did), then the code.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let cuda = catalog.status_table("cudaError_t").unwrap();
    /// let r = cuda.resolve(None, None, Some("an illegal memory access was encountered")).unwrap();
    /// assert_eq!((r.class, r.name, r.code), ("cuda.illegal_address", Some("cudaErrorIllegalAddress"), Some(700)));
    /// assert_eq!(cuda.resolve(None, Some(77), None).unwrap().code, Some(700)); // CUDA 10.0's number
    /// let unknown = cuda.resolve(None, Some(99_999), None).unwrap();
    /// assert_eq!((unknown.class, unknown.name), ("cuda.error", None));
    /// ```
    pub fn resolve(
        &self,
        name: Option<&str>,
        code: Option<i64>,
        text: Option<&str>,
    ) -> Option<Resolved<'_>> {
        let by_name = name.and_then(|n| {
            self.members
                .iter()
                .find(|m| m.name == n || m.aliases.iter().any(|a| a == n))
        });
        let by_code = || {
            let c = code?;
            // cuDNN 9 codes are 1000 and up; smaller ones are cuDNN 7/8's.
            self.members
                .iter()
                .find(|m| m.code == c && (c >= 1000 || m.code_v8.is_none()))
                .or_else(|| self.members.iter().find(|m| m.code_v8 == Some(c)))
                .or_else(|| self.members.iter().find(|m| m.old_code == Some(c)))
        };
        let by_text = || {
            let t = text?.trim().to_ascii_lowercase();
            self.members
                .iter()
                .filter(|m| {
                    m.text
                        .as_deref()
                        .is_some_and(|mt| !mt.is_empty() && t.starts_with(&mt.to_ascii_lowercase()))
                })
                .max_by_key(|m| m.text.as_deref().map_or(0, str::len))
        };
        match by_name.or_else(by_text).or_else(by_code) {
            Some(m) => {
                let class = m.class.as_deref().unwrap_or(&self.generic);
                (class != NONE).then_some(Resolved {
                    class,
                    name: Some(&m.name),
                    code: Some(m.code),
                })
            }
            None => Some(Resolved {
                class: &self.generic,
                name: None,
                code,
            }),
        }
    }

    /// Whether `class` is this enum's generic class.
    ///
    /// ```
    /// let catalog = cudnnlog::Catalog::builtin().unwrap();
    /// let cudnn = catalog.status_table("cudnnStatus_t").unwrap();
    /// assert!(cudnn.is_generic("cudnn.error"));
    /// assert!(!cudnn.is_generic("cudnn.bad_param"));
    /// ```
    pub fn is_generic(&self, class: &str) -> bool {
        self.generic == class
    }
}

/// `statuses.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusesFile {
    #[serde(rename = "enum")]
    pub enums: Vec<Enum>,
}

/// Checks a table's classes against the catalog's.
pub(crate) fn validate(e: &Enum, known: &dyn Fn(&str) -> bool) -> Result<(), String> {
    if !known(&e.generic) {
        return Err(format!(
            "enum {}: unknown generic class {:?}",
            e.name, e.generic
        ));
    }
    let mut names = std::collections::HashSet::new();
    for m in &e.members {
        if !names.insert(m.name.as_str()) {
            return Err(format!("enum {}: member {} listed twice", e.name, m.name));
        }
        if let Some(c) = &m.class {
            if c != NONE && !known(c) {
                return Err(format!(
                    "enum {}: member {}: unknown class {c:?}",
                    e.name, m.name
                ));
            }
        }
    }
    Ok(())
}
