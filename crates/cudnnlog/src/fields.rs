//! Environment fields and versions: the field names a probe may set, the
//! canonical spelling of a value, and how versions compare. Data
//! (`catalog`), scanning and diagnosis all read values through these.

/// The fields a probe may set, in the order the CLI shows them.
pub const FIELDS: &[&str] = &[
    "framework",
    "framework_version",
    "framework_build",
    "cuda",
    "cudnn",
    "nccl",
    "driver",
    "gpu",
    "compute_capability",
    "amp",
    "cudnn_benchmark",
    "deterministic",
    "memory_growth",
    "container",
];

/// Turns a raw capture into the field's canonical spelling, or `None` when
/// the text is not a value of that field.
///
/// * `cudnn`: `91900` → `9.19.0` (cuDNN 9 encodes major·10000 + minor·100 +
///   patch), `8600` → `8.6.0`, `7605` → `7.6.5` (cuDNN 7/8: major·1000 +
///   minor·100 + patch), `(9, 19, 0)` → `9.19.0`, `8.9.2.26` → `8.9.2`;
/// * `cuda`: `cu130` → `13.0`, `12.4.131` → `12.4`, `V13.0.88` → `13.0`;
/// * `compute_capability`: `sm_86` → `8.6`, `9.0a` → `9.0`, `(8, 6)` → `8.6`;
/// * `framework`: lower case (`PyTorch` → `pytorch`);
/// * booleans (`cudnn_benchmark`, `deterministic`, `memory_growth`):
///   `True`/`true`/`1` → `true`, `False`/`false`/`0` → `false`;
/// * anything else: trimmed.
pub fn normalize(field: &str, raw: &str) -> Option<String> {
    let raw = raw
        .trim()
        .trim_matches(|c| c == '\'' || c == '"' || c == ',');
    if raw.is_empty() {
        return None;
    }
    let numbers = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    Some(match field {
        "cudnn" => {
            let n = numbers(raw);
            if raw.bytes().all(|c| c.is_ascii_digit()) {
                let v = n.first().copied()?;
                let (major, rest) = if v >= 10_000 {
                    (v / 10_000, v % 10_000)
                } else {
                    (v / 1000, v % 1000)
                };
                if major == 0 {
                    return None;
                }
                format!("{major}.{}.{}", rest / 100, rest % 100)
            } else {
                match n.as_slice() {
                    [a, b, c, ..] => format!("{a}.{b}.{c}"),
                    [a, b] => format!("{a}.{b}"),
                    _ => return None,
                }
            }
        }
        "cuda" => {
            // `130` from a `+cu130` wheel suffix, `cu121`.
            let digits = raw.strip_prefix("cu").unwrap_or(raw);
            if (2..=3).contains(&digits.len()) && digits.bytes().all(|c| c.is_ascii_digit()) {
                let (major, minor) = digits.split_at(digits.len() - 1);
                format!("{major}.{minor}")
            } else if let Some(v) = raw.strip_prefix("cu").filter(|v| v.len() >= 3) {
                let (major, minor) = v.split_at(v.len() - 1);
                format!("{major}.{minor}")
            } else {
                match numbers(raw).as_slice() {
                    [a, b, ..] => format!("{a}.{b}"),
                    _ => return None,
                }
            }
        }
        "compute_capability" => {
            if let Some(v) = raw
                .strip_prefix("sm_")
                .or_else(|| raw.strip_prefix("compute_"))
            {
                let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
                if digits.len() < 2 {
                    return None;
                }
                let (major, minor) = digits.split_at(digits.len() - 1);
                format!("{major}.{minor}")
            } else {
                match numbers(raw).as_slice() {
                    [a, b, ..] => format!("{a}.{b}"),
                    _ => return None,
                }
            }
        }
        "framework" => match raw.to_ascii_lowercase().as_str() {
            "torch" | "pytorch" => "pytorch".into(),
            "tensorflow" | "tensorflow-gpu" | "tf" => "tensorflow".into(),
            "jax" | "jaxlib" => "jax".into(),
            other => other.to_string(),
        },
        // A GeForce model in prose (`RTX 3090`, `GTX1080 Ti`) gets nvidia-smi's
        // spelling, `GeForce RTX 3090`, which the architecture table knows.
        "gpu" if raw.starts_with("RTX") || raw.starts_with("GTX") => {
            let (kind, rest) = raw.split_at(3);
            let rest = rest.trim_start();
            let (model, ti) = match rest.find(|c: char| !c.is_ascii_digit()) {
                Some(i) => (&rest[..i], rest[i..].trim()),
                None => (rest, ""),
            };
            if ti.is_empty() {
                format!("GeForce {kind} {model}")
            } else {
                format!("GeForce {kind} {model} {ti}")
            }
        }
        // `2.11.0+cu130` is PyTorch 2.11.0; its CUDA variant is read as `cuda`.
        "framework_version" => raw.split('+').next().unwrap_or(raw).to_string(),
        "cudnn_benchmark" | "deterministic" | "memory_growth" => {
            match raw.to_ascii_lowercase().as_str() {
                "true" | "1" | "on" | "yes" => "true".into(),
                "false" | "0" | "off" | "no" => "false".into(),
                _ => return None,
            }
        }
        _ => raw.to_string(),
    })
}

/// Whether two values of `field` name the same thing: equal, or for a GPU
/// one spelling inside the other (`GeForce RTX 3090` in prose, `NVIDIA
/// GeForce RTX 3090` in nvidia-smi); the longer spelling is kept.
pub(crate) fn same_value(field: &str, a: &str, b: &str) -> bool {
    a == b || (field == "gpu" && (a.ends_with(&format!(" {b}")) || b.ends_with(&format!(" {a}"))))
}

/// True for a three-part version, `2.1.0`.
pub(crate) fn is_version(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
}

/// Compares dotted versions numerically (`8.10` after `8.9`); missing
/// components count as zero, text after the numbers is ignored
/// (`2.4.0+cu121` is `2.4.0`).
pub fn cmp_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |s: &str| -> Vec<u64> {
        s.split(['+', ' ', '-'])
            .next()
            .unwrap_or("")
            .split('.')
            .map_while(|p| p.parse().ok())
            .collect()
    };
    let (a, b) = (parts(a), parts(b));
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return x.cmp(&y);
        }
    }
    std::cmp::Ordering::Equal
}

/// `major.minor` of a version.
pub(crate) fn major_minor(v: &str) -> String {
    v.split(['+', ' '])
        .next()
        .unwrap_or(v)
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".")
}
