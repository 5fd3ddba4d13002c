//! Staged, chunked evaluation for search: the programs of a plan stream through the engine in
//! chunks, and each chunk runs in two stages: first on the first sample (a train pair) of every
//! task, then only the (program, task) pairs whose output there was right, on the task's other
//! samples.
//!
//! A lane's value depends on its own input and its task's training pairs only, so a program's
//! output on a sample it runs is the one a full evaluation gives, under the same budgets; and a
//! program that fails a task's first train pair cannot solve that task. So the verdicts (which
//! programs solve which tasks) are a full evaluation's, at the cost of one sample where the
//! first pair fails. Only one chunk's columns are alive at a time (each dropped once nothing
//! reads it, the outputs once scored), so memory follows the chunk size, not the number of
//! programs.

use std::time::Instant;

use rayon::prelude::*;

use super::eval::{self, Keep, Lanes};
use super::{shards, Plan};
use crate::batch::{Backend, LaneResult};
use crate::dsl::{DslError, Value};

/// Bytes one program holds per lane while its chunk runs, on average: the figure
/// [`Plan::chunk_for`] sizes chunks by. A conservative one: on the evaluation tasks, the
/// published solvers and their mutants under search's budgets, 128 programs on all 1,782 lanes
/// in one chunk added 40 MB to the peak of one round (0.2 KB per program and lane) and 0.9 GB
/// in the heaviest of six (4 KB).
pub const BYTES_PER_PROGRAM_LANE: u64 = 16 << 10;

/// How [`Plan::run_staged`] evaluates.
#[derive(Clone, Copy, Debug)]
pub struct Staging {
    /// Programs evaluated together (at least one).
    pub chunk: usize,
    /// Two stages (the first sample of every task, then the pairs still alive); else every
    /// sample of every task at once.
    pub early_exit: bool,
    /// The size budget: a larger value ([`eval::size`]) fails its lane.
    pub max_size: Option<usize>,
}

/// One output seen by staged evaluation: solver `solver`'s outcome on sample `sample` (train
/// then test) of task `task` (indices into the plan's solvers and tasks); `None` where it has
/// no value (a bug in the engine's bookkeeping, never expected).
pub struct Seen<'a> {
    pub solver: usize,
    pub task: usize,
    pub sample: usize,
    pub result: Option<&'a LaneResult>,
}

/// What a staged evaluation found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Staged {
    /// (solver, task) pairs where the solver's output is right on every sample that has an
    /// expected output (at least one), ascending.
    pub solved: Vec<(usize, usize)>,
    /// Solvers evaluated: all of them, or the first ones when `stop` ended the run early.
    pub solvers: usize,
    /// (program, sample) pairs evaluated.
    pub program_samples: u64,
    /// (program, task) pairs evaluated past the first stage.
    pub alive: usize,
    /// Solvers that ran past the time budget on some sample (a timeout), and that made a
    /// value past the size budget (or a DSL size cap) on some sample.
    pub timed_out: usize,
    pub too_large: usize,
    pub chunks: usize,
    /// Whether `stop` ended the run before every chunk was done.
    pub stopped: bool,
    pub seconds: f64,
}

/// One solver on one task in one stage.
#[derive(Clone, Copy, Debug)]
struct Verdict {
    solver: usize,
    task: usize,
    /// Samples evaluated, and of those, the ones with an expected output.
    samples: usize,
    pairs: usize,
    /// Right on every sample with an expected output.
    right: bool,
    timed_out: bool,
    too_large: bool,
}

impl Plan<'_> {
    /// Evaluates the plan in chunks of programs, each in stages (see the module), calling
    /// `sink` on every output evaluated, and `stop` before each chunk: once it says so, the
    /// chunks left are not evaluated. Uses no differs.
    pub fn run_staged(
        &self,
        backend: &dyn Backend,
        staging: &Staging,
        stop: &(dyn Fn() -> bool + Sync),
        sink: &(dyn Fn(Seen<'_>) + Sync),
    ) -> Staged {
        let start = Instant::now();
        let n = self.merged.solvers.len();
        let (first, rest) = if staging.early_exit {
            (self.lanes.samples_in(0..1), Some(self.lanes.samples_in(1..usize::MAX)))
        } else {
            (self.lanes.samples_in(0..usize::MAX), None)
        };
        let mut out = Staged::default();
        let (mut timed_out, mut too_large) = (vec![false; n], vec![false; n]);
        let chunk = staging.chunk.max(1);
        for (c, tasks) in self.chunks(chunk).into_iter().enumerate() {
            if stop() {
                out.stopped = true;
                break;
            }
            let mut verdicts = self.stage(&first, &tasks, backend, staging.max_size, sink);
            if let Some(rest) = &rest {
                let mut alive: Vec<Vec<u32>> = vec![Vec::new(); n];
                for v in verdicts.iter().filter(|v| v.right) {
                    alive[v.solver].push(v.task as u32);
                }
                out.alive += alive.iter().map(Vec::len).sum::<usize>();
                let second = self.stage(rest, &alive, backend, staging.max_size, sink);
                // Both stages' verdicts, by (solver, task): a pair is solved when right in both.
                verdicts.extend(second);
                verdicts.sort_by_key(|v| (v.solver, v.task));
                verdicts.dedup_by(|later, earlier| {
                    let same = (later.solver, later.task) == (earlier.solver, earlier.task);
                    if same {
                        earlier.samples += later.samples;
                        earlier.pairs += later.pairs;
                        earlier.right &= later.right;
                        earlier.timed_out |= later.timed_out;
                        earlier.too_large |= later.too_large;
                    }
                    same
                });
            }
            for v in &verdicts {
                out.program_samples += v.samples as u64;
                timed_out[v.solver] |= v.timed_out;
                too_large[v.solver] |= v.too_large;
                if v.right && v.pairs > 0 {
                    out.solved.push((v.solver, v.task));
                }
            }
            out.solvers = ((c + 1) * chunk).min(n);
            out.chunks += 1;
        }
        out.solved.sort_unstable();
        out.timed_out = timed_out.iter().filter(|&&b| b).count();
        out.too_large = too_large.iter().filter(|&&b| b).count();
        out.seconds = self.seconds + start.elapsed().as_secs_f64();
        out
    }

    /// One stage: solver `k` on the tasks `solver_tasks[k]` over `lanes`, sharded as
    /// [`Plan::run`] does; a verdict per (solver, task), every output given to `sink`.
    fn stage(
        &self,
        lanes: &Lanes<'_>,
        solver_tasks: &[Vec<u32>],
        backend: &dyn Backend,
        max_size: Option<usize>,
        sink: &(dyn Fn(Seen<'_>) + Sync),
    ) -> Vec<Verdict> {
        if solver_tasks.iter().all(Vec::is_empty) {
            return Vec::new();
        }
        shards(lanes, solver_tasks, backend)
            .into_par_iter()
            .flat_map_iter(|(range, lanes, tasks)| {
                let evaluation = eval::evaluate(&self.merged, &lanes, &tasks, backend, Keep::Sinks, max_size, &|| {});
                let mut verdicts = Vec::new();
                for (k, ts) in tasks.iter().enumerate() {
                    for &t in ts {
                        let t = t as usize;
                        let mut v = Verdict {
                            solver: k,
                            task: range.start + t,
                            samples: lanes.samples(t),
                            pairs: 0,
                            right: true,
                            timed_out: false,
                            too_large: false,
                        };
                        for s in 0..lanes.samples(t) {
                            let result = evaluation.outcome(&self.merged.solvers[k].outcome, t, s);
                            match result {
                                Some(Err(DslError::Timeout)) => v.timed_out = true,
                                Some(Err(DslError::TooLarge(_))) => v.too_large = true,
                                _ => {}
                            }
                            let expected = &lanes.expected[lanes.lane(t, s)];
                            if *expected != Value::None {
                                v.pairs += 1;
                                v.right &= result.is_some_and(|r| r.as_ref().is_ok_and(|x| x == expected));
                            }
                            sink(Seen {
                                solver: k,
                                task: v.task,
                                sample: lanes.sample(t, s),
                                result,
                            });
                        }
                        verdicts.push(v);
                    }
                }
                verdicts
            })
            .collect()
    }
}
