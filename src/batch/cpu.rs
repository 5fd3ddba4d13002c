//! The CPU backend: each batched op is a rayon loop over contiguous chunks of lanes (never one
//! task per cell), calling on each lane the very function the scalar primitive is built on,
//! over that lane's slice of the flat buffer. So a batched op cannot drift from its primitive.
//!
//! Every lane runs isolated as the interpreter runs a program: under a time limit (the
//! thread's [`Deadline`]) and with a panic turned into that lane's error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use smallvec::SmallVec;

use super::backend::{Backend, Transform};
use super::grids::{GridBatch, PatchBatch};
use super::{par_map, Arg, LaneResult};
use crate::dsl::func::{call, panic_message, Deadline};
use crate::dsl::prims;
use crate::dsl::{Cell, Color, DslError, GridView, Loc, PrimId, Value};

/// Lanes per parallel chunk for scalar primitives and function values: one, leaving the split
/// to rayon's adaptive splitter. Most lanes are cheap, but a lane that calls function values
/// can run for seconds, and longer chunks would pile such lanes onto one thread.
const SCALAR_CHUNK: usize = 1;
/// Lanes per parallel chunk for the grid ops (each lane does real work).
const GRID_CHUNK: usize = 8;

/// The CPU backend.
#[derive(Clone, Debug, Default)]
pub struct CpuBackend {
    /// Time limit per lane of a call that may run function values.
    limit: Option<Duration>,
}

impl CpuBackend {
    /// A backend whose lane-by-lane calls stop with [`DslError::Timeout`] after `limit`.
    pub fn new(limit: Option<Duration>) -> CpuBackend {
        CpuBackend { limit }
    }

    /// Runs one lane, a panic becoming the lane's error; under the time limit when `timed`.
    fn guarded(&self, timed: bool, what: &dyn Fn() -> String, f: impl FnOnce() -> LaneResult) -> LaneResult {
        let _deadline = timed.then(|| Deadline::set(self.limit.map(|l| Instant::now() + l)));
        catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
            let message = panic_message(&panic);
            Err(DslError::Value(format!(
                "internal error: {} panicked: {message}",
                what()
            )))
        })
    }
}

/// Whether a call may run function values, and so needs the time limit: only a function, or
/// a tuple or set (which may hold functions, as `rapply`'s does), can lead to one. Grids,
/// patches and numbers cannot, and reading the clock for them would cost more than most
/// primitives.
fn may_call(args: &SmallVec<[Value; 4]>) -> bool {
    args.iter()
        .any(|a| matches!(a, Value::Func(_) | Value::Tuple(_) | Value::Set(_)))
}

/// The arguments of lane `k`.
fn lane_args(args: &[Arg<'_>], k: usize) -> SmallVec<[Value; 4]> {
    args.iter().map(|a| a.get(k).clone()).collect()
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        let spec = prim.spec();
        par_map(lanes, SCALAR_CHUNK, |k| {
            let a = lane_args(args, k);
            self.guarded(may_call(&a), &|| spec.name.to_string(), || (spec.imp)(&a))
        })
    }

    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        par_map(lanes, SCALAR_CHUNK, |k| {
            let f = function.get(k);
            self.guarded(true, &|| f.to_string(), || call(f, &lane_args(args, k)))
        })
    }

    fn objects(&self, grids: &GridBatch, mode: u8) -> Vec<LaneResult> {
        let flags = [mode & 4 != 0, mode & 2 != 0, mode & 1 != 0].map(Value::Bool);
        on_views(grids, |g, _| scalar("objects", g, &flags))
    }

    fn ofcolor(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        on_views(grids, |g, k| scalar("ofcolor", g, &[Value::Int(colors[k])]))
    }

    fn colorcount(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        on_views(grids, |g, k| scalar("colorcount", g, &[Value::Int(colors[k])]))
    }

    fn palette(&self, grids: &GridBatch, as_tuple: bool) -> Vec<LaneResult> {
        on_views(grids, |g, _| scalar(if as_tuple { "p_g" } else { "palette" }, g, &[]))
    }

    fn colorfilter(&self, objects: &[&Value], colors: &[i64]) -> Vec<LaneResult> {
        let id = PrimId::of("colorfilter");
        par_map(objects.len(), GRID_CHUNK, |k| match id {
            Some(id) => (id.spec().imp)(&[objects[k].clone(), Value::Int(colors[k])]),
            None => Err(missing("colorfilter")),
        })
    }

    fn fill(&self, grids: &GridBatch, colors: &[Color], patches: &PatchBatch<Loc>) -> Vec<LaneResult> {
        on_views(grids, |g, k| prims::fill_of(g, colors[k].into(), patches.patch(k)))
    }

    fn paint(&self, grids: &GridBatch, objects: &PatchBatch<Cell>) -> Vec<LaneResult> {
        on_views(grids, |g, k| prims::paint_of(g, objects.patch(k)))
    }

    fn transform(&self, grids: &GridBatch, t: Transform) -> Vec<LaneResult> {
        let f = match t {
            Transform::Rot90 => prims::rot90_of,
            Transform::Rot180 => prims::rot180_of,
            Transform::Rot270 => prims::rot270_of,
            Transform::Hmirror => prims::hmirror_of,
            Transform::Vmirror => prims::vmirror_of,
            Transform::Dmirror => prims::dmirror_of,
            Transform::Cmirror => prims::cmirror_of,
        };
        on_views(grids, |g, _| Ok(f(g)))
    }
}

/// `f(grid k, k)` on each grid of a batch, in parallel.
fn on_views(grids: &GridBatch, f: impl Fn(GridView<'_>, usize) -> LaneResult + Sync + Send) -> Vec<LaneResult> {
    par_map(grids.len(), GRID_CHUNK, |k| f(grids.view(k), k))
}

fn missing(name: &str) -> DslError {
    DslError::Value(format!("internal error: primitive {name} is not registered"))
}

/// The scalar primitive `name` on a grid and further arguments.
fn scalar(name: &str, g: GridView<'_>, rest: &[Value]) -> LaneResult {
    let id = PrimId::of(name).ok_or_else(|| missing(name))?;
    let mut args = vec![Value::grid(g.to_grid())];
    args.extend_from_slice(rest);
    (id.spec().imp)(&args)
}
