//! Inputs for every kernel's batched op, built from real grids, and one call of that op on a
//! backend: what the `auto` backend's start-up probe times and what `bench-gpu` measures.
//!
//! A workload is `n` lanes cycling through the given grids (ARC tasks' inputs and outputs),
//! each with the arguments of every op drawn from the grid itself ([`Sample`]: its most common
//! colour, its objects, the cells of that colour as a patch, its largest object); each op runs
//! with its entry's probe constant ([`Op::probe`]), and the chain of grid steps `bench-gpu`
//! times is [`bench_chain`].

use super::Entry;
use crate::batch::op::{Sample, FILL, PAINT, TRANSFORM};
use crate::batch::{Backend, ChainStep, GridBatch, GridChain, LaneResult, Lanes, Op};
use crate::dsl::Grid;

/// The inputs of every batched op over the same lanes, each lane with every part drawn from its
/// grid ([`Sample`]); an op reads the parts it takes.
pub struct Workload {
    lanes: Lanes,
}

impl Workload {
    /// `n` lanes cycling through `grids` (those that fit a batch), or `None` when none does.
    pub fn new(grids: &[Grid], n: usize) -> Option<Workload> {
        let sources: Vec<(&Grid, Sample)> = grids
            .iter()
            .filter(|g| GridBatch::fits(g) && !g.cells.is_empty())
            .map(|g| (g, Sample::of(g)))
            .collect();
        if sources.is_empty() {
            return None;
        }
        let mut lanes = Lanes::default();
        for (g, sample) in sources.iter().cycle().take(n) {
            if !lanes.push(sample.lane(g)) {
                break;
            }
        }
        Some(Workload { lanes })
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.lanes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lanes.is_empty()
    }

    /// The op of the entry point over every lane, on `backend`, with the op's probe constant.
    pub fn run(&self, backend: &dyn Backend, entry: Entry) -> Vec<LaneResult> {
        let op = Op::of_kernel(entry);
        backend.run_op(op, op.probe, &self.lanes)
    }
}

impl Workload {
    /// The chain `bench-gpu` times ([`bench_chain`]) over every lane, on `backend`.
    pub fn run_chain(&self, backend: &dyn Backend, chain: &GridChain) -> Vec<LaneResult> {
        backend.run_chain(chain, &self.lanes)
    }
}

/// The chain of grid steps `bench-gpu` times: five in a row, each lane's grid rotated, filled
/// with its most common colour at that colour's original cells (some of them off a rotated
/// grid), mirrored, painted with its largest object, and mirrored on the diagonal.
pub fn bench_chain() -> GridChain {
    let step = |op, param| ChainStep { op, param };
    GridChain::new(vec![
        step(&TRANSFORM, 0),
        step(&FILL, 0),
        step(&TRANSFORM, 3),
        step(&PAINT, 0),
        step(&TRANSFORM, 5),
    ])
    .expect("grid steps")
}

/// Every input and output grid of the tasks.
pub fn task_grids(tasks: &[crate::tasks::Task]) -> Vec<Grid> {
    tasks
        .iter()
        .flat_map(|t| t.examples())
        .flat_map(|ex| std::iter::once(&ex.input).chain(&ex.output))
        .map(|g| (**g).clone())
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
