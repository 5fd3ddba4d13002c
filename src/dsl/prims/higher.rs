//! Functions of functions: the closure builders (`compose`, `chain`, `fork`, `matcher`,
//! `rbind`, `lbind`, `power`) and the mapping primitives (`apply`, `rapply`, `mapply`,
//! `papply`, `mpapply`, `prapply`).
//!
//! The mapping primitives keep the container's kind as the reference's
//! `type(container)(...)` does: a tuple maps to a tuple, a frozenset to a frozenset in which
//! equal results collapse.

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::func::{call, call1, Func, MAX_POWER};
use crate::dsl::registry::PrimSpec;
use crate::dsl::value::Value;
use crate::prim;

use super::merge_values;

pub const PRIMS: &[PrimSpec] = &[
    prim!(compose, [Callable, Callable] -> Callable, "function composition: x -> outer(inner(x))"),
    prim!(chain, [Callable, Callable, Callable] -> Callable, "composition of three functions: x -> h(g(f(x)))"),
    prim!(matcher, [Callable, Any] -> Callable, "equality test: x -> function(x) == target"),
    prim!(rbind, [Callable, Any] -> Callable, "fix the rightmost argument"),
    prim!(lbind, [Callable, Any] -> Callable, "fix the leftmost argument"),
    prim!(power, [Callable, Integer] -> Callable, "the function applied n times"),
    prim!(fork, [Callable, Callable, Callable] -> Callable, "x -> outer(a(x), b(x))"),
    prim!(apply, [Callable, Container] -> Container, "apply a function to each item"),
    prim!(rapply, [Container, Any] -> Container, "apply each function of a container to a value"),
    prim!(mapply, [Callable, ContainerContainer] -> FrozenSet, "apply and merge"),
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
    match f {
        Value::Func(_) => Ok(()),
        other => Err(DslError::Attribute(format!(
            "'{}' object has no attribute '__code__'",
            other.type_name()
        ))),
    }
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
        _ => Err(DslError::Recursion(format!(
            "power(f, {n}) recurses without end (or past the recursion limit)"
        ))),
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

fn members_of(container: &Value) -> DslResult<Vec<Value>> {
    container
        .members()
        .ok_or_else(|| DslError::type_error("an iterable container", container))
}

/// `apply(function, container)`, shared with `mapply`.
pub fn apply_values(function: &Value, container: &Value) -> DslResult<Value> {
    let items = members_of(container)?
        .into_iter()
        .map(|e| call1(function, e))
        .collect::<DslResult<Vec<_>>>()?;
    Ok(same_kind(container, items))
}

fn apply(a: &[Value]) -> DslResult<Value> {
    apply_values(&a[0], &a[1])
}

fn rapply(a: &[Value]) -> DslResult<Value> {
    let items = members_of(&a[0])?
        .iter()
        .map(|f| call1(f, a[1].clone()))
        .collect::<DslResult<Vec<_>>>()?;
    Ok(same_kind(&a[0], items))
}

fn mapply(a: &[Value]) -> DslResult<Value> {
    merge_values(&apply_values(&a[0], &a[1])?)
}

fn papply_values(a: &[Value]) -> DslResult<Value> {
    let (xs, ys) = (members_of(&a[1])?, members_of(&a[2])?);
    let items = xs
        .into_iter()
        .zip(ys)
        .map(|(x, y)| call(&a[0], &[x, y]))
        .collect::<DslResult<Vec<_>>>()?;
    Ok(Value::tuple(items))
}

fn papply(a: &[Value]) -> DslResult<Value> {
    papply_values(a)
}

fn mpapply(a: &[Value]) -> DslResult<Value> {
    merge_values(&papply_values(a)?)
}

fn prapply(a: &[Value]) -> DslResult<Value> {
    let (xs, ys) = (members_of(&a[1])?, members_of(&a[2])?);
    let mut items = Vec::with_capacity(xs.len() * ys.len());
    for y in &ys {
        for x in &xs {
            items.push(call(&a[0], &[x.clone(), y.clone()])?);
        }
    }
    Ok(Value::set(items))
}
