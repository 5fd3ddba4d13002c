//! Python's object model over [`Value`]s: `len`, iteration, indexing and slicing, unpacking,
//! the arithmetic and comparison operators, `min`/`max`, `range` arguments, `tuple.count`,
//! each raising the exception class CPython raises on the kinds it refuses.
//!
//! The primitives' generic paths ([`super::generic`]) are the reference's bodies written with
//! these, for arguments that no fast path takes (a frozenset where a grid goes, a grid where a
//! location goes): the reference duck-types them, and so do these.

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::value::Value;

use super::numbers;

/// `len(v)`: `TypeError` for a value without a length.
pub fn len(v: &Value) -> DslResult<usize> {
    v.len()
        .ok_or_else(|| DslError::Type(format!("object of type '{}' has no len()", v.type_name()).into()))
}

/// The members of `v` in iteration order (`for x in v`): `TypeError` for a non-iterable.
pub fn iter(v: &Value) -> DslResult<Vec<Value>> {
    v.members()
        .ok_or_else(|| DslError::Type(format!("'{}' object is not iterable", v.type_name()).into()))
}

fn not_subscriptable(v: &Value) -> DslError {
    DslError::Type(format!("'{}' object is not subscriptable", v.type_name()).into())
}

/// `v[k]` for an integer `k`, negative counting from the end: only tuples are subscriptable.
pub fn item(v: &Value, k: i64) -> DslResult<Value> {
    if !v.is_tuple() {
        return Err(not_subscriptable(v));
    }
    let n = v.len().unwrap_or(0) as i64;
    let at = if k < 0 { k + n } else { k };
    if at < 0 || at >= n {
        crate::bail!(Index, "tuple index out of range");
    }
    Ok(v.member(at as usize).expect("in range"))
}

/// `v[k]` for any value `k`: a tuple's index must be an integer.
pub fn getitem(v: &Value, k: &Value) -> DslResult<Value> {
    if !v.is_tuple() {
        return Err(not_subscriptable(v));
    }
    match numbers::number(k) {
        Some(k) => item(v, k),
        None => Err(DslError::Type(
            format!("tuple indices must be integers or slices, not {}", k.type_name()).into(),
        )),
    }
}

/// `v[start:stop]` of a tuple, the bounds any values (integers, else `TypeError`).
pub fn slice(v: &Value, start: &Value, stop: &Value) -> DslResult<Value> {
    if !v.is_tuple() {
        return Err(not_subscriptable(v));
    }
    let bound = |b: &Value| {
        numbers::number(b)
            .ok_or_else(|| DslError::Type("slice indices must be integers or None or have an __index__ method".into()))
    };
    let (s, e) = (bound(start)?, bound(stop)?);
    let members = v.members().unwrap_or_default();
    Ok(Value::tuple(
        members[super::common::py_slice(members.len(), s, e)].to_vec(),
    ))
}

/// `a, b = v`: Python's `TypeError` for a non-iterable, `ValueError` for another length.
pub fn unpack2(v: &Value) -> DslResult<(Value, Value)> {
    v.unpack2()
}

/// An integer where Python wants one (`range(n)`): `TypeError` for any other kind.
pub fn index_int(v: &Value) -> DslResult<i64> {
    numbers::number(v)
        .ok_or_else(|| DslError::Type(format!("'{}' object cannot be interpreted as an integer", v.type_name()).into()))
}

/// `x + y`.
pub fn add(x: &Value, y: &Value) -> DslResult<Value> {
    numbers::py_add(x, y)
}

/// `x - y`.
pub fn sub(x: &Value, y: &Value) -> DslResult<Value> {
    numbers::py_sub(x, y)
}

/// `x * y`.
pub fn mul(x: &Value, y: &Value) -> DslResult<Value> {
    numbers::py_mul(x, y)
}

/// `x // y`.
pub fn floordiv(x: &Value, y: &Value) -> DslResult<Value> {
    numbers::py_floordiv(x, y)
}

/// `x % y` (integers only: no tuple or set supports it).
pub fn rem(x: &Value, y: &Value) -> DslResult<Value> {
    match (numbers::number(x), numbers::number(y)) {
        (Some(_), Some(0)) => crate::bail!(ZeroDivision, "integer division or modulo by zero"),
        (Some(a), Some(b)) => {
            let r = a.checked_rem(b).unwrap_or(0);
            Ok(Value::Int(if r != 0 && (r < 0) != (b < 0) { r + b } else { r }))
        }
        _ => Err(numbers::unsupported("%", x, y)),
    }
}

/// `-x`.
pub fn neg(x: &Value) -> DslResult<Value> {
    unary(x, "unary -", "negation", i64::checked_neg)
}

/// `abs(x)`.
pub fn abs(x: &Value) -> DslResult<Value> {
    unary(x, "abs()", "abs()", i64::checked_abs)
}

/// An operator of one integer: Python's `TypeError` for anything else ("bad operand type for
/// `operator`"), the port's size limit where the result overflows.
fn unary(x: &Value, operator: &str, what: &str, f: fn(i64) -> Option<i64>) -> DslResult<Value> {
    if numbers::number(x).is_none() {
        crate::bail!(Type, "bad operand type for {operator}: '{}'", x.type_name());
    }
    numbers::on_int(x, what, f)
}

/// `x < y`.
pub fn lt(x: &Value, y: &Value) -> DslResult<bool> {
    numbers::py_lt(x, y)
}

/// `x <= y`: equal values of one kind, or `x < y`.
pub fn le(x: &Value, y: &Value) -> DslResult<bool> {
    Ok(x == y && same_kind(x, y) || lt(x, y)?)
}

/// Whether two equal values are of kinds `<=` compares (numbers, tuples or sets alike).
fn same_kind(x: &Value, y: &Value) -> bool {
    (numbers::number(x).is_some() && numbers::number(y).is_some())
        || (x.is_tuple() && y.is_tuple())
        || (x.is_set() && y.is_set())
}

/// `min(items)`: the first of the least, `ValueError` for none.
pub fn min(items: &[Value]) -> DslResult<Value> {
    extreme(items, "min", lt)
}

/// `max(items)`: the first of the greatest, `ValueError` for none.
pub fn max(items: &[Value]) -> DslResult<Value> {
    extreme(items, "max", |item, best| lt(best, item))
}

fn extreme(items: &[Value], name: &str, better: impl Fn(&Value, &Value) -> DslResult<bool>) -> DslResult<Value> {
    let Some((first, rest)) = items.split_first() else {
        crate::bail!(Value, "{name}() arg is an empty sequence");
    };
    let mut best = first;
    for item in rest {
        if better(item, best)? {
            best = item;
        }
    }
    Ok(best.clone())
}

/// `v.count(x)`: only tuples have it (`AttributeError` for sets and numbers).
pub fn count(v: &Value, x: &Value) -> DslResult<usize> {
    if !v.is_tuple() {
        crate::bail!(Attribute, "'{}' object has no attribute 'count'", v.type_name());
    }
    Ok(v.members().unwrap_or_default().iter().filter(|m| *m == x).count())
}

/// `next(iter(v))`: `TypeError` for a non-iterable, `StopIteration` for an empty one.
pub fn first(v: &Value) -> DslResult<Value> {
    let n = v
        .len()
        .ok_or_else(|| DslError::Type(format!("'{}' object is not iterable", v.type_name()).into()))?;
    if n == 0 {
        crate::bail!(StopIteration, "empty container");
    }
    Ok(v.member(0).expect("non-empty"))
}

/// The reference's `toindices`: nothing for an empty patch, the second items of the members
/// where the first member's second item is a tuple, else the patch itself, unchecked.
pub fn toindices(patch: &Value) -> DslResult<Value> {
    if len(patch)? == 0 {
        return Ok(Value::empty_set());
    }
    if item(&first(patch)?, 1)?.is_tuple() {
        let members = iter(patch)?;
        let mut out = Vec::with_capacity(members.len());
        for m in &members {
            out.push(unpack2(m)?.1);
        }
        return Ok(Value::set(out));
    }
    Ok(patch.clone())
}

/// `range(start, stop)` as integers, checked against the member cap.
pub fn range(start: i64, stop: i64) -> DslResult<std::ops::Range<i64>> {
    let n = stop.saturating_sub(start).max(0);
    numbers::check_members(usize::try_from(n).unwrap_or(usize::MAX))?;
    Ok(start..stop.max(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(items: Vec<Value>) -> Value {
        Value::tuple(items)
    }

    #[test]
    fn the_object_model_raises_as_cpython() {
        let set = Value::set(vec![Value::Int(1), Value::Int(2)]);
        assert!(matches!(len(&Value::Int(1)), Err(DslError::Type(_))));
        assert!(matches!(iter(&Value::Int(1)), Err(DslError::Type(_))));
        assert!(matches!(item(&set, 0), Err(DslError::Type(_))));
        assert!(matches!(item(&Value::Pair(1, 2), 2), Err(DslError::Index(_))));
        assert_eq!(item(&Value::Pair(1, 2), -1), Ok(Value::Int(2)));
        assert!(matches!(
            getitem(&Value::Pair(1, 2), &Value::Pair(0, 0)),
            Err(DslError::Type(_))
        ));
        assert!(matches!(index_int(&Value::Pair(1, 2)), Err(DslError::Type(_))));
        assert!(matches!(count(&set, &Value::Int(1)), Err(DslError::Attribute(_))));
        assert!(matches!(
            count(&Value::Int(1), &Value::Int(1)),
            Err(DslError::Attribute(_))
        ));
        assert_eq!(count(&t(vec![Value::Int(1), Value::Bool(true)]), &Value::Int(1)), Ok(2));
        // `(1, 2) * 2` repeats, `1 + (1, 2)` raises.
        assert_eq!(mul(&Value::Pair(1, 2), &Value::Int(2)), Ok(Value::ints(&[1, 2, 1, 2])));
        assert!(matches!(
            add(&Value::Int(1), &Value::Pair(1, 2)),
            Err(DslError::Type(_))
        ));
        assert!(matches!(
            rem(&Value::Int(1), &Value::Int(0)),
            Err(DslError::ZeroDivision(_))
        ));
        assert_eq!(rem(&Value::Int(-7), &Value::Int(3)), Ok(Value::Int(2)));
        assert_eq!(rem(&Value::Int(7), &Value::Int(-3)), Ok(Value::Int(-2)));
        assert!(matches!(neg(&Value::Pair(1, 2)), Err(DslError::Type(_))));
        assert!(matches!(min(&[]), Err(DslError::Value(_))));
        assert!(matches!(
            max(&[Value::Int(1), Value::Pair(1, 2)]),
            Err(DslError::Type(_))
        ));
        assert_eq!(min(&[Value::Pair(3, 1), Value::Pair(1, 5)]), Ok(Value::Pair(1, 5)));
        assert!(matches!(le(&Value::Int(1), &Value::Pair(1, 2)), Err(DslError::Type(_))));
        assert_eq!(le(&Value::Pair(1, 2), &Value::Pair(1, 2)), Ok(true));
        assert!(matches!(first(&Value::empty_set()), Err(DslError::StopIteration(_))));
        assert!(matches!(first(&Value::Int(3)), Err(DslError::Type(_))));
        assert!(matches!(
            slice(&set, &Value::Int(0), &Value::Int(1)),
            Err(DslError::Type(_))
        ));
        assert_eq!(
            slice(&Value::ints(&[1, 2, 3]), &Value::Int(1), &Value::Int(-1)),
            Ok(t(vec![Value::Int(2)]))
        );
    }

    #[test]
    fn toindices_hands_back_what_is_no_patch_of_cells() {
        // `toindices(((1, 2, 3), (4, 5, 6)))` is the tuple itself: `(1, 2, 3)[1]` is no tuple.
        let rows = t(vec![Value::ints(&[1, 2, 3]), Value::ints(&[4, 5, 6])]);
        assert_eq!(toindices(&rows), Ok(rows.clone()));
        assert_eq!(toindices(&Value::empty_tuple()), Ok(Value::empty_set()));
        // A frozenset of frozensets: `frozenset(...)[1]` is not subscriptable.
        let sets = Value::set(vec![Value::indices(vec![crate::dsl::value::Loc { i: 1, j: 1 }])]);
        assert!(matches!(toindices(&sets), Err(DslError::Type(_))));
        assert!(matches!(toindices(&Value::Int(0)), Err(DslError::Type(_))));
    }
}
