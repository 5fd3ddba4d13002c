//! Many programs into one DAG: identical steps exist once.
//!
//! Each program's parameters bind to the DAG's three inputs (`S`, `I`, `C`), constants become
//! constant nodes, and each step becomes a node keyed by what it calls and the *nodes* of its
//! arguments, so two steps that compute the same thing after renaming are one node
//! (hash-consing; every primitive is pure, so sharing never changes a result). A node's
//! [`Level`] says how often it must be computed: once overall when it depends on constants
//! only, once per task when on `S` at most, once per sample otherwise.
//!
//! Differ programs `differ(S, I, C)` are added once per solver with `I` bound to the solver's
//! output node; their steps on `S` and `C` alone are shared between solvers.
//!
//! Without sharing (`--no-merge`) every step gets its own node: the same engine, the baseline
//! that shows what merging is worth.

use std::collections::HashMap;

use smallvec::SmallVec;

pub use crate::batch::Group;
use crate::dsl::PrimId;
use crate::program::{Callee, ConstKey, Operand, Program};
/// The inputs a program may read.
pub use crate::tasks::Input;

/// A node's index in [`Merged::nodes`]; arguments always have smaller indices.
pub type NodeId = u32;

/// What a node computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NodeOp {
    Input(Input),
    Const(ConstKey),
    /// A primitive on the argument nodes.
    Prim(PrimId),
    /// The function value of the first argument node, called on the others (`x5 = x3(x4)`).
    Call,
    /// Several calls on one argument node computed together (a generation-time rewrite,
    /// `src/gen/rewrite.rs`); the value is the tuple of their results.
    Group(Group),
    /// Element `part` of the group that is the first argument node; where the group failed,
    /// `prim` on the other argument nodes (the call the element stands for).
    Pick {
        part: u8,
        prim: PrimId,
    },
}

/// How often a node's value must be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Once overall: it depends on constants only.
    Const,
    /// Once per task: it depends on `S` (and constants).
    Task,
    /// Once per sample.
    Lane,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op: NodeOp,
    pub args: SmallVec<[NodeId; 4]>,
    pub level: Level,
}

impl Node {
    /// Whether the node is a step (a call), not an input or a constant.
    pub fn is_step(&self) -> bool {
        !matches!(self.op, NodeOp::Input(_) | NodeOp::Const(_))
    }
}

/// Where one program's result lives in the DAG.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The node of the returned value.
    pub output: NodeId,
    /// Nodes of the program's steps that its output does not depend on. The interpreter runs
    /// them anyway and fails when one raises, so the outcome fails with them.
    pub guards: Vec<NodeId>,
}

/// One solver in the DAG, with its differs.
#[derive(Clone, Debug)]
pub struct MergedSolver {
    pub name: String,
    pub outcome: Outcome,
    /// One per differ program, in the order given.
    pub differs: Vec<Outcome>,
}

/// The merged program.
#[derive(Clone, Debug, Default)]
pub struct Merged {
    pub nodes: Vec<Node>,
    pub solvers: Vec<MergedSolver>,
    pub differ_names: Vec<String>,
    /// Steps of every program added (solvers and each differ instance), before merging.
    pub steps_total: usize,
}

impl Merged {
    /// Distinct steps: the nodes that are calls.
    pub fn steps_merged(&self) -> usize {
        self.nodes.iter().filter(|n| n.is_step()).count()
    }

    /// Calls `visit(k, node)` once for each node solver `k` reads (its own and its differs'
    /// outputs and guards, and what they read in turn), solver after solver, for the solvers
    /// `include` accepts.
    pub fn visit_reads(&self, mut include: impl FnMut(usize) -> bool, mut visit: impl FnMut(usize, usize)) {
        let mut seen = vec![usize::MAX; self.nodes.len()];
        let mut stack: Vec<NodeId> = Vec::new();
        for (k, solver) in self.solvers.iter().enumerate().filter(|&(k, _)| include(k)) {
            for o in std::iter::once(&solver.outcome).chain(&solver.differs) {
                stack.push(o.output);
                stack.extend_from_slice(&o.guards);
            }
            while let Some(node) = stack.pop() {
                let i = node as usize;
                if seen[i] == k {
                    continue;
                }
                seen[i] = k;
                visit(k, i);
                stack.extend_from_slice(&self.nodes[i].args);
            }
        }
    }
}

/// A program whose parameters batt cannot bind.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("{file}:{line}: {name} has a parameter {param:?}; batt binds only S, I and C")]
    Param {
        file: String,
        line: u32,
        name: String,
        param: String,
    },
    #[error("{file}:{line}: differ {name} takes ({}); a differ takes (S, I, C)", params.join(", "))]
    Differ {
        file: String,
        line: u32,
        name: String,
        params: Vec<String>,
    },
}

/// The input a parameter name binds to.
fn input_of(program: &Program, param: &str) -> Result<Input, MergeError> {
    Input::of(param).ok_or_else(|| MergeError::Param {
        file: program.file.clone(),
        line: program.line,
        name: program.name.clone(),
        param: param.to_string(),
    })
}

/// Checks a differ's parameters: exactly `(S, I, C)`.
fn check_differ(p: &Program) -> Result<(), MergeError> {
    if p.params == ["S", "I", "C"] {
        Ok(())
    } else {
        Err(MergeError::Differ {
            file: p.file.clone(),
            line: p.line,
            name: p.name.clone(),
            params: p.params.clone(),
        })
    }
}

/// Builds the DAG: `share` merges identical steps (else every step is its own node).
pub fn merge(solvers: &[&Program], differs: &[Program], share: bool) -> Result<Merged, MergeError> {
    let mut b = Builder::new(differs, share)?;
    for p in solvers {
        let params = p
            .params
            .iter()
            .map(|name| input_of(p, name).map(|i| b.input(i)))
            .collect::<Result<Vec<_>, _>>()?;
        let outcome = b.add(p, &params);
        b.push_solver(p.name.clone(), outcome);
    }
    Ok(b.finish())
}

/// Builds a [`Merged`] node by node: [`merge`] adds programs with it, and the batt text
/// reader ([`super::text`]) the nodes of a file. Each solver pushed gets an instance of every
/// differ.
pub struct Builder<'d> {
    merged: Merged,
    /// Node by (op, arguments), for hash-consing.
    index: HashMap<(NodeOp, SmallVec<[NodeId; 4]>), NodeId>,
    share: bool,
    differs: &'d [Program],
}

impl<'d> Builder<'d> {
    /// An empty DAG holding the three inputs; fails on a differ whose parameters are not `(S, I, C)`.
    pub fn new(differs: &'d [Program], share: bool) -> Result<Builder<'d>, MergeError> {
        for d in differs {
            check_differ(d)?;
        }
        let mut b = Builder {
            merged: Merged {
                differ_names: differs.iter().map(|d| d.name.clone()).collect(),
                ..Merged::default()
            },
            index: HashMap::new(),
            share,
            differs,
        };
        for i in [Input::S, Input::I, Input::C] {
            b.node(NodeOp::Input(i), SmallVec::new());
        }
        Ok(b)
    }

    /// The node of an input.
    pub fn input(&self, i: Input) -> NodeId {
        i as NodeId
    }

    /// Adds a solver whose result is `outcome`, with an instance of each differ.
    pub fn push_solver(&mut self, name: String, outcome: Outcome) {
        self.push_solver_with(name, outcome, Vec::new());
    }

    /// Adds a solver with differ outcomes of its own (read from a file), then an instance of
    /// each of the builder's differs.
    pub fn push_solver_with(&mut self, name: String, outcome: Outcome, mut differs: Vec<Outcome>) {
        for d in self.differs {
            let o = self.add(d, &[Input::S as NodeId, outcome.output, Input::C as NodeId]);
            differs.push(o);
        }
        self.merged.solvers.push(MergedSolver { name, outcome, differs });
    }

    /// Counts steps of programs added outside [`add`](Self::add) (before merging).
    pub fn count_steps(&mut self, steps: usize) {
        self.merged.steps_total += steps;
    }

    /// The DAG.
    pub fn finish(self) -> Merged {
        self.merged
    }

    /// The node computing `op` on `args`: an existing one when sharing allows, else a new one.
    pub fn node(&mut self, op: NodeOp, args: SmallVec<[NodeId; 4]>) -> NodeId {
        let shared = self.share || matches!(op, NodeOp::Input(_) | NodeOp::Const(_));
        let key = (op, args);
        if shared {
            if let Some(&id) = self.index.get(&key) {
                return id;
            }
        }
        let (op, args) = key.clone();
        let level = match op {
            NodeOp::Input(Input::S) => Level::Task,
            NodeOp::Input(_) => Level::Lane,
            NodeOp::Const(_) => Level::Const,
            NodeOp::Prim(_) | NodeOp::Call | NodeOp::Group(_) | NodeOp::Pick { .. } => args
                .iter()
                .map(|&a| self.merged.nodes[a as usize].level)
                .max()
                .unwrap_or(Level::Const),
        };
        let id = self.merged.nodes.len() as NodeId;
        self.merged.nodes.push(Node { op, args, level });
        if shared {
            self.index.insert(key, id);
        }
        id
    }

    /// Adds a program whose parameters are bound to `params`; its outcome.
    pub fn add(&mut self, p: &Program, params: &[NodeId]) -> Outcome {
        let mut steps: Vec<NodeId> = Vec::with_capacity(p.steps.len());
        for step in &p.steps {
            let mut operand = |op: &Operand| self.operand(op, params, &steps);
            let (op, args) = match &step.callee {
                Callee::Prim(id) => (NodeOp::Prim(*id), step.args.iter().map(&mut operand).collect()),
                Callee::Value(f) => (
                    NodeOp::Call,
                    std::iter::once(f).chain(&step.args).map(&mut operand).collect(),
                ),
            };
            let id = self.node(op, args);
            steps.push(id);
        }
        self.merged.steps_total += p.steps.len();
        let output = self.operand(&p.output, params, &steps);
        Outcome {
            output,
            guards: dead_steps(p).into_iter().map(|s| steps[s]).collect(),
        }
    }

    fn operand(&mut self, op: &Operand, params: &[NodeId], steps: &[NodeId]) -> NodeId {
        match op {
            Operand::Param(k) => params[*k as usize],
            Operand::Step(s) => steps[*s as usize],
            Operand::Const(c) => self.node(NodeOp::Const(c.clone()), SmallVec::new()),
        }
    }
}

/// The steps of a program its output does not depend on.
fn dead_steps(p: &Program) -> Vec<usize> {
    let mut live = vec![false; p.steps.len()];
    let mark = |op: &Operand, live: &mut [bool]| {
        if let Operand::Step(s) = op {
            live[*s as usize] = true;
        }
    };
    mark(&p.output, &mut live);
    for (k, step) in p.steps.iter().enumerate().rev() {
        if live[k] {
            if let Callee::Value(f) = &step.callee {
                mark(f, &mut live);
            }
            for a in &step.args {
                mark(a, &mut live);
            }
        }
    }
    (0..p.steps.len()).filter(|&k| !live[k]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::parse_file;

    const SRC: &str = "def solve_a(I):\n    x1 = compose(size, first)\n    x2 = rot90(I)\n    x3 = x1(x2)\n    return x3\n\
                       def solve_b(S, I, C):\n    y1 = rot90(I)\n    y2 = first(S)\n    y3 = compose(size, first)\n    y4 = vmirror(y1)\n    return y4\n";

    fn programs() -> Vec<Program> {
        parse_file("t.py", SRC).unwrap()
    }

    #[test]
    fn identical_steps_after_renaming_exist_once() {
        let ps = programs();
        let refs: Vec<&Program> = ps.iter().collect();
        let m = merge(&refs, &[], true).unwrap();
        assert_eq!(m.steps_total, 7);
        // rot90(I) and compose(size, first) are shared.
        assert_eq!(m.steps_merged(), 5);
        let unmerged = merge(&refs, &[], false).unwrap();
        assert_eq!(unmerged.steps_merged(), 7);
        let level = |name: &str| {
            let id = PrimId::of(name).unwrap();
            m.nodes.iter().find(|n| n.op == NodeOp::Prim(id)).unwrap().level
        };
        assert_eq!(level("compose"), Level::Const);
        assert_eq!(level("first"), Level::Task);
        assert_eq!(level("vmirror"), Level::Lane);
    }

    #[test]
    fn unused_steps_guard_the_outcome() {
        let ps = programs();
        let m = merge(&[&ps[1]], &[], true).unwrap();
        let guards: Vec<&NodeOp> = m.solvers[0]
            .outcome
            .guards
            .iter()
            .map(|&g| &m.nodes[g as usize].op)
            .collect();
        assert_eq!(guards.len(), 2, "first(S) and compose(size, first) are unused");
        assert!(guards.iter().all(|op| matches!(op, NodeOp::Prim(_))));
    }

    #[test]
    fn differs_bind_the_solver_output_and_share_the_rest() {
        let ps = programs();
        let differ = parse_file(
            "d.py",
            "def differ(S, I, C):\n    z1 = palette(C)\n    z2 = equality(I, C)\n    return z2\n",
        )
        .unwrap();
        let m = merge(&[&ps[0], &ps[1]], &differ, true).unwrap();
        // Two differ instances: palette(C) shared, equality(I, C) one per solver output.
        assert_eq!(m.steps_total, 7 + 4);
        assert_eq!(m.steps_merged(), 5 + 3);
        let bad = parse_file("d.py", "def differ(I, C):\n    return I\n").unwrap();
        let e = merge(&[&ps[0]], &bad, true).unwrap_err();
        assert!(matches!(e, MergeError::Differ { .. }), "{e:?}");
        assert!(
            e.to_string()
                .ends_with("differ differ takes (I, C); a differ takes (S, I, C)"),
            "{e}"
        );
    }
}
