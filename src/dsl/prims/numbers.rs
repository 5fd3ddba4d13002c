//! TODO(family numbers): being written.

use crate::dsl::registry::PrimSpec;

pub const PRIMS: &[PrimSpec] = &[];
