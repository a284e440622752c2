//! cudnnlog reads deep-learning training logs and says what went wrong, why,
//! and what to do.
//!
//! The principal type is [`Scanner`], built by a [`ScannerBuilder`] from a
//! [`Catalog`] of patterns. A scanner reads a log — a memory-mapped file, a
//! stream, or bytes in memory — finds the events that match the catalog's
//! patterns and hands each [`Match`] to a [`Sink`].
//! The [`FindingsSink`] groups matches into findings
//! and builds a [`Report`], the serde type behind the JSON output.
//!
//! ```
//! use cudnnlog::{Catalog, ScannerBuilder, report::FindingsSink};
//!
//! let log = b"\
//! 2026-11-29 19:41:04,724 INFO train: epoch 2 step 3 batch 128 loss 2.3145
//! Traceback (most recent call last):
//!   File \"/home/user/train/train.py\", line 21, in <module>
//!     loss.backward()
//! torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU 0 has a total capacity of 139.80 GiB of which 131.47 GiB is free.
//! ";
//! let scanner = ScannerBuilder::new().build(Catalog::builtin()?);
//! let mut sink = FindingsSink::new(scanner.catalog());
//! scanner.scan_slice(log, &mut sink)?;
//! let report = sink.into_report();
//!
//! let oom = &report.findings[0];
//! assert_eq!(oom.class, "cuda.oom");
//! assert_eq!((oom.first.line, oom.first.step, oom.first.epoch), (5, Some(3), Some(2)));
//! # Ok::<(), cudnnlog::Error>(())
//! ```
//!
//! The library never prints; errors are [`Error`] values naming the file
//! (and catalog field) they are about.
//!
//! # Where things are
//!
//! The crate root holds what a scan needs: [`Scanner`], [`ScannerBuilder`],
//! [`Catalog`], the [`Sink`] trait and its [`Match`], [`FindingsSink`] and
//! the [`Report`] it builds, [`SourceInfo`], [`MmapChoice`] and [`Error`].
//! The modules group the rest by what it is about:
//!
//! * [`catalog`]: the patterns, classes, causes and probes, how a catalog
//!   is loaded from TOML and checked against its own examples;
//! * [`sink`]: the [`Sink`] and [`Fork`] traits, the [`Tee`](sink::Tee) and
//!   closure adapters, and what a match says;
//! * [`report`]: the JSON report's types;
//! * [`source`]: opening, decompressing and walking the logs;
//! * [`fleet`]: a verdict per job and their summary, for many jobs;
//! * [`follow`]: findings from a log as it grows;
//! * [`json`] and [`ndjson`]: the machine-readable outputs;
//! * [`ids`]: the built-in catalog's class and cause ids as constants;
//! * [`prefilter`]: the fingerprints of the literal pass.
//!
//! The pipeline's steps (line prefixes, event framing, confirmation,
//! diagnosis) are private: what they find reaches a caller through a
//! [`Match`] or the [`Report`].

#![deny(missing_docs)]

/// A substring search whose needle is a literal: the searcher is built
/// once per call site, not on every call (building one costs more than
/// searching a short line).
macro_rules! memfind {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
            std::sync::OnceLock::new();
        FINDER
            .get_or_init(|| memchr::memmem::Finder::new($needle))
            .find($hay)
    }};
}

/// Every occurrence of a literal needle, with the searcher built once per
/// call site (see `memfind!`).
macro_rules! memfind_iter {
    ($hay:expr, $needle:expr) => {{
        static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
            std::sync::OnceLock::new();
        FINDER
            .get_or_init(|| memchr::memmem::Finder::new($needle))
            .find_iter($hay)
    }};
}

mod ansi;
pub mod catalog;
mod context;
mod diagnose;
mod error;
mod facts;
mod fields;
pub mod fleet;
pub mod follow;
mod selftest;
// The fuzz targets drive the framer on its own (`cargo fuzz` builds with
// `--cfg fuzzing`); it is no part of the API.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod framer;
#[cfg(not(fuzzing))]
mod framer;
pub mod json;
mod location;
pub mod ndjson;
mod prefix;
pub mod render;
pub mod report;
mod scan;
pub mod sink;
pub mod source;
mod text;
mod unclassified;

pub use catalog::ids;
pub use catalog::{Catalog, CatalogBuilder};
pub use error::Error;
pub use report::{FindingsSink, Report};
pub use scan::prefilter;
pub use scan::{LiteralEngine, Scanner, ScannerBuilder};
pub use sink::{Fork, Match, Sink};
pub use source::{MmapChoice, SourceInfo};
