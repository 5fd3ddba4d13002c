//! Grid primitives and patch geometry: rotations and mirrors (of patches too), painting
//! (`fill`, `paint`, `cover`, `move`, ...), scaling, concatenation and splitting, cropping
//! (`subgrid`, `trim`, halves), colour substitution, `canvas`, `index`, frontiers and `compress`,
//! `occurrences`; and what is built from bounding boxes and lines (`center`, `position`,
//! `corners`, `backdrop`, `delta`, `inbox`, `outbox`, `box`, `connect`, `shoot`, the frontier
//! lines, `gravitate`, `hperiod`/`vperiod`).
//!
//! Grids are built flat, cell by cell; a grid without rows is the empty tuple. Where the
//! reference works on any tuple (`hmirror`, `vmirror`, `vconcat`, the halves), other tuples
//! take a generic path. A patch is read once as sorted locations or cells ([`Patch`]) and its
//! bounding box found without building index sets ([`Bounds`]). `occurrences` is hot: it matches
//! an object against the grid one row of candidate positions at a time, with one bit mask per
//! colour and row.

use std::ops::Range;

use crate::bail;
use crate::dsl::error::{DslError, DslResult};
use crate::dsl::exact::try_collect;
use crate::dsl::memory;
use crate::dsl::points::{self, Mirror};
use crate::dsl::registry::{PrimSpec, Ty};
use crate::dsl::shared::{Shared, SliceRef};
use crate::dsl::value::{Cell, Color, Grid, GridRef, GridView, Loc, Value};
use crate::prim;

use super::common::{self, coord, MemberLimit, MAX_GRID_CELLS, MAX_MEMBERS, MEMBER_BYTES};
use super::generic;
use super::patches::{is_own_indices, piece_center, piece_shape, toindices_of, ulcorner_of};
use super::rows;

pub const PRIMS: &[PrimSpec] = &[
    prim!(rot90, [Grid] -> Grid, "quarter clockwise rotation"),
    prim!(rot180, [Grid] -> Grid, "half rotation"),
    prim!(rot270, [Grid] -> Grid, "quarter anticlockwise rotation"),
    prim!(hmirror, [Piece] -> Piece, "mirror along the horizontal (upside down)"),
    prim!(vmirror, [Piece] -> Piece, "mirror along the vertical (left to right)"),
    prim!(dmirror, [Piece] -> Piece, "mirror along the diagonal (transpose)"),
    prim!(cmirror, [Piece] -> Piece, "mirror along the counterdiagonal"),
    prim!(fill, [Grid, Integer, Patch] -> Grid, "write a colour at the patch's locations"),
    prim!(paint, [Grid, Object] -> Grid, "write an object's cells onto a grid"),
    prim!(underfill, [Grid, Integer, Patch] -> Grid, "fill only where the grid has its background colour"),
    prim!(underpaint, [Grid, Object] -> Grid, "paint only where the grid has its background colour"),
    prim!(hupscale, [Grid, Integer] -> Grid, "repeat each cell horizontally"),
    prim!(vupscale, [Grid, Integer] -> Grid, "repeat each row vertically"),
    prim!(upscale, [Element, Integer] -> Element, "scale a grid or an object up by a factor"),
    prim!(downscale, [Grid, Integer] -> Grid, "keep every factor-th row and column"),
    prim!(hconcat, [Grid, Grid] -> Grid, "grids side by side"),
    prim!(vconcat, [Grid, Grid] -> Grid, "grids one above the other"),
    prim!(subgrid, [Patch, Grid] -> Grid, "the grid cropped to the patch's bounding box"),
    prim!(hsplit, [Grid, Integer] -> Tuple, "split into n grids side by side"),
    prim!(vsplit, [Grid, Integer] -> Tuple, "split into n grids one above the other"),
    prim!(cellwise, [Grid, Grid, Integer] -> Grid, "keep cells where two grids agree, else the fallback"),
    prim!(replace, [Grid, Integer, Integer] -> Grid, "replace one colour by another"),
    prim!(switch, [Grid, Integer, Integer] -> Grid, "swap two colours"),
    prim!(center, [Patch] -> IntegerTuple, "centre of the bounding box (the lower or right middle for even sizes)"),
    prim!(position, [Patch, Patch] -> IntegerTuple, "direction from the first patch's centre to the second's"),
    prim!(index, [Grid, IntegerTuple] -> Integer, "colour at a location, None outside the grid"),
    prim!(canvas, [Integer, IntegerTuple] -> Grid, "grid of one colour with the given dimensions"),
    prim!(corners, [Patch] -> Indices, "the four corners of the bounding box"),
    prim!(connect, [IntegerTuple, IntegerTuple] -> Indices, "straight or diagonal line between two points, else empty"),
    prim!(cover, [Grid, Patch] -> Grid, "fill the patch with the background colour"),
    prim!(trim, [Grid] -> Grid, "the grid without its border"),
    PrimSpec {
        name: "move",
        params: &[Ty::Grid, Ty::Object, Ty::IntegerTuple],
        ret: Ty::Grid,
        imp: move_object,
        doc: "cover an object and paint it back shifted by an offset",
        mapping: None,
    },
    prim!(tophalf, [Grid] -> Grid, "upper half (the middle row of an odd height left out)"),
    prim!(bottomhalf, [Grid] -> Grid, "lower half (the middle row of an odd height left out)"),
    prim!(lefthalf, [Grid] -> Grid, "left half (the middle column of an odd width left out)"),
    prim!(righthalf, [Grid] -> Grid, "right half (the middle column of an odd width left out)"),
    prim!(vfrontier, [IntegerTuple] -> Indices, "the column through a location, rows 0..29"),
    prim!(hfrontier, [IntegerTuple] -> Indices, "the row through a location, columns 0..29"),
    prim!(backdrop, [Patch] -> Indices, "every location of the bounding box"),
    prim!(delta, [Patch] -> Indices, "locations of the bounding box not in the patch"),
    prim!(gravitate, [Patch, Patch] -> IntegerTuple, "offset that moves the source until adjacent to the destination"),
    prim!(inbox, [Patch] -> Indices, "outline one cell inside the bounding box"),
    prim!(outbox, [Patch] -> Indices, "outline one cell outside the bounding box"),
    PrimSpec {
        name: "box",
        params: &[Ty::Patch],
        ret: Ty::Indices,
        imp: outline_box,
        doc: "outline of the bounding box",
        mapping: None,
    },
    prim!(shoot, [IntegerTuple, IntegerTuple] -> Indices, "connect(start, start + 42 * direction)"),
    prim!(occurrences, [Grid, Object] -> Indices, "upper left corners of the places where an object appears"),
    prim!(frontiers, [Grid] -> Objects, "the rows and columns of a single colour, as objects"),
    prim!(compress, [Grid] -> Grid, "the grid without its single-coloured rows and columns"),
    prim!(hperiod, [Object] -> Integer, "smallest horizontal period of an object"),
    prim!(vperiod, [Object] -> Integer, "smallest vertical period of an object"),
];

// ----- building grids ------------------------------------------------------------------------

/// A grid of `h` rows of `w` cells; without rows, the empty tuple.
fn grid_value(h: usize, w: usize, cells: Vec<Color>) -> Value {
    if h == 0 {
        Value::empty_tuple()
    } else {
        Value::grid(Grid::new(h, w, cells))
    }
}

/// The grid whose cell `(r, c)` is `src(r, c)`.
fn build(h: usize, w: usize, src: impl Fn(usize, usize) -> Color) -> Value {
    let mut cells = Vec::with_capacity(h * w);
    for r in 0..h {
        for c in 0..w {
            cells.push(src(r, c));
        }
    }
    grid_value(h, w, cells)
}

/// The grid of `h` rows of `w` cells whose row `r` is what `row(r, cells)` appends to the
/// cells before it: whole rows copied at a time, where [`build`] takes a cell at a time.
fn build_rows(h: usize, w: usize, mut row: impl FnMut(usize, &mut Vec<Color>)) -> Value {
    let mut cells = Vec::with_capacity(h * w);
    for r in 0..h {
        row(r, &mut cells);
    }
    debug_assert_eq!(cells.len(), h * w);
    grid_value(h, w, cells)
}

/// `tuple(r[cols] for r in grid[rows])` for ranges inside the grid.
fn crop(g: &Grid, rows: Range<usize>, cols: Range<usize>) -> Value {
    let g = g.view();
    build_rows(rows.len(), cols.len(), |r, cells| {
        cells.extend_from_slice(&g.row(rows.start + r)[cols.clone()]);
    })
}

/// The shape of `zip(*grid)`: columns become rows, and a grid without rows or columns gives
/// nothing.
fn transposed(g: GridView<'_>) -> (usize, usize) {
    if g.h == 0 || g.w == 0 {
        (0, 0)
    } else {
        (g.w, g.h)
    }
}

/// `len(grid[0])`, which raises on a grid without rows.
fn first_row_width(g: &Grid) -> DslResult<usize> {
    has_rows(g.h)?;
    Ok(g.w)
}

/// The `IndexError` of `grid[0]` on a grid without rows.
fn has_rows(h: usize) -> DslResult<()> {
    if h == 0 {
        bail!(Index, "tuple index out of range");
    }
    Ok(())
}

/// A colour to store in a cell.
fn to_color(n: i64) -> DslResult<Color> {
    Color::try_from(n).map_err(|_| DslError::ColorRange(n.to_string().into()))
}

fn zero_division() -> DslError {
    DslError::ZeroDivision("integer division or modulo by zero".into())
}

/// A scale factor; factors below 1 repeat nothing.
fn factor(v: &Value) -> DslResult<usize> {
    Ok(usize::try_from(v.as_int()?.max(0)).unwrap_or(usize::MAX))
}

// ----- patches -------------------------------------------------------------------------------

/// A patch as the reference walks it: cells `(value, (i, j))` when its first member's second
/// item is a tuple, locations `(i, j)` otherwise. All are sorted and unique (set semantics).
pub(super) enum Patch<'a> {
    Locs(SliceRef<'a, Loc>),
    Cells(SliceRef<'a, Cell>),
    /// Cells with a colour no [`Cell`] holds (`None`, say): the simple path of `Cells`.
    AnyCells(Vec<(Value, Loc)>),
}

impl Patch<'_> {
    /// The patch an index set or object is, inlined; any other value read out of line.
    #[inline]
    pub(super) fn of(v: &Value) -> DslResult<Patch<'_>> {
        match v {
            Value::Indices(l) => Ok(Patch::Locs(SliceRef::Held(l))),
            Value::Object(c) => Ok(Patch::Cells(SliceRef::Held(c))),
            _ => Patch::of_members(v),
        }
    }

    /// [`Patch::of`] a container of locations or cells that is not an index set or object.
    #[inline(never)]
    fn of_members(v: &Value) -> DslResult<Patch<'_>> {
        if !v.member(0).and_then(|m| m.member(1)).is_some_and(|x| x.is_tuple()) {
            return Ok(Patch::Locs(common::locs(v)?));
        }
        Ok(match common::cells(v) {
            Err(DslError::ColorRange(_)) => Patch::AnyCells(common::any_cells(v)?),
            cells => Patch::Cells(cells?),
        })
    }

    /// The bounding box, or `None` for an empty patch.
    pub(super) fn bounds(&self) -> Option<Bounds> {
        match self {
            Patch::Locs(l) => Bounds::of_locs(l),
            Patch::Cells(c) => Bounds::of_cells(c),
            Patch::AnyCells(c) => Bounds::of(c.iter().map(|(_, l)| (l.i, l.j))),
        }
    }

    /// The patch with every location moved by `f`; cells keep their colour.
    pub(super) fn map(&self, f: impl Fn(i64, i64) -> (i64, i64)) -> DslResult<Value> {
        self.moved(f, None)
    }

    /// [`Patch::map`] of `f`, a mirror of kind `mirror`: its members are put in order without
    /// comparisons ([`points::sort_mirrored`]).
    fn mirrored(&self, mirror: Mirror, f: impl Fn(i64, i64) -> (i64, i64)) -> DslResult<Value> {
        self.moved(f, Some(mirror))
    }

    /// The patch with every location moved by `f`, `mirror` where `f` is one; the first error
    /// (a coordinate out of range) in the patch's order.
    fn moved(&self, f: impl Fn(i64, i64) -> (i64, i64), mirror: Option<Mirror>) -> DslResult<Value> {
        match self {
            Patch::Locs(l) => {
                let moved = l.iter().map(|l| {
                    let (i, j) = f(l.i.into(), l.j.into());
                    loc(i, j)
                });
                let mut moved = try_collect(moved)?;
                put_in_order(&mut moved, mirror);
                Ok(Value::indices_sorted(moved))
            }
            Patch::Cells(c) => {
                let moved = c.iter().map(|c| {
                    let (i, j) = f(c.i.into(), c.j.into());
                    let l = loc(i, j)?;
                    Ok(Cell {
                        color: c.color,
                        i: l.i,
                        j: l.j,
                    })
                });
                let mut moved = try_collect(moved)?;
                put_in_order(&mut moved, mirror);
                Ok(Value::object_sorted(moved))
            }
            Patch::AnyCells(c) => {
                let moved = c.iter().map(|(color, l)| {
                    let (i, j) = f(l.i.into(), l.j.into());
                    Ok(Value::duo(color.clone(), Value::loc(loc(i, j)?)))
                });
                Ok(Value::set(try_collect(moved)?))
            }
        }
    }
}

/// A patch's points moved one by one (in the patch's order) put in canonical order: as the
/// mirror that moved them reorders them, or sorted.
fn put_in_order<P: points::Point>(moved: &mut Vec<P>, mirror: Option<Mirror>) {
    match mirror {
        Some(mirror) => points::sort_mirrored(moved, mirror),
        None => points::sort_dedup(moved),
    }
}

/// The inclusive bounding box of a non-empty patch, in `i64` so that arithmetic on it (mirrors,
/// boxes one cell outside) cannot overflow. The one box every primitive computes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    pub(super) top: i64,
    pub(super) bottom: i64,
    pub(super) left: i64,
    pub(super) right: i64,
}

impl Bounds {
    /// The box of points in any order, `None` for none.
    pub(super) fn of(mut points: impl Iterator<Item = (i32, i32)>) -> Option<Bounds> {
        let (i, j) = points.next()?;
        let mut b = Bounds {
            top: i.into(),
            bottom: i.into(),
            left: j.into(),
            right: j.into(),
        };
        for (i, j) in points {
            let (i, j) = (i64::from(i), i64::from(j));
            b.top = b.top.min(i);
            b.bottom = b.bottom.max(i);
            b.left = b.left.min(j);
            b.right = b.right.max(j);
        }
        Some(b)
    }

    /// The box of locations sorted by row, then column (an index set's): the rows are the
    /// first's and the last's, and only the columns are scanned.
    pub(super) fn of_locs(locs: &[Loc]) -> Option<Bounds> {
        let (first, last) = (locs.first()?, locs.last()?);
        Some(Bounds::of_rows_and_columns((first.i, last.i), locs.iter().map(|l| l.j)))
    }

    /// The box of cells sorted by colour, row and column (an object's): where the first and
    /// the last are of one colour, so are all, and the rows are sorted as an index set's.
    pub(super) fn of_cells(cells: &[Cell]) -> Option<Bounds> {
        let (first, last) = (cells.first()?, cells.last()?);
        if first.color != last.color {
            return Bounds::of(cells.iter().map(|c| (c.i, c.j)));
        }
        Some(Bounds::of_rows_and_columns(
            (first.i, last.i),
            cells.iter().map(|c| c.j),
        ))
    }

    /// The box from rows `top..=bottom` and the lowest and highest of `columns` (not empty).
    fn of_rows_and_columns((top, bottom): (i32, i32), mut columns: impl Iterator<Item = i32>) -> Bounds {
        let first = columns.next().unwrap_or_default();
        let (left, right) = columns.fold((first, first), |(lo, hi), j| (lo.min(j), hi.max(j)));
        Bounds {
            top: top.into(),
            bottom: bottom.into(),
            left: left.into(),
            right: right.into(),
        }
    }

    pub(super) fn height(&self) -> i64 {
        self.bottom - self.top + 1
    }

    pub(super) fn width(&self) -> i64 {
        self.right - self.left + 1
    }

    /// Every location of the box, row by row (sorted).
    fn locations(&self) -> DslResult<Vec<Loc>> {
        let n = capped(i128::from(self.height()) * i128::from(self.width()))?;
        let mut out = Vec::with_capacity(n);
        for i in self.top..=self.bottom {
            for j in self.left..=self.right {
                out.push(loc(i, j)?);
            }
        }
        Ok(out)
    }
}

/// A location from wide coordinates; past `i32` is [`DslError::TooLarge`].
fn loc(i: i64, j: i64) -> DslResult<Loc> {
    Ok(Loc {
        i: coord(i)?,
        j: coord(j)?,
    })
}

/// A count of members to build, checked against [`MAX_MEMBERS`] (negative counts build nothing).
#[inline]
pub(super) fn capped(n: i128) -> DslResult<usize> {
    match usize::try_from(n.max(0)) {
        Ok(n) if n <= MAX_MEMBERS => {
            memory::room_for(n * MEMBER_BYTES, || format!("a container of {n} members"))?;
            Ok(n)
        }
        _ => Err(too_many_members(n)),
    }
}

#[cold]
#[inline(never)]
fn too_many_members(n: i128) -> DslError {
    DslError::TooLarge(format!("{n} members").into())
}

/// A grid's cell count, checked against [`MAX_GRID_CELLS`], or against a search's size budget
/// when one is in force ([`MemberLimit`]).
fn capped_cells(n: i128) -> DslResult<usize> {
    let limit = match MemberLimit::get() {
        budget if budget < MAX_MEMBERS => budget,
        _ => MAX_GRID_CELLS,
    };
    match usize::try_from(n.max(0)) {
        Ok(n) if n <= limit => {
            memory::room_for(n * size_of::<Color>(), || format!("a grid of {n} cells"))?;
            Ok(n)
        }
        _ => Err(DslError::TooLarge(format!("a grid of {n} cells").into())),
    }
}

/// The error of the reference's `min()`/`max()` over the locations of an empty patch.
fn empty_patch() -> DslError {
    DslError::Value("min() arg is an empty sequence".into())
}

/// The bounding box of a patch argument that must not be empty.
fn nonempty_bounds(v: &Value) -> DslResult<Bounds> {
    Patch::of(v)?.bounds().ok_or_else(empty_patch)
}

// ----- rotations and mirrors -----------------------------------------------------------------

// The grid cases work on a borrowed grid and are public: each is also the lane function of the
// batched `transform` (`batch::cpu`).

/// `rot90` of a grid.
pub fn rot90_of(g: GridView<'_>) -> Value {
    let (h, w) = transposed(g);
    build_rows(h, w, |r, cells| cells.extend(column(g, r).rev()))
}

/// `rot180` of a grid.
pub fn rot180_of(g: GridView<'_>) -> Value {
    grid_value(g.h, g.w, g.cells.iter().rev().copied().collect())
}

/// `rot270` of a grid.
pub fn rot270_of(g: GridView<'_>) -> Value {
    let (h, w) = transposed(g);
    build_rows(h, w, |r, cells| cells.extend(column(g, g.w - 1 - r)))
}

/// `hmirror` of a grid.
pub fn hmirror_of(g: GridView<'_>) -> Value {
    build_rows(g.h, g.w, |r, cells| cells.extend_from_slice(g.row(g.h - 1 - r)))
}

/// `vmirror` of a grid.
pub fn vmirror_of(g: GridView<'_>) -> Value {
    build_rows(g.h, g.w, |r, cells| cells.extend(g.row(r).iter().rev()))
}

/// `dmirror` of a grid.
pub fn dmirror_of(g: GridView<'_>) -> Value {
    let (h, w) = transposed(g);
    build_rows(h, w, |r, cells| cells.extend(column(g, r)))
}

/// `cmirror` of a grid.
pub fn cmirror_of(g: GridView<'_>) -> Value {
    let (h, w) = transposed(g);
    build_rows(h, w, |r, cells| cells.extend(column(g, g.w - 1 - r).rev()))
}

/// Column `j` of a grid, top to bottom: an exact-size iterator, which a transposing
/// transform's rows extend from without a bounds check or a growth check per cell.
fn column(g: GridView<'_>, j: usize) -> impl DoubleEndedIterator<Item = Color> + ExactSizeIterator + '_ {
    g.cells[j..].iter().step_by(g.w).copied()
}

fn rot90(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(&a[0], |g| Ok(rot90_of(g.view())), |r| Ok(rows::rot90(r)))
}

fn rot180(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(&a[0], |g| Ok(rot180_of(g.view())), |r| Ok(rows::rot180(r)))
}

fn rot270(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(&a[0], |g| Ok(rot270_of(g.view())), |r| Ok(rows::rot270(r)))
}

/// `t[::-1]` for any tuple: a grid's rows, a pair's members.
fn reversed(t: &Value) -> DslResult<Value> {
    match t {
        Value::Grid(g) => Ok(hmirror_of(g.view())),
        Value::Pair(x, y) => Ok(Value::Pair(*y, *x)),
        Value::Ints(items) => Ok(Value::ints(&items.iter().rev().copied().collect::<Vec<_>>())),
        t if t.is_tuple() => Ok(Value::tuple(
            t.members().unwrap_or_default().into_iter().rev().collect(),
        )),
        _ => Err(DslError::type_error("a tuple", t)),
    }
}

/// The error of the reference's `ulcorner(patch)[0]` on an empty patch.
fn corner_of_empty() -> DslError {
    DslError::Index("tuple index out of range".into())
}

fn hmirror(a: &[Value]) -> DslResult<Value> {
    if a[0].is_tuple() {
        return reversed(&a[0]);
    }
    let p = Patch::of(&a[0])?;
    let b = p.bounds().ok_or_else(corner_of_empty)?;
    let d = b.top + b.bottom;
    p.mirrored(Mirror::Rows, |i, j| (d - i, j))
}

fn vmirror(a: &[Value]) -> DslResult<Value> {
    match &a[0] {
        Value::Grid(g) => Ok(vmirror_of(g.view())),
        t if t.is_tuple() => {
            let rows = t.members().unwrap_or_default();
            Ok(Value::tuple(rows.iter().map(reversed).collect::<DslResult<_>>()?))
        }
        piece => {
            let p = Patch::of(piece)?;
            let b = p.bounds().ok_or_else(corner_of_empty)?;
            let d = b.left + b.right;
            p.mirrored(Mirror::Columns, |i, j| (i, d - j))
        }
    }
}

fn dmirror(a: &[Value]) -> DslResult<Value> {
    if a[0].is_tuple() {
        return rows::on_grid(&a[0], |g| Ok(dmirror_of(g.view())), |r| Ok(rows::dmirror(r)));
    }
    let p = Patch::of(&a[0])?;
    let b = p
        .bounds()
        .ok_or_else(|| DslError::Value("not enough values to unpack (expected 2, got 0)".into()))?;
    p.mirrored(Mirror::Diagonal, |i, j| (j - b.left + b.top, i - b.top + b.left))
}

fn cmirror(a: &[Value]) -> DslResult<Value> {
    if a[0].is_tuple() {
        return rows::on_grid(&a[0], |g| Ok(cmirror_of(g.view())), |r| Ok(rows::cmirror(r)));
    }
    // The reference's vmirror(dmirror(vmirror(piece))), composed.
    let p = Patch::of(&a[0])?;
    let b = p.bounds().ok_or_else(corner_of_empty)?;
    p.mirrored(Mirror::Counterdiagonal, |i, j| {
        (b.top + b.right - j, b.left + b.bottom - i)
    })
}

// ----- painting ------------------------------------------------------------------------------

/// Writes `(i, j, colour)` items onto the grid, skipping locations outside it; with `under`,
/// only onto cells that hold that colour at the time of writing.
fn write(g: &mut Grid, items: impl Iterator<Item = (i64, i64, i64)>, under: Option<Color>) -> DslResult<()> {
    for (i, j, v) in items {
        if let Some(cell) = writable(g, i as usize, j as usize, under) {
            *cell = to_color(v)?;
        }
    }
    Ok(())
}

/// [`write`] of items whose coordinates and colours are a grid's types already: nothing to
/// convert or check per item (a fill's one colour is checked once, by its caller).
fn write_colors(g: &mut Grid, items: impl Iterator<Item = (i32, i32, Color)>, under: Option<Color>) {
    for (i, j, color) in items {
        if let Some(cell) = writable(g, i as usize, j as usize, under) {
            *cell = color;
        }
    }
}

/// The cell at `(i, j)` where it lies in `g` and, with `under`, holds that colour: the cells
/// [`write`] and [`write_colors`] change. A negative coordinate, cast, is a huge one, outside
/// the grid.
#[inline]
fn writable(g: &mut Grid, i: usize, j: usize, under: Option<Color>) -> Option<&mut Color> {
    if i >= g.h || j >= g.w {
        return None;
    }
    let cell = &mut g.cells[i * g.w + j];
    under.map_or(true, |bg| *cell == bg).then_some(cell)
}

/// A copy of a grid with items written on it (see [`write_colors`]).
fn written_colors(g: GridView<'_>, items: impl Iterator<Item = (i32, i32, Color)>, under: Option<Color>) -> Value {
    let mut out = g.to_grid();
    write_colors(&mut out, items, under);
    Value::grid(out)
}

/// `value` written at each of `locs` (see [`write`]): through [`write_colors`] where it is a
/// colour; otherwise the general path raises at the first location inside the grid, as the
/// reference's assignment would.
fn filled(g: GridView<'_>, locs: &[Loc], value: i64, under: Option<Color>) -> DslResult<Value> {
    match Color::try_from(value) {
        Ok(color) => Ok(written_colors(g, locs.iter().map(|l| (l.i, l.j, color)), under)),
        Err(_) => written(g, at_locations(locs, value), under),
    }
}

/// The cells of an object as [`write_colors`] takes them.
fn cell_items(cells: &[Cell]) -> impl Iterator<Item = (i32, i32, Color)> + '_ {
    cells.iter().map(|c| (c.i, c.j, c.color))
}

/// `(i, j, value)` for each location of a patch.
fn at_locations<'a, T: Clone + 'a>(locs: &'a [Loc], value: T) -> impl Iterator<Item = (i64, i64, T)> + 'a {
    locs.iter().map(move |l| (l.i.into(), l.j.into(), value.clone()))
}

/// `(i + di, j + dj, colour)` for each cell `(colour, (i, j))` of an object.
fn shifted<T>(cells: impl Iterator<Item = (T, Loc)>, di: i64, dj: i64) -> impl Iterator<Item = (i64, i64, T)> {
    cells.map(move |(color, l)| {
        (
            i64::from(l.i).saturating_add(di),
            i64::from(l.j).saturating_add(dj),
            color,
        )
    })
}

/// [`shifted`] of compact cells.
fn shifted_cells(cells: &[Cell], di: i64, dj: i64) -> impl Iterator<Item = (i64, i64, i64)> + '_ {
    shifted(cells.iter().map(|c| (i64::from(c.color), c.loc())), di, dj)
}

/// A colour argument as the fast paths take it: an integer (bools count), else
/// [`DslError::ColorRange`], so that [`rows::on_grid`] hands the call to the simple path.
fn fast_color(v: &Value) -> DslResult<i64> {
    v.as_int().map_err(|_| DslError::ColorRange(v.repr_cut(80).into()))
}

/// The cells of an object in the reference's iteration order: a tuple's own order (duplicates
/// kept), a set's canonical order.
fn cells_in_order(obj: &Value) -> DslResult<SliceRef<'_, Cell>> {
    match obj {
        Value::Tuple(items) => Ok(SliceRef::Built(common::member_cells(items)?)),
        Value::Ints(_) | Value::LocPair(..) | Value::CellPair(..) => Ok(SliceRef::Built(common::member_cells(
            &obj.members().unwrap_or_default(),
        )?)),
        _ => common::cells(obj),
    }
}

/// The grid of `fill`/`paint` and their `under` variants, and the background only those
/// variants write over.
fn target_grid(g: &Grid, under: bool) -> DslResult<Option<Color>> {
    first_row_width(g)?;
    if under {
        Ok(Some(common::background(&g.cells)?))
    } else {
        Ok(None)
    }
}

/// `fill` and `underfill`; ragged rows and wider colours on the simple path.
fn fill_patch(a: &[Value], under: bool) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            let bg = target_grid(g, under)?;
            let value = fast_color(&a[1])?;
            // One colour written at each location (where `underfill` finds the background):
            // a location met again writes what its first meeting wrote, or nothing, so their
            // order and repeats change nothing (and `cover`'s likewise).
            let locs = common::locs_in_any_order(&a[2])?;
            filled(g.view(), &locs, value, bg)
        },
        |r| {
            let locs = common::locs(&a[2])?;
            rows::write(r, at_locations(&locs, a[1].clone()), under)
        },
    )
}

/// `paint` and `underpaint`: the last write to a cell wins; ragged rows and wider colours on the
/// simple path.
fn paint_object(a: &[Value], under: bool) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            let bg = target_grid(g, under)?;
            let cells = cells_in_order(&a[1])?;
            Ok(written_colors(g.view(), cell_items(&cells), bg))
        },
        |r| rows::write(r, shifted(common::any_cells_in_order(&a[1])?.into_iter(), 0, 0), under),
    )
}

/// A copy of a grid with items written on it (see [`write`]).
fn written(g: GridView<'_>, items: impl Iterator<Item = (i64, i64, i64)>, under: Option<Color>) -> DslResult<Value> {
    let mut out = g.to_grid();
    write(&mut out, items, under)?;
    Ok(Value::grid(out))
}

/// `fill(grid, value, patch)` given the patch's locations, on a borrowed grid: the lane
/// function of the batched `fill`.
pub fn fill_of(g: GridView<'_>, value: i64, locs: &[Loc]) -> DslResult<Value> {
    has_rows(g.h)?;
    filled(g, locs, value, None)
}

/// `paint(grid, obj)` given the object's cells in order, on a borrowed grid: the lane function
/// of the batched `paint`.
pub fn paint_of(g: GridView<'_>, cells: &[Cell]) -> DslResult<Value> {
    has_rows(g.h)?;
    Ok(written_colors(g, cell_items(cells), None))
}

fn fill(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[1], Value::Bool(_)),
        || fill_patch(a, false),
        || generic::fill(&a[0], &a[1], &a[2], false),
    )
}

fn underfill(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[1], Value::Bool(_)),
        || fill_patch(a, true),
        || generic::fill(&a[0], &a[1], &a[2], true),
    )
}

fn paint(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(paint_object(a, false), || generic::paint(&a[0], &a[1], false))
}

fn underpaint(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(paint_object(a, true), || generic::paint(&a[0], &a[1], true))
}

/// The grid with the patch filled with the background colour (`cover`), as a grid to paint on,
/// and whether the patch has no locations. (One colour at each location, as for `fill`: their
/// order and repeats change nothing.)
fn covered(g: &Grid, patch: &Value) -> DslResult<(Grid, bool)> {
    let bg = common::background(&g.cells)?;
    let locs = common::locs_in_any_order(patch)?;
    let mut out = g.clone();
    write_colors(&mut out, locs.iter().map(|l| (l.i, l.j, bg)), None);
    Ok((out, locs.is_empty()))
}

fn cover(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(cover_fast(a), || generic::cover(&a[0], &a[1]))
}

fn cover_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| Ok(Value::grid(covered(g, &a[1])?.0)),
        |r| rows::cover(r, || common::locs(&a[1])),
    )
}

/// `move(grid, obj, offset)`: cover the object, then paint it shifted (in the shifted set's
/// order, which is the object's own).
fn move_object(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(move_object_fast(a), || generic::move_object(&a[0], &a[1], &a[2]))
}

fn move_object_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            let (mut out, empty) = covered(g, &a[1])?;
            // `shift` returns an empty patch before reading the offset.
            if !empty {
                // `shift`'s `di, dj = directions`.
                let (di, dj) = a[2].unpack_pair()?;
                let cells = common::cells(&a[1])?;
                write(&mut out, shifted_cells(&cells, di, dj), None)?;
            }
            Ok(Value::grid(out))
        },
        |r| {
            let covered = rows::cover(r, || common::locs(&a[1]))?;
            let cells = common::any_cells(&a[1])?;
            if cells.is_empty() {
                return Ok(covered);
            }
            let (di, dj) = a[2].unpack_pair()?;
            rows::write(&rows::of(&covered)?, shifted(cells.into_iter(), di, dj), false)
        },
    )
}

// ----- scaling -------------------------------------------------------------------------------

/// Each cell repeated `fx` times across and each row `fy` times down. (A zero factor leaves no
/// rows or no columns, so the divisions below never see it.)
fn scaled(g: &Grid, fy: usize, fx: usize) -> DslResult<Value> {
    let h = capped(g.h as i128 * fy as i128)?;
    let w = capped(g.w as i128 * fx as i128)?;
    capped_cells(h as i128 * w as i128)?;
    let g = g.view();
    Ok(build_rows(h, w, |r, cells| {
        if r % fy == 0 {
            for &c in g.row(r / fy) {
                cells.extend(std::iter::repeat(c).take(fx));
            }
        } else {
            // The row above, again.
            cells.extend_from_within(cells.len() - w..);
        }
    }))
}

/// [`scaled`] of a grid, or of the rows of any tuple of integer tuples.
fn scaled_value(v: &Value, fy: usize, fx: usize) -> DslResult<Value> {
    rows::on_grid(
        v,
        |g| scaled(g, fy, fx),
        |r| {
            let cells: i128 = r.iter().map(|r| r.len() as i128).sum();
            capped_cells(cells * fy as i128 * fx as i128)?;
            Ok(rows::scaled(r, fy, fx))
        },
    )
}

fn hupscale(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(hupscale_fast(a), || generic::upscale_rows(&a[0], &a[1], false))
}

fn hupscale_fast(a: &[Value]) -> DslResult<Value> {
    scaled_value(&a[0], 1, factor(&a[1])?)
}

fn vupscale(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(vupscale_fast(a), || generic::upscale_rows(&a[0], &a[1], true))
}

fn vupscale_fast(a: &[Value]) -> DslResult<Value> {
    scaled_value(&a[0], factor(&a[1])?, 1)
}

/// `upscale` of a grid, or of an object about its upper left corner.
fn upscale(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(upscale_fast(a), || generic::upscale(&a[0], &a[1], || upscale_fast(a)))
}

fn upscale_fast(a: &[Value]) -> DslResult<Value> {
    if a[0].is_tuple() {
        let f = factor(&a[1])?;
        return scaled_value(&a[0], f, f);
    }
    let cells = match common::cells(&a[0]) {
        // Colours no `Cell` holds (`None`): only their identity matters, so their ranks scale.
        Err(DslError::ColorRange(_)) => {
            let cells = common::any_cells(&a[0])?;
            let ranks = common::Ranks::of(cells.iter().map(|(v, _)| v));
            return ranks.unrank(&upscaled(&ranks.cells(&cells), &a[1])?);
        }
        cells => cells?,
    };
    upscaled(&cells, &a[1])
}

/// `upscale` of an object's cells about its upper left corner.
fn upscaled(cells: &[Cell], factor_arg: &Value) -> DslResult<Value> {
    let Some(b) = Bounds::of_cells(cells) else {
        return Ok(Value::empty_set());
    };
    let f = factor(factor_arg)?;
    capped(cells.len() as i128 * f as i128 * f as i128)?;
    let f = f as i64;
    let mut out = Vec::with_capacity(cells.len() * (f * f) as usize);
    for c in cells.iter() {
        let (i, j) = (
            b.top + (i64::from(c.i) - b.top) * f,
            b.left + (i64::from(c.j) - b.left) * f,
        );
        for di in 0..f {
            for dj in 0..f {
                let l = loc(i + di, j + dj)?;
                out.push(Cell {
                    color: c.color,
                    i: l.i,
                    j: l.j,
                });
            }
        }
    }
    Ok(Value::object(out))
}

/// `downscale`: the rows and columns whose index is a multiple of the factor (Python's `%`, so
/// a negative factor acts as its absolute value).
fn downscale(a: &[Value]) -> DslResult<Value> {
    let g = match a[0].as_grid() {
        Ok(g) => g,
        Err(_) => return rows::downscale(&rows::of(&a[0])?, a[1].as_int()?),
    };
    let w = first_row_width(&g)?;
    let f = a[1].as_int()?;
    if f == 0 {
        return Err(zero_division());
    }
    let step = usize::try_from(f.unsigned_abs()).unwrap_or(usize::MAX);
    Ok(build(g.h.div_ceil(step), w.div_ceil(step), |r, c| {
        g.get(r * step, c * step)
    }))
}

// ----- concatenation and splitting -----------------------------------------------------------

/// `hconcat`: the reference's `tuple(i + j for i, j in zip(a, b))`: rows joined pairwise, as
/// many as the shorter grid has; on containers of other members, Python's `+` on each pair.
fn hconcat(a: &[Value]) -> DslResult<Value> {
    let (Ok(x), Ok(y)) = (a[0].as_grid(), a[1].as_grid()) else {
        let members = |v: &Value| v.members().ok_or_else(|| DslError::type_error("an iterable", v));
        return rows::hconcat(&members(&a[0])?, &members(&a[1])?);
    };
    let (x, y) = (x.view(), y.view());
    Ok(build_rows(x.h.min(y.h), x.w + y.w, |r, cells| {
        cells.extend_from_slice(x.row(r));
        cells.extend_from_slice(y.row(r));
    }))
}

/// `vconcat`: the reference's `a + b`; a grid when both are grids whose rows agree in width.
fn vconcat(a: &[Value]) -> DslResult<Value> {
    if let (Ok(x), Ok(y)) = (a[0].as_grid(), a[1].as_grid()) {
        if x.h == 0 || y.h == 0 || x.w == y.w {
            let w = if x.h == 0 { y.w } else { x.w };
            return Ok(grid_value(x.h + y.h, w, [&x.cells[..], &y.cells[..]].concat()));
        }
    }
    super::numbers::py_add(&a[0], &a[1])
}

/// The `n` ranges of `hsplit`/`vsplit` along an axis of `len` cells: `len // n` cells each, one
/// cell skipped between parts when `n` does not divide `len`.
fn split_ranges(len: usize, n: i64) -> DslResult<Vec<Range<usize>>> {
    if n == 0 {
        return Err(zero_division());
    }
    let n = capped(n.into())?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let (part, gap) = (len / n, usize::from(len % n != 0));
    Ok((0..n)
        .map(|k| {
            let s = (part + gap) * k;
            s.min(len)..(s + part).min(len)
        })
        .collect())
}

fn hsplit(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(hsplit_fast(a), || generic::split(&a[0], &a[1], false))
}

fn hsplit_fast(a: &[Value]) -> DslResult<Value> {
    let g = match a[0].as_grid() {
        Ok(g) => g,
        Err(_) => return rows::split(&rows::of(&a[0])?, a[1].as_int()?, false),
    };
    let ranges = split_ranges(first_row_width(&g)?, a[1].as_int()?)?;
    Ok(Value::tuple(
        ranges.into_iter().map(|cols| crop(&g, 0..g.h, cols)).collect(),
    ))
}

fn vsplit(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(vsplit_fast(a), || generic::split(&a[0], &a[1], true))
}

fn vsplit_fast(a: &[Value]) -> DslResult<Value> {
    let g = match a[0].as_grid() {
        Ok(g) => g,
        Err(_) => return rows::split(&rows::of(&a[0])?, a[1].as_int()?, true),
    };
    first_row_width(&g)?;
    let ranges = split_ranges(g.h, a[1].as_int()?)?;
    Ok(Value::tuple(
        ranges.into_iter().map(|rows| crop(&g, rows, 0..g.w)).collect(),
    ))
}

// ----- cropping ------------------------------------------------------------------------------

/// `subgrid(patch, grid)`: `crop(grid, ulcorner(patch), shape(patch))`, with Python's slicing:
/// a set's bounding box; a tuple's shape is a grid's (`len(patch)` rows of `len(patch[0])`).
fn subgrid(a: &[Value]) -> DslResult<Value> {
    let (top, left, height, width) = if a[0].is_tuple() {
        let corner = ulcorner_of(&a[0])?;
        let at = |k| corner.member(k).ok_or_else(corner_of_empty)?.as_int();
        let (height, width) = piece_shape(&a[0])?;
        (at(0)?, at(1)?, height, width)
    } else {
        let b = Patch::of(&a[0])?.bounds().ok_or_else(corner_of_empty)?;
        (b.top, b.left, b.height(), b.width())
    };
    let g = match a[1].as_grid() {
        Ok(g) => g,
        Err(_) => return Ok(rows::crop(&rows::of(&a[1])?, (top, left), (height, width))),
    };
    let rows = common::py_slice(g.h, top, top.saturating_add(height));
    let cols = common::py_slice(g.w, left, left.saturating_add(width));
    Ok(crop(&g, rows, cols))
}

fn trim(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(trim_fast(a), || generic::trim(&a[0]))
}

fn trim_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| Ok(crop(g, common::py_slice(g.h, 1, -1), common::py_slice(g.w, 1, -1))),
        |r| Ok(rows::trim(r)),
    )
}

/// `t[range(len(t))]` for any tuple: rows of a grid, members of another tuple.
fn slice_tuple(t: &Value, range: impl Fn(usize) -> Range<usize>) -> DslResult<Value> {
    if let Value::Grid(g) = t {
        return Ok(crop(g, range(g.h), 0..g.w));
    }
    match t.members() {
        Some(items) if t.is_tuple() => Ok(Value::tuple(items[range(items.len())].to_vec())),
        _ => Err(DslError::type_error("a tuple", t)),
    }
}

fn tophalf(a: &[Value]) -> DslResult<Value> {
    slice_tuple(&a[0], |n| 0..n / 2)
}

fn bottomhalf(a: &[Value]) -> DslResult<Value> {
    slice_tuple(&a[0], |n| n / 2 + n % 2..n)
}

/// The columns `cols` of every row; the reference goes through `rot90`/`tophalf`/`rot270`,
/// so no columns give the empty grid rather than rows of width 0.
fn half_columns(g: &Grid, cols: Range<usize>) -> Value {
    if cols.is_empty() {
        Value::empty_tuple()
    } else {
        crop(g, 0..g.h, cols)
    }
}

fn lefthalf(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(&a[0], |g| Ok(half_columns(g, 0..g.w / 2)), |r| Ok(rows::half(r, false)))
}

fn righthalf(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| Ok(half_columns(g, g.w / 2 + g.w % 2..g.w)),
        |r| Ok(rows::half(r, true)),
    )
}

// ----- colours -------------------------------------------------------------------------------

/// Every cell through `f`.
fn recolored(g: &Grid, f: impl Fn(Color) -> DslResult<Color>) -> DslResult<Value> {
    let cells = try_collect(g.cells.iter().map(|&c| f(c)))?;
    Ok(grid_value(g.h, g.w, cells))
}

/// [`recolored`] where no colour can fail: a loop over the cells without a failure to carry
/// (vectorised), where the general one checked a result per cell.
fn substituted(g: &Grid, f: impl Fn(Color) -> Color) -> Value {
    grid_value(g.h, g.w, g.cells.iter().map(|&c| f(c)).collect())
}

fn cellwise(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[2], Value::Bool(_)),
        || cellwise_fast(a),
        || generic::cellwise(&a[0], &a[1], &a[2]),
    )
}

fn cellwise_fast(a: &[Value]) -> DslResult<Value> {
    if let (Ok(x), Ok(y)) = (a[0].as_grid(), a[1].as_grid()) {
        match cellwise_grids(&x, &y, &a[2]) {
            Err(DslError::ColorRange(_)) => {}
            result => return result,
        }
    }
    rows::cellwise(&rows::of(&a[0])?, &rows::of(&a[1])?, &a[2])
}

/// The fast path of `cellwise`.
fn cellwise_grids(x: &Grid, y: &Grid, fallback: &Value) -> DslResult<Value> {
    let w = first_row_width(x)?;
    let fallback = fast_color(fallback)?;
    if w > 0 && (y.h < x.h || y.w < w) {
        bail!(Index, "tuple index out of range");
    }
    let mut cells = Vec::with_capacity(x.h * w);
    for i in 0..x.h {
        for j in 0..w {
            let v = x.get(i, j);
            cells.push(if v == y.get(i, j) { v } else { to_color(fallback)? });
        }
    }
    Ok(grid_value(x.h, w, cells))
}

fn replace(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[2], Value::Bool(_)),
        || replace_fast(a),
        || generic::replace(&a[0], &a[1], &a[2]),
    )
}

fn replace_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            let (from, to) = (fast_color(&a[1])?, fast_color(&a[2])?);
            if let (Ok(from), Ok(to)) = (Color::try_from(from), Color::try_from(to)) {
                return Ok(substituted(g, |c| if c == from { to } else { c }));
            }
            recolored(g, |c| if i64::from(c) == from { to_color(to) } else { Ok(c) })
        },
        |r| Ok(rows::replace(r, &a[1], &a[2])),
    )
}

fn switch(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[1], Value::Bool(_)) || matches!(a[2], Value::Bool(_)),
        || switch_fast(a),
        || generic::switch(&a[0], &a[1], &a[2]),
    )
}

fn switch_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| {
            let (x, y) = (fast_color(&a[1])?, fast_color(&a[2])?);
            if let (Ok(x), Ok(y)) = (Color::try_from(x), Color::try_from(y)) {
                return Ok(substituted(g, |c| match c {
                    c if c == x => y,
                    c if c == y => x,
                    c => c,
                }));
            }
            recolored(g, |c| match i64::from(c) {
                v if v == x => to_color(y),
                v if v == y => to_color(x),
                _ => Ok(c),
            })
        },
        |r| Ok(rows::switch(r, &a[1], &a[2])),
    )
}

/// `index(grid, loc)`: the colour, or `None` outside the grid.
pub(super) fn index(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(!a[1].is_tuple(), || index_fast(a), || generic::index(&a[0], &a[1]))
}

fn index_fast(a: &[Value]) -> DslResult<Value> {
    let (i, j) = a[1].unpack_pair()?;
    rows::on_grid(
        &a[0],
        |g| {
            first_row_width(g)?;
            Ok(g.at(i, j).map_or(Value::None, |c| Value::Int(c.into())))
        },
        |r| rows::index(r, i, j),
    )
}

/// `canvas(value, (h, w))`; a value no grid cell holds gives a plain tuple of tuples.
fn canvas(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        matches!(a[0], Value::Bool(_)),
        || canvas_fast(a),
        || generic::canvas(&a[0], &a[1]),
    )
}

fn canvas_fast(a: &[Value]) -> DslResult<Value> {
    // `dimensions[0]`, `dimensions[1]`: indexed, not unpacked.
    let (rows, cols) = a[1].index_pair()?;
    let (h, w) = (capped(rows.into())?, capped(cols.into())?);
    capped_cells(h as i128 * w as i128)?;
    if h == 0 {
        return Ok(Value::empty_tuple());
    }
    let color = match a[0] {
        Value::Int(v) => Color::try_from(v).ok(),
        _ => None,
    };
    match color {
        Some(c) => Ok(Value::grid(Grid::filled(h, w, c))),
        // Rows of width 0 never look at the value.
        None if w == 0 => Ok(Value::grid(Grid::filled(h, 0, 0))),
        None => Ok(Value::tuple(vec![Value::tuple(vec![a[0].clone(); w]); h])),
    }
}

// ----- frontiers -----------------------------------------------------------------------------

/// For each row, whether it holds exactly one colour (`len(set(row)) == 1`).
fn uniform_rows(g: &Grid) -> Vec<bool> {
    (0..g.h)
        .map(|r| {
            let row = g.row(r);
            row.first().is_some_and(|&c| row.iter().all(|&x| x == c))
        })
        .collect()
}

/// For each column, whether it holds exactly one colour.
fn uniform_columns(g: &Grid) -> Vec<bool> {
    (0..g.w)
        .map(|c| g.h > 0 && (1..g.h).all(|r| g.get(r, c) == g.get(0, c)))
        .collect()
}

/// `frontiers(grid)`: each single-coloured row and column as an object.
fn frontiers(a: &[Value]) -> DslResult<Value> {
    let g = match a[0].as_grid() {
        Ok(g) => g,
        Err(_) => return rows::frontiers(&rows::of(&a[0])?),
    };
    first_row_width(&g)?;
    let cell = |i: usize, j: usize| Cell {
        color: g.get(i, j),
        i: i as i32,
        j: j as i32,
    };
    let (rows, columns) = (uniform_rows(&g), uniform_columns(&g));
    let mut found = Vec::new();
    for i in (0..g.h).filter(|&i| rows[i]) {
        found.push(Value::object((0..g.w).map(|j| cell(i, j)).collect()));
    }
    for j in (0..g.w).filter(|&j| columns[j]) {
        found.push(Value::object((0..g.h).map(|i| cell(i, j)).collect()));
    }
    Ok(Value::set(found))
}

/// `compress(grid)`: the grid without its single-coloured rows and columns.
fn compress(a: &[Value]) -> DslResult<Value> {
    let g = match a[0].as_grid() {
        Ok(g) => g,
        Err(_) => return generic::or_generic(rows::of(&a[0]).map(|r| rows::compress(&r)), || generic::compress(&a[0])),
    };
    let keep = |uniform: Vec<bool>| -> Vec<usize> { (0..uniform.len()).filter(|&k| !uniform[k]).collect() };
    let (rows, cols) = (keep(uniform_rows(&g)), keep(uniform_columns(&g)));
    Ok(build(rows.len(), cols.len(), |r, c| g.get(rows[r], cols[c])))
}

// ----- occurrences ---------------------------------------------------------------------------

/// One cell of a normalised object: its offset from the object's upper left corner and colour.
#[derive(Clone, Copy)]
struct Probe {
    di: usize,
    dj: usize,
    color: Color,
}

/// `occurrences(grid, obj)`: every `(i, j)` such that the object, normalised and shifted by
/// `(i, j)`, matches the grid cell for cell.
///
/// The reference tries the offsets `0..=h - oh` by `0..=w - ow`, where the shifted object always
/// lies inside the grid; so an empty object occurs at every offset of `0..=h` by `0..=w`.
fn occurrences(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        !matches!(a[1], Value::Object(_)),
        || occurrences_fast(a),
        || generic::occurrences(&a[0], &a[1]),
    )
}

fn occurrences_fast(a: &[Value]) -> DslResult<Value> {
    let (g, patch) = match a[0].as_grid() {
        Ok(g) => (g, Patch::of(&a[1])?),
        Err(refused) => {
            let (g, patch) = ranked_occurrence_args(&a[0], &a[1], refused)?;
            (GridRef::Built(g), patch)
        }
    };
    let w = first_row_width(&g)?;
    let Some(b) = patch.bounds() else {
        let everywhere = Bounds {
            top: 0,
            bottom: g.h as i64,
            left: 0,
            right: w as i64,
        };
        return Ok(Value::indices_sorted(everywhere.locations()?));
    };
    // The offsets tried are `shape(obj)`'s (a tuple's is a grid's); past the bounding box's
    // the shifted object leaves the grid and fails the reference's `0 <= a < h` test.
    let (oh, ow) = if a[1].is_tuple() {
        piece_shape(&a[1])?
    } else {
        (b.height(), b.width())
    };
    let h2 = (g.h as i64 - oh).min(g.h as i64 - b.height()) + 1;
    let w2 = (w as i64 - ow).min(w as i64 - b.width()) + 1;
    if h2 <= 0 || w2 <= 0 {
        return Ok(Value::indices_sorted(Vec::new()));
    }
    let cells = match patch {
        Patch::Cells(cells) => cells,
        // A colour no cell of a compact grid holds equals none of them: no occurrence.
        Patch::AnyCells(_) => return Ok(Value::indices_sorted(Vec::new())),
        Patch::Locs(_) => return Err(DslError::type_error("an object (cells (value, (i, j)))", &a[1])),
    };
    let mut probes = Vec::with_capacity(cells.len());
    for c in cells.iter() {
        let color = c.color;
        probes.push(Probe {
            di: (i64::from(c.i) - b.top) as usize,
            dj: (i64::from(c.j) - b.left) as usize,
            color,
        });
    }
    let (h2, w2) = (h2 as usize, w2 as usize);
    let found = if w <= 64 {
        scan_masks(&g, &probes, h2, w2)
    } else {
        scan_cells(&g, &probes, h2, w2)
    };
    Ok(Value::indices_sorted(found))
}

/// `occurrences`' grid and object where the grid is a rectangular tuple of tuples that is no
/// compact grid (a cell is `None`, say): cells and colours as their [`Ranks`](common::Ranks),
/// which `occurrences` compares with `==` only. A ragged grid fails with `refused`.
fn ranked_occurrence_args<'o>(grid: &Value, obj: &'o Value, refused: DslError) -> DslResult<(Shared<Grid>, Patch<'o>)> {
    let rows = rows::of(grid)?;
    let w = rows.first().map_or(0, Vec::len);
    if rows.iter().any(|r| r.len() != w) {
        return Err(refused);
    }
    let patch = Patch::of(obj)?;
    let any_cells = match &patch {
        Patch::Cells(c) => c.iter().map(|c| (Value::Int(c.color.into()), c.loc())).collect(),
        Patch::AnyCells(c) => c.clone(),
        Patch::Locs(_) => Vec::new(),
    };
    let ranks = common::Ranks::of(rows.iter().flatten().chain(any_cells.iter().map(|(v, _)| v)));
    let cells = rows.iter().flatten().map(|v| ranks.rank(v)).collect();
    let ranked = match patch {
        Patch::Locs(l) => Patch::Locs(l),
        _ => Patch::Cells(SliceRef::Built(ranks.cells(&any_cells))),
    };
    Ok((Shared::new(Grid::new(rows.len(), w, cells)), ranked))
}

/// Matches probes against a grid at most 64 wide: per colour, a bit mask of each row's cells
/// of that colour; a row of candidate offsets is one word, narrowed probe by probe.
fn scan_masks(g: &Grid, probes: &[Probe], h2: usize, w2: usize) -> Vec<Loc> {
    let mut colors: Vec<Color> = probes.iter().map(|p| p.color).collect();
    colors.sort_unstable();
    colors.dedup();
    // masks[k * h + r]: bit j set where row r holds colors[k].
    let mut masks = vec![0u64; colors.len() * g.h];
    for (k, &color) in colors.iter().enumerate() {
        for r in 0..g.h {
            masks[k * g.h + r] = common::of_color(g.row(r), color);
        }
    }
    // Per probe: where its colour's masks start, moved down by its row offset; its column offset.
    let probes: Vec<(usize, usize)> = probes
        .iter()
        .map(|p| (colors.partition_point(|&c| c < p.color) * g.h + p.di, p.dj))
        .collect();
    let all = u64::MAX >> (64 - w2);
    let mut found = Vec::new();
    for i in 0..h2 {
        let mut candidates = all;
        for &(row, dj) in &probes {
            candidates &= masks[row + i] >> dj;
            if candidates == 0 {
                break;
            }
        }
        while candidates != 0 {
            found.push(Loc {
                i: i as i32,
                j: candidates.trailing_zeros() as i32,
            });
            candidates &= candidates - 1;
        }
    }
    found
}

/// Matches probes cell by cell, for grids too wide for [`scan_masks`].
fn scan_cells(g: &Grid, probes: &[Probe], h2: usize, w2: usize) -> Vec<Loc> {
    let offsets: Vec<(usize, Color)> = probes.iter().map(|p| (p.di * g.w + p.dj, p.color)).collect();
    let mut found = Vec::new();
    for i in 0..h2 {
        for j in 0..w2 {
            let base = i * g.w + j;
            if offsets.iter().all(|&(o, color)| g.cells[base + o] == color) {
                found.push(Loc {
                    i: i as i32,
                    j: j as i32,
                });
            }
        }
    }
    found
}

// ----- centres and boxes ---------------------------------------------------------------------

/// `center(patch)`.
pub(super) fn center(a: &[Value]) -> DslResult<Value> {
    let (i, j) = piece_center(&a[0])?;
    Ok(Value::Pair(i, j))
}

/// 1 when `to` is past `from`, else -1: the reference's `1 if from < to else -1`.
fn toward(from: i64, to: i64) -> i64 {
    if from < to {
        1
    } else {
        -1
    }
}

/// `position(a, b)`: the unit step from `a`'s centre towards `b`'s, 0 on an axis where the
/// centres agree (and `(0, -1)` when they coincide).
fn position(a: &[Value]) -> DslResult<Value> {
    // `center(toindices(a))`: a tuple of pairs is its own `toindices`, measured as a grid.
    let (ia, ja) = piece_center(&toindices_of(&a[0])?)?;
    let (ib, jb) = piece_center(&toindices_of(&a[1])?)?;
    Ok(if ia == ib {
        Value::Pair(0, toward(ja, jb))
    } else if ja == jb {
        Value::Pair(toward(ia, ib), 0)
    } else {
        Value::Pair(toward(ia, ib), toward(ja, jb))
    })
}

/// `corners(patch)`: for an empty patch the four corner functions all return `()`.
fn corners(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(corners_fast(a), || generic::corners(&a[0]))
}

fn corners_fast(a: &[Value]) -> DslResult<Value> {
    let Some(b) = Patch::of(&a[0])?.bounds() else {
        return Ok(Value::set(vec![Value::empty_tuple()]));
    };
    Ok(Value::indices(vec![
        loc(b.top, b.left)?,
        loc(b.top, b.right)?,
        loc(b.bottom, b.left)?,
        loc(b.bottom, b.right)?,
    ]))
}

fn backdrop(a: &[Value]) -> DslResult<Value> {
    match Patch::of(&a[0])?.bounds() {
        None => Ok(Value::empty_set()),
        Some(b) => Ok(Value::indices_sorted(b.locations()?)),
    }
}

fn delta(a: &[Value]) -> DslResult<Value> {
    let locs = common::locs(&a[0])?;
    let Some(b) = Bounds::of_locs(&locs) else {
        return Ok(Value::empty_set());
    };
    let backdrop = b.locations()?;
    // `backdrop(patch) - toindices(patch)`: a tuple of pairs is its own `toindices`.
    if is_own_indices(&a[0])? {
        return Err(DslError::mismatch(
            "a frozenset",
            "unsupported operand type(s) for -: 'frozenset' and 'tuple'",
        ));
    }
    let mut inside = locs.iter().peekable();
    let mut out = Vec::with_capacity(backdrop.len().saturating_sub(locs.len()));
    for l in backdrop {
        if inside.next_if_eq(&&l).is_none() {
            out.push(l);
        }
    }
    Ok(Value::indices_sorted(out))
}

/// The outline of the rectangle spanned by two corners, as sorted locations.
fn outline(b: Bounds) -> DslResult<Value> {
    let (si, ei) = (b.top.min(b.bottom), b.top.max(b.bottom));
    let (sj, ej) = (b.left.min(b.right), b.left.max(b.right));
    let n = capped(2 * (i128::from(ei - si + 1) + i128::from(ej - sj + 1)))?;
    let mut out = Vec::with_capacity(n);
    // Where both corners are locations, so is every point between them: none is checked.
    if loc(si, sj).is_ok() && loc(ei, ej).is_ok() {
        push_outline(&mut out, (si, ei), (sj, ej), |i, j| {
            Ok(Loc {
                i: i as i32,
                j: j as i32,
            })
        })?;
    } else {
        push_outline(&mut out, (si, ei), (sj, ej), loc)?;
    }
    Ok(Value::indices_sorted(out))
}

/// Pushes the outline of rows `si..=ei` and columns `sj..=ej` in order, each point made by
/// `point` (which raises for one out of range).
#[inline]
fn push_outline(
    out: &mut Vec<Loc>,
    (si, ei): (i64, i64),
    (sj, ej): (i64, i64),
    point: impl Fn(i64, i64) -> DslResult<Loc>,
) -> DslResult<()> {
    for i in si..=ei {
        if i == si || i == ei {
            for j in sj..=ej {
                out.push(point(i, j)?);
            }
        } else {
            out.push(point(i, sj)?);
            if ej != sj {
                out.push(point(i, ej)?);
            }
        }
    }
    Ok(())
}

/// The bounding box grown by `d` on every side (shrunk for negative `d`; the reference then
/// swaps crossed edges, as [`outline`] does).
fn grown(b: Bounds, d: i64) -> Bounds {
    Bounds {
        top: b.top - d,
        bottom: b.bottom + d,
        left: b.left - d,
        right: b.right + d,
    }
}

fn inbox(a: &[Value]) -> DslResult<Value> {
    outline(grown(nonempty_bounds(&a[0])?, -1))
}

fn outbox(a: &[Value]) -> DslResult<Value> {
    outline(grown(nonempty_bounds(&a[0])?, 1))
}

/// `box(patch)`; an empty patch is returned as it is.
fn outline_box(a: &[Value]) -> DslResult<Value> {
    match Patch::of(&a[0])?.bounds() {
        None => Ok(a[0].clone()),
        Some(b) => outline(b),
    }
}

// ----- lines ---------------------------------------------------------------------------------

/// The reference's `connect`: a horizontal, vertical or diagonal line between two points, or the
/// empty set when they are on none. Wide integers, so `shoot` from any start cannot overflow.
fn line(a: (i128, i128), b: (i128, i128)) -> DslResult<Value> {
    let (si, ei) = (a.0.min(b.0), a.0.max(b.0));
    let (sj, ej) = (a.1.min(b.1), a.1.max(b.1));
    // The first point, the step, and the number of points.
    let (start, step, n) = if a.0 == b.0 {
        ((a.0, sj), (0, 1), ej - sj + 1)
    } else if a.1 == b.1 {
        ((si, a.1), (1, 0), ei - si + 1)
    } else if b.0 - a.0 == b.1 - a.1 {
        ((si, sj), (1, 1), ei - si + 1)
    } else if b.0 - a.0 == a.1 - b.1 {
        ((si, ej), (1, -1), ei - si + 1)
    } else {
        return Ok(Value::empty_set());
    };
    let n = capped(n)?;
    // Both ends in range: so is every point between them (a line is monotone in each axis).
    let end = (start.0 + (n as i128 - 1) * step.0, start.1 + (n as i128 - 1) * step.1);
    let fits = |x: i128| i32::try_from(x).is_ok();
    if n > 0 && [start.0, start.1, end.0, end.1].into_iter().all(fits) {
        let (i, j) = (start.0 as i64, start.1 as i64);
        let (di, dj) = (step.0 as i64, step.1 as i64);
        let point = |k: i64| Loc {
            i: (i + k * di) as i32,
            j: (j + k * dj) as i32,
        };
        return Ok(Value::indices_sorted(Shared::from_iter_at_most(
            n,
            (0..n as i64).map(point),
        )));
    }
    // Otherwise point by point, to raise at the first one out of range.
    let wide =
        |x: i128| i64::try_from(x).map_err(|_| DslError::TooLarge(format!("coordinate {x} is out of range").into()));
    let mut out = Vec::with_capacity(n);
    for k in 0..n as i128 {
        out.push(loc(wide(start.0 + k * step.0)?, wide(start.1 + k * step.1)?)?);
    }
    Ok(Value::indices_sorted(out))
}

/// The most distinct lines [`lines_of`] names before it leaves the pairs to `connect`.
const MAX_LINE_KEYS: usize = 1 << 20;

/// A line named by its two ends as [`line`] orders them (the first the top, or the left on a
/// row): two pairs name the same set of points exactly when their names are equal.
type LineKey = (Loc, Loc);

/// The name of `connect(a, b)`'s line, or `None` for the empty set.
fn line_key(a: Loc, b: Loc) -> Option<LineKey> {
    let (di, dj) = (i64::from(b.i) - i64::from(a.i), i64::from(b.j) - i64::from(a.j));
    let at = |i, j| Loc { i, j };
    let (top, bottom) = (a.i.min(b.i), a.i.max(b.i));
    let (left, right) = (a.j.min(b.j), a.j.max(b.j));
    if di == 0 {
        Some((at(a.i, left), at(a.i, right)))
    } else if dj == 0 {
        Some((at(top, a.j), at(bottom, a.j)))
    } else if di == dj {
        Some((at(top, left), at(bottom, right)))
    } else if di == -dj {
        Some((at(top, right), at(bottom, left)))
    } else {
        None
    }
}

/// The set of `connect(p, q)` over `pairs` of locations: what
/// `prapply(connect, a, b)` of two index sets and `apply(fork(connect, first, last), pairs)`
/// of a set of location pairs make, without building one line per pair (over a colour's cells,
/// each line comes twice and most pairs are on none). The pairs' lines are named
/// ([`LineKey`]), the names sorted and deduplicated, and only the distinct lines built, by
/// [`line`], then made a set as any other. `None` where it leaves the pairs to `connect` one
/// by one, which raises what the reference raises, at the pair where it raises: more than
/// [`MAX_LINE_KEYS`] distinct lines, or a line that fails to build (too long for the budgets).
pub(super) fn lines_of(pairs: impl Iterator<Item = (Loc, Loc)>) -> Option<DslResult<Value>> {
    let mut keys: Vec<LineKey> = Vec::new();
    let mut empty = false;
    // The names are deduplicated whenever they have doubled since the last time, so that
    // what is kept stays within twice the distinct lines (and the limit).
    let mut distinct = 0;
    for (k, (p, q)) in pairs.enumerate() {
        if k % 4096 == 4095 {
            if let Err(e) = crate::dsl::func::Deadline::check() {
                return Some(Err(e));
            }
            if keys.len() > (2 * distinct).max(1 << 12) {
                keys.sort_unstable();
                keys.dedup();
                distinct = keys.len();
                if distinct > MAX_LINE_KEYS {
                    return None;
                }
            }
        }
        match line_key(p, q) {
            Some(key) => keys.push(key),
            None => empty = true,
        }
    }
    keys.sort_unstable();
    keys.dedup();
    let mut lines = Vec::with_capacity(keys.len() + usize::from(empty));
    if empty {
        lines.push(Value::empty_set());
    }
    let ends = |l: Loc| (i128::from(l.i), i128::from(l.j));
    for (start, end) in keys {
        lines.push(line(ends(start), ends(end)).ok()?);
    }
    Some(Ok(Value::set(lines)))
}

/// [`lines_of`] every location of `a` with every location of `b`: `prapply(connect, a, b)`.
pub(super) fn lines_between(a: &[Loc], b: &[Loc]) -> Option<DslResult<Value>> {
    lines_of(b.iter().flat_map(|&q| a.iter().map(move |&p| (p, q))))
}

fn wide(pair: (i64, i64)) -> (i128, i128) {
    (pair.0.into(), pair.1.into())
}

/// `connect(a, b)`, which unpacks `ai, aj = a`.
fn connect(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(connect_fast(a), || generic::connect(&a[0], &a[1]))
}

fn connect_fast(a: &[Value]) -> DslResult<Value> {
    line(wide(a[0].unpack_pair()?), wide(a[1].unpack_pair()?))
}

/// `shoot(start, direction)`: the line from `start` to `start + 42 * direction`.
fn shoot(a: &[Value]) -> DslResult<Value> {
    generic::fast_unless(
        !matches!(a[0], Value::Pair(..)),
        || shoot_fast(a),
        || generic::shoot(&a[0], &a[1]),
    )
}

fn shoot_fast(a: &[Value]) -> DslResult<Value> {
    // `start[0]`, `direction[0]`, ...: indexed, not unpacked.
    let (start, dir) = (wide(a[0].index_pair()?), wide(a[1].index_pair()?));
    line(start, (start.0 + 42 * dir.0, start.1 + 42 * dir.1))
}

/// The 30 locations of a frontier: `along(k)` for `k` in `0..30`.
fn frontier(along: impl Fn(i32) -> Loc) -> Value {
    Value::indices_sorted(Shared::from_iter_at_most(30, (0..30).map(along)))
}

fn vfrontier(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(vfrontier_fast(a), || generic::frontier(&a[0], true))
}

fn vfrontier_fast(a: &[Value]) -> DslResult<Value> {
    let j = coord(a[0].index_pair()?.1)?;
    Ok(frontier(|i| Loc { i, j }))
}

fn hfrontier(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(hfrontier_fast(a), || generic::frontier(&a[0], false))
}

fn hfrontier_fast(a: &[Value]) -> DslResult<Value> {
    let i = coord(a[0].index_pair()?.0)?;
    Ok(frontier(|j| Loc { i, j }))
}

// ----- gravitate -----------------------------------------------------------------------------

/// Whether some column holds locations of both patches.
fn vmatching(a: &[Loc], b: &[Loc]) -> bool {
    let mut columns: Vec<i32> = a.iter().map(|l| l.j).collect();
    columns.sort_unstable();
    b.iter().any(|l| columns.binary_search(&l.j).is_ok())
}

/// Whether `a` moved by `(di, dj)` is adjacent to `b`: their closest Manhattan distance is 1.
fn adjacent_after(a: &[Loc], b: &[Loc], di: i64, dj: i64) -> bool {
    let mut best = i64::MAX;
    for p in a {
        let (i, j) = (i64::from(p.i) + di, i64::from(p.j) + dj);
        for q in b {
            best = best.min((i - i64::from(q.i)).abs() + (j - i64::from(q.j)).abs());
            if best == 0 {
                return false;
            }
        }
    }
    best == 1
}

/// `gravitate(source, destination)`: step towards the destination (vertically when they share a
/// column) until adjacent, at most 42 steps; the offset of the steps taken.
fn gravitate(a: &[Value]) -> DslResult<Value> {
    let (si, sj) = piece_center(&a[0])?;
    let (di, dj) = piece_center(&a[1])?;
    let (src, dst) = (common::locs(&a[0])?, common::locs(&a[1])?);
    let (i, j) = if vmatching(&src, &dst) {
        (toward(si, di), 0)
    } else {
        (0, toward(sj, dj))
    };
    let steps = (0..42)
        .find(|&k| adjacent_after(&src, &dst, k * i, k * j))
        .unwrap_or(42);
    Ok(Value::Pair(steps * i, steps * j))
}

// ----- periods -------------------------------------------------------------------------------

/// `hperiod`/`vperiod`: the smallest `p` such that the object moved back by `p` along the axis,
/// cut to its own box, lies inside itself; the extent of the box when no smaller `p` does.
fn period(obj: &Value, vertical: bool) -> DslResult<Value> {
    let patch = Patch::of(obj)?;
    let Some(b) = patch.bounds() else {
        return Ok(Value::Int(0));
    };
    let extent = if vertical { b.height() } else { b.width() };
    if extent <= 1 {
        return Ok(Value::Int(extent));
    }
    let cells = match patch {
        Patch::Cells(cells) => cells,
        // Only whether two colours are equal matters: their ranks do.
        Patch::AnyCells(c) => SliceRef::Built(common::Ranks::of(c.iter().map(|(v, _)| v)).cells(&c)),
        Patch::Locs(_) => return Err(DslError::type_error("an object (cells (value, (i, j)))", obj)),
    };
    // Along the axis: (cross coordinate, coordinate) of a cell.
    let axis = |c: &Cell| if vertical { (c.j, c.i) } else { (c.i, c.j) };
    // Whether the cell moved back by `p` along the axis is a cell of the object.
    let lands = |c: &Cell, p: i64| {
        let (cross, along) = axis(c);
        let Ok(along) = i32::try_from(i64::from(along) - p) else {
            return false;
        };
        let (i, j) = if vertical { (along, cross) } else { (cross, along) };
        cells.binary_search(&Cell { color: c.color, i, j }).is_ok()
    };
    // A period below the extent moves the cell at the far edge onto a cell of its colour on its
    // line, so only those distances are candidates.
    let far = cells.iter().max_by_key(|c| axis(c).1).ok_or_else(empty_patch)?;
    let (far_cross, far_along) = axis(far);
    let mut candidates: Vec<i64> = cells
        .iter()
        .filter(|c| c.color == far.color && axis(c).0 == far_cross && axis(c).1 < far_along)
        .map(|c| i64::from(far_along) - i64::from(axis(c).1))
        .collect();
    candidates.sort_unstable();
    let origin = if vertical { b.top } else { b.left };
    for p in candidates {
        let fits = cells
            .iter()
            .filter(|c| i64::from(axis(c).1) - origin >= p)
            .all(|c| lands(c, p));
        if fits {
            return Ok(Value::Int(p));
        }
    }
    Ok(Value::Int(extent))
}

fn hperiod(a: &[Value]) -> DslResult<Value> {
    period(&a[0], false)
}

fn vperiod(a: &[Value]) -> DslResult<Value> {
    period(&a[0], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `connect` as the reference writes it, point by point in i64, with this port's rule that
    /// a coordinate beyond i32 raises.
    fn connect_pointwise(a: (i64, i64), b: (i64, i64)) -> Option<Vec<Loc>> {
        let (si, ei) = (a.0.min(b.0), a.0.max(b.0));
        let (sj, ej) = (a.1.min(b.1), a.1.max(b.1));
        let points: Vec<(i64, i64)> = if a.0 == b.0 {
            (sj..=ej).map(|j| (a.0, j)).collect()
        } else if a.1 == b.1 {
            (si..=ei).map(|i| (i, a.1)).collect()
        } else if b.0 - a.0 == b.1 - a.1 {
            (si..=ei).zip(sj..=ej).collect()
        } else if b.0 - a.0 == a.1 - b.1 {
            (si..=ei).zip((sj..=ej).rev()).collect()
        } else {
            Vec::new()
        };
        let locs = points.into_iter().map(|(i, j)| {
            Some(Loc {
                i: i32::try_from(i).ok()?,
                j: i32::try_from(j).ok()?,
            })
        });
        let mut locs: Vec<Loc> = locs.collect::<Option<_>>()?;
        locs.sort();
        Some(locs)
    }

    proptest::proptest! {
        /// The box of an index set's or an object's sorted members, read off the ends where
        /// they are sorted by row, is the box of the same points in any order: one colour and
        /// several, coordinates at the ends of `i32`.
        #[test]
        fn sorted_members_have_the_box_of_their_points(
            points in proptest::collection::vec((0i32..3, -3i32..3, -3i32..3), 1..40),
            far in proptest::bool::ANY,
            one_color in proptest::bool::ANY,
        ) {
            let scale = if far { i32::MAX / 3 } else { 1 };
            let mut cells: Vec<Cell> = points
                .into_iter()
                .map(|(color, i, j)| Cell { color: if one_color { 0 } else { color }, i: i * scale, j: j * scale })
                .collect();
            cells.sort();
            cells.dedup();
            let mut locs: Vec<Loc> = cells.iter().map(|c| Loc { i: c.i, j: c.j }).collect();
            locs.sort();
            locs.dedup();
            let any_order = |b: Bounds| (b.top, b.bottom, b.left, b.right);
            let want = Bounds::of(cells.iter().map(|c| (c.i, c.j))).map(any_order);
            proptest::prop_assert_eq!(Bounds::of_cells(&cells).map(any_order), want);
            proptest::prop_assert_eq!(Bounds::of_locs(&locs).map(any_order), want);
        }
    }

    proptest::proptest! {
        /// Lines within range (the direct path) and crossing the i32 limit (point by point).
        #[test]
        fn connect_is_the_pointwise_line(
            a in (-40i64..40, -40i64..40),
            d in (-40i64..40, -40i64..40, 0..4usize),
            near_limit in proptest::bool::ANY,
        ) {
            let shift = if near_limit { i64::from(i32::MAX) - 20 } else { 0 };
            let a = (a.0 + shift, a.1);
            // b on a row, a column, either diagonal, or anywhere.
            let b = match d.2 {
                0 => (a.0, a.1 + d.1),
                1 => (a.0 + d.0, a.1),
                2 => (a.0 + d.0, a.1 + d.0),
                _ => (a.0 + d.0, a.1 - d.0 + d.1 % 2),
            };
            let got = connect(&[Value::Pair(a.0, a.1), Value::Pair(b.0, b.1)]);
            match connect_pointwise(a, b) {
                Some(locs) => proptest::prop_assert_eq!(got, Ok(Value::indices(locs))),
                None => proptest::prop_assert!(matches!(got, Err(DslError::TooLarge(_))), "{:?}", got),
            }
        }
    }

    proptest::proptest! {
        /// `fill`, `underfill`, `paint` and `underpaint` on a grid are the simple path's, which
        /// writes value after value as the reference does: locations and cells inside, around
        /// and far outside the grid, colours that are colours and values that are none (which
        /// raise only where a location lies inside the grid).
        #[test]
        fn fills_and_paints_are_the_simple_paths(
            g in small_grid(),
            points in proptest::collection::vec((0..10 as Color, -3i32..9, -3i32..9), 0..20),
            far in proptest::option::of((i32::MIN..i32::MAX, i32::MIN..i32::MAX)),
            value in proptest::prop_oneof![4 => -1i64..11, 1 => proptest::strategy::Just(1i64 << 40)],
        ) {
            let grid = Value::grid(g);
            let mut cells: Vec<Cell> = points.iter().map(|&(color, i, j)| Cell { color, i, j }).collect();
            cells.extend(far.map(|(i, j)| Cell { color: 3, i, j }));
            let locs: Vec<Loc> = cells.iter().map(|c| Loc { i: c.i, j: c.j }).collect();
            let (object, patch) = (Value::object(cells), Value::indices(locs));
            let colour = Value::Int(value);
            for under in [false, true] {
                let (fast, simple) = match under {
                    false => (fill(&[grid.clone(), colour.clone(), patch.clone()]), generic::fill(&grid, &colour, &patch, false)),
                    true => (underfill(&[grid.clone(), colour.clone(), patch.clone()]), generic::fill(&grid, &colour, &patch, true)),
                };
                proptest::prop_assert_eq!(fast.map_err(|e| e.to_string()), simple.map_err(|e| e.to_string()));
                let (fast, simple) = match under {
                    false => (paint(&[grid.clone(), object.clone()]), generic::paint(&grid, &object, false)),
                    true => (underpaint(&[grid.clone(), object.clone()]), generic::paint(&grid, &object, true)),
                };
                proptest::prop_assert_eq!(fast.map_err(|e| e.to_string()), simple.map_err(|e| e.to_string()));
            }
        }
    }

    /// A grid of up to 6x6 cells (some without rows or columns) of colours 0-9.
    fn small_grid() -> impl proptest::strategy::Strategy<Value = Grid> {
        use proptest::strategy::Strategy;
        (0..7usize, 0..7usize).prop_flat_map(|(h, w)| {
            proptest::collection::vec(0..10 as Color, h * w).prop_map(move |cells| Grid::new(h, w, cells))
        })
    }

    proptest::proptest! {
        /// The copies made a row or a column at a time give the grids the per-cell
        /// definitions give.
        #[test]
        fn row_copies_are_the_cell_by_cell_grids(
            g in small_grid(),
            other in small_grid(),
            (fy, fx) in (0..4usize, 0..4usize),
            corner in (0..7usize, 0..7usize),
        ) {
            let v = g.view();
            proptest::prop_assert_eq!(rot180_of(v), build(g.h, g.w, |r, c| g.get(g.h - 1 - r, g.w - 1 - c)));
            proptest::prop_assert_eq!(hmirror_of(v), build(g.h, g.w, |r, c| g.get(g.h - 1 - r, c)));
            proptest::prop_assert_eq!(vmirror_of(v), build(g.h, g.w, |r, c| g.get(r, g.w - 1 - c)));
            let (th, tw) = transposed(v);
            proptest::prop_assert_eq!(rot90_of(v), build(th, tw, |r, c| g.get(g.h - 1 - c, r)));
            proptest::prop_assert_eq!(rot270_of(v), build(th, tw, |r, c| g.get(c, g.w - 1 - r)));
            proptest::prop_assert_eq!(dmirror_of(v), build(th, tw, |r, c| g.get(c, r)));
            proptest::prop_assert_eq!(cmirror_of(v), build(th, tw, |r, c| g.get(g.h - 1 - c, g.w - 1 - r)));
            proptest::prop_assert_eq!(
                scaled(&g, fy, fx),
                Ok(build(g.h * fy, g.w * fx, |r, c| g.get(r / fy, c / fx)))
            );
            let (top, left) = (corner.0.min(g.h), corner.1.min(g.w));
            proptest::prop_assert_eq!(
                crop(&g, top..g.h, left..g.w),
                build(g.h - top, g.w - left, |r, c| g.get(top + r, left + c))
            );
            let cat = hconcat(&[Value::grid(g.clone()), Value::grid(other.clone())]);
            let expected = build(g.h.min(other.h), g.w + other.w, |r, c| {
                if c < g.w { g.get(r, c) } else { other.get(r, c - g.w) }
            });
            proptest::prop_assert_eq!(cat, Ok(expected));
        }
    }

    /// A 20-row grid `w` wide of a few colours in an irregular pattern.
    fn noisy(w: usize) -> Grid {
        let cells = (0..20 * w)
            .map(|k: usize| ((k * 7 + k / w * 3) % 5 % 3) as Color)
            .collect();
        Grid::new(20, w, cells)
    }

    #[test]
    fn both_scans_agree() {
        for g in [noisy(40), noisy(64)] {
            both_scans_agree_on(&g);
        }
    }

    fn both_scans_agree_on(g: &Grid) {
        for (oh, ow) in [(1, 1), (2, 2), (3, 2), (1, 5)] {
            // Every window of the grid, taken as the object, occurs at least where it came from.
            for (ti, tj) in [(0, 0), (5, 7), (17, 30)] {
                let probes: Vec<Probe> = (0..oh)
                    .flat_map(|di| (0..ow).map(move |dj| (di, dj)))
                    .map(|(di, dj)| Probe {
                        di,
                        dj,
                        color: g.get(ti + di, tj + dj),
                    })
                    .collect();
                let (h2, w2) = (g.h - oh + 1, g.w - ow + 1);
                let by_masks = scan_masks(g, &probes, h2, w2);
                assert_eq!(by_masks, scan_cells(g, &probes, h2, w2));
                assert!(by_masks.contains(&Loc {
                    i: ti as i32,
                    j: tj as i32
                }));
            }
        }
    }
}
