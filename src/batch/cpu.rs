//! The CPU backend: each batched op is a rayon loop over contiguous chunks of lanes (never one
//! task per cell), calling on each lane the op's CPU body ([`Op::cpu`]), the very function the
//! scalar primitive is built on, over that lane's slice of the flat buffers. So a batched op
//! cannot drift from its primitive.
//!
//! Every lane runs isolated as the interpreter runs a program: under a time limit (the
//! thread's [`Deadline`]) and with a panic turned into that lane's error.

use std::mem::ManuallyDrop;
use std::time::Duration;

use smallvec::SmallVec;

use super::backend::Backend;
use super::op::{Lanes, Op};
use super::{par_map, Arg, LaneResult};
use crate::dsl::func::{call, caught, Deadline, Panicked};
use crate::dsl::memory;
use crate::dsl::prims::common::MemberLimit;
use crate::dsl::value::{as_values, borrowed};
use crate::dsl::{DslError, PrimId, Value};

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
/// Lanes per parallel chunk for the batched ops (each lane does real work).
const GRID_CHUNK: usize = 8;

/// The CPU backend.
#[derive(Clone, Debug, Default)]
pub struct CpuBackend {
    /// Time limit per lane of a call that may run function values.
    limit: Option<Duration>,
    /// Cap on the members of a container built by a lane-by-lane call ([`MemberLimit`]).
    max_members: Option<usize>,
    /// Bytes one lane of a call may allocate ([`memory::Budget`]).
    lane_memory: Option<u64>,
}

impl CpuBackend {
    /// A backend whose lane-by-lane calls stop with [`DslError::Timeout`] after `limit`.
    pub fn new(limit: Option<Duration>) -> CpuBackend {
        CpuBackend {
            limit,
            max_members: None,
            lane_memory: None,
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

    /// The same backend, each lane of a call failing with [`DslError::TooLarge`] once it has
    /// allocated `bytes` (`None`: no bound), so that one program's giant value fails that
    /// program, not the run.
    pub fn with_lane_memory(self, bytes: Option<u64>) -> CpuBackend {
        CpuBackend {
            lane_memory: bytes,
            ..self
        }
    }

    /// Runs one lane [`isolated`], under the time limit when `timed`, the member cap and the
    /// memory budget.
    fn guarded(&self, timed: bool, what: &dyn Fn() -> String, f: impl FnOnce() -> LaneResult) -> LaneResult {
        let _deadline = timed.then(|| Deadline::set(self.limit));
        let _members = self.max_members.map(MemberLimit::set);
        let _memory = memory::Budget::set(self.lane_memory);
        isolated(what, f)
    }
}

/// Runs one lane, a panic (a bug in the port) becoming the lane's error, so it cannot take the
/// other lanes down. `what` names the operation in the message.
fn isolated(what: &dyn Fn() -> String, f: impl FnOnce() -> LaneResult) -> LaneResult {
    caught(f)
        .unwrap_or_else(|Panicked(message)| Err(DslError::Internal(format!("{} panicked: {message}", what()).into())))
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
        // SAFETY: `args` keeps every value borrowed, and so alive, for the whole call.
        .map(|a| unsafe { borrowed(a.get(k)) })
        .collect();
    f(as_values(&copies))
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

    fn run_op(&self, op: &'static Op, param: u32, lanes: &Lanes) -> Vec<LaneResult> {
        par_map(lanes.len(), GRID_CHUNK, |k| {
            let _memory = memory::Budget::set(self.lane_memory);
            isolated(&|| op.name.to_string(), || (op.cpu)(lanes, k, param))
        })
    }
}
