//! Dispatch of one batched call: which lanes a backend's batched op takes, and the rest.
//!
//! [`call_prim`] looks the primitive up in a table built once from the registry. For a
//! primitive with a batched op, each lane whose arguments have the compact shape the op is
//! written for (a `Value::Grid` that fits a [`GridMeta`](super::GridMeta), an integer colour,
//! an index set or object, constant flags) goes to the op; every other lane, and every
//! primitive without an op, goes to [`Backend::map_scalar`], the scalar primitive lane by lane.
//! Sending odd shapes to the scalar code keeps each op's results exactly the scalar
//! primitive's, error messages included, without re-deriving the reference's duck typing.

use std::cell::Cell as Counter;
use std::sync::LazyLock;

use super::backend::{Backend, Transform};
use super::grids::{GridBatch, PatchBatch};
use super::selection::Selection;
use super::{Arg, LaneResult};
use crate::dsl::prims::{merge_values, same_kind};
use crate::dsl::{registry, Cell, Color, DslError, Func, Grid, Loc, PrimId, Value};

/// The primitives with a batched op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BatchOp {
    Objects,
    /// The search dialect's `o_g(grid, R)`.
    ObjectsByMode,
    Ofcolor,
    Colorcount,
    Palette {
        as_tuple: bool,
    },
    Colorfilter,
    Fill,
    Paint,
    Transform(Transform),
    Apply {
        merge: bool,
    },
}

/// The batched op of each primitive, indexed by [`PrimId`].
static OPS: LazyLock<Vec<Option<BatchOp>>> = LazyLock::new(|| {
    let mut ops = vec![None; registry().specs.len()];
    let mut named = vec![
        ("objects", BatchOp::Objects),
        ("o_g", BatchOp::ObjectsByMode),
        ("ofcolor", BatchOp::Ofcolor),
        ("colorcount", BatchOp::Colorcount),
        ("palette", BatchOp::Palette { as_tuple: false }),
        ("p_g", BatchOp::Palette { as_tuple: true }),
        ("colorfilter", BatchOp::Colorfilter),
        ("fill", BatchOp::Fill),
        ("paint", BatchOp::Paint),
        ("apply", BatchOp::Apply { merge: false }),
        ("mapply", BatchOp::Apply { merge: true }),
    ];
    named.extend(Transform::ALL.map(|t| (t.name(), BatchOp::Transform(t))));
    for (name, op) in named {
        if let Some(id) = PrimId::of(name) {
            ops[id.0 as usize] = Some(op);
        }
    }
    ops
});

/// Whether `prim` has a batched operation (else it runs as a per-lane loop of its scalar code).
pub fn has_batched_op(prim: PrimId) -> bool {
    OPS.get(prim.0 as usize).copied().flatten().is_some()
}

/// Calls a primitive on `lanes` lanes: one result per lane, in lane order.
pub fn call_prim<B: Backend + ?Sized>(b: &B, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
    if lanes == 0 {
        return Vec::new();
    }
    let Some(op) = OPS.get(prim.0 as usize).copied().flatten() else {
        return b.map_scalar(prim, args, lanes);
    };
    let call = Call { b, prim, args, lanes };
    let int = |a: usize, k: usize| match args[a].get(k) {
        Value::Int(n) => Some(*n),
        _ => None,
    };
    match op {
        BatchOp::Objects => match (same_bool(&args[1]), same_bool(&args[2]), same_bool(&args[3])) {
            (Some(univalued), Some(diagonal), Some(without_bg)) => {
                let mode = 4 * univalued as u8 + 2 * diagonal as u8 + without_bg as u8;
                call.on_grids(|_| true, |grids, _| b.objects(grids, mode))
            }
            _ => call.scalar(),
        },
        BatchOp::ObjectsByMode => match args[1] {
            Arg::Same(Value::Int(mode @ 0..=7)) => call.on_grids(|_| true, |grids, _| b.objects(grids, *mode as u8)),
            _ => call.scalar(),
        },
        BatchOp::Ofcolor => call.on_grids(
            |k| int(1, k).is_some(),
            |grids, lanes| b.ofcolor(grids, &collect(lanes, |k| int(1, k))),
        ),
        BatchOp::Colorcount => call.on_grids(
            |k| int(1, k).is_some(),
            |grids, lanes| b.colorcount(grids, &collect(lanes, |k| int(1, k))),
        ),
        BatchOp::Palette { as_tuple } => call.on_grids(|_| true, |grids, _| b.palette(grids, as_tuple)),
        BatchOp::Transform(t) => call.on_grids(|_| true, |grids, _| b.transform(grids, t)),
        BatchOp::Colorfilter => call.split(
            |k| args[0].get(k).is_set() && int(1, k).is_some(),
            |lanes| {
                let objects: Vec<&Value> = lanes.iter().map(|&k| args[0].get(k)).collect();
                b.colorfilter(&objects, &collect(lanes, |k| int(1, k)))
            },
        ),
        BatchOp::Fill => {
            let color = |k| int(1, k).and_then(|c| Color::try_from(c).ok());
            call.on_grids(
                |k| color(k).is_some() && patch_cells(args[2].get(k)).is_some(),
                |grids, lanes| {
                    let patches = loc_batch(lanes, |k| patch_cells(args[2].get(k)));
                    b.fill(grids, &collect(lanes, color), &patches)
                },
            )
        }
        BatchOp::Paint => {
            let object = |k| match args[1].get(k) {
                Value::Object(cells) => Some(cells.as_slice()),
                _ => None,
            };
            call.on_grids(
                |k| object(k).is_some(),
                |grids, lanes| b.paint(grids, &cell_batch(lanes, object)),
            )
        }
        BatchOp::Apply { merge } => match args[0] {
            Arg::Same(Value::Func(f)) => match f.as_ref() {
                Func::Prim(id) if id.spec().arity() == 1 => call.split(
                    |k| args[1].get(k).len().is_some(),
                    |lanes| {
                        let containers: Vec<&Value> = lanes.iter().map(|&k| args[1].get(k)).collect();
                        let applied = b.apply(*id, &containers);
                        if merge {
                            applied.into_iter().map(|r| r.and_then(|v| merge_values(&v))).collect()
                        } else {
                            applied
                        }
                    },
                ),
                _ => call.scalar(),
            },
            _ => call.scalar(),
        },
    }
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

/// The flags of `objects`, when they are the same bool on every lane.
fn same_bool(a: &Arg<'_>) -> Option<bool> {
    match a {
        Arg::Same(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// `f` on each lane of `lanes`, which accepted every lane.
fn collect<T>(lanes: &[usize], f: impl Fn(usize) -> Option<T>) -> Vec<T> {
    lanes.iter().filter_map(|&k| f(k)).collect()
}

/// The cells of a patch in the compact variants a batched op takes.
enum Cells<'a> {
    Indices(&'a [Loc]),
    Object(&'a [Cell]),
}

fn patch_cells(v: &Value) -> Option<Cells<'_>> {
    match v {
        Value::Indices(l) => Some(Cells::Indices(l)),
        Value::Object(c) => Some(Cells::Object(c)),
        _ => None,
    }
}

/// The locations of the given lanes' patches in one flat buffer.
fn loc_batch<'a>(lanes: &[usize], patch: impl Fn(usize) -> Option<Cells<'a>>) -> PatchBatch<Loc> {
    let mut batch = PatchBatch::default();
    for &k in lanes {
        let pushed = match patch(k) {
            Some(Cells::Indices(locs)) => batch.push(locs.iter().copied()),
            Some(Cells::Object(cells)) => batch.push(cells.iter().map(|c| c.loc())),
            None => batch.push([]),
        };
        debug_assert!(pushed, "a batch of patches past u32::MAX locations");
    }
    batch
}

/// The cells of the given lanes' objects in one flat buffer.
fn cell_batch<'a>(lanes: &[usize], object: impl Fn(usize) -> Option<&'a [Cell]>) -> PatchBatch<Cell> {
    let mut batch = PatchBatch::default();
    for &k in lanes {
        let pushed = batch.push(object(k).unwrap_or_default().iter().copied());
        debug_assert!(pushed, "a batch of objects past u32::MAX cells");
    }
    batch
}

/// The grid of a lane, when it can travel in a [`GridBatch`].
pub(super) fn batchable_grid(v: &Value) -> Option<&Grid> {
    match v {
        Value::Grid(g) if GridBatch::fits(g) => Some(g),
        _ => None,
    }
}

/// One batched call being dispatched.
struct Call<'c, 'a, B: ?Sized> {
    b: &'c B,
    prim: PrimId,
    args: &'c [Arg<'a>],
    lanes: usize,
}

impl<B: Backend + ?Sized> Call<'_, '_, B> {
    /// Every lane through the scalar fallback.
    fn scalar(&self) -> Vec<LaneResult> {
        self.b.map_scalar(self.prim, self.args, self.lanes)
    }

    /// The lanes `accept` takes through `fast` (given their indices), the others through the
    /// scalar fallback; results merged back in lane order.
    fn split(&self, accept: impl Fn(usize) -> bool, fast: impl FnOnce(&[usize]) -> Vec<LaneResult>) -> Vec<LaneResult> {
        let taken = Selection::new(self.lanes, |&k| accept(k));
        if taken.is_all() {
            return fast(taken.taken());
        }
        let rest = taken.rest();
        let slow = self.b.map_scalar(self.prim, &rest.args(self.args), rest.len());
        if taken.is_empty() {
            return slow;
        }
        let mut slow = slow.into_iter();
        taken.merge(fast(taken.taken()), |_| {
            slow.next().expect("the fallback gives one result per lane")
        })
    }

    /// Like [`split`](Self::split) for ops whose first argument is a grid: a lane goes to
    /// `fast` when that grid can travel in a [`GridBatch`] and `accept` takes it; `fast` gets
    /// the batch of those grids and their lane indices.
    fn on_grids(
        &self,
        accept: impl Fn(usize) -> bool,
        fast: impl FnOnce(&GridBatch, &[usize]) -> Vec<LaneResult>,
    ) -> Vec<LaneResult> {
        let cells = Counter::new(0usize);
        let fits = |k: usize| match batchable_grid(self.args[0].get(k)) {
            Some(g) if accept(k) && cells.get() + g.cells.len() <= u32::MAX as usize => {
                cells.set(cells.get() + g.cells.len());
                true
            }
            _ => false,
        };
        self.split(fits, |lanes| {
            let mut grids = GridBatch::with_capacity(lanes.len(), cells.get());
            for &k in lanes {
                let pushed = batchable_grid(self.args[0].get(k)).is_some_and(|g| grids.push(g));
                debug_assert!(pushed, "an accepted grid always fits");
            }
            fast(&grids, lanes)
        })
    }
}
