//! Containers: membership, set algebra, selection by key, counting, filtering, and the
//! conversions between tuples and frozensets.
//!
//! The reference's `type(container)(...)` keeps the kind of its input: a tuple stays a tuple (a
//! grid's rows stay a grid here) and a frozenset stays a frozenset. Frozensets are walked in the
//! canonical ascending order of [`crate::dsl::value`], so `first` of a set is its smallest
//! member and ties in `argmax` go to the smallest. Index sets and objects keep their compact
//! variants: their set algebra merges sorted slices and their lookups are binary searches.
//! Keys and items are compared with Python's `<` ([`py_lt`]), so kinds Python cannot order
//! raise `TypeError` here too.

use std::cmp::Ordering;

use smallvec::SmallVec;

use crate::dsl::column::{map, Mapped, Mapping};
use crate::dsl::error::{DslError, DslResult};
use crate::dsl::exact::{collect_some, try_collect};
use crate::dsl::func::{call1, holds_foreign, Func};
use crate::dsl::labelled::ObjectMeta;
use crate::dsl::points::{self, moved, BoxBitmap, Placed, Point};
use crate::dsl::registry::PrimSpec;
use crate::dsl::shared::{Shared, SliceBuilder};
use crate::dsl::value::{push_value, Cell, Color, Grid, Loc, SmallCell, Value};
use crate::prim;

use super::common::Histogram;
use super::numbers::{check_members, number, pair_of, py_lt, unsupported};

pub const PRIMS: &[PrimSpec] = &[
    prim!(contained, [Any, Container] -> Boolean, "element of"),
    prim!(combine, [Container, Container] -> Container, "union (tuples concatenate)"),
    prim!(intersection, [FrozenSet, FrozenSet] -> FrozenSet, "intersection of two sets"),
    prim!(difference, [FrozenSet, FrozenSet] -> FrozenSet, "set difference"),
    prim!(dedupe, [Tuple] -> Tuple, "remove duplicates, keeping first occurrences"),
    prim!(order, [Container, Callable] -> Tuple, "stable sort by a key function", mapping = &ORDER),
    prim!(repeat, [Any, Integer] -> Tuple, "an item repeated n times"),
    prim!(size, [Container] -> Integer, "cardinality"),
    prim!(merge, [ContainerContainer] -> Container, "merging"),
    prim!(maximum, [IntegerSet] -> Integer, "maximum (0 when empty)"),
    prim!(minimum, [IntegerSet] -> Integer, "minimum (0 when empty)"),
    prim!(valmax, [Container, Callable] -> Integer, "maximum of a key function", mapping = &VALMAX),
    prim!(valmin, [Container, Callable] -> Integer, "minimum of a key function", mapping = &VALMIN),
    prim!(argmax, [Container, Callable] -> Any, "largest item by a key function", mapping = &ARGMAX),
    prim!(argmin, [Container, Callable] -> Any, "smallest item by a key function", mapping = &ARGMIN),
    prim!(mostcommon, [Container] -> Any, "most common item"),
    prim!(leastcommon, [Container] -> Any, "least common item"),
    prim!(initset, [Any] -> FrozenSet, "initialize container"),
    prim!(sfilter, [Container, Callable] -> Container, "keep items that satisfy a condition", mapping = &SFILTER),
    prim!(mfilter, [Container, Callable] -> FrozenSet, "filter and merge", mapping = &MFILTER),
    prim!(extract, [Container, Callable] -> Any, "first item that satisfies a condition"),
    prim!(totuple, [FrozenSet] -> Tuple, "conversion to tuple"),
    prim!(first, [Container] -> Any, "first item of container"),
    prim!(last, [Container] -> Any, "last item of container"),
    prim!(insert, [Any, FrozenSet] -> FrozenSet, "insert item into set"),
    prim!(remove, [Any, Container] -> Container, "remove item from container"),
    prim!(other, [Container, Any] -> Any, "other value in the container"),
    prim!(product, [Container, Container] -> FrozenSet, "cartesian product"),
    prim!(pair, [Tuple, Tuple] -> TupleTuple, "zipping of two tuples"),
];

// ----- walking containers -----------------------------------------------------------------

#[cold]
#[inline(never)]
fn not_iterable(v: &Value) -> DslError {
    DslError::type_error("an iterable container", v)
}

/// `len(c)`, or `TypeError` for a value that is not a container.
#[inline]
fn length(c: &Value) -> DslResult<usize> {
    c.len().ok_or_else(|| not_iterable(c))
}

/// The members of a container in iteration order, made one at a time.
fn iter_members(c: &Value) -> DslResult<impl Iterator<Item = Value> + '_> {
    let n = length(c)?;
    Ok((0..n).filter_map(move |k| c.member(k)))
}

/// The members of a container in iteration order, all at once.
pub(super) fn members_of(c: &Value) -> DslResult<Vec<Value>> {
    c.members().ok_or_else(|| not_iterable(c))
}

/// [`members_of`], appended to `out`.
pub(super) fn push_members_of(c: &Value, out: &mut Vec<Value>) -> DslResult<()> {
    if c.push_members(out) {
        Ok(())
    } else {
        Err(not_iterable(c))
    }
}

/// Python's `value in container`.
fn contains(container: &Value, value: &Value) -> DslResult<bool> {
    if container.is_set() {
        return Ok(set_find(container, value).is_some());
    }
    // A tuple of small integers and an integer (`contained(j, interval(..))`): compared in
    // place, where a member would be made a value to compare.
    if let (Value::Ints(items), Value::Int(n)) = (container, value) {
        return Ok(items.iter().any(|&item| i64::from(item) == *n));
    }
    Ok(iter_members(container)?.any(|m| m == *value))
}

/// Where `value` sits in a frozenset, found by binary search in the canonical order.
pub(super) fn set_find(set: &Value, value: &Value) -> Option<usize> {
    match set {
        Value::Indices(l) => l.binary_search_by(|&m| Value::loc(m).cmp(value)).ok(),
        Value::Object(c) => c.binary_search_by(|&m| cmp_cell(m, value)).ok(),
        Value::Set(v) => v.binary_search(value).ok(),
        _ => None,
    }
}

/// A cell against a value in the canonical order, without building the cell's tuple when the
/// value is shaped like a cell.
fn cmp_cell(c: Cell, v: &Value) -> Ordering {
    if let Value::Cell(d) = v {
        return c.cmp(d);
    }
    if let Value::Tuple(items) = v {
        if let [Value::Int(color), Value::Pair(i, j)] = &items[..] {
            return (c.color as i64, c.i as i64, c.j as i64).cmp(&(*color, *i, *j));
        }
    }
    Value::cell(c).cmp(v)
}

/// Python's `type(c)(e for e in c if keep(e))`, given `c`'s members and what decides each, in
/// iteration order, read by `keep`; index sets, objects and grids keep their compact variant.
/// `sfilter` hands the values its condition returned, read as the members are copied, in one
/// pass: a list of booleans built from them first cost as much again.
fn filter_kind<D>(c: &Value, members: &[Value], decisions: &[D], keep: impl Fn(&D) -> bool) -> Value {
    /// Room for every member, given back where fewer than half are kept (which copies them):
    /// at most twice the room needed stays held, as by a vector grown by pushes. Counting the
    /// kept members first, for exact room, cost more than the copies (training: 2.4 M
    /// instructions more).
    fn masked<T: Clone, D>(items: &[T], decisions: &[D], keep: &impl Fn(&D) -> bool) -> Vec<T> {
        let mut out = Vec::with_capacity(items.len());
        for (x, d) in items.iter().zip(decisions) {
            if keep(d) {
                out.push(x.clone());
            }
        }
        if out.len() < out.capacity() / 2 {
            out.shrink_to_fit();
        }
        out
    }
    /// Points in room for all, the block shrunk to those kept: each written in the next
    /// place, which only a kept one takes (no branch that the decisions decide).
    fn masked_points<T: Copy, D>(items: &[T], decisions: &[D], keep: &impl Fn(&D) -> bool) -> Shared<[T]> {
        let mut out = SliceBuilder::new(items.len());
        let room = out.room();
        let mut kept = 0;
        for (&x, d) in items.iter().zip(decisions) {
            room[kept].write(x);
            kept += usize::from(keep(d));
        }
        // SAFETY: the first `kept` places of the room were written just now.
        unsafe { out.set_written(kept) };
        out.finish()
    }
    match c {
        Value::Indices(l) => Value::Indices(masked_points(l, decisions, &keep)),
        Value::Object(cells) => Value::Object(masked_points(cells, decisions, &keep)),
        Value::Grid(g) => {
            let rows: Vec<usize> = (0..g.h).filter(|&r| keep(&decisions[r])).collect();
            let cells = rows.iter().flat_map(|&r| g.row(r).iter().copied()).collect();
            Value::grid(Grid::new(rows.len(), g.w, cells))
        }
        _ => {
            let kept = masked(members, decisions, &keep);
            if c.is_set() {
                Value::set_sorted(kept)
            } else {
                Value::tuple(kept)
            }
        }
    }
}

/// `filter_kind` with a test of each member.
fn filter_by(c: &Value, mut keep: impl FnMut(&Value) -> DslResult<bool>) -> DslResult<Value> {
    let members = members_of(c)?;
    let mask = try_collect(members.iter().map(&mut keep))?;
    Ok(filter_kind(c, &members, &mask, |&k| k))
}

/// Grids stacked top to bottom (the tuple of all their rows), when the non-empty ones share a
/// width.
fn stack_grids(grids: &[&Grid]) -> Option<Grid> {
    let w = grids.iter().find(|g| g.h > 0).map_or(0, |g| g.w);
    if grids.iter().any(|g| g.h > 0 && g.w != w) {
        return None;
    }
    let h = grids.iter().map(|g| g.h).sum();
    let cells = grids.iter().flat_map(|g| g.cells.iter().copied()).collect();
    Some(Grid::new(h, w, cells))
}

// ----- set algebra on sorted members ------------------------------------------------------

/// A binary set operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetOp {
    Union,
    Intersection,
    Difference,
}

/// How many times larger one side must be for [`merge_sorted`] to search it member by member
/// instead of walking it.
const SKEW: usize = 16;

/// `op` on two sorted, duplicate-free slices. A difference or intersection of a few members
/// with many (`difference(shift(pattern, offset), grid_cells)` over every offset) searches the
/// large side for each member of the small one; anything else is one merge ([`merge_walk`]).
fn merge_sorted<T: Ord + Clone>(op: SetOp, a: &[T], b: &[T]) -> Vec<T> {
    match op {
        SetOp::Difference if a.len().saturating_mul(SKEW) < b.len() => kept(a, |x| b.binary_search(x).is_err()),
        SetOp::Intersection if a.len().saturating_mul(SKEW) < b.len() => kept(a, |x| b.binary_search(x).is_ok()),
        // The members kept are `a`'s, as in the merge.
        SetOp::Intersection if b.len().saturating_mul(SKEW) < a.len() => {
            picked(b, |y| a.binary_search(y).ok().map(|k| a[k].clone()))
        }
        _ => merge_walk(op, a, b),
    }
}

/// The members of `items` that `keep` keeps, in order ([`picked`]).
fn kept<T: Clone>(items: &[T], keep: impl Fn(&T) -> bool) -> Vec<T> {
    picked(items, |x| keep(x).then(|| x.clone()))
}

/// What `pick` gives for the members of `items`, in order: gathered in room for one per
/// member (a filter's collect grows by doubling), the room left over given back where it is
/// most of it, as the result may outlive the call.
fn picked<T, U>(items: &[T], pick: impl Fn(&T) -> Option<U>) -> Vec<U> {
    let mut out = Vec::with_capacity(items.len());
    out.extend(items.iter().filter_map(pick));
    if out.len() < out.capacity() / 2 {
        out.shrink_to_fit();
    }
    out
}

/// `op` on two sorted, duplicate-free slices, as one merge.
fn merge_walk<T: Ord + Clone>(op: SetOp, a: &[T], b: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(match op {
        SetOp::Union => a.len() + b.len(),
        SetOp::Intersection => a.len().min(b.len()),
        SetOp::Difference => a.len(),
    });
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(&x), Some(&y)) = (a.peek(), b.peek()) {
        match x.cmp(y) {
            Ordering::Less => {
                if op != SetOp::Intersection {
                    out.push(x.clone());
                }
                a.next();
            }
            Ordering::Greater => {
                if op == SetOp::Union {
                    out.push(y.clone());
                }
                b.next();
            }
            Ordering::Equal => {
                if op != SetOp::Difference {
                    out.push(x.clone());
                }
                a.next();
                b.next();
            }
        }
    }
    if op != SetOp::Intersection {
        out.extend(a.cloned());
    }
    if op == SetOp::Union {
        out.extend(b.cloned());
    }
    out
}

/// `op` on two index sets or two objects (each given as the value and its members): a
/// difference from, or an intersection with, a set of [`PROBED_FROM`] or more members met
/// before tests membership in that set's [`BoxBitmap`]; anything else is [`merge_sorted`].
fn points_op<P: Point>(op: SetOp, (a, x): (&Value, &[P]), (b, y): (&Value, &[P])) -> Vec<P> {
    let a_kept = |in_b: &BoxBitmap, keep: bool| kept(x, |&p| in_b.contains(p) == keep);
    let probed = match op {
        SetOp::Union => None,
        SetOp::Difference => with_bitmap(b, y, |in_b| a_kept(in_b, false)),
        // Equal points are the same point, so `b`'s members in `a` are `a`'s.
        SetOp::Intersection => with_bitmap(b, y, |in_b| a_kept(in_b, true))
            .or_else(|| with_bitmap(a, x, |in_a| kept(y, |&p| in_a.contains(p)))),
    };
    probed.unwrap_or_else(|| merge_sorted(op, x, y))
}

/// Sets with fewer members than this are merged or searched as they are (measured: from 8 on,
/// solve_7df24a62's sets of 8 to 60 grid cells, tested against each offset of a pattern, were
/// faster through a bitmap; from 32 on they were not probed).
const PROBED_FROM: usize = 8;

/// The sets a thread's set algebra met more than once, with their bitmaps ([`with_bitmap`]),
/// and the addresses of the last ones it met once.
struct Probes {
    /// The set's members' address, the set (held, so that while it is here no other set can
    /// have that address), and its bitmap (`None` where its box is too large for one).
    built: Vec<(usize, Value, Option<BoxBitmap>)>,
    next_built: usize,
    seen: [usize; Probes::SEEN],
    next_seen: usize,
}

impl Probes {
    /// How many sets with bitmaps, and how many addresses met once, a thread keeps: a function
    /// applied over every offset of a pattern may test it against a few sets in turn.
    const BUILT: usize = 4;
    const SEEN: usize = 8;
}

thread_local! {
    static PROBES: std::cell::RefCell<Probes> = const {
        std::cell::RefCell::new(Probes { built: Vec::new(), next_built: 0, seen: [0; Probes::SEEN], next_seen: 0 })
    };
}

/// `f` of the bitmap of `set` (an index set or object whose members are `points`), when `set`
/// has [`PROBED_FROM`] or more members and was met before on this thread
/// (`difference(shift(pattern, offset), cells)` for every offset meets the same `cells` each
/// time); `None` otherwise, and where its box is too large for a bitmap.
pub(super) fn with_bitmap<P: Point, R>(set: &Value, points: &[P], f: impl FnOnce(&BoxBitmap) -> R) -> Option<R> {
    if points.len() < PROBED_FROM {
        return None;
    }
    let address = points.as_ptr() as usize;
    PROBES.with_borrow_mut(|probes| {
        if let Some((_, _, bitmap)) = probes.built.iter().find(|(at, _, _)| *at == address) {
            return bitmap.as_ref().map(f);
        }
        if !probes.seen.contains(&address) {
            let k = probes.next_seen;
            probes.seen[k] = address;
            probes.next_seen = (k + 1) % Probes::SEEN;
            return None;
        }
        let bitmap = BoxBitmap::of(points);
        let result = bitmap.as_ref().map(f);
        let entry = (address, set.clone(), bitmap);
        if probes.built.len() < Probes::BUILT {
            probes.built.push(entry);
        } else {
            let k = probes.next_built;
            probes.built[k] = entry;
            probes.next_built = (k + 1) % Probes::BUILT;
        }
        result
    })
}

/// The size of `op(moved, b)` without building it: `moved` is `a`'s members each moved by
/// `(di, dj)` (which keeps their order), `a` and `b` both index sets or both objects. `None`
/// where they are not, or where a moved coordinate leaves an `i32` (`shift` then makes members
/// of another kind): the caller builds the set.
pub(super) fn moved_op_len(op: SetOp, a: &Value, offset: (i64, i64), b: &Value) -> Option<usize> {
    match (a, b) {
        (Value::Indices(x), Value::Indices(y)) => points_op_len(op, (a, x), offset, (b, y)),
        (Value::Object(x), Value::Object(y)) => points_op_len(op, (a, x), offset, (b, y)),
        _ => None,
    }
}

/// [`moved_op_len`] on the points of both sides: `b`'s members found through its bitmap where
/// [`with_bitmap`] has one, else `b`'s members moved back looked up in `a`'s bitmap where that
/// has one (`size(intersection(cells, p))` for many patches `p`), else each of `a`'s searched in
/// what is left of `b` after the one before.
fn points_op_len<P: Point>(
    op: SetOp,
    (a, x): (&Value, &[P]),
    offset: (i64, i64),
    (b, y): (&Value, &[P]),
) -> Option<usize> {
    let in_b = match with_bitmap(b, y, |bitmap| {
        x.iter()
            .try_fold(0, |n, &p| Some(n + usize::from(bitmap.contains(moved(p, offset)?))))
    })
    .or_else(|| with_bitmap(a, x, |bitmap| bitmap.count_moved_back(y, offset)))
    {
        Some(counted) => counted?,
        None => {
            let mut rest = y;
            let mut common = 0;
            for &p in x {
                let p = moved(p, offset)?;
                rest = &rest[rest.partition_point(|q| *q < p)..];
                if rest.first() == Some(&p) {
                    common += 1;
                    rest = &rest[1..];
                }
            }
            common
        }
    };
    Some(match op {
        SetOp::Intersection => in_b,
        SetOp::Difference => x.len() - in_b,
        SetOp::Union => x.len() + y.len() - in_b,
    })
}

/// Whether `op(moved, b)` is empty, `moved` and `b` as for [`moved_op_len`]: for a difference,
/// whether every moved member is in `b`; for an intersection, whether none is. Where `b` has
/// a bitmap (see [`with_bitmap`]) the members are looked up until the first that decides,
/// once every moved coordinate is known to stay inside `i32` (the count would give way to the
/// primitives at any member that leaves it); else it is the count's. `None` where
/// [`moved_op_len`] gives none.
pub(super) fn moved_op_is_empty(op: SetOp, a: &Value, offset: (i64, i64), b: &Value) -> Option<bool> {
    let early = match (a, b) {
        (Value::Indices(x), Value::Indices(y)) => decided_early(op, (a, x), offset, (b, y)),
        (Value::Object(x), Value::Object(y)) => decided_early(op, (a, x), offset, (b, y)),
        _ => None,
    };
    early.or_else(|| moved_op_len(op, a, offset, b).map(|n| n == 0))
}

/// [`moved_op_is_empty`] by `b`'s bitmap, stopping at the first member that decides; `None`
/// for a union, without a bitmap, or where a moved coordinate may leave `i32`.
fn decided_early<P: Point>(
    op: SetOp,
    (a, x): (&Value, &[P]),
    offset: (i64, i64),
    (b, y): (&Value, &[P]),
) -> Option<bool> {
    let in_b_when_empty = in_b_when_empty(op)?;
    if !moves_inside(x.is_empty(), coordinate_range(a, x), offset) {
        return None;
    }
    with_bitmap(b, y, |bitmap| all_decide(x, offset, bitmap, in_b_when_empty))
}

/// For [`moved_op_is_empty`]: whether each moved member is in `b` (`true`: a difference is
/// empty then) or none is (`false`: an intersection is); `None` for a union.
fn in_b_when_empty(op: SetOp) -> Option<bool> {
    match op {
        SetOp::Difference => Some(true),
        SetOp::Intersection => Some(false),
        SetOp::Union => None,
    }
}

/// Whether points, every coordinate of which lies in `range` (`(lo, hi)`), all stay inside
/// `i32` moved by `offset` (as none do where there are none, `empty`).
pub(super) fn moves_inside(empty: bool, (lo, hi): (i32, i32), offset: (i64, i64)) -> bool {
    let stays = |c: i32, d: i64| i64::from(c).checked_add(d).is_some_and(|m| i32::try_from(m).is_ok());
    empty || [lo, hi].iter().all(|&c| stays(c, offset.0) && stays(c, offset.1))
}

/// Whether every one of `points` moved by `offset` is in `bitmap` (`in_b_when_empty`) or not.
fn all_decide<P: Point>(points: &[P], offset: (i64, i64), bitmap: &BoxBitmap, in_b_when_empty: bool) -> bool {
    points
        .iter()
        .all(|&p| moved(p, offset).is_some_and(|p| bitmap.contains(p) == in_b_when_empty))
}

/// [`moved_op_is_empty`] of one pattern `a` and one set `b` for many offsets, as rows of
/// `sfilter(offsets, compose(matcher(size, ZERO), compose(rbind(difference, b), lbind(shift,
/// a))))` ask it: `a`'s range, `b`'s bitmap and `a`'s points placed in it found once, where
/// each row looked them up in the thread's memories ([`coordinate_range`], [`with_bitmap`]).
pub(super) struct MovedTests {
    /// The sets, held, with their members' addresses, which tell them from other sets
    /// ([`MovedTests::of`]).
    _held: (Value, Value),
    addresses: (usize, usize),
    empty_pattern: bool,
    range: (i32, i32),
    /// `b`'s bitmap and `a`'s points in it; `None` where `b`'s box is too large for a bitmap.
    placed: Option<(BoxBitmap, Placed)>,
    in_b_when_empty: bool,
}

/// The address of the members of an index set or object, which tells it from any other set
/// while it is held.
pub(super) fn members_address(set: &Value) -> Option<usize> {
    match set {
        Value::Indices(x) => Some(Shared::as_ptr(x).cast::<u8>() as usize),
        Value::Object(x) => Some(Shared::as_ptr(x).cast::<u8>() as usize),
        _ => None,
    }
}

impl MovedTests {
    /// The tests of `a` against `b`, both index sets or both objects, for a difference or an
    /// intersection; `None` for others.
    pub(super) fn new(op: SetOp, a: &Value, b: &Value) -> Option<MovedTests> {
        let in_b_when_empty = in_b_when_empty(op)?;
        fn placed<P: Point>(x: &[P], y: &[P]) -> ((i32, i32), Option<(BoxBitmap, Placed)>) {
            let placed = BoxBitmap::of(y).map(|bitmap| {
                let placed = bitmap.place(x);
                (bitmap, placed)
            });
            (points_range(x), placed)
        }
        let (range, placed) = match (a, b) {
            (Value::Indices(x), Value::Indices(y)) => placed(x, y),
            (Value::Object(x), Value::Object(y)) => placed(x, y),
            _ => return None,
        };
        Some(MovedTests {
            _held: (a.clone(), b.clone()),
            addresses: (members_address(a)?, members_address(b)?),
            empty_pattern: a.len() == Some(0),
            range,
            placed,
            in_b_when_empty,
        })
    }

    /// Whether these are the tests of `a` against `b`: the same sets, not equal ones.
    pub(super) fn of(&self, a: &Value, b: &Value) -> bool {
        (members_address(a), members_address(b)) == (Some(self.addresses.0), Some(self.addresses.1))
    }

    /// [`moved_op_is_empty`] of the sets with `a` moved by `offset`; `None` where it is left to
    /// the general path (no bitmap, a coordinate that may leave `i32`).
    pub(super) fn is_empty(&self, offset: (i64, i64)) -> Option<bool> {
        let (bitmap, placed) = self.placed.as_ref()?;
        moves_inside(self.empty_pattern, self.range, offset)
            .then(|| placed.all_moved(bitmap, offset, self.in_b_when_empty))
    }
}

/// The lowest and the highest of the row and column coordinates of `points`, the members of
/// `set` (`(i32::MAX, i32::MIN)` for none). The last set asked about is remembered with its
/// range on this thread (held, so that no other set can have its members' address while it
/// is): [`decided_early`] asks about the same pattern for every offset it is moved by, and
/// scanning it each time cost solve_7df24a62 7 % of its instructions.
fn coordinate_range<P: Point>(set: &Value, points: &[P]) -> (i32, i32) {
    /// The members' address and number, the set, and its range.
    type Remembered = Option<((usize, usize), Value, (i32, i32))>;
    thread_local! {
        static LAST: std::cell::RefCell<Remembered> = const { std::cell::RefCell::new(None) };
    }
    let key = (points.as_ptr() as usize, points.len());
    LAST.with_borrow_mut(|last| match last {
        Some((k, _, range)) if *k == key => *range,
        _ => {
            let range = points_range(points);
            *last = Some((key, set.clone(), range));
            range
        }
    })
}

/// The lowest and the highest of the row and column coordinates of `points`.
pub(super) fn points_range<P: Point>(points: &[P]) -> (i32, i32) {
    points.iter().fold((i32::MAX, i32::MIN), |(lo, hi), p| {
        let [_, i, j] = p.coords();
        (lo.min(i).min(j), hi.max(i).max(j))
    })
}

/// `op` on two frozensets: a merge of index sets or of objects when both sides are one, of
/// their members in canonical order otherwise.
pub(super) fn set_algebra(op: SetOp, a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Indices(x), Value::Indices(y)) => Value::Indices(Shared::from(points_op(op, (a, x), (b, y)))),
        (Value::Object(x), Value::Object(y)) => Value::Object(Shared::from(points_op(op, (a, x), (b, y)))),
        (Value::Set(x), Value::Set(y)) => Value::set_sorted(merge_sorted(op, x, y)),
        _ => {
            let (x, y) = (a.members().unwrap_or_default(), b.members().unwrap_or_default());
            Value::set_sorted(merge_sorted(op, &x, &y))
        }
    }
}

// ----- selection by key -------------------------------------------------------------------

/// Python's `max(items, key=key)` (or `min`) given the keys its loop computes: the first item
/// whose key no later key beats, with its key; `None` when there are no items. A key that
/// raised (`error`, after `keys`) raises once the comparisons before it have run, as in the
/// loop.
fn best_by(items: &[Value], keys: &[Value], error: Option<DslError>, max: bool) -> DslResult<Option<(Value, Value)>> {
    let mut best: Option<(&Value, &Value)> = None;
    for (item, k) in items.iter().zip(keys) {
        let better = match best {
            None => true,
            Some((_, b)) if max => py_lt(b, k)?,
            Some((_, b)) => py_lt(k, b)?,
        };
        if better {
            best = Some((item, k));
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(best.map(|(item, k)| (item.clone(), k.clone()))),
    }
}

/// `maximum`/`minimum`: `max(container, default=0)`.
fn extreme(c: &Value, max: bool) -> DslResult<Value> {
    fn end<T>(items: &[T], max: bool) -> Option<&T> {
        if max {
            items.last()
        } else {
            items.first()
        }
    }
    // Locations and cells are sorted in an order that agrees with Python's `<` on them.
    let found = match c {
        Value::Indices(l) => end(l, max).map(|&x| Value::loc(x)),
        Value::Object(cells) => end(cells, max).map(|&x| Value::cell(x)),
        Value::Pair(a, b) => Some(Value::Int(if max { *a.max(b) } else { *a.min(b) })),
        _ => {
            let items = members_of(c)?;
            best_by(&items, &items, None, max)?.map(|(e, _)| e)
        }
    };
    Ok(found.unwrap_or(Value::Int(0)))
}

/// `valmax`/`valmin`: `compfunc(max(container, key=compfunc, default=0))`, the best key (the
/// key of `0` for an empty container).
static VALMAX: Mapping = Mapping {
    container: 0,
    function: 1,
    members: members_or_zero,
    combine: |_, members, keys| {
        Ok(best_by(members, &keys.values, keys.error.take(), true)?.map_or(Value::Int(0), |(_, k)| k))
    },
    generator: false,
};

static VALMIN: Mapping = Mapping {
    container: 0,
    function: 1,
    members: members_or_zero,
    combine: |_, members, keys| {
        Ok(best_by(members, &keys.values, keys.error.take(), false)?.map_or(Value::Int(0), |(_, k)| k))
    },
    generator: false,
};

/// The members, or `0` alone for an empty container (`max`'s `default=0`, to which `valmax`
/// applies its function).
fn members_or_zero(c: &Value, out: &mut Vec<Value>) -> DslResult<()> {
    let before = out.len();
    push_members_of(c, out)?;
    if out.len() == before {
        out.push(Value::Int(0));
    }
    Ok(())
}

/// `argmax`/`argmin`: the first item with the best key.
static ARGMAX: Mapping = Mapping {
    container: 0,
    function: 1,
    members: push_members_of,
    combine: |_, members, keys| best_item(members, keys, true),
    generator: false,
};

static ARGMIN: Mapping = Mapping {
    container: 0,
    function: 1,
    members: push_members_of,
    combine: |_, members, keys| best_item(members, keys, false),
    generator: false,
};

fn best_item(members: &[Value], keys: &mut Mapped, max: bool) -> DslResult<Value> {
    match best_by(members, &keys.values, keys.error.take(), max)? {
        Some((item, _)) => Ok(item),
        None => crate::bail!(Value, "{}() arg is an empty sequence", if max { "max" } else { "min" }),
    }
}

/// `mostcommon`/`leastcommon`: `max(set(c), key=c.count)`. The distinct values are met in
/// canonical order, so ties go to the smallest.
fn commonest(c: &Value, most: bool) -> DslResult<Value> {
    // A tuple of small integers (a grid's row, as `apply(mostcommon, grid)` meets it): its
    // counts in a histogram, ties to the smallest as below, where sorting its members as
    // values took three quarters of solve_e26a3af2.
    if let Value::Ints(items) = c {
        let counts = Histogram::of(items);
        let picked = if most {
            counts.most_common()
        } else {
            counts.least_common()
        };
        if let Some(picked) = picked {
            return Ok(Value::Int(picked.into()));
        }
    }
    let items = members_of(c)?;
    if c.is_set() {
        crate::bail!(Attribute, "'frozenset' object has no attribute 'count'");
    }
    commonest_by_sorting(items, most)
}

/// [`commonest`] of a tuple's members, by sorting them: the simple path for any members.
fn commonest_by_sorting(mut items: Vec<Value>, most: bool) -> DslResult<Value> {
    items.sort();
    let mut best: Option<&[Value]> = None;
    for run in items.chunk_by(|x, y| x == y) {
        let better = match best {
            None => true,
            Some(b) if most => run.len() > b.len(),
            Some(b) => run.len() < b.len(),
        };
        if better {
            best = Some(run);
        }
    }
    match best.and_then(|run| run.first()) {
        Some(v) => Ok(v.clone()),
        None => crate::bail!(Value, "{}() arg is an empty sequence", if most { "max" } else { "min" }),
    }
}

/// Below this length CPython's `list.sort` is one natural run plus a binary insertion sort.
const PY_MIN_MERGE: usize = 64;

/// The order in which Python's stable `sorted(..., key=...)` puts items with these keys.
///
/// Keys that are all numbers (integers and booleans, which Python compares as integers) are
/// totally ordered, and any stable sort puts them where CPython's does: they are sorted by
/// value. Other keys go to [`replayed_permutation`].
fn sort_permutation(keys: &[Value]) -> DslResult<Vec<usize>> {
    if keys.iter().all(|k| number(k).is_some()) {
        let mut idx: Vec<usize> = (0..keys.len()).collect();
        idx.sort_by_key(|&i| number(&keys[i]));
        return Ok(idx);
    }
    replayed_permutation(keys)
}

/// [`sort_permutation`] for keys of any kind. Short inputs (all the DSL meets in practice)
/// replay CPython's own algorithm with Python's `<`, so keys that are only partially ordered
/// (frozensets, by inclusion) land where the reference puts them and keys Python cannot
/// compare raise `TypeError`. Longer inputs use a stable sort in the canonical order (numbers
/// by value), which agrees wherever the keys are totally ordered, and still raise when two
/// neighbours cannot be compared.
fn replayed_permutation(keys: &[Value]) -> DslResult<Vec<usize>> {
    let n = keys.len();
    let mut idx: Vec<usize> = (0..n).collect();
    if n < 2 {
        return Ok(idx);
    }
    let lt = |x: usize, y: usize| py_lt(&keys[x], &keys[y]);
    if n >= PY_MIN_MERGE {
        idx.sort_by(|&x, &y| match (number(&keys[x]), number(&keys[y])) {
            (Some(p), Some(q)) => p.cmp(&q),
            _ => keys[x].cmp(&keys[y]),
        });
        for w in idx.windows(2) {
            lt(w[1], w[0])?;
        }
        return Ok(idx);
    }
    // The leading run: strictly descending (then reversed) or non-descending.
    let mut run = 2;
    if lt(1, 0)? {
        while run < n && lt(run, run - 1)? {
            run += 1;
        }
        idx[..run].reverse();
    } else {
        while run < n && !lt(run, run - 1)? {
            run += 1;
        }
    }
    // Binary insertion of the rest, each item after any equal ones.
    for i in run..n {
        let pivot = i;
        let (mut lo, mut hi) = (0, i);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if lt(pivot, idx[mid])? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        idx[lo..=i].rotate_right(1);
    }
    Ok(idx)
}

/// For each item, whether it is the first occurrence of its value.
fn first_occurrences<T: Ord>(items: &[T]) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..items.len()).collect();
    // Stable: the first occurrence of a value leads its run.
    idx.sort_by(|&x, &y| items[x].cmp(&items[y]));
    let mut keep = vec![false; items.len()];
    let mut previous: Option<&T> = None;
    for &i in &idx {
        keep[i] = previous != Some(&items[i]);
        previous = Some(&items[i]);
    }
    keep
}

/// The members of a container when all are integers that fit a coordinate.
fn small_ints(c: &Value) -> Option<Vec<i32>> {
    match c {
        Value::Pair(a, b) => Some(vec![i32::try_from(*a).ok()?, i32::try_from(*b).ok()?]),
        Value::Ints(v) => Some(v.to_vec()),
        Value::Tuple(v) | Value::Set(v) => v
            .iter()
            .map(|m| match m {
                Value::Int(n) => i32::try_from(*n).ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// The slices of `parts` when `view` sees a slice in each (empty sets count as empty slices),
/// and whether their concatenation is sorted and unique, the slices being so each: each one
/// starts past where the one before ended (a merge of parts that lie apart, most of the time,
/// needs no sorting).
fn gather<'a, T: Copy + Ord + 'a>(
    parts: &'a [Value],
    view: impl Fn(&'a Value) -> Option<&'a [T]>,
) -> Option<(SmallVec<[&'a [T]; 8]>, bool)> {
    let mut slices: SmallVec<[&[T]; 8]> = SmallVec::new();
    let mut in_order = true;
    let mut last: Option<T> = None;
    for p in parts {
        match view(p) {
            Some(s) => {
                if let (Some(last), Some(first)) = (last, s.first()) {
                    in_order &= last < *first;
                }
                last = s.last().copied().or(last);
                slices.push(s);
            }
            None if p.is_set() && p.len() == Some(0) => {}
            None => return None,
        }
    }
    Some((slices, in_order))
}

/// The sorted, deduplicated union of `slices` (each sorted and unique), `total` points in all:
/// their concatenation where it is in order already ([`gather`]).
fn union_of<T: Point>((slices, in_order): (SmallVec<[&[T]; 8]>, bool), total: usize) -> Shared<[T]> {
    match in_order {
        true => {
            let mut all = SliceBuilder::new(total);
            slices.iter().for_each(|s| all.extend_from_slice(s));
            all.finish()
        }
        false => points::union_of_sorted(&slices, total),
    }
}

/// The merge of a set of parts that hold only points: of objects, or of index sets (empty sets
/// among them or not), the union of their members as slices ([`union_of`]); of any other mix of
/// containers of locations, or of cells, their members gathered ([`merge_point_members`]).
/// `None` for other parts. `total` is their length in all.
fn merge_point_sets(parts: &[Value], total: usize) -> Option<Value> {
    let cells = gather(parts, |p| match p {
        Value::Object(c) => Some(&c[..]),
        _ => None,
    });
    if let Some(cells) = cells {
        return Some(Value::object_sorted(union_of(cells, total)));
    }
    let locs = gather(parts, |p| match p {
        Value::Indices(l) => Some(&l[..]),
        _ => None,
    });
    match locs {
        Some(locs) => Some(Value::indices_sorted(union_of(locs, total))),
        None => merge_point_members(parts, total),
    }
}

/// The merge of a set of containers whose members are all locations, or all cells, that fit
/// an `i32` (index sets, objects, tuples of locations or of cells as `merge` of a tuple of
/// patches makes them, empty containers, in any mix): the union of their members, as
/// [`Value::set`] makes it of them all, without a value per member. `None` for other parts;
/// `total` is their length in all.
fn merge_point_members(parts: &[Value], total: usize) -> Option<Value> {
    let (mut locs, mut cells) = (Vec::new(), Vec::new());
    for p in parts {
        match p {
            Value::Indices(l) => locs.extend_from_slice(l),
            Value::Object(c) => cells.extend_from_slice(c),
            Value::LocPair(a, b) => locs.extend([*a, *b]),
            Value::CellPair(a, b) => cells.extend([a.cell(), b.cell()]),
            Value::Tuple(items) | Value::Set(items) => {
                if locs.capacity() == 0 && cells.capacity() == 0 {
                    match items.first() {
                        Some(Value::Cell(_)) => cells.reserve(total),
                        _ => locs.reserve(total),
                    }
                }
                for m in items.iter() {
                    match m {
                        Value::Cell(c) => cells.push(*c),
                        pair => locs.push(pair.as_loc_exact()?),
                    }
                }
            }
            _ => return None,
        }
    }
    match (locs.is_empty(), cells.is_empty()) {
        (true, true) => Some(Value::empty_set()),
        (false, true) => Some(Value::indices(locs)),
        (true, false) => Some(Value::object(cells)),
        (false, false) => None,
    }
}

/// `merge(frozenset(results))` without the frozenset, where every result holds only points
/// ([`merge_point_sets`]): a part met twice adds nothing twice to a set, so their members are
/// gathered straight from the results (`mapply` over a set). `None` where the results are
/// anything else, or are too many members before duplicates go: the caller builds the set.
pub fn merge_as_set(results: &[Value]) -> Option<Value> {
    let total = results.iter().try_fold(0usize, |n, r| n.checked_add(r.len()?))?;
    check_members(total).ok()?;
    merge_point_sets(results, total)
}

/// `merge(containers)`: the members of the members, in a container of the outer kind. Sets of
/// objects or of index sets merge as flat slices; tuples of equally wide grids stack.
pub fn merge_values(containers: &Value) -> DslResult<Value> {
    let parts = members_of(containers)?;
    let mut total = 0usize;
    for p in &parts {
        total = total.saturating_add(length(p)?);
    }
    check_members(total)?;
    if containers.is_set() {
        if let Some(merged) = merge_point_sets(&parts, total) {
            return Ok(merged);
        }
    } else {
        let grids: Option<Vec<&Grid>> = parts
            .iter()
            .map(|p| match p {
                Value::Grid(g) => Some(g.as_ref()),
                _ => None,
            })
            .collect();
        if let Some(g) = grids.as_deref().and_then(stack_grids) {
            return Ok(Value::grid(g));
        }
    }
    let mut items = Vec::with_capacity(total);
    for p in &parts {
        push_members_of(p, &mut items)?;
    }
    Ok(if containers.is_set() {
        Value::set(items)
    } else {
        Value::tuple(items)
    })
}

/// `sfilter(container, condition)`: the members whose condition is true, in a container of the
/// input's kind.
static SFILTER: Mapping = Mapping {
    container: 0,
    function: 1,
    members: push_members_of,
    combine: filtered,
    generator: true,
};

/// `mfilter(container, function)`: `sfilter`, then `merge`.
static MFILTER: Mapping = Mapping {
    container: 0,
    function: 1,
    members: push_members_of,
    combine: |container, members, tests| merge_values(&filtered(container, members, tests)?),
    generator: true,
};

fn filtered(container: &Value, members: &[Value], tests: &mut Mapped) -> DslResult<Value> {
    Ok(filter_kind(container, members, tests.read_all()?, Value::truthy))
}

/// `remove(value, container)`.
fn remove_value(value: &Value, c: &Value) -> DslResult<Value> {
    if let Some(edited) = point_edited(c, value, false) {
        return Ok(edited);
    }
    if c.is_set() {
        return Ok(match set_find(c, value) {
            None => c.clone(),
            Some(_) => set_algebra(SetOp::Difference, c, &Value::set(vec![value.clone()])),
        });
    }
    filter_by(c, |e| Ok(e != value))
}

/// `first(container)`.
fn first_value(c: &Value) -> DslResult<Value> {
    length(c)?;
    c.member(0)
        .ok_or_else(|| DslError::StopIteration("first() of an empty container".into()))
}

// ----- the primitives ---------------------------------------------------------------------

pub(super) fn contained(a: &[Value]) -> DslResult<Value> {
    contains(&a[1], &a[0]).map(Value::Bool)
}

fn combine(args: &[Value]) -> DslResult<Value> {
    let (a, b) = (&args[0], &args[1]);
    check_members(length(a)?.saturating_add(length(b)?))?;
    if a.is_set() && b.is_set() {
        return Ok(set_algebra(SetOp::Union, a, b));
    }
    if let (Value::Grid(x), Value::Grid(y)) = (a, b) {
        if let Some(g) = stack_grids(&[x.as_ref(), y.as_ref()]) {
            return Ok(Value::grid(g));
        }
    }
    let mut items = members_of(a)?;
    push_members_of(b, &mut items)?;
    Ok(if a.is_set() {
        Value::set(items)
    } else {
        Value::tuple(items)
    })
}

fn intersection(args: &[Value]) -> DslResult<Value> {
    let (a, b) = (&args[0], &args[1]);
    if let (Value::Bool(x), Value::Bool(y)) = (a, b) {
        return Ok(Value::Bool(x & y));
    }
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return Ok(Value::Int(x & y));
    }
    if a.is_set() && b.is_set() {
        return Ok(set_algebra(SetOp::Intersection, a, b));
    }
    Err(unsupported("&", a, b))
}

fn difference(args: &[Value]) -> DslResult<Value> {
    let (a, b) = (&args[0], &args[1]);
    if length(a)? == 0 {
        return Ok(a.clone());
    }
    if a.is_set() && b.is_set() {
        return Ok(set_algebra(SetOp::Difference, a, b));
    }
    filter_by(a, |e| Ok(!contains(b, e)?))
}

fn dedupe(a: &[Value]) -> DslResult<Value> {
    let t = &a[0];
    if length(t)? == 0 {
        return Ok(Value::empty_tuple());
    }
    if t.is_set() {
        crate::bail!(Attribute, "'frozenset' object has no attribute 'index'");
    }
    if let Value::Grid(g) = t {
        let rows: Vec<&[Color]> = (0..g.h).map(|r| g.row(r)).collect();
        let keep = first_occurrences(&rows);
        let kept: Vec<&[Color]> = rows
            .into_iter()
            .zip(&keep)
            .filter(|(_, &k)| k)
            .map(|(r, _)| r)
            .collect();
        return Ok(Value::grid(Grid::new(kept.len(), g.w, kept.concat())));
    }
    let items = members_of(t)?;
    let keep = first_occurrences(&items);
    Ok(Value::tuple(
        items
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(e, _)| e)
            .collect(),
    ))
}

/// `order(container, compfunc)`: `tuple(sorted(container, key=compfunc))`.
static ORDER: Mapping = Mapping {
    container: 0,
    function: 1,
    members: push_members_of,
    combine: sorted_by_keys,
    generator: false,
};

fn order(a: &[Value]) -> DslResult<Value> {
    ORDER.run(a)
}

fn sorted_by_keys(c: &Value, items: &[Value], keys: &mut Mapped) -> DslResult<Value> {
    let idx = sort_permutation(keys.read_all()?)?;
    if let Value::Grid(g) = c {
        let cells = idx.iter().flat_map(|&r| g.row(r).iter().copied()).collect();
        return Ok(Value::grid(Grid::new(g.h, g.w, cells)));
    }
    Ok(Value::tuple(idx.into_iter().map(|i| items[i].clone()).collect()))
}

fn repeat(a: &[Value]) -> DslResult<Value> {
    let n = number(&a[1]).ok_or_else(|| DslError::type_error("an integer", &a[1]))?;
    let n = usize::try_from(n).unwrap_or(0);
    check_members(n)?;
    Ok(Value::tuple(vec![a[0].clone(); n]))
}

pub(super) fn size(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Int(length(&a[0])? as i64))
}

fn merge(a: &[Value]) -> DslResult<Value> {
    merge_values(&a[0])
}

pub(super) fn maximum(a: &[Value]) -> DslResult<Value> {
    extreme(&a[0], true)
}

pub(super) fn minimum(a: &[Value]) -> DslResult<Value> {
    extreme(&a[0], false)
}

fn valmax(a: &[Value]) -> DslResult<Value> {
    best_value(a, &VALMAX, &ARGMAX)
}

fn valmin(a: &[Value]) -> DslResult<Value> {
    best_value(a, &VALMIN, &ARGMIN)
}

/// `valmax`/`valmin`. The reference calls the function once more, on the best member, and
/// returns what that call returns: for a foreign function (which may not return the same
/// twice, or may count its calls) the port does so too; for the DSL's own, the best key is it.
fn best_value(a: &[Value], values: &Mapping, items: &Mapping) -> DslResult<Value> {
    if holds_foreign(a) && a[0].len().is_some_and(|n| n > 0) {
        return call1(&a[1], items.run(a)?);
    }
    values.run(a)
}

fn argmax(a: &[Value]) -> DslResult<Value> {
    labelled_by_size(a, true).map_or_else(|| ARGMAX.run(a), Ok)
}

fn argmin(a: &[Value]) -> DslResult<Value> {
    labelled_by_size(a, false).map_or_else(|| ARGMIN.run(a), Ok)
}

/// `argmax`/`argmin(objects, size)` of objects a device found (labelled): the sizes
/// are known, so only the object picked (the first of the largest or smallest, in iteration
/// order) is built. `None` for anything else, an empty set included.
fn labelled_by_size(a: &[Value], max: bool) -> Option<Value> {
    let labelled = a[0].as_labelled()?;
    match &a[1] {
        Value::Func(f) if matches!(**f, Func::Prim(id) if id.spec().name == "size") => {}
        _ => return None,
    }
    let better = |o: &ObjectMeta, b: &ObjectMeta| if max { o.size > b.size } else { o.size < b.size };
    let best = labelled
        .objects()
        .iter()
        .fold(None, |best: Option<&ObjectMeta>, o| match best {
            Some(b) if !better(o, b) => Some(b),
            _ => Some(o),
        })?;
    labelled.filter(|o| o == best).member(0)
}

fn mostcommon(a: &[Value]) -> DslResult<Value> {
    commonest(&a[0], true)
}

fn leastcommon(a: &[Value]) -> DslResult<Value> {
    commonest(&a[0], false)
}

fn initset(a: &[Value]) -> DslResult<Value> {
    // One member, nothing to sort: a location or a cell is held unboxed, as `Value::set`
    // holds them, without the list of members in between.
    if let Some(loc) = a[0].as_loc_exact() {
        return Ok(Value::indices_sorted(Shared::from_slice(&[loc])));
    }
    if let Value::Cell(cell) = a[0] {
        return Ok(Value::object_sorted(Shared::from_slice(&[cell])));
    }
    Ok(Value::set(vec![a[0].clone()]))
}

fn sfilter(a: &[Value]) -> DslResult<Value> {
    SFILTER.run(a)
}

fn mfilter(a: &[Value]) -> DslResult<Value> {
    MFILTER.run(a)
}

fn extract(a: &[Value]) -> DslResult<Value> {
    // `next(e for e in container if condition(e))`: the first true condition wins over a later
    // element's error, which the reference never reaches.
    let items = members_of(&a[0])?;
    if holds_foreign(a) {
        // A foreign condition is not called past the first match (it may count its calls).
        for item in &items {
            if call1(&a[1], item.clone()).map_err(DslError::in_generator)?.truthy() {
                return Ok(item.clone());
            }
        }
        crate::bail!(StopIteration, "extract() found no item satisfying the condition")
    }
    let tests = map(&a[1], &[&items]);
    if let Some(k) = tests.values.iter().position(Value::truthy) {
        return Ok(items[k].clone());
    }
    if let Some(e) = tests.error {
        return Err(e.in_generator());
    }
    crate::bail!(StopIteration, "extract() found no item satisfying the condition")
}

fn totuple(a: &[Value]) -> DslResult<Value> {
    let c = &a[0];
    if c.is_tuple() {
        return Ok(c.clone());
    }
    Ok(Value::tuple(members_of(c)?))
}

// `first`, `last` and the other small primitives the column engine calls per element are
// inlined into its loops: called, each returned its value through memory, stored in narrower
// parts than the loop read back (a store-forwarding stall per element, perf on
// solve_ef135b50).
#[inline]
pub(super) fn first(a: &[Value]) -> DslResult<Value> {
    match a[0].duo_member(false) {
        Some(v) => Ok(v),
        None => first_value(&a[0]),
    }
}

#[inline]
pub(super) fn last(a: &[Value]) -> DslResult<Value> {
    match a[0].duo_member(true) {
        Some(v) => Ok(v),
        None => last_value(&a[0]),
    }
}

/// `last` of anything but a pair.
fn last_value(c: &Value) -> DslResult<Value> {
    match length(c)?.checked_sub(1).and_then(|k| c.member(k)) {
        Some(v) => Ok(v),
        None => crate::bail!(Value, "max() arg is an empty sequence"),
    }
}

fn insert(a: &[Value]) -> DslResult<Value> {
    let (value, c) = (&a[0], &a[1]);
    if !c.is_set() {
        crate::bail!(Attribute, "'{}' object has no attribute 'union'", c.type_name());
    }
    if let Some(edited) = point_edited(c, value, true) {
        return Ok(edited);
    }
    if set_find(c, value).is_some() {
        return Ok(c.clone());
    }
    Ok(set_algebra(SetOp::Union, c, &Value::set(vec![value.clone()])))
}

/// `insert` (`adding`) or `remove` of a location in an index set, or of a cell in an object,
/// without a singleton set to merge with or take away; `None` for any other set or value.
fn point_edited(c: &Value, value: &Value, adding: bool) -> Option<Value> {
    match c {
        Value::Indices(locs) => Some(Value::Indices(edited(locs, value.as_loc_exact()?, adding))),
        Value::Object(cells) => Some(Value::Object(edited(cells, value.as_cell_exact()?, adding))),
        _ => None,
    }
}

/// A sorted set of points with `x` added in its place (`adding`) or taken out: the set itself
/// where that changes nothing, else one copy.
fn edited<T: Ord + Copy>(set: &Shared<[T]>, x: T, adding: bool) -> Shared<[T]> {
    let (at, present) = match set.binary_search(&x) {
        Ok(at) => (at, true),
        Err(at) => (at, false),
    };
    if present == adding {
        return set.clone();
    }
    // Removing, `x` is at `at`.
    let (before, after) = (&set[..at], &set[at + usize::from(!adding)..]);
    let added = adding.then_some(x);
    let len = before.len() + usize::from(adding) + after.len();
    Shared::from_iter_at_most(len, before.iter().copied().chain(added).chain(after.iter().copied()))
}

fn remove(a: &[Value]) -> DslResult<Value> {
    remove_value(&a[0], &a[1])
}

fn other(a: &[Value]) -> DslResult<Value> {
    first_value(&remove_value(&a[1], &a[0])?)
}

fn product(args: &[Value]) -> DslResult<Value> {
    let (a, b) = (&args[0], &args[1]);
    // `for j in b for i in a`: `a` is never iterated when `b` is empty.
    let nb = length(b)?;
    if nb == 0 {
        return Ok(Value::empty_set());
    }
    let na = length(a)?;
    check_members(na.saturating_mul(nb))?;
    if let (Some(xs), Some(ys)) = (small_ints(a), small_ints(b)) {
        let locs = ys.iter().flat_map(|&j| xs.iter().map(move |&i| Loc { i, j })).collect();
        return Ok(Value::indices(locs));
    }
    // Two index sets, both sorted: the pairs of locations, first member outside, are too.
    if let (Value::Indices(xs), Value::Indices(ys)) = (a, b) {
        let mut items = Vec::with_capacity(na * nb);
        for &i in xs.iter() {
            for &j in ys.iter() {
                push_value(&mut items, Value::LocPair(i, j));
            }
        }
        return Ok(Value::set_sorted(items));
    }
    // Two objects whose cells pack small (all of ARC's): pairs of packed cells, each cell
    // packed once rather than once per pair, sorted as the general loop below makes them.
    if let (Value::Object(xs), Value::Object(ys)) = (a, b) {
        let pack = |cells: &[Cell]| collect_some(cells.iter().map(|&c| SmallCell::pack(c)));
        if let (Some(xs), Some(ys)) = (pack(xs), pack(ys)) {
            let mut items = Vec::with_capacity(na * nb);
            for &x in &xs {
                for &y in &ys {
                    push_value(&mut items, Value::CellPair(x, y));
                }
            }
            return Ok(Value::set_sorted(items));
        }
    }
    let (xs, ys) = (members_of(a)?, members_of(b)?);
    // Plain loops into a list of the final size: a flattening iterator costs more per pair
    // than the pair itself (perf: 6 % of solve_06df4c85 over every evaluation input).
    let mut items = Vec::with_capacity(na * nb);
    if a.is_set() && b.is_set() {
        // Both sorted and without duplicates: the pairs, first member outside, are too.
        for i in &xs {
            for j in &ys {
                push_value(&mut items, pair_of(i.clone(), j.clone()));
            }
        }
        return Ok(Value::set_sorted(items));
    }
    for j in &ys {
        for i in &xs {
            push_value(&mut items, pair_of(i.clone(), j.clone()));
        }
    }
    Ok(Value::set(items))
}

/// `pair` of two rows of integers: the tuple of their numbers paired, as far as the shorter goes.
pub(super) fn paired(xs: &[Color], ys: &[Color]) -> Value {
    let pairs = xs.iter().zip(ys).map(|(&x, &y)| Value::Pair(x.into(), y.into()));
    Value::tuple(pairs.collect())
}

fn pair(args: &[Value]) -> DslResult<Value> {
    let (a, b) = (&args[0], &args[1]);
    // Two rows of a grid (`papply(pair, grid, other)`): their numbers paired without listing
    // them as values first.
    if let (Value::Ints(xs), Value::Ints(ys)) = (a, b) {
        return Ok(paired(xs, ys));
    }
    let (xs, ys) = (members_of(a)?, members_of(b)?);
    let mut items = Vec::with_capacity(xs.len().min(ys.len()));
    for (x, y) in xs.into_iter().zip(ys) {
        push_value(&mut items, pair_of(x, y));
    }
    Ok(Value::tuple(items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::registry::PrimId;
    use proptest::strategy::{Just, Strategy};

    fn f(name: &str) -> Value {
        Value::prim(PrimId::of(name).expect("registered"))
    }

    fn ints(items: &[i64]) -> Value {
        Value::tuple(items.iter().map(|&n| Value::Int(n)).collect())
    }

    /// `product` of the sets of `a` and `b` (held as `kind` says) is the product of the same
    /// members listed as tuples, and the sorted pairs of their members.
    fn assert_product_pairs_members(a: &[Value], b: &[Value], kind: impl Fn(&Value) -> bool) {
        let (xs, ys) = (Value::set(a.to_vec()), Value::set(b.to_vec()));
        assert!(kind(&xs) && kind(&ys), "{xs:?} {ys:?}");
        let listed = |v: &[Value]| Value::Tuple(crate::dsl::value::Items::new(v.to_vec()));
        let got = product(&[xs, ys]).unwrap();
        assert_eq!(got, product(&[listed(a), listed(b)]).unwrap());
        let mut pairs: Vec<Value> = a
            .iter()
            .flat_map(|x| b.iter().map(|y| Value::duo(x.clone(), y.clone())))
            .collect();
        pairs.sort();
        assert_eq!(got.members().unwrap(), pairs);
    }

    /// `initset` holds its one member as `Value::set` would: a location in an index set, a
    /// cell in an object, anything else (a pair too wide for a location included) boxed.
    #[test]
    fn initset_holds_its_member_as_a_set_of_it_would() {
        let members = [
            Value::Pair(1, 2),
            Value::Pair(1 << 40, 0),
            Value::Cell(Cell { color: 3, i: -1, j: 4 }),
            Value::Int(3),
            Value::Bool(true),
            ints(&[1, 2, 3]),
            Value::indices(vec![Loc { i: 0, j: 0 }]),
            Value::empty_set(),
        ];
        for m in members {
            let (got, set) = (initset(std::slice::from_ref(&m)).unwrap(), Value::set(vec![m.clone()]));
            assert_eq!(std::mem::discriminant(&got), std::mem::discriminant(&set), "{m:?}");
            assert_eq!(got, set, "{m:?}");
        }
    }

    /// The product of two index sets is the sorted set of their pairs of locations.
    #[test]
    fn product_of_index_sets_pairs_their_locations() {
        let locs = |l: &[(i64, i64)]| l.iter().map(|&(i, j)| Value::Pair(i, j)).collect::<Vec<_>>();
        let (a, b) = (locs(&[(2, 3), (0, 1)]), locs(&[(1, 1), (0, 5)]));
        assert_product_pairs_members(&a, &b, |v| matches!(v, Value::Indices(_)));
    }

    /// The product of two objects is the sorted set of their pairs of cells, packed or (with a
    /// cell too large to pack) boxed.
    #[test]
    fn product_of_objects_pairs_their_cells() {
        let cells = |c: &[(i32, i32, i32)]| {
            c.iter()
                .map(|&(color, i, j)| Value::Cell(Cell { color, i, j }))
                .collect::<Vec<_>>()
        };
        let small = cells(&[(3, 2, 3), (1, 0, 1), (3, 0, 0)]);
        for b in [cells(&[(1, 1, 1), (2, 0, 5)]), cells(&[(1, 1, 1), (2, 0, 70_000)])] {
            assert_product_pairs_members(&small, &b, |v| matches!(v, Value::Object(_)));
        }
    }

    /// Rows of numbers are paired as their members would be: a tuple of pairs (two pairs
    /// make a pair of locations), as long as the shorter row.
    #[test]
    fn pairing_rows_of_numbers_pairs_their_members() {
        let listed = |pairs: &[(i64, i64)]| Value::tuple(pairs.iter().map(|&(x, y)| Value::Pair(x, y)).collect());
        let paired = |a: &[i64], b: &[i64]| pair(&[ints(a), ints(b)]).unwrap();
        assert!(
            matches!(ints(&[1, 2, 3]), Value::Ints(_)),
            "rows of numbers are stored narrow"
        );
        assert_eq!(paired(&[1, 2, 3], &[4, 5, 6]), listed(&[(1, 4), (2, 5), (3, 6)]));
        assert_eq!(paired(&[1, 2, 3], &[4, 5]), listed(&[(1, 4), (2, 5)]));
        assert!(matches!(paired(&[1, 2], &[4, 5]), Value::LocPair(..)));
        // The same rows held as a tuple of values go member by member: the same pairs.
        let wide = |row: &[i64]| {
            Value::Tuple(crate::dsl::value::Items::new(
                row.iter().map(|&n| Value::Int(n)).collect(),
            ))
        };
        assert_eq!(
            paired(&[7, 1, 1], &[0, 0, 9]),
            pair(&[wide(&[7, 1, 1]), wide(&[0, 0, 9])]).unwrap()
        );
        // Anything else is paired member by member.
        let mixed = pair(&[ints(&[1, 2, 3]), Value::tuple(vec![Value::Pair(0, 0), Value::Int(1)])]).unwrap();
        assert_eq!(
            mixed,
            Value::duo(Value::duo(Value::Int(1), Value::Pair(0, 0)), Value::Pair(2, 1))
        );
    }

    #[test]
    fn order_replays_python_sort() {
        assert_eq!(
            order(&[ints(&[3, 1, 2, 1]), f("identity")]).unwrap(),
            ints(&[1, 1, 2, 3])
        );
        // Singleton sets are not subsets of one another: Python keeps the input order.
        assert_eq!(order(&[ints(&[0, -4, 2]), f("initset")]).unwrap(), ints(&[0, -4, 2]));
        let mixed = Value::tuple(vec![Value::Int(1), Value::Pair(2, 3)]);
        assert!(order(&[mixed, f("identity")]).is_err());
    }

    #[test]
    fn merge_keeps_compact_variants() {
        let obj = |c: i32, i: i32| Value::object(vec![Cell { color: c, i, j: 0 }]);
        let objs = Value::set(vec![obj(1, 0), obj(2, 1), Value::empty_set()]);
        assert!(matches!(merge_values(&objs).unwrap(), Value::Object(c) if c.len() == 2));
        let g = Value::grid(Grid::new(1, 2, vec![1, 2]));
        let stacked = merge_values(&Value::tuple(vec![g.clone(), g])).unwrap();
        assert!(matches!(stacked, Value::Grid(g) if g.h == 2));
    }

    #[test]
    fn selection_follows_the_reference() {
        assert_eq!(valmax(&[Value::empty_tuple(), f("increment")]).unwrap(), Value::Int(1));
        assert!(argmax(&[Value::empty_set(), f("size")]).is_err());
        assert_eq!(mostcommon(&[ints(&[2, 1, 2, 1])]).unwrap(), Value::Int(1));
        assert!(mostcommon(&[Value::set(vec![Value::Int(1)])]).is_err());
        assert_eq!(dedupe(&[ints(&[3, 1, 3, 2, 1])]).unwrap(), ints(&[3, 1, 2]));
        assert!(dedupe(&[Value::set(vec![Value::Int(1)])]).is_err());
    }

    #[test]
    fn set_edits_keep_index_sets() {
        let locs = Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 1 }]);
        let fewer = remove(&[Value::Pair(1, 1), locs.clone()]).unwrap();
        assert!(matches!(fewer, Value::Indices(ref l) if l.len() == 1));
        let more = insert(&[Value::Pair(0, 5), fewer]).unwrap();
        assert!(matches!(more, Value::Indices(ref l) if l.len() == 2));
        assert_eq!(other(&[locs, Value::Pair(0, 0)]).unwrap(), Value::Pair(1, 1));
        assert!(insert(&[Value::Int(1), ints(&[1])]).is_err());
        assert!(matches!(
            repeat(&[Value::Int(0), Value::Int(i64::MAX)]),
            Err(DslError::TooLarge(_))
        ));
    }

    /// A part for [`merge_values`] and [`merge_as_set`]: index sets, objects, tuples of
    /// locations or of cells (a tuple of two locations is a `LocPair`), empty containers, and
    /// parts the union of points cannot take (a coordinate beyond `i32`, a boolean, an integer,
    /// a grid, a cell spelled as a tuple).
    fn merge_part() -> impl Strategy<Value = Value> {
        let loc = (-2i64..3, -2i64..3);
        let cell = (1i32..3, -2i32..3, -2i32..3).prop_map(|(color, i, j)| Value::Cell(Cell { color, i, j }));
        let locs = proptest::collection::vec(loc.clone().prop_map(|(i, j)| Value::Pair(i, j)), 0..5);
        proptest::prop_oneof![
            3 => locs.clone().prop_map(Value::set),
            3 => locs.clone().prop_map(Value::tuple),
            2 => proptest::collection::vec(cell.clone(), 0..4).prop_map(Value::set),
            2 => proptest::collection::vec(cell, 0..4).prop_map(Value::tuple),
            1 => Just(Value::empty_tuple()),
            1 => locs.prop_map(|mut l| {
                l.push(Value::Pair(1 << 40, 0));
                Value::tuple(l)
            }),
            1 => Just(Value::tuple(vec![Value::Bool(true), Value::Int(1)])),
            1 => Just(Value::tuple(vec![Value::Pair(0, 0), Value::Bool(false)])),
            1 => Just(Value::Int(3)),
            1 => Just(Value::grid(Grid::new(1, 2, vec![1, 2]))),
            1 => Just(Value::tuple(vec![Value::tuple(vec![Value::Int(1), Value::Pair(0, 0)])])),
        ]
    }

    proptest::proptest! {
        /// Keys that are all numbers are sorted by value, as the replay of CPython's sort puts
        /// them: runs, repeats, booleans among integers, short and long inputs.
        #[test]
        fn numeric_keys_sort_as_cpython_sorts_them(
            keys in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => (-5i64..5).prop_map(Value::Int),
                    1 => proptest::bool::ANY.prop_map(Value::Bool),
                ],
                0..100,
            ),
            ascending_run in 0..20usize,
        ) {
            let mut keys = keys;
            let run = ascending_run.min(keys.len());
            keys[..run].sort();
            proptest::prop_assert_eq!(sort_permutation(&keys).ok(), replayed_permutation(&keys).ok());
            keys[..run].reverse();
            proptest::prop_assert_eq!(sort_permutation(&keys).ok(), replayed_permutation(&keys).ok());
        }

        /// `merge` of a set, and `mapply`'s merge of its results without the set
        /// ([`merge_as_set`]), give what gathering every member of every part into one
        /// frozenset gives, or raise as that does: parts of locations or cells in any mix of
        /// kinds, empty ones, and parts the union of points cannot take.
        #[test]
        fn merging_a_set_gathers_the_members_of_its_parts(
            parts in proptest::collection::vec(merge_part(), 0..6),
        ) {
            let gathered = |parts: &[Value]| -> DslResult<Value> {
                let mut items = Vec::new();
                for p in parts {
                    push_members_of(p, &mut items)?;
                }
                Ok(Value::set(items))
            };
            let set = Value::set(parts.clone());
            let expected = gathered(&members_of(&set).unwrap());
            let merged = merge_values(&set);
            proptest::prop_assert_eq!(merged.as_ref().map(Value::to_string), expected.as_ref().map(Value::to_string));
            proptest::prop_assert_eq!(merged.ok(), expected.ok());
            if let Some(merged) = merge_as_set(&parts) {
                let expected = gathered(&parts).expect("merged as a set");
                proptest::prop_assert_eq!(merged.to_string(), expected.to_string());
                proptest::prop_assert_eq!(merged, expected);
            }
        }

        /// `value in tuple` for a tuple of small integers, compared in place, is the members'
        /// comparison one by one: integers, booleans (`True == 1`) and other values.
        #[test]
        fn an_integer_in_a_tuple_of_small_integers_is_found_as_members_are_compared(
            items in proptest::collection::vec(-3i64..6, 0..12),
            value in proptest::prop_oneof![
                (-4i64..7).prop_map(Value::Int),
                proptest::bool::ANY.prop_map(Value::Bool),
                (-1i64..2, -1i64..2).prop_map(|(i, j)| Value::Pair(i, j)),
            ],
        ) {
            // Held as `Ints`, but for two items (a `Pair`) and none.
            let tuple = ints(&items);
            let by_members = iter_members(&tuple).expect("a tuple").any(|m| m == value);
            proptest::prop_assert_eq!(contains(&tuple, &value).expect("a tuple"), by_members);
        }

        /// `mostcommon` and `leastcommon` of a tuple of small integers, counted in a histogram,
        /// are the members' by sorting: colours and integers beyond any histogram's span, ties.
        #[test]
        fn the_commonest_small_integer_is_the_one_sorting_finds(
            items in proptest::collection::vec(
                proptest::prop_oneof![4 => -2i64..10, 1 => -70_000i64..70_000],
                3..40,
            ),
        ) {
            let tuple = ints(&items);
            proptest::prop_assert!(matches!(tuple, Value::Ints(_)));
            for most in [true, false] {
                let sorted = commonest_by_sorting(members_of(&tuple).unwrap(), most);
                proptest::prop_assert_eq!(commonest(&tuple, most).ok(), sorted.ok());
            }
        }

        /// `insert` of a location into an index set, or of a cell (held as a cell or as a
        /// tuple) into an object, is the union with the singleton set, and `remove` the
        /// difference, as the reference builds them: members present or not, at either end,
        /// empty sets, and values of other shapes (a location into an object, coordinates
        /// beyond `i32`).
        #[test]
        fn inserting_or_removing_a_point_is_the_union_or_difference_with_its_singleton(
            members in proptest::collection::btree_set((0..3i32, -2..4i32, -2..4i32), 0..12),
            point in (0..3i64, -3..5i64, -3..5i64),
            shape in 0..5usize,
            cells in proptest::bool::ANY,
        ) {
            let set = if cells {
                Value::object(members.iter().map(|&(color, i, j)| Cell { color, i, j }).collect())
            } else {
                Value::indices(members.iter().map(|&(_, i, j)| Loc { i, j }).collect())
            };
            let (color, i, j) = point;
            let value = match shape {
                0 => Value::Pair(i, j),
                1 => Value::Pair(i64::from(i32::MAX) + i, j),
                2 => Value::cell(Cell { color: color as i32, i: i as i32, j: j as i32 }),
                3 => Value::tuple(vec![Value::Int(color), Value::Pair(i, j)]),
                _ => Value::Int(i),
            };
            let singleton = Value::set(vec![value.clone()]);
            let union = set_algebra(SetOp::Union, &set, &singleton);
            let got = insert(&[value.clone(), set.clone()]).expect("a set");
            proptest::prop_assert_eq!(&got, &union);
            proptest::prop_assert_eq!(std::mem::discriminant(&got), std::mem::discriminant(&union));
            let difference = match set_find(&set, &value) {
                None => set.clone(),
                Some(_) => set_algebra(SetOp::Difference, &set, &singleton),
            };
            let got = remove(&[value, set]).expect("a set");
            proptest::prop_assert_eq!(&got, &difference);
            proptest::prop_assert_eq!(std::mem::discriminant(&got), std::mem::discriminant(&difference));
        }

        /// `merge` of objects and of index sets, as `mapply` over a set does it without the set
        /// of results ([`merge_as_set`]) and as `merge` of that set does it, equals the sorted
        /// union of the members: parts that lie apart in order (gathered without sorting),
        /// shuffled, repeated, overlapping, with empty sets among them.
        #[test]
        fn merging_point_sets_gives_the_sorted_union(
            members in proptest::collection::btree_set((0..4i32, -3..12i32, -3..12i32), 0..120),
            cuts in proptest::collection::vec(0..120usize, 0..8),
            extra in proptest::collection::vec(proptest::collection::btree_set((0..4i32, -3..12i32, -3..12i32), 0..10), 0..3),
            order in proptest::collection::vec(proptest::num::usize::ANY, 0..12),
            repeats in 0..3usize,
            empties in 0..2usize,
        ) {
            let members: Vec<(i32, i32, i32)> = members.into_iter().collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(members.len())).collect();
            cuts.extend([0, members.len()]);
            cuts.sort_unstable();
            let mut parts: Vec<Vec<(i32, i32, i32)>> = cuts.windows(2).map(|w| members[w[0]..w[1]].to_vec()).collect();
            parts.extend(extra.into_iter().map(|e| e.into_iter().collect()));
            for k in 0..repeats.min(parts.len()) {
                parts.push(parts[k].clone());
            }
            for (k, &r) in order.iter().enumerate().take(parts.len()) {
                let other = r % parts.len();
                parts.swap(k, other);
            }
            let union: std::collections::BTreeSet<(i32, i32, i32)> = parts.iter().flatten().copied().collect();
            let as_cells = |p: &[(i32, i32, i32)]| p.iter().map(|&(color, i, j)| Cell { color, i, j }).collect::<Vec<_>>();
            let as_locs = |p: &[(i32, i32, i32)]| p.iter().map(|&(_, i, j)| Loc { i, j }).collect::<Vec<_>>();
            let union: Vec<(i32, i32, i32)> = union.into_iter().collect();
            let mut locs_union = as_locs(&union);
            locs_union.sort_unstable();
            locs_union.dedup();
            let cases = [
                (parts.iter().map(|p| Value::object(as_cells(p))).collect::<Vec<_>>(), Value::object_sorted(as_cells(&union))),
                (parts.iter().map(|p| Value::indices(as_locs(p))).collect(), Value::indices_sorted(locs_union)),
            ];
            for (mut values, want) in cases {
                values.extend(std::iter::repeat_with(Value::empty_set).take(empties));
                let fast = merge_as_set(&values);
                // Nothing to merge is an empty object either way.
                let expected_variant = |v: &Value| {
                    union.is_empty()
                        || matches!((v, &want), (Value::Object(_), Value::Object(_)) | (Value::Indices(_), Value::Indices(_)))
                };
                // Every part holds points (the empty sets too): merged without the set.
                let fast = fast.expect("point sets merge without the set");
                proptest::prop_assert!(expected_variant(&fast), "{:?}", fast);
                proptest::prop_assert_eq!(&fast, &want);
                let merged = merge_values(&Value::set(values)).expect("sets of point sets merge");
                proptest::prop_assert!(expected_variant(&merged), "{:?}", merged);
                proptest::prop_assert_eq!(merged, want);
            }
        }

        /// The searched fast path of [`merge_sorted`] against the plain merge, on sides of very
        /// different sizes and on equal ones.
        #[test]
        fn set_operations_search_as_they_merge(
            a in proptest::collection::btree_set(0..400i32, 0..40),
            b in proptest::collection::btree_set(0..400i32, 0..400),
        ) {
            let (a, b): (Vec<i32>, Vec<i32>) = (a.into_iter().collect(), b.into_iter().collect());
            for op in [SetOp::Union, SetOp::Intersection, SetOp::Difference] {
                proptest::prop_assert_eq!(merge_sorted(op, &a, &b), merge_walk(op, &a, &b));
                proptest::prop_assert_eq!(merge_sorted(op, &b, &a), merge_walk(op, &b, &a));
            }
        }

        /// Set algebra against a set met again and again (its bitmap from the second time on),
        /// on either side, as index sets and as objects, equals the plain merge every time;
        /// sets too spread out for a bitmap included.
        #[test]
        fn set_operations_against_a_repeated_set_merge(
            fixed in proptest::collection::btree_set((0..3i32, -4..30i32, -4..30i32), 0..300),
            others in proptest::collection::vec(proptest::collection::btree_set((0..3i32, -6..32i32, -6..32i32), 0..40), 4),
            far in proptest::option::of((0..3i32, -100_000..100_000i32)),
        ) {
            let cells = |set: &std::collections::BTreeSet<(i32, i32, i32)>| -> Vec<Cell> {
                set.iter().map(|&(color, i, j)| Cell { color, i, j }).collect()
            };
            let mut fixed = cells(&fixed);
            fixed.extend(far.map(|(color, i)| Cell { color, i, j: i }));
            let fixed_locs = Value::indices(fixed.iter().map(|c| c.loc()).collect());
            let fixed = Value::object(fixed);
            let check = |a: &Value, b: &Value| -> Result<(), proptest::test_runner::TestCaseError> {
                for op in [SetOp::Union, SetOp::Intersection, SetOp::Difference] {
                    let want = match (a, b) {
                        (Value::Indices(x), Value::Indices(y)) => Value::Indices(Shared::from(merge_walk(op, x, y))),
                        (Value::Object(x), Value::Object(y)) => Value::Object(Shared::from(merge_walk(op, x, y))),
                        _ => unreachable!("both index sets or both objects"),
                    };
                    proptest::prop_assert_eq!(set_algebra(op, a, b), want);
                }
                Ok(())
            };
            for other in &others {
                let other = cells(other);
                let other_locs = Value::indices(other.iter().map(|c| c.loc()).collect());
                let other = Value::object(other);
                check(&other, &fixed)?;
                check(&fixed, &other)?;
                check(&other_locs, &fixed_locs)?;
                check(&fixed_locs, &other_locs)?;
            }
        }
    }
}
