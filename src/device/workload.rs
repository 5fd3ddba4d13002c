//! Inputs for every kernel's batched op, built from real grids, and one call of that op on a
//! backend: what the `auto` backend's start-up probe times and what `bench-gpu` measures.
//!
//! A workload is `n` lanes cycling through the given grids (ARC tasks' inputs and outputs),
//! each with the arguments its op needs taken from the grid itself: its most common colour
//! for `ofcolor`/`colorcount`/`colorfilter`/`fill`, its objects (univalued, diagonal, without
//! background) for `colorfilter`, the cells of that colour as the patch of `fill`, and its
//! largest object as the object of `paint`.

use super::Entry;
use crate::batch::{Backend, GridBatch, LaneResult, PatchBatch, Transform};
use crate::dsl::prims::{objects_of, ofcolor_of};
use crate::dsl::{Cell, Color, Grid, Loc, Value};

/// The inputs of every batched op over the same lanes.
pub struct Workload {
    pub grids: GridBatch,
    /// The colour argument of each lane.
    pub colors: Vec<i64>,
    pub fill_colors: Vec<Color>,
    /// Each lane's objects (a set of objects), for `colorfilter`.
    pub object_sets: Vec<Value>,
    /// The cells of the lane's colour, for `fill`.
    pub patches: PatchBatch<Loc>,
    /// The lane's largest object, for `paint`.
    pub objects: PatchBatch<Cell>,
}

/// The arguments of one source grid.
struct Lane {
    color: Color,
    objects: Value,
    patch: Vec<Loc>,
    largest: Vec<Cell>,
}

impl Lane {
    fn of(g: &Grid) -> Lane {
        let view = g.view();
        let color = crate::dsl::prims::common::background(&g.cells).unwrap_or(0);
        let objects = objects_of(view, true, true, true).unwrap_or_else(|_| Value::set(Vec::new()));
        let largest = objects
            .members()
            .into_iter()
            .flatten()
            .filter_map(|o| match o {
                Value::Object(cells) => Some(cells.as_slice().to_vec()),
                _ => None,
            })
            .max_by_key(Vec::len)
            .unwrap_or_default();
        let patch = match ofcolor_of(view, color.into()) {
            Value::Indices(locs) => locs.as_slice().to_vec(),
            _ => Vec::new(),
        };
        Lane {
            color,
            objects,
            patch,
            largest,
        }
    }
}

impl Workload {
    /// `n` lanes cycling through `grids` (those that fit a batch), or `None` when none does.
    pub fn new(grids: &[Grid], n: usize) -> Option<Workload> {
        let sources: Vec<(&Grid, Lane)> = grids
            .iter()
            .filter(|g| GridBatch::fits(g) && !g.cells.is_empty())
            .map(|g| (g, Lane::of(g)))
            .collect();
        if sources.is_empty() {
            return None;
        }
        let mut w = Workload {
            grids: GridBatch::default(),
            colors: Vec::with_capacity(n),
            fill_colors: Vec::with_capacity(n),
            object_sets: Vec::with_capacity(n),
            patches: PatchBatch::default(),
            objects: PatchBatch::default(),
        };
        for (g, lane) in sources.iter().cycle().take(n) {
            if !w.grids.push(g)
                || !w.patches.push(lane.patch.iter().copied())
                || !w.objects.push(lane.largest.iter().copied())
            {
                break;
            }
            w.colors.push(lane.color.into());
            w.fill_colors.push(lane.color);
            w.object_sets.push(lane.objects.clone());
        }
        Some(w)
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.grids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.grids.is_empty()
    }

    /// The entry point's op over every lane, on `backend`.
    pub fn run(&self, backend: &dyn Backend, entry: Entry) -> Vec<LaneResult> {
        match entry {
            Entry::Objects => backend.objects(&self.grids, 7),
            Entry::Ofcolor => backend.ofcolor(&self.grids, &self.colors),
            Entry::Colorcount => backend.colorcount(&self.grids, &self.colors),
            Entry::Palette => backend.palette(&self.grids, false),
            Entry::Colorfilter => {
                let sets: Vec<&Value> = self.object_sets.iter().collect();
                backend.colorfilter(&sets, &self.colors)
            }
            Entry::Fill => backend.fill(&self.grids, &self.fill_colors, &self.patches),
            Entry::Paint => backend.paint(&self.grids, &self.objects),
            Entry::Transform => backend.transform(&self.grids, Transform::Rot90),
        }
    }
}

/// Every input and output grid of the tasks.
pub fn task_grids(tasks: &[crate::tasks::Task]) -> Vec<Grid> {
    tasks
        .iter()
        .flat_map(|t| t.examples())
        .flat_map(|ex| std::iter::once(ex.input.clone()).chain(ex.output.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::CpuBackend;
    use crate::device::DeviceBackend;

    #[test]
    fn every_op_of_a_workload_runs_and_agrees_between_cpu_and_emu() {
        let grids = task_grids(&crate::embedded::demo_tasks().tasks);
        let w = Workload::new(&grids, 50).expect("the demo grids fit");
        assert_eq!(w.len(), 50);
        let cpu = CpuBackend::new(None);
        let emu = DeviceBackend::emu(2, CpuBackend::new(None))
            .expect("emu")
            .with_shard_threshold(10);
        for entry in Entry::ALL {
            let (a, b) = (w.run(&cpu, entry), w.run(&emu, entry));
            assert_eq!(a.len(), 50, "{entry:?}");
            assert!(
                a.iter().all(Result::is_ok),
                "{entry:?}: the workload's arguments are valid"
            );
            assert_eq!(a, b, "{entry:?}");
        }
        assert_eq!(emu.fallbacks(), 0);
    }
}
