//! The one interface every batched-operation backend implements: the CPU backend here
//! ([`super::cpu::CpuBackend`]), and the device backend over GPUs or their emulation on the
//! CPU ([`crate::device::DeviceBackend`]).
//!
//! One method per batched op family. Grids arrive in one flat [`GridBatch`] (the layout a
//! kernel takes as is), patches in one [`PatchBatch`], per-lane scalars as slices; each method
//! returns one result per lane, in lane order, and must give exactly what the scalar primitive
//! gives on that lane. The dispatcher ([`super::ops`]) picks the lanes a method sees: only those
//! whose arguments have the compact shape the method is written for; the others go through
//! [`Backend::map_scalar`]. A device backend that cannot run a call (no device, a launch
//! failure) answers it with the CPU backend it holds, so callers never see device errors.

use super::grids::{GridBatch, PatchBatch};
use super::{Arg, LaneResult};
use crate::dsl::{Cell, Color, Loc, PrimId, Value};

/// The grid transformations `transform` batches: `rot90`, `rot180`, `rot270`, `hmirror`,
/// `vmirror`, `dmirror`, `cmirror`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    Rot90,
    Rot180,
    Rot270,
    Hmirror,
    Vmirror,
    Dmirror,
    Cmirror,
}

impl Transform {
    pub const ALL: [Transform; 7] = [
        Transform::Rot90,
        Transform::Rot180,
        Transform::Rot270,
        Transform::Hmirror,
        Transform::Vmirror,
        Transform::Dmirror,
        Transform::Cmirror,
    ];

    /// The primitive's name.
    pub fn name(self) -> &'static str {
        match self {
            Transform::Rot90 => "rot90",
            Transform::Rot180 => "rot180",
            Transform::Rot270 => "rot270",
            Transform::Hmirror => "hmirror",
            Transform::Vmirror => "vmirror",
            Transform::Dmirror => "dmirror",
            Transform::Cmirror => "cmirror",
        }
    }
}

/// Batched operations over lanes.
pub trait Backend: Sync {
    /// A short name for reports (`cpu`, `gpu`, `emu`).
    fn name(&self) -> &'static str;

    /// Into how many independent shards to cut `lanes` lanes, each evaluated on its own: the
    /// CPU backend shards of a few lanes (parallel over shards, as the interpreter is over
    /// lanes, and few values alive at once); a GPU backend one per device, so that each launch
    /// is as large as it can be.
    fn shards(&self, lanes: usize) -> usize;

    /// Any primitive, lane by lane (the scalar version on each lane): the fallback.
    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult>;

    /// A function value called on each lane's arguments (`x5 = x3(x4)`), lane by lane.
    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult>;

    /// `objects(grid, univalued, diagonal, without_bg)`; `mode` is the search dialect's
    /// `R = 4 * univalued + 2 * diagonal + without_bg`.
    fn objects(&self, grids: &GridBatch, mode: u8) -> Vec<LaneResult>;

    /// `ofcolor(grid, colour)`.
    fn ofcolor(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult>;

    /// `colorcount(grid, colour)`.
    fn colorcount(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult>;

    /// `palette(grid)`, or the search dialect's `p_g(grid)` (the palette as a tuple) when
    /// `as_tuple`.
    fn palette(&self, grids: &GridBatch, as_tuple: bool) -> Vec<LaneResult>;

    /// `colorfilter(objects, colour)`.
    fn colorfilter(&self, objects: &[&Value], colors: &[i64]) -> Vec<LaneResult>;

    /// `fill(grid, colour, patch)`.
    fn fill(&self, grids: &GridBatch, colors: &[Color], patches: &PatchBatch<Loc>) -> Vec<LaneResult>;

    /// `paint(grid, object)`.
    fn paint(&self, grids: &GridBatch, objects: &PatchBatch<Cell>) -> Vec<LaneResult>;

    /// One of the rotations and mirrors, on grids.
    fn transform(&self, grids: &GridBatch, t: Transform) -> Vec<LaneResult>;

    /// `objects` of every grid for each of several modes (as [`objects`](Self::objects)):
    /// one result column per mode. The provided version packs the grids once and runs
    /// `objects` per mode; a backend may share the work between the modes.
    fn objects_modes(&self, grids: &GridBatch, modes: &[u8]) -> Vec<Vec<LaneResult>> {
        modes.iter().map(|&m| self.objects(grids, m)).collect()
    }

    /// `apply(f, container)` for a primitive `f` of one argument: one batched call of `f` over
    /// the members of every lane's container, regrouped per lane. The provided version
    /// flattens and dispatches `f` like any step (so `apply(rot90, grids)` is one
    /// `transform`); a device backend overrides it to keep the members on the device.
    fn apply(&self, f: PrimId, containers: &[&Value]) -> Vec<LaneResult> {
        super::ops::apply_flat(self, f, containers)
    }
}
