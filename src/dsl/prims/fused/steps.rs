//! A chain of integer primitives run as one node: `chain(even, rbind(subtract, c), last)`,
//! `compose(invert, fork(equality, f, g))`, `compose(increment, compose(decrement, minimum))`
//! after its first step. Each step is one of the projections, arithmetic, comparisons and pair
//! builders of [`Cheap`] that [`chains`] lists, applied to the value of the step before (as its
//! first or second argument) and, for a binary step, to an operand of its own.
//!
//! In the column engine each step was a node of its own: a column of `Value`s written by one
//! loop, read by the next, and dropped. Run as one node, the values in between never leave the
//! row, and where every argument is an integer, a boolean, a pair of integers or a cell
//! ([`Typed`]), the steps compute on those unboxed, one loop over all the rows a step, with a
//! `Value` built for the result only: on solve_db3e9e38, `sfilter(lines, chain(even,
//! rbind(subtract, x8), last))` over 3,655 locations a grid. Any other argument, and any step that would raise (an overflow, a
//! projection of an integer), runs the registered primitives in turn ([`Steps::composed`]),
//! which is the definition and raises what the first failing step raises.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::Row;
use crate::dsl::error::DslResult;
use crate::dsl::prims::cheap::Cheap;
use crate::dsl::value::{Cell, Value};

/// The most steps one chain holds; a longer chain is several.
const MAX_STEPS: usize = 4;

/// Whether `op` may be a step: a primitive of integers, booleans and pairs, which [`Typed`]
/// computes unboxed on some arguments.
pub fn chains(op: Cheap) -> bool {
    use Cheap::*;
    matches!(
        op,
        First
            | Last
            | Astuple
            | Add
            | Subtract
            | Multiply
            | Equality
            | Greater
            | Even
            | Sign
            | Invert
            | Increment
            | Decrement
            | Double
            | Halve
            | Toivec
            | Tojvec
            | Flip
            | Positive
            | Crement
    )
}

/// The steps of a chain, first to last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    ops: [Cheap; MAX_STEPS],
    len: u8,
    /// How many arguments the first step takes (its own, the chain's first arguments).
    first_arity: u8,
    /// Bit `k`: step `k` (after the first) takes an operand besides the value chained, the
    /// chain's next argument.
    binary: u8,
    /// Bit `k`: the value chained is step `k`'s second argument, the operand its first.
    chained_second: u8,
}

impl Steps {
    /// A chain of one step, `op` on `arity` arguments, where `op` [`chains`].
    pub fn start(op: Cheap, arity: usize) -> Option<Steps> {
        (chains(op) && (1..=2).contains(&arity)).then_some(Steps {
            ops: [op; MAX_STEPS],
            len: 1,
            first_arity: arity as u8,
            binary: 0,
            chained_second: 0,
        })
    }

    /// This chain followed by `op` on `arity` arguments, of which the one at `position` is
    /// the chain's value; `None` where `op` does not chain or the chain is full.
    pub fn then(self, op: Cheap, arity: usize, position: usize) -> Option<Steps> {
        let k = self.len as usize;
        if !chains(op) || k == MAX_STEPS || arity == 0 || arity > 2 || position >= arity {
            return None;
        }
        let mut next = self;
        next.ops[k] = op;
        next.len += 1;
        next.binary |= u8::from(arity == 2) << k;
        next.chained_second |= u8::from(position == 1) << k;
        Some(next)
    }

    /// How many arguments the chain takes: the first step's, then each binary step's operand.
    pub fn arity(self) -> usize {
        self.first_arity as usize + self.binary.count_ones() as usize
    }

    /// The chain on one row of arguments: unboxed where it can be, else the primitives.
    pub fn run(self, args: &[Value]) -> DslResult<Value> {
        let mut row: SmallVec<[Option<Typed>; 4]> = args.iter().map(|v| Typed::rows([v].into_iter(), 1)).collect();
        match self.lanes(&mut row).map(Typed::boxed) {
            Some((mut values, off)) if !off[0] => Ok(values.swap_remove(0)),
            _ => self.composed(args),
        }
    }

    /// The chain over the rows of its arguments' columns (`None` where a column's first row is
    /// of no kind of [`Lanes`]), step after step over all the rows, each step one loop over
    /// values of one kind: the rows' results, with the rows to run through the primitives
    /// marked (an argument of another kind, a step that raises); `None` where every row is to
    /// (a step not computed unboxed on the kinds it meets).
    pub fn lanes(self, args: &mut [Option<Typed>]) -> Option<Typed> {
        let (own, operands) = args.split_at_mut(self.first_arity as usize);
        let mut value = own[0].take()?;
        match own.get(1) {
            None => value.unary(self.ops[0])?,
            Some(y) => value.binary(self.ops[0], y.as_ref()?, false)?,
        }
        let mut operands = operands.iter();
        for k in 1..self.len as usize {
            let op = self.ops[k];
            match self.binary >> k & 1 {
                0 => value.unary(op)?,
                _ => {
                    let operand = operands.next().expect("an operand for each binary step").as_ref()?;
                    value.binary(op, operand, self.chained_second >> k & 1 == 1)?;
                }
            }
        }
        Some(value)
    }

    /// The registered primitives one after the other: the definition.
    pub fn composed(self, args: &[Value]) -> DslResult<Value> {
        let call = |op: Cheap, a: &[Value]| op.with(Row(a));
        let (own, operands) = args.split_at(self.first_arity as usize);
        let mut v = call(self.ops[0], own)?;
        let mut operands = operands.iter();
        for k in 1..self.len as usize {
            let op = self.ops[k];
            v = if self.binary >> k & 1 == 0 {
                call(op, std::slice::from_ref(&v))?
            } else {
                let operand = operands.next().expect("an operand for each binary step").clone();
                match self.chained_second >> k & 1 {
                    0 => call(op, &[v, operand])?,
                    _ => call(op, &[operand, v])?,
                }
            };
        }
        Ok(v)
    }
}

/// Values of one kind, a row each, unboxed: integers, booleans, pairs of integers or cells.
#[derive(Clone, Debug)]
enum Lanes {
    Int(Vec<i64>),
    Bool(Vec<bool>),
    Pair(Vec<(i64, i64)>),
    Cell(Vec<Cell>),
}

impl Lanes {
    /// Booleans as the integers Python counts them as (`True + 1 == 2`, `-True == -1`).
    fn count_booleans(&mut self) {
        if let Lanes::Bool(v) = self {
            *self = Lanes::Int(v.iter().map(|&b| i64::from(b)).collect());
        }
    }
}

/// Whether `op` computes on a boolean as on the integer Python counts it as: the arithmetic,
/// `even` and `positive`, not `flip`, the comparisons or the pair builders (`toivec(True)`
/// is `(True, 0)`, and `True == 1` is unboxed only between equal kinds).
fn counts_booleans(op: Cheap) -> bool {
    use Cheap::*;
    matches!(
        op,
        Add | Subtract | Multiply | Even | Positive | Invert | Increment | Decrement | Double | Halve | Sign | Crement
    )
}

/// A column of a chain: its rows' values of one kind, and the rows whose value is of
/// another kind or was not computed (`off`), which run through the primitives.
#[derive(Clone, Debug)]
pub struct Typed {
    lanes: Lanes,
    off: Vec<bool>,
}

impl Typed {
    /// The first `count` of `values` (a column's rows, or one value repeated), of the first
    /// one's kind; `None` where that is none of the kinds of [`Lanes`].
    pub fn rows<'a>(values: impl Iterator<Item = &'a Value> + Clone, count: usize) -> Option<Typed> {
        let mut off = vec![false; count];
        let values = values.take(count);
        let lanes = match values.clone().next()? {
            Value::Int(_) => Lanes::Int(decode(values, &mut off, 0, |v| match v {
                Value::Int(n) => Some(*n),
                _ => None,
            })),
            Value::Bool(_) => Lanes::Bool(decode(values, &mut off, false, |v| match v {
                Value::Bool(b) => Some(*b),
                _ => None,
            })),
            Value::Pair(..) => Lanes::Pair(decode(values, &mut off, (0, 0), |v| match v {
                Value::Pair(a, b) => Some((*a, *b)),
                _ => None,
            })),
            &Value::Cell(first) => Lanes::Cell(decode(values, &mut off, first, |v| match v {
                Value::Cell(c) => Some(*c),
                _ => None,
            })),
            _ => return None,
        };
        Some(Typed { lanes, off })
    }

    /// Each row's value, boxed (a row marked `off` holds a placeholder), and which rows are
    /// marked.
    pub fn boxed(self) -> (Vec<Value>, Vec<bool>) {
        let values = match self.lanes {
            Lanes::Int(v) => v.into_iter().map(Value::Int).collect(),
            Lanes::Bool(v) => v.into_iter().map(Value::Bool).collect(),
            Lanes::Pair(v) => v.into_iter().map(|(a, b)| Value::Pair(a, b)).collect(),
            Lanes::Cell(v) => v.into_iter().map(Value::Cell).collect(),
        };
        (values, self.off)
    }

    /// A one-argument step on every row, in a loop compiled for the kind it meets; `None`
    /// where it is not computed unboxed on that kind.
    fn unary(&mut self, op: Cheap) -> Option<()> {
        use Lanes::*;
        let Typed { lanes, off } = self;
        if counts_booleans(op) {
            lanes.count_booleans();
        }
        *lanes = match (op, &*lanes) {
            (Cheap::First, Pair(v)) => Int(v.iter().map(|p| p.0).collect()),
            (Cheap::First, Cell(v)) => Int(v.iter().map(|c| c.color.into()).collect()),
            (Cheap::Last, Pair(v)) => Int(v.iter().map(|p| p.1).collect()),
            (Cheap::Last, Cell(v)) => Pair(v.iter().map(|c| (c.i.into(), c.j.into())).collect()),
            (Cheap::Even, Int(v)) => Bool(v.iter().map(|n| n % 2 == 0).collect()),
            (Cheap::Positive, Int(v)) => Bool(v.iter().map(|&n| n > 0).collect()),
            (Cheap::Flip, Bool(v)) => Bool(v.iter().map(|b| !b).collect()),
            (Cheap::Flip, Int(v)) => Bool(v.iter().map(|&n| n == 0).collect()),
            (Cheap::Toivec, Int(v)) => Pair(v.iter().map(|&n| (n, 0)).collect()),
            (Cheap::Tojvec, Int(v)) => Pair(v.iter().map(|&n| (0, n)).collect()),
            (Cheap::Invert, lanes) => numerical(lanes, off, i64::checked_neg)?,
            (Cheap::Increment, lanes) => numerical(lanes, off, |n| n.checked_add(1))?,
            (Cheap::Decrement, lanes) => numerical(lanes, off, |n| n.checked_sub(1))?,
            (Cheap::Double, lanes) => numerical(lanes, off, |n| n.checked_mul(2))?,
            // Python's `n // 2`, rounded toward minus infinity.
            (Cheap::Halve, lanes) => numerical(lanes, off, |n| Some(n.div_euclid(2)))?,
            (Cheap::Sign, lanes) => numerical(lanes, off, |n| Some(n.signum()))?,
            (Cheap::Crement, lanes) => numerical(lanes, off, |n| match n {
                0 => Some(0),
                n if n > 0 => n.checked_add(1),
                n => n.checked_sub(1),
            })?,
            _ => return None,
        };
        Some(())
    }

    /// A two-argument step on every row, the value so far its first argument (or its
    /// `second`) and `operand` the other, in a loop compiled for the kinds it meets; `None`
    /// where it is not computed unboxed on those kinds.
    fn binary(&mut self, op: Cheap, operand: &Typed, second: bool) -> Option<()> {
        use Lanes::*;
        let Typed { lanes, off } = self;
        for (off, &other) in off.iter_mut().zip(&operand.off) {
            *off |= other;
        }
        let mut operand = Cow::Borrowed(&operand.lanes);
        if counts_booleans(op) {
            lanes.count_booleans();
            if let Bool(_) = *operand {
                operand.to_mut().count_booleans();
            }
        }
        let (x, y) = match second {
            false => (&*lanes, &*operand),
            true => (&*operand, &*lanes),
        };
        *lanes = match (op, x, y) {
            (Cheap::Add, ..) => arithmetic(x, y, off, i64::checked_add)?,
            (Cheap::Subtract, ..) => arithmetic(x, y, off, i64::checked_sub)?,
            (Cheap::Multiply, ..) => arithmetic(x, y, off, i64::checked_mul)?,
            // Equal kinds only: Python's `True == 1` compares across them.
            (Cheap::Equality, Int(a), Int(b)) => Bool(zip(a, b, off, |p, q| Some(p == q))),
            (Cheap::Equality, Bool(a), Bool(b)) => Bool(zip(a, b, off, |p, q| Some(p == q))),
            (Cheap::Equality, Pair(a), Pair(b)) => Bool(zip(a, b, off, |p, q| Some(p == q))),
            (Cheap::Equality, Cell(a), Cell(b)) => Bool(zip(a, b, off, |p, q| Some(p == q))),
            (Cheap::Greater, Int(a), Int(b)) => Bool(zip(a, b, off, |p, q| Some(p > q))),
            (Cheap::Astuple, Int(a), Int(b)) => Pair(zip(a, b, off, |p, q| Some((p, q)))),
            _ => return None,
        };
        Some(())
    }
}

/// `f` of each row's item, or `filler` where it gives none (the row marked `off`): the loop
/// of every step and of decoding a column.
#[inline(always)]
fn marked<I, C: Copy>(
    items: impl Iterator<Item = I>,
    off: &mut [bool],
    filler: C,
    f: impl Fn(I) -> Option<C>,
) -> Vec<C> {
    (items.zip(off.iter_mut()))
        .map(|(x, off)| {
            f(x).unwrap_or_else(|| {
                *off = true;
                filler
            })
        })
        .collect()
}

/// `kind` of each value, or `filler` where it gives none (the row marked `off`).
fn decode<'a, T: Copy>(
    values: impl Iterator<Item = &'a Value>,
    off: &mut [bool],
    filler: T,
    kind: impl Fn(&Value) -> Option<T>,
) -> Vec<T> {
    marked(values, off, filler, kind)
}

/// `f` of each row, or a default where it gives none (the row marked `off`).
#[inline(always)]
fn map<A: Copy, C: Copy + Default>(xs: &[A], off: &mut [bool], f: impl Fn(A) -> Option<C>) -> Vec<C> {
    marked(xs.iter().copied(), off, C::default(), f)
}

/// `f` of each row's two values, or a default where it gives none (the row marked `off`).
#[inline(always)]
fn zip<A: Copy, B: Copy, C: Copy + Default>(
    xs: &[A],
    ys: &[B],
    off: &mut [bool],
    f: impl Fn(A, B) -> Option<C>,
) -> Vec<C> {
    marked(
        xs.iter().copied().zip(ys.iter().copied()),
        off,
        C::default(),
        |(x, y)| f(x, y),
    )
}

/// The reference's `f(x) if isinstance(x, int) else (f(x[0]), f(x[1]))` over integers or
/// pairs (booleans counted as integers before); `None` for other kinds.
#[inline(always)]
fn numerical(lanes: &Lanes, off: &mut [bool], f: impl Fn(i64) -> Option<i64> + Copy) -> Option<Lanes> {
    Some(match lanes {
        Lanes::Int(v) => Lanes::Int(map(v, off, f)),
        Lanes::Pair(v) => Lanes::Pair(map(v, off, |(a, b)| Some((f(a)?, f(b)?)))),
        Lanes::Bool(_) | Lanes::Cell(_) => return None,
    })
}

/// `add`, `subtract` or `multiply` (as `f` on integers) of integers or pairs, a pair and an
/// integer broadcasting; `None` for other kinds.
#[inline(always)]
fn arithmetic(x: &Lanes, y: &Lanes, off: &mut [bool], f: impl Fn(i64, i64) -> Option<i64> + Copy) -> Option<Lanes> {
    use Lanes::*;
    Some(match (x, y) {
        (Int(a), Int(b)) => Int(zip(a, b, off, f)),
        (Pair(a), Pair(b)) => Pair(zip(a, b, off, |p, q| Some((f(p.0, q.0)?, f(p.1, q.1)?)))),
        (Int(a), Pair(b)) => Pair(zip(a, b, off, |p, q| Some((f(p, q.0)?, f(p, q.1)?)))),
        (Pair(a), Int(b)) => Pair(zip(a, b, off, |p, q| Some((f(p.0, q)?, f(p.1, q)?)))),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values of every kind a chain meets, and some it does not: integers near the ends of
    /// `i64` (so that steps overflow), booleans, pairs, cells, a pair of locations, sets and
    /// tuples.
    fn value() -> impl Strategy<Value = Value> {
        let int = prop_oneof![
            -6i64..6,
            Just(i64::MAX),
            Just(i64::MIN),
            Just(i64::MAX / 2 + 1),
            Just(i64::MIN + 1)
        ];
        prop_oneof![
            4 => int.clone().prop_map(Value::Int),
            1 => any::<bool>().prop_map(Value::Bool),
            4 => (int.clone(), int).prop_map(|(a, b)| Value::Pair(a, b)),
            1 => (0..10, -4i32..4, -4i32..4).prop_map(|(color, i, j)| Value::Cell(Cell { color, i, j })),
            1 => (-3i64..3, -3i64..3).prop_map(|(a, b)| Value::duo(Value::Pair(a, b), Value::Pair(b, a))),
            1 => Just(Value::empty_set()),
            1 => (-3i64..3).prop_map(|n| Value::tuple(vec![Value::Int(n), Value::Pair(n, n), Value::Int(1)])),
        ]
    }

    /// A chain of up to [`MAX_STEPS`] steps, with the arguments it takes.
    fn chain() -> impl Strategy<Value = (Steps, Vec<Value>)> {
        let ops: Vec<Cheap> = Cheap::ALL.iter().copied().filter(|&op| chains(op)).collect();
        let arity = |op: Cheap| match op {
            Cheap::Astuple | Cheap::Add | Cheap::Subtract | Cheap::Multiply | Cheap::Equality | Cheap::Greater => 2,
            _ => 1,
        };
        let step = (proptest::sample::select(ops), any::<bool>(), value());
        (proptest::collection::vec(step, 1..=MAX_STEPS), value(), value()).prop_map(move |(steps, x, y)| {
            let (first, _, _) = steps[0];
            let mut chain = Steps::start(first, arity(first)).expect("chains");
            let mut args = vec![x];
            if arity(first) == 2 {
                args.push(y);
            }
            for &(op, second, ref operand) in &steps[1..] {
                let position = usize::from(second && arity(op) == 2);
                chain = chain.then(op, arity(op), position).expect("room");
                if arity(op) == 2 {
                    args.push(operand.clone());
                }
            }
            assert_eq!(chain.arity(), args.len());
            (chain, args)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// A chain gives what its primitives give in turn, results and errors, whether it
        /// computes unboxed or not.
        #[test]
        fn a_chain_is_its_primitives_in_turn((steps, args) in chain()) {
            match (steps.run(&args), steps.composed(&args)) {
                (Ok(got), Ok(expected)) => prop_assert_eq!(got, expected),
                (Err(got), Err(expected)) => prop_assert_eq!(got.to_string(), expected.to_string()),
                (got, expected) => prop_assert!(false, "{:?} against {:?}", got, expected),
            }
        }
    }

    /// Every step computes unboxed on some arguments: the property above compares the unboxed
    /// path, not the definition with itself.
    #[test]
    fn every_step_computes_unboxed_on_some_arguments() {
        let samples = [
            Value::Int(3),
            Value::Int(-2),
            Value::Bool(true),
            Value::Pair(1, -4),
            Value::Cell(Cell { color: 5, i: 1, j: 2 }),
        ];
        for &op in Cheap::ALL.iter().filter(|&&op| chains(op)) {
            let computed = [1, 2].into_iter().any(|arity| {
                let Some(steps) = Steps::start(op, arity) else {
                    return false;
                };
                samples.iter().any(|x| {
                    samples.iter().any(|y| {
                        let mut row = [Typed::rows([x].into_iter(), 1), Typed::rows([y].into_iter(), 1)];
                        steps.lanes(&mut row[..arity]).is_some_and(|t| !t.boxed().1[0])
                    })
                })
            });
            assert!(computed, "{op:?}");
        }
    }
}
