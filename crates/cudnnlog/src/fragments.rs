//! Named regex fragments shared by patterns (`patterns/fragments.toml`).
//!
//! Sub-patterns that many messages repeat — a size as allocators print it
//! (`1.53 GiB`, `20.00 MiB`, `17179869184 bytes`), a version, a device
//! index — are written once and referenced by name, `{{size}}`, in a
//! pattern's `regex` and `facts`. A reference expands to a non-capturing
//! group, so a fragment can be quantified like any atom.
//!
//! ```
//! use cudnnlog::fragments::Fragments;
//! let mut f = Fragments::default();
//! f.insert("size", r"\d+(?:\.\d+)? ?[KMGT]i?B");
//! assert_eq!(f.expand("of (?P<free_bytes>{{size}}) free").unwrap(), r"of (?P<free_bytes>(?:\d+(?:\.\d+)? ?[KMGT]i?B)) free");
//! assert!(f.expand("{{nope}}").is_err());
//! ```

use std::collections::BTreeMap;

/// Fragments by name.
#[derive(Clone, Debug, Default)]
pub struct Fragments(BTreeMap<String, String>);

impl Fragments {
    /// Adds (or replaces) a fragment.
    ///
    /// ```
    /// use cudnnlog::fragments::Fragments;
    /// let mut f = Fragments::default();
    /// f.insert("device", r"\d+");
    /// f.insert("device", r"[0-9]+");
    /// assert_eq!(f.expand("GPU {{device}}").unwrap(), "GPU (?:[0-9]+)");
    /// ```
    pub fn insert(&mut self, name: &str, regex: &str) {
        self.0.insert(name.to_string(), regex.to_string());
    }

    /// The names, in order.
    ///
    /// ```
    /// use cudnnlog::fragments::Fragments;
    /// let mut f = Fragments::default();
    /// f.insert("version", r"\d+\.\d+");
    /// f.insert("size", r"\d+ ?[KMG]iB");
    /// assert_eq!(f.names().collect::<Vec<_>>(), ["size", "version"]);
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// `regex` with every `{{name}}` replaced by `(?:fragment)`.
    ///
    /// # Errors
    ///
    /// The name of an unknown fragment.
    ///
    /// ```
    /// use cudnnlog::fragments::Fragments;
    /// let mut f = Fragments::default();
    /// f.insert("size", r"\d+(?:\.\d+)? ?[KMGT]i?B");
    /// let re = regex::Regex::new(&f.expand("Tried to allocate (?P<requested_bytes>{{size}})").unwrap()).unwrap();
    /// let caps = re.captures("Tried to allocate 2.00 GiB. GPU 0").unwrap();
    /// assert_eq!(&caps["requested_bytes"], "2.00 GiB");
    /// assert_eq!(f.expand("{{device}}").unwrap_err(), "unknown fragment {{device}}");
    /// ```
    pub fn expand(&self, regex: &str) -> Result<String, String> {
        let mut out = String::with_capacity(regex.len());
        let mut rest = regex;
        while let Some(at) = rest.find("{{") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(end) = after.find("}}") else {
                out.push_str(&rest[at..]);
                rest = "";
                break;
            };
            let name = &after[..end];
            let Some(frag) = self.0.get(name) else {
                return Err(format!("unknown fragment {{{{{name}}}}}"));
            };
            out.push_str("(?:");
            out.push_str(frag);
            out.push(')');
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}
