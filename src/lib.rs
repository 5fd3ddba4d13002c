//! arcbatch: fast, bit-exact evaluation of Michael Hodel's ARC DSL.
//!
//! Layers, each ignorant of those above it: [`dsl`] (values and primitives) →
//! [`golden`] (the conformance corpus codec).

pub mod dsl;
pub mod golden;
