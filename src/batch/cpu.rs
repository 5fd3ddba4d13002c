//! The CPU backend: each batched op is a rayon loop over contiguous chunks of lanes (never one
//! task per cell), calling on each lane the very function the scalar primitive is built on,
//! over that lane's slice of the flat buffer. So a batched op cannot drift from its primitive.
//!
//! Every lane runs isolated as the interpreter runs a program: under a time limit (the
//! thread's [`Deadline`]) and with a panic turned into that lane's error.

use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use smallvec::SmallVec;

use super::backend::{Backend, Transform};
use super::grids::{GridBatch, PatchBatch};
use super::{par_map, Arg, LaneResult};
use crate::dsl::func::{call, panic_message, Deadline};
use crate::dsl::prims;
use crate::dsl::prims::common::MemberLimit;
use crate::dsl::{Cell, Color, DslError, GridView, Loc, PrimId, Value};

/// Lanes per parallel chunk for scalar primitives and function values: one, leaving the split
/// to rayon's adaptive splitter. Most lanes are cheap, but a lane that calls function values
/// can run for seconds, and longer chunks would pile such lanes onto one thread.
const SCALAR_CHUNK: usize = 1;
/// Most lanes in a shard. A shard holds its nodes' columns, one value per lane, while it runs,
/// and a value can be tens of MB (a canvas sized by a count, a product of large sets, on a task
/// the solver was not written for): small shards keep what is alive at once small. Measured on
/// `batt --cross` of the published solvers over the evaluation tasks, shards of 16 lanes
/// instead of 4 per thread (~220 lanes) cut the peak from 3.4 GB to 1.2 GB, at the same CPU
/// time; search's peak halved, at the same rate.
const SHARD_LANES: usize = 16;
/// Lanes per parallel chunk for the grid ops (each lane does real work).
const GRID_CHUNK: usize = 8;

/// The CPU backend.
#[derive(Clone, Debug, Default)]
pub struct CpuBackend {
    /// Time limit per lane of a call that may run function values.
    limit: Option<Duration>,
    /// Cap on the members of a container built by a lane-by-lane call ([`MemberLimit`]).
    max_members: Option<usize>,
}

impl CpuBackend {
    /// A backend whose lane-by-lane calls stop with [`DslError::Timeout`] after `limit`.
    pub fn new(limit: Option<Duration>) -> CpuBackend {
        CpuBackend {
            limit,
            max_members: None,
        }
    }

    /// The same backend, its lane-by-lane calls failing with [`DslError::TooLarge`] before
    /// building a container of more than `max` members (a search's size budget).
    pub fn with_max_members(self, max: Option<usize>) -> CpuBackend {
        CpuBackend {
            max_members: max,
            ..self
        }
    }

    /// Runs one lane [`isolated`], under the time limit when `timed`, and the member cap.
    fn guarded(&self, timed: bool, what: &dyn Fn() -> String, f: impl FnOnce() -> LaneResult) -> LaneResult {
        let _deadline = timed.then(|| Deadline::set(self.limit.map(|l| Instant::now() + l)));
        let _members = self.max_members.map(MemberLimit::set);
        isolated(what, f)
    }
}

/// Runs one lane, a panic (a bug in the port) becoming the lane's error, so it cannot take the
/// other lanes down. `what` names the operation in the message.
fn isolated(what: &dyn Fn() -> String, f: impl FnOnce() -> LaneResult) -> LaneResult {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let message = panic_message(&panic);
        Err(DslError::Internal(format!("{} panicked: {message}", what())))
    })
}

/// Whether a call may run function values, and so needs the time limit: only a function, or
/// a tuple or set (which may hold functions, as `rapply`'s does), can lead to one. Grids,
/// patches and numbers cannot, and reading the clock for them would cost more than most
/// primitives.
fn may_call(args: &[Value]) -> bool {
    args.iter()
        .any(|a| matches!(a, Value::Func(_) | Value::Tuple(_) | Value::Set(_)))
}

/// Calls `f` with the arguments of lane `k` as one slice, without touching reference counts.
fn with_lane_args<R>(args: &[Arg<'_>], k: usize, f: impl FnOnce(&[Value]) -> R) -> R {
    let copies: SmallVec<[ManuallyDrop<Value>; 4]> = args
        .iter()
        // SAFETY: a bitwise copy of a value that `args` keeps borrowed, and so alive, for
        // the whole call; wrapped in `ManuallyDrop`, it is never dropped, so it releases no
        // reference it did not take. `f` sees it only through a shared borrow: clones made
        // from it take their own references, as clones of the original would.
        .map(|a| ManuallyDrop::new(unsafe { std::ptr::read(a.get(k)) }))
        .collect();
    // SAFETY: `ManuallyDrop<Value>` is `repr(transparent)` over `Value`, so the copies form a
    // valid `[Value]` for as long as `copies` lives, which outlasts the borrow given to `f`.
    let slice = unsafe { std::slice::from_raw_parts(copies.as_ptr().cast::<Value>(), copies.len()) };
    f(slice)
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn shards(&self, lanes: usize) -> usize {
        lanes.div_ceil(SHARD_LANES).max(1)
    }

    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        let spec = prim.spec();
        par_map(lanes, SCALAR_CHUNK, |k| {
            with_lane_args(args, k, |a| {
                self.guarded(may_call(a), &|| spec.name.to_string(), || (spec.imp)(a))
            })
        })
    }

    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        par_map(lanes, SCALAR_CHUNK, |k| {
            let f = function.get(k);
            with_lane_args(args, k, |a| self.guarded(true, &|| f.to_string(), || call(f, a)))
        })
    }

    fn objects(&self, grids: &GridBatch, mode: u8) -> Vec<LaneResult> {
        let (univalued, diagonal, without_bg) = (mode & 4 != 0, mode & 2 != 0, mode & 1 != 0);
        on_views("objects", grids, |g, _| {
            prims::objects_of(g, univalued, diagonal, without_bg)
        })
    }

    fn ofcolor(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        on_views("ofcolor", grids, |g, k| Ok(prims::ofcolor_of(g, colors[k])))
    }

    fn colorcount(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        on_views("colorcount", grids, |g, k| Ok(prims::colorcount_of(g.cells, colors[k])))
    }

    fn palette(&self, grids: &GridBatch, as_tuple: bool) -> Vec<LaneResult> {
        let f = if as_tuple { prims::p_g_of } else { prims::palette_of };
        on_views("palette", grids, |g, _| Ok(f(g.cells)))
    }

    fn colorfilter(&self, objects: &[&Value], colors: &[i64]) -> Vec<LaneResult> {
        par_map(objects.len(), GRID_CHUNK, |k| {
            isolated(&|| "colorfilter".into(), || {
                prims::colorfilter_of(objects[k], &Value::Int(colors[k]))
            })
        })
    }

    fn fill(&self, grids: &GridBatch, colors: &[Color], patches: &PatchBatch<Loc>) -> Vec<LaneResult> {
        on_views("fill", grids, |g, k| {
            prims::fill_of(g, colors[k].into(), patches.patch(k))
        })
    }

    fn paint(&self, grids: &GridBatch, objects: &PatchBatch<Cell>) -> Vec<LaneResult> {
        on_views("paint", grids, |g, k| prims::paint_of(g, objects.patch(k)))
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
        on_views(t.name(), grids, |g, _| Ok(f(g)))
    }
}

/// `f(grid k, k)` on each grid of a batch, in parallel, each lane [`isolated`]; `op` names the
/// batched op in messages.
fn on_views(
    op: &str,
    grids: &GridBatch,
    f: impl Fn(GridView<'_>, usize) -> LaneResult + Sync + Send,
) -> Vec<LaneResult> {
    par_map(grids.len(), GRID_CHUNK, |k| {
        isolated(&|| op.to_string(), || f(grids.view(k), k))
    })
}
