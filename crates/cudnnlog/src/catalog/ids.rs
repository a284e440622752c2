//! Constants for the built-in catalog's class and cause ids, generated from
//! `patterns/classes.toml` and `patterns/causes.toml`: code that names an id
//! uses these, so a typo does not compile.
//!
//! ```
//! use cudnnlog::ids::{cause, class};
//! let catalog = cudnnlog::Catalog::builtin().unwrap();
//! assert!(catalog.class(class::CUDA_OOM).is_some());
//! assert!(catalog.cause(cause::FRAGMENTATION).is_some());
//! ```

include!(concat!(env!("OUT_DIR"), "/ids.rs"));
