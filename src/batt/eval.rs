//! Columnar evaluation of a merged DAG over lanes: one lane per (task, sample), the train then
//! test inputs of every chosen task, and each node evaluated as one batched call over all of
//! its lanes.
//!
//! A node runs only on the tasks of the solvers that need it (its *domain*): with `--cross`
//! every task, without it the tasks whose own solver reaches the node. Its value is held as a
//! column: one value when it is the same on every lane (a constant-only node, or an error that
//! came from one), one per task for a node of [`Level::Task`], one per lane otherwise. A lane
//! whose argument is an error gets that error and is left out of the call, so an error stays
//! in its lane and in the lanes that depend on it.
//!
//! Nodes are evaluated in dataflow order: each node is a rayon task started when its last
//! argument is ready, and its lanes run in parallel chunks inside the backend. A column is
//! dropped as soon as the last node that reads it is done, except the columns scoring reads
//! (outputs and guards), or every column when asked to keep them all ([`Keep::All`], for
//! comparing two backends step by step).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use smallvec::SmallVec;

use super::merge::{Input, Level, Merged, Node, NodeId, NodeOp, Outcome};
use crate::batch::{call_group, call_prim, call_value, Arg, Backend, LaneResult, Selection};
use crate::dsl::{DslError, PrimId, Value};
use crate::tasks::Task;

/// The lanes of an evaluation: every sample of every chosen task, task by task, or a run of
/// each task's samples ([`Lanes::samples_in`], for staged evaluation).
pub struct Lanes<'t> {
    pub tasks: Vec<&'t Task>,
    /// First lane of each task.
    start: Vec<usize>,
    /// Lanes of each task.
    counts: Vec<usize>,
    /// The sample (of the task's train then test samples) of each task's first lane.
    first: Vec<usize>,
    /// `I` on each lane.
    inputs: Vec<Value>,
    /// `C` on each lane: the expected output, or `None`.
    pub expected: Vec<Value>,
    /// `S` of each task.
    pairs: Vec<Value>,
}

impl<'t> Lanes<'t> {
    pub fn new(tasks: Vec<&'t Task>) -> Lanes<'t> {
        let mut start = Vec::with_capacity(tasks.len());
        let (mut inputs, mut expected) = (Vec::new(), Vec::new());
        for t in &tasks {
            start.push(inputs.len());
            for ex in t.examples() {
                inputs.push(ex.input_value());
                expected.push(ex.expected_value());
            }
        }
        let pairs = tasks.iter().map(|t| t.train_pairs_value()).collect();
        Lanes {
            counts: tasks.iter().map(|t| t.train.len() + t.test.len()).collect(),
            first: vec![0; tasks.len()],
            tasks,
            start,
            inputs,
            expected,
            pairs,
        }
    }

    /// The same tasks (same indices) with only the samples `range` of each (those it has; a
    /// task may be left with none), sharing the values.
    pub fn samples_in(&self, range: Range<usize>) -> Lanes<'t> {
        let mut out = Lanes {
            tasks: self.tasks.clone(),
            start: Vec::with_capacity(self.tasks.len()),
            counts: Vec::with_capacity(self.tasks.len()),
            first: Vec::with_capacity(self.tasks.len()),
            inputs: Vec::new(),
            expected: Vec::new(),
            pairs: self.pairs.clone(),
        };
        for t in 0..self.tasks.len() {
            let n = self.counts[t];
            let (from, to) = (range.start.min(n), range.end.min(n));
            out.start.push(out.inputs.len());
            out.counts.push(to - from);
            out.first.push(self.first[t] + from);
            let lanes = self.start[t] + from..self.start[t] + to;
            out.inputs.extend_from_slice(&self.inputs[lanes.clone()]);
            out.expected.extend_from_slice(&self.expected[lanes]);
        }
        out
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// Number of samples (lanes) of task `t`.
    pub fn samples(&self, t: usize) -> usize {
        self.counts[t]
    }

    /// Which of task `t`'s samples (train then test) its lane `s` is.
    pub fn sample(&self, t: usize, s: usize) -> usize {
        self.first[t] + s
    }

    /// The global lane of sample `s` of task `t`.
    pub fn lane(&self, t: usize, s: usize) -> usize {
        self.start[t] + s
    }

    /// The lanes of the tasks `tasks` only (sharing the values).
    pub fn slice(&self, tasks: Range<usize>) -> Lanes<'t> {
        let first = self.start.get(tasks.start).copied().unwrap_or(self.len());
        let end = self.start.get(tasks.end).copied().unwrap_or(self.len());
        Lanes {
            tasks: self.tasks[tasks.clone()].to_vec(),
            start: self.start[tasks.clone()].iter().map(|s| s - first).collect(),
            counts: self.counts[tasks.clone()].to_vec(),
            first: self.first[tasks.clone()].to_vec(),
            inputs: self.inputs[first..end].to_vec(),
            expected: self.expected[first..end].to_vec(),
            pairs: self.pairs[tasks].to_vec(),
        }
    }

    /// The tasks cut into at most `n` contiguous ranges of about equal numbers of lanes.
    pub fn shards(&self, n: usize) -> Vec<Range<usize>> {
        let per_shard = self.len().div_ceil(n.max(1)).max(1);
        let mut ranges = Vec::new();
        let mut from = 0;
        for t in 0..self.tasks.len() {
            let end = self.start[t] + self.samples(t);
            if end - self.start[from] >= per_shard || t + 1 == self.tasks.len() {
                ranges.push(from..t + 1);
                from = t + 1;
            }
        }
        ranges
    }
}

/// The tasks a node runs on, and where each task's lanes sit in the node's column.
#[derive(Debug)]
struct Domain {
    /// Task indices, ascending.
    tasks: Vec<u32>,
    /// Position of each task in `tasks`, `u32::MAX` where absent.
    pos: Vec<u32>,
    /// First lane in the column of each task of `tasks`.
    lane_start: Vec<usize>,
    lanes: usize,
}

impl Domain {
    fn new(tasks: Vec<u32>, all: &Lanes<'_>) -> Domain {
        let mut pos = vec![u32::MAX; all.tasks.len()];
        let mut lane_start = Vec::with_capacity(tasks.len());
        let mut lanes = 0;
        for (p, &t) in tasks.iter().enumerate() {
            pos[t as usize] = p as u32;
            lane_start.push(lanes);
            lanes += all.samples(t as usize);
        }
        Domain {
            tasks,
            pos,
            lane_start,
            lanes,
        }
    }
}

/// A node's values.
#[derive(Debug)]
enum Values {
    /// The same on every lane.
    One(LaneResult),
    /// One per task of the domain.
    PerTask(Vec<LaneResult>),
    /// One per lane of the domain.
    PerLane(Vec<LaneResult>),
}

/// A node's values over its domain.
#[derive(Debug)]
pub struct Column {
    domain: Arc<Domain>,
    values: Values,
}

impl Column {
    /// How many values the column holds: one, one per task, or one per lane.
    fn units(&self) -> usize {
        match &self.values {
            Values::One(_) => 1,
            Values::PerTask(vs) | Values::PerLane(vs) => vs.len(),
        }
    }

    /// Turns every value larger than `cap` ([`size`]) into a [`DslError::TooLarge`] error,
    /// freeing it.
    fn cap(&mut self, cap: usize) {
        let values = match &mut self.values {
            Values::One(v) => std::slice::from_mut(v),
            Values::PerTask(vs) | Values::PerLane(vs) => vs.as_mut_slice(),
        };
        for v in values {
            let n = match v {
                Ok(value) => size(value, cap),
                Err(_) => continue,
            };
            if n > cap {
                *v = Err(DslError::TooLarge(
                    format!("a value of size {n} or more, past the size budget of {cap}").into(),
                ));
            }
        }
    }

    /// The tasks (indices into the lanes' tasks) the column has values for, ascending.
    pub fn tasks(&self) -> &[u32] {
        &self.domain.tasks
    }

    /// The value on sample `s` of task `t` (which must be in the column's domain).
    pub fn get(&self, t: usize, s: usize) -> &LaneResult {
        let p = self.domain.pos[t] as usize;
        match &self.values {
            Values::One(v) => v,
            Values::PerTask(vs) => &vs[p],
            Values::PerLane(vs) => &vs[self.domain.lane_start[p] + s],
        }
    }
}

/// A value's size for the size budget: a grid's cells, a container's members plus, for a
/// tuple or set, the sizes of the members that are containers (a set of objects counts its
/// objects and their cells). Counting stops once it passes `cap`.
pub fn size(v: &Value, cap: usize) -> usize {
    match v {
        Value::Grid(g) => g.cells.len(),
        Value::Indices(l) => l.len(),
        Value::Object(c) => c.len(),
        // A tuple `(colour, (i, j))`: its two members, as when it was a boxed tuple.
        Value::Cell(_) => 2,
        Value::Ints(v) => v.len(),
        // Two members, and each cell's two, as when they were boxed tuples.
        Value::LocPair(..) => 2,
        Value::CellPair(..) => 6,
        Value::Tuple(vs) | Value::Set(vs) => {
            let mut n = vs.len();
            for m in vs.iter() {
                if n > cap {
                    break;
                }
                n += size(m, cap);
            }
            n
        }
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Pair(..) | Value::Func(_) => 0,
    }
}

/// What evaluation leaves for scoring: the columns of outputs and guards, by node; and for
/// profiling, the time each node took.
pub struct Evaluation {
    pub columns: Vec<Option<Arc<Column>>>,
    pub timings: Vec<Option<NodeTiming>>,
}

impl Evaluation {
    /// What an outcome gives on lane `s` of task `t`: its output, unless a guard raised there
    /// (that guard's error); `None` where a column is missing (not evaluated there).
    pub fn outcome(&self, o: &Outcome, t: usize, s: usize) -> Option<&LaneResult> {
        let on = |node: NodeId| self.columns[node as usize].as_ref().map(|c| c.get(t, s));
        let guard_error = o.guards.iter().filter_map(|&g| on(g)).find(|r| r.is_err());
        guard_error.or_else(|| on(o.output))
    }
}

/// One node's evaluation: how long it took, over how many lanes (or tasks, or once).
#[derive(Clone, Copy, Debug)]
pub struct NodeTiming {
    pub seconds: f64,
    pub units: usize,
}

/// Which columns [`evaluate`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Those scoring reads (outputs and guards); the others are dropped after their last use.
    Sinks,
    /// Every column.
    All,
}

/// Evaluates the DAG: solver `k` on the tasks `solver_tasks[k]` (indices into `lanes.tasks`).
/// A value larger than `max_size` ([`size`]) becomes its lane's [`DslError::TooLarge`] error
/// as soon as its node is done. `tick` is called once per node evaluated.
pub fn evaluate(
    merged: &Merged,
    lanes: &Lanes<'_>,
    solver_tasks: &[Vec<u32>],
    backend: &dyn Backend,
    keep: Keep,
    max_size: Option<usize>,
    tick: &(dyn Fn() + Sync),
) -> Evaluation {
    let domains = domains(merged, lanes, solver_tasks);
    let n = merged.nodes.len();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending = Vec::with_capacity(n);
    for (k, node) in merged.nodes.iter().enumerate() {
        let args = distinct(&node.args);
        pending.push(AtomicUsize::new(args.len()));
        if domains[k].is_some() {
            for a in args {
                users[a].push(k);
            }
        }
    }
    let mut kept = vec![keep == Keep::All; n];
    for sink in sinks(merged) {
        kept[sink as usize] = true;
    }
    let scheduler = Scheduler {
        merged,
        lanes,
        backend,
        max_size,
        tick,
        readers_left: users.iter().map(|u| AtomicUsize::new(u.len())).collect(),
        users,
        pending,
        kept,
        slots: (0..n).map(|_| Mutex::new(None)).collect(),
        timings: (0..n).map(|_| OnceLock::new()).collect(),
        domains,
    };
    rayon::scope(|s| {
        for k in 0..n {
            if scheduler.domains[k].is_some() && merged.nodes[k].args.is_empty() {
                let scheduler = &scheduler;
                s.spawn(move |s| scheduler.run(s, k));
            }
        }
    });
    Evaluation {
        columns: scheduler
            .slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect(),
        timings: scheduler.timings.into_iter().map(OnceLock::into_inner).collect(),
    }
}

/// The distinct argument nodes of a node.
fn distinct(args: &[NodeId]) -> SmallVec<[usize; 4]> {
    let mut out: SmallVec<[usize; 4]> = args.iter().map(|&a| a as usize).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Dataflow scheduling: a node runs as soon as its last argument is ready (a rayon task), and
/// a column is dropped as soon as its last reader is done, unless scoring reads it. Unlike a
/// depth-by-depth sweep, one slow lane holds up only the nodes that need it.
struct Scheduler<'a, 't> {
    merged: &'a Merged,
    lanes: &'a Lanes<'t>,
    backend: &'a dyn Backend,
    max_size: Option<usize>,
    tick: &'a (dyn Fn() + Sync),
    domains: Vec<Option<Arc<Domain>>>,
    /// The nodes that read each node (each once).
    users: Vec<Vec<usize>>,
    /// Arguments not yet evaluated, per node.
    pending: Vec<AtomicUsize>,
    /// Readers not yet done, per node.
    readers_left: Vec<AtomicUsize>,
    /// Columns scoring reads, kept to the end.
    kept: Vec<bool>,
    slots: Vec<Mutex<Option<Arc<Column>>>>,
    timings: Vec<OnceLock<NodeTiming>>,
}

impl Scheduler<'_, '_> {
    fn slot(&self, k: usize) -> std::sync::MutexGuard<'_, Option<Arc<Column>>> {
        self.slots[k].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Evaluates node `k`, then starts the readers it was the last argument of and drops the
    /// columns it was the last reader of.
    fn run<'s>(&'s self, s: &rayon::Scope<'s>, k: usize) {
        let node = &self.merged.nodes[k];
        let domain = match &self.domains[k] {
            Some(d) => d.clone(),
            None => return,
        };
        let args: SmallVec<[Option<Arc<Column>>; 4]> =
            node.args.iter().map(|&a| self.slot(a as usize).clone()).collect();
        let start = Instant::now();
        let mut column = evaluate_node(node, domain, &args, self.lanes, self.backend, self.max_size);
        if let Some(cap) = self.max_size {
            column.cap(cap);
        }
        let units = column.units();
        let _ = self.timings[k].set(NodeTiming {
            seconds: start.elapsed().as_secs_f64(),
            units,
        });
        drop(args);
        *self.slot(k) = Some(Arc::new(column));
        (self.tick)();
        for &u in &self.users[k] {
            if self.pending[u].fetch_sub(1, Ordering::AcqRel) == 1 {
                s.spawn(move |s| self.run(s, u));
            }
        }
        for a in distinct(&node.args) {
            if !self.kept[a] && self.readers_left[a].fetch_sub(1, Ordering::AcqRel) == 1 {
                *self.slot(a) = None;
            }
        }
    }
}

/// The number of nodes [`evaluate`] runs (and ticks for) with these solver tasks.
pub fn live_nodes(merged: &Merged, lanes: &Lanes<'_>, solver_tasks: &[Vec<u32>]) -> usize {
    domains(merged, lanes, solver_tasks)
        .iter()
        .filter(|d| d.is_some())
        .count()
}

/// The nodes scoring reads: every outcome's output and guards.
fn sinks(merged: &Merged) -> Vec<NodeId> {
    let mut out = Vec::new();
    for s in &merged.solvers {
        for o in std::iter::once(&s.outcome).chain(&s.differs) {
            out.push(o.output);
            out.extend_from_slice(&o.guards);
        }
    }
    out
}

/// The domain of each node (`None` for nodes no solver needs), interned.
fn domains(merged: &Merged, lanes: &Lanes<'_>, solver_tasks: &[Vec<u32>]) -> Vec<Option<Arc<Domain>>> {
    let mut tasks: Vec<Vec<u32>> = vec![Vec::new(); merged.nodes.len()];
    merged.visit_reads(
        |k| !solver_tasks[k].is_empty(),
        |k, i| tasks[i].extend_from_slice(&solver_tasks[k]),
    );
    let mut interned: HashMap<Vec<u32>, Arc<Domain>> = HashMap::new();
    tasks
        .into_iter()
        .map(|mut t| {
            if t.is_empty() {
                return None;
            }
            t.sort_unstable();
            t.dedup();
            Some(
                interned
                    .entry(t.clone())
                    .or_insert_with(|| Arc::new(Domain::new(t, lanes)))
                    .clone(),
            )
        })
        .collect()
}

/// An argument column seen from a node's units (its lanes, its tasks, or its one value).
enum Gathered<'a> {
    One(&'a LaneResult),
    Each(Vec<&'a LaneResult>),
}

impl<'a> Gathered<'a> {
    fn get(&self, u: usize) -> &'a LaneResult {
        match self {
            Gathered::One(v) => v,
            Gathered::Each(vs) => vs[u],
        }
    }
}

/// The values of `column` on the units of a node of `level` over `dom`.
fn gather<'a>(column: &'a Column, level: Level, dom: &Domain, lanes: &Lanes<'_>) -> Gathered<'a> {
    let from = &column.domain;
    match (&column.values, level) {
        (Values::One(v), _) => Gathered::One(v),
        (Values::PerTask(vs), Level::Task) => {
            Gathered::Each(dom.tasks.iter().map(|&t| &vs[from.pos[t as usize] as usize]).collect())
        }
        (Values::PerTask(vs), _) => {
            let mut out = Vec::with_capacity(dom.lanes);
            for &t in &dom.tasks {
                let v = &vs[from.pos[t as usize] as usize];
                out.extend(std::iter::repeat(v).take(lanes.samples(t as usize)));
            }
            Gathered::Each(out)
        }
        (Values::PerLane(vs), _) if std::ptr::eq(from.as_ref(), dom) => Gathered::Each(vs.iter().collect()),
        (Values::PerLane(vs), _) => {
            let mut out = Vec::with_capacity(dom.lanes);
            for &t in &dom.tasks {
                let start = from.lane_start[from.pos[t as usize] as usize];
                out.extend(&vs[start..start + lanes.samples(t as usize)]);
            }
            Gathered::Each(out)
        }
    }
}

/// Evaluates one node over its domain, given its argument columns.
fn evaluate_node(
    node: &Node,
    domain: Arc<Domain>,
    args: &[Option<Arc<Column>>],
    lanes: &Lanes<'_>,
    backend: &dyn Backend,
    max_size: Option<usize>,
) -> Column {
    let values = match &node.op {
        NodeOp::Const(c) => Values::One(Ok(c.value())),
        NodeOp::Input(Input::S) => Values::PerTask(
            domain
                .tasks
                .iter()
                .map(|&t| Ok(lanes.pairs[t as usize].clone()))
                .collect(),
        ),
        NodeOp::Input(input) => {
            let source = if *input == Input::I {
                &lanes.inputs
            } else {
                &lanes.expected
            };
            let mut vs = Vec::with_capacity(domain.lanes);
            for &t in &domain.tasks {
                let start = lanes.lane(t as usize, 0);
                vs.extend(source[start..start + lanes.samples(t as usize)].iter().cloned().map(Ok));
            }
            Values::PerLane(vs)
        }
        NodeOp::Prim(_) | NodeOp::Call | NodeOp::Group(_) | NodeOp::Pick { .. } => {
            let gathered: SmallVec<[Gathered<'_>; 4]> = args
                .iter()
                .map(|c| match c {
                    Some(c) => gather(c, node.level, &domain, lanes),
                    None => unreachable_column(),
                })
                .collect();
            call_node(&node.op, node.level, &gathered, &domain, backend, max_size)
        }
    };
    Column { domain, values }
}

/// A column read after it was dropped: a bug in the liveness bookkeeping. Never happens; kept
/// as a panic-free error lane so a bug shows as wrong answers in tests, not a crash.
fn unreachable_column<'a>() -> Gathered<'a> {
    static MISSING: std::sync::LazyLock<LaneResult> = std::sync::LazyLock::new(|| {
        Err(crate::dsl::DslError::Internal(
            "a column was dropped before its last use".into(),
        ))
    });
    Gathered::One(&MISSING)
}

/// Calls a step's primitive or function value on every unit whose arguments are values; a unit
/// with an error argument takes the first such error.
fn call_node(
    op: &NodeOp,
    level: Level,
    args: &[Gathered<'_>],
    domain: &Domain,
    backend: &dyn Backend,
    max_size: Option<usize>,
) -> Values {
    // Every argument the same on every lane, or an error on every lane: compute once. (A
    // pick's group failing everywhere is no error of the pick: it computes its call instead.)
    let checked = if matches!(op, NodeOp::Pick { .. }) {
        &args[1..]
    } else {
        args
    };
    if args.iter().all(|a| matches!(a, Gathered::One(_))) || checked.iter().any(|a| matches!(a, Gathered::One(Err(_))))
    {
        return Values::One(
            call_units(op, args, 1, backend, max_size)
                .into_iter()
                .next()
                .unwrap_or(Ok(Value::None)),
        );
    }
    let units = match level {
        Level::Const => 1,
        Level::Task => domain.tasks.len(),
        Level::Lane => domain.lanes,
    };
    let results = call_units(op, args, units, backend, max_size);
    match level {
        Level::Task => Values::PerTask(results),
        _ => Values::PerLane(results),
    }
}

/// The results on `units` units. With a size budget, a unit whose call would do more work
/// than the budget allows ([`over_budget`]) fails before it starts.
fn call_units(
    op: &NodeOp,
    args: &[Gathered<'_>],
    units: usize,
    backend: &dyn Backend,
    max_size: Option<usize>,
) -> Vec<LaneResult> {
    if let NodeOp::Pick { part, prim } = op {
        return pick_units(*part as usize, *prim, args, units, backend);
    }
    let failure = |u: usize| -> Option<DslError> {
        match args.iter().map(|a| a.get(u)).find_map(|r| r.as_ref().err()) {
            Some(e) => Some(e.clone()),
            None => max_size.and_then(|cap| over_budget(op, args, u, cap)),
        }
    };
    let mut failures: Vec<Option<DslError>> = (0..units).map(failure).collect();
    let ok = Selection::new(units, |&u| failures[u].is_none());
    let batched: Vec<Arg<'_>> = args
        .iter()
        .map(|a| match a {
            Gathered::One(Ok(v)) => Arg::Same(v),
            _ => {
                // Sized at once: the units taken are those whose arguments have no error.
                let mut each = Vec::with_capacity(ok.len());
                each.extend(ok.taken().iter().filter_map(|&u| a.get(u).as_ref().ok()));
                Arg::Each(each)
            }
        })
        .collect();
    let results = match op {
        NodeOp::Prim(id) => call_prim(backend, *id, &batched, ok.len()),
        NodeOp::Group(g) => call_group(backend, g, &batched[0], ok.len()),
        _ => call_value(backend, &batched[0], &batched[1..], ok.len()),
    };
    if ok.is_all() {
        return results;
    }
    ok.merge(results, |u| Err(failures[u].take().expect("a unit not taken failed")))
}

/// The work budget of a call on unit `u`: `prapply(f, a, b)` calls `f` on every pair of `a`
/// and `b`, so past `cap` pairs it fails at once with [`DslError::TooLarge`] rather than run
/// to its time limit (`product` is capped where it is built, by the backend's member cap).
fn over_budget(op: &NodeOp, args: &[Gathered<'_>], u: usize, cap: usize) -> Option<DslError> {
    static PRAPPLY: std::sync::LazyLock<Option<PrimId>> = std::sync::LazyLock::new(|| PrimId::of("prapply"));
    if !matches!(op, NodeOp::Prim(id) if Some(*id) == *PRAPPLY) {
        return None;
    }
    let len = |k: usize| args[k].get(u).as_ref().ok().and_then(Value::len).unwrap_or(0);
    let pairs = len(1).saturating_mul(len(2));
    (pairs > cap)
        .then(|| DslError::TooLarge(format!("prapply over {pairs} pairs, past the size budget of {cap}").into()))
}

/// A pick on `units` units: the group's element where the group has a tuple, else the call
/// the element stands for (`prim` on the other arguments), computed for those units only; a
/// unit with an error among those arguments takes the first such error, as the call would.
fn pick_units(
    part: usize,
    prim: PrimId,
    args: &[Gathered<'_>],
    units: usize,
    backend: &dyn Backend,
) -> Vec<LaneResult> {
    let call_args = &args[1..];
    let mut known: Vec<Option<LaneResult>> = (0..units)
        .map(|u| {
            if let Some(e) = call_args.iter().map(|a| a.get(u)).find_map(|r| r.as_ref().err()) {
                return Some(Err(e.clone()));
            }
            match args[0].get(u) {
                // The group's value is the tuple of its parts, in whichever representation.
                Ok(parts) if parts.is_tuple() => parts.member(part).map(Ok),
                _ => None,
            }
        })
        .collect();
    let missing = Selection::new(units, |&u| known[u].is_none());
    if missing.is_empty() {
        return known.into_iter().flatten().collect();
    }
    let batched: Vec<Arg<'_>> = call_args
        .iter()
        .map(|a| match a {
            Gathered::One(Ok(v)) => Arg::Same(v),
            _ => Arg::Each(missing.taken().iter().filter_map(|&u| a.get(u).as_ref().ok()).collect()),
        })
        .collect();
    let computed = call_prim(backend, prim, &batched, missing.len());
    missing.merge(computed, |u| known[u].take().expect("a unit not missing is known"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::{Grid, Loc};

    /// Sizes count cells and members through nested containers; the cap turns exactly the
    /// values past it into `TooLarge` errors and leaves errors and smaller values alone.
    #[test]
    fn the_size_budget_fails_exactly_the_values_past_it() {
        let grid = Value::grid(Grid::filled(3, 4, 1));
        let locs = |n: i32| Value::indices((0..n).map(|j| Loc { i: 0, j }).collect());
        let set = Value::set(vec![locs(5), locs(7), Value::Int(3)]);
        assert_eq!(size(&grid, 100), 12);
        assert_eq!(size(&locs(9), 100), 9);
        assert_eq!(size(&set, 100), 3 + 5 + 7);
        assert_eq!(size(&Value::Int(4), 100), 0);
        let dom = Arc::new(Domain::new(Vec::new(), &Lanes::new(Vec::new())));
        let mut column = Column {
            domain: dom,
            values: Values::PerLane(vec![Ok(grid.clone()), Ok(set.clone()), Err(DslError::Timeout)]),
        };
        column.cap(12);
        let Values::PerLane(vs) = &column.values else {
            panic!("a column of lanes")
        };
        assert!(vs[0].as_ref().is_ok_and(|v| *v == grid));
        assert!(matches!(&vs[1], Err(DslError::TooLarge(m)) if m.contains("size budget of 12")));
        assert_eq!(vs[2], Err(DslError::Timeout));
    }
}
