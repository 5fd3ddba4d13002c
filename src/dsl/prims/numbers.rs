//! Numbers and truth values: arithmetic on `Numerical` values (an integer or an integer pair)
//! with the reference's broadcasting, comparisons, the boolean connectives, `branch`,
//! `interval` and the small pair builders.
//!
//! The reference tests `isinstance(x, int)` and otherwise indexes `x[0]` and `x[1]`, so its
//! pair arithmetic applies Python's operators to the first two members of *any* tuple. This port
//! does the same: [`binop`] gives integers Python's semantics (bools count as integers, `//`
//! floors toward minus infinity) and gives tuples and sets the operators Python defines for
//! them (concatenation, repetition, set difference); anything else raises `TypeError`. Python's
//! integers never overflow; an `i64` overflow here is [`DslError::TooLarge`].

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::memory;
use crate::dsl::registry::PrimSpec;
use crate::dsl::value::Value;
use crate::prim;

use super::common::{MemberLimit, MEMBER_BYTES};
use super::containers::{set_algebra, set_find, SetOp};

pub const PRIMS: &[PrimSpec] = &[
    prim!(identity, [Any] -> Any, "identity function"),
    prim!(add, [Numerical, Numerical] -> Numerical, "addition"),
    prim!(subtract, [Numerical, Numerical] -> Numerical, "subtraction"),
    prim!(multiply, [Numerical, Numerical] -> Numerical, "multiplication"),
    prim!(divide, [Numerical, Numerical] -> Numerical, "floor division"),
    prim!(invert, [Numerical] -> Numerical, "inversion with respect to addition"),
    prim!(even, [Integer] -> Boolean, "evenness"),
    prim!(double, [Numerical] -> Numerical, "scaling by two"),
    prim!(halve, [Numerical] -> Numerical, "scaling by one half (floor division)"),
    prim!(flip, [Boolean] -> Boolean, "logical not"),
    prim!(equality, [Any, Any] -> Boolean, "equality"),
    prim!(greater, [Integer, Integer] -> Boolean, "greater"),
    prim!(both, [Boolean, Boolean] -> Boolean, "logical and (Python's `a and b`)"),
    prim!(either, [Boolean, Boolean] -> Boolean, "logical or (Python's `a or b`)"),
    prim!(increment, [Numerical] -> Numerical, "incrementing"),
    prim!(decrement, [Numerical] -> Numerical, "decrementing"),
    prim!(crement, [Numerical] -> Numerical, "incrementing positive and decrementing negative"),
    prim!(sign, [Numerical] -> Numerical, "sign"),
    prim!(positive, [Integer] -> Boolean, "positive"),
    prim!(toivec, [Integer] -> IntegerTuple, "vector pointing vertically: (i, 0)"),
    prim!(tojvec, [Integer] -> IntegerTuple, "vector pointing horizontally: (0, j)"),
    prim!(interval, [Integer, Integer, Integer] -> Tuple, "range(start, stop, step) as a tuple"),
    prim!(astuple, [Integer, Integer] -> IntegerTuple, "constructs a tuple"),
    prim!(branch, [Boolean, Any, Any] -> Any, "if else branching"),
];

// ----- Python's operators on DSL values ---------------------------------------------------

/// The value of a Python integer (`bool` included), or `None` for any other kind.
pub(super) fn number(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

/// The tuple `(p, q)`, in its compact variant when it has one ([`Value::tuple`]).
pub(super) fn pair_of(p: Value, q: Value) -> Value {
    Value::duo(p, q)
}

/// Python's `x < y`: numbers by value, tuples lexicographically, frozensets by proper
/// inclusion; any other mix raises `TypeError`. (`x > y` is `y < x` for all of these.)
#[inline]
pub(super) fn py_lt(x: &Value, y: &Value) -> DslResult<bool> {
    match (x, y) {
        (Value::Int(a), Value::Int(b)) => Ok(a < b),
        _ => py_lt_any(x, y),
    }
}

/// [`py_lt`] of any other values.
#[inline(never)]
fn py_lt_any(x: &Value, y: &Value) -> DslResult<bool> {
    if let (Some(a), Some(b)) = (number(x), number(y)) {
        return Ok(a < b);
    }
    match (x, y) {
        (Value::Pair(a, b), Value::Pair(c, d)) => Ok((a, b) < (c, d)),
        (Value::Cell(a), Value::Cell(b)) => Ok(a < b),
        (Value::Ints(a), Value::Ints(b)) => Ok(a < b),
        (Value::LocPair(a, b), Value::LocPair(c, d)) => Ok((a, b) < (c, d)),
        (Value::CellPair(a, b), Value::CellPair(c, d)) => Ok((a, b) < (c, d)),
        (Value::Grid(_), Value::Grid(_)) => Ok(x < y),
        (Value::Tuple(xs), Value::Tuple(ys)) => seq_lt(xs, ys),
        _ if x.is_tuple() && y.is_tuple() => seq_lt(&x.members().unwrap_or_default(), &y.members().unwrap_or_default()),
        _ if x.is_set() && y.is_set() => {
            let (nx, ny) = (x.len().unwrap_or(0), y.len().unwrap_or(0));
            Ok(nx < ny && (0..nx).filter_map(|k| x.member(k)).all(|m| set_find(y, &m).is_some()))
        }
        _ => Err(unsupported("<", x, y)),
    }
}

/// Python's `<` on tuples: the first members that differ decide, else the shorter is less.
fn seq_lt(xs: &[Value], ys: &[Value]) -> DslResult<bool> {
    match xs.iter().zip(ys).find(|(a, b)| a != b) {
        Some((a, b)) => py_lt(a, b),
        None => Ok(xs.len() < ys.len()),
    }
}

/// Python's `TypeError` for a binary operator the operands do not support.
pub(super) fn unsupported(op: &str, x: &Value, y: &Value) -> DslError {
    DslError::mismatch(
        format_args!("operands that support '{op}'"),
        format_args!("'{}' and '{}'", x.type_name(), y.type_name()),
    )
}

/// The arithmetic operators of `add`, `subtract`, `multiply` and `divide`.
#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    Mul,
    FloorDiv,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::FloorDiv => "//",
        }
    }

    /// The operator on two Python integers.
    #[inline]
    fn ints(self, x: i64, y: i64) -> DslResult<i64> {
        let result = match self {
            Op::Add => x.checked_add(y),
            Op::Sub => x.checked_sub(y),
            Op::Mul => x.checked_mul(y),
            Op::FloorDiv if y == 0 => None,
            Op::FloorDiv => floor_div(x, y),
        };
        result.ok_or_else(|| self.failure(x, y))
    }

    /// Why [`Op::ints`] has no result.
    #[cold]
    fn failure(self, x: i64, y: i64) -> DslError {
        match self {
            Op::FloorDiv if y == 0 => DslError::ZeroDivision("integer division or modulo by zero".into()),
            _ => DslError::TooLarge(format!("{x} {} {y} overflows 64 bits", self.symbol()).into()),
        }
    }
}

/// Python's `x // y` for `y != 0`: the quotient rounded toward minus infinity.
fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    let r = x.checked_rem(y)?;
    Some(if r != 0 && ((r < 0) != (y < 0)) { q - 1 } else { q })
}

/// Python's `x + y` (`vconcat` is `a + b`: tuples concatenate, integers add).
pub(super) fn py_add(x: &Value, y: &Value) -> DslResult<Value> {
    binop(Op::Add, x, y)
}

/// Python's `x - y`.
pub(super) fn py_sub(x: &Value, y: &Value) -> DslResult<Value> {
    binop(Op::Sub, x, y)
}

/// Python's `x * y` (a tuple times an integer repeats it).
pub(super) fn py_mul(x: &Value, y: &Value) -> DslResult<Value> {
    binop(Op::Mul, x, y)
}

/// Python's `x // y`.
pub(super) fn py_floordiv(x: &Value, y: &Value) -> DslResult<Value> {
    binop(Op::FloorDiv, x, y)
}

/// Python's `x <op> y` on the operands the reference's branches can meet.
fn binop(op: Op, x: &Value, y: &Value) -> DslResult<Value> {
    if let (Some(a), Some(b)) = (number(x), number(y)) {
        return op.ints(a, b).map(Value::Int);
    }
    match op {
        Op::Add if x.is_tuple() && y.is_tuple() => {
            let (mut items, tail) = (x.members().unwrap_or_default(), y.members().unwrap_or_default());
            check_members(items.len().saturating_add(tail.len()))?;
            items.extend(tail);
            Ok(Value::tuple(items))
        }
        Op::Sub if x.is_set() && y.is_set() => Ok(set_algebra(SetOp::Difference, x, y)),
        Op::Mul => match (x, number(x), y, number(y)) {
            (t, None, _, Some(n)) | (_, Some(n), t, None) if t.is_tuple() => repeat_tuple(t, n),
            _ => Err(unsupported(op.symbol(), x, y)),
        },
        _ => Err(unsupported(op.symbol(), x, y)),
    }
}

/// Python's `t * n` for a tuple: its members `n` times over (none for `n <= 0`, nor for an
/// empty tuple, which is not repeated: `() * 2**62` loops no 2**62 times).
fn repeat_tuple(t: &Value, n: i64) -> DslResult<Value> {
    let members = t.members().unwrap_or_default();
    let times = if members.is_empty() {
        0
    } else {
        usize::try_from(n).unwrap_or(0)
    };
    check_members(members.len().saturating_mul(times))?;
    Ok(Value::tuple((0..times).flat_map(|_| members.iter().cloned()).collect()))
}

/// Fails with [`DslError::TooLarge`] past [`MAX_MEMBERS`](super::common::MAX_MEMBERS) members,
/// or the lower cap of a [`MemberLimit`] in force on this thread.
pub(super) fn check_members(n: usize) -> DslResult<()> {
    let limit = MemberLimit::get();
    if n > limit {
        crate::bail!(TooLarge, "a container of {n} members (the limit is {limit})");
    }
    memory::room_for(n.saturating_mul(MEMBER_BYTES), || format!("a container of {n} members"))
}

/// Python's `v[k]` where the reference indexes a `Numerical` that is not an integer.
fn item(v: &Value, k: usize) -> DslResult<Value> {
    if !v.is_tuple() {
        return Err(DslError::type_error("a subscriptable tuple", v));
    }
    v.member(k)
        .ok_or_else(|| DslError::Index("tuple index out of range".into()))
}

/// The reference's four-way dispatch of `add`, `subtract`, `multiply` and `divide`: two
/// integers, two tuples member-wise, an integer with each member of a tuple, or each member
/// of `a` with `b`.
#[inline(always)]
fn numerical(op: Op, a: &Value, b: &Value) -> DslResult<Value> {
    // The common shapes first, without building member values, inlined into the column
    // engine's loops over `add` and `subtract`.
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => op.ints(*x, *y).map(Value::Int),
        (Value::Pair(x0, x1), Value::Pair(y0, y1)) => Ok(Value::Pair(op.ints(*x0, *y0)?, op.ints(*x1, *y1)?)),
        (Value::Int(x), Value::Pair(y0, y1)) => Ok(Value::Pair(op.ints(*x, *y0)?, op.ints(*x, *y1)?)),
        (Value::Pair(x0, x1), Value::Int(y)) => Ok(Value::Pair(op.ints(*x0, *y)?, op.ints(*x1, *y)?)),
        _ => numerical_members(op, a, b),
    }
}

/// [`numerical`] of any other shapes, member by member.
fn numerical_members(op: Op, a: &Value, b: &Value) -> DslResult<Value> {
    let (a_int, b_int) = (number(a).is_some(), number(b).is_some());
    // Which sides are indexed; Python computes `a[0] op b[0]` before it reads `a[1]` or `b[1]`.
    let (index_a, index_b) = if a_int && b_int {
        return binop(op, a, b);
    } else if a.is_tuple() && b.is_tuple() {
        (true, true)
    } else if a_int && b.is_tuple() {
        (false, true)
    } else {
        (true, false)
    };
    let side = |v: &Value, indexed: bool, k: usize| if indexed { item(v, k) } else { Ok(v.clone()) };
    let part = |k: usize| binop(op, &side(a, index_a, k)?, &side(b, index_b, k)?);
    let first = part(0)?;
    Ok(pair_of(first, part(1)?))
}

/// The reference's `f(x) if isinstance(x, int) else (f(x[0]), f(x[1]))`.
fn numerical_map(x: &Value, f: impl Fn(&Value) -> DslResult<Value>) -> DslResult<Value> {
    if number(x).is_some() {
        return f(x);
    }
    // `f(x[0])` raises before `x[1]` is read.
    let first = f(&item(x, 0)?)?;
    Ok(pair_of(first, f(&item(x, 1)?)?))
}

/// An integer function lifted to values: other kinds raise `TypeError`, overflow is
/// [`DslError::TooLarge`].
pub(super) fn on_int(v: &Value, what: &str, f: impl Fn(i64) -> Option<i64>) -> DslResult<Value> {
    let n = number(v).ok_or_else(|| DslError::type_error("an integer", v))?;
    f(n).map(Value::Int)
        .ok_or_else(|| DslError::TooLarge(format!("{what} of {n} overflows 64 bits").into()))
}

// ----- the primitives ---------------------------------------------------------------------

fn identity(a: &[Value]) -> DslResult<Value> {
    Ok(a[0].clone())
}

#[inline]
pub(super) fn add(a: &[Value]) -> DslResult<Value> {
    numerical(Op::Add, &a[0], &a[1])
}

#[inline]
pub(super) fn subtract(a: &[Value]) -> DslResult<Value> {
    numerical(Op::Sub, &a[0], &a[1])
}

#[inline]
pub(super) fn multiply(a: &[Value]) -> DslResult<Value> {
    numerical(Op::Mul, &a[0], &a[1])
}

fn divide(a: &[Value]) -> DslResult<Value> {
    numerical(Op::FloorDiv, &a[0], &a[1])
}

pub(super) fn invert(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| on_int(v, "negation", i64::checked_neg))
}

#[inline]
pub(super) fn even(a: &[Value]) -> DslResult<Value> {
    let n = number(&a[0]).ok_or_else(|| DslError::type_error("an integer", &a[0]))?;
    Ok(Value::Bool(n % 2 == 0))
}

pub(super) fn double(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| binop(Op::Mul, v, &Value::Int(2)))
}

pub(super) fn halve(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| binop(Op::FloorDiv, v, &Value::Int(2)))
}

#[inline]
pub(super) fn flip(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Bool(!a[0].truthy()))
}

#[inline]
pub(super) fn equality(a: &[Value]) -> DslResult<Value> {
    Ok(Value::Bool(a[0] == a[1]))
}

#[inline]
pub(super) fn greater(a: &[Value]) -> DslResult<Value> {
    py_lt(&a[1], &a[0]).map(Value::Bool)
}

#[inline]
pub(super) fn both(a: &[Value]) -> DslResult<Value> {
    Ok(if a[0].truthy() { a[1].clone() } else { a[0].clone() })
}

pub(super) fn either(a: &[Value]) -> DslResult<Value> {
    Ok(if a[0].truthy() { a[0].clone() } else { a[1].clone() })
}

pub(super) fn increment(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| binop(Op::Add, v, &Value::Int(1)))
}

pub(super) fn decrement(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| binop(Op::Sub, v, &Value::Int(1)))
}

pub(super) fn crement(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| {
        on_int(v, "crement", |n| match n {
            0 => Some(0),
            n if n > 0 => n.checked_add(1),
            n => n.checked_sub(1),
        })
    })
}

pub(super) fn sign(a: &[Value]) -> DslResult<Value> {
    numerical_map(&a[0], |v| on_int(v, "sign", |n| Some(n.signum())))
}

pub(super) fn positive(a: &[Value]) -> DslResult<Value> {
    py_lt(&Value::Int(0), &a[0]).map(Value::Bool)
}

pub(super) fn toivec(a: &[Value]) -> DslResult<Value> {
    Ok(pair_of(a[0].clone(), Value::Int(0)))
}

pub(super) fn tojvec(a: &[Value]) -> DslResult<Value> {
    Ok(pair_of(Value::Int(0), a[0].clone()))
}

fn interval(a: &[Value]) -> DslResult<Value> {
    let int = |v: &Value| number(v).ok_or_else(|| DslError::type_error("an integer", v));
    let (start, stop, step) = (int(&a[0])?, int(&a[1])?, int(&a[2])?);
    if step == 0 {
        crate::bail!(Value, "range() arg 3 must not be zero");
    }
    let (start, stop, step) = (start as i128, stop as i128, step as i128);
    let span = if step > 0 { stop - start } else { start - stop };
    let len = if span > 0 { (span - 1) / step.abs() + 1 } else { 0 };
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    check_members(len)?;
    // Every member lies between start and stop, so it fits an i64.
    let items = (0..len)
        .map(|k| Value::Int((start + k as i128 * step) as i64))
        .collect();
    Ok(Value::tuple(items))
}

pub(super) fn astuple(a: &[Value]) -> DslResult<Value> {
    Ok(pair_of(a[0].clone(), a[1].clone()))
}

fn branch(a: &[Value]) -> DslResult<Value> {
    Ok(if a[0].truthy() { a[1].clone() } else { a[2].clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(items: &[Value]) -> Value {
        Value::tuple(items.to_vec())
    }

    /// `t * n` repeats a tuple's members, none for `n <= 0`; an empty tuple stays empty at
    /// once for any `n` (it looped `n` times, and hung for a large one, as a member of a pair
    /// that `multiply` scales), and too many members in all raise.
    #[test]
    fn a_tuple_times_a_number_repeats_its_members() {
        let pair = tuple(&[Value::Int(1), Value::Int(2)]);
        assert_eq!(repeat_tuple(&pair, 2).unwrap(), tuple(&[1, 2, 1, 2].map(Value::Int)));
        assert_eq!(repeat_tuple(&pair, -3).unwrap(), tuple(&[]));
        for n in [0, 7, i64::MAX] {
            assert_eq!(repeat_tuple(&tuple(&[]), n).unwrap(), tuple(&[]), "() * {n}");
        }
        assert!(matches!(repeat_tuple(&pair, i64::MAX), Err(DslError::TooLarge(_))));
        let scaled = multiply(&[tuple(&[tuple(&[]), Value::Int(3)]), Value::Int(1 << 40)]);
        assert_eq!(scaled.unwrap(), tuple(&[tuple(&[]), Value::Int(3 << 40)]));
    }

    #[test]
    fn floor_division_rounds_toward_minus_infinity() {
        assert_eq!(divide(&[Value::Int(-7), Value::Int(2)]).unwrap(), Value::Int(-4));
        assert_eq!(
            divide(&[Value::Int(7), Value::Pair(-2, 3)]).unwrap(),
            Value::Pair(-4, 2)
        );
        assert_eq!(halve(&[Value::Pair(-3, 3)]).unwrap(), Value::Pair(-2, 1));
        assert_eq!(even(&[Value::Int(-3)]).unwrap(), Value::Bool(false));
        assert!(matches!(
            divide(&[Value::Int(1), Value::Int(0)]),
            Err(DslError::ZeroDivision(_))
        ));
        assert!(matches!(
            divide(&[Value::Int(i64::MIN), Value::Int(-1)]),
            Err(DslError::TooLarge(_))
        ));
        assert!(matches!(
            add(&[Value::Int(i64::MAX), Value::Int(1)]),
            Err(DslError::TooLarge(_))
        ));
    }

    #[test]
    fn pair_branches_apply_python_operators_to_members() {
        assert_eq!(add(&[Value::Bool(true), Value::Bool(true)]).unwrap(), Value::Int(2));
        assert_eq!(
            subtract(&[Value::Pair(5, 6), Value::Int(2)]).unwrap(),
            Value::Pair(3, 4)
        );
        // Two tuples of rows: the rows concatenate, as `a[0] + b[0]` does in Python.
        let rows = |a: i64, b: i64| tuple(&[tuple(&[Value::Int(a)]), tuple(&[Value::Int(b)])]);
        let sum = add(&[rows(1, 2), rows(3, 4)]).unwrap();
        assert_eq!(sum, tuple(&[Value::Pair(1, 3), Value::Pair(2, 4)]));
        assert_eq!(
            double(&[rows(1, 2)]).unwrap(),
            tuple(&[Value::Pair(1, 1), Value::Pair(2, 2)])
        );
        assert!(add(&[Value::Int(1), rows(1, 2)]).is_err());
        assert!(invert(&[Value::empty_set()]).is_err());
    }

    #[test]
    fn comparisons_and_connectives_follow_python() {
        let small = Value::indices(vec![crate::dsl::value::Loc { i: 0, j: 0 }]);
        assert_eq!(
            greater(&[small.clone(), Value::empty_set()]).unwrap(),
            Value::Bool(true)
        );
        assert_eq!(greater(&[small.clone(), small]).unwrap(), Value::Bool(false));
        assert!(greater(&[Value::Int(1), Value::Pair(0, 0)]).is_err());
        assert_eq!(both(&[Value::Int(0), Value::Int(5)]).unwrap(), Value::Int(0));
        assert_eq!(either(&[Value::Int(0), Value::Int(5)]).unwrap(), Value::Int(5));
    }

    #[test]
    fn interval_is_python_range() {
        let r = interval(&[Value::Int(14), Value::Int(5), Value::Int(-2)]).unwrap();
        assert_eq!(r, tuple(&[14, 12, 10, 8, 6].map(Value::Int)));
        assert!(interval(&[Value::Int(0), Value::Int(1), Value::Int(0)]).is_err());
        assert!(matches!(
            interval(&[Value::Int(0), Value::Int(i64::MAX), Value::Int(1)]),
            Err(DslError::TooLarge(_))
        ));
    }
}
