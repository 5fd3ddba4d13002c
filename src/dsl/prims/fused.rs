//! Compositions of primitives that the column engine runs as one node, without building the
//! value in between: `size(difference(a, b))`, `size(intersection(a, b))`, both with
//! `a = shift(patch, offset)`, `size(intersection(delta(patch), b))` and with `outbox`,
//! `colorcount(toobject(patch, grid), value)`, two projections in a row (`first(last(x))`,
//! `power(first, TWO)`, ...) and two such compared (`fork(equality, power(first, TWO),
//! compose(first, last))`). Solvers test where a pattern fits with
//! `size(difference(shift(pattern, offset), cells)) == 0` over every offset, score candidates
//! with `size(intersection(candidate, cells))` (and the cells in the holes of a candidate's box
//! or on the ring around it), and count a colour around each location with
//! `colorcount(toobject(neighbors(loc), grid), colour)`: each such call built one or two sets
//! only to count them. A projection of a projection (of the pairs of locations `product`
//! makes, say) wrote a column of the values in between only to read each once.
//!
//! A chain of integer primitives (projections, arithmetic, comparisons) is one node too, which
//! computes unboxed where it can ([`steps`]).
//!
//! A fused node is the composition of the registered primitives by definition. Where the sets
//! are index sets or objects it counts their common members directly
//! ([`containers::moved_op_len`]), and the cells of a colour at a patch's locations straight
//! from the grid; anything else runs the primitives one after the other, raising what they
//! raise, in their order. A projection of a pair of locations or cells is read in place; of
//! anything else, it is the two primitives in turn.

use std::cell::RefCell;
use std::sync::LazyLock;

pub mod steps;

use super::cheap::{Cheap, WithPrim};
use super::containers::{self, MovedTests, SetOp};
use super::{common, grids, patches};
use crate::dsl::error::DslResult;
use crate::dsl::registry::{PrimFn, PrimId};
use crate::dsl::value::{Loc, Value};
use steps::Steps;

/// A fused composition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused(Composition);

/// The compositions that fuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Composition {
    /// `size` of a set operation on two sets: the operation as the primitive and as what it
    /// counts, whether the arguments are `(patch, offset, b)` for
    /// `size(op(shift(patch, offset), b))` rather than `(a, b)` for `size(op(a, b))`, and
    /// whether the size is `tested` against zero (`matcher(size, ZERO)` of the set: a boolean,
    /// which the first member that decides it may give).
    SetOp {
        inner: PrimId,
        op: SetOp,
        shifted: bool,
        tested: bool,
    },
    /// `colorcount(toobject(patch, grid), value)`, on the arguments `(patch, grid, value)`.
    ColorAt,
    /// `colorcount(toobject(around(loc), grid), value)` for `around` one of `dneighbors`,
    /// `ineighbors` and `neighbors` (the offsets of its locations), on the arguments `(loc,
    /// grid, value)`.
    ColorAround {
        around: PrimId,
        offsets: &'static [(i64, i64)],
    },
    /// `outer(inner(x))` for `first` or `last` each.
    Pick(Projection),
    /// `equality(a(x), b(x))` of two projections of projections, as `fork(equality, power(first,
    /// TWO), compose(first, last))` keeps the pairs of `product` on one row (or of one colour):
    /// whether the row's two coordinates agree, without the columns of each.
    PicksEqual(Projection, Projection),
    /// `size(intersection(part(patch), b))` for `part` `delta` (the patch's box less the
    /// patch) or `outbox` (the ring just outside its box: `ring`), on the arguments
    /// `(patch, b)`.
    BoxPart { part: PrimId, ring: bool },
    /// A chain of integer primitives, each applied to the value of the one before ([`steps`]).
    Steps(Steps),
}

/// `outer(inner(x))` for `first` or `last` each (`true`: `last`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Projection {
    outer_last: bool,
    inner_last: bool,
}

/// The primitives a fused node is made of.
struct Parts {
    size: PrimId,
    shift: PrimId,
    difference: PrimId,
    intersection: PrimId,
    equality: PrimId,
    colorcount: PrimId,
    toobject: PrimId,
    first: PrimId,
    last: PrimId,
    delta: PrimId,
    outbox: PrimId,
    /// `dneighbors`, `ineighbors` and `neighbors`, with the offsets of the locations each makes.
    around: [(PrimId, &'static [(i64, i64)]); 3],
}

static PARTS: LazyLock<Parts> = LazyLock::new(|| {
    let id = PrimId::builtin;
    Parts {
        size: id("size"),
        shift: id("shift"),
        difference: id("difference"),
        intersection: id("intersection"),
        equality: id("equality"),
        colorcount: id("colorcount"),
        toobject: id("toobject"),
        first: id("first"),
        last: id("last"),
        delta: id("delta"),
        outbox: id("outbox"),
        around: [
            (id("dneighbors"), patches::DIRECT),
            (id("ineighbors"), patches::DIAGONAL),
            (id("neighbors"), patches::ALL_AROUND),
        ],
    }
});

impl Fused {
    /// `outer(inner(..), ..)` fused, where there is such a composition: its arguments are
    /// `inner`'s, then `outer`'s after the first.
    pub fn of(outer: PrimId, inner: PrimId) -> Option<Fused> {
        let parts = &*PARTS;
        // `Some(true)` for `last`, `Some(false)` for `first`.
        let last = |id: PrimId| (id == parts.first || id == parts.last).then_some(id == parts.last);
        if let (Some(outer_last), Some(inner_last)) = (last(outer), last(inner)) {
            return Some(Fused(Composition::Pick(Projection { outer_last, inner_last })));
        }
        let op = match inner {
            id if outer == parts.colorcount && id == parts.toobject => return Some(Fused(Composition::ColorAt)),
            _ if outer != parts.size => return None,
            id if id == parts.difference => SetOp::Difference,
            id if id == parts.intersection => SetOp::Intersection,
            _ => return None,
        };
        Some(Fused(Composition::SetOp {
            inner,
            op,
            shifted: false,
            tested: false,
        }))
    }

    /// `outer(a(x), b(x))` of two projections of projections `a` and `b` of the same value,
    /// where it fuses: `outer` is `equality`.
    pub fn of_two_picks(outer: PrimId, a: Fused, b: Fused) -> Option<Fused> {
        match (a.0, b.0) {
            (Composition::Pick(a), Composition::Pick(b)) if outer == PARTS.equality => {
                Some(Fused(Composition::PicksEqual(a, b)))
            }
            _ => None,
        }
    }

    /// The primitive `id` on `arity` arguments as the first step of a chain ([`steps`]),
    /// where it may be one.
    pub fn chain_of(id: PrimId, arity: usize) -> Option<Fused> {
        Steps::start(Cheap::of(id)?, arity).map(|s| Fused(Composition::Steps(s)))
    }

    /// This chain followed by `outer` on `arity` arguments, the one at `position` being the
    /// chain's value (its other argument, if any, becomes the chain's last), where `outer` may
    /// be a step and the chain has room.
    pub fn then(self, outer: PrimId, arity: usize, position: usize) -> Option<Fused> {
        match self.0 {
            Composition::Steps(s) => s
                .then(Cheap::of(outer)?, arity, position)
                .map(|s| Fused(Composition::Steps(s))),
            _ => None,
        }
    }

    /// The chain this is, if it is one: the column engine runs it over whole columns.
    pub fn steps(self) -> Option<Steps> {
        match self.0 {
            Composition::Steps(s) => Some(s),
            _ => None,
        }
    }

    /// This composition's result compared with zero (`matcher(size, ZERO)` of it), where that
    /// fuses too: a set operation's size.
    pub fn tested_against_zero(self) -> Option<Fused> {
        match self.0 {
            Composition::SetOp {
                inner,
                op,
                shifted,
                tested: false,
            } => Some(Fused(Composition::SetOp {
                inner,
                op,
                shifted,
                tested: true,
            })),
            _ => None,
        }
    }

    /// This composition with its first argument made by `first` (`shift(patch, offset)` for a
    /// set operation, `delta` or `outbox` of a patch for an intersection, the neighbours of a
    /// location for a colour count), where that fuses too.
    pub fn with_first(self, first: PrimId) -> Option<Fused> {
        let parts = &*PARTS;
        match self.0 {
            Composition::SetOp {
                inner,
                op,
                shifted: false,
                tested: false,
            } if first == parts.shift => Some(Fused(Composition::SetOp {
                inner,
                op,
                shifted: true,
                tested: false,
            })),
            Composition::SetOp {
                op: SetOp::Intersection,
                shifted: false,
                tested: false,
                ..
            } if first == parts.delta || first == parts.outbox => Some(Fused(Composition::BoxPart {
                part: first,
                ring: first == parts.outbox,
            })),
            Composition::ColorAt => {
                let &(around, offsets) = parts.around.iter().find(|&&(id, _)| id == first)?;
                Some(Fused(Composition::ColorAround { around, offsets }))
            }
            Composition::SetOp { .. }
            | Composition::ColorAround { .. }
            | Composition::Pick(_)
            | Composition::PicksEqual(..)
            | Composition::BoxPart { .. }
            | Composition::Steps(_) => None,
        }
    }

    /// How many arguments the fused node takes.
    pub fn arity(self) -> usize {
        match self.0 {
            Composition::SetOp { shifted, .. } => 2 + usize::from(shifted),
            Composition::BoxPart { .. } => 2,
            Composition::ColorAt | Composition::ColorAround { .. } => 3,
            Composition::Pick(_) | Composition::PicksEqual(..) => 1,
            Composition::Steps(s) => s.arity(),
        }
    }

    /// The composition on one row of arguments.
    pub fn run(self, args: &[Value]) -> DslResult<Value> {
        let counted = match self.0 {
            Composition::Pick(_) | Composition::PicksEqual(..) => return self.with(Row(args)),
            Composition::Steps(s) => return s.run(args),
            Composition::SetOp {
                op,
                shifted,
                tested: true,
                ..
            } => {
                return match set_op_is_empty(op, shifted, args) {
                    Some(empty) => Ok(Value::Bool(empty)),
                    None => self.composed(args),
                }
            }
            Composition::SetOp { op, shifted, .. } => set_op_len(op, shifted, args),
            Composition::BoxPart { ring, .. } => match args {
                [patch, b] => box_part_len(ring, patch, b).map(Ok),
                _ => None,
            },
            Composition::ColorAt => match args {
                [patch, grid, value] => color_at(patch, grid, value),
                _ => None,
            },
            Composition::ColorAround { offsets, .. } => match args {
                [loc, grid, value] => color_around(loc, offsets, grid, value),
                _ => None,
            },
        };
        match counted {
            Some(n) => Ok(Value::Int(n? as i64)),
            None => self.composed(args),
        }
    }

    /// `work` run with this composition as a statically known function (as
    /// [`super::cheap::Cheap::with`] runs a primitive): a projection's loop is compiled for each
    /// of the four with the picks inlined.
    #[inline]
    pub fn with<W: WithPrim>(self, work: W) -> W::Out {
        let picks = move |a: &[Value], twice: fn(&Value) -> DslResult<Value>| match a {
            [x] => twice(x),
            _ => self.composed(a),
        };
        match self.0 {
            // Over many rows of the same sets, each moved by another offset, the sets' tests
            // are built once.
            Composition::SetOp { tested: true, .. } => {
                let rows = RefCell::new(TestsOfRows::Nothing);
                work.run::<0>(move |a| self.tested_row(&mut rows.borrow_mut(), a))
            }
            Composition::PicksEqual(a, b) => work.run::<1>(move |args| match args {
                [x] => match picks_equal(x, a, b) {
                    Some(equal) => Ok(Value::Bool(equal)),
                    None => self.composed(args),
                },
                _ => self.composed(args),
            }),
            Composition::Pick(Projection { inner_last, outer_last }) => match (inner_last, outer_last) {
                (false, false) => work.run::<1>(move |a| picks(a, pick_twice::<false, false>)),
                (false, true) => work.run::<1>(move |a| picks(a, pick_twice::<false, true>)),
                (true, false) => work.run::<1>(move |a| picks(a, pick_twice::<true, false>)),
                (true, true) => work.run::<1>(move |a| picks(a, pick_twice::<true, true>)),
            },
            Composition::SetOp { .. }
            | Composition::ColorAt
            | Composition::ColorAround { .. }
            | Composition::BoxPart { .. }
            | Composition::Steps(_) => work.run::<0>(move |a| self.run(a)),
        }
    }

    /// [`Fused::run`] of a set operation's emptiness on one of many rows, given what the rows
    /// before left ([`TestsOfRows`]). Out of line: inlined into the column engine's loop, its
    /// reads of the row's offset and the boolean it makes each waited for a store just before
    /// (a wider read than the write), and solve_7df24a62 took 17 % longer with 18 % fewer
    /// instructions.
    #[inline(never)]
    fn tested_row(self, rows: &mut TestsOfRows, args: &[Value]) -> DslResult<Value> {
        let Composition::SetOp { op, shifted, .. } = self.0 else {
            return self.run(args);
        };
        match set_op_parts(shifted, args).and_then(|parts| rows.is_empty(op, parts)) {
            Some(empty) => Ok(Value::Bool(empty)),
            None => self.run(args),
        }
    }

    /// The primitives one after the other: the definition.
    fn composed(self, args: &[Value]) -> DslResult<Value> {
        let parts = &*PARTS;
        let imp = |id: PrimId| -> PrimFn { id.spec().imp };
        match (self.0, args) {
            (Composition::ColorAt, [patch, grid, value]) => {
                let object = imp(parts.toobject)(&[patch.clone(), grid.clone()])?;
                imp(parts.colorcount)(&[object, value.clone()])
            }
            (Composition::ColorAround { around, .. }, [loc, grid, value]) => {
                let object = imp(parts.toobject)(&[imp(around)(std::slice::from_ref(loc))?, grid.clone()])?;
                imp(parts.colorcount)(&[object, value.clone()])
            }
            (
                Composition::SetOp {
                    inner,
                    op,
                    shifted,
                    tested: true,
                },
                _,
            ) => {
                let size = Fused(Composition::SetOp {
                    inner,
                    op,
                    shifted,
                    tested: false,
                });
                Ok(Value::Bool(size.composed(args)? == Value::Int(0)))
            }
            (Composition::SetOp { inner, .. }, [patch, offset, b]) => {
                let moved = imp(parts.shift)(&[patch.clone(), offset.clone()])?;
                imp(parts.size)(&[imp(inner)(&[moved, b.clone()])?])
            }
            (Composition::SetOp { inner, .. }, _) => imp(parts.size)(&[imp(inner)(args)?]),
            (Composition::BoxPart { part, .. }, [patch, b]) => {
                let around = imp(part)(std::slice::from_ref(patch))?;
                imp(parts.size)(&[imp(parts.intersection)(&[around, b.clone()])?])
            }
            (Composition::Steps(s), _) => s.composed(args),
            (Composition::Pick(Projection { outer_last, inner_last }), _) => {
                let pick = |last: bool| imp(if last { parts.last } else { parts.first });
                pick(outer_last)(&[pick(inner_last)(args)?])
            }
            (Composition::PicksEqual(a, b), _) => {
                let (a, b) = (Fused(Composition::Pick(a)), Fused(Composition::Pick(b)));
                imp(parts.equality)(&[a.composed(args)?, b.composed(args)?])
            }
            (Composition::ColorAt | Composition::ColorAround { .. }, _) => crate::bail!(
                Type,
                "colorcount(toobject(patch, grid), value) takes 3 arguments, not {}",
                args.len()
            ),
            (Composition::BoxPart { .. }, _) => crate::bail!(
                Type,
                "size(intersection(part(patch), b)) takes 2 arguments, not {}",
                args.len()
            ),
        }
    }
}

/// [`color_at`] of the neighbours of a location `(i, j)`, the locations `(i + di, j + dj)`
/// for `offsets` (distinct, as the primitives' sets hold them, and at most one away), without
/// the set.
fn color_around(loc: &Value, offsets: &[(i64, i64)], grid: &Value, value: &Value) -> Option<DslResult<usize>> {
    let (&Value::Pair(i, j), Some(holds)) = (loc, holds_colour(grid, value)) else {
        return None;
    };
    // Neighbours whose coordinates leave `i32` are an error of the port's (a location holds
    // two `i32`s): the primitives raise it.
    let inside = |x: i64| (i64::from(i32::MIN) + 1..i64::from(i32::MAX)).contains(&x);
    if !inside(i) || !inside(j) {
        return None;
    }
    Some(Ok(offsets.iter().filter(|&&(di, dj)| holds(i + di, j + dj)).count()))
}

/// Whether `grid` holds `value` at a location (`false` outside it), for the colour counts read
/// from the grid: a grid with rows (where `toobject` raises, the composition does) and an
/// integer value (where a boolean counts as one, the composition says so).
fn holds_colour<'a>(grid: &'a Value, value: &Value) -> Option<impl Fn(i64, i64) -> bool + 'a> {
    let (Value::Grid(g), &Value::Int(value)) = (grid, value) else {
        return None;
    };
    (g.h > 0).then_some(move |i, j| g.at(i, j).is_some_and(|c| i64::from(c) == value))
}

/// One row's arguments, as [`Fused::run`] runs a projection through [`Fused::with`].
struct Row<'a>(&'a [Value]);

impl WithPrim for Row<'_> {
    type Out = DslResult<Value>;

    fn run<const ARITY: usize>(self, imp: impl Fn(&[Value]) -> DslResult<Value>) -> DslResult<Value> {
        imp(self.0)
    }
}

/// `outer(inner(x))` for `first` and `last` (`true`: `last`): a pair of locations or of cells,
/// as `product` makes them, projected in place; anything else through the two primitives.
#[inline(always)]
fn pick_twice<const INNER_LAST: bool, const OUTER_LAST: bool>(x: &Value) -> DslResult<Value> {
    match x {
        Value::LocPair(a, b) => {
            let loc = if INNER_LAST { b } else { a };
            Ok(Value::Int(i64::from(if OUTER_LAST { loc.j } else { loc.i })))
        }
        Value::CellPair(a, b) => {
            let cell = if INNER_LAST { b } else { a }.cell();
            Ok(if OUTER_LAST {
                Value::loc(cell.loc())
            } else {
                Value::Int(cell.color.into())
            })
        }
        _ => pick_twice_in_full(x, INNER_LAST, OUTER_LAST),
    }
}

/// [`Composition::PicksEqual`] of one row that is a pair of locations or of cells, read in place
/// (a cell's colour, an integer, never equals its location, a pair); `None` for anything else,
/// which the composition's definition runs.
#[inline(always)]
fn picks_equal(x: &Value, a: Projection, b: Projection) -> Option<bool> {
    match x {
        Value::LocPair(first, last) => {
            let coordinate = |p: Projection| {
                let loc = if p.inner_last { last } else { first };
                if p.outer_last {
                    loc.j
                } else {
                    loc.i
                }
            };
            Some(coordinate(a) == coordinate(b))
        }
        Value::CellPair(first, last) => {
            let part = |p: Projection| {
                let cell = if p.inner_last { last } else { first }.cell();
                if p.outer_last {
                    (true, cell.i, cell.j)
                } else {
                    (false, cell.color, 0)
                }
            };
            Some(part(a) == part(b))
        }
        _ => None,
    }
}

/// [`pick_twice`] of anything but a pair of locations or cells: the two primitives in turn,
/// out of line, so that the pick of a pair stays small enough to be inlined into the column
/// engine's per-element loop.
#[inline(never)]
fn pick_twice_in_full(x: &Value, inner_last: bool, outer_last: bool) -> DslResult<Value> {
    let pick = |x: &Value, last: bool| match last {
        true => containers::last(std::slice::from_ref(x)),
        false => containers::first(std::slice::from_ref(x)),
    };
    pick(&pick(x, inner_last)?, outer_last)
}

/// `size(op(a, b))` (with `a` shifted, the arguments `(patch, offset, b)`) counted without the
/// sets, where they are index sets or objects.
fn set_op_len(op: SetOp, shifted: bool, args: &[Value]) -> Option<DslResult<usize>> {
    let (a, offset, b) = set_op_parts(shifted, args)?;
    containers::moved_op_len(op, a, offset, b).map(Ok)
}

/// A set operation's arguments as `(a, offset, b)`: `(patch, offset, b)` shifted (the offset a
/// pair), `(a, b)` not.
fn set_op_parts(shifted: bool, args: &[Value]) -> Option<(&Value, (i64, i64), &Value)> {
    match args {
        [patch, Value::Pair(di, dj), b] if shifted => Some((patch, (*di, *dj), b)),
        [a, b] if !shifted => Some((a, (0, 0), b)),
        _ => None,
    }
}

/// What a test of a set operation's emptiness over many rows ([`Fused::with`]) remembers of
/// the rows before: the sets of the last row (their members' addresses), and the tests built
/// once a second row came with the same sets.
enum TestsOfRows {
    Nothing,
    Seen(usize, usize),
    Built(MovedTests),
}

impl TestsOfRows {
    /// Whether `op(a moved by offset, b)` is empty, where the rows before had the same `a` and
    /// `b`; `None` where that is left to [`Fused::run`] (sets met first, or of other kinds).
    fn is_empty(&mut self, op: SetOp, (a, offset, b): (&Value, (i64, i64), &Value)) -> Option<bool> {
        let address = containers::members_address;
        match self {
            TestsOfRows::Built(tests) if tests.of(a, b) => return tests.is_empty(offset),
            TestsOfRows::Seen(x, y) if (Some(*x), Some(*y)) == (address(a), address(b)) => {
                let tests = MovedTests::new(op, a, b)?;
                let empty = tests.is_empty(offset);
                *self = TestsOfRows::Built(tests);
                return empty;
            }
            _ => {}
        }
        if let (Some(x), Some(y)) = (address(a), address(b)) {
            *self = TestsOfRows::Seen(x, y);
        }
        None
    }
}

/// `size(op(a, b)) == 0` (with `a` shifted, as for [`set_op_len`]) without the sets, where
/// they are index sets or objects.
fn set_op_is_empty(op: SetOp, shifted: bool, args: &[Value]) -> Option<bool> {
    let (a, offset, b) = set_op_parts(shifted, args)?;
    containers::moved_op_is_empty(op, a, offset, b)
}

/// `size(intersection(delta(patch), b))`, or with `outbox` (`ring`), counted in `b` without
/// either set: `b`'s locations in the patch's box less those in the patch, or in the box
/// grown by one less those in the box (the ring `outbox` draws is the grown box's border).
/// `None` unless the patch is a non-empty index set or object and `b` an index set, and
/// where the box (the ring's grown box) reaches the ends of `i32` or holds more members than
/// a container may (the primitives then raise what they raise).
fn box_part_len(ring: bool, patch: &Value, b_value: &Value) -> Option<usize> {
    let Value::Indices(b) = b_value else {
        return None;
    };
    let bounds = match patch {
        Value::Indices(locs) => grids::Bounds::of_locs(locs),
        Value::Object(cells) => grids::Bounds::of_cells(cells),
        _ => None,
    }?;
    // Inside `i32` with a row and a column to spare, so that the ring's locations are too.
    let inside = |x: i64| i32::try_from(x).ok().filter(|&x| x > i32::MIN && x < i32::MAX);
    let (top, bottom, left, right) = (
        inside(bounds.top)?,
        inside(bounds.bottom)?,
        inside(bounds.left)?,
        inside(bounds.right)?,
    );
    grids::capped(i128::from(bounds.height() + 2) * i128::from(bounds.width() + 2)).ok()?;
    let inner = (top, bottom, left, right);
    // Through `b`'s bitmap where it has one (`b` tested against the boxes of many patches),
    // else by a scan of its rows in the rectangle.
    let counted = containers::with_bitmap(b_value, b, |bitmap| {
        ring_or_box(ring, inner, |r| bitmap.count_in_rect(r))
    })
    .unwrap_or_else(|| ring_or_box(ring, inner, |r| scanned_in_rect(b, r)));
    if ring {
        return Some(counted);
    }
    let in_patch = match patch {
        Value::Indices(_) => containers::moved_op_len(SetOp::Intersection, patch, (0, 0), b_value)?,
        _ => {
            let locs = Value::Indices(common::locs(patch).ok()?.into_shared());
            containers::moved_op_len(SetOp::Intersection, &locs, (0, 0), b_value)?
        }
    };
    Some(counted - in_patch)
}

/// A set's locations on the ring just outside the box `(top, bottom, left, right)` (`ring`),
/// or in the box, given `in_rect`, its count in a rectangle of that form.
fn ring_or_box(ring: bool, inner: (i32, i32, i32, i32), in_rect: impl Fn((i32, i32, i32, i32)) -> usize) -> usize {
    let (top, bottom, left, right) = inner;
    match ring {
        true => in_rect((top - 1, bottom + 1, left - 1, right + 1)) - in_rect(inner),
        false => in_rect(inner),
    }
}

/// How many of the sorted locations `b` lie in rows `top..=bottom` and columns
/// `left..=right`: the first row found by a binary search, then each location of the rows
/// tested: the count where `b` has no bitmap.
fn scanned_in_rect(b: &[Loc], (top, bottom, left, right): (i32, i32, i32, i32)) -> usize {
    let from = b.partition_point(|l| l.i < top);
    b[from..]
        .iter()
        .take_while(|l| l.i <= bottom)
        .filter(|l| (left..=right).contains(&l.j))
        .count()
}

/// `colorcount(toobject(patch, grid), value)` read from the grid: how many of the patch's
/// distinct locations inside the grid hold `value` (see [`holds_colour`]). A patch that is no
/// patch raises what `toobject` raises.
fn color_at(patch: &Value, grid: &Value, value: &Value) -> Option<DslResult<usize>> {
    let holds = holds_colour(grid, value)?;
    let count = |locs: &[Loc]| locs.iter().filter(|l| holds(l.i.into(), l.j.into())).count();
    Some(match patch {
        // Sorted and distinct already: read in place.
        Value::Indices(locs) => Ok(count(locs)),
        _ => common::locs(patch).map(|locs| count(&locs)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::points;
    use crate::dsl::value::{Cell, Grid};
    use proptest::strategy::Strategy;

    fn loc(i: i32, j: i32) -> Loc {
        Loc { i, j }
    }

    /// Every fused composition gives what its primitives give one after the other, results and
    /// errors, on sets of every kind it meets (and values it rejects), shifted by offsets that
    /// keep or leave the coordinates' range, counted or tested against zero.
    #[test]
    fn each_fused_composition_is_its_primitives_in_turn() {
        let sets = vec![
            Value::indices(vec![loc(0, 0), loc(0, 2), loc(1, 1), loc(3, 4)]),
            Value::indices(vec![loc(1, 2), loc(1, 3), loc(2, 3), loc(4, 5)]),
            Value::indices((0..12).flat_map(|i| (0..12).map(move |j| loc(i, j))).collect()),
            Value::indices(vec![loc(i32::MAX, 0)]),
            Value::object(vec![Cell { color: 1, i: 0, j: 0 }, Cell { color: 2, i: 1, j: 1 }]),
            Value::object(vec![Cell { color: 1, i: 1, j: 1 }, Cell { color: 2, i: 2, j: 2 }]),
            Value::empty_set(),
            Value::set_sorted(vec![Value::Pair(0, 0), Value::Pair(5, 5)]),
            Value::tuple(vec![Value::Pair(0, 0), Value::Pair(1, 1)]),
            Value::Int(3),
        ];
        let offsets = [
            Value::Pair(0, 0),
            Value::Pair(1, 1),
            Value::Pair(-1, 2),
            Value::Pair(i64::MAX, 0),
            Value::Pair(0, i64::MIN),
            Value::Pair(1, 0),
            Value::Int(1),
            Value::tuple(vec![Value::Int(1), Value::Int(1), Value::Int(1)]),
        ];
        let parts = &*PARTS;
        let mut compared = 0;
        for inner in [parts.difference, parts.intersection] {
            let plain = Fused::of(parts.size, inner).expect("size of a set operation fuses");
            let shifted = plain.with_first(parts.shift).expect("a shifted first argument fuses");
            let tested = |f: Fused| f.tested_against_zero().expect("a count compared with zero fuses");
            let (plain_zero, shifted_zero) = (tested(plain), tested(shifted));
            assert_eq!(plain_zero.tested_against_zero(), None);
            for a in &sets {
                for b in &sets {
                    // Twice: the second time, `b` has been met before and may have a bitmap.
                    for _ in 0..2 {
                        let args = [a.clone(), b.clone()];
                        assert_same(plain.run(&args), plain.composed(&args), &args);
                        assert_same(plain_zero.run(&args), plain_zero.composed(&args), &args);
                        for offset in &offsets {
                            let args = [a.clone(), offset.clone(), b.clone()];
                            assert_same(shifted.run(&args), shifted.composed(&args), &args);
                            assert_same(shifted_zero.run(&args), shifted_zero.composed(&args), &args);
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 2 * sets.len() * sets.len() * 2 * offsets.len());
        assert_eq!(Fused::of(parts.shift, parts.difference), None);
        assert_eq!(Fused::of(parts.size, parts.shift), None);
    }

    /// `colorcount(toobject(patch, grid), value)` fused gives what the two primitives give in
    /// turn, results and errors: index sets and objects (one with two colours at a location),
    /// locations outside the grid, tuples and lists of pairs, values that are no patch; grids
    /// held as grids, as rows, empty or with empty rows; integer, boolean and other values.
    #[test]
    fn a_colour_counted_in_an_object_of_a_grid_is_the_two_primitives_in_turn() {
        let parts = &*PARTS;
        let at = Fused::of(parts.colorcount, parts.toobject).expect("fuses");
        assert_eq!(at.with_first(parts.shift), None);
        let cell = |color, i, j| Cell { color, i, j };
        let patches = vec![
            Value::indices(vec![loc(-1, 0), loc(0, 0), loc(0, 1), loc(1, 2), loc(2, 2), loc(5, 1)]),
            Value::object(vec![cell(1, 0, 0), cell(1, 1, 1), cell(3, 0, 0), cell(4, 2, 9)]),
            Value::indices(vec![loc(i32::MAX, i32::MIN)]),
            Value::empty_set(),
            Value::tuple(vec![Value::Pair(0, 0), Value::Pair(0, 0), Value::Pair(1, 0)]),
            Value::set_sorted(vec![Value::Pair(0, 2), Value::Pair(i64::MAX, 0)]),
            Value::Int(3),
            Value::tuple(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
        ];
        let rows = |r: &[&[i64]]| {
            Value::tuple(
                r.iter()
                    .map(|r| Value::tuple(r.iter().map(|&c| Value::Int(c)).collect()))
                    .collect(),
            )
        };
        let grids = vec![
            Value::grid(Grid::new(2, 3, vec![1, 2, 1, 0, 1, 3])),
            Value::grid(Grid::new(1, 1, vec![5])),
            rows(&[&[1, 1, 1], &[1, 2, 1]]),
            Value::tuple(vec![]),
            Value::tuple(vec![Value::tuple(vec![]), Value::tuple(vec![])]),
            Value::Int(4),
        ];
        let values = [
            Value::Int(1),
            Value::Int(0),
            Value::Int(7),
            Value::Bool(true),
            Value::Pair(1, 1),
        ];
        let mut compared = 0;
        for patch in &patches {
            for grid in &grids {
                for value in &values {
                    let args = [patch.clone(), grid.clone(), value.clone()];
                    assert_same(at.run(&args), at.composed(&args), &args);
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, patches.len() * grids.len() * values.len());
        let args = [patches[0].clone(), grids[0].clone(), Value::Int(1)];
        assert_eq!(
            at.run(&args).unwrap(),
            Value::Int(1),
            "of the locations inside, only (0, 0) holds 1"
        );
    }

    /// A colour counted around a location, for each of `dneighbors`, `ineighbors` and
    /// `neighbors`, gives what the three primitives give in turn, results and errors: locations
    /// inside, on the edge of and far outside the grid (at the ends of the integers), and
    /// values that are no location; grids and values as for the count at a patch.
    #[test]
    fn a_colour_counted_around_a_location_is_the_three_primitives_in_turn() {
        let parts = &*PARTS;
        let at = Fused::of(parts.colorcount, parts.toobject).expect("fuses");
        let locs = [
            Value::Pair(1, 1),
            Value::Pair(0, 2),
            Value::Pair(-1, 0),
            Value::Pair(i64::MAX, i64::MIN),
            Value::Pair(i64::from(i32::MAX), 0),
            Value::Pair(i64::from(i32::MAX) - 1, i64::from(i32::MIN) + 1),
            Value::Cell(Cell { color: 1, i: 1, j: 1 }),
            Value::tuple(vec![Value::Int(1), Value::Int(1), Value::Int(1)]),
            Value::tuple(vec![Value::Bool(true), Value::Int(1)]),
            Value::Int(3),
        ];
        let grids = [
            Value::grid(Grid::new(3, 3, vec![1, 2, 1, 2, 1, 2, 1, 1, 0])),
            Value::tuple(vec![Value::tuple(vec![Value::Int(1), Value::Int(2)])]),
            Value::tuple(vec![]),
            Value::Int(4),
        ];
        let values = [Value::Int(1), Value::Int(2), Value::Bool(true), Value::Pair(1, 1)];
        for (around, _) in parts.around {
            let counted = at.with_first(around).expect("fuses");
            assert_eq!(counted.arity(), 3);
            for loc in &locs {
                for grid in &grids {
                    for value in &values {
                        let args = [loc.clone(), grid.clone(), value.clone()];
                        assert_same(counted.run(&args), counted.composed(&args), &args);
                    }
                }
            }
        }
        let all_around = at.with_first(parts.around[2].0).expect("fuses");
        let args = [Value::Pair(1, 1), grids[0].clone(), Value::Int(1)];
        assert_eq!(all_around.run(&args).unwrap(), Value::Int(4), "the four corners hold 1");
        assert_eq!(at.with_first(parts.shift), None);
    }

    /// `size(intersection(delta(patch), b))` and with `outbox` give what the three primitives
    /// give in turn, results and errors: index sets and objects (one with two colours at a
    /// location, one with a hole), a patch filling its box, patches at the ends of `i32` and
    /// spanning it (whose box no container holds), empty sets, tuples of pairs and values that
    /// are no patch; `b` an index set, an object, empty or no set.
    #[test]
    fn a_part_of_a_box_counted_in_a_set_is_the_three_primitives_in_turn() {
        let parts = &*PARTS;
        let both = Fused::of(parts.size, parts.intersection).expect("fuses");
        let cell = |color, i, j| Cell { color, i, j };
        let patches = vec![
            Value::indices(vec![loc(1, 1), loc(1, 3), loc(3, 2)]),
            Value::indices(vec![loc(0, 0), loc(0, 1), loc(1, 0), loc(1, 1)]),
            Value::indices(vec![loc(2, 2)]),
            Value::object(vec![cell(1, 1, 1), cell(2, 1, 1), cell(3, 2, 4)]),
            Value::object(vec![
                cell(1, 0, 0),
                cell(1, 0, 1),
                cell(1, 0, 2),
                cell(1, 1, 0),
                cell(1, 1, 2),
                cell(1, 2, 0),
                cell(1, 2, 1),
                cell(1, 2, 2),
            ]),
            Value::indices(vec![loc(i32::MAX, 0), loc(i32::MAX - 1, 1)]),
            Value::indices(vec![loc(i32::MIN + 1, i32::MIN + 1)]),
            Value::indices(vec![loc(i32::MIN, 0), loc(i32::MAX, 0)]),
            Value::empty_set(),
            Value::tuple(vec![Value::Pair(0, 0), Value::Pair(2, 2)]),
            Value::Int(3),
        ];
        let others = vec![
            Value::indices(
                (-1..5)
                    .flat_map(|i| (-1..6).map(move |j| loc(i, j)))
                    .filter(|l| (l.i + l.j) % 3 != 0)
                    .collect(),
            ),
            Value::indices(vec![
                loc(0, 0),
                loc(2, 2),
                loc(i32::MAX, 1),
                loc(i32::MIN + 1, i32::MIN + 2),
            ]),
            Value::object(vec![cell(1, 1, 2), cell(1, 2, 2)]),
            Value::empty_set(),
            Value::tuple(vec![Value::Pair(1, 2)]),
        ];
        for part in [parts.delta, parts.outbox] {
            let counted = both.with_first(part).expect("fuses");
            assert_eq!(counted.arity(), 2);
            for patch in &patches {
                for b in &others {
                    let args = [patch.clone(), b.clone()];
                    assert_same(counted.run(&args), counted.composed(&args), &args);
                }
            }
        }
        let ring = both.with_first(parts.outbox).expect("fuses");
        let args = [patches[2].clone(), others[0].clone()];
        let around =
            "of the eight around (2, 2), all but (1, 2), (2, 1) and (3, 3), whose coordinates sum to a multiple of 3";
        assert_eq!(ring.run(&args).unwrap(), Value::Int(5), "{around}");
        assert_eq!(
            Fused::of(parts.size, parts.difference).and_then(|f| f.with_first(parts.delta)),
            None
        );
    }

    /// Each of the four projections of a projection gives what `first` and `last` give in
    /// turn, results and errors: pairs of locations and of cells read in place, and tuples,
    /// sets, grids, integers and empty tuples through the primitives.
    #[test]
    fn a_projection_of_a_projection_is_the_two_primitives_in_turn() {
        let parts = &*PARTS;
        let cell = |color, i, j| Value::Cell(Cell { color, i, j });
        let values = [
            Value::duo(Value::Pair(1, 2), Value::Pair(3, 4)),
            Value::duo(cell(5, 1, 2), cell(6, 3, 4)),
            Value::duo(cell(5, 1, 2), cell(6, 70_000, 4)),
            Value::duo(Value::Int(1), Value::Pair(3, 4)),
            Value::tuple(vec![Value::Pair(1, 2), Value::Pair(3, 4), Value::Pair(5, 6)]),
            Value::set(vec![Value::Pair(8, 2), Value::Pair(3, 9)]),
            Value::grid(Grid::new(2, 2, vec![1, 2, 3, 4])),
            Value::Pair(1, 2),
            Value::Int(3),
            Value::tuple(vec![]),
            Value::tuple(vec![Value::tuple(vec![]), Value::Pair(1, 2)]),
        ];
        assert!(matches!(values[0], Value::LocPair(..)) && matches!(values[1], Value::CellPair(..)));
        for outer in [parts.first, parts.last] {
            for inner in [parts.first, parts.last] {
                let picks = Fused::of(outer, inner).expect("fuses");
                assert_eq!(picks.arity(), 1);
                for v in &values {
                    let args = [v.clone()];
                    assert_same(picks.run(&args), picks.composed(&args), &args);
                }
            }
        }
        let (first_of_last, pair) = (Fused::of(parts.first, parts.last).expect("fuses"), [values[0].clone()]);
        assert_eq!(first_of_last.run(&pair).unwrap(), Value::Int(3));
        // Two of them compared: each of the sixteen comparisons gives what the projections and
        // `equality` give in turn, on the same values and on pairs whose parts agree.
        let agreeing = [
            Value::duo(Value::Pair(1, 1), Value::Pair(1, 1)),
            Value::duo(cell(1, 1, 1), cell(1, 1, 1)),
            Value::duo(cell(2, 2, 2), cell(2, 5, 2)),
            Value::duo(cell(2, 0, 5), cell(7, 2, 0)),
            Value::duo(Value::Pair(1, 2), Value::Pair(1, 2)),
            Value::duo(Value::Pair(1, 1), Value::Int(1)),
        ];
        let picks =
            [parts.first, parts.last].map(|outer| [parts.first, parts.last].map(|inner| Fused::of(outer, inner)));
        let picks: Vec<Fused> = picks.into_iter().flatten().map(|p| p.expect("fuses")).collect();
        let mut agreed = 0;
        for &a in &picks {
            for &b in &picks {
                let equal = Fused::of_two_picks(parts.equality, a, b).expect("fuses");
                assert_eq!((equal.arity(), Fused::of_two_picks(parts.size, a, b)), (1, None));
                for v in values.iter().chain(&agreeing) {
                    let args = [v.clone()];
                    assert_same(equal.run(&args), equal.composed(&args), &args);
                    agreed += usize::from(equal.run(&args) == Ok(Value::Bool(true)));
                }
            }
        }
        assert!(
            agreed > 16,
            "the same projection twice agrees on every pair, others on some"
        );
    }

    /// The fast path counts what the composition counts, on sets it builds.
    #[test]
    fn counting_a_shifted_pattern_against_cells_matches_building_the_sets() {
        let parts = &*PARTS;
        let fits = Fused::of(parts.size, parts.difference).and_then(|f| f.with_first(parts.shift));
        let fits = fits.expect("fuses");
        let pattern = Value::indices(vec![loc(0, 0), loc(0, 1), loc(1, 1)]);
        let cells = Value::indices(vec![loc(2, 3), loc(2, 4), loc(3, 4), loc(5, 5)]);
        let count = |di, dj| {
            fits.run(&[pattern.clone(), Value::Pair(di, dj), cells.clone()])
                .unwrap()
        };
        assert_eq!(count(2, 3), Value::Int(0));
        assert_eq!(count(0, 0), Value::Int(3));
        assert_eq!(count(1, 3), Value::Int(2));
    }

    /// An index set, or an object of colours 0-2, of points in a small box.
    fn points(as_object: bool) -> impl Strategy<Value = Value> {
        proptest::collection::vec((0..3, -3i32..9, -3i32..9), 0..40).prop_map(move |points| match as_object {
            true => Value::object(points.into_iter().map(|(color, i, j)| Cell { color, i, j }).collect()),
            false => Value::indices(points.into_iter().map(|(_, i, j)| loc(i, j)).collect()),
        })
    }

    fn sets_of_one_kind() -> impl Strategy<Value = (Value, Vec<Value>)> {
        proptest::bool::ANY
            .prop_flat_map(|as_object| (points(as_object), proptest::collection::vec(points(as_object), 1..6)))
    }

    proptest::proptest! {
        /// One set against many, on either side (the cells tested against many patches, a
        /// pattern moved over many offsets against the same cells), each pair counted three
        /// times so that either side's bitmap comes into play: the counts are the
        /// composition's, offsets that leave `i32` included.
        #[test]
        fn counts_through_either_sides_bitmap_are_the_compositions(
            (fixed, others) in sets_of_one_kind(),
            offsets in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => (-4i64..4, -4i64..4),
                    1 => proptest::strategy::Just((i64::from(i32::MAX) - 2, 0)),
                    1 => proptest::strategy::Just((0, i64::from(i32::MIN) + 2)),
                ],
                1..4,
            ),
        ) {
            let parts = &*PARTS;
            for inner in [parts.difference, parts.intersection] {
                let plain = Fused::of(parts.size, inner).expect("fuses");
                let shifted = plain.with_first(parts.shift).expect("fuses");
                let tested = |f: Fused| f.tested_against_zero().expect("fuses");
                let (plain_zero, shifted_zero) = (tested(plain), tested(shifted));
                for other in &others {
                    for (a, b) in [(&fixed, other), (other, &fixed)] {
                        for _ in 0..3 {
                            let args = [a.clone(), b.clone()];
                            proptest::prop_assert_eq!(plain.run(&args).ok(), plain.composed(&args).ok());
                            proptest::prop_assert_eq!(plain_zero.run(&args).ok(), plain_zero.composed(&args).ok());
                            for &(di, dj) in &offsets {
                                let args = [a.clone(), Value::Pair(di, dj), b.clone()];
                                proptest::prop_assert_eq!(shifted.run(&args).ok(), shifted.composed(&args).ok());
                                proptest::prop_assert_eq!(shifted_zero.run(&args).ok(), shifted_zero.composed(&args).ok());
                            }
                        }
                    }
                }
                // Over rows, as the column engine runs it: the same sets for several rows in a
                // row (their tests built on the second) and then others.
                let rows: Vec<Vec<Value>> = others
                    .iter()
                    .flat_map(|other| [(&fixed, other), (other, &fixed)])
                    .flat_map(|(a, b)| {
                        let offsets = offsets.iter().chain(&offsets);
                        offsets.map(move |&(di, dj)| vec![a.clone(), Value::Pair(di, dj), b.clone()])
                    })
                    .collect();
                let by_rows = shifted_zero.with(EachRow(&rows));
                let composed: Vec<_> = rows.iter().map(|row| shifted_zero.composed(row).ok()).collect();
                proptest::prop_assert_eq!(by_rows, composed);
                // Unshifted: each pair of sets for three rows in a row.
                let rows: Vec<Vec<Value>> = others
                    .iter()
                    .flat_map(|other| [(&fixed, other), (other, &fixed)])
                    .flat_map(|(a, b)| std::iter::repeat_n(vec![a.clone(), b.clone()], 3))
                    .collect();
                let by_rows = plain_zero.with(EachRow(&rows));
                let composed: Vec<_> = rows.iter().map(|row| plain_zero.composed(row).ok()).collect();
                proptest::prop_assert_eq!(by_rows, composed);
            }
        }
    }

    /// Rows of arguments, each run through the function [`Fused::with`] gives, as the column
    /// engine's loop runs them.
    struct EachRow<'a>(&'a [Vec<Value>]);

    impl WithPrim for EachRow<'_> {
        type Out = Vec<Option<Value>>;

        fn run<const ARITY: usize>(self, imp: impl Fn(&[Value]) -> DslResult<Value>) -> Self::Out {
            self.0.iter().map(|row| imp(row).ok()).collect()
        }
    }

    proptest::proptest! {
        /// A colour counted at a patch's locations, read from the grid, is the count of that
        /// colour in the object `toobject` builds, for patches inside and around the grid.
        #[test]
        fn a_colour_at_a_patchs_locations_is_the_count_in_its_object(
            patch in proptest::bool::ANY.prop_flat_map(points),
            (h, w, cells) in (1usize..6, 1usize..6).prop_flat_map(|(h, w)| {
                (proptest::strategy::Just(h), proptest::strategy::Just(w), proptest::collection::vec(0..3, h * w))
            }),
            value in -1i64..4,
        ) {
            let at = Fused::of(PARTS.colorcount, PARTS.toobject).expect("fuses");
            let args = [patch, Value::grid(Grid::new(h, w, cells)), Value::Int(value)];
            proptest::prop_assert_eq!(at.run(&args).ok(), at.composed(&args).ok());
        }
    }

    proptest::proptest! {
        /// `b`'s locations in a patch's box less the patch, and on the ring around the box,
        /// are the counts of the primitives' sets, for index sets and objects in a small box.
        #[test]
        fn a_part_of_a_box_counted_in_a_set_is_the_count_of_the_built_set(
            patch in proptest::bool::ANY.prop_flat_map(points),
            b in points(false),
        ) {
            let parts = &*PARTS;
            let both = Fused::of(parts.size, parts.intersection).expect("fuses");
            for part in [parts.delta, parts.outbox] {
                let counted = both.with_first(part).expect("fuses");
                let args = [patch.clone(), b.clone()];
                // Thrice, so that `b`, met before, comes with its bitmap.
                for _ in 0..3 {
                    proptest::prop_assert_eq!(counted.run(&args).ok(), counted.composed(&args).ok());
                }
            }
        }

        /// A set's locations in a rectangle, and on the ring around one, are the same counted
        /// through its bitmap as by the scan of its rows: rectangles inside, across and outside
        /// its box, and empty ones.
        #[test]
        fn locations_in_a_rectangle_through_the_bitmap_are_the_scans(
            b in points(false),
            rects in proptest::collection::vec((-6i32..12, -6i32..12, -6i32..12, -6i32..12), 1..20),
        ) {
            let Value::Indices(b) = b else { unreachable!("an index set") };
            if let Some(bitmap) = points::BoxBitmap::of(&b) {
                for rect in rects {
                    for ring in [false, true] {
                        proptest::prop_assert_eq!(
                            ring_or_box(ring, rect, |r| bitmap.count_in_rect(r)),
                            ring_or_box(ring, rect, |r| scanned_in_rect(&b, r)),
                        );
                    }
                }
            }
        }
    }

    fn assert_same(got: DslResult<Value>, expected: DslResult<Value>, args: &[Value]) {
        match (&got, &expected) {
            (Ok(g), Ok(e)) => assert_eq!(g, e, "{args:?}"),
            (Err(g), Err(e)) => assert_eq!(g.to_string(), e.to_string(), "{args:?}"),
            _ => panic!("{args:?}: {got:?} against {expected:?}"),
        }
    }
}
