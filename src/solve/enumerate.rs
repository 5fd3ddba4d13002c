//! Bottom-up enumeration of one task's values with observational equivalence.
//!
//! Every value is a *column*: its value on each of the task's inputs, train inputs then test
//! inputs. The enumerator starts from the input grid `I` and constants, then builds calls of
//! the registry's primitives on the values it holds, in order of cost (a call costs its
//! primitive's [`prior::cost`] plus its arguments' costs; the input, the task's colours and
//! the common constants cost nothing, so that the cost of a program is the weighted count of
//! its calls). A new column is kept only if no
//! column of the same kind was kept before: programs that compute the same values on every
//! input are one node, reached by the cheapest of them. Arguments are typed by the kind of
//! the column that holds them ([`Kind`]); function values (`rbind(colorcount, TWO)`,
//! `compose(size, toindices)`, `matcher(color, FIVE)`, ...) are columns too, with a
//! [`Sig`]nature, applied to containers by `apply`, `mapply`, `sfilter`, `argmax`, ....
//!
//! A grid column equal to the train outputs on every train input is a candidate. Test outputs
//! are never known here: the enumerator only sees inputs and train outputs.

use std::hash::{BuildHasher, Hash, Hasher};
use std::time::Instant;

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::kinds::{accepts, fits, Kind, Kinds, Sig};
use super::pieces::{Ink, Piece, Pieces};
use super::prior;
use super::recolour::ColourMap;
use super::tiles::Tiles;
use crate::batch::ops::has_batched_op;
use crate::batch::{call_prim, Arg, Backend, LaneResult};
use crate::dsl::constants::CONSTANTS;
use crate::dsl::func::Deadline;
use crate::dsl::shared::Shared;
use crate::dsl::{memory, registry, Color, DslError, Func, Grid, GridRef, PrimId, Ty, Value};

/// How a node's values were computed.
#[derive(Clone, Debug)]
pub enum Expr {
    /// The input grid `I`.
    Input,
    /// A constant (an integer, a boolean or an integer pair).
    Const(Value),
    /// A primitive as a function value.
    Prim(PrimId),
    /// A primitive called on other nodes.
    Call(PrimId, SmallVec<[u32; 3]>),
}

/// A candidate: a grid node that gives every train output, itself or finished so.
#[derive(Clone, Debug)]
pub struct Found {
    pub node: u32,
    pub finish: Finish,
}

/// What follows a candidate's node.
#[derive(Clone, Debug)]
pub enum Finish {
    /// Nothing: the node is the output.
    Exact,
    /// A colour map learned from the train pairs.
    Recolour(ColourMap),
    /// Pieces drawn on it.
    Pieces(SmallVec<[Piece; 3]>),
    /// Tiled with other grid nodes: `blocks` row-major, `across` to a row; the candidate's
    /// node is the first block.
    Tiles { across: usize, blocks: Vec<u32> },
}

impl Found {
    /// The cost candidates are ranked by: the node's, plus two for a recolouring, plus each
    /// piece's patch and one for drawing it.
    pub fn cost(&self, e: &Enumerator) -> u32 {
        let node = e.nodes[self.node as usize].cost as u32;
        node + match &self.finish {
            Finish::Exact => 0,
            Finish::Recolour(_) => 2,
            Finish::Pieces(pieces) => pieces.iter().map(|p| e.nodes[p.patch as usize].cost as u32 + 1).sum(),
            // Each further block and the concatenation that joins it.
            Finish::Tiles { blocks, .. } => blocks[1..].iter().map(|&b| e.nodes[b as usize].cost as u32 + 1).sum(),
        }
    }
}

/// One distinct column.
pub struct Node {
    pub col: Box<[Value]>,
    pub kind: Kind,
    /// An integer column whose every value is a colour of the task.
    pub colour: bool,
    /// For function values: what they take and return.
    pub sig: Option<Sig>,
    pub cost: u8,
    pub expr: Expr,
}

/// When to stop enumerating one task.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Stop at this instant.
    pub until: Instant,
    /// Stop after this many columns evaluated (deterministic, unlike time).
    pub max_evaluations: Option<u64>,
    /// Stop when the kept columns take about this many bytes.
    pub max_bytes: usize,
    /// Stop when the whole process holds this many bytes (all the tasks enumerated at once).
    pub max_resident: usize,
}

/// Why enumeration stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Time,
    Evaluations,
    Memory,
    /// Enough candidates were found.
    Enough,
    /// Every level up to the deepest was enumerated.
    Exhausted,
}

impl Stop {
    pub fn name(self) -> &'static str {
        match self {
            Stop::Time => "time",
            Stop::Evaluations => "evaluations",
            Stop::Memory => "memory",
            Stop::Enough => "enough candidates",
            Stop::Exhausted => "every level",
        }
    }
}

/// The most base grids pieces are drawn on.
const MAX_BASES: usize = 4;

/// The deepest cost level enumerated.
pub const MAX_LEVEL: u8 = 12;

/// The most a value of each kind may cost to be kept as an argument of further calls (grids
/// are kept to [`MAX_LEVEL`]). Function values and numbers are cheap to build and many, and
/// every one multiplies the calls of the level above: past these costs they are what the
/// levels would be made of, not the grids the outputs are.
fn max_cost(kind: Kind) -> u8 {
    match kind {
        Kind::Grid => MAX_LEVEL,
        Kind::Func => MAX_FUNC_COST,
        Kind::Int | Kind::Pair | Kind::Bool | Kind::Cell => 3,
        _ => 6,
    }
}

/// The most a grid read by an analysing primitive (`objects`, `ofcolor`, ...) may cost: the
/// published solvers analyse the input or a grid cut from it, and the values read from grids
/// built later are most of a level's calls and little of its use.
const MAX_ANALYSED_COST: u8 = 3;

/// The most a function value may cost.
const MAX_FUNC_COST: u8 = 4;

/// Columns with a grid larger than ARC's 30x30, or a container of more members than this, are
/// not kept: ARC outputs never need them, and they are what makes a search slow.
const MAX_MEMBERS: usize = 1024;

/// Most calls one batched call of [`Enumerator::call_batched`] takes (each a lane per input).
const BATCH_CALLS: usize = 1024;

/// A primitive the enumerator calls, with its cost and the role its function parameter
/// plays, if it has one.
struct Plan {
    id: PrimId,
    cost: u8,
    role: Role,
    /// The parameters that are colours, one bit each.
    colours: u8,
    /// Whether it reads a grid into something else (`objects`, `ofcolor`, `palette`, ...):
    /// its grid arguments cost at most [`MAX_ANALYSED_COST`].
    analyses: bool,
    /// Whether it reads a container by position (`first`, `last`): only tuples fit it. The
    /// reference iterates a frozenset in hash order, which the canonical order arcbatch
    /// follows is not: `first(objects(...))` would give another object under `dsl.py`.
    positional: bool,
    /// Whether two of its parameters take any value, which must then be of one kind
    /// (`equality(a, b)`; `branch(c, a, b)`, whose condition must also vary).
    same_kinds: bool,
}

/// What a primitive does with function values, for the signature checks of its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// No function parameter.
    Plain,
    /// `apply(f, c)` / `mapply(f, c)`: `f` over `c`'s members (for `mapply` returning sets).
    Map {
        merges: bool,
    },
    /// `sfilter(c, f)`, `mfilter`, `extract`: `f` a predicate on `c`'s members.
    Filter,
    /// `argmax(c, f)`, `argmin`, `valmax`, `valmin`: `f` a number of `c`'s members.
    Rank,
    Compose,
    Fork,
    Rbind,
    Lbind,
    Matcher,
}

fn role(name: &str) -> Option<Role> {
    Some(match name {
        "apply" => Role::Map { merges: false },
        "mapply" => Role::Map { merges: true },
        "sfilter" | "mfilter" | "extract" => Role::Filter,
        "argmax" | "argmin" | "valmax" | "valmin" => Role::Rank,
        "compose" => Role::Compose,
        "fork" => Role::Fork,
        "rbind" => Role::Rbind,
        "lbind" => Role::Lbind,
        "matcher" => Role::Matcher,
        _ if PrimId::of(name)?.spec().params.contains(&Ty::Callable) => return None,
        _ => Role::Plain,
    })
}

/// The parameters of a primitive that are colours (the registry types them as integers):
/// only columns holding colours of the task fit them.
fn colour_params(name: &str) -> u8 {
    match name {
        "fill" | "underfill" | "ofcolor" | "colorcount" | "colorfilter" => 0b010,
        "replace" | "switch" => 0b110,
        "recolor" | "canvas" => 0b001,
        "cellwise" => 0b100,
        _ => 0,
    }
}

/// The primitives enumerated, cheapest first (registry order among equals).
fn plans() -> Vec<Plan> {
    let mut plans: Vec<Plan> = registry()
        .ids()
        .filter(|&id| prior::enumerated(id))
        .filter_map(|id| {
            let name = id.spec().name;
            Some(Plan {
                id,
                cost: prior::cost(id),
                role: role(name)?,
                colours: colour_params(name),
                positional: matches!(name, "first" | "last"),
                analyses: accepts(id.spec().ret) & Kind::Grid.bit() == 0
                    && id.spec().params.iter().any(|&t| accepts(t) & Kind::Grid.bit() != 0),
                same_kinds: id.spec().params.iter().filter(|&&t| t == Ty::Any).count() >= 2,
            })
        })
        .collect();
    plans.sort_by_key(|p| (p.cost, p.id));
    plans
}

/// The enumeration state of one task.
pub struct Enumerator {
    /// Inputs: train inputs then test inputs.
    inputs: Vec<Value>,
    /// The train outputs, the first `targets.len()` inputs' expected values.
    targets: Vec<Value>,
    pub nodes: Vec<Node>,
    seen: HashMap<u64, SmallVec<[u32; 1]>>,
    by_cost: Vec<Vec<u32>>,
    /// Nodes of one cost that fit a parameter's kinds, built once the cost's level is done.
    fitting: HashMap<(u8, Kinds), Vec<u32>>,
    /// The candidates, in the order found.
    pub candidates: Vec<Found>,
    /// Pieces of the outputs drawn on a base grid with the outputs' shapes: `I` where the
    /// outputs have the inputs' shapes, and the first grids found with them (a half, a crop).
    pieces: Vec<(u32, Pieces)>,
    /// The blocks of the outputs, where they tile their inputs' shape; taken once tiled.
    tiles: Option<Tiles>,
    /// Grid nodes by the hash of their train values (for the tiles' blocks).
    grids_by_train: HashMap<u64, SmallVec<[u32; 1]>>,
    /// Integer nodes holding colours, cheapest first (for the pieces' colours).
    colour_nodes: Vec<u32>,
    /// The colours of the task's grids (inputs and train outputs).
    colours: [bool; 10],
    /// Columns evaluated (kept or not).
    pub evaluations: u64,
    bytes: usize,
    plans: Vec<Plan>,
}

impl Enumerator {
    /// The enumerator of a task: `train` its (input, output) pairs, `test` its test inputs.
    pub fn new(train: &[(Shared<Grid>, Shared<Grid>)], test: &[Shared<Grid>]) -> Enumerator {
        let inputs: Vec<Value> = train
            .iter()
            .map(|(i, _)| i)
            .chain(test)
            .map(|g| Value::Grid(g.clone()))
            .collect();
        let targets = train.iter().map(|(_, o)| Value::Grid(o.clone())).collect();
        let mut e = Enumerator {
            inputs,
            targets,
            nodes: Vec::new(),
            seen: HashMap::new(),
            by_cost: vec![Vec::new(); MAX_LEVEL as usize + 1],
            fitting: HashMap::new(),
            candidates: Vec::new(),
            evaluations: 0,
            bytes: 0,
            colours: [false; 10],
            pieces: Vec::new(),
            tiles: Tiles::new(train),
            grids_by_train: HashMap::new(),
            colour_nodes: Vec::new(),
            plans: plans(),
        };
        e.seed(train);
        e
    }

    fn constant(&mut self, v: Value, cost: u8) {
        let col = vec![v.clone(); self.inputs.len()].into_boxed_slice();
        if let Some(kind) = Kind::of_column(&col) {
            self.keep(col, kind, None, cost, Expr::Const(v));
        }
    }

    /// The leaves: `I`, the task's colours and the DSL's constants, primitives as function
    /// values, and the train outputs' shape where it is the same for every pair.
    fn seed(&mut self, train: &[(Shared<Grid>, Shared<Grid>)]) {
        let col = self.inputs.clone().into_boxed_slice();
        if let Some(kind) = Kind::of_column(&col) {
            self.keep(col, kind, None, 0, Expr::Input);
        }
        let mut present = [false; 10];
        for g in self.inputs.iter().chain(&self.targets) {
            if let Value::Grid(g) = g {
                for &c in &g.cells {
                    present[c.clamp(0, 9) as usize] = true;
                }
            }
        }
        self.colours = present;
        for (c, &here) in present.iter().enumerate() {
            if here {
                self.constant(Value::Int(c as i64), 0);
            }
        }
        for &(name, c) in CONSTANTS {
            if name.starts_with('R') && name.len() == 2 {
                continue; // the search dialect's o_g modes
            }
            let cheap = matches!(name, "T" | "F" | "ZERO" | "ONE" | "TWO" | "ORIGIN" | "UNITY");
            self.constant(c.value(), if cheap { 0 } else { 1 });
        }
        let shapes: Vec<(usize, usize)> = train.iter().map(|(_, o)| (o.h, o.w)).collect();
        if let Some(&(h, w)) = shapes.first() {
            if shapes.iter().all(|&s| s == (h, w)) && h <= 10 && w <= 10 {
                self.constant(Value::Pair(h as i64, w as i64), 0);
            }
        }
        for k in 0..self.plans.len() {
            let (id, cost) = (self.plans[k].id, self.plans[k].cost);
            if self.plans[k].role == Role::Plain {
                if let Some(sig) = Sig::of_prim(id) {
                    let f = Value::prim(id);
                    let col = vec![f; self.inputs.len()].into_boxed_slice();
                    self.keep(col, Kind::Func, Some(sig), cost, Expr::Prim(id));
                }
            }
        }
    }

    /// Keeps a column unless one of the same kind is kept; returns whether it was new.
    fn keep(&mut self, col: Box<[Value]>, kind: Kind, sig: Option<Sig>, cost: u8, expr: Expr) -> bool {
        let hash = column_hash(kind, &col);
        let nodes = &self.nodes;
        let slot = self.seen.entry(hash).or_default();
        if slot
            .iter()
            .any(|&k| nodes[k as usize].kind == kind && nodes[k as usize].col == col)
        {
            return false;
        }
        if cost > max_cost(kind) {
            // Not kept as an argument; a grid is still a candidate (grids are never capped).
            return false;
        }
        let id = self.nodes.len() as u32;
        slot.push(id);
        self.bytes += col.iter().map(approx_bytes).sum::<usize>() + NODE_BYTES;
        if kind == Kind::Grid {
            let train = &col[..self.targets.len()];
            if self.targets.iter().zip(train).all(|(t, v)| t == v) {
                self.candidates.push(Found {
                    node: id,
                    finish: Finish::Exact,
                });
            } else if let Some(map) = ColourMap::learn(train, &self.targets).filter(|m| {
                col[self.targets.len()..]
                    .iter()
                    .all(|v| matches!(v, Value::Grid(g) if m.covers(g)))
            }) {
                self.candidates.push(Found {
                    node: id,
                    finish: Finish::Recolour(map),
                });
            }
        }
        self.by_cost[cost as usize].push(id);
        let colour = kind == Kind::Int
            && col
                .iter()
                .all(|v| matches!(v, Value::Int(c) if (0..10).contains(c) && self.colours[*c as usize]));
        self.nodes.push(Node {
            col,
            kind,
            colour,
            sig,
            cost,
            expr,
        });
        if colour {
            self.colour_nodes.push(id);
        }
        if kind == Kind::Grid && self.tiles.is_some() {
            let train = &self.nodes[id as usize].col[..self.targets.len()];
            self.grids_by_train
                .entry(column_hash(kind, train))
                .or_default()
                .push(id);
        }
        if kind == Kind::Grid && self.pieces.len() < MAX_BASES {
            let train = &self.nodes[id as usize].col[..self.targets.len()];
            let bases: Option<Vec<Shared<Grid>>> = train
                .iter()
                .map(|v| v.as_grid().ok().map(GridRef::into_shared))
                .collect();
            let outputs: Option<Vec<Shared<Grid>>> = self
                .targets
                .iter()
                .map(|v| v.as_grid().ok().map(GridRef::into_shared))
                .collect();
            if let Some(pieces) = bases.zip(outputs).and_then(|(b, o)| Pieces::new(&b, &o)) {
                self.pieces.push((id, pieces));
            }
        }
        if matches!(kind, Kind::Indices | Kind::Object) {
            self.try_pieces(id);
        }
        true
    }

    /// Whether every block of the outputs' tiles is a grid node now.
    fn try_tiles(&mut self) {
        let Some(tiles) = &self.tiles else { return };
        let n = self.targets.len();
        let find = |wanted: &[Value]| {
            self.grids_by_train
                .get(&column_hash(Kind::Grid, wanted))?
                .iter()
                .copied()
                .find(|&k| &self.nodes[k as usize].col[..n] == wanted)
        };
        let blocks: Option<Vec<u32>> = tiles.blocks.iter().map(|b| find(b)).collect();
        if let Some(blocks) = blocks {
            let across = tiles.across;
            self.candidates.push(Found {
                node: blocks[0],
                finish: Finish::Tiles { across, blocks },
            });
            self.tiles = None;
        }
    }

    /// Whether a new patch completes the train outputs as pieces drawn on a base.
    fn try_pieces(&mut self, patch: u32) {
        let mut bases = std::mem::take(&mut self.pieces);
        let n = self.targets.len();
        let nodes = &self.nodes;
        let colour_of = |colours: &[i64]| {
            self.colour_nodes.iter().copied().find(|&k| {
                nodes[k as usize].col[..n]
                    .iter()
                    .zip(colours)
                    .all(|(v, &c)| *v == Value::Int(c))
            })
        };
        for (base, pieces) in &mut bases {
            if let Some(done) = pieces.consider(patch, &nodes[patch as usize].col, colour_of) {
                self.candidates.push(Found {
                    node: *base,
                    finish: Finish::Pieces(done),
                });
            }
        }
        self.pieces = bases;
    }

    /// Enumerates level after level until the budget is spent or [`MAX_LEVEL`] is done;
    /// `stop_at_candidates` ends it once that many candidates are known. With a `backend`,
    /// the calls of each primitive that has a batched op ([`has_batched_op`]) run as one
    /// batched call per argument split, on every input at once (the `gpu` and `emu` backends
    /// run them on a device); the values kept, and so the candidates, are those of the calls
    /// one at a time.
    pub fn run(&mut self, budget: &Budget, stop_at_candidates: usize, backend: Option<&dyn Backend>) -> Stop {
        for level in 1..=MAX_LEVEL {
            let r = self.level(level, budget, stop_at_candidates, backend);
            self.try_tiles();
            if let Some(stop) = r {
                return stop;
            }
        }
        Stop::Exhausted
    }

    fn exhausted(&self, budget: &Budget) -> Option<Stop> {
        if budget.max_evaluations.is_some_and(|m| self.evaluations >= m) {
            return Some(Stop::Evaluations);
        }
        if self.bytes * MEMORY_FACTOR >= budget.max_bytes {
            return Some(Stop::Memory);
        }
        // The process's memory (as counted, [`memory::process_bytes`]) counts once this task
        // holds a fair part of it: what other tasks hold stops no task that has barely begun.
        let holds_part = self.bytes * MEMORY_FACTOR >= budget.max_bytes / 4;
        if holds_part && memory::process_bytes() as usize >= budget.max_resident {
            return Some(Stop::Memory);
        }
        if self.evaluations % 64 != 0 {
            return None;
        }
        // The deadline, an interrupt of the computation (Ctrl-C in Python, a signal), or the
        // thread's memory budget spent.
        match Deadline::check() {
            Err(DslError::TooLarge(_)) => Some(Stop::Memory),
            Err(_) => Some(Stop::Time),
            Ok(()) if Instant::now() >= budget.until => Some(Stop::Time),
            Ok(()) => None,
        }
    }

    /// One cost level: every call whose primitive and arguments cost `level` in all.
    fn level(
        &mut self,
        level: u8,
        budget: &Budget,
        stop_at_candidates: usize,
        backend: Option<&dyn Backend>,
    ) -> Option<Stop> {
        for k in 0..self.plans.len() {
            let (id, cost, role) = (self.plans[k].id, self.plans[k].cost, self.plans[k].role);
            let builds_function = matches!(
                role,
                Role::Compose | Role::Fork | Role::Rbind | Role::Lbind | Role::Matcher
            );
            if cost > level || (builds_function && level > MAX_FUNC_COST) {
                continue;
            }
            let params = id.spec().params;
            let rest = level - cost;
            let masks: SmallVec<[Kinds; 4]> = params.iter().map(|&t| accepts(t)).collect();
            for split in compositions(rest, params.len()) {
                let analysis = self.plans[k].analyses;
                let lists: Option<SmallVec<[Vec<u32>; 4]>> = split
                    .iter()
                    .zip(&masks)
                    .map(|(&c, &m)| {
                        let m = if analysis && c > MAX_ANALYSED_COST {
                            m & !Kind::Grid.bit()
                        } else {
                            m
                        };
                        self.fitting(c, m)
                    })
                    .collect();
                let Some(lists) = lists else { continue };
                let batched = backend.filter(|_| has_batched_op(id));
                // With a backend, the calls waiting for one batched call.
                let mut waiting: Vec<(SmallVec<[u32; 3]>, Option<Sig>)> = Vec::new();
                let mut pick: SmallVec<[usize; 4]> = SmallVec::from_elem(0, lists.len());
                'tuples: loop {
                    let args: SmallVec<[u32; 3]> = pick.iter().zip(&lists).map(|(&p, l)| l[p]).collect();
                    if let Some(sig) = self.check(&self.plans[k], &args) {
                        if let Some(stop) = self.exhausted(budget) {
                            // The calls before this one are evaluated, as one at a time.
                            let enough = batched.is_some_and(|backend| {
                                self.call_batched(backend, id, &mut waiting, level, stop_at_candidates)
                            });
                            return Some(if enough { Stop::Enough } else { stop });
                        }
                        self.evaluations += 1;
                        match batched {
                            Some(backend) => {
                                waiting.push((args, sig));
                                if waiting.len() >= BATCH_CALLS
                                    && self.call_batched(backend, id, &mut waiting, level, stop_at_candidates)
                                {
                                    return Some(Stop::Enough);
                                }
                            }
                            None => self.call(id, args, sig, level),
                        }
                        if self.candidates.len() >= stop_at_candidates {
                            return Some(Stop::Enough);
                        }
                    }
                    // The next tuple, the last argument fastest.
                    for p in (0..pick.len()).rev() {
                        pick[p] += 1;
                        if pick[p] < lists[p].len() {
                            continue 'tuples;
                        }
                        pick[p] = 0;
                    }
                    break;
                }
                if let Some(backend) = batched {
                    if self.call_batched(backend, id, &mut waiting, level, stop_at_candidates) {
                        return Some(Stop::Enough);
                    }
                }
            }
        }
        None
    }

    /// The nodes of cost `cost` whose kind is in `mask` (`None` if there are none).
    fn fitting(&mut self, cost: u8, mask: Kinds) -> Option<Vec<u32>> {
        let nodes = &self.nodes;
        let by_cost = &self.by_cost;
        let list = self.fitting.entry((cost, mask)).or_insert_with(|| {
            by_cost[cost as usize]
                .iter()
                .copied()
                .filter(|&k| nodes[k as usize].kind.bit() & mask != 0)
                .collect()
        });
        (!list.is_empty()).then(|| list.clone())
    }

    /// Whether a call with these arguments is typed well enough to evaluate, and for the
    /// primitives that build function values, the signature of the result
    /// (`Some(None)`: a plain value).
    fn check(&self, plan: &Plan, args: &[u32]) -> Option<Option<Sig>> {
        let role = plan.role;
        let node = |k: usize| &self.nodes[args[k] as usize];
        let colours_fit = (0..args.len()).all(|k| plan.colours & (1 << k) == 0 || node(k).colour);
        if !colours_fit || (plan.same_kinds && !self.same_kinds(args)) {
            return None;
        }
        if plan.positional && node(0).kind != Kind::Grids {
            return None;
        }
        let sig = |k: usize| node(k).sig;
        let member = |k: usize| node(k).kind.member();
        match role {
            Role::Plain => Some(None),
            Role::Map { merges } => {
                let (f, m) = (sig(0)?, member(1)?);
                let ok = f.takes(m) && (!merges || f.returns(accepts(Ty::FrozenSet)));
                ok.then_some(None)
            }
            Role::Filter => (sig(1)?.takes(member(0)?) && sig(1)?.returns(Kind::Bool.bit())).then_some(None),
            Role::Rank => (sig(1)?.takes(member(0)?) && sig(1)?.returns(Kind::Int.bit())).then_some(None),
            Role::Compose => {
                let (outer, inner) = (sig(0)?, sig(1)?);
                let ok = outer.arity == 1 && inner.arity == 1 && fits(inner.ret, outer.params[0]);
                ok.then(|| Some(Sig::unary(inner.params[0], outer.ret)))
            }
            Role::Fork => {
                let (outer, a, b) = (sig(0)?, sig(1)?, sig(2)?);
                let ok = outer.arity == 2
                    && a.arity == 1
                    && b.arity == 1
                    && fits(a.params[0], b.params[0])
                    && fits(a.ret, outer.params[0])
                    && fits(b.ret, outer.params[1]);
                ok.then(|| Some(Sig::unary(a.params[0], outer.ret)))
            }
            Role::Rbind | Role::Lbind => {
                let f = sig(0)?;
                let left = role == Role::Lbind;
                let fixed = if left { 0 } else { f.arity as usize - 1 };
                let ok = (2..=3).contains(&f.arity) && node(1).sig.is_none() && f.params[fixed] != Ty::Callable;
                let ok = ok && accepts(f.params[fixed]) & node(1).kind.bit() != 0;
                ok.then(|| Some(f.bound(left)))
            }
            Role::Matcher => {
                let f = sig(0)?;
                let ok = f.arity == 1 && node(1).sig.is_none() && accepts(f.ret) & node(1).kind.bit() != 0;
                ok.then(|| Some(Sig::unary(f.params[0], Ty::Boolean)))
            }
        }
    }

    /// For a primitive with two parameters of any type: the last two arguments are of one
    /// kind, and a third before them (`branch`'s condition) varies over the inputs.
    fn same_kinds(&self, args: &[u32]) -> bool {
        let node = |k: usize| &self.nodes[args[k] as usize];
        let n = args.len();
        let varies = |k: usize| node(k).col.iter().any(|v| *v != node(k).col[0]);
        node(n - 2).kind == node(n - 1).kind && (n == 2 || varies(0))
    }

    /// Evaluates a call on every input and keeps its column if it is new and usable.
    fn call(&mut self, id: PrimId, args: SmallVec<[u32; 3]>, sig: Option<Sig>, cost: u8) {
        let imp = id.spec().imp;
        let mut col = Vec::with_capacity(self.inputs.len());
        let mut argv: SmallVec<[Value; 4]> = SmallVec::new();
        for e in 0..self.inputs.len() {
            argv.clear();
            argv.extend(args.iter().map(|&a| self.nodes[a as usize].col[e].clone()));
            match imp(&argv) {
                Ok(v) if !too_big(&v) => col.push(v),
                _ => return,
            }
        }
        self.keep_call(col, id, args, sig, cost);
    }

    /// The calls `waiting` (emptied) as one batched call on `backend`, one lane per call and
    /// input; their columns are then kept in order as [`Enumerator::call`] keeps them, until
    /// `stop_at_candidates` candidates are known (`true`), the columns of later calls dropped
    /// and [`Enumerator::evaluations`] counting the calls up to there.
    fn call_batched(
        &mut self,
        backend: &dyn Backend,
        id: PrimId,
        waiting: &mut Vec<(SmallVec<[u32; 3]>, Option<Sig>)>,
        cost: u8,
        stop_at_candidates: usize,
    ) -> bool {
        let calls = std::mem::take(waiting);
        let inputs = self.inputs.len();
        let lanes = calls.len() * inputs;
        let results = {
            let nodes = &self.nodes;
            let arity = calls.first().map_or(0, |(args, _)| args.len());
            let args: Vec<Arg<'_>> = (0..arity)
                .map(|p| {
                    let column = |(args, _): &(SmallVec<[u32; 3]>, _)| nodes[args[p] as usize].col.iter();
                    Arg::Each(calls.iter().flat_map(column).collect())
                })
                .collect();
            call_prim(backend, id, &args, lanes)
        };
        let mut results = results.into_iter();
        let uncounted = calls.len() as u64;
        for (k, (args, sig)) in calls.into_iter().enumerate() {
            // Each call's lanes taken whole, whatever they hold, so that the next call's start.
            let lanes: Vec<LaneResult> = results.by_ref().take(inputs).collect();
            let col: Option<Vec<Value>> = lanes.into_iter().map(|r| r.ok().filter(|v| !too_big(v))).collect();
            if let Some(col) = col {
                self.keep_call(col, id, args, sig, cost);
            }
            if self.candidates.len() >= stop_at_candidates {
                self.evaluations -= uncounted - (k as u64 + 1);
                return true;
            }
        }
        false
    }

    /// Keeps the column of a call if it is new and usable.
    fn keep_call(&mut self, col: Vec<Value>, id: PrimId, args: SmallVec<[u32; 3]>, sig: Option<Sig>, cost: u8) {
        let Some(kind) = Kind::of_column(&col) else { return };
        if (kind == Kind::Func) != sig.is_some() {
            return;
        }
        self.keep(col.into_boxed_slice(), kind, sig, cost, Expr::Call(id, args));
    }

    /// A candidate's outputs on the test inputs, computed by the primitives themselves.
    pub fn test_outputs(&self, found: &Found) -> Vec<Value> {
        let n = self.targets.len();
        let values = &self.nodes[found.node as usize].col[n..];
        values
            .iter()
            .enumerate()
            .map(|(k, v)| match (&found.finish, v) {
                (Finish::Exact, _) => v.clone(),
                (Finish::Recolour(map), Value::Grid(g)) => Value::Grid(Shared::new(map.apply(g))),
                (Finish::Pieces(pieces), _) => pieces.iter().fold(v.clone(), |grid, p| {
                    let patch = self.nodes[p.patch as usize].col[n + k].clone();
                    let drawn = match p.ink {
                        Ink::Fill { colour } => {
                            let colour = self.nodes[colour as usize].col[n + k].clone();
                            (PrimId::builtin("fill").spec().imp)(&[grid, colour, patch])
                        }
                        Ink::Paint => (PrimId::builtin("paint").spec().imp)(&[grid, patch]),
                    };
                    drawn.unwrap_or(Value::None)
                }),
                (Finish::Tiles { across, blocks }, _) => {
                    let block = |b: u32| self.nodes[b as usize].col[n + k].clone();
                    let join = |name: &str, a: Value, b: Value| {
                        (PrimId::builtin(name).spec().imp)(&[a, b]).unwrap_or(Value::None)
                    };
                    let rows = blocks
                        .chunks(*across)
                        .map(|row| row.iter().map(|&b| block(b)).reduce(|a, b| join("hconcat", a, b)));
                    rows.flatten()
                        .reduce(|a, b| join("vconcat", a, b))
                        .unwrap_or(Value::None)
                }
                (_, other) => other.clone(),
            })
            .collect()
    }
}

/// Every way to write `total` as an ordered sum of `parts` parts (zero included: the leaves
/// cost nothing).
fn compositions(total: u8, parts: usize) -> Vec<SmallVec<[u8; 4]>> {
    let mut out = Vec::new();
    let mut current: SmallVec<[u8; 4]> = SmallVec::new();
    fn go(left: u8, parts: usize, current: &mut SmallVec<[u8; 4]>, out: &mut Vec<SmallVec<[u8; 4]>>) {
        if parts == 1 {
            current.push(left);
            out.push(current.clone());
            current.pop();
            return;
        }
        for first in 0..=left {
            current.push(first);
            go(left - first, parts - 1, current, out);
            current.pop();
        }
    }
    if parts == 0 {
        if total == 0 {
            out.push(current);
        }
        return out;
    }
    go(total, parts, &mut current, &mut out);
    out
}

fn too_big(v: &Value) -> bool {
    match v {
        Value::Grid(g) => g.h > 30 || g.w > 30,
        _ => v.len().is_some_and(|n| n > MAX_MEMBERS),
    }
}

/// How much more memory a run takes than the bytes counted (allocator headers and rounding,
/// the caches of argument lists, the allocator keeping freed pages): measured peak over
/// counted bytes on the evaluation tasks.
const MEMORY_FACTOR: usize = 2;

/// What a node costs besides its values: the node, its hash entry, its place in the lists.
const NODE_BYTES: usize = 160;

/// About how many bytes a value holds, for the memory budget.
fn approx_bytes(v: &Value) -> usize {
    24 + match v {
        Value::Grid(g) => g.cells.len() * 4,
        Value::Indices(l) => l.len() * 8,
        Value::Object(c) => c.len() * 12,
        Value::Tuple(items) | Value::Set(items) => items.iter().map(approx_bytes).sum(),
        _ => 0,
    }
}

/// A hash of a column and its kind, consistent with equality of values of one kind.
fn column_hash(kind: Kind, col: &[Value]) -> u64 {
    let mut h = FxLike(kind as u64);
    for v in col {
        hash_value(v, &mut h);
    }
    h.0
}

fn hash_value(v: &Value, h: &mut FxLike) {
    match v {
        Value::None => h.add(1),
        Value::Bool(b) => h.add(*b as u64),
        Value::Int(n) => h.add(*n as u64),
        Value::Pair(a, b) => {
            h.add(*a as u64);
            h.add(*b as u64);
        }
        Value::Grid(g) => {
            h.add((g.h << 8 | g.w) as u64);
            // All cells in one call (perf: two cells a word through `add`, one multiply after
            // another, was a tenth of `solve`).
            h.add(CELLS.hash_one(&g.cells[..]));
        }
        Value::Indices(l) => l.iter().for_each(|l| h.add(((l.i as u64) << 32) ^ l.j as u32 as u64)),
        Value::Object(c) => c.iter().for_each(|c| {
            h.add(((c.i as u64) << 32) ^ c.j as u32 as u64);
            h.add(c.color as u64);
        }),
        Value::Tuple(items) | Value::Set(items) => {
            h.add(items.len() as u64);
            items.iter().for_each(|m| hash_value(m, h));
        }
        Value::Func(f) => hash_func(f, h),
        other => other
            .members()
            .unwrap_or_default()
            .iter()
            .for_each(|m| hash_value(m, h)),
    }
}

/// A hash of a function value consistent with its equality: its shape, its primitive,
/// exponent or foreign identity, and its parts by [`hash_any`] (perf: hashing its printed form
/// was a fifth of `solve`).
fn hash_func(f: &Func, h: &mut FxLike) {
    std::mem::discriminant(f).hash(h);
    match f {
        Func::Prim(id) => id.hash(h),
        Func::Power(_, n) => h.add(u64::from(*n)),
        Func::Foreign(g) => g.get().id().hash(h),
        _ => {}
    }
    f.map(|part| hash_any(part, h));
}

/// A hash of any value consistent with equality across representations, as a function's
/// parts need: `True` equals 1, a grid the tuple of its rows, a pair the tuple of its two
/// integers, an index set the set of its locations. Tuples and sets hash their members in
/// order, which is canonical for sets.
fn hash_any(v: &Value, h: &mut FxLike) {
    const NONE: u64 = 0x6e6f_6e65;
    const TUPLE: u64 = 0x74_7570_6c65;
    const SET: u64 = 0x73_6574;
    let ints = |h: &mut FxLike, ints: &[Color]| {
        h.add(TUPLE);
        h.add(ints.len() as u64);
        ints.iter().for_each(|&c| h.add(i64::from(c) as u64));
    };
    match v {
        Value::None => h.add(NONE),
        Value::Bool(b) => h.add(u64::from(*b)),
        Value::Int(n) => h.add(*n as u64),
        Value::Pair(a, b) => {
            h.add(TUPLE);
            h.add(2);
            h.add(*a as u64);
            h.add(*b as u64);
        }
        Value::Ints(row) => ints(h, row),
        Value::Grid(g) => {
            h.add(TUPLE);
            h.add(g.h as u64);
            (0..g.h).for_each(|i| ints(h, g.row(i)));
        }
        Value::Func(f) => hash_func(f, h),
        _ => {
            let set = matches!(v, Value::Indices(_) | Value::Object(_) | Value::Set(_));
            let n = v.len().unwrap_or(0);
            h.add(if set { SET } else { TUPLE });
            h.add(n as u64);
            (0..n).filter_map(|k| v.member(k)).for_each(|m| hash_any(&m, h));
        }
    }
}

/// The hasher of grids' cells: seeded alike in every process, so that runs repeat.
const CELLS: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x9e37_79b9_7f4a_7c15);

/// A fast multiplicative hasher (the column hashes only pick a bucket; equality decides).
struct FxLike(u64);

impl FxLike {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxLike {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositions_cover_every_split() {
        assert_eq!(compositions(3, 1).len(), 1);
        assert_eq!(compositions(4, 2).len(), 5);
        assert_eq!(compositions(2, 3).len(), 6);
        assert_eq!(compositions(0, 2).len(), 1);
        assert!(compositions(5, 3).iter().all(|c| c.iter().sum::<u8>() == 5));
    }

    use crate::dsl::value::Items;
    use proptest::prelude::*;

    /// A value built through the compacting constructors or boxed at every level: equal values
    /// in different representations.
    #[derive(Clone, Debug)]
    enum Shape {
        Int(i64),
        Bool(bool),
        Tuple(Vec<Shape>),
        Set(Vec<Shape>),
        Grid(usize, Vec<Color>),
    }

    impl Shape {
        fn compact(&self) -> Value {
            match self {
                Shape::Int(n) => Value::Int(*n),
                Shape::Bool(b) => Value::Bool(*b),
                Shape::Tuple(items) => Value::tuple(items.iter().map(Shape::compact).collect()),
                Shape::Set(items) => Value::set(items.iter().map(Shape::compact).collect()),
                Shape::Grid(w, cells) => Value::grid(Grid::new(cells.len() / w, *w, cells.clone())),
            }
        }

        fn boxed(&self) -> Value {
            let tuple = |items: Vec<Value>| Value::Tuple(Items::new(items));
            match self {
                Shape::Int(n) => Value::Int(*n),
                Shape::Bool(b) => Value::Int(i64::from(*b)),
                Shape::Tuple(items) => tuple(items.iter().map(Shape::boxed).collect()),
                Shape::Set(items) => {
                    let mut members: Vec<Value> = items.iter().map(Shape::boxed).collect();
                    members.sort();
                    members.dedup();
                    Value::Set(Items::new(members))
                }
                Shape::Grid(w, cells) => tuple(
                    cells
                        .chunks(*w)
                        .map(|row| tuple(row.iter().map(|&c| Value::Int(c.into())).collect()))
                        .collect(),
                ),
            }
        }
    }

    fn shapes() -> impl Strategy<Value = Shape> {
        let int = || (-2i64..12).prop_map(Shape::Int);
        let loc = move || (int(), int()).prop_map(|(i, j)| Shape::Tuple(vec![i, j]));
        let leaf = prop_oneof![
            int(),
            any::<bool>().prop_map(Shape::Bool),
            proptest::collection::vec(int(), 0..5).prop_map(Shape::Tuple),
            loc(),
            (int(), loc()).prop_map(|(c, l)| Shape::Tuple(vec![c, l])),
            (loc(), loc()).prop_map(|(a, b)| Shape::Tuple(vec![a, b])),
            proptest::collection::vec(loc(), 0..4).prop_map(Shape::Set),
            proptest::collection::vec((int(), loc()).prop_map(|(c, l)| Shape::Tuple(vec![c, l])), 0..4)
                .prop_map(Shape::Set),
            (1usize..4, proptest::collection::vec(0..10, 1..4))
                .prop_map(|(h, row)| Shape::Grid(row.len(), row.repeat(h))),
        ];
        leaf.prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Shape::Tuple),
                proptest::collection::vec(inner, 0..4).prop_map(Shape::Set),
            ]
        })
    }

    fn func_hash(f: Func) -> u64 {
        column_hash(Kind::Func, &[Value::Func(Shared::new(f))])
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Equal function values hash alike whatever their parts' representations, as the
        /// enumerator's observational equivalence needs (a hash only picks a bucket).
        #[test]
        fn equal_function_values_hash_alike(shape in shapes(), other in shapes()) {
            let (compact, boxed) = (shape.compact(), shape.boxed());
            prop_assert_eq!(&compact, &boxed);
            let prim = |name| Value::prim(PrimId::of(name).expect("registered"));
            let bind = |v: Value| Func::Rbind(prim("combine"), v);
            prop_assert_eq!(func_hash(bind(compact.clone())), func_hash(bind(boxed.clone())));
            let nested = |v: Value| Func::Fork(prim("combine"), Value::Func(Shared::new(bind(v))), prim("identity"));
            prop_assert_eq!(func_hash(nested(compact.clone())), func_hash(nested(boxed)));
            if other.compact() != compact {
                // A hash that ignored the parts would pass the checks above.
                prop_assert_ne!(func_hash(bind(other.compact())), func_hash(bind(compact)));
            }
        }
    }

    #[test]
    fn function_values_of_other_shapes_or_primitives_hash_apart() {
        let prim = |name| Value::prim(PrimId::of(name).expect("registered"));
        let hashes = [
            func_hash(Func::Rbind(prim("combine"), Value::Int(1))),
            func_hash(Func::Lbind(prim("combine"), Value::Int(1))),
            func_hash(Func::Rbind(prim("difference"), Value::Int(1))),
            func_hash(Func::Rbind(prim("combine"), Value::Int(2))),
            func_hash(Func::Power(prim("rot90"), 2)),
            func_hash(Func::Power(prim("rot90"), 3)),
            func_hash(Func::Prim(PrimId::of("rot90").expect("registered"))),
        ];
        let distinct: std::collections::HashSet<u64> = hashes.iter().copied().collect();
        assert_eq!(distinct.len(), hashes.len());
    }
}
