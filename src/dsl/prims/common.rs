//! Views shared by the primitive families: patches as locations or cells, the way the
//! reference's `toindices` and `for v, (i, j) in obj` loops see them.

use std::sync::Arc;

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::value::{Cell, Loc, Value};

/// Converts a Python integer to a patch coordinate or colour (`i32`).
pub fn coord(n: i64) -> DslResult<i32> {
    i32::try_from(n).map_err(|_| DslError::TooLarge(format!("coordinate {n} is out of range")))
}

/// A member `(i, j)` of an index set as a location.
fn member_loc(v: &Value) -> DslResult<Loc> {
    let (i, j) = v.as_pair()?;
    Ok(Loc {
        i: coord(i)?,
        j: coord(j)?,
    })
}

/// A member `(colour, (i, j))` of an object as a cell.
pub fn member_cell(v: &Value) -> DslResult<Cell> {
    let members = v
        .members()
        .filter(|m| m.len() == 2)
        .ok_or_else(|| DslError::type_error("a cell (value, (i, j))", v))?;
    let l = member_loc(&members[1])?;
    Ok(Cell {
        color: coord(members[0].as_int()?)?,
        i: l.i,
        j: l.j,
    })
}

/// The locations of a patch, sorted and unique: the reference's `toindices`.
pub fn locs(patch: &Value) -> DslResult<Arc<Vec<Loc>>> {
    match patch {
        Value::Indices(l) => Ok(l.clone()),
        Value::Object(cells) => {
            let mut l: Vec<Loc> = cells.iter().map(|c| c.loc()).collect();
            l.sort_unstable();
            l.dedup();
            Ok(Arc::new(l))
        }
        // A tuple of pairs may arrive as a grid of width 2 (from Python, say).
        Value::Set(_) | Value::Tuple(_) | Value::Grid(_) => {
            let members = patch.members().unwrap_or_default();
            let Some(first) = members.first() else {
                return Ok(Arc::new(Vec::new()));
            };
            // Like the reference: a patch of cells if its first member's second item is a tuple.
            let of_cells = first.member(1).is_some_and(|x| x.is_tuple());
            let mut l = members
                .iter()
                .map(|m| {
                    if of_cells {
                        member_cell(m).map(Cell::loc)
                    } else {
                        member_loc(m)
                    }
                })
                .collect::<DslResult<Vec<_>>>()?;
            l.sort_unstable();
            l.dedup();
            Ok(Arc::new(l))
        }
        // Python treats any empty container, `()` included, as an empty patch.
        other if other.is_empty() => Ok(Arc::new(Vec::new())),
        _ => Err(DslError::type_error("a patch", patch)),
    }
}

/// The cells of an object, sorted and unique.
pub fn cells(obj: &Value) -> DslResult<Arc<Vec<Cell>>> {
    match obj {
        Value::Object(c) => Ok(c.clone()),
        Value::Set(_) | Value::Tuple(_) | Value::Indices(_) | Value::Grid(_) => {
            let members = obj.members().unwrap_or_default();
            let mut c = members.iter().map(member_cell).collect::<DslResult<Vec<_>>>()?;
            c.sort_unstable();
            c.dedup();
            Ok(Arc::new(c))
        }
        other if other.is_empty() => Ok(Arc::new(Vec::new())),
        _ => Err(DslError::type_error("an object", obj)),
    }
}

/// Largest number of members the port lets one container have; past it a primitive returns
/// [`DslError::TooLarge`] instead of exhausting memory (the reference would stall or die).
pub const MAX_MEMBERS: usize = 1 << 20;

/// The bounding box of a non-empty set of locations: `(top, bottom, left, right)`, inclusive.
pub fn bounds(locs: &[Loc]) -> Option<(i32, i32, i32, i32)> {
    let first = locs.first()?;
    let mut b = (first.i, first.i, first.j, first.j);
    for l in locs {
        b.0 = b.0.min(l.i);
        b.1 = b.1.max(l.i);
        b.2 = b.2.min(l.j);
        b.3 = b.3.max(l.j);
    }
    Some(b)
}

/// The reference's `mostcolor`/`leastcolor` rule over colour counts: `max(set(values),
/// key=values.count)` meets the colours in canonical (ascending) order and keeps the first
/// extreme, so ties go to the smallest colour. `counts` holds `(colour, count)` pairs in
/// ascending colour order.
pub fn extreme_color(counts: &[(i32, usize)], most: bool) -> Option<i32> {
    let mut best: Option<(i32, usize)> = None;
    for &(color, n) in counts {
        if n == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => {
                if most {
                    n > b
                } else {
                    n < b
                }
            }
        };
        if better {
            best = Some((color, n));
        }
    }
    best.map(|(c, _)| c)
}

/// Colour counts of a grid, ascending by colour, zero counts omitted.
pub fn grid_color_counts(cells: &[crate::dsl::value::Color]) -> Vec<(i32, usize)> {
    let mut counts = [0usize; 256];
    for &c in cells {
        counts[c as u8 as usize] += 1;
    }
    let mut out: Vec<(i32, usize)> = (0..256)
        .filter(|&k| counts[k] > 0)
        .map(|k| ((k as u8 as i8) as i32, counts[k]))
        .collect();
    out.sort_unstable();
    out
}

/// The most common colour of a grid (ties to the smallest), as the reference's `mostcolor`.
pub fn grid_mostcolor(cells: &[crate::dsl::value::Color]) -> Option<i32> {
    extreme_color(&grid_color_counts(cells), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::Grid;

    #[test]
    fn a_grid_of_width_two_is_a_patch_of_its_rows() {
        // ((1, 2), (3, 4)) is a tuple of locations in Python, whatever its representation.
        let grid = Value::grid(Grid::new(2, 2, vec![1, 2, 3, 4]));
        let tuple = Value::tuple(vec![Value::Pair(1, 2), Value::Pair(3, 4)]);
        assert_eq!(locs(&grid).unwrap(), locs(&tuple).unwrap());
        assert_eq!(
            locs(&grid).unwrap().as_slice(),
            &[Loc { i: 1, j: 2 }, Loc { i: 3, j: 4 }]
        );
        assert!(cells(&grid).is_err(), "rows of ints are not cells");
    }
}
