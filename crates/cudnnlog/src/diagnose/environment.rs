//! The environment a log shows: framework and library versions, the GPU,
//! the driver, training settings.
//!
//! Values come from *probes* (`patterns/environment.toml`): literal anchors
//! and a regex whose named groups are environment fields, like patterns but
//! reporting facts about the run rather than failures. A log may show two
//! values for one field (the system's cuDNN and the one in the framework's
//! wheel); both are kept, with the line where each was first seen, since
//! that is itself evidence.

use crate::fields::same_value;
use crate::location::Location;
use std::collections::BTreeMap;

/// One value of one field, where it was first seen, and how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The value; of several spellings of one GPU, the longest.
    pub value: String,
    /// The earliest place it was seen (by source, then byte).
    pub first: Location,
    /// How many times it was seen.
    pub count: u64,
}

/// A framework version and where it came from
/// ([`Environment::framework_version`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionSeen<'a> {
    /// `2.1.0`.
    pub value: &'a str,
    /// The line of the version line or of the build fingerprint.
    pub line: u64,
    /// True when inferred from a build fingerprint.
    pub inferred: bool,
}

/// Everything the probes found, per field, values in order of appearance.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Environment {
    fields: BTreeMap<String, Vec<Observed>>,
}

impl Environment {
    /// Records a value seen at `at`.
    pub fn record(&mut self, field: &str, value: &str, at: &Location) {
        let values = self.fields.entry(field.to_string()).or_default();
        match values
            .iter_mut()
            .find(|o| same_value(field, &o.value, value))
        {
            Some(o) => {
                o.count += 1;
                if value.len() > o.value.len() {
                    o.value = value.to_string();
                }
                if (at.source, at.byte) < (o.first.source, o.first.byte) {
                    o.first = at.clone();
                }
            }
            None => values.push(Observed {
                value: value.to_string(),
                first: at.clone(),
                count: 1,
            }),
        }
    }

    /// Numbers every value's source `by` later (a fork joining a sink
    /// that read sources before it).
    pub(crate) fn shift_sources(&mut self, by: usize) {
        for values in self.fields.values_mut() {
            for o in values {
                o.first.source += by;
            }
        }
    }

    /// Takes in the values another environment recorded.
    pub fn join(&mut self, other: Environment) {
        for (field, values) in other.fields {
            for o in values {
                let mine = self.fields.entry(field.clone()).or_default();
                match mine
                    .iter_mut()
                    .find(|m| same_value(&field, &m.value, &o.value))
                {
                    Some(m) => {
                        m.count += o.count;
                        if o.value.len() > m.value.len() {
                            m.value = o.value.clone();
                        }
                        if (o.first.source, o.first.byte) < (m.first.source, m.first.byte) {
                            m.first = o.first;
                        }
                    }
                    None => mine.push(o),
                }
            }
        }
    }

    /// The values seen for `field`, in order of first appearance.
    pub fn values(&self, field: &str) -> &[Observed] {
        self.fields.get(field).map_or(&[][..], |v| &v[..])
    }

    /// The single value of `field`, or its first one when there are several.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.values(field).first().map(|o| o.value.as_str())
    }

    /// The framework version and the line it was seen on: the log's own
    /// version line, else the single release a build fingerprint resolves
    /// to (`framework_build`; then `inferred` is true and rules count it
    /// for less).
    pub fn framework_version(&self) -> Option<VersionSeen<'_>> {
        if let Some(o) = self.values("framework_version").first() {
            return Some(VersionSeen {
                value: &o.value,
                line: o.first.line,
                inferred: false,
            });
        }
        self.values("framework_build")
            .iter()
            .find(|o| crate::fields::is_version(&o.value))
            .map(|o| VersionSeen {
                value: &o.value,
                line: o.first.line,
                inferred: true,
            })
    }

    /// The values seen in one source only.
    pub fn of_source(&self, source: usize) -> Environment {
        let mut env = Environment::default();
        for (field, values) in &self.fields {
            for o in values.iter().filter(|o| o.first.source == source) {
                env.fields.entry(field.clone()).or_default().push(o.clone());
            }
        }
        env
    }

    /// True when no field has a value.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Puts each field's values in order of first appearance.
    pub(crate) fn sort(&mut self) {
        for values in self.fields.values_mut() {
            values.sort_by_key(|o| (o.first.source, o.first.byte));
        }
    }

    /// The JSON form: a string per field, or a list when the log shows
    /// several values.
    pub fn to_json(&self) -> BTreeMap<String, serde_json::Value> {
        self.fields
            .iter()
            .map(|(k, v)| {
                let value = match v.as_slice() {
                    [one] => serde_json::Value::String(one.value.clone()),
                    many => many.iter().map(|o| o.value.clone()).collect(),
                };
                (k.clone(), value)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::normalize;

    #[test]
    fn cudnn_spellings() {
        for (raw, want) in [
            ("91900", "9.19.0"),
            ("90100", "9.1.0"),
            ("8600", "8.6.0"),
            ("8902", "8.9.2"),
            ("7605", "7.6.5"),
            ("(9, 19, 0)", "9.19.0"),
            ("8.9.2", "8.9.2"),
            ("9.19.0.56", "9.19.0"),
            ("8.9", "8.9"),
        ] {
            assert_eq!(normalize("cudnn", raw).as_deref(), Some(want), "{raw}");
        }
        assert_eq!(normalize("cudnn", "0"), None);
        assert_eq!(normalize("cudnn", "None"), None);
    }

    #[test]
    fn cuda_and_capability_spellings() {
        assert_eq!(normalize("cuda", "cu121").as_deref(), Some("12.1"));
        assert_eq!(normalize("cuda", "13.0.88").as_deref(), Some("13.0"));
        assert_eq!(normalize("cuda", "V12.4.131").as_deref(), Some("12.4"));
        assert_eq!(
            normalize("compute_capability", "sm_90").as_deref(),
            Some("9.0")
        );
        assert_eq!(
            normalize("compute_capability", "sm_120").as_deref(),
            Some("12.0")
        );
        assert_eq!(
            normalize("compute_capability", "9.0a").as_deref(),
            Some("9.0")
        );
        assert_eq!(
            normalize("compute_capability", "(8, 6)").as_deref(),
            Some("8.6")
        );
        assert_eq!(
            normalize("cudnn_benchmark", "True").as_deref(),
            Some("true")
        );
        assert_eq!(normalize("cudnn_benchmark", "maybe"), None);
    }

    #[test]
    fn two_values_of_one_field_are_both_kept() {
        let at = |line| Location {
            source: 0,
            line,
            byte: line * 10,
            timestamp: None,
            rank: None,
        };
        let mut env = Environment::default();
        env.record("cudnn", "9.14.0", &at(12));
        env.record("cudnn", "9.19.0", &at(40));
        env.record("cudnn", "9.14.0", &at(50));
        env.record("gpu", "NVIDIA H200", &at(3));
        let json = env.to_json();
        assert_eq!(json["cudnn"], serde_json::json!(["9.14.0", "9.19.0"]));
        assert_eq!(json["gpu"], serde_json::json!("NVIDIA H200"));
        assert_eq!(env.values("cudnn")[0].count, 2);
    }
}

#[cfg(test)]
mod examples;
