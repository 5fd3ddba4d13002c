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
use crate::dsl::registry::{PrimId, PrimSpec};
use crate::dsl::value::Value;
use crate::prim;

use super::containers::{members_of, merge_as_set, push_members_of};
use super::grids;
use super::merge_values;

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
    lines_of_pairs(a).unwrap_or_else(|| APPLY.run(a))
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
    MAPPLY.run(a)
}

fn papply_values(a: &[Value]) -> DslResult<Value> {
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
    }
}
