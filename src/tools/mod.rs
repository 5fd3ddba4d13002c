//! Tools users asked for by name, built on the layers below: profiling which primitives a
//! program calls and where a batt spends its time ([`profile`]).

pub mod profile;
