//! Evidence rules: each reads one kind of evidence and scales causes.
//!
//! A rule only [`boost`](Weights::boost)s causes the pattern lists, unless
//! its evidence is strong enough to bring a cause in on its own
//! ([`add`](Weights::add)). Factors are multiplicative: 2–6 for supporting
//! evidence, below 1 for evidence against. Every supporting adjustment says
//! what it saw and where (`line N`). The rules are documented, with their
//! factors, in `docs/diagnosis.md`.

use super::{Ctx, Draft, Weights};
use crate::catalog::ids::{cause, class};
use crate::catalog::knowledge::{evidence, Read};
use crate::diagnose::environment::Environment;
use crate::fields::cmp_versions;
use std::cmp::Ordering;

/// The factor for evidence that settles the question: a version below a
/// documented minimum (compatibility data), not a hint.
const DEFINITIVE: f64 = 20.0;
/// Lines between two occurrences at the same step for them to count as two
/// incidents (a restarted job failing again), not lines of one.
const RESTART_GAP: u64 = 200;
/// The factor for a culprit rank that fell behind its peers.
const LAGGARD: f64 = 1.5;

/// Runs every rule.
pub(crate) fn apply(ctx: &Ctx<'_>, ws: &mut Weights) {
    super::memory::memory_numbers(ctx.draft(), ws);
    two_copies(ctx, ws);
    framework_bundle(ctx, ws);
    mismatch_message(ctx.draft(), ws);
    driver(ctx, ws);
    architecture(ctx, ws);
    settings(ctx, ws);
    timing(ctx, ws);
    library_error_without_bug_evidence(ctx, ws);
    co_occurring(ctx, ws);
    knowledge(ctx, ws);
    culprit(ctx, ws);
}

/// A value of `field` and the line it was first seen on.
fn seen<'e>(env: &'e Environment, field: &str) -> Option<(&'e str, u64)> {
    env.values(field)
        .first()
        .map(|o| (o.value.as_str(), o.first.line))
}

fn is_cudnn_or_conv(class: &str) -> bool {
    class.starts_with("cudnn.")
}

/// Two different cuDNN versions in one log: two copies of the library on
/// the machine, and the process may load either. Versions first seen on one
/// line are one message naming both (compiled with X, loaded Y): that is
/// the mismatch rule's evidence, not two sightings of two copies.
fn two_copies(ctx: &Ctx<'_>, ws: &mut Weights) {
    let class = &ctx.draft().class;
    if !(is_cudnn_or_conv(class)
        || class == class::PROC_SEGFAULT
        || class == class::CUDA_NO_KERNEL_IMAGE)
    {
        return;
    }
    let copies = ctx.env.values("cudnn");
    if copies.len() < 2 || copies.iter().all(|o| o.first.line == copies[0].first.line) {
        return;
    }
    let listed: Vec<String> = copies
        .iter()
        .map(|o| format!("{} (line {})", o.value, o.first.line))
        .collect();
    let why = format!(
        "the log shows {} cuDNN versions: {}",
        copies.len(),
        listed.join(", ")
    );
    ws.add(cause::LIBRARY_CONFLICT, 4.0, Some(why.clone()));
    ws.boost(cause::VERSION_MISMATCH, 1.5, None);
}

/// The framework's own bundle (`patterns/compat.toml`): a cuDNN in the log
/// that the installed PyTorch or TensorFlow build does not use.
fn framework_bundle(ctx: &Ctx<'_>, ws: &mut Weights) {
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

/// Versions inside the message itself: built with one, loaded another.
fn mismatch_message(d: &Draft, ws: &mut Weights) {
    let version = |name| {
        d.text(name)
            .map(|v| crate::fields::normalize("cudnn", v).unwrap_or_else(|| v.to_string()))
    };
    if let (Some(loaded), Some(compiled)) = (version("loaded_version"), version("compiled_version"))
    {
        if loaded != compiled {
            ws.add(
                cause::VERSION_MISMATCH,
                3.0,
                Some(format!(
                    "line {}: built with cuDNN {compiled}, loaded {loaded}",
                    d.first.line
                )),
            );
        }
    }
}

/// The driver against the CUDA release the program uses.
fn driver(ctx: &Ctx<'_>, ws: &mut Weights) {
    let (Some((drv, dline)), Some((cuda, cline))) =
        (seen(ctx.env, "driver"), seen(ctx.env, "cuda"))
    else {
        return;
    };
    let Some(req) = ctx.catalog.compat().driver_for(cuda) else {
        return;
    };
    if cmp_versions(drv, &req.min_driver) == Ordering::Less {
        ws.add(
            cause::DRIVER_TOO_OLD,
            DEFINITIVE,
            Some(format!(
                "line {dline}: driver {drv} is older than the {} that CUDA {cuda} (line {cline}) needs",
                req.min_driver
            )),
        );
    } else {
        ws.boost(cause::DRIVER_TOO_OLD, 0.3, None);
    }
}

/// The GPU's architecture against the CUDA and cuDNN in use.
fn architecture(ctx: &Ctx<'_>, ws: &mut Weights) {
    let compat = ctx.catalog.compat();
    let env = ctx.env;
    let arch = seen(env, "compute_capability")
        .and_then(|(cc, _)| compat.arch_of_capability(cc))
        .or_else(|| seen(env, "gpu").and_then(|(g, _)| compat.arch_of_gpu(g)));
    let Some(arch) = arch else {
        return;
    };
    let gpu = seen(env, "gpu").map_or(arch.arch.clone(), |(g, _)| g.to_string());
    let mut unsupported = false;
    if let Some((cudnn, line)) = seen(env, "cudnn") {
        if cmp_versions(cudnn, &arch.min_cudnn) == Ordering::Less {
            unsupported = true;
            ws.add(
                cause::ARCH_UNSUPPORTED,
                DEFINITIVE,
                Some(format!(
                    "line {line}: cuDNN {cudnn} predates {} support for {gpu} ({}; first supported by cuDNN {})",
                    arch.arch, arch.compute_capability.join("/"), arch.min_cudnn
                )),
            );
        } else if arch.arch == "ampere" && cmp_versions(cudnn, "8.4") == Ordering::Less {
            // The seed documents' advice: Ampere with cuDNN before 8.4 often
            // fails to build execution plans for some convolutions.
            ws.add(
                cause::ARCH_UNSUPPORTED,
                3.0,
                Some(format!(
                    "line {line}: cuDNN {cudnn} on an Ampere GPU ({gpu}); releases before 8.4 handle some Ampere convolutions poorly"
                )),
            );
            ws.boost(cause::VERSION_MISMATCH, 1.5, None);
        }
    }
    if let Some((cuda, line)) = seen(env, "cuda") {
        if cmp_versions(cuda, &arch.min_cuda) == Ordering::Less {
            unsupported = true;
            ws.add(
                cause::ARCH_UNSUPPORTED,
                DEFINITIVE,
                Some(format!(
                    "line {line}: CUDA {cuda} predates {} support for {gpu} (first supported by CUDA {})",
                    arch.arch, arch.min_cuda
                )),
            );
        }
    }
    if !unsupported {
        ws.boost(cause::ARCH_UNSUPPORTED, 0.3, None);
    }
}

/// Training settings the log echoes: deterministic mode, cuDNN benchmark
/// mode, mixed precision, TensorFlow's memory growth.
fn settings(ctx: &Ctx<'_>, ws: &mut Weights) {
    let env = ctx.env;
    let d = ctx.draft();
    if let Some((v, line)) = seen(env, "deterministic") {
        if v == "true" {
            ws.boost(
                cause::DETERMINISTIC_MODE,
                4.0,
                Some(format!(
                    "line {line}: deterministic algorithms are on, which narrows cuDNN's choice"
                )),
            );
        } else {
            ws.boost(cause::DETERMINISTIC_MODE, 0.2, None);
        }
    }
    if let Some((v, line)) = seen(env, "cudnn_benchmark") {
        if v == "true" {
            let tight = d
                .int("free_bytes")
                .zip(d.int("requested_bytes"))
                .is_some_and(|(f, r)| f < r)
                || d.int("allowed_bytes").is_some();
            ws.boost(
                cause::BENCHMARK_AUTOTUNE,
                if tight { 3.0 } else { 2.0 },
                Some(format!(
                    "line {line}: cudnn.benchmark is on: cuDNN tries every algorithm, with extra workspace{}",
                    if tight { ", and memory was tight" } else { "" }
                )),
            );
        } else {
            ws.boost(cause::BENCHMARK_AUTOTUNE, 0.3, None);
        }
    }
    if let Some((v, line)) = seen(env, "amp") {
        if v == "true" {
            let odd_conv = d.message.contains("groups=") || d.message.contains("dilation=");
            ws.boost(
                cause::HALF_PRECISION,
                if odd_conv { 3.0 } else { 2.0 },
                Some(format!("line {line}: the run trains in mixed precision")),
            );
            if odd_conv {
                ws.boost(
                    cause::UNSUPPORTED_CONFIG,
                    2.0,
                    Some(format!(
                        "line {}: a grouped or dilated convolution in half precision",
                        d.first.line
                    )),
                );
            }
        }
    }
    let tf = env
        .values("framework")
        .iter()
        .any(|o| o.value == "tensorflow");
    if tf
        && matches!(
            d.class.as_str(),
            class::CUDA_OOM
                | class::CUDNN_NOT_INITIALIZED
                | class::CUDNN_CONV_ALGO_FAILED
                | class::CUDNN_INTERNAL_ERROR
                | class::CUDNN_ALLOC_FAILED
        )
    {
        match seen(env, "memory_growth") {
            Some(("true", _)) => ws.boost(cause::TF_PREALLOC, 0.2, None),
            _ => ws.add(
                cause::TF_PREALLOC,
                2.0,
                Some("TensorFlow runs without memory growth in this log, so it reserves most of the GPU at start-up".into()),
            ),
        }
    }
}

/// When the failure happened: at the very first step (set-up: versions and
/// libraries), always at the same step (an input), or mid-run.
fn timing(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    if !d.is_error() {
        return;
    }
    // "Before any training step": the last marker says step or epoch 0, or
    // there is none yet although the framework has started (its version is
    // in the log) — a bare program's log says nothing about training.
    let early = match (d.first_progress().step, d.first_progress().epoch) {
        (None, None) => ctx
            .env
            .values("framework_version")
            .first()
            .is_some_and(|o| o.first.byte <= d.first.byte),
        (s, e) => s.unwrap_or(0) == 0 && e.unwrap_or(0) == 0,
    };
    let memory_in_use = d.int("allocated_bytes").or(d.int("process_bytes"));
    if early && memory_in_use.is_none_or(|b| b < 2 << 30) && is_cudnn_or_conv(&d.class) {
        let why = format!(
            "line {}: it failed at the start, before any training step, with little memory in use",
            d.first.line
        );
        ws.boost(cause::VERSION_MISMATCH, 2.0, Some(why));
        ws.boost(cause::LIBRARY_CONFLICT, 2.0, None);
        ws.boost(cause::LIBRARY_MISSING, 2.0, None);
        ws.boost(cause::ARCH_UNSUPPORTED, 2.0, None);
    }
    // The same step twice, far apart: the job was restarted (resumed) and
    // failed at the same place again. Lines of one incident are close.
    if d.count > 1
        && d.first_progress().step.is_some()
        && d.first_progress().step == d.last_progress().step
        && d.last.line.saturating_sub(d.first.line) > RESTART_GAP
    {
        ws.boost(
            cause::INPUT_SHAPE,
            2.5,
            Some(format!(
                "{} occurrences, all at step {}",
                d.count,
                d.first_progress().step.unwrap_or_default()
            )),
        );
    }
    // Mid-run, after steps that worked: the set-up was sound (the same
    // libraries ran the earlier steps), so what changed is the data or the
    // memory.
    let progressed = d
        .first_progress()
        .step
        .filter(|&s| s > 0)
        .map(|s| ("step", s));
    let progressed = progressed.or(d
        .first_progress()
        .epoch
        .filter(|&e| e > 0)
        .map(|e| ("epoch", e)));
    if let Some((unit, n)) = progressed {
        let gpu = matches!(d.family(), "cuda" | "cudnn" | "cublas");
        if gpu {
            let why = format!(
                "line {}: it failed mid-run ({unit} {n}), after earlier {unit}s worked",
                d.first.line
            );
            ws.boost(cause::MEMORY_PRESSURE, 1.3, Some(why.clone()));
            ws.boost(cause::FRAGMENTATION, 1.3, None);
            ws.boost(cause::INPUT_SHAPE, 1.3, Some(why.clone()));
            ws.boost(cause::FRAMEWORK_BUG, 1.5, Some(why));
            ws.boost(cause::HARDWARE_FAULT, 1.2, None);
            for setup in [
                cause::VERSION_MISMATCH,
                cause::LIBRARY_CONFLICT,
                cause::LIBRARY_MISSING,
                cause::DRIVER_TOO_OLD,
                cause::ARCH_UNSUPPORTED,
            ] {
                ws.boost(setup, 0.5, None);
            }
        }
    }
}

/// A library status (cuDNN, cuBLAS) with none of a bug's usual evidence
/// (a device-side assert, an illegal address, an index error nearby): the
/// user's code is a less likely cause than the priors say.
fn library_error_without_bug_evidence(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    if !matches!(d.family(), "cudnn" | "cublas") || !d.is_error() {
        return;
    }
    let bug_sign = ctx.drafts.iter().any(|o| {
        o.first.source == d.first.source
            && matches!(
                o.class.as_str(),
                class::CUDA_DEVICE_ASSERT | class::CUDA_ILLEGAL_ADDRESS | class::PYTHON_EXCEPTION
            )
    });
    if !bug_sign {
        ws.boost(cause::CODE_BUG, 0.6, None);
    }
}

/// Other findings of the same source: an out-of-memory error near a cuDNN
/// failure points at memory.
fn co_occurring(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    if !is_cudnn_or_conv(&d.class) && d.class != class::CUBLAS_ERROR {
        return;
    }
    let near = ctx.drafts.iter().find(|o| {
        matches!(o.class.as_str(), class::CUDA_OOM | class::HOST_OOM)
            && o.first.source == d.first.source
            && o.first.line.abs_diff(d.first.line) <= 2000
    });
    if let Some(o) = near {
        ws.add(
            cause::MEMORY_PRESSURE,
            3.0,
            Some(format!(
                "line {}: an out-of-memory error ({}) near this failure",
                o.first.line, o.class
            )),
        );
        ws.boost(cause::VERSION_MISMATCH, 0.6, None);
    }
}

/// The catalog's knowledge kept as data (`diagnosis.toml`): known
/// framework issues, what a path, a module name or a message's wording
/// tells.
fn knowledge(ctx: &Ctx<'_>, ws: &mut Weights) {
    let d = ctx.draft();
    for rule in ctx
        .catalog
        .knowledge()
        .iter()
        .filter(|r| r.applies_to(&d.class))
    {
        if let Some(fw) = &rule.framework {
            if !ctx.env.values("framework").iter().any(|o| &o.value == fw) {
                continue;
            }
        }
        let mut inferred = false;
        let read: Vec<(String, u64)> = match &rule.read {
            Read::Fact(f) => d
                .facts
                .get(f)
                .map(|v| (v.to_string(), d.first.line))
                .into_iter()
                .collect(),
            Read::Message => vec![(d.message.clone(), d.first.line)],
            Read::Env(f) if f == "framework_version" => match ctx.env.framework_version() {
                Some(v) => {
                    inferred = v.inferred;
                    vec![(v.value.to_string(), v.line)]
                }
                None => Vec::new(),
            },
            Read::Env(f) => seen(ctx.env, f)
                .map(|(v, l)| (v.to_string(), l))
                .into_iter()
                .collect(),
            Read::Finding => ctx
                .drafts
                .iter()
                .enumerate()
                .filter(|(j, o)| *j != ctx.index && o.first.source == d.first.source)
                .map(|(_, o)| {
                    let id = &ctx.catalog.patterns()[o.pattern].id;
                    (format!("{} {id}", o.class), o.first.line)
                })
                .collect(),
        };
        let Some((m, value, line)) = read
            .iter()
            .find_map(|(v, l)| rule.regex.regex().find(v).map(|m| (m, v, *l)))
        else {
            continue;
        };
        for (cause, factor) in &rule.factors {
            let factor = &if inferred { temper(*factor) } else { *factor };
            if *factor >= 1.0 {
                let mut why = evidence(rule, m.as_str(), value, line);
                if inferred {
                    why.push_str(&format!(
                        " (the version is inferred from a build fingerprint on line {line}, so this counts for less)"
                    ));
                }
                let why = Some(why);
                if rule.add {
                    ws.add(cause, *factor, why);
                } else {
                    ws.boost(cause, *factor, why);
                }
            } else {
                ws.boost(cause, *factor, None);
            }
        }
    }
}

/// Half the strength of a factor (in log space): for evidence read from an
/// inferred framework version rather than the log's own version line.
fn temper(factor: f64) -> f64 {
    factor.sqrt()
}

/// A named culprit that is not another finding's rank (that case is
/// fallout, explained there). Ranks out of step — one had not reached the
/// collective its peers waited in — point at work only some ranks do (data
/// loading, evaluation, checkpointing, a rank-dependent branch): the public
/// threads on watchdog timeouts were fixed in the training code about as
/// often as in the network. Other culprits (torchrun's first failure) say
/// the ranks did not meet, without saying why.
fn culprit(ctx: &Ctx<'_>, ws: &mut Weights) {
    let Some(c) = ctx.culprit else {
        return;
    };
    let d = &ctx.drafts[ctx.index];
    if !ctx.catalog.class(&d.class).is_some_and(|k| k.distributed) {
        return;
    }
    let line = c.evidence.first().map_or(0, |e| e.line);
    if c.basis.is_laggard() {
        ws.boost(
            cause::CODE_BUG,
            LAGGARD,
            Some(format!("line {line}: {} (ranks out of step)", c.reason)),
        );
    } else {
        ws.boost(
            cause::COMM_FAILURE,
            1.5,
            Some(format!("line {line}: {}", c.reason)),
        );
    }
}
