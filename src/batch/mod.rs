//! Lanes and batched operations: the engine room of batt, knowing only the DSL.
//!
//! A *lane* is one independent evaluation (in batt, one sample of one task). A batched call
//! runs one primitive over many lanes at once: its arguments are [`Arg`]s (one value shared by
//! every lane, or one per lane), its result one [`LaneResult`] per lane, so an error stays in
//! its lane. [`ops::call_prim`] is the single entry point: it sends the lanes a batched op is
//! written for to the [`Backend`] (grids packed into one flat [`GridBatch`]) and the rest to the
//! backend's lane-by-lane fallback, and stitches the results back in lane order.
//!
//! Files: `grids.rs` (flat buffers), `backend.rs` (the trait), `ops.rs` (dispatch),
//! `group.rs` (several calls as one step), `cpu.rs` (the rayon backend), `selection.rs`
//! ([`Selection`]: some lanes taken out and their results put back in lane order, the one way
//! every layer splits a batch).

pub mod backend;
pub mod cpu;
pub mod grids;
pub mod group;
pub mod kernel;
pub mod op;
pub mod ops;
pub mod selection;
pub mod staging;

use rayon::prelude::*;

pub use backend::Backend;
pub use cpu::CpuBackend;
pub use grids::{GridBatch, GridMeta, PatchBatch};
pub use group::{call_group, Group};
pub use op::{Kernel, Lane, Lanes, Op, OPS};
pub use ops::{call_prim, call_value};
pub use selection::Selection;

use crate::dsl::{DslResult, Value};

/// What one lane of a batched call gives: a value, or the error the primitive raised there.
pub type LaneResult = DslResult<Value>;

/// One argument of a batched call.
#[derive(Clone, Debug)]
pub enum Arg<'a> {
    /// The same value on every lane (a constant, or a value computed once).
    Same(&'a Value),
    /// One value per lane.
    Each(Vec<&'a Value>),
}

impl<'a> Arg<'a> {
    /// The argument on lane `k`.
    #[inline]
    pub fn get(&self, k: usize) -> &'a Value {
        match self {
            Arg::Same(v) => v,
            Arg::Each(vs) => vs[k],
        }
    }

    /// The argument on the given lanes only.
    pub fn select(&self, lanes: &[usize]) -> Arg<'a> {
        match self {
            Arg::Same(v) => Arg::Same(v),
            Arg::Each(vs) => Arg::Each(lanes.iter().map(|&k| vs[k]).collect()),
        }
    }
}

/// `f(k)` for `k` in `0..n`, in parallel over contiguous chunks of at least `min_chunk` lanes
/// (sequentially when there is only one chunk's worth or one thread).
pub fn par_map<T: Send>(n: usize, min_chunk: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if n <= min_chunk || rayon::current_num_threads() == 1 {
        (0..n).map(f).collect()
    } else {
        (0..n).into_par_iter().with_min_len(min_chunk.max(1)).map(f).collect()
    }
}
