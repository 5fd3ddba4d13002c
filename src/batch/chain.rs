//! Chains of grid steps: batched ops whose kernels write grids cell for cell at their input
//! grids' offsets (the rotations and mirrors, `fill`, `paint`: a [`GridStep`]), run one after
//! another on every lane, each step's grid the next one's input and its other arguments the
//! lane's own ([`Lanes`]' colours, patches and objects).
//!
//! On a device a chain is ONE job: the grids and every step's other inputs go up in one
//! upload, the steps run as launches in order on the device (their grids alternating between
//! two buffers there, the shapes of transposed grids staged beside the originals), and only
//! the last step's grids come back, in one download ([`GridChain::pack`], [`unpack_grids`]).
//! A single grid step is packed as a chain of one, so a step cannot pack differently alone.
//! [`GridChain::run_stepwise`] runs the same chain one batched op at a time, each step's grids
//! repacked for the next: what the CPU backend does, and the reference every device's chain
//! is checked against.

use super::kernel::{grid_out, par_unpack, stage_grids, Entry, KernelArg, Packed, Plan};
use super::op::{Lanes, Layout, Op, Unpacked};
use super::staging::Staging;
use super::{Backend, GridBatch, GridMeta, LaneResult, Selection};
use crate::dsl::{call, PrimId, Value};

/// How a grid step's kernel takes its arguments. Its lanes' grids are staged by the chain (the
/// kernel's first two arguments are always `metas, cells`); the step stages its own inputs
/// and names its launch's arguments. The kernel writes output cell `c` of grid `k` at the
/// offset of input cell `c`, so that the grids' offsets hold from step to step, and takes lane
/// `k` ([`super::Kernel::takes`]) on its grid's cells being non-empty and fitting `i8`s, which
/// every grid step keeps true (its colours are `i8`s too): a lane every step takes at the
/// start of a chain is a lane each takes when its turn comes.
pub struct GridStep {
    /// Whether the output is the input transposed (its height the input's width) under the
    /// op's constant.
    pub transposes: fn(param: u32) -> bool,
    /// Scratch bytes per cell the kernel needs (`paint`'s winners), uninitialised.
    pub scratch_per_cell: usize,
    /// Stages the step's own inputs for the given lanes; returns their sections' offsets.
    pub stage: fn(lanes: &Lanes, taken: &[usize], staging: &mut Staging) -> Vec<usize>,
    /// The launch's arguments: where the grids lie ([`StepAt`]), the sections `stage` staged,
    /// and the op's constant.
    pub args: fn(at: StepAt, inputs: &[usize], param: u32) -> Vec<KernelArg>,
    /// Lane `k`'s arguments after the grid, as the primitive takes them: for a lane whose
    /// value is no longer a grid a batch holds (an empty grid's rotation is `()`), which goes
    /// on through the scalar primitives.
    pub scalar_args: fn(lanes: &Lanes, k: usize) -> Vec<Value>,
}

/// Where a step's launch finds its grids and writes its own: offsets into the job's buffer.
#[derive(Clone, Copy, Debug)]
pub struct StepAt {
    /// The input grids' metadata (their current shapes).
    pub metas: usize,
    /// The input grids' cells, an `i8` each.
    pub cells: usize,
    /// The output cells, at the input's offsets.
    pub out: usize,
    /// The scratch ([`GridStep::scratch_per_cell`] bytes per cell).
    pub scratch: usize,
}

/// One step of a chain: a grid-step op and its constant (a transform's index).
#[derive(Clone, Copy)]
pub struct ChainStep {
    pub op: &'static Op,
    pub param: u32,
}

impl std::fmt::Debug for ChainStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.op.prims {
            [one] => write!(f, "{one}"),
            many => write!(f, "{}", many.get(self.param as usize).unwrap_or(&self.op.name)),
        }
    }
}

/// A chain's steps, each a grid step, at least one.
#[derive(Clone, Debug)]
pub struct GridChain {
    steps: Vec<ChainStep>,
    /// The steps whose op no step before has: whether a lane is taken depends on the op
    /// alone, so a transform that comes three times is asked once.
    first_of_op: Vec<usize>,
}

/// Why a chain cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("a chain needs at least one step")]
    Empty,
    #[error("{0} is not a grid step (only ops whose kernel writes grids at their input's offsets chain)")]
    NotAGridStep(&'static str),
}

impl GridChain {
    /// The chain of `steps`, in order.
    pub fn new(steps: Vec<ChainStep>) -> Result<GridChain, ChainError> {
        if steps.is_empty() {
            return Err(ChainError::Empty);
        }
        if let Some(bad) = steps.iter().find(|s| grid_step(s.op).is_none()) {
            return Err(ChainError::NotAGridStep(bad.op.name));
        }
        let first_of_op = (0..steps.len())
            .filter(|&i| !steps[..i].iter().any(|s| std::ptr::eq(s.op, steps[i].op)))
            .collect();
        Ok(GridChain { steps, first_of_op })
    }

    pub fn steps(&self) -> &[ChainStep] {
        &self.steps
    }

    /// Each step's kernel entry point and layout (all are grid steps: [`GridChain::new`]).
    fn kernels(&self) -> impl Iterator<Item = (Entry, &'static GridStep, u32)> + '_ {
        self.steps.iter().map(|s| {
            let kernel = s.op.kernel.as_ref().expect("a grid step has a kernel");
            let step = grid_step(s.op).expect("a chain holds grid steps only");
            (kernel.entry, step, s.param)
        })
    }

    /// Whether the last grid is the first transposed (an odd number of steps transpose).
    pub fn transposes(&self) -> bool {
        self.kernels()
            .filter(|(_, step, param)| (step.transposes)(*param))
            .count()
            % 2
            == 1
    }

    /// The entry points of the steps, in order.
    pub fn entries(&self) -> Vec<Entry> {
        self.kernels().map(|(entry, _, _)| entry).collect()
    }

    /// Whether every step's kernel takes lane `k` (see [`GridStep`]).
    pub fn takes(&self, lanes: &Lanes, k: usize) -> bool {
        self.first_of_op.iter().all(|&i| {
            let kernel = self.steps[i].op.kernel.as_ref();
            kernel.is_some_and(|kernel| (kernel.takes)(lanes, k))
        })
    }

    /// Stages the given lanes (all taken) for one job ([`pack_steps`]).
    pub fn pack(&self, lanes: &Lanes, taken: &[usize], staging: &mut Staging) -> Plan {
        let steps: Vec<_> = self.kernels().collect();
        pack_steps(&steps, lanes, taken, staging)
    }

    /// The results of the given lanes from the last step's grids, `out` ([`GridChain::pack`]).
    pub fn unpack(&self, lanes: &Lanes, taken: &[usize], out: &[u8]) -> Unpacked {
        unpack_grids(&lanes.grids, taken, self.transposes(), out)
    }

    /// The chain one batched op at a time on `backend`, each step's grids packed again for
    /// the next: one result per lane, in lane order, each the scalar primitives' one after
    /// another. A lane whose step fails ends there, with that error; a lane whose value is not
    /// a grid with cells (an empty grid, or what a step made of one) goes on through the
    /// scalar primitives.
    pub fn run_stepwise<B: Backend + ?Sized>(&self, backend: &B, lanes: &Lanes) -> Vec<LaneResult> {
        let mut done: Vec<Option<LaneResult>> = (0..lanes.len()).map(|_| None).collect();
        let batched = Selection::new(lanes.len(), |&k| !lanes.grids.metas[k].is_empty());
        for k in batched.rest().taken().iter().copied() {
            done[k] = Some(self.scalar_from(0, Ok(Value::grid(lanes.grids.grid(k))), lanes, k));
        }
        // The lanes still running, by their index in `lanes`, and their current grids.
        let mut alive: Vec<usize> = batched.taken().to_vec();
        let mut current: Option<Lanes> = (!batched.is_all()).then(|| lanes.select(&alive));
        for (s, step) in self.steps.iter().enumerate() {
            let running = current.as_ref().unwrap_or(lanes);
            let results = backend.run_op(step.op, step.param, running);
            if s + 1 == self.steps.len() {
                for (k, result) in alive.iter().zip(results) {
                    done[*k] = Some(result);
                }
                break;
            }
            let mut grids = GridBatch::with_capacity(alive.len(), running.grids.cells.len());
            let mut kept = Vec::with_capacity(alive.len());
            for (i, result) in results.into_iter().enumerate() {
                match result {
                    Ok(Value::Grid(g)) if !g.cells.is_empty() && grids.push(&g) => kept.push(i),
                    other => done[alive[i]] = Some(self.scalar_from(s + 1, other, lanes, alive[i])),
                }
            }
            current = Some(match current.take() {
                Some(mut running) if kept.len() == running.len() => {
                    running.grids = grids;
                    running
                }
                running => {
                    let running = running.as_ref().unwrap_or(lanes);
                    if kept.len() == running.len() {
                        running.with_grids(grids)
                    } else {
                        let mut some = running.select(&kept);
                        some.grids = grids;
                        some
                    }
                }
            });
            alive = kept.iter().map(|&i| alive[i]).collect();
        }
        done.into_iter()
            .map(|r| r.expect("every lane ends at a step"))
            .collect()
    }

    /// Lane `k` (of `lanes`) from step `first` on, through the scalar primitives, its value so
    /// far `value`.
    fn scalar_from(&self, first: usize, value: LaneResult, lanes: &Lanes, k: usize) -> LaneResult {
        self.kernels()
            .zip(&self.steps)
            .skip(first)
            .try_fold(value?, |value, ((_, step, _), s)| {
                let prim = PrimId::of(s.op.prims[s.param as usize]).expect("an op batches registered primitives");
                let args: Vec<Value> = std::iter::once(value).chain((step.scalar_args)(lanes, k)).collect();
                call(&Value::prim(prim), &args)
            })
    }
}

/// Stages the given lanes (all taken) for one job running `steps` (each an entry point, its
/// layout and its constant) in order: one launch per step, and the last step's grids to bring
/// back. Every section is an input staged once or one of the reserved buffers: two for the
/// grids (the steps alternate between them after the first reads the staged cells) and one
/// scratch, shared by the steps, which run one after another.
pub fn pack_steps(steps: &[(Entry, &GridStep, u32)], lanes: &Lanes, taken: &[usize], staging: &mut Staging) -> Plan {
    let grids = stage_grids(&lanes.grids, taken, staging);
    // The metadata of the grids transposed: the same offsets, the shapes swapped.
    let transposed_metas = steps.iter().any(|(_, step, param)| (step.transposes)(*param)).then(|| {
        let mut at = 0u32;
        staging.put(taken.iter().map(|&k| {
            let m = lanes.grids.metas[k];
            let swapped = GridMeta {
                offset: at,
                h: m.w,
                w: m.h,
            };
            at += m.len() as u32;
            swapped
        }))
    });
    let inputs: Vec<Vec<usize>> = steps
        .iter()
        .map(|(_, step, _)| (step.stage)(lanes, taken, staging))
        .collect();
    let scratch_per_cell = steps
        .iter()
        .map(|(_, step, _)| step.scratch_per_cell)
        .max()
        .unwrap_or(0);
    let scratch = staging.reserve(scratch_per_cell * grids.total);
    let buffers = [staging.reserve(grids.total), staging.reserve(grids.total)];
    let (mut cells, mut transposed) = (grids.cells, false);
    let mut launches = Vec::with_capacity(steps.len());
    for (s, (&(entry, step, param), inputs)) in steps.iter().zip(&inputs).enumerate() {
        let out = buffers[s % 2];
        let metas = match transposed_metas {
            Some(swapped) if transposed => swapped,
            _ => grids.metas,
        };
        let at = StepAt {
            metas,
            cells,
            out,
            scratch,
        };
        let packed = Packed {
            blocks: grids.blocks,
            args: (step.args)(at, inputs, param),
            output: out..out + grids.total,
        };
        launches.push((entry, packed));
        cells = out;
        transposed ^= (step.transposes)(param);
    }
    Plan {
        launches,
        output: cells..cells + grids.total,
    }
}

/// The grid step of an op, if its kernel is one.
pub fn grid_step(op: &Op) -> Option<&'static GridStep> {
    match op.kernel.as_ref()?.layout {
        Layout::Step(step) => Some(step),
        Layout::Own { .. } => None,
    }
}

/// Each lane's grid from output cells at its input grid's offsets (rebased as staged),
/// transposed or not.
pub fn unpack_grids(grids: &GridBatch, taken: &[usize], transposed: bool, out: &[u8]) -> Unpacked {
    par_unpack(grids, taken, |v, range| {
        let (h, w) = if transposed { (v.w, v.h) } else { (v.h, v.w) };
        Ok(grid_out(h, w, &out[range]))
    })
}
