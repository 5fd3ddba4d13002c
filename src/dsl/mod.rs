//! The DSL: values, primitives, function values and the registry that names them.
//!
//! This layer knows nothing of programs, tasks or backends; everything above builds on it.

pub mod column;
pub mod constants;
pub mod error;
pub mod exact;
pub mod func;
pub mod labelled;
mod memo;
pub mod memory;
mod points;
pub mod prims;
pub mod registry;
pub mod shared;
pub mod value;

pub use error::{DslError, DslResult, Raised};
pub use func::{call, Foreign, ForeignFn, Func};
pub use registry::{registry, PrimId, PrimSpec, Ty};
pub use value::{Cell, Color, Grid, GridRef, GridView, Loc, Value};
