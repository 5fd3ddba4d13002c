//! Patches and the colours of elements: measuring a patch (`height`, `width`, `shape`, the
//! corners, `uppermost` ...), moving and converting it (`shift`, `normalize`, `toindices`,
//! `recolor`, `toobject`, `asobject`, `crop`), relating two patches (`hmatching`, `manhattan`,
//! `adjacent`, ...), and reading the colours of a grid or an object (`mostcolor`, `palette`,
//! `colorcount`, `color`, ...).
//!
//! The reference sees a patch through `toindices` and a grid through `len(grid)` and
//! `len(grid[0])`; the helpers below do the same with fast paths for the compact variants
//! ([`Value::Indices`], [`Value::Object`], [`Value::Grid`]) and the generic views of
//! [`common`] for everything else. An element's colours are what the reference's
//! comprehensions read: the cells of a grid, the first item of each member of a set (so an
//! index set yields its rows, as `for v, _ in element` does in Python).

use smallvec::SmallVec;

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::exact::try_collect;
use crate::dsl::memory;
use crate::dsl::registry::PrimSpec;
use crate::dsl::shared::{Shared, SliceBuilder};
use crate::dsl::value::{Cell, Color, Grid, GridView, Loc, Value};
use crate::{bail, prim};

use super::common::{self, coord, Histogram, MAX_MEMBERS, MEMBER_BYTES};
use super::generic;
use super::grids::{Bounds, Patch};
use super::objects::sorted_cells;
use super::rows;

pub const PRIMS: &[PrimSpec] = &[
    prim!(mostcolor, [Element] -> Integer, "most common colour (ties: the smallest)"),
    prim!(leastcolor, [Element] -> Integer, "least common colour (ties: the smallest)"),
    prim!(height, [Piece] -> Integer, "height of a grid or patch"),
    prim!(width, [Piece] -> Integer, "width of a grid or patch"),
    prim!(shape, [Piece] -> IntegerTuple, "height and width of a grid or patch"),
    prim!(portrait, [Piece] -> Boolean, "whether height is greater than width"),
    prim!(colorcount, [Element, Integer] -> Integer, "number of cells with a colour"),
    prim!(colorfilter, [Objects, Integer] -> Objects, "objects of a colour"),
    prim!(sizefilter, [Container, Integer] -> FrozenSet, "items of a size"),
    prim!(asindices, [Grid] -> Indices, "indices of all grid cells"),
    prim!(ofcolor, [Grid, Integer] -> Indices, "indices of the grid cells of a colour"),
    prim!(ulcorner, [Patch] -> IntegerTuple, "index of the upper left corner"),
    prim!(urcorner, [Patch] -> IntegerTuple, "index of the upper right corner"),
    prim!(llcorner, [Patch] -> IntegerTuple, "index of the lower left corner"),
    prim!(lrcorner, [Patch] -> IntegerTuple, "index of the lower right corner"),
    prim!(crop, [Grid, IntegerTuple, IntegerTuple] -> Grid, "subgrid given by start and dimensions"),
    prim!(toindices, [Patch] -> Indices, "indices of a patch's cells"),
    prim!(recolor, [Integer, Patch] -> Object, "the patch as an object of one colour"),
    prim!(shift, [Patch, IntegerTuple] -> Patch, "move a patch"),
    prim!(normalize, [Patch] -> Patch, "move the upper left corner to the origin"),
    prim!(dneighbors, [IntegerTuple] -> Indices, "directly adjacent indices"),
    prim!(ineighbors, [IntegerTuple] -> Indices, "diagonally adjacent indices"),
    prim!(neighbors, [IntegerTuple] -> Indices, "adjacent indices"),
    prim!(uppermost, [Patch] -> Integer, "row of the uppermost cell"),
    prim!(lowermost, [Patch] -> Integer, "row of the lowermost cell"),
    prim!(leftmost, [Patch] -> Integer, "column of the leftmost cell"),
    prim!(rightmost, [Patch] -> Integer, "column of the rightmost cell"),
    prim!(square, [Piece] -> Boolean, "whether the piece forms a filled square"),
    prim!(vline, [Patch] -> Boolean, "whether the patch forms a vertical line"),
    prim!(hline, [Patch] -> Boolean, "whether the patch forms a horizontal line"),
    prim!(hmatching, [Patch, Patch] -> Boolean, "whether both patches have cells in some row"),
    prim!(vmatching, [Patch, Patch] -> Boolean, "whether both patches have cells in some column"),
    prim!(manhattan, [Patch, Patch] -> Integer, "closest manhattan distance between two patches"),
    prim!(adjacent, [Patch, Patch] -> Boolean, "whether two patches are at manhattan distance 1"),
    prim!(bordering, [Patch, Grid] -> Boolean, "whether a patch touches a grid border"),
    prim!(centerofmass, [Patch] -> IntegerTuple, "center of mass (floored)"),
    prim!(palette, [Element] -> IntegerSet, "colours occurring in a grid or object"),
    // Annotated `IntegerSet` in the reference although it returns an integer.
    prim!(numcolors, [Element] -> IntegerSet, "number of colours occurring in a grid or object"),
    prim!(color, [Object] -> Integer, "colour of an object (of its first cell)"),
    prim!(toobject, [Patch, Grid] -> Object, "object of a patch's cells inside the grid"),
    prim!(asobject, [Grid] -> Object, "the grid as an object"),
];

// ----- colours of elements ----------------------------------------------------------------

/// The colours of an element with their counts, in canonical (for integers, ascending) order:
/// the reference's `values` list of `mostcolor`/`palette`, tallied.
fn color_counts(e: &Value) -> DslResult<Vec<(Value, usize)>> {
    let mut values: Vec<i64> = match e {
        Value::Object(c) => c.iter().map(|c| i64::from(c.color)).collect(),
        Value::Indices(l) => l.iter().map(|l| i64::from(l.i)).collect(),
        // Any values (`None` from `recolor`).
        Value::Set(items) => {
            let values = items.iter().map(unpack_value).collect::<DslResult<Vec<_>>>()?;
            return Ok(common::tally(&values));
        }
        v if v.is_tuple() => {
            return rows::on_grid(
                v,
                |g| {
                    Ok(Histogram::of(&g.cells)
                        .iter()
                        .map(|(c, n)| (Value::Int(c.into()), n))
                        .collect())
                },
                |r| Ok(rows::color_counts(r)),
            );
        }
        v => return Err(DslError::type_error("a grid or an object", v)),
    };
    values.sort_unstable();
    let mut counts: Vec<(i64, usize)> = Vec::new();
    for v in values {
        match counts.last_mut() {
            Some((c, n)) if *c == v => *n += 1,
            _ => counts.push((v, 1)),
        }
    }
    Ok(counts.into_iter().map(|(c, n)| (Value::Int(c), n)).collect())
}

/// `v` of a set member unpacked as `v, _`.
fn unpack_value(m: &Value) -> DslResult<Value> {
    match m.member(0) {
        Some(v) if m.len() == Some(2) => Ok(v),
        _ => Err(DslError::type_error("a member (value, index)", m)),
    }
}

/// Python's `x == y` where both may be integers: a bool equals the integer of its value.
fn py_eq(x: &Value, y: &Value) -> bool {
    match (x.as_int(), y.as_int()) {
        (Ok(a), Ok(b)) => a == b,
        _ => x == y,
    }
}

/// `next(iter(container))`.
fn first_member(v: &Value) -> DslResult<Value> {
    match v.len() {
        None => Err(DslError::type_error("an iterable", v)),
        Some(0) => bail!(StopIteration, "empty container"),
        Some(_) => v.member(0).ok_or_else(|| DslError::type_error("an iterable", v)),
    }
}

/// `x[0]`: the first item of a tuple (sets and numbers are not subscriptable).
fn item0(x: &Value) -> DslResult<Value> {
    if !x.is_tuple() {
        return Err(DslError::type_error("a subscriptable tuple", x));
    }
    x.member(0)
        .ok_or_else(|| DslError::Index("tuple index out of range".into()))
}

/// `min`/`max` of colour counts, as `mostcolor`/`leastcolor` pick them.
fn extreme(e: &Value, most: bool) -> DslResult<Value> {
    let counts = color_counts(e)?;
    match common::extreme_color(&counts, most) {
        Some(c) => Ok(c),
        None => bail!(Value, "{}() arg is an empty sequence", if most { "max" } else { "min" }),
    }
}

fn mostcolor(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(extreme(&a[0], true), || generic::mostcolor(&a[0]))
}

fn leastcolor(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(extreme(&a[0], false), || generic::leastcolor(&a[0]))
}

fn colorcount(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(colorcount_fast(a), || generic::colorcount(&a[0], &a[1]))
}

fn colorcount_fast(a: &[Value]) -> DslResult<Value> {
    let n = match (&a[0], a[1].as_int()) {
        (Value::Grid(g), Ok(value)) => return Ok(colorcount_of(&g.cells, value)),
        (Value::Object(c), Ok(value)) => c.iter().filter(|c| c.color as i64 == value).count(),
        // A value that is not an integer equals no integer colour.
        (Value::Grid(_) | Value::Object(_), Err(_)) => 0,
        (e, _) => color_counts(e)?.iter().find(|(c, _)| *c == a[1]).map_or(0, |&(_, n)| n),
    };
    Ok(Value::Int(n as i64))
}

/// `colorcount` of a grid's cells: the lane function of the batched op.
pub fn colorcount_of(cells: &[Color], value: i64) -> Value {
    Value::Int(cells.iter().filter(|&&c| c as i64 == value).count() as i64)
}

fn colorfilter(a: &[Value]) -> DslResult<Value> {
    colorfilter_of(&a[0], &a[1])
}

/// `colorfilter(objs, value)`: the primitive's core, and the lane function of the batched op.
pub fn colorfilter_of(objs: &Value, value: &Value) -> DslResult<Value> {
    // Objects a device found: their first cells' colours are known without building them.
    if let Some(labelled) = objs.as_labelled() {
        let value = value.as_int().ok();
        return Ok(labelled.filter(|o| Some(o.color.into()) == value));
    }
    let members = objs
        .members()
        .ok_or_else(|| DslError::type_error("a container of objects", objs))?;
    let mut kept = Vec::new();
    for obj in members {
        let first_color = match &obj {
            Value::Object(c) => match c.first() {
                Some(cell) => Value::Int(cell.color as i64),
                // `next` of an empty object inside a generator: the reference raises RuntimeError.
                None => bail!(StopIteration, "colorfilter met an empty object"),
            },
            other => item0(&first_member(other)?)?,
        };
        if py_eq(&first_color, value) {
            kept.push(obj);
        }
    }
    Ok(if objs.is_set() {
        Value::set_sorted(kept)
    } else {
        Value::set(kept)
    })
}

fn sizefilter(a: &[Value]) -> DslResult<Value> {
    let n = a[1].as_int().ok();
    let matches = |item: &Value| -> DslResult<bool> {
        let len = item.len().ok_or_else(|| DslError::type_error("a sized item", item))?;
        Ok(Some(len as i64) == n)
    };
    // Objects a device found: their sizes are known without building them.
    if let Some(labelled) = a[0].as_labelled() {
        return Ok(labelled.filter(|o| Some(o.size.into()) == n));
    }
    match &a[0] {
        // Every member of an index set or object is a pair: all of them or none.
        Value::Indices(_) | Value::Object(_) => Ok(if n == Some(2) { a[0].clone() } else { Value::empty_set() }),
        Value::Set(items) => {
            let mut kept = Vec::new();
            for item in items.iter() {
                if matches(item)? {
                    kept.push(item.clone());
                }
            }
            Ok(Value::set_sorted(kept))
        }
        container => {
            let items = container
                .members()
                .ok_or_else(|| DslError::type_error("a container", container))?;
            let mut kept = Vec::new();
            for item in items {
                if matches(&item)? {
                    kept.push(item);
                }
            }
            Ok(Value::set(kept))
        }
    }
}

fn palette(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(palette_fast(a), || generic::palette(&a[0]))
}

fn palette_fast(a: &[Value]) -> DslResult<Value> {
    if let Value::Grid(g) = &a[0] {
        return Ok(palette_of(&g.cells));
    }
    let colors = color_counts(&a[0])?.into_iter().map(|(c, _)| c).collect();
    Ok(Value::set_sorted(colors))
}

/// `palette` of a grid's cells: the lane function of the batched op.
pub fn palette_of(cells: &[Color]) -> Value {
    Value::set_sorted(Histogram::of(cells).iter().map(|(c, _)| Value::Int(c as i64)).collect())
}

fn numcolors(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(numcolors_fast(a), || {
        Ok(Value::Int(generic::palette(&a[0])?.len().unwrap_or(0) as i64))
    })
}

fn numcolors_fast(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(color_counts(&a[0])?.len() as i64))
}

pub(super) fn color(a: &[Value]) -> DslResult<Value> {
    match &a[0] {
        Value::Object(c) => match c.first() {
            Some(cell) => Ok(Value::Int(cell.color as i64)),
            None => bail!(StopIteration, "color of an empty object"),
        },
        // A pair of cells (`product` of objects makes them) is a tuple whose first member is its
        // first cell: that cell's colour, read in place rather than through the cell's value.
        Value::CellPair(first, _) => Ok(Value::Int(first.cell().color.into())),
        obj => item0(&first_member(obj)?),
    }
}

// ----- grids as the reference measures them -------------------------------------------------

/// `len(grid[0])`: the width of the first row (an `IndexError` for an empty grid).
fn first_row_len(g: &Value) -> DslResult<i64> {
    match g {
        Value::Grid(g) if g.h > 0 => Ok(g.w as i64),
        _ => {
            let row = item0(g)?;
            row.len()
                .map(|n| n as i64)
                .ok_or_else(|| DslError::type_error("a sized row", &row))
        }
    }
}

/// `len(grid)` of a tuple.
fn tuple_len(t: &Value) -> i64 {
    t.len().unwrap_or(0) as i64
}

/// `crop`: the rows and columns Python's slices `[start:start + dims]` keep.
pub(super) fn crop_grid(g: &Grid, start: (i64, i64), dims: (i64, i64)) -> Grid {
    let rows = common::py_slice(g.h, start.0, start.0.saturating_add(dims.0));
    if rows.is_empty() {
        return Grid::new(0, 0, Vec::new());
    }
    let cols = common::py_slice(g.w, start.1, start.1.saturating_add(dims.1));
    let mut cells = Vec::with_capacity(rows.len() * cols.len());
    for r in rows.clone() {
        cells.extend_from_slice(&g.row(r)[cols.clone()]);
    }
    Grid::new(rows.len(), cols.len(), cells)
}

fn crop(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(crop_fast(a), || generic::crop(&a[0], &a[1], &a[2]))
}

fn crop_fast(a: &[Value]) -> DslResult<Value> {
    // `start[0]`, `dims[0]`, ...: indexed, not unpacked.
    let (start, dims) = (a[1].index_pair()?, a[2].index_pair()?);
    rows::on_grid(
        &a[0],
        |g| Ok(Value::grid(crop_grid(g, start, dims))),
        |r| Ok(rows::crop(r, start, dims)),
    )
}

fn asindices(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(asindices_fast(a), || generic::asindices(&a[0]))
}

fn asindices_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            if g.h.saturating_mul(g.w) > MAX_MEMBERS {
                bail!(TooLarge, "a {}x{} grid has too many indices", g.h, g.w);
            }
            memory::room_for(g.h * g.w * MEMBER_BYTES, || {
                format!("the indices of a {}x{} grid", g.h, g.w)
            })?;
            let mut locs = Vec::with_capacity(g.h * g.w);
            for i in 0..g.h as i32 {
                locs.extend((0..g.w as i32).map(|j| Loc { i, j }));
            }
            Ok(Value::indices_sorted(locs))
        },
        rows::asindices,
    )
}

fn ofcolor(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(ofcolor_fast(a), || generic::ofcolor(&a[0], &a[1]))
}

fn ofcolor_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        // A value that is not an integer equals no cell of a grid.
        |g| {
            Ok(a[1]
                .as_int()
                .map_or_else(|_| Value::empty_set(), |v| ofcolor_of(g.view(), v)))
        },
        |r| rows::ofcolor(r, &a[1]),
    )
}

/// `ofcolor` of a borrowed grid: the lane function of the batched op.
pub fn ofcolor_of(g: GridView<'_>, value: i64) -> Value {
    // No cell holds a colour past `Color`.
    let Ok(value) = Color::try_from(value) else {
        return Value::Indices(Value::no_locs().clone());
    };
    let at = |i: usize, j: usize| Loc {
        i: i as i32,
        j: j as i32,
    };
    if g.w <= 64 {
        // A mask of each row's cells of the colour, their locations read from it by bit scans:
        // no branch per cell that the data decides.
        let masks: SmallVec<[u64; 32]> = (0..g.h).map(|i| common::of_color(g.row(i), value)).collect();
        let mut locs = SliceBuilder::new(masks.iter().map(|m| m.count_ones() as usize).sum());
        for (i, &mask) in masks.iter().enumerate() {
            let mut bits = mask;
            while bits != 0 {
                locs.push(at(i, bits.trailing_zeros() as usize));
                bits &= bits - 1;
            }
        }
        return Value::indices_sorted(locs.finish());
    }
    // Counted first (a pass the compiler vectorises), so that the locations are gathered in
    // room made once.
    let mut locs = SliceBuilder::new(g.cells.iter().filter(|&&c| c == value).count());
    for i in 0..g.h {
        for (j, &c) in g.row(i).iter().enumerate() {
            if c == value {
                locs.push(at(i, j));
            }
        }
    }
    Value::indices_sorted(locs.finish())
}

fn asobject(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(asobject_fast(a), || generic::asobject(&a[0]))
}

fn asobject_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| Ok(Value::Object(Shared::from(sorted_cells(g.view())))),
        rows::asobject,
    )
}

fn toobject(a: &[Value]) -> DslResult<Value> {
    let g = match a[1].as_grid() {
        Ok(g) => g,
        Err(_) => return rows::toobject(&rows::of(&a[1])?, || common::locs(&a[0])),
    };
    first_row_len(&a[1])?;
    let locs = common::locs(&a[0])?;
    // Room for every location at once: collecting the ones inside grew the list by steps.
    let mut cells = Vec::with_capacity(locs.len());
    for l in locs.iter() {
        if let Some(color) = g.at(l.i as i64, l.j as i64) {
            cells.push(Cell { color, i: l.i, j: l.j });
        }
    }
    Ok(Value::object(cells))
}

// ----- the extent of a patch ----------------------------------------------------------------

/// The bounding box of a patch's `toindices`, `None` when it is empty.
fn patch_bounds(p: &Value) -> DslResult<Option<Bounds>> {
    Ok(match p {
        // An object's cells in place, without a list of their locations.
        Value::Object(c) => Bounds::of_cells(c),
        // Bounds are the same in any order (an index set's locations are borrowed).
        _ => Bounds::of(common::locs_in_any_order(p)?.iter().map(|l| (l.i, l.j))),
    })
}

/// The bounding box of a patch; an error where the reference takes `min` of nothing.
fn nonempty_bounds(p: &Value) -> DslResult<Bounds> {
    match patch_bounds(p)? {
        Some(b) => Ok(b),
        None => bail!(Value, "min() arg is an empty sequence (empty patch)"),
    }
}

/// `(height, width)` of a patch, `(0, 0)` when empty.
fn patch_shape(p: &Value) -> DslResult<(i64, i64)> {
    Ok(patch_bounds(p)?.map_or((0, 0), |b| (b.height(), b.width())))
}

/// `(height(piece), width(piece))`: a tuple is measured as a grid, a set as a patch.
pub(super) fn piece_shape(p: &Value) -> DslResult<(i64, i64)> {
    if p.is_tuple() {
        let h = tuple_len(p);
        return Ok((h, if h == 0 { 0 } else { first_row_len(p)? }));
    }
    patch_shape(p)
}

/// The reference's `center(patch)`: `(uppermost + height // 2, leftmost + width // 2)`, with
/// a tuple's height and width read as a grid's (`len(piece)`, `len(piece[0])`).
pub(super) fn piece_center(p: &Value) -> DslResult<(i64, i64)> {
    let b = nonempty_bounds(p)?;
    let (h, w) = if p.is_tuple() {
        piece_shape(p)?
    } else {
        (b.height(), b.width())
    };
    Ok((b.top + h.div_euclid(2), b.left + w.div_euclid(2)))
}

/// The reference's `zip(*toindices(patch))` where `toindices` gives a tuple back (a tuple of
/// pairs, or of longer rows): its integers position by position, up to the shortest member.
fn positions(t: &Value) -> DslResult<Vec<Vec<i64>>> {
    let members = t.members().unwrap_or_default();
    let rows = members
        .iter()
        .map(|m| {
            let items = m.members().ok_or_else(|| DslError::type_error("an iterable", m))?;
            items.iter().map(Value::as_int).collect::<DslResult<Vec<i64>>>()
        })
        .collect::<DslResult<Vec<_>>>()?;
    let width = rows.iter().map(Vec::len).min().unwrap_or(0);
    Ok((0..width).map(|k| rows.iter().map(|r| r[k]).collect()).collect())
}

fn height(a: &[Value]) -> DslResult<Value> {
    let p = &a[0];
    let h = if p.is_tuple() { tuple_len(p) } else { patch_shape(p)?.0 };
    Ok(Value::Int(h))
}

fn width(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(piece_shape(&a[0])?.1))
}

fn shape(a: &[Value]) -> DslResult<Value> {
    let (h, w) = piece_shape(&a[0])?;
    Ok(Value::Pair(h, w))
}

fn portrait(a: &[Value]) -> DslResult<Value> {
    let (h, w) = piece_shape(&a[0])?;
    Ok(Value::Bool(h > w))
}

fn square(a: &[Value]) -> DslResult<Value> {
    let p = &a[0];
    if p.is_tuple() {
        return Ok(Value::Bool(tuple_len(p) == first_row_len(p)?));
    }
    let (h, w) = patch_shape(p)?;
    Ok(Value::Bool(h * w == tuple_len(p) && h == w))
}

/// `vline`/`hline`: as many cells as the extent along the line, one cell across it.
fn is_line(p: &Value, vertical: bool) -> DslResult<Value> {
    let (h, w) = piece_shape(p)?;
    let (along, across) = if vertical { (h, w) } else { (w, h) };
    Ok(Value::Bool(along == tuple_len(p) && across == 1))
}

fn vline(a: &[Value]) -> DslResult<Value> {
    is_line(&a[0], true)
}

fn hline(a: &[Value]) -> DslResult<Value> {
    is_line(&a[0], false)
}

fn uppermost(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(nonempty_bounds(&a[0])?.top))
}

fn lowermost(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(nonempty_bounds(&a[0])?.bottom))
}

fn leftmost(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(nonempty_bounds(&a[0])?.left))
}

fn rightmost(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(nonempty_bounds(&a[0])?.right))
}

/// A corner `(row, column)` picked from the bounding box; `()` for an empty patch.
fn corner(p: &Value, bottom: bool, right: bool) -> DslResult<Value> {
    // `ulcorner`/`lrcorner` are `tuple(map(min, zip(*toindices(patch))))` (max): a tuple that
    // `toindices` gives back is read position by position, however long its members.
    if bottom == right && is_own_indices(p)? {
        let extreme = |column: Vec<i64>| {
            if bottom {
                column.into_iter().max()
            } else {
                column.into_iter().min()
            }
        };
        let corner: Vec<Value> = positions(p)?.into_iter().filter_map(extreme).map(Value::Int).collect();
        return Ok(Value::tuple(corner));
    }
    Ok(match patch_bounds(p)? {
        None => Value::empty_tuple(),
        Some(b) => Value::Pair(
            if bottom { b.bottom } else { b.top },
            if right { b.right } else { b.left },
        ),
    })
}

fn ulcorner(a: &[Value]) -> DslResult<Value> {
    ulcorner_of(&a[0])
}

/// The reference's `ulcorner(patch)`.
pub(super) fn ulcorner_of(p: &Value) -> DslResult<Value> {
    corner(p, false, false)
}

fn urcorner(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(corner(&a[0], false, true), || generic::keyed_corner(&a[0], true))
}

fn llcorner(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(corner(&a[0], true, false), || generic::keyed_corner(&a[0], false))
}

fn lrcorner(a: &[Value]) -> DslResult<Value> {
    corner(&a[0], true, true)
}

fn bordering(a: &[Value]) -> DslResult<Value> {
    // The reference's `or` chain, evaluated lazily: `len(grid[0])` is read last.
    let Bounds {
        top: t,
        bottom: b,
        left: l,
        right: r,
    } = nonempty_bounds(&a[0])?;
    let grid = &a[1];
    if t == 0 || l == 0 {
        return Ok(Value::Bool(true));
    }
    let h = grid.len().ok_or_else(|| DslError::type_error("a grid", grid))?;
    if b == h as i64 - 1 {
        return Ok(Value::Bool(true));
    }
    Ok(Value::Bool(r == first_row_len(grid)? - 1))
}

fn centerofmass(a: &[Value]) -> DslResult<Value> {
    let p = &a[0];
    // The sums run over `toindices`, the divisor is `len(patch)` (cells, duplicates included);
    // a tuple `toindices` gives back is summed member by member, duplicates included.
    let n = tuple_len(p);
    let indices = toindices_of(p)?;
    if indices.is_tuple() {
        let sums = positions(&indices)?
            .into_iter()
            .map(|c| Value::Int(c.iter().sum::<i64>().div_euclid(n)));
        return Ok(Value::tuple(sums.collect()));
    }
    let locs = common::locs(&indices)?;
    if locs.is_empty() {
        return Ok(Value::empty_tuple());
    }
    let (si, sj) = locs
        .iter()
        .fold((0i64, 0i64), |(si, sj), l| (si + l.i as i64, sj + l.j as i64));
    Ok(Value::Pair(si.div_euclid(n), sj.div_euclid(n)))
}

// ----- moving and converting patches --------------------------------------------------------

fn toindices(a: &[Value]) -> DslResult<Value> {
    toindices_of(&a[0])
}

/// The reference's `toindices`: the locations of a patch of cells; any other patch itself, so
/// that a tuple of pairs stays a tuple (which `center`, `shape` and `subgrid` measure as a
/// grid, and set difference refuses).
pub(super) fn toindices_of(p: &Value) -> DslResult<Value> {
    if is_own_indices(p)? {
        return Ok(p.clone());
    }
    match p {
        Value::Indices(_) => Ok(p.clone()),
        _ => Ok(Value::Indices(common::locs(p)?.into_shared())),
    }
}

/// Whether `toindices` hands `p` back as it is while it is a tuple (its members are not cells):
/// then the reference reads it as a tuple, not as a set of locations.
pub(super) fn is_own_indices(p: &Value) -> DslResult<bool> {
    Ok(p.is_tuple() && common::holds_cells(p.member(0).as_ref())? == Some(false))
}

fn recolor(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[0], Value::Bool(_)),
        || recolor_fast(a),
        || generic::recolor(&a[0], &a[1]),
    )
}

fn recolor_fast(a: &[Value]) -> DslResult<Value> {
    let locs = common::locs(&a[1])?;
    // Any value is a colour to the reference (`None` from `index` outside the grid, say).
    let Some(color) = a[0].as_int().ok().and_then(|c| i32::try_from(c).ok()) else {
        return Ok(Value::set(
            locs.iter().map(|&l| Value::duo(a[0].clone(), Value::loc(l))).collect(),
        ));
    };
    if locs.is_empty() {
        return Ok(Value::Object(Value::no_cells().clone()));
    }
    let cells = locs.iter().map(|l| Cell { color, i: l.i, j: l.j });
    Ok(Value::Object(Shared::from_iter_at_most(locs.len(), cells)))
}

/// `shift(patch, (di, dj))` of a non-empty patch. A translation keeps the canonical order.
fn shifted(p: &Value, di: i64, dj: i64) -> DslResult<Value> {
    let patch = Patch::of(p)?;
    let moved = match (i32::try_from(di), i32::try_from(dj)) {
        (Ok(di), Ok(dj)) => translated(&patch, di, dj),
        _ => None,
    };
    match moved {
        Some(value) => Ok(value),
        // Cells of any colours (the simple path), an empty patch, or a member that leaves the
        // coordinates: member by member, raising the first failing member's error.
        None => patch.map(|i, j| (i.saturating_add(di), j.saturating_add(dj))),
    }
}

/// The locations or cells of a non-empty patch moved by `(di, dj)` in one pass, the sums
/// checked together after it; `None` for any other patch, or when a sum leaves the coordinates.
fn translated(patch: &Patch, di: i32, dj: i32) -> Option<Value> {
    // A sum `r = x + d` wrapped past the end of `i32` exactly where `x` and `d` share a sign
    // that `r` lacks: the sign bit of `(x ^ r) & (d ^ r)`. Gathered over every sum without a
    // flag per sum, those bits let the compiler run the locations' loop on vectors.
    let mut wrapped = 0i32;
    let mut add = |x: i32, d: i32| {
        let r = x.wrapping_add(d);
        wrapped |= (x ^ r) & (d ^ r);
        r
    };
    let value = match patch {
        Patch::Locs(l) if !l.is_empty() => Value::Indices(Shared::from_iter_at_most(
            l.len(),
            l.iter().map(|l| Loc {
                i: add(l.i, di),
                j: add(l.j, dj),
            }),
        )),
        Patch::Cells(c) if !c.is_empty() => Value::Object(Shared::from_iter_at_most(
            c.len(),
            c.iter().map(|c| Cell {
                color: c.color,
                i: add(c.i, di),
                j: add(c.j, dj),
            }),
        )),
        _ => return None,
    };
    (wrapped >= 0).then_some(value)
}

/// Whether a patch is empty (`len(patch) == 0`); an error for values without a length.
fn is_empty_patch(p: &Value) -> DslResult<bool> {
    match p.len() {
        Some(n) => Ok(n == 0),
        None => Err(DslError::type_error("a patch", p)),
    }
}

fn shift(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(shift_fast(a), || generic::shift(&a[0], &a[1]))
}

fn shift_fast(a: &[Value]) -> DslResult<Value> {
    if is_empty_patch(&a[0])? {
        return Ok(a[0].clone());
    }
    // `di, dj = directions`.
    let (di, dj) = a[1].unpack_pair()?;
    shifted(&a[0], di, dj)
}

fn normalize(a: &[Value]) -> DslResult<Value> {
    if is_empty_patch(&a[0])? {
        return Ok(a[0].clone());
    }
    let b = nonempty_bounds(&a[0])?;
    shifted(&a[0], -b.top, -b.left)
}

/// The offsets of the direct neighbours, in canonical order.
pub(super) const DIRECT: &[(i64, i64)] = &[(-1, 0), (0, -1), (0, 1), (1, 0)];
/// The offsets of the diagonal neighbours, in canonical order.
pub(super) const DIAGONAL: &[(i64, i64)] = &[(-1, -1), (-1, 1), (1, -1), (1, 1)];
/// The offsets of all eight neighbours, in canonical order.
pub(super) const ALL_AROUND: &[(i64, i64)] = &[(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)];

/// The locations at the given offsets (sorted) from a location.
fn around(loc: &Value, offsets: &[(i64, i64)]) -> DslResult<Value> {
    // `loc[0]`, `loc[1]`: indexed, not unpacked.
    let (i, j) = loc.index_pair()?;
    let locs = try_collect(offsets.iter().map(|&(di, dj)| {
        Ok(Loc {
            i: coord(i.saturating_add(di))?,
            j: coord(j.saturating_add(dj))?,
        })
    }))?;
    Ok(Value::indices_sorted(locs))
}

fn dneighbors(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(around(&a[0], DIRECT), || {
        generic::around(&a[0], &[(-1, 0), (1, 0), (0, -1), (0, 1)])
    })
}

fn ineighbors(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(around(&a[0], DIAGONAL), || {
        generic::around(&a[0], &[(-1, -1), (-1, 1), (1, -1), (1, 1)])
    })
}

fn neighbors(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(around(&a[0], ALL_AROUND), || {
        generic::around(
            &a[0],
            &[(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)],
        )
    })
}

// ----- two patches --------------------------------------------------------------------------

/// The distinct rows (or columns) a patch occupies, ascending.
fn lines(p: &Value, rows: bool) -> DslResult<Vec<i32>> {
    let locs = common::locs_in_any_order(p)?;
    let mut v: Vec<i32> = locs.iter().map(|l| if rows { l.i } else { l.j }).collect();
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// Whether two patches share a row (or a column).
fn share_line(a: &Value, b: &Value, rows: bool) -> DslResult<Value> {
    let line = |l: Loc| if rows { l.i } else { l.j };
    // Small index sets and objects (the single cells of `product(cells, cells)`), pair by pair
    // in place: no lists to build.
    if let (Some(mut x), Some(y)) = (unboxed_locs(a), unboxed_locs(b)) {
        if a.len().unwrap_or(0).saturating_mul(b.len().unwrap_or(0)) <= 256 {
            let shared = x.any(|p| y.clone().any(|q| line(p) == line(q)));
            return Ok(Value::Bool(shared));
        }
    }
    let (x, y) = (lines(a, rows)?, lines(b, rows)?);
    Ok(Value::Bool(x.iter().any(|v| y.binary_search(v).is_ok())))
}

fn hmatching(a: &[Value]) -> DslResult<Value> {
    share_line(&a[0], &a[1], true)
}

fn vmatching(a: &[Value]) -> DslResult<Value> {
    share_line(&a[0], &a[1], false)
}

/// The smallest manhattan distance between a location of `a` and one of `b`.
fn min_distance(a: &Value, b: &Value) -> DslResult<i64> {
    // Index sets and objects as they are: the minimum needs neither `toindices`' order nor
    // its deduplication, only the same locations.
    let itself = |l: &Loc| *l;
    let found = match (a, b) {
        (Value::Indices(x), Value::Indices(y)) => nearest(x, y, itself, itself),
        (Value::Indices(x), Value::Object(y)) => nearest(x, y, itself, |c| c.loc()),
        (Value::Object(x), Value::Indices(y)) => nearest(x, y, |c| c.loc(), itself),
        (Value::Object(x), Value::Object(y)) => nearest(x, y, |c| c.loc(), |c| c.loc()),
        _ => {
            let (x, y) = (common::locs(a)?, common::locs(b)?);
            nearest(&x, &y, itself, itself)
        }
    };
    match found {
        Some(d) => Ok(d),
        None => bail!(Value, "min() arg is an empty sequence (empty patch)"),
    }
}

/// The least Manhattan distance between a location of `x` and one of `y` (`loc` of each),
/// over the two slices as they are; no distance is below 0, so one of 0 ends the search.
fn nearest<P, Q>(x: &[P], y: &[Q], x_loc: impl Fn(&P) -> Loc, y_loc: impl Fn(&Q) -> Loc) -> Option<i64> {
    if y.is_empty() {
        return None;
    }
    let mut best = None;
    for p in x {
        let p = x_loc(p);
        let (i, j) = (i64::from(p.i), i64::from(p.j));
        let d = y.iter().fold(i64::MAX, |least, q| {
            let q = y_loc(q);
            least.min((i - i64::from(q.i)).abs() + (j - i64::from(q.j)).abs())
        });
        let least = best.map_or(d, |b: i64| b.min(d));
        if least == 0 {
            return Some(0);
        }
        best = Some(least);
    }
    best
}

/// The locations of an index set or an object, in place (an object's may repeat); `None` for
/// any other value.
fn unboxed_locs(v: &Value) -> Option<impl Iterator<Item = Loc> + Clone + '_> {
    let (locs, cells): (&[Loc], &[Cell]) = match v {
        Value::Indices(l) => (l, &[]),
        Value::Object(c) => (&[], c),
        _ => return None,
    };
    Some(locs.iter().copied().chain(cells.iter().map(|c| c.loc())))
}

fn manhattan(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(manhattan_fast(a), || generic::manhattan(&a[0], &a[1]))
}

fn manhattan_fast(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(min_distance(&a[0], &a[1])?))
}

fn adjacent(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(adjacent_fast(a), || {
        Ok(Value::Bool(generic::manhattan(&a[0], &a[1])? == Value::Int(1)))
    })
}

fn adjacent_fast(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Bool(min_distance(&a[0], &a[1])? == 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each member moved with its own check: the definition `shifted`'s range check stands for.
    fn shifted_member_by_member(locs: &[Loc], di: i64, dj: i64) -> DslResult<Vec<Loc>> {
        locs.iter()
            .map(|l| {
                Ok(Loc {
                    i: coord(i64::from(l.i).saturating_add(di))?,
                    j: coord(i64::from(l.j).saturating_add(dj))?,
                })
            })
            .collect()
    }

    prop_compose! {
        /// A patch for the two-patch tests: up to 7 cells of a few colours at small locations,
        /// as an object or as their index set (possibly empty).
        fn small_patch()(
            cells in proptest::collection::vec((0i32..3, -6i32..6, -6i32..6), 0..8),
            as_object: bool,
        ) -> Value {
            if as_object {
                Value::object(cells.iter().map(|&(color, i, j)| Cell { color, i, j }).collect())
            } else {
                Value::indices(cells.iter().map(|&(_, i, j)| Loc { i, j }).collect())
            }
        }
    }

    proptest! {
        /// `ofcolor` of grids at most 64 cells wide (read by masks) and wider ones (cell by cell)
        /// is every location holding the colour, in row-major order.
        #[test]
        fn ofcolor_is_the_locations_holding_the_colour(
            h in 1usize..5,
            w in prop_oneof![1usize..10, 60usize..70],
            cells in proptest::collection::vec(prop_oneof![0..3 as Color, Just(Color::MAX)], 350),
            value in prop_oneof![0i64..3, Just(i64::from(Color::MAX)), Just(i64::MAX)],
        ) {
            let g = Grid::new(h, w, cells[..h * w].to_vec());
            let expected: Vec<Loc> = (0..h * w)
                .filter(|&k| i64::from(g.cells[k]) == value)
                .map(|k| Loc { i: (k / w) as i32, j: (k % w) as i32 })
                .collect();
            prop_assert_eq!(ofcolor_of(g.view(), value), Value::indices_sorted(expected));
        }

        /// `color` of a pair of cells is `x[0]` of its first member, as for any other tuple.
        #[test]
        fn color_of_a_pair_of_cells_is_its_first_cells(
            a in (-3i32..12, -40_000i32..40_000, -5i32..5),
            b in (-3i32..12, -5i32..5, -5i32..5),
        ) {
            let cell = |(color, i, j)| Value::Cell(Cell { color, i, j });
            let pair = Value::duo(cell(a), cell(b));
            let general = first_member(&pair).and_then(|first| item0(&first));
            prop_assert_eq!(color(&[pair]).unwrap(), general.unwrap());
        }

        /// `hmatching`/`vmatching` on small index sets and objects read in place: whether
        /// their sets of rows (columns) intersect, as the reference computes it.
        #[test]
        fn matching_in_place_is_a_shared_line_of_toindices(x in small_patch(), y in small_patch(), rows: bool) {
            let line = |l: &Loc| if rows { l.i } else { l.j };
            let of_y: std::collections::BTreeSet<i32> = common::locs(&y).unwrap().iter().map(line).collect();
            let expected = common::locs(&x).unwrap().iter().any(|l| of_y.contains(&line(l)));
            prop_assert_eq!(share_line(&x, &y, rows).unwrap(), Value::Bool(expected));
        }

        /// `manhattan` on index sets and objects read in place is the minimum over their
        /// `toindices`, as the reference computes it (and the same error when one is empty).
        #[test]
        fn manhattan_in_place_is_the_minimum_over_toindices(x in small_patch(), y in small_patch()) {
            let (lx, ly) = (common::locs(&x).unwrap(), common::locs(&y).unwrap());
            let expected = lx
                .iter()
                .flat_map(|p| ly.iter().map(move |q| (p.i - q.i).abs() as i64 + (p.j - q.j).abs() as i64))
                .min();
            match (min_distance(&x, &y), expected) {
                (Ok(d), Some(e)) => prop_assert_eq!(d, e),
                (Err(_), None) => {}
                (got, e) => prop_assert!(false, "{:?} against {:?}", got, e),
            }
        }

        /// Near the ends of the coordinate range too, where some members no longer fit.
        #[test]
        fn shift_checks_the_range_as_each_member_would(
            near in prop_oneof![Just(0i64), Just(i32::MAX as i64 - 20), Just(i32::MIN as i64 + 20)],
            offsets in proptest::collection::btree_set((-20i64..20, -20i64..20), 1..12),
            di in -40i64..40,
            dj in -40i64..40,
            far in prop_oneof![Just(0i64), Just(1i64 << 32), Just(-(1i64 << 32))],
        ) {
            let locs: Vec<Loc> = offsets
                .iter()
                .map(|&(i, j)| Loc { i: (near + i) as i32, j: (near + j) as i32 })
                .collect();
            let (di, dj) = (di + far, dj - far);
            let expected = shifted_member_by_member(&locs, di, dj);
            let got = shifted(&Value::indices(locs.clone()), di, dj);
            // The same locations as an object's cells, of one colour.
            let cells = |locs: &[Loc]| locs.iter().map(|l| Cell { color: 3, i: l.i, j: l.j }).collect::<Vec<_>>();
            let got_object = shifted(&Value::object(cells(&locs)), di, dj);
            match (got, got_object, expected) {
                (Ok(v), Ok(o), Ok(e)) => {
                    prop_assert_eq!(o, Value::object(cells(&e)));
                    prop_assert_eq!(v, Value::indices(e));
                }
                (Err(g), Err(o), Err(e)) => {
                    prop_assert_eq!(o.to_string(), e.to_string());
                    prop_assert_eq!(g.to_string(), e.to_string());
                }
                (g, o, e) => prop_assert!(false, "shifted gave {:?} and {:?}, member by member {:?}", g, o, e),
            }
        }
    }
}
