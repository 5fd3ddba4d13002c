//! arcbatch: fast, bit-exact evaluation of Michael Hodel's ARC DSL.
//!
//! Layers, each ignorant of those above it: [`dsl`] (values, primitives, function values and
//! their column-wise kernels) → [`program`] (parser, IR, interpreter) → [`tasks`] (ARC task
//! files) → [`run`] (solvers on their tasks); [`batch`] (lanes and batched operations behind a
//! backend trait) → [`batt`] (many programs merged and evaluated column-wise, staged and in
//! chunks) → [`gen`] (generation and search) and [`tools`] (profiles, diffs); [`device`] (the
//! kernels and the device backend, a [`batch::Backend`]). [`golden`] reads the conformance
//! corpus; [`embedded`] holds the demo the binary carries; [`rng`] is the seeded generator
//! the generator and the emulated device share. [`pipeline`], above them all, is what every
//! front end runs: load, plan, evaluate, score. [`solve`] finds programs for unseen tasks
//! (enumeration with observational equivalence) and writes submissions. Each layer has its own error type; [`Error`]
//! is any of them, and [`Chain`] shows one with its causes ([`error`]).

pub mod batch;
pub mod batt;
pub mod device;
pub mod dsl;
pub mod embedded;
pub mod error;
pub mod files;
pub mod gen;
pub mod golden;
pub mod pipeline;
pub mod program;
pub mod rng;
pub mod run;
pub mod solve;
pub mod tasks;
pub mod tools;

pub use error::{Chain, Error};
