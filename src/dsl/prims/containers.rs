//! TODO(family containers): being written.

use crate::dsl::registry::PrimSpec;

pub const PRIMS: &[PrimSpec] = &[];

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::value::Value;

/// `merge(containers)`: the members of the members, in a container of the outer kind.
pub fn merge_values(containers: &Value) -> DslResult<Value> {
    let outer = containers
        .members()
        .ok_or_else(|| DslError::type_error("a container of containers", containers))?;
    let mut items = Vec::new();
    for c in &outer {
        items.extend(c.members().ok_or_else(|| DslError::type_error("a container", c))?);
    }
    Ok(if containers.is_set() {
        Value::set(items)
    } else {
        Value::tuple(items)
    })
}
