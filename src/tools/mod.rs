//! Tools users asked for by name, built on the layers below: profiling which primitives a
//! program calls and where a batt spends its time ([`profile`]), and comparing two backends
//! step by step ([`diff`]); [`svg`] holds the drawing helpers they share.

pub mod diff;
pub mod profile;
pub mod svg;
