//! The subcommands' handlers: `scan` (one job's report, or a fleet's
//! verdicts; `--follow` watches a growing log), `run` (wrap a training
//! command and diagnose it when it exits), and the catalog's `explain` and
//! `patterns …`; `watch`, which `scan --follow DIR` runs (a verdict per
//! job as each job ends); with what two of them share: `log_copy` (a stream kept on
//! disk for the diagnosis at its end) and `interrupt` (a follow ended by
//! Ctrl-C). `main.rs` parses the arguments and dispatches here.

pub mod fleet;
pub mod follow;
pub mod interrupt;
pub mod log_copy;
pub mod patterns;
pub mod run;
pub mod scan;
pub mod watch;
