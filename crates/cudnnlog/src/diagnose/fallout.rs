//! The primary finding, fallout, carried statuses and fatal warnings.
//!
//! A finding is *fallout* (`caused_by`) of an earlier error in the same
//! source when it is a consequence the earlier one explains:
//!
//! * **sticky CUDA errors** — after an illegal address, a device-side assert,
//!   a launch failure or an Xid fault the CUDA context is broken, and every
//!   later CUDA, cuBLAS, cuDNN or NCCL call fails too;
//! * **failed set-up** — a library that did not load, start or match the
//!   build (classes with `setup`: a cuDNN version mismatch, "Could not
//!   create cudnn handle", no GPU, a driver too old): the framework's later
//!   errors for calls that needed it ("Failed to get convolution
//!   algorithm", "DNN library is not found", XLA's "DNN library
//!   initialization failed") are its fallout, and take its causes;
//! * **distributed cascades** — one rank fails (out of memory, an exception,
//!   a crash); the others wait in a collective until NCCL times out or sees
//!   the connection close, so later NCCL errors and timeouts follow from the
//!   first non-NCCL error;
//! * **termination reports** — patterns marked `termination` (a shell's
//!   `Aborted (core dumped)`, an exit status, torchrun's summary, mpirun's
//!   "exited on signal") say how a process ended, not why: they follow from
//!   the nearest earlier error.
//!
//! * **wrapped failures** — a pattern that `wraps` other classes reports
//!   their failure again as its own reason (JAX's `Unable to initialize
//!   backend 'cuda': Unable to load cuDNN. Is it installed?`): it follows
//!   the nearest finding of one of them on its line, before it or on the
//!   few lines after it that list the reasons, warning or error.
//!
//! Otherwise one message is never both a cause and its consequence:
//! findings first seen on the same line are not linked as fallout (a status
//! the message carries is linked by `carried_by` instead).
//!
//! Before that, [`escalate`] makes a warning fatal when a termination report
//! of the same writer follows it within [`FATAL_WINDOW`] lines with no error
//! in between: the text a framework logs and survives is then the last
//! thing the process said before it died.
//!
//! The primary finding is the first error that is neither fallout nor a
//! carried status; in a log with no error, the most important warning by
//! the catalog's `warning_order`.

use super::timeline::{rank_of, same_run, SourceRole, Timeline};
use super::{Ctx, Draft, Weights};
use crate::catalog::ids::{cause, class};
use crate::catalog::{Catalog, Follows, Severity};

/// Whether `class` breaks the CUDA context for every later call
/// (`sticky` in `classes.toml`).
fn is_sticky(catalog: &Catalog, class: &str) -> bool {
    catalog.class(class).is_some_and(|c| c.sticky)
}

/// Whether `e`'s class failed to set up what a call of `class` needs:
/// its `setup` names `class`'s family, or is `"gpu"` and `class` is a GPU
/// class.
fn sets_up(catalog: &Catalog, e: &Draft, class: &str) -> bool {
    let Some(scope) = catalog.class(&e.class).and_then(|c| c.setup.as_deref()) else {
        return false;
    };
    if scope == "gpu" {
        catalog.class(class).is_some_and(|c| c.gpu)
    } else {
        class.split('.').next() == Some(scope)
    }
}

/// How many lines before a termination report a warning is taken for the
/// process's last words.
pub(crate) const FATAL_WINDOW: u64 = 20;

/// How many lines after a wrapping message the failure it names may be
/// listed (`... the following issues with CUDA components:` and the list).
const WRAPPED_AFTER: u64 = 8;

/// Whether `d`'s class is fallout of `what` when that comes first
/// (`follows` in `classes.toml`).
fn follows(catalog: &Catalog, d: &Draft, what: Follows) -> bool {
    catalog
        .class(&d.class)
        .is_some_and(|c| c.follows.contains(&what))
}

fn is_termination(catalog: &Catalog, d: &Draft) -> bool {
    catalog.patterns()[d.pattern].termination
}

/// Two locations of the same writer, as far as the log tells.
fn same_writer(a: Option<u32>, b: Option<u32>) -> bool {
    a.is_none() || b.is_none() || a == b
}

/// Raises to an error each warning that a termination report of the same
/// writer follows within [`FATAL_WINDOW`] lines, with no error between
/// them; then merges findings that became the same (class, severity,
/// signature). Drafts stay in log order.
pub(crate) fn escalate(catalog: &Catalog, drafts: &mut Vec<Draft>) {
    let mut raised = Vec::new();
    for t in drafts
        .iter()
        .filter(|d| d.is_error() && is_termination(catalog, d))
    {
        let at = &t.first;
        let before = |d: &&Draft| {
            d.last.source == at.source && d.last.byte < at.byte && !is_termination(catalog, d)
        };
        let nearest = drafts
            .iter()
            .enumerate()
            .filter(|(_, d)| before(d) && same_writer(d.last.rank, at.rank))
            .max_by_key(|(_, d)| d.last.byte);
        if let Some((i, w)) = nearest {
            if !w.is_error() && at.line.saturating_sub(w.last.line) <= FATAL_WINDOW {
                raised.push(i);
            }
        }
    }
    if raised.is_empty() {
        return;
    }
    for &i in &raised {
        drafts[i].severity = Severity::Error;
    }
    // A raised warning may now share its key with an error finding.
    let mut merged: Vec<Draft> = Vec::with_capacity(drafts.len());
    for d in drafts.drain(..) {
        let same = merged
            .iter_mut()
            .find(|m| m.class == d.class && m.severity == d.severity && m.signature == d.signature);
        match same {
            Some(m) => m.absorb(d),
            None => merged.push(d),
        }
    }
    *drafts = merged;
}

/// Whether `d`'s class is an infrastructure fault (`infrastructure` in
/// `classes.toml`).
fn is_infrastructure(catalog: &Catalog, d: &Draft) -> bool {
    catalog.class(&d.class).is_some_and(|c| c.infrastructure)
}

/// Whether `d`'s class is what a rank reports while it waits for its peers
/// (`waits` in `classes.toml`).
fn waits(catalog: &Catalog, d: &Draft) -> bool {
    catalog.class(&d.class).is_some_and(|c| c.waits)
}

/// Whether `d`'s class is a failure between ranks (`distributed`).
fn distributed(catalog: &Catalog, d: &Draft) -> bool {
    catalog.class(&d.class).is_some_and(|c| c.distributed)
}

/// For each finding, the finding it follows from, if any: an earlier one
/// of its source, an infrastructure fault of its source wherever it is,
/// or, for what a rank reports while waiting for its peers, the first
/// failure of another rank of the same run (`roles`) that did not happen
/// after it (`time`).
pub(crate) fn link(
    catalog: &Catalog,
    drafts: &[Draft],
    roles: &[SourceRole],
    time: &Timeline,
) -> Vec<Option<usize>> {
    let mut caused_by = vec![None; drafts.len()];
    for (i, d) in drafts.iter().enumerate() {
        if !d.is_error() || d.carrier.is_some() || is_infrastructure(catalog, d) {
            continue;
        }
        if follows(catalog, d, Follows::Infrastructure) {
            let fault = drafts.iter().position(|e| {
                e.is_error()
                    && e.first.source == d.first.source
                    && is_infrastructure(catalog, e)
                    && e.class != d.class
            });
            if fault.is_some() {
                caused_by[i] = fault;
                continue;
            }
        }
        // Earlier errors of the same source, not on this finding's line.
        let earlier = |pred: &dyn Fn(&Draft) -> bool| {
            drafts[..i].iter().position(|e| {
                e.is_error()
                    && e.first.source == d.first.source
                    && e.first.byte != d.first.byte
                    && e.class != d.class
                    && pred(e)
            })
        };
        caused_by[i] = if follows(catalog, d, Follows::Sticky) {
            earlier(&|e| is_sticky(catalog, &e.class))
        } else {
            None
        }
        .or_else(|| {
            // The first set-up failure of the same process that this
            // class's calls needed.
            let rank = rank_of(d);
            follows(catalog, d, Follows::Setup)
                .then(|| {
                    earlier(&|e| same_writer(rank_of(e), rank) && sets_up(catalog, e, &d.class))
                })
                .flatten()
        })
        .or_else(|| {
            // How a process ended follows the nearest earlier error of the
            // same process: a launcher's report that rank 2 died does not
            // follow rank 0's error.
            is_termination(catalog, d)
                .then(|| {
                    let rank = rank_of(d);
                    drafts[..i].iter().rposition(|e| {
                        e.is_error()
                            && e.first.source == d.first.source
                            && e.first.byte != d.first.byte
                            && !is_termination(catalog, e)
                            && same_writer(rank_of(e), rank)
                    })
                })
                .flatten()
        });
    }
    // A rank waiting for its peers (a collective's timeout, a closed
    // connection) follows the first failure of another rank of its run that
    // did not happen after it: the others waited for the rank that failed.
    let order = time.order(drafts);
    for (i, d) in drafts.iter().enumerate() {
        if caused_by[i].is_some() || !d.is_error() || d.carrier.is_some() || !waits(catalog, d) {
            continue;
        }
        let cause = order.iter().copied().find(|&j| {
            let e = &drafts[j];
            if j == i
                || !e.is_error()
                || e.carrier.is_some()
                || caused_by[j].is_some()
                || e.class == d.class
                || waits(catalog, e)
                || (d.class == class::DIST_TIMEOUT && distributed(catalog, e))
                || !same_run(roles, e.first.source, d.first.source)
                || (e.first.source == d.first.source && e.first.byte == d.first.byte)
            {
                return false;
            }
            let before_in_log = e.first.source == d.first.source && e.first.byte < d.first.byte;
            let other_rank =
                rank_of(e).is_some_and(|r| !d.ranks.contains(&r) && rank_of(d) != Some(r));
            if before_in_log {
                // What the log shows first, unless its clock says later.
                !time.after(j, i)
            } else if is_termination(catalog, e) {
                // A launcher reports a rank's death after the fact: its
                // report may come after the others' errors it caused.
                other_rank
            } else {
                // Another rank's file, or later in this one: another rank's
                // failure that its clock does not put after this, or one of
                // no known rank that the clocks put before it.
                (other_rank && !time.after(j, i)) || (rank_of(e).is_none() && time.before(j, i))
            }
        });
        // Else an earlier coordination failure of the same log that an NCCL
        // error followed (a barrier timing out on one rank, the others then
        // losing it).
        let coordination = || {
            drafts[..i].iter().position(|e| {
                e.is_error()
                    && e.first.source == d.first.source
                    && e.first.byte != d.first.byte
                    && !follows(catalog, e, Follows::Coordination)
            })
        };
        caused_by[i] = cause.or_else(|| {
            follows(catalog, d, Follows::Coordination)
                .then(coordination)
                .flatten()
        });
    }
    // A message that gives another failure as its reason (JAX's `Unable to
    // initialize backend 'cuda': Unable to load cuDNN`) follows the nearest
    // finding of a class its pattern `wraps` in the same source: on its
    // line, before it, or on the few lines after it that list the reasons
    // (`... the following issues with CUDA components:`), whatever the two
    // severities.
    for (i, d) in drafts.iter().enumerate() {
        let wraps = &catalog.patterns()[d.pattern].wraps;
        if caused_by[i].is_some() || wraps.is_empty() || d.carrier.is_some() {
            continue;
        }
        caused_by[i] = drafts
            .iter()
            .enumerate()
            .filter(|&(j, e)| {
                // Never a circle: two wrappers naming each other's class.
                j != i
                    && caused_by[j] != Some(i)
                    && e.first.source == d.first.source
                    && e.first.line <= d.first.line + WRAPPED_AFTER
                    && e.carrier.is_none()
                    && wraps.contains(&e.class)
            })
            .min_by_key(|(_, e)| e.first.line.abs_diff(d.first.line))
            .map(|(j, _)| j);
    }
    caused_by
}

/// Whether `d`'s pattern reports a failure of `cause`'s class as its reason.
fn wraps(catalog: &Catalog, d: &Draft, cause: &Draft) -> bool {
    catalog.patterns()[d.pattern].wraps.contains(&cause.class)
}

/// For each finding that is a status carried by a symptom's message, the
/// index of that symptom's finding: the nearest one of the carrier's class
/// first seen at or before it in the same source.
pub(crate) fn carried(drafts: &[Draft]) -> Vec<Option<usize>> {
    drafts
        .iter()
        .map(|d| {
            let carrier = d.carrier.as_deref()?;
            drafts
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    s.class == carrier
                        && s.first.source == d.first.source
                        && s.first.byte <= d.first.byte
                })
                .max_by_key(|(_, s)| s.first.byte)
                .or_else(|| drafts.iter().enumerate().find(|(_, s)| s.class == carrier))
                .map(|(j, _)| j)
        })
        .collect()
}

/// The first error, in the order the job's findings happened, that is
/// neither fallout nor a carried status; with no such error, the most
/// important warning that is not carried.
pub(crate) fn primary(
    catalog: &Catalog,
    drafts: &[Draft],
    caused_by: &[Option<usize>],
    carried_by: &[Option<usize>],
    time: &Timeline,
) -> Option<usize> {
    let standalone = |i: usize| caused_by[i].is_none() && carried_by[i].is_none();
    time.order(drafts)
        .into_iter()
        .map(|i| (i, &drafts[i]))
        .find(|(i, d)| d.is_error() && standalone(*i))
        .or_else(|| {
            drafts
                .iter()
                .enumerate()
                .filter(|(i, d)| !d.is_error() && standalone(*i))
                .min_by_key(|(i, d)| (catalog.warning_rank(&d.class), *i))
        })
        .map(|(i, _)| i)
}

/// Evidence for a fallout finding: it follows from `cause`, whose most
/// likely cause is `cause_of` when already known.
pub(crate) fn explain(
    ctx: &Ctx<'_>,
    cause: &Draft,
    cause_of: Option<&crate::report::RankedCause>,
    ws: &mut Weights,
) {
    let d = ctx.draft();
    // A wrapper, or a call whose set-up failed, names no new failure: it
    // takes its cause's first cause, where that is known already (a
    // wrapper's reason may be listed after it).
    let why = if wraps(ctx.catalog, d, cause) {
        Some("this message gives that failure as its reason")
    } else if sets_up(ctx.catalog, cause, &d.class) && follows(ctx.catalog, d, Follows::Setup) {
        Some("that set-up failed, and every later call needing it fails with it")
    } else {
        None
    };
    if let Some(why) = why {
        let why = format!(
            "follows {} on line {}: {why}",
            cause.class, cause.first.line
        );
        match cause_of {
            Some(top) => ws.add(&top.id, 3.0, Some(why)),
            None => {
                if let Some(top) = ctx.pattern.causes.first() {
                    ws.add(&top.id, 1.0, Some(why));
                }
            }
        }
        return;
    }
    let why = if ctx
        .catalog
        .class(&cause.class)
        .is_some_and(|c| c.infrastructure)
    {
        format!(
            "{} on line {} explains it: the hardware or the node the process ran on failed",
            cause.class, cause.first.line
        )
    } else if is_sticky(ctx.catalog, &cause.class) && follows(ctx.catalog, d, Follows::Sticky) {
        format!(
            "follows {} on line {}: after it the CUDA context is broken and later GPU calls fail too",
            cause.class, cause.first.line
        )
    } else if waits(ctx.catalog, d) {
        let rank = cause
            .first
            .rank
            .map_or(String::new(), |r| format!(" on rank {r}"));
        format!(
            "follows {}{rank} on line {}: the other ranks waited for it in a collective",
            cause.class, cause.first.line
        )
    } else {
        format!(
            "follows {} on line {}: this reports how the process ended, not why",
            cause.class, cause.first.line
        )
    };
    let id = if ctx
        .catalog
        .class(&cause.class)
        .is_some_and(|c| c.infrastructure)
    {
        cause::HARDWARE_FAULT
    } else if waits(ctx.catalog, d) {
        cause::COMM_FAILURE
    } else {
        cause::CODE_BUG
    };
    ws.add(id, 3.0, Some(why));
}
