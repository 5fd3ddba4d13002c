//! The 160 primitives of the reference DSL plus the search dialect's `o_g` and `p_g`, split by
//! family. Each family file defines its primitives as `fn name(args: &[Value]) ->
//! DslResult<Value>` and lists them in a `PRIMS` table; [`FAMILIES`] is the registry's input.
//!
//! Every primitive follows the reference (`dsl.py` of michaelhodel/arc-dsl) exactly, error cases
//! included, iterating sets in the canonical order of [`crate::dsl::value`].

pub mod common;
mod containers;
mod grids;
mod higher;
mod numbers;
mod objects;
mod patches;
mod rows;

use super::registry::PrimSpec;

/// Every family's table, in registry order.
pub const FAMILIES: &[&[PrimSpec]] = &[
    numbers::PRIMS,
    containers::PRIMS,
    higher::PRIMS,
    patches::PRIMS,
    objects::PRIMS,
    grids::PRIMS,
];

pub use containers::merge_values;
pub use grids::{cmirror_of, dmirror_of, fill_of, hmirror_of, paint_of, rot180_of, rot270_of, rot90_of, vmirror_of};
pub use higher::same_kind;
pub use objects::{objects_from_labels, objects_of, p_g_of};
pub use patches::{colorcount_of, colorfilter_of, ofcolor_of, palette_of};
