//! Project chores behind `cargo xtask`: see `cargo xtask help`.

pub mod classes;
pub mod culprits;
pub mod docs;
pub mod eval;
pub mod layers;
pub mod package;
pub mod prefilter;
pub mod rules;
