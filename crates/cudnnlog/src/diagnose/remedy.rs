//! Remediations filled with the log's own facts, each with the check that
//! confirms it worked. They come before the catalog's general advice.

use super::Ctx;
use crate::catalog::ids::{cause, class};
use crate::facts::human_bytes as h;
use crate::fields::cmp_versions;
use std::cmp::Ordering;

/// Tailored remediations for one likely cause of the finding in `ctx`.
pub(crate) fn tailored(ctx: &Ctx<'_>, cause: &str) -> Vec<String> {
    let out: Option<String> = match cause {
        cause::MEMORY_PRESSURE => batch_size(ctx),
        cause::FRAGMENTATION => fragmentation(ctx),
        cause::FOREIGN_PROCESS => foreign(ctx),
        cause::VERSION_MISMATCH => reinstall(ctx),
        cause::LIBRARY_CONFLICT => conflict(ctx).or_else(|| reinstall(ctx)),
        cause::DRIVER_TOO_OLD => driver(ctx),
        cause::TF_PREALLOC => Some(
            "Let TensorFlow grow its memory instead of taking it all at start-up: `export TF_FORCE_GPU_ALLOW_GROWTH=true` (or `tf.config.experimental.set_memory_growth(gpu, True)` before any op). Check: `nvidia-smi` shows TensorFlow's memory growing with the job rather than nearly the whole GPU at once.".into(),
        ),
        cause::CODE_BUG => launch_blocking(ctx),
        cause::COMM_FAILURE => culprit_first(ctx),
        cause::BENCHMARK_AUTOTUNE => benchmark(ctx),
        cause::ARCH_UNSUPPORTED => arch(ctx),
        cause::DETERMINISTIC_MODE => deterministic(ctx),
        _ => None,
    };
    out.into_iter().collect()
}

/// How much the failed step needed against what the process may use.
fn budget(ctx: &Ctx<'_>) -> Option<(u64, u64)> {
    let d = ctx.draft();
    let req = d.int("requested_bytes")?;
    let needed = req + d.int("allocated_bytes").unwrap_or(0);
    let budget = d.int("allowed_bytes").or_else(|| {
        let (t, f, p) = (
            d.int("total_bytes")?,
            d.int("free_bytes")?,
            d.int("process_bytes")?,
        );
        // What this process could use: its own share plus what is free.
        Some((p + f).min(t))
    })?;
    Some((needed, budget))
}

fn batch_size(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let (needed, budget) = budget(ctx)?;
    if budget == 0 || needed <= budget {
        return None;
    }
    let factor = needed.div_ceil(budget).max(2);
    let req = d.int("requested_bytes").unwrap_or(needed);
    let head = format!(
        "The failing step needed about {} ({} already allocated + {} requested) but the process can use about {}",
        h(needed),
        h(d.int("allocated_bytes").unwrap_or(0)),
        h(req),
        h(budget)
    );
    let action = match d.first_progress().batch {
        Some(b) if b >= factor => format!(
            "lower the batch size from {b} to {} (÷{factor}), keeping the effective batch with {factor} gradient-accumulation steps",
            b / factor
        ),
        _ => format!(
            "divide the batch size (or the input size) by at least {factor}, keeping the effective batch with gradient accumulation"
        ),
    };
    Some(format!(
        "{head}: {action}. Check: the step runs, and `torch.cuda.max_memory_allocated()` stays below {}.",
        h(budget)
    ))
}

fn fragmentation(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let unalloc = d.int("reserved_unallocated_bytes")?;
    let req = d.int("requested_bytes")?;
    Some(format!(
        "Let the allocator grow segments instead of splitting them: `export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` ({} was reserved but unallocated when {} was requested). Check: if an out-of-memory error recurs, its \"reserved by PyTorch but unallocated\" figure is small.",
        h(unalloc),
        h(req)
    ))
}

fn foreign(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let t = d.int("total_bytes")?;
    let others = d.int("other_process_bytes").or_else(|| {
        let (f, p) = (d.int("free_bytes")?, d.int("process_bytes")?);
        Some(t.saturating_sub(f).saturating_sub(p))
    })?;
    Some(format!(
        "Find what else holds the GPU (about {} of {} was used by other processes): `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` on that node, then stop the stale ones. Check: only your job's processes are listed before you restart.",
        h(others),
        h(t)
    ))
}

/// The exact reinstall command for the framework build the log shows.
fn reinstall(ctx: &Ctx<'_>) -> Option<String> {
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

fn conflict(ctx: &Ctx<'_>) -> Option<String> {
    let copies = ctx.env.values("cudnn");
    if copies.len() < 2 {
        return None;
    }
    let listed: Vec<String> = copies
        .iter()
        .map(|o| format!("{} (line {})", o.value, o.first.line))
        .collect();
    Some(format!(
        "Keep one cuDNN: the log shows {}. See which one the process loads with `python -c \"import torch; print(torch.backends.cudnn.version())\"` and where copies live with `ldconfig -p | grep libcudnn`; drop the other from `LD_LIBRARY_PATH` (or run `env -u LD_LIBRARY_PATH python train.py`). Check: the version printed matches the one the framework was built with.",
        listed.join(" and ")
    ))
}

fn driver(ctx: &Ctx<'_>) -> Option<String> {
    let env = ctx.env;
    let (drv, cuda) = (env.get("driver")?, env.get("cuda")?);
    let compat = ctx.catalog.compat();
    let req = compat.driver_for(cuda)?;
    if cmp_versions(drv, &req.min_driver) != Ordering::Less {
        return None;
    }
    let newest_ok = compat
        .driver
        .iter()
        .filter(|r| cmp_versions(drv, &r.min_driver) != Ordering::Less)
        .max_by(|a, b| cmp_versions(&a.cuda, &b.cuda))
        .map_or(String::new(), |r| {
            format!(
                ", or install a framework build for CUDA {} or older",
                r.cuda
            )
        });
    Some(format!(
        "Upgrade the NVIDIA driver to {} or newer (the node has {drv}; CUDA {cuda} needs it){newest_ok}. Check: `nvidia-smi` shows \"Driver Version: {}\" or higher.",
        req.min_driver, req.min_driver
    ))
}

fn launch_blocking(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    if !matches!(
        d.class.as_str(),
        class::CUDA_DEVICE_ASSERT | class::CUDA_ILLEGAL_ADDRESS | class::CUDA_LAUNCH_FAILURE
    ) {
        return None;
    }
    let hint = match (d.text("kernel"), d.text("assertion")) {
        (Some(k), Some(a)) => format!(" (the kernel `{k}` asserted `{a}`)"),
        _ => String::new(),
    };
    Some(format!(
        "Rerun with synchronous kernel launches so the traceback points at the failing operation{hint}: `CUDA_LAUNCH_BLOCKING=1 python train.py`. Check: the new traceback ends at that operation; then fix its input (an index or label out of range, a wrong size)."
    ))
}

fn benchmark(ctx: &Ctx<'_>) -> Option<String> {
    let o = ctx.env.values("cudnn_benchmark").first()?;
    (o.value == "true").then(|| {
        format!(
            "Turn off cuDNN's autotuner, which is on (line {}): `torch.backends.cudnn.benchmark = False`. Check: the failure is gone; if the run is slower, re-enable it once memory has headroom.",
            o.first.line
        )
    })
}

fn arch(ctx: &Ctx<'_>) -> Option<String> {
    let compat = ctx.catalog.compat();
    let gpu = ctx.env.get("gpu")?;
    let a = compat.arch_of_gpu(gpu)?;
    Some(format!(
        "Use a build that supports the {gpu} ({} architecture, compute capability {}): CUDA {} or newer and cuDNN {} or newer. Check: `python -c \"import torch; print(torch.cuda.get_arch_list())\"` lists sm_{}.",
        a.arch,
        a.compute_capability.join("/"),
        a.min_cuda,
        a.min_cudnn,
        a.compute_capability
            .first()
            .map_or(String::new(), |c| c.replace('.', ""))
    ))
}

fn deterministic(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let op = d.text("op").map_or(String::new(), |o| format!(" `{o}`"));
    (d.class == class::TORCH_NONDETERMINISTIC || ctx.env.get("deterministic") == Some("true")).then(|| {
        format!(
            "Keep determinism where it exists and let the operation{op} run anyway: `torch.use_deterministic_algorithms(True, warn_only=True)` (or turn determinism off for this run). Check: the run continues and logs a warning for that operation instead of failing."
        )
    })
}

/// Start with the rank at fault, where the log names it.
fn culprit_first(ctx: &Ctx<'_>) -> Option<String> {
    let c = ctx.culprit?;
    // Waiting ranks and their collectives: a distributed finding's advice.
    if !ctx
        .catalog
        .class(&ctx.draft().class)
        .is_some_and(|k| k.distributed)
    {
        return None;
    }
    let ranks: Vec<String> = c.ranks.iter().map(u32::to_string).collect();
    let who = match ranks.len() {
        1 => format!("rank {}", ranks[0]),
        _ => format!("ranks {}", ranks.join(", ")),
    };
    let at = c
        .evidence
        .iter()
        .map(|e| e.line)
        .min()
        .map_or(String::new(), |l| format!(" around line {l}"));
    let host = c
        .hosts
        .first()
        .map_or(String::new(), |h| format!(" on {h}"));
    Some(format!(
        "Start with {who}{host}: the others waited for it. Read its output{at} to see what it was doing (a slow data loader, evaluation or checkpointing only on that rank, a hang, an error of its own); the ranks that report the timeout are victims. Check: after the fix every rank reaches the same collective sequence number."
    ))
}
