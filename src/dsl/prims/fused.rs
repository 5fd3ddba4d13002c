//! Compositions of primitives that the column engine runs as one node, without building the
//! value in between: `size(difference(a, b))`, `size(intersection(a, b))`, and both with
//! `a = shift(patch, offset)`. Solvers test where a pattern fits with
//! `size(difference(shift(pattern, offset), cells)) == 0` over every offset, and score
//! candidates with `size(intersection(candidate, cells))`: each such call built one or two sets
//! only to count them.
//!
//! A fused node is the composition of the registered primitives by definition. Where the sets
//! are index sets or objects it counts their common members directly
//! ([`containers::moved_op_len`]); anything else runs the primitives one after the other,
//! raising what they raise, in their order.

use std::sync::LazyLock;

use super::containers::{self, SetOp};
use crate::dsl::error::DslResult;
use crate::dsl::registry::{PrimFn, PrimId};
use crate::dsl::value::Value;

/// A fused composition: `size` of a set operation on two sets, the first one possibly `shift`ed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused {
    /// The set operation, as the primitive and as what it counts.
    inner: PrimId,
    op: SetOp,
    /// Whether the arguments are `(patch, offset, b)` for `size(op(shift(patch, offset), b))`
    /// rather than `(a, b)` for `size(op(a, b))`.
    shifted: bool,
}

/// The primitives a fused node is made of.
struct Parts {
    size: PrimId,
    shift: PrimId,
    difference: PrimId,
    intersection: PrimId,
}

static PARTS: LazyLock<Parts> = LazyLock::new(|| {
    let id = PrimId::builtin;
    Parts {
        size: id("size"),
        shift: id("shift"),
        difference: id("difference"),
        intersection: id("intersection"),
    }
});

impl Fused {
    /// `outer(inner(a, b))` fused, where there is such a composition.
    pub fn of(outer: PrimId, inner: PrimId) -> Option<Fused> {
        let parts = &*PARTS;
        let op = match inner {
            _ if outer != parts.size => return None,
            id if id == parts.difference => SetOp::Difference,
            id if id == parts.intersection => SetOp::Intersection,
            _ => return None,
        };
        Some(Fused {
            inner,
            op,
            shifted: false,
        })
    }

    /// This composition with its first argument made by `first` (`shift(patch, offset)`),
    /// where that fuses too.
    pub fn with_first(self, first: PrimId) -> Option<Fused> {
        (!self.shifted && first == PARTS.shift).then_some(Fused { shifted: true, ..self })
    }

    /// How many arguments the fused node takes.
    pub fn arity(self) -> usize {
        if self.shifted {
            3
        } else {
            2
        }
    }

    /// The composition on one row of arguments.
    pub fn run(self, args: &[Value]) -> DslResult<Value> {
        let (a, offset, b) = match args {
            [patch, Value::Pair(di, dj), b] if self.shifted => (patch, (*di, *dj), b),
            [a, b] if !self.shifted => (a, (0, 0), b),
            _ => return self.composed(args),
        };
        match containers::moved_op_len(self.op, a, offset, b) {
            Some(n) => Ok(Value::Int(n as i64)),
            None => self.composed(args),
        }
    }

    /// The primitives one after the other: the definition.
    fn composed(self, args: &[Value]) -> DslResult<Value> {
        let parts = &*PARTS;
        let imp = |id: PrimId| -> PrimFn { id.spec().imp };
        let op = imp(self.inner);
        let set = match args {
            [patch, offset, b] => op(&[imp(parts.shift)(&[patch.clone(), offset.clone()])?, b.clone()])?,
            _ => op(args)?,
        };
        imp(parts.size)(&[set])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::{Cell, Loc};
    use proptest::strategy::Strategy;

    fn loc(i: i32, j: i32) -> Loc {
        Loc { i, j }
    }

    /// Every fused composition gives what its primitives give one after the other, results and
    /// errors, on sets of every kind it meets (and values it rejects), shifted by offsets that
    /// keep or leave the coordinates' range.
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
            for a in &sets {
                for b in &sets {
                    // Twice: the second time, `b` has been met before and may have a bitmap.
                    for _ in 0..2 {
                        let args = [a.clone(), b.clone()];
                        assert_same(plain.run(&args), plain.composed(&args), &args);
                        for offset in &offsets {
                            let args = [a.clone(), offset.clone(), b.clone()];
                            assert_same(shifted.run(&args), shifted.composed(&args), &args);
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
                for other in &others {
                    for (a, b) in [(&fixed, other), (other, &fixed)] {
                        for _ in 0..3 {
                            let args = [a.clone(), b.clone()];
                            proptest::prop_assert_eq!(plain.run(&args).ok(), plain.composed(&args).ok());
                            for &(di, dj) in &offsets {
                                let args = [a.clone(), Value::Pair(di, dj), b.clone()];
                                proptest::prop_assert_eq!(shifted.run(&args).ok(), shifted.composed(&args).ok());
                            }
                        }
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
