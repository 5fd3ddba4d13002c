//! Functions of functions: the closure builders (`compose`, `chain`, `fork`, `matcher`,
//! `rbind`, `lbind`, `power`) and the mapping primitives (`apply`, `rapply`, `mapply`,
//! `papply`, `mpapply`, `prapply`).
//!
//! The mapping primitives keep the container's kind as the reference's
//! `type(container)(...)` does: a tuple maps to a tuple, a frozenset to a frozenset in which
//! equal results collapse.

use std::sync::LazyLock;

use crate::dsl::column::{map, Mapped, Mapping, BLOCK};
use crate::dsl::error::{DslError, DslResult};
use crate::dsl::exact::try_collect;
use crate::dsl::func::{call1, Func, MAX_POWER};
use crate::dsl::points;
use crate::dsl::registry::{PrimId, PrimSpec};
use crate::dsl::value::{Cell, Color, Loc, Value};
use crate::prim;

use super::containers::{members_of, merge_as_set, moves_inside, paired, points_range, push_members_of};
use super::grids;
use super::merge_values;
use super::numbers::check_members;

pub const PRIMS: &[PrimSpec] = &[
    prim!(compose, [Callable, Callable] -> Callable, "function composition: x -> outer(inner(x))"),
    prim!(chain, [Callable, Callable, Callable] -> Callable, "composition of three functions: x -> h(g(f(x)))"),
    prim!(matcher, [Callable, Any] -> Callable, "equality test: x -> function(x) == target"),
    prim!(rbind, [Callable, Any] -> Callable, "fix the rightmost argument"),
    prim!(lbind, [Callable, Any] -> Callable, "fix the leftmost argument"),
    prim!(power, [Callable, Integer] -> Callable, "the function applied n times"),
    prim!(fork, [Callable, Callable, Callable] -> Callable, "x -> outer(a(x), b(x))"),
    prim!(apply, [Callable, Container] -> Container, "apply a function to each item", mapping = &APPLY),
    prim!(rapply, [Container, Any] -> Container, "apply each function of a container to a value"),
    prim!(mapply, [Callable, ContainerContainer] -> FrozenSet, "apply and merge", mapping = &MAPPLY),
    prim!(papply, [Callable, Tuple, Tuple] -> Tuple, "apply a function to two vectors, pairwise"),
    prim!(mpapply, [Callable, Tuple, Tuple] -> Tuple, "pairwise apply and merge"),
    prim!(prapply, [Callable, Container, Container] -> FrozenSet, "apply a function on the cartesian product"),
];

fn compose(a: &[Value]) -> DslResult<Value> {
    Ok(Value::func(Func::Compose(a[0].clone(), a[1].clone())))
}

fn chain(a: &[Value]) -> DslResult<Value> {
    Ok(Value::func(Func::Chain(a[0].clone(), a[1].clone(), a[2].clone())))
}

fn matcher(a: &[Value]) -> DslResult<Value> {
    Ok(Value::func(Func::Matcher(a[0].clone(), a[1].clone())))
}

/// `rbind`/`lbind` read `function.__code__` at once: binding a non-function raises there.
fn bindable(f: &Value) -> DslResult<()> {
    let type_name = match f {
        Value::Func(g) => match &**g {
            Func::Foreign(g) if g.get().arg_count().is_none() => g.get().type_name(),
            _ => return Ok(()),
        },
        other => other.type_name(),
    };
    Err(DslError::Attribute(
        format!("'{type_name}' object has no attribute '__code__'").into(),
    ))
}

fn rbind(a: &[Value]) -> DslResult<Value> {
    bindable(&a[0])?;
    Ok(Value::func(Func::Rbind(a[0].clone(), a[1].clone())))
}

fn lbind(a: &[Value]) -> DslResult<Value> {
    bindable(&a[0])?;
    Ok(Value::func(Func::Lbind(a[0].clone(), a[1].clone())))
}

fn power(a: &[Value]) -> DslResult<Value> {
    let n = a[1].as_int()?;
    match n {
        1 => Ok(a[0].clone()),
        2..=MAX_POWER => Ok(Value::func(Func::Power(a[0].clone(), n as u32))),
        _ => Err(DslError::Recursion(
            format!("power(f, {n}) recurses without end (or past the recursion limit)").into(),
        )),
    }
}

fn fork(a: &[Value]) -> DslResult<Value> {
    Ok(Value::func(Func::Fork(a[0].clone(), a[1].clone(), a[2].clone())))
}

/// Rebuilds a container of the same Python kind as `like` from new members.
pub fn same_kind(like: &Value, items: Vec<Value>) -> Value {
    if like.is_set() {
        Value::set(items)
    } else {
        Value::tuple(items)
    }
}

/// `apply(function, container)`: the results in a container of the input's kind.
static APPLY: Mapping = Mapping {
    container: 1,
    function: 0,
    members: push_members_of,
    combine: applied,
    generator: true,
};

/// `mapply(function, container)`: `apply`, then `merge`.
static MAPPLY: Mapping = Mapping {
    container: 1,
    function: 0,
    members: push_members_of,
    combine: merged,
    generator: true,
};

/// `mapply`'s result: `merge(apply(function, container))`, the set of results not built where
/// merging them needs no set ([`merge_as_set`]).
fn merged(container: &Value, members: &[Value], results: &mut Mapped) -> DslResult<Value> {
    if container.is_set() && results.error.is_none() {
        if let Some(merged) = merge_as_set(&results.values) {
            return Ok(merged);
        }
    }
    merge_values(&applied(container, members, results)?)
}

fn applied(container: &Value, _members: &[Value], results: &mut Mapped) -> DslResult<Value> {
    Ok(same_kind(container, results.take_all()?))
}

fn apply(a: &[Value]) -> DslResult<Value> {
    if let Some(extremes) = extremes_of_pairs(a) {
        return Ok(extremes);
    }
    lines_of_pairs(a).unwrap_or_else(|| APPLY.run(a))
}

/// `apply(lbind(apply, maximum), rows)` (or `minimum`) of rows of integer pairs, as
/// `papply(pair, grid, other)` makes them: the cellwise maximum (minimum) of two grids, which
/// solvers take to complete a symmetric picture. Each row's extremes are read straight from its
/// pairs and built as the general path builds them ([`Value::ints`] is [`Value::tuple`] of
/// small integers), without a column of pairs laid out for `maximum`. `None` for anything else
/// (a member that is not a non-empty tuple of pairs of integers that fit an `i32`, as grid
/// cells do): the general path then runs, raising what it raises.
fn extremes_of_pairs(a: &[Value]) -> Option<Value> {
    let (Value::Func(f), Value::Tuple(rows) | Value::Set(rows)) = (&a[0], &a[1]) else {
        return None;
    };
    let Func::Lbind(inner, extreme) = &**f else {
        return None;
    };
    if !is_prim(inner, *APPLY_ID) {
        return None;
    }
    let max = match extreme {
        e if is_prim(e, *MAXIMUM) => true,
        e if is_prim(e, *MINIMUM) => false,
        _ => return None,
    };
    let pick = |x: i64, y: i64| {
        let (x, y) = (Color::try_from(x).ok()?, Color::try_from(y).ok()?);
        Some(if max { x.max(y) } else { x.min(y) })
    };
    let mut extremes: Vec<Color> = Vec::new();
    let mut out = Vec::with_capacity(rows.len());
    for row in rows.iter() {
        extremes.clear();
        match row {
            Value::Tuple(pairs) if !pairs.is_empty() => {
                for p in pairs.iter() {
                    let Value::Pair(x, y) = p else {
                        return None;
                    };
                    extremes.push(pick(*x, *y)?);
                }
            }
            Value::LocPair(p, q) => {
                extremes.push(pick(p.i.into(), p.j.into())?);
                extremes.push(pick(q.i.into(), q.j.into())?);
            }
            _ => return None,
        }
        out.push(Value::ints(&extremes));
    }
    Some(same_kind(&a[1], out))
}

/// `apply(fork(connect, first, last), pairs)` of a set of location pairs (`product` of two
/// index sets), as [`grids::lines_of`] makes it; `None` for anything else, or where that
/// leaves the pairs to `connect`.
fn lines_of_pairs(a: &[Value]) -> Option<DslResult<Value>> {
    let (Value::Func(f), Value::Set(pairs)) = (&a[0], &a[1]) else {
        return None;
    };
    let Func::Fork(outer, left, right) = &**f else {
        return None;
    };
    if !(is_prim(outer, *CONNECT) && is_prim(left, *FIRST) && is_prim(right, *LAST)) {
        return None;
    }
    let pair = |v: &Value| match v {
        Value::LocPair(p, q) => Some((*p, *q)),
        _ => None,
    };
    if !pairs.iter().all(|v| pair(v).is_some()) {
        return None;
    }
    grids::lines_of(pairs.iter().filter_map(pair))
}

fn rapply(a: &[Value]) -> DslResult<Value> {
    let items =
        try_collect(members_of(&a[0])?.iter().map(|f| call1(f, a[1].clone()))).map_err(DslError::in_generator)?;
    Ok(same_kind(&a[0], items))
}

fn mapply(a: &[Value]) -> DslResult<Value> {
    match union_of_shifts(a).or_else(|| copies_in_order(a)) {
        Some(merged) => Ok(merged),
        None => MAPPLY.run(a),
    }
}

/// The patch a function `lbind(shift, patch)` moves (as `mapply` is given it); `None` for any
/// other function.
fn shifted_patch(f: &Value) -> Option<&Value> {
    let Value::Func(f) = f else {
        return None;
    };
    match &**f {
        Func::Lbind(inner, patch) if is_prim(inner, *SHIFT) => Some(patch),
        _ => None,
    }
}

/// `mapply(lbind(shift, patch), offsets)` of a non-empty index set or object and a set of
/// offsets: the union of the patch's copies ([`points::union_of_moved`]), line by line, where
/// the general path builds each copy and merges them. `None` for anything else, where the
/// union declines, and where the copies hold more members in all than a container may: the
/// general path then runs, raising what it raises.
fn union_of_shifts(a: &[Value]) -> Option<Value> {
    let Value::Indices(offsets) = &a[1] else {
        return None;
    };
    let patch = shifted_patch(&a[0])?;
    // Each copy is a set of its own (the offsets are distinct), as many members as the patch.
    let copies = |members: usize| check_members(members.saturating_mul(offsets.len())).ok();
    match patch {
        Value::Indices(locs) => {
            copies(locs.len())?;
            points::union_of_moved(locs, offsets).map(Value::indices_sorted)
        }
        Value::Object(cells) => {
            copies(cells.len())?;
            points::union_of_moved(cells, offsets).map(Value::object_sorted)
        }
        _ => None,
    }
}

/// `mapply(lbind(shift, patch), offsets)` of an index set or object and a tuple of pairs (of
/// two locations too): the tuple `merge` makes of a tuple of copies, every copy's members in
/// turn, each copy's in the patch's order (which a move keeps), built straight from the
/// patch's members where the general path builds each copy as a set and then lists it. `None`
/// for anything else, where there is nothing to copy, where a copy would leave `i32` and where
/// the copies hold more members in all than a container may: the general path then runs,
/// raising what it raises.
fn copies_in_order(a: &[Value]) -> Option<Value> {
    let patch = shifted_patch(&a[0])?;
    let moves: Vec<(i64, i64)> = match &a[1] {
        Value::Tuple(offsets) => (offsets.iter())
            .map(|o| match o {
                Value::Pair(di, dj) => Some((*di, *dj)),
                _ => None,
            })
            .collect::<Option<_>>()?,
        Value::LocPair(p, q) => [p, q].map(|l| (l.i.into(), l.j.into())).to_vec(),
        _ => return None,
    };
    // No copies, or empty ones: the general path's empty tuple, at little cost.
    if moves.is_empty() || patch.is_empty() {
        return None;
    }
    // Every copy inside `i32` wherever the patch's coordinates range: the sums below cannot
    // overflow, and an offset past `i32` whose sums fit (a patch near the other end) adds as
    // its low 32 bits, which give the same sums.
    let (size, range) = match patch {
        Value::Indices(locs) => (locs.len(), points_range(locs)),
        Value::Object(cells) => (cells.len(), points_range(cells)),
        _ => return None,
    };
    if !moves.iter().all(|&offset| moves_inside(false, range, offset)) {
        return None;
    }
    check_members(size.saturating_mul(moves.len())).ok()?;
    let mut out = Vec::with_capacity(size * moves.len());
    for &(di, dj) in &moves {
        let moved = |i: i32, j: i32| (i.wrapping_add(di as i32), j.wrapping_add(dj as i32));
        match patch {
            Value::Indices(locs) => out.extend(locs.iter().map(|l| {
                let (i, j) = moved(l.i, l.j);
                Value::loc(Loc { i, j })
            })),
            Value::Object(cells) => out.extend(cells.iter().map(|c| {
                let (i, j) = moved(c.i, c.j);
                Value::cell(Cell { color: c.color, i, j })
            })),
            _ => unreachable!("an index set or an object"),
        }
    }
    Some(Value::tuple(out))
}

fn papply_values(a: &[Value]) -> DslResult<Value> {
    match paired_grids(a) {
        Some(rows) => Ok(rows),
        None => papply_by_columns(a),
    }
}

/// `papply(pair, grid, other)`, the first half of a cellwise maximum (see
/// [`extremes_of_pairs`]): each row of one grid paired with the same row of the other,
/// straight from the grids' cells, without their rows listed as values and run through the
/// column engine. A grid may be a tuple of rows of integers too, as `apply` over rows gives one
/// back (a solver's second cellwise maximum, over the first's result). `None` unless the
/// function is `pair` and both are such grids.
fn paired_grids(a: &[Value]) -> Option<Value> {
    if !is_prim(&a[0], *PAIR) {
        return None;
    }
    let (xs, ys) = (rows_of_numbers(&a[1])?, rows_of_numbers(&a[2])?);
    let rows = xs.iter().zip(&ys).map(|(x, y)| paired(x, y));
    Some(Value::tuple(rows.collect()))
}

/// A grid's rows, or a tuple's where each member is a row of integers ([`Value::Ints`]: not of
/// two, which is a pair); `None` for anything else.
fn rows_of_numbers(v: &Value) -> Option<Vec<&[Color]>> {
    match v {
        Value::Grid(g) => Some((0..g.h).map(|r| g.row(r)).collect()),
        Value::Tuple(rows) => (rows.iter())
            .map(|row| match row {
                Value::Ints(numbers) => Some(&numbers[..]),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// `papply` by the column engine: the function over the columns of both containers' members.
fn papply_by_columns(a: &[Value]) -> DslResult<Value> {
    let (mut xs, mut ys) = (members_of(&a[1])?, members_of(&a[2])?);
    let n = xs.len().min(ys.len());
    xs.truncate(n);
    ys.truncate(n);
    let results = map(&a[0], &[&xs, &ys]).all().map_err(DslError::in_generator)?;
    Ok(Value::tuple(results))
}

fn papply(a: &[Value]) -> DslResult<Value> {
    papply_values(a)
}

fn mpapply(a: &[Value]) -> DslResult<Value> {
    merge_values(&papply_values(a)?)
}

/// `connect`, `first` and `last`: `prapply(connect, ..)` of two index sets and
/// `apply(fork(connect, first, last), ..)` of a set of location pairs have a path of their own.
static CONNECT: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("connect"));
static FIRST: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("first"));
static LAST: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("last"));
/// `apply`, `maximum`, `minimum` and `pair`: `apply(lbind(apply, maximum), ..)` of rows of
/// pairs and `papply(pair, ..)` of two grids have a path of their own.
static APPLY_ID: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("apply"));
static MAXIMUM: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("maximum"));
static MINIMUM: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("minimum"));
static PAIR: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("pair"));
/// `shift`: `mapply(lbind(shift, patch), ..)` has a path of its own.
static SHIFT: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("shift"));

/// Whether `v` is primitive `id` as a function value.
fn is_prim(v: &Value, id: PrimId) -> bool {
    matches!(v, Value::Func(f) if matches!(**f, Func::Prim(p) if p == id))
}

fn prapply(a: &[Value]) -> DslResult<Value> {
    // The reference loops over `b` outside and `a` inside (never iterated when `b` is empty).
    let ys = members_of(&a[2])?;
    if ys.is_empty() {
        return Ok(Value::empty_set());
    }
    if let (Value::Indices(xs), Value::Indices(ys)) = (&a[1], &a[2]) {
        if is_prim(&a[0], *CONNECT) {
            if let Some(lines) = grids::lines_between(xs, ys) {
                return lines;
            }
        }
    }
    let xs = members_of(&a[1])?;
    // The pairs go through the function a block of whole rows of `b` at a time, so that the
    // argument columns stay small.
    let rows = (BLOCK / xs.len().max(1)).max(1);
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let mut results = Vec::new();
    for block in ys.chunks(rows) {
        left.clear();
        right.clear();
        for y in block {
            left.extend(xs.iter().cloned());
            right.resize(right.len() + xs.len(), y.clone());
        }
        results.extend(map(&a[0], &[&left, &right]).all().map_err(DslError::in_generator)?);
    }
    Ok(Value::set(results))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::func::call;
    use crate::dsl::value::Loc;

    fn prim(name: &str) -> Value {
        Value::prim(PrimId::builtin(name))
    }

    /// An index set of up to 14 locations in a small square (many pairs line up), moved near
    /// the end of the coordinates' range or not (lines to a set that is not are too long to
    /// build).
    fn crowded() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::strategy::Strategy;
        let locs = proptest::collection::vec((-5i32..5, -5i32..5), 0..14);
        (locs, proptest::bool::ANY).prop_map(|(locs, near_limit)| {
            let shift = if near_limit { i32::MAX - 10 } else { 0 };
            Value::indices(locs.into_iter().map(|(i, j)| Loc { i: i + shift, j }).collect())
        })
    }

    /// The variants of a value and of its members: what [`Value`]'s structural equality does
    /// not tell apart.
    fn form(v: &Value) -> Vec<std::mem::Discriminant<Value>> {
        let mut form = vec![std::mem::discriminant(v)];
        if let Value::Tuple(items) | Value::Set(items) = v {
            form.extend(items.iter().map(std::mem::discriminant));
        }
        form
    }

    /// A grid of up to 4 by 4 cells, some colours past 9.
    fn small_grid() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::strategy::Strategy;
        (0..4usize, 0..4usize)
            .prop_flat_map(|(h, w)| {
                (
                    proptest::strategy::Just((h, w)),
                    proptest::collection::vec(-2i32..12, h * w),
                )
            })
            .prop_map(|((h, w), cells)| Value::grid(crate::dsl::value::Grid::new(h, w, cells)))
    }

    /// An object of `cells`, or (not `object`) their index set.
    fn patch_of(cells: &[Cell], object: bool) -> Value {
        match object {
            true => Value::object(cells.to_vec()),
            false => Value::indices(cells.iter().map(|c| Loc { i: c.i, j: c.j }).collect()),
        }
    }

    /// Checks that `mapply(lbind(shift, patch), offsets)` gives what the general path gives
    /// (each copy built by `shift`, then merged), in the same representation; the function.
    fn shifts_merge_copy_by_copy(
        patch: &Value,
        offsets: &Value,
    ) -> Result<Value, proptest::test_runner::TestCaseError> {
        let f = lbind(&[prim("shift"), patch.clone()]).unwrap();
        let copy_by_copy = MAPPLY.run(&[f.clone(), offsets.clone()]);
        let fast = mapply(&[f.clone(), offsets.clone()]);
        proptest::prop_assert_eq!(&fast, &copy_by_copy);
        if let Ok(v) = &fast {
            proptest::prop_assert_eq!(form(v), form(copy_by_copy.as_ref().unwrap()));
        }
        Ok(f)
    }

    /// A [`small_grid`], or its rows as a tuple (as `apply` over rows gives them), or those
    /// rows with the last one a number short.
    fn grid_or_rows() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::strategy::Strategy;
        (small_grid(), 0..3u8).prop_map(|(grid, kind)| {
            let mut rows = grid.members().unwrap_or_default().to_vec();
            match kind {
                0 => return grid,
                1 => {}
                _ => {
                    if let Some(last) = rows.last_mut() {
                        let numbers = last.members().unwrap_or_default();
                        *last = Value::tuple(numbers[..numbers.len().saturating_sub(1)].to_vec());
                    }
                }
            }
            Value::tuple(rows)
        })
    }

    /// Rows as `papply(pair, grid, other)` makes them (`pair` of two rows of integers), or with
    /// one member that is not a pair of integers, or empty.
    fn rows_of_pairs() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::strategy::Strategy;
        let number = proptest::prop_oneof![-3i64..12, proptest::sample::select(vec![i64::MIN, i64::MAX, 1 << 31])];
        let row = (proptest::collection::vec((number.clone(), number), 0..5), 0..8u8).prop_map(|(pairs, odd)| {
            let mut members: Vec<Value> = pairs.into_iter().map(|(x, y)| Value::Pair(x, y)).collect();
            if odd == 0 && !members.is_empty() {
                members[0] = Value::Int(3);
            }
            Value::tuple(members)
        });
        (proptest::collection::vec(row, 0..5), proptest::bool::ANY).prop_map(|(rows, set)| match set {
            true => Value::set(rows),
            false => Value::tuple(rows),
        })
    }

    proptest::proptest! {
        /// `apply(fork(connect, first, last), product(a, b))` and `prapply(connect, a, b)`,
        /// each line built once, are `connect` pair by pair in each one's order, error included:
        /// where a line cannot be built (one set near the end of the range, the other not:
        /// lines of 2^31 points), the pairs are left to `connect`.
        #[test]
        fn lines_of_pairs_are_connect_applied_pair_by_pair(a in crowded(), b in crowded()) {
            let pairs = call(&prim("product"), &[a.clone(), b.clone()]).unwrap();
            let f = fork(&[prim("connect"), prim("first"), prim("last")]).unwrap();
            let pair_by_pair = APPLY.run(&[f.clone(), pairs.clone()]);
            let fast = lines_of_pairs(&[f.clone(), pairs.clone()]);
            proptest::prop_assert_eq!(fast.is_some(), pair_by_pair.is_ok(), "declines exactly where a line fails");
            proptest::prop_assert_eq!(apply(&[f, pairs]), pair_by_pair);
            // prapply's loop: `b` outside, `a` inside.
            let (Value::Indices(xs), Value::Indices(ys)) = (&a, &b) else { unreachable!("index sets") };
            let as_value = |l: &Loc| Value::Pair(l.i.into(), l.j.into());
            let loop_order: DslResult<Vec<Value>> = ys
                .iter()
                .flat_map(|y| xs.iter().map(move |x| call(&prim("connect"), &[as_value(x), as_value(y)])))
                .collect();
            proptest::prop_assert_eq!(grids::lines_between(xs, ys).is_some(), loop_order.is_ok());
            proptest::prop_assert_eq!(prapply(&[prim("connect"), a, b]), loop_order.map(Value::set));
        }

        /// `papply(pair, grid, other)` straight from the cells is `pair` run row by row over
        /// the grids' rows, in the same representation (rows of one, two or more cells, none,
        /// grids of different heights and widths, grids as tuples of rows, rows of different
        /// lengths).
        #[test]
        fn paired_grids_are_pair_row_by_row(a in grid_or_rows(), b in grid_or_rows()) {
            let args = [prim("pair"), a.clone(), b.clone()];
            let by_columns = papply_by_columns(&args).unwrap();
            let fast = paired_grids(&args);
            let rows_of_numbers = |v: &Value| match v {
                Value::Grid(_) => true,
                Value::Tuple(rows) => rows.iter().all(|row| matches!(row, Value::Ints(_))),
                _ => false,
            };
            proptest::prop_assert_eq!(fast.is_some(), rows_of_numbers(&a) && rows_of_numbers(&b));
            if let Some(fast) = fast {
                proptest::prop_assert_eq!(&fast, &by_columns);
                proptest::prop_assert_eq!(form(&fast), form(&by_columns));
                let rows = |v: &Value| v.members().unwrap_or_default().iter().map(form).collect::<Vec<_>>();
                proptest::prop_assert_eq!(rows(&fast), rows(&by_columns));
                // The reference's `tuple(zip(a, b))` of each two rows, member by member.
                let members = |v: &Value| v.members().unwrap_or_default().to_vec();
                let zipped = members(&a).into_iter().zip(members(&b)).map(|(x, y)| {
                    let cells = members(&x).into_iter().zip(members(&y));
                    Value::tuple(cells.map(|(p, q)| Value::tuple(vec![p, q])).collect())
                });
                let zipped = Value::tuple(zipped.collect());
                proptest::prop_assert_eq!(rows(&fast), rows(&zipped));
                proptest::prop_assert_eq!(fast, zipped);
            }
        }

        /// `apply(lbind(apply, maximum), rows)` and with `minimum`, of rows of integer pairs,
        /// are `maximum` (`minimum`) applied pair by pair, in the same representation, errors
        /// included; the rows `papply(pair, grid, other)` makes take the path of their own.
        #[test]
        fn extremes_of_pairs_are_apply_of_apply_pair_by_pair(rows in rows_of_pairs(), max in proptest::bool::ANY) {
            let extreme = prim(if max { "maximum" } else { "minimum" });
            let f = lbind(&[prim("apply"), extreme]).unwrap();
            let pair_by_pair = APPLY.run(&[f.clone(), rows.clone()]);
            let fast = apply(&[f.clone(), rows.clone()]);
            proptest::prop_assert_eq!(&fast, &pair_by_pair);
            if let Ok(v) = &fast {
                proptest::prop_assert_eq!(form(v), form(pair_by_pair.as_ref().unwrap()));
            }
            let members = rows.members().unwrap_or_default();
            let of_grid_rows = !members.is_empty() && members.iter().all(|row| {
                let pairs = row.members().unwrap_or_default();
                !pairs.is_empty() && pairs.iter().all(|p| matches!(p, Value::Pair(x, y) if i32::try_from(*x).is_ok() && i32::try_from(*y).is_ok()))
            });
            if !members.is_empty() {
                proptest::prop_assert_eq!(extremes_of_pairs(&[f, rows.clone()]).is_some(), of_grid_rows);
            }
        }

        /// `mapply(lbind(shift, patch), offsets)` by lines is the merge of every copy, each
        /// built by `shift`, of an index set or an object (of several colours); it declines only
        /// for a patch over 64 columns wide or a copy that leaves `i32`, or nothing to copy.
        #[test]
        fn union_of_shifts_is_the_merge_of_every_shifted_copy(
            points in proptest::collection::vec((0i32..4, -3i32..9, -3i32..9), 0..30),
            object in proptest::bool::ANY,
            wide in proptest::bool::ANY,
            offsets in proptest::collection::vec((-12i32..12, -40i32..40), 0..12),
            near_limit in 0..4u8,
        ) {
            // Near the end of `i32`: the patch (0 never near, the copies 1 below and 2 above
            // the limits), or an offset (3) that takes copies past it.
            let (di, dj) = match near_limit {
                1 => (i32::MIN + 10, 0),
                2 => (0, i32::MAX - 50),
                _ => (0, 0),
            };
            let mut cells: Vec<Cell> = points.iter().map(|&(color, i, j)| Cell { color, i: i + di, j: j + dj }).collect();
            if wide && !cells.is_empty() {
                cells.push(Cell { color: 1, i: di, j: dj - 60 });
            }
            let mut offsets: Vec<Loc> = offsets.into_iter().map(|(i, j)| Loc { i, j }).collect();
            if near_limit == 3 && !offsets.is_empty() {
                offsets[0].j = i32::MAX - 5;
            }
            let offsets = Value::indices(offsets);
            let f = shifts_merge_copy_by_copy(&patch_of(&cells, object), &offsets)?;
            // Taken wherever the patch is at most 64 columns wide and the union's box small
            // (under the least budget, 4,096 cells).
            let extent = |xs: &mut dyn Iterator<Item = i32>| {
                let (lo, hi) = xs.fold((i32::MAX, i32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
                i64::from(hi) - i64::from(lo)
            };
            let Value::Indices(moves) = &offsets else { unreachable!("an index set") };
            let small_box = !cells.is_empty() && !wide && !moves.is_empty() && near_limit == 0 && {
                let colours = extent(&mut cells.iter().map(|c| if object { c.color } else { 0 })) + 1;
                let rows = extent(&mut cells.iter().map(|c| c.i)) + extent(&mut moves.iter().map(|o| o.i)) + 1;
                let cols = extent(&mut cells.iter().map(|c| c.j)) + extent(&mut moves.iter().map(|o| o.j)) + 1;
                colours * rows * cols <= 4096
            };
            if small_box {
                proptest::prop_assert!(union_of_shifts(&[f, offsets]).is_some(), "taken for a small box");
            }
        }

        /// `mapply(lbind(shift, patch), offsets)` over a tuple of offsets (repeated ones too)
        /// is the general path's tuple, every copy's members in turn, of an index set or an
        /// object; it declines only where a copy leaves `i32`, for offsets not all pairs and
        /// where there is nothing to copy.
        #[test]
        fn copies_in_order_are_the_merge_of_every_shifted_copy(
            points in proptest::collection::vec((0i32..4, -3i32..9, -3i32..9), 0..20),
            object in proptest::bool::ANY,
            offsets in proptest::collection::vec((-4i64..4, -4i64..4), 0..8),
            near_limit in 0..4u8,
            not_a_pair in proptest::bool::ANY,
        ) {
            // Near the end of `i32`: the patch (1, 2: its points reach the limit, copies pass
            // it), or an offset (3) past it.
            let (di, dj) = match near_limit {
                1 => (i32::MIN + 3, 0),
                2 => (0, i32::MAX - 8),
                _ => (0, 0),
            };
            let cells: Vec<Cell> = points.iter().map(|&(color, i, j)| Cell { color, i: i + di, j: j + dj }).collect();
            let mut moves: Vec<Value> = offsets.iter().map(|&(i, j)| Value::Pair(i, j)).collect();
            if near_limit == 3 && !moves.is_empty() {
                moves[0] = Value::Pair(0, i64::from(i32::MAX) + 2);
            }
            let pairs_only = !not_a_pair || moves.is_empty();
            if !pairs_only {
                moves.push(Value::Int(1));
            }
            let offsets = Value::tuple(moves);
            let f = shifts_merge_copy_by_copy(&patch_of(&cells, object), &offsets)?;
            if pairs_only && near_limit == 0 && !cells.is_empty() && offsets.len() != Some(0) {
                proptest::prop_assert!(copies_in_order(&[f, offsets]).is_some(), "taken");
            }
        }
    }
}
