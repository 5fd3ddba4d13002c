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
use crate::dsl::func::{call1, Func, MAX_POWER};
use crate::dsl::registry::{PrimId, PrimSpec};
use crate::dsl::value::Value;
use crate::prim;

use super::containers::{members_of, push_members_of};
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
    combine: |container, members, results| merge_values(&applied(container, members, results)?),
    generator: true,
};

fn applied(container: &Value, _members: &[Value], results: &mut Mapped) -> DslResult<Value> {
    Ok(same_kind(container, results.take_all()?))
}

fn apply(a: &[Value]) -> DslResult<Value> {
    APPLY.run(a)
}

fn rapply(a: &[Value]) -> DslResult<Value> {
    let items = members_of(&a[0])?
        .iter()
        .map(|f| call1(f, a[1].clone()))
        .collect::<DslResult<Vec<_>>>()
        .map_err(DslError::in_generator)?;
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

/// `connect`, whose `prapply` over two index sets has a path of its own.
static CONNECT: LazyLock<PrimId> = LazyLock::new(|| PrimId::builtin("connect"));

fn prapply(a: &[Value]) -> DslResult<Value> {
    // The reference loops over `b` outside and `a` inside (never iterated when `b` is empty).
    let ys = members_of(&a[2])?;
    if ys.is_empty() {
        return Ok(Value::empty_set());
    }
    if let (Value::Func(f), Value::Indices(xs), Value::Indices(ys)) = (&a[0], &a[1], &a[2]) {
        if matches!(**f, Func::Prim(id) if id == *CONNECT) {
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
