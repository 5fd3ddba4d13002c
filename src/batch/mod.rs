//! Lanes and batched operations: the engine room of batt, knowing only the DSL and the kernels'
//! data layout (running a kernel is [`crate::device`]'s).
//!
//! A *lane* is one independent evaluation (in batt, one sample of one task). A batched call
//! runs one primitive over many lanes at once: its arguments are [`Arg`]s (one value shared by
//! every lane, or one per lane), its result one [`LaneResult`] per lane, so an error stays in
//! its lane. [`ops::call_prim`] is the single entry point: it sends the lanes a batched op is
//! written for to the [`Backend`] (packed into one [`Lanes`]: grids in one flat [`GridBatch`])
//! and the rest to the backend's lane-by-lane fallback, and stitches the results back in lane
//! order.
//!
//! Files: `op.rs` (the op table: one entry per batched op), `ops.rs` (dispatch), `chain.rs`
//! (grid steps run one after another, on a device as one job), `backend.rs` (the trait), `cpu.rs` (the rayon backend), `grids.rs` (flat buffers), `kernel.rs` (the
//! kernel table generated from `kernels/`, and what packing for a kernel shares),
//! `staging.rs` (a launch's bytes), `group.rs` (several calls as one step), `selection.rs`
//! ([`Selection`]: some lanes taken out and their results put back in lane order, the one way
//! every layer splits a batch).
//!
//! # Adding a batched op
//!
//! It touches at most three files besides its tests, and nothing else needs to learn of it
//! (the dispatcher, both backends, the emulator, `auto`'s thresholds, `bench-gpu` and the
//! workloads read the tables):
//!
//! 1. `src/batch/op.rs`: its entry, a `static` [`Op`] listed in [`OPS`]: the primitives it
//!    batches (registry names), its constant, the lanes it accepts, its CPU body, and its
//!    [`Kernel`] (the entry point, the lanes the kernel takes, pack, unpack). An argument of a
//!    kind no op took before is a new part of [`Lane`], [`Lanes`] and [`op::Sample`], in the
//!    same file.
//! 2. `kernels/<family>.cu`: its kernel, declared `KERNEL(arcb_<name>, params...)`. `build.rs`
//!    derives from that declaration the [`kernel::Entry`] variant, its symbol, parameter
//!    kinds and family, and the emulated device's binding; a new `.cu` file is a new family.
//! 3. `src/dsl/prims/<family>.rs`, only where the primitive has no public `<name>_of`
//!    function over compact arguments (a `GridView`, a colour) yet for the CPU body to call.
//!
//! Its tests: `tests/device.rs` runs every op of [`OPS`] with every constant of its primitives
//! on the emulated device against the CPU backend (add lanes there for a new kind of
//! argument); the unit tests check the table against the registry and the kernels.

pub mod backend;
pub mod chain;
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
pub use chain::{ChainStep, GridChain};
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
