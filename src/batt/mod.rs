//! batt: many solver programs merged into one DAG ([`merge`]), evaluated column by column over
//! every sample of many tasks at once ([`eval`]), and scored ([`score`]); [`text`] reads and
//! writes a merged DAG as a batt text file; [`staged`] evaluates for search (first train pairs
//! first, then only the pairs still alive).
//!
//! Under a memory budget ([`Plan::with_memory`]) the solvers are evaluated in chunks, one
//! after the other, so that the columns alive at once do not grow with the number of solvers.
//!
//! Knows programs, tasks and the batch layer; nothing of the CLI. [`Plan::new`] assigns
//! solvers to tasks and merges; [`Plan::run`] evaluates on a backend and scores.
//!
//! `run` cuts the lanes into shards, contiguous runs of whole tasks, as many as the backend
//! asks for ([`Backend::shards`]): the CPU backend shards of a few lanes, so shards run in
//! parallel as the interpreter's lanes do, a slow lane holds up only its shard, and the
//! columns alive at once stay small; a GPU backend one per device, so launches stay as large
//! as they can be. Each shard is evaluated
//! on its own, which computes a constant-only node once per shard rather than once overall
//! (such nodes build function values and cost next to nothing). Measured on the team library
//! (32 solvers, 942 lanes), shards and one big batch cost the same within noise; the choice
//! is for the heavy tail and for several devices.

pub mod eval;
pub mod merge;
pub mod score;
pub mod staged;
pub mod text;

use std::collections::HashMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{json, Value as Json};

use crate::batch::{Backend, LaneResult};
use crate::program::Program;
use crate::run::Assignment;
use crate::tasks::Task;
use eval::Lanes;
pub use merge::{MergeError, Merged};
pub use score::Match;

/// How solvers meet tasks, and whether steps are shared.
#[derive(Clone, Copy, Debug, Default)]
pub struct Config {
    /// Every solver on every task (search mode); else `solve_<id>` on task `<id>` only.
    pub cross: bool,
    /// Evaluate each solver on its own (no shared steps): the baseline.
    pub no_merge: bool,
}

/// Why solvers cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// [`Config::no_merge`] for a DAG merged beforehand.
    #[error("--no-merge needs solver programs; a batt text file is merged already")]
    MergedAlready,
}

/// Solvers assigned to tasks and merged, ready to run.
pub struct Plan<'t> {
    pub merged: Merged,
    lanes: Lanes<'t>,
    /// The report name of each merged solver.
    names: Vec<String>,
    /// Tasks (indices into the lanes' tasks) of each merged solver.
    solver_tasks: Vec<Vec<u32>>,
    pub solvers_without_task: Vec<String>,
    pub tasks_without_solver: Vec<String>,
    /// Solvers defined again for a task that already has one (the first is used).
    pub duplicate_solvers: Vec<String>,
    /// Solvers evaluated together by [`run`](Self::run) (all of them unless a memory budget
    /// was set, [`with_memory`](Self::with_memory)).
    chunk: Option<usize>,
    /// The size budget [`run`](Self::run) evaluates under ([`with_max_size`](Self::with_max_size)).
    max_size: Option<usize>,
    seconds: f64,
}

/// What a batt run found.
#[derive(Clone, Debug)]
pub struct Report {
    pub steps_total: usize,
    pub steps_merged: usize,
    pub lanes: usize,
    /// Merging, evaluation and scoring (not loading).
    pub seconds: f64,
    pub matches: Vec<Match>,
    /// Time per primitive, most expensive first: the dynamic profile.
    pub profile: Vec<OpTime>,
    /// Time per solver, most expensive first (see [`SolverTime`]).
    pub solvers: Vec<SolverTime>,
}

/// The evaluated steps of one primitive (or of calls of function values), summed over shards.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpTime {
    /// The primitive, or `(call)` for steps that call a function value (`x5 = x3(x4)`).
    pub name: String,
    /// Steps evaluated (each one batched operation over its lanes).
    pub calls: usize,
    /// Lanes (or tasks, for steps on `S` only) those steps covered.
    pub lanes: usize,
    pub seconds: f64,
    /// Whether the backend has a batched operation for it (else a per-lane loop).
    pub batched: bool,
}

/// The time of the steps one solver reads, its output's and its guards' (and its differs'),
/// each step's time shared equally among the solvers that read it: what the solver costs
/// the run. The shares of all solvers add up to the time of every step some solver reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolverTime {
    pub name: String,
    pub seconds: f64,
    /// Steps it reads, and how many of them no other solver reads.
    pub steps: usize,
    pub own_steps: usize,
}

/// Node timings summed into per-primitive rows as the shards finish, so that what a run keeps
/// does not grow with its number of chunks; and per node, for [`SolverTime`]s.
#[derive(Default)]
struct Profile {
    rows: HashMap<String, OpTime>,
    node_seconds: Vec<f64>,
}

impl Profile {
    /// Adds one shard's timings (one per node of `merged`).
    fn add(&mut self, merged: &Merged, timings: &[Option<eval::NodeTiming>]) {
        self.node_seconds.resize(merged.nodes.len(), 0.0);
        for (k, (node, timing)) in merged.nodes.iter().zip(timings).enumerate() {
            let (Some(t), true) = (timing, node.is_step()) else {
                continue;
            };
            self.node_seconds[k] += t.seconds;
            let (name, batched) = match node.op {
                merge::NodeOp::Prim(id) => (id.spec().name.to_string(), crate::batch::ops::has_batched_op(id)),
                merge::NodeOp::Group(ref g) => (format!("@{}", g.kind()), true),
                merge::NodeOp::Pick { .. } => ("(pick)".to_string(), false),
                _ => ("(call)".to_string(), false),
            };
            let row = self.rows.entry(name.clone()).or_insert_with(|| OpTime {
                name,
                batched,
                ..OpTime::default()
            });
            row.calls += 1;
            row.lanes += t.units;
            row.seconds += t.seconds;
        }
    }

    /// The rows, most expensive first.
    fn rows(self) -> Vec<OpTime> {
        let mut rows: Vec<OpTime> = self.rows.into_values().collect();
        rows.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| a.name.cmp(&b.name)));
        rows
    }
}

/// Each solver of `merged` with the time of the steps it reads, most expensive first, from
/// the seconds of each node (missing ones count as none).
pub fn solver_times(merged: &Merged, node_seconds: &[f64]) -> Vec<SolverTime> {
    let mut cones: Vec<Vec<usize>> = vec![Vec::new(); merged.solvers.len()];
    merged.visit_reads(
        |_| true,
        |k, i| {
            if merged.nodes[i].is_step() {
                cones[k].push(i);
            }
        },
    );
    let mut readers = vec![0u32; merged.nodes.len()];
    for &k in cones.iter().flatten() {
        readers[k] += 1;
    }
    let mut times: Vec<SolverTime> = merged
        .solvers
        .iter()
        .zip(&cones)
        .map(|(solver, cone)| SolverTime {
            name: solver.name.clone(),
            seconds: cone
                .iter()
                .map(|&k| node_seconds.get(k).copied().unwrap_or(0.0) / f64::from(readers[k]))
                .sum(),
            steps: cone.len(),
            own_steps: cone.iter().filter(|&&k| readers[k] == 1).count(),
        })
        .collect();
    times.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| a.name.cmp(&b.name)));
    times
}

/// A match under its (task, solver) key, for ordering matches found chunk by chunk.
type Keyed = ((u32, usize), Match);

/// `lanes` cut into the backend's shards (contiguous runs of tasks): each shard's range of
/// tasks, its lanes, and each solver's tasks among them (indices into the shard's own tasks,
/// from `solver_tasks`, indices into `lanes.tasks`). One shard is all of `lanes`, unsliced.
fn shards<'t>(
    lanes: &Lanes<'t>,
    solver_tasks: &[Vec<u32>],
    backend: &dyn Backend,
) -> Vec<(std::ops::Range<usize>, Lanes<'t>, Vec<Vec<u32>>)> {
    let ranges = lanes.shards(backend.shards(lanes.len()));
    if ranges.len() <= 1 {
        let all = 0..lanes.tasks.len();
        return vec![(all.clone(), lanes.slice(all), solver_tasks.to_vec())];
    }
    ranges
        .into_iter()
        .map(|r| {
            let tasks = solver_tasks
                .iter()
                .map(|ts| {
                    ts.iter()
                        .filter(|&&t| r.contains(&(t as usize)))
                        .map(|&t| t - r.start as u32)
                        .collect()
                })
                .collect();
            (r.clone(), lanes.slice(r), tasks)
        })
        .collect()
}

impl<'t> Plan<'t> {
    /// The plan of an assignment's solvers, merged into `merged` (in the assignment's order).
    fn assigned(a: Assignment<'t>, merged: Merged, start: Instant) -> Plan<'t> {
        Plan {
            merged,
            lanes: Lanes::new(a.chosen),
            names: a.names,
            solver_tasks: a.solver_tasks,
            solvers_without_task: a.solvers_without_task,
            tasks_without_solver: a.tasks_without_solver,
            duplicate_solvers: a.duplicate_solvers,
            chunk: None,
            max_size: None,
            seconds: start.elapsed().as_secs_f64(),
        }
    }

    /// Assigns solvers to tasks and merges them (with their differs).
    pub fn new(
        solvers: &[Program],
        differs: &[Program],
        tasks: &'t [Task],
        config: Config,
    ) -> Result<Plan<'t>, PlanError> {
        let start = Instant::now();
        let a = Assignment::of_programs(solvers, tasks, config.cross);
        let chosen: Vec<&Program> = a.solvers.iter().map(|&k| &solvers[k]).collect();
        let merged = merge::merge(&chosen, differs, !config.no_merge)?;
        Ok(Plan::assigned(a, merged, start))
    }

    /// A plan for a DAG merged beforehand (a batt text file, [`text`]): its solvers are
    /// assigned to tasks as [`new`](Self::new) does, a solver `NAME~K` (a mutant) counting as
    /// `NAME`'s. Only the solvers that have a task are evaluated.
    pub fn from_merged(merged: Merged, tasks: &'t [Task], config: Config) -> Result<Plan<'t>, PlanError> {
        let start = Instant::now();
        if config.no_merge {
            return Err(PlanError::MergedAlready);
        }
        let keys: Vec<(&str, &str)> = merged
            .solvers
            .iter()
            .map(|s| {
                let base = s.name.split('~').next().unwrap_or(&s.name);
                (s.name.as_str(), base.strip_prefix("solve_").unwrap_or(base))
            })
            .collect();
        let a = Assignment::new(&keys, tasks, config.cross);
        let mut merged = merged;
        merged.solvers = a.solvers.iter().map(|&k| merged.solvers[k].clone()).collect();
        Ok(Plan::assigned(a, merged, start))
    }

    /// The part of the plan that evaluates its solvers `solvers` on its tasks `tasks` (index
    /// ranges, clamped to the plan's): what one worker of a distributed run evaluates. Solver
    /// `k` of the part is solver `solvers.start + k` of the plan; task indices are the plan's.
    /// Each lane is evaluated on its own, so the part's matches and outputs are the whole
    /// plan's for those (solver, task) pairs.
    pub fn part(mut self, solvers: Range<usize>, tasks: Range<usize>) -> Plan<'t> {
        let end = solvers.end.min(self.solver_tasks.len());
        let start = solvers.start.min(end);
        self.merged.solvers = self.merged.solvers.drain(start..end).collect();
        self.names = self.names.drain(start..end).collect();
        self.solver_tasks = self.solver_tasks.drain(start..end).collect();
        for ts in &mut self.solver_tasks {
            ts.retain(|&t| tasks.contains(&(t as usize)));
        }
        self
    }

    /// The (task, solver) pairs of the plan, in the order of [`run`](Self::run)'s matches.
    pub fn pairs(&self) -> Vec<(u32, usize)> {
        score::jobs(&self.solver_tasks)
    }

    /// Number of solvers evaluated (those that have a task).
    pub fn solvers(&self) -> usize {
        self.solver_tasks.len()
    }

    /// Number of tasks (those that have a solver).
    pub fn tasks(&self) -> usize {
        self.lanes.tasks.len()
    }

    /// Number of lanes (samples of the tasks that have a solver).
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }

    /// The plan evaluating its solvers in chunks that keep their columns within `bytes`
    /// ([`Plan::chunk_for`], every sample at once), so that memory does not grow with the
    /// number of solvers. Results are the same as in one chunk; steps shared between solvers of
    /// different chunks are computed once per chunk.
    pub fn with_memory(mut self, bytes: u64) -> Self {
        self.chunk = Some(self.chunk_for(bytes, false));
        self
    }

    /// The plan evaluating under a size budget: a value larger than `max_size`
    /// ([`eval::size`]) fails its lane, as in search. The backend's member cap
    /// ([`crate::batch::CpuBackend::with_max_members`]) should be the same. `None`: no budget
    /// (the default), results as the reference's.
    pub fn with_max_size(mut self, max_size: Option<usize>) -> Self {
        self.max_size = max_size;
        self
    }

    /// The number of solvers whose columns fit in `bytes`, at
    /// [`staged::BYTES_PER_PROGRAM_LANE`] per solver and lane it runs on, on average: with
    /// `early_exit` the lanes of the first stage (one per task of the solver), else every
    /// sample of its tasks. At least one.
    pub fn chunk_for(&self, bytes: u64, early_exit: bool) -> usize {
        let program_lanes: usize = self
            .solver_tasks
            .iter()
            .flatten()
            .map(|&t| if early_exit { 1 } else { self.lanes.samples(t as usize) })
            .sum();
        let per_program = program_lanes.div_ceil(self.solver_tasks.len().max(1)).max(1) as u64;
        (bytes / (staged::BYTES_PER_PROGRAM_LANE * per_program)).max(1) as usize
    }

    /// The solvers cut into chunks of `chunk`: for each chunk, each solver's tasks (none for
    /// the solvers of other chunks).
    fn chunks(&self, chunk: usize) -> Vec<Vec<Vec<u32>>> {
        let (n, chunk) = (self.solver_tasks.len(), chunk.max(1));
        (0..n)
            .step_by(chunk)
            .map(|from| {
                let solvers = from..(from + chunk).min(n);
                (0..n)
                    .map(|k| match solvers.contains(&k) {
                        true => self.solver_tasks[k].clone(),
                        false => Vec::new(),
                    })
                    .collect()
            })
            .collect()
    }

    /// How many times [`run`](Self::run) calls its `tick` on this backend: once per node of
    /// each shard of each chunk.
    pub fn work(&self, backend: &dyn Backend) -> u64 {
        self.chunks(self.chunk.unwrap_or(self.solver_tasks.len()))
            .iter()
            .flat_map(|tasks| shards(&self.lanes, tasks, backend))
            .map(|(_, lanes, tasks)| eval::live_nodes(&self.merged, &lanes, &tasks) as u64)
            .sum()
    }

    /// The lanes: every sample of every task that has a solver.
    pub fn all_lanes(&self) -> &Lanes<'t> {
        &self.lanes
    }

    /// How many times [`evaluate_all`](Self::evaluate_all) calls its `tick`.
    pub fn work_all(&self) -> u64 {
        eval::live_nodes(&self.merged, &self.lanes, &self.solver_tasks) as u64
    }

    /// Evaluates the whole plan as one shard and keeps every node's column, for comparing
    /// backends step by step (`arcbatch diff`). Costs memory in proportion to the steps.
    pub fn evaluate_all(&self, backend: &dyn Backend, tick: &(dyn Fn() + Sync)) -> eval::Evaluation {
        eval::evaluate(
            &self.merged,
            &self.lanes,
            &self.solver_tasks,
            backend,
            eval::Keep::All,
            None,
            tick,
        )
    }

    /// Each solver's result on every sample of each of its tasks, as (solver, task, one per
    /// sample: the output, or the error of a guard or of the output), from an evaluation of the
    /// whole plan ([`Plan::evaluate_all`]). For checking batt against the interpreter value by
    /// value.
    pub fn outputs<'e>(&self, evaluation: &'e eval::Evaluation) -> Vec<(&str, &str, Vec<Option<&'e LaneResult>>)> {
        let mut out = Vec::new();
        for (k, tasks) in self.solver_tasks.iter().enumerate() {
            for &t in tasks {
                let t = t as usize;
                let samples = (0..self.lanes.samples(t))
                    .map(|s| evaluation.outcome(&self.merged.solvers[k].outcome, t, s))
                    .collect();
                out.push((self.names[k].as_str(), self.lanes.tasks[t].id.as_str(), samples));
            }
        }
        out
    }

    /// Evaluates on a backend and scores. The solvers are evaluated chunk by chunk (one chunk
    /// unless [`with_memory`](Self::with_memory)); in each, the lanes are cut into the
    /// backend's shards (contiguous runs of tasks), evaluated in parallel, each columnar over
    /// its own lanes; `tick` is called once per node of each shard. Matches come task by
    /// task, each task's in solver order.
    pub fn run(&self, backend: &dyn Backend, tick: &(dyn Fn() + Sync)) -> Report {
        self.run_saving(backend, tick, None, &mut |_| {})
    }

    /// [`run`](Self::run), handing `save` the report of the chunks done so far after a
    /// chunk, when `every` has passed since the last (never, with `None`), so that a caller
    /// can keep what was finished on disk while the rest runs. The final report is returned,
    /// not saved.
    pub fn run_saving(
        &self,
        backend: &dyn Backend,
        tick: &(dyn Fn() + Sync),
        every: Option<Duration>,
        save: &mut dyn FnMut(&Report),
    ) -> Report {
        let start = Instant::now();
        let mut saved = Instant::now();
        let mut matches: Vec<Keyed> = Vec::new();
        let mut profile = Profile::default();
        for tasks in self.chunks(self.chunk.unwrap_or(self.solver_tasks.len())) {
            let shards: Vec<(Vec<Keyed>, Vec<Option<eval::NodeTiming>>)> = shards(&self.lanes, &tasks, backend)
                .into_par_iter()
                .map(|(range, lanes, tasks)| {
                    let evaluation = eval::evaluate(
                        &self.merged,
                        &lanes,
                        &tasks,
                        backend,
                        eval::Keep::Sinks,
                        self.max_size,
                        tick,
                    );
                    let scored = score::score(&self.merged, &self.names, &lanes, &tasks, &evaluation);
                    let keys = score::jobs(&tasks)
                        .into_iter()
                        .map(|(t, k)| (t + range.start as u32, k));
                    (keys.zip(scored).collect(), evaluation.timings)
                })
                .collect();
            for (m, t) in shards {
                matches.extend(m);
                profile.add(&self.merged, &t);
            }
            if every.is_some_and(|every| saved.elapsed() >= every) {
                matches.sort_by_key(|(key, _)| *key);
                save(&self.report(
                    matches.iter().map(|(_, m)| m.clone()).collect(),
                    Vec::new(),
                    Vec::new(),
                    start,
                ));
                saved = Instant::now();
            }
        }
        matches.sort_by_key(|(key, _)| *key);
        let solvers = solver_times(&self.merged, &profile.node_seconds);
        self.report(
            matches.into_iter().map(|(_, m)| m).collect(),
            profile.rows(),
            solvers,
            start,
        )
    }

    /// The report of `matches` and the times measured, the run having started at `start`.
    fn report(&self, matches: Vec<Match>, profile: Vec<OpTime>, solvers: Vec<SolverTime>, start: Instant) -> Report {
        Report {
            profile,
            solvers,
            matches,
            steps_total: self.merged.steps_total,
            steps_merged: self.merged.steps_merged(),
            lanes: self.lanes.len(),
            seconds: self.seconds + start.elapsed().as_secs_f64(),
        }
    }
}

impl Report {
    /// The JSON report (`arcbatch batt --json`, and the Python module's `batt`).
    pub fn to_json(&self) -> Json {
        let mut json = self.header_json();
        json["matches"] = self.matches.iter().map(match_json).collect();
        json
    }

    /// [`to_json`](Self::to_json)'s text, written a match at a time, so that a report of
    /// hundreds of thousands of matches never stands whole in memory as a JSON tree.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let header = self.header_json().to_string();
        write!(out, "{},\"matches\":[", header.strip_suffix('}').unwrap_or(&header))?;
        for (k, m) in self.matches.iter().enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &match_json(m))?;
        }
        out.write_all(b"]}\n")
    }

    /// The report's fields but its matches.
    fn header_json(&self) -> Json {
        json!({
            "steps_total": self.steps_total,
            "steps_merged": self.steps_merged,
            "lanes": self.lanes,
            "seconds": self.seconds,
        })
    }
}

/// One match of the JSON report.
fn match_json(m: &Match) -> Json {
    let differs: serde_json::Map<String, Json> = m
        .differs
        .iter()
        .map(|(name, scores)| (name.clone(), json!(scores)))
        .collect();
    json!({
        "solver": m.solver,
        "task": m.task,
        "correct": m.correct,
        "pairs": m.pairs,
        "differs": differs,
        "error": m.error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batt::merge::{merge, NodeOp};
    use crate::dsl::PrimId;
    use crate::program::parse_file;

    #[test]
    fn a_step_two_solvers_read_costs_each_half_and_the_shares_add_up_to_the_steps_read() {
        let src = "def solve_a(I):\n    x1 = compose(size, first)\n    x2 = rot90(I)\n    x3 = x1(x2)\n    return x3\n\
                   def solve_b(S, I, C):\n    y1 = rot90(I)\n    y2 = first(S)\n    y3 = compose(size, first)\n    y4 = vmirror(y1)\n    return y4\n";
        let programs = parse_file("t.py", src).unwrap();
        let merged = merge(&programs.iter().collect::<Vec<_>>(), &[], true).unwrap();
        // Each node costs a different power of two, so that every sum tells its parts apart.
        let seconds: Vec<f64> = (0..merged.nodes.len()).map(|k| f64::from(1u32 << k)).collect();
        let node = |op: NodeOp| merged.nodes.iter().position(|n| n.op == op).unwrap();
        let prim = |name: &str| node(NodeOp::Prim(PrimId::of(name).unwrap()));
        let (rot90, compose, first, vmirror, call) = (
            prim("rot90"),
            prim("compose"),
            prim("first"),
            prim("vmirror"),
            node(NodeOp::Call),
        );
        let times = solver_times(&merged, &seconds);
        let a = times.iter().find(|t| t.name == "solve_a").unwrap();
        let b = times.iter().find(|t| t.name == "solve_b").unwrap();
        let shared = (seconds[rot90] + seconds[compose]) / 2.0;
        assert_eq!(a.seconds, seconds[call] + shared);
        // solve_b's guards (first(S), its unused compose) are steps it reads.
        assert_eq!(b.seconds, seconds[first] + seconds[vmirror] + shared);
        assert_eq!((a.steps, a.own_steps, b.steps, b.own_steps), (3, 1, 4, 2));
        let read: f64 = [rot90, compose, first, vmirror, call].iter().map(|&k| seconds[k]).sum();
        assert_eq!(a.seconds + b.seconds, read);
        assert!(
            times.windows(2).all(|w| w[0].seconds >= w[1].seconds),
            "most expensive first"
        );
    }
}
