//! Build fingerprints: what a framework's build leaves in a log, and the
//! framework release it points to.
//!
//! A log with no version line often still shows which build raised the
//! error: the C++ source path of the raising code (`torch/lib/THC/…` is
//! PyTorch before 1.0, `external/local_xla/…` TensorFlow 2.15 or later), a
//! conda build stamp (`conda-bld/pytorch_1603729062494`, a build time in
//! Unix milliseconds) or a container tag (`nvcr.io/nvidia/pytorch:23.10-py3`).
//! `patterns/fingerprints.toml` lists them; each becomes an environment
//! probe that sets `framework` and `framework_build`, the release or range
//! of releases the fingerprint allows. A dated fingerprint resolves through
//! the file's release table to the newest release out by the build date.
//!
//! Rules that read the framework version use `framework_build` only when
//! the log has no explicit version, and with half the strength.

use serde::Deserialize;

/// Days a conda build may precede its release's public date.
const BUILD_LEAD_DAYS: i64 = 7;

/// How a fingerprint's text maps to framework releases.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Build {
    /// The text exists in releases `since` (inclusive) to `until`
    /// (exclusive); either bound may be open.
    Range {
        /// The first release with the text (`1.0.0`); `None`: no lower bound.
        since: Option<String>,
        /// The first release without it (`2.15.0`); `None`: no upper bound.
        until: Option<String>,
    },
    /// The text names the version itself (a `version` capture).
    Explicit,
    /// The text holds a build date: Unix milliseconds (`built_ms`) or a
    /// container's `YY.MM` (`built_yymm`).
    Dated,
}

/// One row of the dated release table.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// `pytorch`, `tensorflow` or `jax`.
    pub framework: String,
    /// Three-part version, `2.1.0`.
    pub version: String,
    /// Public release date, `YYYY-MM-DD`.
    pub date: String,
}

/// The frameworks a fingerprint may name.
pub const FRAMEWORKS: &[&str] = &["pytorch", "tensorflow", "jax"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FingerprintsFile {
    #[serde(default)]
    pub fingerprint: Vec<FingerprintEntry>,
    #[serde(default)]
    pub release: Vec<Release>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FingerprintEntry {
    pub id: String,
    pub what: String,
    pub source: String,
    pub anchors: Vec<String>,
    pub regex: String,
    pub framework: String,
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub until: Option<String>,
    pub examples: Vec<FingerprintExample>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FingerprintExample {
    pub log: String,
    /// `FRAMEWORK VALUE`: `pytorch <1.0.0`, `pytorch 1.7.0`.
    pub expect: String,
}

impl Build {
    /// The `framework_build` value a match yields: a version, or a range
    /// such as `>=1.0.0,<1.11.0`. `None` when a dated stamp predates every
    /// release in the table or the capture is not a date.
    ///
    /// ```
    /// use cudnnlog::catalog::{Build, Release};
    /// let releases = [Release { framework: "pytorch".into(), version: "1.7.0".into(), date: "2020-10-27".into() }];
    /// let re = regex::Regex::new(r"conda-bld/pytorch_(?P<built_ms>\d{13})").unwrap();
    /// let caps = re.captures("/opt/conda/conda-bld/pytorch_1603729062494/work/c10/cuda").unwrap();
    /// assert_eq!(Build::Dated.value(&releases, "pytorch", &caps).as_deref(), Some("1.7.0"));
    /// let old = Build::Range { since: None, until: Some("1.0.0".into()) };
    /// assert_eq!(old.value(&releases, "pytorch", &caps).as_deref(), Some("<1.0.0"));
    /// ```
    pub fn value(
        &self,
        releases: &[Release],
        framework: &str,
        caps: &regex::Captures<'_>,
    ) -> Option<String> {
        match self {
            Build::Range { since, until } => Some(match (since, until) {
                (Some(a), Some(b)) => format!(">={a},<{b}"),
                (Some(a), None) => format!(">={a}"),
                (None, Some(b)) => format!("<{b}"),
                (None, None) => return None,
            }),
            Build::Explicit => {
                let v = caps.name("version")?.as_str();
                crate::fields::normalize("framework_version", v)
            }
            Build::Dated => {
                // A conda build is made days before its release is out;
                // a container's month is after its framework's release.
                let (date, lead) = if let Some(ms) = caps.name("built_ms") {
                    (date_of_unix_ms(ms.as_str().parse().ok()?), BUILD_LEAD_DAYS)
                } else {
                    let yymm = caps.name("built_yymm")?.as_str();
                    let (yy, mm) = yymm.split_once('.')?;
                    let (yy, mm): (u32, u32) = (yy.parse().ok()?, mm.parse().ok()?);
                    if !(1..=12).contains(&mm) {
                        return None;
                    }
                    (format!("20{yy:02}-{mm:02}-15"), 0)
                };
                newest_release_by(releases, framework, &date, lead)
            }
        }
    }
}

/// The civil date (UTC) of a Unix time in milliseconds, `YYYY-MM-DD`.
pub fn date_of_unix_ms(ms: u64) -> String {
    let (y, m, d) = civil(days(ms));
    format!("{y:04}-{m:02}-{d:02}")
}

fn days(ms: u64) -> i64 {
    (ms / 86_400_000) as i64
}

/// Days since 1970-01-01 to (year, month, day): Howard Hinnant's
/// `civil_from_days`.
fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01: `days_from_civil`.
fn days_from(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses `YYYY-MM-DD` into days since 1970-01-01.
pub(crate) fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.split('-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.parse().ok()?;
    if it.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) || s.len() != 10 {
        return None;
    }
    Some(days_from(y, m, d))
}

/// The newest release of `framework` published no later than a week after
/// `date` (builds are made a few days before the release is announced).
#[cfg(test)]
pub fn newest_release(releases: &[Release], framework: &str, date: &str) -> Option<String> {
    newest_release_by(releases, framework, date, BUILD_LEAD_DAYS)
}

/// The newest release of `framework` out no later than `lead` days after
/// `date`.
fn newest_release_by(
    releases: &[Release],
    framework: &str,
    date: &str,
    lead: i64,
) -> Option<String> {
    let built = parse_date(date)?;
    releases
        .iter()
        .filter(|r| r.framework == framework)
        .filter_map(|r| Some((parse_date(&r.date)?, r)))
        .filter(|(d, _)| *d <= built + lead)
        .max_by(|(a, ra), (b, rb)| {
            a.cmp(b)
                .then_with(|| crate::fields::cmp_versions(&ra.version, &rb.version))
        })
        .map(|(_, r)| r.version.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::is_version;

    #[test]
    fn dates_round_trip() {
        for s in ["1970-01-01", "2000-02-29", "2018-12-07", "2026-12-01"] {
            let d = parse_date(s).unwrap();
            assert_eq!(date_of_unix_ms(d as u64 * 86_400_000), s);
        }
        assert_eq!(date_of_unix_ms(1_544_202_130_060), "2018-12-07");
        assert_eq!(parse_date("2020-13-01"), None);
        assert_eq!(parse_date("2020-1-01"), None);
    }

    #[test]
    fn a_stamp_before_every_release_resolves_to_nothing() {
        let r = [Release {
            framework: "jax".into(),
            version: "0.2.0".into(),
            date: "2020-09-23".into(),
        }];
        assert_eq!(newest_release(&r, "jax", "2019-01-01"), None);
        assert_eq!(newest_release(&r, "pytorch", "2021-01-01"), None);
        assert_eq!(
            newest_release(&r, "jax", "2020-09-20").as_deref(),
            Some("0.2.0")
        );
    }

    #[test]
    fn versions_are_three_numbers() {
        assert!(is_version("2.1.0"));
        assert!(!is_version("2.1"));
        assert!(!is_version("2.1.0rc1"));
    }
}

#[cfg(test)]
mod examples;
