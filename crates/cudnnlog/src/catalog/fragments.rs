//! Named regex fragments shared by patterns (`patterns/fragments.toml`).
//!
//! Sub-patterns that many messages repeat — a size as allocators print it
//! (`1.53 GiB`, `20.00 MiB`, `17179869184 bytes`), a version, a device
//! index — are written once and referenced by name, `{{size}}`, in a
//! pattern's `regex` and `facts`. A reference expands to a non-capturing
//! group, so a fragment can be quantified like any atom.

use std::collections::BTreeMap;

/// Fragments by name.
#[derive(Clone, Debug, Default)]
pub struct Fragments(BTreeMap<String, String>);

impl Fragments {
    /// Adds (or replaces) a fragment.
    pub fn insert(&mut self, name: &str, regex: &str) {
        self.0.insert(name.to_string(), regex.to_string());
    }

    /// The names, in order.
    #[cfg(test)]
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// `regex` with every `{{name}}` replaced by `(?:fragment)`.
    ///
    /// # Errors
    ///
    /// The name of an unknown fragment.
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

#[cfg(test)]
mod examples;
