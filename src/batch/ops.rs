//! Dispatch of one batched call: which lanes a backend's batched op takes, and the rest.
//!
//! [`call_prim`] looks the primitive up in a table built once from the op table
//! ([`super::op::OPS`]) and the registry. For a primitive with a batched op, each lane whose
//! arguments have the compact shape the op is written for ([`Op::lane`]: a `Value::Grid` that
//! fits a [`GridMeta`](super::GridMeta), an integer colour, an index set or object, a constant
//! the op reads from the call) goes to the op; every other lane, and every primitive without an
//! op, goes to [`Backend::map_scalar`], the scalar primitive lane by lane. Sending odd shapes to
//! the scalar code keeps each op's results exactly the scalar primitive's, error messages
//! included, without re-deriving the reference's duck typing. `apply` and `mapply` of a
//! primitive run as one batched call of that primitive over every lane's members.

use std::sync::LazyLock;

use super::backend::Backend;
use super::op::{Lanes, Op, OPS};
use super::selection::Selection;
use super::{Arg, LaneResult};
use crate::dsl::prims::{merge_values, same_kind};
use crate::dsl::{registry, DslError, Func, PrimId, Value};

/// What a primitive's calls run as.
#[derive(Clone, Copy)]
enum Batched {
    /// A batched op, and the primitive's position in its [`Op::prims`] (the call's variant).
    Op(&'static Op, usize),
    /// `apply` (`mapply` when `merge`).
    Apply { merge: bool },
}

/// The batched form of each primitive, indexed by [`PrimId`].
///
/// # Panics
/// When an op names a primitive the registry lacks, or two ops claim one primitive.
static BATCHED: LazyLock<Vec<Option<Batched>>> = LazyLock::new(|| {
    let mut table = vec![None; registry().specs.len()];
    let named = OPS
        .iter()
        .flat_map(|&op| {
            op.prims
                .iter()
                .enumerate()
                .map(move |(v, &name)| (name, Batched::Op(op, v)))
        })
        .chain([
            ("apply", Batched::Apply { merge: false }),
            ("mapply", Batched::Apply { merge: true }),
        ]);
    for (name, batched) in named {
        let id = PrimId::of(name).unwrap_or_else(|| panic!("a batched op names {name:?}, which is no primitive"));
        let slot = &mut table[id.0 as usize];
        assert!(slot.is_none(), "two batched ops claim {name:?}");
        *slot = Some(batched);
    }
    table
});

/// Whether `prim` has a batched operation (else it runs as a per-lane loop of its scalar code).
pub fn has_batched_op(prim: PrimId) -> bool {
    BATCHED.get(prim.0 as usize).copied().flatten().is_some()
}

/// Calls a primitive on `lanes` lanes: one result per lane, in lane order.
pub fn call_prim<B: Backend + ?Sized>(b: &B, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
    if lanes == 0 {
        return Vec::new();
    }
    let scalar = || b.map_scalar(prim, args, lanes);
    match BATCHED.get(prim.0 as usize).copied().flatten() {
        None => scalar(),
        Some(Batched::Op(op, variant)) => {
            let Some(param) = (op.param)(variant, args) else {
                return scalar();
            };
            let mut packed = Lanes::with_room_for((0..lanes).filter_map(|k| (op.lane)(args, k)));
            let taken = Selection::new(lanes, |&k| (op.lane)(args, k).is_some_and(|lane| packed.push(lane)));
            split(b, prim, args, &taken, || b.run_op(op, param, &packed))
        }
        Some(Batched::Apply { merge }) => match args[0] {
            Arg::Same(Value::Func(f)) => match f.as_ref() {
                Func::Prim(id) if id.spec().arity() == 1 => {
                    let taken = Selection::new(lanes, |&k| args[1].get(k).len().is_some());
                    split(b, prim, args, &taken, || {
                        let containers: Vec<&Value> = taken.taken().iter().map(|&k| args[1].get(k)).collect();
                        let applied = b.apply(*id, &containers);
                        if merge {
                            applied.into_iter().map(|r| r.and_then(|v| merge_values(&v))).collect()
                        } else {
                            applied
                        }
                    })
                }
                _ => scalar(),
            },
            _ => scalar(),
        },
    }
}

/// The lanes `taken` through `fast`, which gives one result per taken lane, the others through
/// the scalar fallback; results merged back in lane order.
fn split<B: Backend + ?Sized>(
    b: &B,
    prim: PrimId,
    args: &[Arg<'_>],
    taken: &Selection,
    fast: impl FnOnce() -> Vec<LaneResult>,
) -> Vec<LaneResult> {
    if taken.is_all() {
        return fast();
    }
    let rest = taken.rest();
    let slow = b.map_scalar(prim, &rest.args(args), rest.len());
    if taken.is_empty() {
        return slow;
    }
    let mut slow = slow.into_iter();
    taken.merge(fast(), |_| slow.next().expect("the fallback gives one result per lane"))
}

/// Calls a function value on `lanes` lanes. A primitive given as a value runs as its batched
/// op; any other function lane by lane.
pub fn call_value<B: Backend + ?Sized>(b: &B, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
    if let Arg::Same(Value::Func(f)) = function {
        if let Func::Prim(id) = f.as_ref() {
            if id.spec().arity() == args.len() {
                return call_prim(b, *id, args, lanes);
            }
        }
    }
    b.map_call(function, args, lanes)
}
/// `apply(f, container)` on each lane, `f` a primitive of one argument, every container
/// iterable: all members of all lanes go through one batched call of `f`, then regroup into
/// the container's kind. A lane fails with its first failing member's error, as the scalar
/// `apply` stops at it.
pub fn apply_flat<B: Backend + ?Sized>(b: &B, f: PrimId, containers: &[&Value]) -> Vec<LaneResult> {
    let members: Vec<Vec<Value>> = containers.iter().map(|c| c.members().unwrap_or_default()).collect();
    let flat: Vec<&Value> = members.iter().flatten().collect();
    let total = flat.len();
    let mut results = call_prim(b, f, &[Arg::Each(flat)], total).into_iter();
    containers
        .iter()
        .zip(&members)
        .map(|(container, items)| {
            let mapped: Vec<LaneResult> = results.by_ref().take(items.len()).collect();
            // `apply` calls `f` inside a generator expression (PEP 479: StopIteration there is
            // a RuntimeError).
            let mapped = mapped
                .into_iter()
                .collect::<Result<_, _>>()
                .map_err(DslError::in_generator)?;
            Ok(same_kind(container, mapped))
        })
        .collect()
}
