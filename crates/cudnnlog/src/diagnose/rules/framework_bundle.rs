//! The framework's own bundle (`patterns/compat.toml`): a cuDNN in the log
//! that the installed PyTorch or TensorFlow build does not use.
//!
//! **Evidence:** the PyTorch wheel's bundled cuDNN or TensorFlow's tested
//! build (`compat.toml`) against the cuDNN in use
//!
//! **Effect:** another cuDNN in use → `version_mismatch` ×3; when the
//! bundled copy is in the log too → `library_conflict` ×3

use super::{is_cudnn_or_conv, seen, temper, Remedy, Rule};
use crate::catalog::ids::cause;
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[Remedy {
        cause: cause::VERSION_MISMATCH,
        write: reinstall,
    }],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
    if !is_cudnn_or_conv(&ctx.draft().class) {
        return;
    }
    let env = ctx.env;
    let compat = ctx.catalog.compat();
    let Some((framework, _)) = seen(env, "framework") else {
        return;
    };
    let Some(seen_version) = env.framework_version() else {
        return;
    };
    let (version, vline) = (seen_version.value, seen_version.line);
    let strength = |f: f64| if seen_version.inferred { temper(f) } else { f };
    let cuda = env.get("cuda");
    let expected: Vec<(String, String)> = match framework {
        "pytorch" => compat
            .torch_builds(version, cuda)
            .iter()
            .map(|b| {
                (
                    b.cudnn.clone(),
                    format!(
                        "PyTorch {} (cu{}) ships cuDNN {}",
                        b.torch,
                        b.cuda.replace('.', ""),
                        b.cudnn
                    ),
                )
            })
            .collect(),
        "tensorflow" => compat
            .tensorflow_build(version)
            .map(|b| {
                vec![(
                    b.cudnn.clone(),
                    format!(
                        "TensorFlow {} was tested with CUDA {} and cuDNN {}",
                        b.tensorflow, b.cuda, b.cudnn
                    ),
                )]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if expected.is_empty() {
        return;
    }
    // A table row with major.minor matches any patch release.
    let fits = |v: &str| {
        expected.iter().any(|(want, _)| {
            v == want || (want.matches('.').count() == 1 && v.starts_with(&format!("{want}.")))
        })
    };
    let values = env.values("cudnn");
    let bundled_present = values.iter().any(|o| fits(&o.value));
    if let Some(o) = values.iter().find(|o| !fits(&o.value)) {
        let (_, what) = &expected[0];
        let why = format!(
            "line {}: cuDNN {} is in use, but {what} (framework version {} line {vline})",
            o.first.line,
            o.value,
            if seen_version.inferred {
                "inferred from a build fingerprint on"
            } else {
                "on"
            }
        );
        if bundled_present {
            // The right copy is there too: the wrong one is found first.
            ws.add(
                cause::LIBRARY_CONFLICT,
                strength(3.0),
                Some(format!("{why}; the bundled copy is in the log as well, so another copy is loaded in front of it")),
            );
        } else {
            ws.add(cause::VERSION_MISMATCH, strength(3.0), Some(why));
        }
    }
}

/// The exact reinstall command for the framework build the log shows.
pub(super) fn reinstall(ctx: &Ctx<'_>) -> Option<String> {
    let env = ctx.env;
    let framework = env.get("framework")?;
    let version = env.get("framework_version")?;
    match framework {
        "pytorch" => {
            let builds = ctx.catalog.compat().torch_builds(version, env.get("cuda"));
            let b = builds.first()?;
            let cu = b.cuda.replace('.', "");
            let (major, minor, patch) = {
                let mut n = b.cudnn.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
                (
                    n.next().unwrap_or(0),
                    n.next().unwrap_or(0),
                    n.next().unwrap_or(0),
                )
            };
            let code = if major >= 9 {
                major * 10_000 + minor * 100 + patch
            } else {
                major * 1000 + minor * 100 + patch
            };
            Some(format!(
                "Reinstall the PyTorch build the log shows, with the cuDNN it bundles: `pip install --force-reinstall torch=={} --index-url https://download.pytorch.org/whl/cu{cu}`, and remove other cuDNN copies from `LD_LIBRARY_PATH`. Check: `python -c \"import torch; print(torch.backends.cudnn.version())\"` prints {code} (cuDNN {}).",
                b.torch, b.cudnn
            ))
        }
        "tensorflow" => {
            let b = ctx.catalog.compat().tensorflow_build(version)?;
            Some(format!(
                "Install TensorFlow {} with the CUDA {} and cuDNN {} it was tested with: `pip install \"tensorflow[and-cuda]=={}\"`. Check: `python -c \"import tensorflow as tf; print(tf.sysconfig.get_build_info())\"` shows cuda_version {} and cudnn_version {}.",
                b.tensorflow, b.cuda, b.cudnn, b.tensorflow, b.cuda, b.cudnn
            ))
        }
        _ => None,
    }
}
