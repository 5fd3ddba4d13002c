//! The 160 primitives of the reference DSL plus the search dialect's `o_g` and `p_g`, split by
//! family. Each family file defines its primitives as `fn name(args: &[Value]) ->
//! DslResult<Value>` and lists them in a `PRIMS` table; [`FAMILIES`] is the registry's input.
//! A primitive with a batched op is built on a public `name_of` function over compact
//! arguments (a `GridView`, a colour), which the op's entry in [`crate::batch::op`] calls by
//! its family's path (`prims::grids::fill_of`) as its CPU body.
//!
//! Every primitive follows the reference (`dsl.py` of michaelhodel/arc-dsl) exactly, error cases
//! included, iterating sets in the canonical order of [`crate::dsl::value`].

pub mod cheap;
pub mod common;
mod containers;
pub mod fused;
mod generic;
pub(crate) mod grids;
mod higher;
mod numbers;
pub(crate) mod objects;
pub(crate) mod patches;
mod py;
mod rows;
pub mod without;

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
pub use higher::same_kind;
pub use objects::objects_of;
