//! The one interface every batched-operation backend implements: the CPU backend here
//! ([`super::cpu::CpuBackend`]), and the device backend over GPUs or their emulation on the
//! CPU ([`crate::device::DeviceBackend`]).
//!
//! One method runs every batched op ([`Backend::run_op`]), described by its entry in the op
//! table ([`super::op`]): its lanes arrive packed in one [`Lanes`] (grids and patches in flat
//! buffers, the layout a kernel takes as is); it returns one result per lane, in lane order,
//! and must give exactly what the scalar primitive gives on that lane. The dispatcher
//! ([`super::ops`]) picks the lanes an op sees: only those whose arguments have the compact
//! shape the op is written for; the others go through [`Backend::map_scalar`]. A device backend that cannot run a call (no device, a launch
//! failure) answers it with the CPU backend it holds, so callers never see device errors.

use super::chain::GridChain;
use super::op::{Lanes, Op, OBJECTS};
use super::{Arg, LaneResult};
use crate::dsl::{PrimId, Value};

/// Batched operations over lanes.
pub trait Backend: Sync {
    /// A short name for reports (`cpu`, `gpu`, `emu`).
    fn name(&self) -> &'static str;

    /// Into how many independent shards to cut `lanes` lanes, each evaluated on its own: the
    /// CPU backend shards of a few lanes (parallel over shards, as the interpreter is over
    /// lanes, and few values alive at once); the `gpu` backend one, so that each launch is as
    /// large as it can be (`auto` shards as the CPU: see `DeviceBackend::with_cpu_shards`).
    fn shards(&self, lanes: usize) -> usize;

    /// Any primitive, lane by lane (the scalar version on each lane): the fallback.
    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult>;

    /// A function value called on each lane's arguments (`x5 = x3(x4)`), lane by lane.
    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult>;

    /// A batched op ([`Op`]) with its constant on packed lanes: one result per lane, in
    /// lane order, exactly the op's CPU body's (the scalar primitive's) on that lane.
    fn run_op(&self, op: &'static Op, param: u32, lanes: &Lanes) -> Vec<LaneResult>;

    /// A chain of grid steps over every lane ([`GridChain`]): the last step's result per lane,
    /// exactly what running the steps one at a time gives. The provided version does that; a
    /// device backend runs the whole chain as one job, the grids staying on the device.
    fn run_chain(&self, chain: &GridChain, lanes: &Lanes) -> Vec<LaneResult> {
        chain.run_stepwise(self, lanes)
    }

    /// `objects` of every lane's grid for each of several modes ([`OBJECTS`]'s constant):
    /// one result column per mode. The provided version runs `objects` per mode on the grids
    /// packed once; a backend may share the work between the modes.
    fn objects_modes(&self, grids: &Lanes, modes: &[u8]) -> Vec<Vec<LaneResult>> {
        modes.iter().map(|&m| self.run_op(&OBJECTS, m.into(), grids)).collect()
    }

    /// `apply(f, container)` for a primitive `f` of one argument: one batched call of `f` over
    /// the members of every lane's container, regrouped per lane. The provided version
    /// flattens and dispatches `f` like any step (so `apply(rot90, grids)` is one
    /// `transform`); a device backend overrides it to keep the members on the device.
    fn apply(&self, f: PrimId, containers: &[&Value]) -> Vec<LaneResult> {
        super::ops::apply_flat(self, f, containers)
    }
}
