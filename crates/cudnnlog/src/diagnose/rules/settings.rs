//! Training settings the log echoes: deterministic mode, cuDNN benchmark
//! mode, mixed precision, TensorFlow's memory growth.
//!
//! **Evidence:** `deterministic`, `cudnn_benchmark`, `amp`, TensorFlow's
//! `memory_growth`
//!
//! **Effect:** deterministic on → `deterministic_mode` ×4 (off ×0.2);
//! benchmark on → `benchmark_autotune` ×2, ×3 when memory was tight (off
//! ×0.3); mixed precision → `half_precision` ×2, ×3 with a grouped or
//! dilated convolution (then `unsupported_config` ×2); TensorFlow without
//! memory growth, for OOM, handle, allocation and algorithm failures →
//! `tf_prealloc` ×2 (with growth on ×0.2)

use super::{seen, Remedy, Rule};
use crate::catalog::ids::{cause, class};
use crate::diagnose::{Ctx, Weights};

/// The rule, for [`RULES`](super::RULES); its documentation is this
/// file's module comment.
pub(crate) const RULE: Rule = Rule {
    weigh,
    remedies: &[
        Remedy {
            cause: cause::BENCHMARK_AUTOTUNE,
            write: benchmark,
        },
        Remedy {
            cause: cause::DETERMINISTIC_MODE,
            write: deterministic,
        },
        Remedy {
            cause: cause::TF_PREALLOC,
            write: |_| Some(MEMORY_GROWTH.into()),
        },
    ],
};

fn weigh(ctx: &Ctx<'_>, ws: &mut Weights) {
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
        .find(|o| o.value == "tensorflow")
        .map(|o| o.first.line);
    if let Some(tf_line) = tf.filter(|_| {
        matches!(
            d.class.as_str(),
            class::CUDA_OOM
                | class::CUDNN_NOT_INITIALIZED
                | class::CUDNN_CONV_ALGO_FAILED
                | class::CUDNN_INTERNAL_ERROR
                | class::CUDNN_ALLOC_FAILED
        )
    }) {
        match seen(env, "memory_growth") {
            Some(("true", _)) => ws.boost(cause::TF_PREALLOC, 0.2, None),
            _ => ws.add(
                cause::TF_PREALLOC,
                2.0,
                Some(format!(
                    "line {tf_line} shows TensorFlow and no line turns on memory growth: it reserves most of the GPU at start-up"
                )),
            ),
        }
    }
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

fn deterministic(ctx: &Ctx<'_>) -> Option<String> {
    let d = ctx.draft();
    let op = d
        .text("op")
        .map_or(String::new(), |o| format!(" {}", crate::text::code_span(o)));
    (d.class == class::TORCH_NONDETERMINISTIC || ctx.env.get("deterministic") == Some("true")).then(|| {
        format!(
            "Keep determinism where it exists and let the operation{op} run anyway: `torch.use_deterministic_algorithms(True, warn_only=True)` (or turn determinism off for this run). Check: the run continues and logs a warning for that operation instead of failing."
        )
    })
}

/// The remedy for TensorFlow's start-up reservation.
const MEMORY_GROWTH: &str = "Let TensorFlow grow its memory instead of taking it all at start-up: `export TF_FORCE_GPU_ALLOW_GROWTH=true` (or `tf.config.experimental.set_memory_growth(gpu, True)` before any op). Check: `nvidia-smi` shows TensorFlow's memory growing with the job rather than nearly the whole GPU at once.";
