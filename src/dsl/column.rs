//! Vectorised application of function values: a function is compiled once into a small
//! program of nodes, and applying it to a container evaluates each node once over the whole
//! column of elements instead of walking the closure tree once per element.
//!
//! [`Kernel::compile`] inlines the closure tree that `compose`, `chain`, `fork`, `matcher`,
//! `rbind`, `lbind` and `power` build (see [`super::func`]) into nodes over the argument
//! columns, resolving primitives and checking arities once. Bound arguments become constants;
//! a primitive whose arguments are all constants runs once, at compile time; `identity(x)` is
//! `x`, and `first`/`last` of `astuple(x, y)` are `x`/`y`.
//!
//! # Nested mapping, flattened
//!
//! A closure built *inside* the function from its own values (`lbind(astuple, x)`,
//! `compose(f, rbind(g, x))`) is not built per element: the compiler keeps it symbolic, as a
//! closure over nodes. When such a closure, or a constant function, is the function of a mapping
//! primitive ([`Mapping`]: `apply`, `mapply`, `sfilter`, `mfilter`, `argmax`, `argmin`,
//! `valmax`, `valmin`, `order`), the primitive becomes a [`Node::Nested`]: its function is
//! compiled once into an inner kernel whose arguments are the member and the values the closure
//! captured, the members of every element's container are laid end to end in one column (each
//! captured value repeated alongside its members), the inner kernel runs once over that column,
//! and each container's results are combined in place. `argmin(objects, x ->
//! distance(loc, x))` over 900 locations is one inner evaluation over 900 x |objects| members,
//! not 900 compilations and 900 small loops. A closure that is called some other way, or
//! returned, is built for real, per element.
//!
//! What does not change from block to block of such an evaluation runs once: over a constant
//! container, the inner kernel's nodes of the member only; and a nested mapping's element that
//! comes back (the same container with the same captured values) is looked up, not run again
//! (`Nested::eval_distinct`). `valmin(remove(m, S), f)` and its kin, for a constant set `S`,
//! run as a summary of `S` under `f`, the same for every `m`, and a pick from it
//! ([`Without`]). The mappings inside one function over the same constant container run as one
//! group, their functions compiled into one inner kernel, so that what they compute alike is
//! computed once ([`Siblings`]).
//!
//! # Errors stay exact
//!
//! The reference applies the function to one element after another and raises the first error
//! it meets. Every element visits the nodes in the same order (the order in which the closure
//! tree calls them), so the error it raises is that of the first node that fails on it. The
//! column evaluation therefore keeps a *live prefix*: when a node fails on element `k`, element
//! `k`'s error is known and no later element matters (the reference never reaches it), so the
//! remaining nodes run on elements `0..k` only; an earlier element failing at a later node
//! shortens the prefix again. Members laid end to end keep this order (all of the first
//! container's members, then the second's), so the first failing member decides which container,
//! and so which element, fails. `extract`, which stops at its first match, is not flattened.
//!
//! The scalar path, [`super::func::call`], stays the definition every test compares this with.

use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};

use hashbrown::HashMap;
use smallvec::{smallvec, SmallVec};

use super::error::{DslError, DslResult};
use super::func::{call, callable, holds_foreign, Deadline, Func};
use super::memo::{identity, RowMemo};
use super::prims::cheap::{Cheap, WithPrim};
use super::prims::fused::steps::{Steps, Typed};
use super::prims::fused::Fused;
use super::prims::without::Without;
use super::registry::PrimId;
use super::shared::Shared;
use super::value::{as_values, borrowed, clear_values, push_value, Items, Value};

mod siblings;
use siblings::Siblings;

type NodeId = u32;
type Args = SmallVec<[NodeId; 4]>;
/// Values of each output of a kernel (one, but in a [`Siblings`] group's), or of each mapping
/// of a nested node.
type PerOutput = SmallVec<[Vec<Value>; 1]>;

/// How a mapping primitive applies its function: to which members of which argument, and how
/// it combines the results. The primitive itself is [`Mapping::run`]; the column engine uses the
/// same two functions to run it over the members of many containers at once.
pub struct Mapping {
    /// The argument holding the container, and the one holding the function.
    pub container: usize,
    pub function: usize,
    /// Appends the values the function is applied to, in the reference's order (`valmax` of an
    /// empty container applies it to `0`). For a non-empty tuple or set these must be its own
    /// members, in order: [`Mapping::run`] then reads them in place.
    pub members: fn(&Value, &mut Vec<Value>) -> DslResult<()>,
    /// The result from the container, those values, and the function's results on them (up to
    /// the first that raised, with its error, which it raises after what precedes it in the
    /// reference's loop, unless it makes a result that does not depend on it, as [`Without`]'s
    /// summaries do). It may take the results or leave them: the column engine refills one
    /// buffer for container after container, so that reading them costs no copy.
    pub combine: fn(&Value, &[Value], &mut Mapped) -> DslResult<Value>,
    /// Whether the reference applies the function inside a generator expression (`apply`,
    /// `sfilter`), where a `StopIteration` it raises becomes a `RuntimeError`.
    pub generator: bool,
}

impl Mapping {
    /// The primitive on one set of arguments.
    pub fn run(&self, args: &[Value]) -> DslResult<Value> {
        let container = &args[self.container];
        let mut listed = Vec::new();
        let members: &[Value] = match container {
            Value::Tuple(items) | Value::Set(items) if !items.is_empty() => items,
            _ => {
                (self.members)(container, &mut listed)?;
                &listed
            }
        };
        let mut results = self.raised(map(&args[self.function], &[members]));
        let combined = (self.combine)(container, members, &mut results);
        clear_values(&mut results.values);
        clear_values(&mut listed);
        combined
    }

    /// The function's results as the reference's loop sees them (see [`Mapping::generator`]).
    fn raised(&self, mut results: Mapped) -> Mapped {
        if self.generator {
            results.error = results.error.map(DslError::in_generator);
        }
        results
    }
}

/// The result of applying a function to a column: the values of the elements before the first
/// one that raised, and that element's error (or every value and no error).
#[derive(Debug)]
pub struct Mapped {
    pub values: Vec<Value>,
    pub error: Option<DslError>,
}

impl Mapped {
    /// All the values, or the first failing element's error.
    pub fn all(self) -> DslResult<Vec<Value>> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.values),
        }
    }

    /// All the values, taken, or the first failing element's error.
    pub fn take_all(&mut self) -> DslResult<Vec<Value>> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.values)),
        }
    }

    /// All the values, or the first failing element's error (taken).
    pub fn read_all(&mut self) -> DslResult<&[Value]> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(&self.values),
        }
    }
}

/// How many elements one evaluation of a kernel takes at most ([`map`], `prapply`'s pairs, the
/// members of a [`Node::Nested`]), so that its columns stay small however large the container:
/// a column of `Value`s costs 24 bytes an element per node.
pub const BLOCK: usize = 1 << 14;

/// With [`Evaluation::Auto`], columns of at most this many elements run one element at a time,
/// unless the function maps inside ([`maps_inside`]): finding or compiling a kernel and
/// setting up its columns costs more than a few calls
/// (measured: the training tasks where CPython takes 0.3 to 2 ms, 5 % faster with 6 to 12
/// here than with none; the totals of `run` and `batt --cross` 1 to 2 % faster).
pub const SCALAR_UP_TO: usize = 8;

/// How [`map`] applies a function to its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// Column-wise, but one element at a time for columns of at most [`SCALAR_UP_TO`] (the
    /// default).
    Auto = 0,
    /// Always column-wise.
    Columns = 1,
    /// Always one element at a time: the definition the others are tested against (the
    /// command line's `--scalar`).
    Scalar = 2,
}

static EVALUATION: AtomicU8 = AtomicU8::new(Evaluation::Auto as u8);

/// Chooses how [`map`] evaluates, for the whole process (the command line's `--scalar`, and
/// the tests that compare the ways).
pub fn set_evaluation(way: Evaluation) {
    EVALUATION.store(way as u8, Ordering::Relaxed);
}

/// Whether [`map`] runs `f` on the `n` elements of `columns` one at a time: always where a
/// foreign function may be called ([`holds_foreign`]).
fn one_at_a_time(f: &Value, columns: &[&[Value]], n: usize) -> bool {
    const AUTO: u8 = Evaluation::Auto as u8;
    const COLUMNS: u8 = Evaluation::Columns as u8;
    match EVALUATION.load(Ordering::Relaxed) {
        _ if holds_foreign(std::slice::from_ref(f)) || columns.iter().any(|c| holds_foreign(c)) => true,
        AUTO => n <= SCALAR_UP_TO && !maps_inside(f, &mut 64),
        COLUMNS => false,
        _ => true,
    }
}

/// Whether a function applies a mapping primitive (`apply`, `sfilter`, `argmin`, ...)
/// somewhere in its closure tree: the column engine runs such an inner mapping over the
/// members of all the elements at once, remembering rows that come back, which pays even for
/// a few elements. `budget` bounds the walk (a tree built by sharing may be exponentially
/// large as a tree); past it the answer is yes.
fn maps_inside(f: &Value, budget: &mut u32) -> bool {
    let Value::Func(func) = f else {
        return false;
    };
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    match &**func {
        Func::Prim(id) => id.spec().mapping.is_some(),
        Func::Compose(a, b) | Func::Matcher(a, b) | Func::Rbind(a, b) | Func::Lbind(a, b) => {
            maps_inside(a, budget) || maps_inside(b, budget)
        }
        Func::Chain(a, b, c) | Func::Fork(a, b, c) => {
            maps_inside(a, budget) || maps_inside(b, budget) || maps_inside(c, budget)
        }
        Func::Power(g, _) => maps_inside(g, budget),
        Func::Foreign(_) => false,
    }
}

/// Applies `f` to each element of equally long argument columns (`f(xs[i], ys[i], ...)`), as
/// the reference's loop would, in one vectorised evaluation.
pub fn map(f: &Value, columns: &[&[Value]]) -> Mapped {
    let n = columns.first().map_or(0, |c| c.len());
    if n == 0 {
        return Mapped {
            values: Vec::new(),
            error: None,
        };
    }
    if one_at_a_time(f, columns, n) {
        return map_scalar(f, columns, n);
    }
    with_kernel(f, columns.len(), |kernel| {
        if n <= BLOCK {
            return kernel.eval(columns, n, None);
        }
        // Block by block, so that the kernel's columns stay small over a large container; the
        // first block that raises holds the first failing element.
        let mut kept = Kept::default();
        let mut values = Vec::with_capacity(n);
        for start in (0..n).step_by(BLOCK) {
            let end = (start + BLOCK).min(n);
            let block: SmallVec<[&[Value]; 4]> = columns.iter().map(|c| &c[start..end]).collect();
            let mapped = kernel.eval(&block, end - start, Some(&mut kept));
            values.extend(mapped.values);
            if mapped.error.is_some() {
                return Mapped {
                    values,
                    error: mapped.error,
                };
            }
        }
        Mapped { values, error: None }
    })
}

/// [`map`] one element at a time through [`call`]: the definition the kernels are tested
/// against.
fn map_scalar(f: &Value, columns: &[&[Value]], n: usize) -> Mapped {
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY (of each copy, never dropped: see `borrowed`): `columns` outlive the call.
        let args: SmallVec<[ManuallyDrop<Value>; 4]> = columns.iter().map(|c| unsafe { borrowed(&c[i]) }).collect();
        match call(f, as_values(&args)) {
            Ok(v) => values.push(v),
            Err(e) => return Mapped { values, error: Some(e) },
        }
    }
    Mapped { values, error: None }
}

// ----- kernels ------------------------------------------------------------------------------

/// One operation of a compiled function, over columns.
#[derive(Clone)]
enum Node {
    /// The `k`-th argument column.
    Arg(usize),
    /// The same value for every element.
    Const(Value),
    /// A primitive applied element-wise to the columns of earlier nodes.
    Prim { id: PrimId, args: Args },
    /// A composition of primitives run as one, without the values in between (see
    /// [`Builder::fuse`]).
    Fused { op: Fused, args: Args },
    /// `valmin`, `valmax`, `argmin` or `argmax` of `remove(m, S)` picked from the summary of
    /// `S` that a [`Node::Nested`] computed (see [`Without`]). The arguments are that summary,
    /// `m`, `remove(m, S)` and the function.
    Without { op: Without, args: Args },
    /// A primitive call whose work a later [`Node::Fused`] does: it never runs.
    Moved,
    /// `matcher`: whether two earlier nodes' values are equal.
    Equals(NodeId, NodeId),
    /// Calling a function value that differs per element, through the scalar path.
    Call { function: NodeId, args: Args },
    /// A mapping primitive whose function is known when compiling (see the module doc).
    Nested(Box<Nested>),
    /// A call that raises on every element reaching it (a value that is not callable, a wrong
    /// number of arguments, or a primitive on constants that raised).
    Raise(DslError),
}

/// A mapping primitive run over the members of every element's container at once; or, for a
/// group of sibling mappings over one container ([`Siblings`]), each of them.
struct Nested {
    mappings: SmallVec<[&'static Mapping; 1]>,
    container: NodeId,
    /// The function on (member, captured values...): one kernel, with an output per mapping.
    inner: Kernel,
    /// The nodes of this kernel whose values the function captured, in the inner kernel's
    /// argument order after the member.
    captures: Vec<NodeId>,
    /// How many more evaluations run every row without looking for repeats (see
    /// [`Nested::memo`]), and every element (see [`Nested::eval_distinct`]).
    skip_memo: AtomicU32,
    skip_elements: AtomicU32,
}

impl Clone for Nested {
    fn clone(&self) -> Nested {
        Nested {
            mappings: self.mappings.clone(),
            container: self.container,
            inner: self.inner.clone(),
            captures: self.captures.clone(),
            skip_memo: AtomicU32::new(self.skip_memo.load(Ordering::Relaxed)),
            skip_elements: AtomicU32::new(self.skip_elements.load(Ordering::Relaxed)),
        }
    }
}

/// A function value compiled for a number of arguments.
#[derive(Clone)]
pub struct Kernel {
    nodes: Vec<Node>,
    /// Whether a node runs: all do but those nothing reads that cannot raise (symbolic closures
    /// that were only ever inlined, `astuple` calls simplified away).
    runs: Vec<bool>,
    /// Whether a node depends on the first argument and constants only (in an inner kernel:
    /// on the member, not on captured values), so that it is the same for every container
    /// when all the containers are the same.
    member_only: Vec<bool>,
    /// Whether a node depends on the arguments after the first and constants only (in an inner
    /// kernel: on captured values, not on the member), so that it is the same for all the
    /// members of a container.
    capture_only: Vec<bool>,
    /// The nodes whose values the kernel gives: the function's, or each function's for the
    /// inner kernel of a group of sibling mappings ([`Siblings`]).
    outs: SmallVec<[NodeId; 1]>,
    /// Sibling mappings over one container run as one, where the kernel has any.
    siblings: Option<Box<Siblings>>,
    /// Whether a row costs more than a few primitive calls (the kernel holds a mapping, a
    /// dynamic call, or many nodes), so that remembering rows pays even when few repeat.
    costly: bool,
    /// Whether compiling read no container of the closure (see [`Builder::read_containers`]),
    /// so that the kernel serves any closure of the same shape ([`Kernel::rebound`]).
    rebindable: bool,
}

impl Kernel {
    /// Compiles `f` for calls with `arity` arguments. Never fails: what the reference would
    /// raise on a call becomes a node that raises when an element reaches it.
    pub fn compile(f: &Value, arity: usize) -> Kernel {
        let mut builder = Builder::new(arity, None);
        let args: Args = (0..arity as NodeId).collect();
        let out = builder.call(f, &args);
        builder.finish(out)
    }

    /// Evaluates the kernel over `n` elements of argument columns of length `n`. With a
    /// `period`, the first argument repeats with it (the same container's members, container
    /// after container) and the others are the same within each period (the values captured
    /// for that container): the nodes that depend on the member only run on one period and are
    /// read cyclically, and those that depend on the captured values only run on the first row
    /// of each period and are read for all its rows. A failure there is at the earliest row it
    /// fails on: the first period's, or the period's first row. `kept`, where the rows are
    /// one block of many, holds the period and what the next block reads again (see [`Kept`]).
    fn eval(&self, columns: &[&[Value]], n: usize, kept: Option<&mut Kept>) -> Mapped {
        debug_assert_eq!(self.outs.len(), 1, "a kernel of one function");
        let (mut values, live, error) = self.eval_nodes(columns, n, kept);
        let out = take_column(&mut values, self.outs[0], columns, live);
        clear_columns(&mut values);
        Mapped { values: out, error }
    }

    /// [`Kernel::eval`] of a kernel with several functions (a [`Siblings`] group's): each one's
    /// values over every element, or an error where any element failed in any of them.
    fn eval_all(&self, columns: &[&[Value]], n: usize, kept: Option<&mut Kept>) -> DslResult<PerOutput> {
        let (mut values, live, error) = self.eval_nodes(columns, n, kept);
        let outs = match error {
            Some(e) => Err(e),
            None => {
                let mut outs: PerOutput = SmallVec::new();
                for (i, &out) in self.outs.iter().enumerate() {
                    // The same function twice: its values again.
                    let values = match self.outs[..i].iter().position(|&o| o == out) {
                        Some(same) => outs[same].clone(),
                        None => take_column(&mut values, out, columns, live),
                    };
                    outs.push(values);
                }
                Ok(outs)
            }
        };
        clear_columns(&mut values);
        outs
    }

    /// Every node's column over `n` elements (see [`Kernel::eval`]), how many elements came
    /// through, and the error of the first that did not: in the order of [`Siblings`] where
    /// the kernel has one and it runs without a failure, else node after node.
    fn eval_nodes(
        &self,
        columns: &[&[Value]],
        n: usize,
        mut kept: Option<&mut Kept>,
    ) -> (Vec<Column>, usize, Option<DslError>) {
        if let Some(siblings) = &self.siblings {
            if let Some(values) = siblings.eval(self, columns, n, kept.as_deref_mut()) {
                return (values, n, None);
            }
        }
        let mut live = n;
        let mut error = None;
        let mut values = empty_columns(self.nodes.len());
        for k in 0..self.nodes.len() {
            if let Some((at, e)) = self.run_node(k, &mut values, columns, live, kept.as_deref_mut()) {
                live = at;
                error = Some(e);
            }
        }
        (values, live, error)
    }

    /// How node `k`'s values are laid out (see [`Kernel::eval`]).
    #[inline]
    fn shape(&self, k: usize, kept: Option<&Kept>) -> Shape {
        let node = &self.nodes[k];
        match kept.and_then(|s| s.period) {
            Some(m) if self.member_only[k] && !matches!(node, Node::Arg(_) | Node::Const(_)) => Shape::Tiled(m),
            Some(m)
                if self.capture_only[k]
                    && matches!(
                        node,
                        Node::Prim { .. }
                            | Node::Fused { .. }
                            | Node::Without { .. }
                            | Node::Equals(..)
                            | Node::Call { .. }
                    ) =>
            {
                Shape::Blocked(m)
            }
            _ => Shape::Rows,
        }
    }

    /// Runs node `k` on the elements `0..live`, all the nodes it reads having run, and stores
    /// its column in `values[k]`; returns the first element it failed on, with the error.
    fn run_node(
        &self,
        k: usize,
        values: &mut [Column],
        columns: &[&[Value]],
        live: usize,
        mut kept: Option<&mut Kept>,
    ) -> Option<(usize, DslError)> {
        if !self.runs[k] {
            return None;
        }
        let node = &self.nodes[k];
        let shape = self.shape(k, kept.as_deref());
        if let (Shape::Tiled(m), Some(tiled)) = (shape, kept.as_deref().and_then(|s| s.tiled(k))) {
            values[k] = Column::Tiled(tiled.clone(), m);
            return None;
        }
        // The rows the node runs on: `count` of them, `stride` apart.
        let (count, stride) = match shape {
            Shape::Tiled(m) => (m.min(live), 1),
            Shape::Blocked(m) => (live.div_ceil(m), m),
            Shape::Rows => (live, 1),
        };
        let rows = Rows { count, stride };
        let values_read = &*values;
        let (column, failure) = match node {
            Node::Arg(k) => (Column::Arg(*k), None),
            Node::Const(v) => (Column::Const(v.clone()), None),
            Node::Raise(e) => (Column::Values(Vec::new()), (count > 0).then(|| (0, e.clone()))),
            Node::Equals(a, b) => {
                let mut a = Reader::new(&values_read[*a as usize], columns, rows.stride);
                let mut b = Reader::new(&values_read[*b as usize], columns, rows.stride);
                let out = (0..rows.count).map(|_| Value::Bool(a.next() == b.next()));
                (Column::Values(out.collect()), None)
            }
            Node::Prim { id, args } => {
                let (out, failure) = match Cheap::of(*id) {
                    Some(cheap) => cheap.with(PerElement {
                        args,
                        values: values_read,
                        columns,
                        rows,
                    }),
                    None => {
                        let imp = id.spec().imp;
                        per_element::<0>(args, values_read, columns, rows, |_, a| imp(a))
                    }
                };
                (Column::Values(out), failure)
            }
            Node::Fused { op, args } => {
                let (out, failure) = match op.steps() {
                    Some(steps) => run_steps(steps, args, values_read, columns, rows),
                    None => op.with(PerElement {
                        args,
                        values: values_read,
                        columns,
                        rows,
                    }),
                };
                (Column::Values(out), failure)
            }
            Node::Without { op, args } => {
                let (out, failure) = per_element::<0>(args, values_read, columns, rows, |_, a| op.run(a));
                (Column::Values(out), failure)
            }
            // Never reached: nothing reads a moved node and it cannot raise, so it does
            // not run.
            Node::Moved => (Column::Values(Vec::new()), None),
            Node::Call { function, args } => {
                let f = &values_read[*function as usize];
                let (out, failure) =
                    per_element::<0>(args, values_read, columns, rows, |i, a| call(f.get(columns, i), a));
                (Column::Values(out), failure)
            }
            Node::Nested(nested) => {
                let met = kept.as_deref_mut().map(|s| s.elements(k));
                let (out, failure) = nested.eval_distinct(values_read, columns, count, met);
                (Column::Values(out), failure)
            }
        };
        values[k] = laid_out(k, shape, column, failure.is_none(), kept);
        failure
    }

    /// A kernel whose compile-time evaluation ran out of time says so only for this run.
    fn cacheable(&self) -> bool {
        !self.nodes.iter().any(|n| match n {
            Node::Raise(e) => e.is_transient(),
            Node::Nested(nested) => !nested.inner.cacheable(),
            _ => false,
        }) && self.siblings.as_ref().map_or(true, |s| s.cacheable())
    }
}

/// Empty columns for `n` nodes, each filled in as its node runs.
fn empty_columns(n: usize) -> Vec<Column> {
    (0..n).map(|_| Column::Values(Vec::new())).collect()
}

/// Node `k`'s computed values as its shape lays them out; a tiled column computed over its
/// whole period without a failure is kept for the next block.
fn laid_out(k: usize, shape: Shape, column: Column, no_failure: bool, kept: Option<&mut Kept>) -> Column {
    match (shape, column) {
        (Shape::Tiled(m), Column::Values(v)) => {
            if let Some(s) = kept.filter(|_| no_failure && v.len() == m) {
                s.keep_tiled(k, v.clone());
            }
            Column::Tiled(v, m)
        }
        (Shape::Blocked(m), Column::Values(v)) => Column::Blocked(v, m),
        (_, column) => column,
    }
}

/// Node `out`'s values over the elements `0..live`: a computed column is handed over as it is,
/// not copied value by value.
fn take_column(values: &mut [Column], out: NodeId, columns: &[&[Value]], live: usize) -> Vec<Value> {
    match std::mem::replace(&mut values[out as usize], Column::Values(Vec::new())) {
        Column::Values(mut v) => {
            v.truncate(live);
            v
        }
        out => {
            let mut reader = Reader::new(&out, columns, 1);
            (0..live).map(|_| reader.next().clone()).collect()
        }
    }
}

/// Drops the values of an evaluation's columns.
fn clear_columns(values: &mut [Column]) {
    for column in values {
        if let Column::Values(v) | Column::Tiled(v, _) | Column::Blocked(v, _) = column {
            clear_values(v);
        }
    }
}

/// What a kernel evaluated block after block keeps from one block for the next (see
/// [`Kernel::eval`]), by node; empty until a node keeps something.
#[derive(Default)]
struct Kept {
    /// Over the members of one container, container after container: the period, and the
    /// values of each node of the member only over one period, where it ran on all of it
    /// without failing. They are the same in every block, and run on the first only.
    period: Option<usize>,
    tiled: Vec<Option<Vec<Value>>>,
    /// The elements each nested node has met (see [`Nested::eval_distinct`]).
    elements: Vec<Option<RowMemo>>,
}

impl Kept {
    fn tiled(&self, node: usize) -> Option<&Vec<Value>> {
        self.tiled.get(node)?.as_ref()
    }

    fn keep_tiled(&mut self, node: usize, values: Vec<Value>) {
        if self.tiled.len() <= node {
            self.tiled.resize(node + 1, None);
        }
        self.tiled[node] = Some(values);
    }

    fn elements(&mut self, node: usize) -> &mut Option<RowMemo> {
        if self.elements.len() <= node {
            self.elements.resize_with(node + 1, || None);
        }
        &mut self.elements[node]
    }
}

/// A node's values: borrowed argument columns and constants are not copied per element.
enum Column {
    Arg(usize),
    Const(Value),
    Values(Vec<Value>),
    /// Values repeating with a period (see [`Kernel::eval`]).
    Tiled(Vec<Value>, usize),
    /// One value for each block of rows of a length (see [`Kernel::eval`]).
    Blocked(Vec<Value>, usize),
}

/// How a node's values are laid out over the rows of a kernel evaluated with a period (see
/// [`Kernel::eval`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One value per row.
    Rows,
    /// A node of the member only: the values of the first period, repeating.
    Tiled(usize),
    /// A node of the captured values only: one value per period, for all of its rows.
    Blocked(usize),
}

/// The rows a node runs on: `count` rows, `stride` apart from row 0.
#[derive(Clone, Copy)]
struct Rows {
    count: usize,
    stride: usize,
}

impl Column {
    /// The values as one slice, where they are stored as one (an argument, a computed column).
    #[inline]
    fn as_slice<'a>(&'a self, args: &[&'a [Value]]) -> Option<&'a [Value]> {
        match self {
            Column::Arg(k) => Some(args[*k]),
            Column::Values(v) => Some(v),
            Column::Const(_) | Column::Tiled(..) | Column::Blocked(..) => None,
        }
    }

    #[inline(always)]
    fn get<'a>(&'a self, args: &[&'a [Value]], i: usize) -> &'a Value {
        match self {
            Column::Arg(k) => &args[*k][i],
            Column::Const(v) => v,
            Column::Values(v) => &v[i],
            Column::Tiled(v, period) => &v[i % period],
            Column::Blocked(v, length) => &v[i / length],
        }
    }
}

/// Runs `op` on the arguments of each of `rows` (with the row): the values, and the first row
/// that raised. With `ARITY` above 0 there are that many arguments, and only the loops for as
/// many are compiled: a primitive of one argument inlined into all seven loops was 16 KB of
/// code, for two of them ever run.
fn per_element<const ARITY: usize>(
    args: &[NodeId],
    values: &[Column],
    columns: &[&[Value]],
    rows: Rows,
    mut op: impl FnMut(usize, &[Value]) -> DslResult<Value>,
) -> (Vec<Value>, Option<(usize, DslError)>) {
    if rows.count == 0 {
        return (Vec::new(), None);
    }
    debug_assert!(ARITY == 0 || args.len() == ARITY);
    let arity = if ARITY == 0 { args.len() } else { ARITY };
    let cols: SmallVec<[&Column; 4]> = args.iter().map(|&a| &values[a as usize]).collect();
    if arity == 1 {
        let column = cols[0];
        // One argument: the element is passed in place, without a copy; read straight from
        // the slice where the rows are consecutive elements of one.
        return match column.as_slice(columns).filter(|_| rows.stride == 1) {
            Some(elements) => {
                let elements = &elements[..rows.count];
                each_row(rows.count, |k| (k, op(k, std::slice::from_ref(&elements[k]))))
            }
            None => {
                let mut reader = Reader::new(column, columns, rows.stride);
                each_row(rows.count, |k| {
                    let i = k * rows.stride;
                    (i, op(i, std::slice::from_ref(reader.next())))
                })
            }
        };
    }
    // The arguments of the current row, as bitwise copies that are never dropped: no
    // reference count changes per row (see `borrowed`). A constant one is written once.
    // SAFETY (of each copy): `values` and `columns` keep every value alive for the whole call.
    let mut buffer: SmallVec<[ManuallyDrop<Value>; 4]> =
        cols.iter().map(|c| unsafe { borrowed(c.get(columns, 0)) }).collect();
    let varying: SmallVec<[usize; 4]> = (0..cols.len())
        .filter(|&j| !matches!(cols[j], Column::Const(_)))
        .collect();
    // Consecutive rows of slices (arguments, computed columns): read without matching on each
    // column's layout per row.
    let slices: Option<SmallVec<[&[Value]; 4]>> = (rows.stride == 1)
        .then(|| varying.iter().map(|&j| cols[j].as_slice(columns)).collect())
        .flatten();
    // The loops below index plain slices: a `SmallVec` checks where it stores its items on
    // every access, which was a tenth of the work of a row.
    let (buffer, varying, cols) = (&mut buffer[..], &varying[..], &cols[..]);
    if let Some(slices) = slices {
        if let (&[a, b], 2) = (&slices[..], arity) {
            // Two arguments, both varying: each row's pair is copied onto the stack from the
            // two slices, cut to the rows first so that no read is checked (most primitives
            // a function applies take two arguments).
            let (a, b) = (&a[..rows.count], &b[..rows.count]);
            return each_row(rows.count, |k| {
                let pair = unsafe { [borrowed(&a[k]), borrowed(&b[k])] };
                (k, op(k, as_values(&pair)))
            });
        }
        if let (&[slice], &[j]) = (&slices[..], varying) {
            // One varying argument among constants: only its slot is written per row.
            let slice = &slice[..rows.count];
            return each_row(rows.count, |k| {
                buffer[j] = unsafe { borrowed(&slice[k]) };
                (k, op(k, as_values(buffer)))
            });
        }
        let slices = &slices[..];
        return each_row(rows.count, |k| {
            for (&j, slice) in varying.iter().zip(slices) {
                buffer[j] = unsafe { borrowed(&slice[k]) };
            }
            (k, op(k, as_values(buffer)))
        });
    }
    if arity == 2 {
        let (a, b) = (cols[0], cols[1]);
        // Two arguments read by readers: each row's pair is copied onto the stack.
        let (mut a, mut b) = (
            Reader::new(a, columns, rows.stride),
            Reader::new(b, columns, rows.stride),
        );
        return each_row(rows.count, |k| {
            let pair = unsafe { [borrowed(a.next()), borrowed(b.next())] };
            let i = k * rows.stride;
            (i, op(i, as_values(&pair)))
        });
    }
    let mut readers: SmallVec<[Reader; 4]> = varying
        .iter()
        .map(|&j| Reader::new(cols[j], columns, rows.stride))
        .collect();
    let readers = &mut readers[..];
    each_row(rows.count, |k| {
        for (&j, reader) in varying.iter().zip(readers.iter_mut()) {
            buffer[j] = unsafe { borrowed(reader.next()) };
        }
        let i = k * rows.stride;
        (i, op(i, as_values(buffer)))
    })
}

/// A column's values at rows `0, stride, 2 stride, ...`, read one after another with a few
/// additions per row, where [`Column::get`] matches on the layout and divides on every read:
/// on solve_d22278a0, whose rows read a captured value's column, that took 7 % of the
/// instructions off (callgrind).
///
/// The row's value is `values[base + (within & within_mask)]`. From one row to the next,
/// `base` grows by `step` and `within` by `within_step`, and `within` reaching `wrap` goes
/// back by `wrap` and adds `carry` to `base`: a slice moves `base` by the stride; a tiled
/// column moves `within` around its period (`base` stays 0); a blocked column moves `within`
/// through its block and `base` from block to block; a constant moves nothing.
struct Reader<'a> {
    values: &'a [Value],
    base: usize,
    within: usize,
    step: usize,
    within_step: usize,
    wrap: usize,
    carry: usize,
    within_mask: usize,
}

impl<'a> Reader<'a> {
    fn new(column: &'a Column, args: &[&'a [Value]], stride: usize) -> Reader<'a> {
        let reader = |values, step, within_step, wrap, carry, within_mask| Reader {
            values,
            base: 0,
            within: 0,
            step,
            within_step,
            wrap,
            carry,
            within_mask,
        };
        match column {
            Column::Arg(k) => reader(args[*k], stride, 0, usize::MAX, 0, 0),
            Column::Values(v) => reader(v, stride, 0, usize::MAX, 0, 0),
            Column::Const(v) => reader(std::slice::from_ref(v), 0, 0, usize::MAX, 0, 0),
            Column::Tiled(v, period) => reader(v, 0, stride % period, *period, 0, usize::MAX),
            Column::Blocked(v, length) => reader(v, stride / length, stride % length, *length, 1, 0),
        }
    }

    /// The current row's value; the next call reads the next row's.
    #[inline(always)]
    fn next(&mut self) -> &'a Value {
        let value = &self.values[self.base + (self.within & self.within_mask)];
        self.base += self.step;
        self.within += self.within_step;
        if self.within >= self.wrap {
            self.within -= self.wrap;
            self.base += self.carry;
        }
        value
    }
}

/// The rows [`each_row`] runs between two readings of the clock.
const CLOCK_ROWS: usize = 256;

/// Collects `row(k)` for `k` in `0..count` (each row's index and result) up to the first row
/// that raised: the values, and that row with its error.
#[inline(always)]
fn each_row(
    count: usize,
    mut row: impl FnMut(usize) -> (usize, DslResult<Value>),
) -> (Vec<Value>, Option<(usize, DslError)>) {
    let mut out = Vec::with_capacity(count);
    // The clock is read after every 256 rows, as `call` does every 256 calls; past the
    // deadline, the 256th row fails (its value is dropped).
    for block in (0..count).step_by(CLOCK_ROWS) {
        let end = count.min(block + CLOCK_ROWS);
        let mut last = 0;
        for k in block..end {
            let (i, result) = row(k);
            match result {
                Ok(v) => push_value(&mut out, v),
                Err(e) => return (out, Some((i, e))),
            }
            last = i;
        }
        if end - block == CLOCK_ROWS {
            if let Err(e) = Deadline::check() {
                out.pop();
                return (out, Some((last, e)));
            }
        }
    }
    (out, None)
}

/// [`per_element`] of a primitive known statically ([`Cheap`]), so that its loop is compiled
/// with the primitive inlined.
struct PerElement<'a> {
    args: &'a [NodeId],
    values: &'a [Column],
    columns: &'a [&'a [Value]],
    rows: Rows,
}

impl WithPrim for PerElement<'_> {
    type Out = (Vec<Value>, Option<(usize, DslError)>);

    #[inline(never)]
    fn run<const ARITY: usize>(self, imp: impl Fn(&[Value]) -> DslResult<Value>) -> Self::Out {
        // A node's arguments are as many as its primitive takes (the compiler raises
        // otherwise); were they not, the loop for any number runs.
        if ARITY != 0 && self.args.len() != ARITY {
            return per_element_dyn(self.args, self.values, self.columns, self.rows, &imp);
        }
        per_element::<ARITY>(self.args, self.values, self.columns, self.rows, |_, a| imp(a))
    }
}

/// [`per_element`] for any number of arguments, of a function called through a reference: one
/// copy of the loops for every caller.
#[cold]
#[inline(never)]
fn per_element_dyn(
    args: &[NodeId],
    values: &[Column],
    columns: &[&[Value]],
    rows: Rows,
    imp: &dyn Fn(&[Value]) -> DslResult<Value>,
) -> (Vec<Value>, Option<(usize, DslError)>) {
    per_element::<0>(args, values, columns, rows, |_, a| imp(a))
}

/// Below this many rows a chain ([`Steps`]) runs its primitives row by row: its unboxed
/// columns cost an allocation each per step, more than a few rows save (on solve_b527c5c6, whose
/// chains run over a handful of objects).
const UNBOXED_FROM_ROWS: usize = 16;

/// A chain of integer primitives ([`Steps`]) over `rows`: unboxed, step after step over all
/// the rows, and boxed once; a row it does not compute so runs the primitives in turn (and
/// raises what they raise).
fn run_steps(
    steps: Steps,
    args: &[NodeId],
    values: &[Column],
    columns: &[&[Value]],
    rows: Rows,
) -> (Vec<Value>, Option<(usize, DslError)>) {
    let lanes = (rows.count >= UNBOXED_FROM_ROWS).then(|| unboxed_steps(steps, args, values, columns, rows));
    let Some((boxed, off)) = lanes.flatten().map(Typed::boxed) else {
        return per_element::<0>(args, values, columns, rows, |_, a| steps.composed(a));
    };
    // The rows marked run through the primitives, in order; the clock is read as `each_row`
    // reads it, after every `CLOCK_ROWS` rows, past the deadline the last of them failing.
    let mut out = boxed;
    for block in (0..rows.count).step_by(CLOCK_ROWS) {
        let end = rows.count.min(block + CLOCK_ROWS);
        for k in (block..end).filter(|&k| off[k]) {
            let i = k * rows.stride;
            let row: SmallVec<[Value; 4]> = args
                .iter()
                .map(|&a| values[a as usize].get(columns, i).clone())
                .collect();
            match steps.composed(&row) {
                Ok(v) => out[k] = v,
                Err(e) => {
                    out.truncate(k);
                    return (out, Some((i, e)));
                }
            }
        }
        if end - block == CLOCK_ROWS {
            if let Err(e) = Deadline::check() {
                out.truncate(end - 1);
                return (out, Some(((end - 1) * rows.stride, e)));
            }
        }
    }
    (out, None)
}

/// [`Steps::lanes`] of a chain over its arguments' columns, unboxed.
fn unboxed_steps(steps: Steps, args: &[NodeId], values: &[Column], columns: &[&[Value]], rows: Rows) -> Option<Typed> {
    let mut typed: SmallVec<[Option<Typed>; 4]> = args
        .iter()
        .map(|&a| {
            let column = &values[a as usize];
            match (column, column.as_slice(columns)) {
                (Column::Const(v), _) => Typed::rows(std::iter::repeat(v), rows.count),
                (_, Some(slice)) => Typed::rows(slice.iter().step_by(rows.stride), rows.count),
                _ => Typed::rows(
                    (0..rows.count).map(|k| column.get(columns, k * rows.stride)),
                    rows.count,
                ),
            }
        })
        .collect();
    steps.lanes(&mut typed)
}

/// Evaluations of a [`Nested`] node that do not look for repeated rows after one that found
/// too few.
const RETRY_MEMO: u32 = 16;
/// Fewer rows than this in a block are run as they are: what repeats among so few costs less
/// to run again than to look up.
const MIN_MEMO_ROWS: usize = 2048;

/// Whether this evaluation does not look for repeats, counting down the evaluations left to
/// skip.
fn skipped(skip: &AtomicU32) -> bool {
    let left = skip.load(Ordering::Relaxed);
    if left > 0 {
        skip.store(left - 1, Ordering::Relaxed);
    }
    left > 0
}

/// The buffers [`Nested::eval`] lays members out in, kept per thread from one evaluation to
/// the next: evaluations are many and small (a kernel per lane and call), and each grew its
/// buffers from nothing. A nested evaluation inside another takes buffers of its own.
#[derive(Default)]
struct Scratch {
    /// The members of a block's containers, end to end (copies borrowed for one evaluation;
    /// empty between evaluations).
    flat: Vec<ManuallyDrop<Value>>,
    /// The members built from a container's data (a grid's rows, a patch's cells).
    made: Vec<Value>,
    /// Where each container's members end in `flat`.
    bounds: Vec<usize>,
    /// Each captured value, repeated alongside its container's members (borrowed copies); an
    /// evaluation with fewer captured values leaves the columns past them empty.
    captured: Vec<Vec<ManuallyDrop<Value>>>,
    /// The results of one container's members, handed to the mapping's `combine`.
    results: Vec<Value>,
}

/// Buffers kept per thread: at most this many sets (one per level of nesting in use).
const SCRATCH_KEPT: usize = 8;

thread_local! {
    static SCRATCH: RefCell<Vec<Scratch>> = const { RefCell::new(Vec::new()) };
}

impl Scratch {
    /// A set of empty buffers, with at least one column per captured value.
    fn take(captures: usize) -> Scratch {
        let mut scratch = SCRATCH.with(|s| s.borrow_mut().pop()).unwrap_or_default();
        if scratch.captured.len() < captures {
            scratch.captured.resize_with(captures, Vec::new);
        }
        scratch
    }

    /// Empties the buffers (dropping the members built, none of the borrowed copies) and
    /// keeps them for this thread's next evaluation.
    fn give_back(mut self) {
        self.flat.clear();
        clear_values(&mut self.made);
        self.bounds.clear();
        self.captured.iter_mut().for_each(Vec::clear);
        clear_values(&mut self.results);
        SCRATCH.with(|s| {
            let mut kept = s.borrow_mut();
            if kept.len() < SCRATCH_KEPT {
                kept.push(self);
            }
        });
    }
}

impl Nested {
    /// Where the inner kernel's rows are remembered during one evaluation, so that a row that
    /// comes back (the same member with the same captured values, in another container:
    /// `valmin(remove(o, objects), distance(l, ·))` for every object `o` and location `l` meets
    /// each (object, location) row once per other object) runs once. Looking a row up costs a
    /// hash of its values' identities: blocks of fewer than [`MIN_MEMO_ROWS`] rows are not
    /// looked up, and a cheap inner kernel whose rows were found mostly distinct does not look
    /// for its next [`RETRY_MEMO`] evaluations.
    fn memo(&self) -> Option<RowMemo> {
        (!skipped(&self.skip_memo)).then(RowMemo::default)
    }

    /// [`Nested::eval`] of the elements `0..live` of this kernel's `values`, where an element
    /// that comes back (the same container with the same captured values) is not run again:
    /// `apply(abs, subtract(l, centre))` for every location `l` and object meets a few
    /// thousand distinct differences in hundreds of thousands of elements. Looking an element up
    /// costs a hash of its values' identities: over a constant container (the same for all),
    /// or fewer than [`MIN_MEMO_ROWS`] elements, they are run as they are, and elements found
    /// mostly distinct are not looked up for the next [`RETRY_MEMO`] evaluations. `met` keeps
    /// the elements met for the next block of the evaluation this one is part of.
    fn eval_distinct(
        &self,
        values: &[Column],
        columns: &[&[Value]],
        live: usize,
        met: Option<&mut Option<RowMemo>>,
    ) -> (Vec<Value>, Option<(usize, DslError)>) {
        let inputs = self.inputs(values);
        let mut own = None;
        let met = met.unwrap_or(&mut own);
        if matches!(inputs[0], Column::Const(_))
            || met.is_none() && (live < MIN_MEMO_ROWS || skipped(&self.skip_elements))
        {
            return self.eval(&inputs, columns, live);
        }
        // The inputs as slices: borrowed copies where they are not stored as one (SAFETY:
        // `values` and `columns` keep every value alive for the whole call).
        let copies: SmallVec<[Vec<ManuallyDrop<Value>>; 4]> = inputs
            .iter()
            .map(|c| match c.as_slice(columns) {
                Some(_) => Vec::new(),
                None => {
                    let mut reader = Reader::new(c, columns, 1);
                    (0..live).map(|_| unsafe { borrowed(reader.next()) }).collect()
                }
            })
            .collect();
        let slices: SmallVec<[&[Value]; 4]> = inputs
            .iter()
            .zip(&copies)
            .map(|(c, copy)| c.as_slice(columns).map_or(as_values(copy), |s| &s[..live]))
            .collect();
        let memo = met.get_or_insert_with(RowMemo::default);
        let mapped = memo.eval(&slices, live, |rows, n| {
            let args: SmallVec<[Column; 4]> = (0..rows.len()).map(Column::Arg).collect();
            let inputs: SmallVec<[&Column; 4]> = args.iter().collect();
            let (values, failure) = self.eval(&inputs, rows, n);
            Mapped {
                values,
                error: failure.map(|(_, e)| e),
            }
        });
        if !memo.repeats() {
            self.skip_elements.store(RETRY_MEMO, Ordering::Relaxed);
            *met = None;
        }
        let failure = mapped.error.map(|e| (mapped.values.len(), e));
        (mapped.values, failure)
    }

    /// The mapping primitive for elements `0..live` of `inputs`, the container column and
    /// the captured values' columns: the values, and the first element that raised (its
    /// container not iterable, a member's function call, or the combination).
    fn eval(&self, inputs: &[&Column], columns: &[&[Value]], live: usize) -> (Vec<Value>, Option<(usize, DslError)>) {
        let (mut outs, failure) = self.eval_each(inputs, columns, live);
        (outs.swap_remove(0), failure)
    }

    /// A group's mappings ([`Siblings`]) for elements `0..live` of this kernel's `values`:
    /// each mapping's values, or `None` where anything raised.
    fn eval_group(&self, values: &[Column], columns: &[&[Value]], live: usize) -> Option<PerOutput> {
        let (outs, failure) = self.eval_each(&self.inputs(values), columns, live);
        failure.is_none().then_some(outs)
    }

    /// The container's column and the captured values' columns, among the kernel's `values`.
    fn inputs<'a>(&self, values: &'a [Column]) -> SmallVec<[&'a Column; 4]> {
        std::iter::once(&self.container)
            .chain(&self.captures)
            .map(|&n| &values[n as usize])
            .collect()
    }

    /// [`Nested::eval_with`] on a thread's member buffers.
    fn eval_each(
        &self,
        inputs: &[&Column],
        columns: &[&[Value]],
        live: usize,
    ) -> (PerOutput, Option<(usize, DslError)>) {
        let mut scratch = Scratch::take(self.captures.len());
        let result = self.eval_with(&mut scratch, inputs, columns, live);
        scratch.give_back();
        result
    }

    /// [`Nested::eval`] with its member buffers, for each mapping. With several mappings (a
    /// group's, over a constant container), a failure's element is only where the block it
    /// happened in starts: a group that fails is not used, and its kernel runs again in its
    /// own order (see [`Siblings`]).
    fn eval_with(
        &self,
        scratch: &mut Scratch,
        inputs: &[&Column],
        columns: &[&[Value]],
        live: usize,
    ) -> (PerOutput, Option<(usize, DslError)>) {
        let container = inputs[0];
        let constant = matches!(container, Column::Const(_));
        let mut outs: PerOutput = self.mappings.iter().map(|_| Vec::with_capacity(live)).collect();
        let mut memo = self.memo();
        let mut start = 0;
        // The members of elements start..end laid end to end, with the captured values;
        // container k's members end at bounds[k]. Reused from block to block. They are copies
        // borrowed (see `borrowed`) from the containers and captured values, which outlive
        // this call, or from `made`, which holds the members built from a container's data
        // (a grid's rows, a patch's cells): no reference count changes per member.
        let Scratch {
            flat,
            made,
            bounds,
            captured,
            results: buffer,
        } = scratch;
        let mut kept = Kept::default();
        while start < live {
            flat.clear();
            clear_values(made);
            bounds.clear();
            captured.iter_mut().for_each(Vec::clear);
            let mut stop: Option<(usize, DslError)> = None;
            let mut end = start;
            while end < live && (end == start || flat.len() < BLOCK) {
                let before = flat.len();
                match container.get(columns, end) {
                    // SAFETY (of each copy): the container lives in `inputs` or `columns`.
                    Value::Tuple(items) | Value::Set(items) if !items.is_empty() => {
                        flat.extend(items.iter().map(|v| unsafe { borrowed(v) }))
                    }
                    c => {
                        let from = made.len();
                        if let Err(e) = (self.mappings[0].members)(c, made) {
                            made.truncate(from);
                            stop = Some((end, e));
                            break;
                        }
                        // SAFETY: `made` keeps each member's allocation alive until it is
                        // cleared with `flat`; moving a value does not move its allocation.
                        flat.extend(made[from..].iter().map(|v| unsafe { borrowed(v) }));
                    }
                }
                for (column, input) in captured.iter_mut().zip(&inputs[1..]) {
                    let v = input.get(columns, end);
                    // SAFETY: the captured value lives in `inputs` or `columns`.
                    column.extend((before..flat.len()).map(|_| unsafe { borrowed(v) }));
                }
                bounds.push(flat.len());
                end += 1;
            }
            let mut inner_columns: Vec<&[Value]> = Vec::with_capacity(inputs.len());
            inner_columns.push(as_values(flat));
            inner_columns.extend(captured[..inputs.len() - 1].iter().map(|c| as_values(c)));
            // One container for all: the member-only nodes run once, on the first block.
            // Otherwise rows met before (the same member with the same captured values) are not
            // run again.
            if constant {
                kept.period = bounds.first().copied().filter(|&m| m > 0);
            }
            let inner: SmallVec<[Mapped; 1]> = if self.mappings.len() > 1 {
                match self.inner.eval_all(&inner_columns, flat.len(), Some(&mut kept)) {
                    Ok(values) => values
                        .into_iter()
                        .map(|values| Mapped { values, error: None })
                        .collect(),
                    Err(e) => return (outs, Some((start, e))),
                }
            } else if constant {
                smallvec![self.inner.eval(&inner_columns, flat.len(), Some(&mut kept))]
            } else if let Some(m) = memo.as_mut().filter(|_| flat.len() >= MIN_MEMO_ROWS) {
                let inner = m.eval(&inner_columns, flat.len(), |rows, n| {
                    self.inner.eval(rows, n, Some(&mut kept))
                });
                if !self.inner.costly && !m.repeats() {
                    // Too few repeats to pay for looking them up.
                    self.skip_memo.store(RETRY_MEMO, Ordering::Relaxed);
                    memo = None;
                }
                smallvec![inner]
            } else {
                smallvec![self.inner.eval(&inner_columns, flat.len(), Some(&mut kept))]
            };
            for ((mapping, inner), out) in self.mappings.iter().zip(inner).zip(&mut outs) {
                let block = Block {
                    container,
                    columns,
                    start,
                    flat: &flat[..],
                    bounds: &bounds[..],
                };
                if let Some(failure) = block.combine(mapping, inner, buffer, out) {
                    return (outs, Some(failure));
                }
            }
            if stop.is_some() {
                return (outs, stop);
            }
            start = end;
        }
        (outs, None)
    }
}

/// The containers of one block of a nested evaluation, from element `start` on, their members
/// laid end to end in `flat` (container `k`'s ending at `bounds[k]`).
struct Block<'a> {
    container: &'a Column,
    columns: &'a [&'a [Value]],
    start: usize,
    flat: &'a [ManuallyDrop<Value>],
    bounds: &'a [usize],
}

impl Block<'_> {
    /// Hands each container its members' results under `mapping`, up to the first that raised,
    /// in one buffer refilled for each, and pushes the combined value onto `out`: the first
    /// element whose combination raised, with its error (`combine` raises a member's error
    /// after what precedes it in the reference's loop).
    fn combine(
        &self,
        mapping: &Mapping,
        inner: Mapped,
        buffer: &mut Vec<Value>,
        out: &mut Vec<Value>,
    ) -> Option<(usize, DslError)> {
        let mut results = mapping.raised(inner);
        let mut taken = results.values.drain(..);
        let mut keys = Mapped {
            values: std::mem::take(buffer),
            error: None,
        };
        let mut from = 0;
        let mut failure = None;
        for (k, &to) in self.bounds.iter().enumerate() {
            let element = self.start + k;
            let members = as_values(&self.flat[from..to]);
            from = to;
            let have = taken.len().min(members.len());
            keys.values.clear();
            keys.values.extend(taken.by_ref().take(have));
            keys.error = if have < members.len() {
                results.error.take()
            } else {
                None
            };
            match (mapping.combine)(self.container.get(self.columns, element), members, &mut keys) {
                Err(e) => {
                    failure = Some((element, e));
                    break;
                }
                Ok(v) => out.push(v),
            }
        }
        *buffer = keys.values;
        failure
    }
}

// ----- compiling ------------------------------------------------------------------------------

/// A closure the compiler keeps symbolic: its parts are nodes (see the module doc). The
/// compiler never makes a symbolic [`Func::Prim`]; [`Builder::inline`] calls one as a primitive.
type Sym = Func<NodeId>;

/// The primitives the compiler knows by name.
struct Known {
    identity: PrimId,
    first: PrimId,
    last: PrimId,
    astuple: PrimId,
    compose: PrimId,
    chain: PrimId,
    fork: PrimId,
    matcher: PrimId,
    rbind: PrimId,
    lbind: PrimId,
    power: PrimId,
    remove: PrimId,
}

static KNOWN: LazyLock<Known> = LazyLock::new(|| {
    let id = PrimId::builtin;
    Known {
        identity: id("identity"),
        first: id("first"),
        last: id("last"),
        astuple: id("astuple"),
        compose: id("compose"),
        chain: id("chain"),
        fork: id("fork"),
        matcher: id("matcher"),
        rbind: id("rbind"),
        lbind: id("lbind"),
        power: id("power"),
        remove: id("remove"),
    }
});

/// A kernel running this many primitive nodes is [`Kernel::costly`].
const COSTLY_NODES: usize = 8;

/// Past this many nodes a kernel inlines no more: further calls go through the scalar path
/// (`power(power(rot90, 900), 900)` would otherwise unfold into 810,000 nodes).
const MAX_KERNEL_NODES: usize = 4096;

/// How many nodes a builder makes room for at first: most kernels have fewer.
const NODES_EXPECTED: usize = 16;

/// What a node computes: the key under which a builder finds a node it made before.
#[derive(PartialEq, Eq, Hash)]
enum Key {
    /// A constant, by [`identity`].
    Const(u64),
    /// A primitive on nodes, whatever node it became (a constant folded, a symbolic closure, a
    /// nested mapping, a node made before).
    Prim(PrimId, Args),
    Equals(NodeId, NodeId),
    Call(NodeId, Args),
}

/// The nodes a builder made, by [`Key`]. A builder makes a handful: a scan of a vector finds one
/// for less than a hash table costs to allocate, grow and hash. Past [`SCANNED_KEYS`] (a closure
/// unfolded by `power`) they move into a table, so that a large kernel is not built in
/// quadratic time.
struct Made {
    /// Each key with its [`Key::fingerprint`], which the scan compares first.
    scanned: Vec<(u64, Key, NodeId)>,
    table: HashMap<Key, NodeId>,
}

/// The most keys [`Made`] scans.
const SCANNED_KEYS: usize = 32;

impl Made {
    /// The node made for `key`, of fingerprint `print`.
    fn get(&self, key: &Key, print: u64) -> Option<NodeId> {
        if !self.table.is_empty() {
            return self.table.get(key).copied();
        }
        (self.scanned.iter())
            .find(|(p, k, _)| *p == print && k == key)
            .map(|&(_, _, n)| n)
    }

    /// Records `n` as the node made for `key`, of fingerprint `print`.
    fn insert(&mut self, key: Key, print: u64, n: NodeId) {
        if self.table.is_empty() && self.scanned.len() < SCANNED_KEYS {
            self.scanned.push((print, key, n));
            return;
        }
        self.table.extend(self.scanned.drain(..).map(|(_, k, n)| (k, n)));
        self.table.insert(key, n);
    }
}

impl Key {
    /// A number equal for equal keys, and rarely for others: one comparison rules out most
    /// keys in [`Made`]'s scan.
    fn fingerprint(&self) -> u64 {
        let mix = |h: u64, x: u64| (h.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let nodes = |h: u64, nodes: &[NodeId]| nodes.iter().fold(h, |h, &n| mix(h, n.into()));
        match self {
            Key::Const(id) => *id,
            Key::Prim(id, args) => nodes(mix(1, id.0.into()), args),
            Key::Equals(a, b) => nodes(2, &[*a, *b]),
            Key::Call(function, args) => nodes(mix(3, (*function).into()), args),
        }
    }
}

/// Builds a kernel's nodes from a closure tree. A builder for an inner kernel reads its
/// parent's nodes: constants and symbolic closures are copied in, anything else is captured.
///
/// A call made twice on the same nodes is one node: `fork(f, x15, compose(g, x15))` computes
/// `x15` once per element. This keeps each element's first error, as every function value is
/// pure: the second call could only raise what the first already raised, at an earlier node.
struct Builder<'p> {
    nodes: Vec<Node>,
    syms: Vec<Option<Sym>>,
    /// The node made for each call made so far (see [`Key`]).
    made: Made,
    arity: usize,
    parent: Option<&'p Builder<'p>>,
    /// The parent's nodes captured so far (inner argument `arity + k` is `captures[k]`), and
    /// where each parent node was copied to.
    captures: Vec<NodeId>,
    imported: Vec<Option<NodeId>>,
    /// Whether a decision made while compiling read a container of the closure (a primitive
    /// run on constants, a comparison of constants, a container called): then the kernel is
    /// this closure's only, and is not rebound to another's containers.
    read_containers: bool,
    /// Each [`Node::Nested`] made, with the node of its function.
    functions: Vec<(NodeId, NodeId)>,
}

impl<'p> Builder<'p> {
    fn new(arity: usize, parent: Option<&'p Builder<'p>>) -> Builder<'p> {
        // Room for most kernels' nodes, so that they are not copied as they grow.
        let mut b = Builder {
            nodes: Vec::with_capacity(NODES_EXPECTED),
            syms: Vec::with_capacity(NODES_EXPECTED),
            made: Made {
                scanned: Vec::with_capacity(NODES_EXPECTED),
                table: HashMap::new(),
            },
            arity,
            parent,
            captures: Vec::new(),
            imported: vec![None; parent.map_or(0, |p| p.nodes.len())],
            read_containers: false,
            functions: Vec::new(),
        };
        for k in 0..arity {
            b.push(Node::Arg(k));
        }
        b
    }

    fn finish(self, out: NodeId) -> Kernel {
        self.finish_all(smallvec![out])
    }

    /// The kernel whose values are those of the nodes `outs`.
    fn finish_all(mut self, outs: SmallVec<[NodeId; 1]>) -> Kernel {
        self.fuse(&outs);
        let siblings = Siblings::plan(&self).map(Box::new);
        let runs = runs(&self.nodes, &self.syms, &outs);
        let (member_only, capture_only) = member_and_capture_only(&self.nodes);
        let running = || self.nodes.iter().zip(&runs).filter(|(_, &r)| r).map(|(n, _)| n);
        let costly = running().any(|n| matches!(n, Node::Nested(_) | Node::Call { .. }))
            || running()
                .filter(|n| matches!(n, Node::Prim { .. } | Node::Fused { .. }))
                .count()
                >= COSTLY_NODES;
        Kernel {
            nodes: self.nodes,
            runs,
            member_only,
            capture_only,
            outs,
            siblings,
            costly,
            rebindable: !self.read_containers,
        }
    }

    /// Runs the compositions [`Fused`] knows (a count of a set operation or of a colour, the
    /// first argument made by `shift`, `delta`, `outbox` or the neighbours of a location or
    /// not, a set operation's count compared with zero, two projections in a row, and chains of
    /// integer primitives) as one [`Node::Fused`] each, where nothing else reads the values in
    /// between. The fused node takes the place of the last call, and the calls it replaces
    /// become [`Node::Moved`]. This keeps each element's first error: the fused node raises
    /// what the first of its calls to fail would, and it only moves a call past nodes that
    /// cannot raise (the reference never calls anything between the calls fused).
    fn fuse(&mut self, outs: &[NodeId]) {
        // How many nodes (or outputs) read each node: counted at the first pair of calls that
        // fuse, as most kernels have none (until then no node has changed).
        let mut readers: Vec<u32> = Vec::new();
        let count_readers = |b: &Builder| {
            let mut readers = vec![0u32; b.nodes.len()];
            for &out in outs {
                readers[out as usize] += 1;
            }
            for node in &b.nodes {
                reads(node, |n| readers[n as usize] += 1);
            }
            readers
        };
        let mut fused_any = false;
        // Read in place: most nodes fuse with none, and their arguments are not copied.
        fn prim(nodes: &[Node], n: NodeId) -> Option<(PrimId, &[NodeId])> {
            match &nodes[n as usize] {
                Node::Prim { id, args } => Some((*id, args)),
                _ => None,
            }
        }
        // Whether every node after `from` and before `to` cannot raise.
        let quiet =
            |b: &Builder, from: NodeId, to: usize| (from as usize + 1..to).all(|k| cannot_raise(&b.nodes, &b.syms, k));
        for k in 0..self.nodes.len() {
            let Some((outer, outer_args)) = prim(&self.nodes, k as NodeId) else {
                continue;
            };
            let Some((&set, rest)) = outer_args.split_first() else {
                continue;
            };
            let Some((inner, operands)) = prim(&self.nodes, set) else {
                continue;
            };
            let Some(mut op) = Fused::of(outer, inner).filter(|op| operands.len() + rest.len() == op.arity()) else {
                continue;
            };
            if readers.is_empty() {
                readers = count_readers(self);
            }
            if readers[set as usize] != 1 || self.syms[set as usize].is_some() || !quiet(self, set, k) {
                continue;
            }
            let (mut args, rest) = (Args::from_slice(operands), Args::from_slice(rest));
            self.nodes[set as usize] = Node::Moved;
            let first_set = args[0];
            if let Some((first, first_args)) = prim(&self.nodes, first_set) {
                let alone = readers[first_set as usize] == 1 && self.syms[first_set as usize].is_none();
                if let Some(with_first) = op.with_first(first).filter(|_| alone && quiet(self, first_set, k)) {
                    op = with_first;
                    args = first_args.iter().chain(&args[1..]).copied().collect();
                    self.nodes[first_set as usize] = Node::Moved;
                }
            }
            args.extend_from_slice(&rest);
            debug_assert_eq!(args.len(), op.arity());
            self.nodes[k] = Node::Fused { op, args };
            fused_any = true;
        }
        // Chains of integer primitives: a step continues the chain or primitive that is the
        // first of its arguments read by it only.
        for k in 0..self.nodes.len() {
            let Some((outer, outer_args)) = prim(&self.nodes, k as NodeId)
                .filter(|&(id, args)| self.syms[k].is_none() && Fused::chain_of(id, args.len()).is_some())
            else {
                continue;
            };
            if readers.is_empty() {
                readers = count_readers(self);
            }
            let chained = outer_args.iter().enumerate().find_map(|(position, &inner)| {
                if readers[inner as usize] != 1 || self.syms[inner as usize].is_some() || !quiet(self, inner, k) {
                    return None;
                }
                let (chain, inner_args) = match &self.nodes[inner as usize] {
                    Node::Prim { id, args } => (Fused::chain_of(*id, args.len())?, args),
                    Node::Fused { op, args } => (*op, args),
                    _ => return None,
                };
                let op = chain.then(outer, outer_args.len(), position)?;
                Some((op, position, inner, inner_args.clone()))
            });
            let Some((op, position, inner, mut args)) = chained else {
                continue;
            };
            let operands = outer_args.iter().enumerate().filter(|&(p, _)| p != position);
            args.extend(operands.map(|(_, &a)| a));
            debug_assert_eq!(args.len(), op.arity());
            self.nodes[inner as usize] = Node::Moved;
            self.nodes[k] = Node::Fused { op, args };
            fused_any = true;
        }
        if !fused_any {
            return;
        }
        // `equality` of two projections of projections of one value (fused above): one node,
        // which picks both from each row and compares them. The first is computed first, as the
        // fork computes it, and nothing between it and the comparison but the second may raise.
        for k in 0..self.nodes.len() {
            let Some((outer, &[a, b])) = prim(&self.nodes, k as NodeId) else {
                continue;
            };
            let (Node::Fused { op: pick_a, args: of_a }, Node::Fused { op: pick_b, args: of_b }) =
                (&self.nodes[a as usize], &self.nodes[b as usize])
            else {
                continue;
            };
            let Some(op) = Fused::of_two_picks(outer, *pick_a, *pick_b).filter(|_| of_a == of_b && a < b) else {
                continue;
            };
            let alone = |n: NodeId| readers[n as usize] == 1 && self.syms[n as usize].is_none();
            let quiet_but_b = (a as usize + 1..k).all(|n| n == b as usize || cannot_raise(&self.nodes, &self.syms, n));
            if !alone(a) || !alone(b) || !quiet_but_b {
                continue;
            }
            let args = of_a.clone();
            self.nodes[a as usize] = Node::Moved;
            self.nodes[b as usize] = Node::Moved;
            self.nodes[k] = Node::Fused { op, args };
        }
        // `matcher(size, ZERO)` of a fused count: the count tested, which may stop early.
        for k in 0..self.nodes.len() {
            let Node::Equals(value, target) = self.nodes[k] else {
                continue;
            };
            let (Node::Fused { op, args }, Node::Const(Value::Int(0))) =
                (&self.nodes[value as usize], &self.nodes[target as usize])
            else {
                continue;
            };
            let Some(tested) = op.tested_against_zero() else {
                continue;
            };
            if readers[value as usize] != 1 || self.syms[value as usize].is_some() || !quiet(self, value, k) {
                continue;
            }
            let args = args.clone();
            self.nodes[value as usize] = Node::Moved;
            self.nodes[k] = Node::Fused { op: tested, args };
        }
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.syms.push(None);
        (self.nodes.len() - 1) as NodeId
    }

    /// The node `key` names if one was made, else the one `make` makes.
    fn made_once(&mut self, key: Option<Key>, make: impl FnOnce(&mut Self) -> NodeId) -> NodeId {
        let Some(key) = key else {
            return make(self);
        };
        let print = key.fingerprint();
        if let Some(n) = self.made.get(&key, print) {
            return n;
        }
        let n = make(self);
        self.made.insert(key, print, n);
        n
    }

    fn constant(&mut self, v: &Value) -> NodeId {
        self.made_once(identity(v).map(Key::Const), |b| b.push(Node::Const(v.clone())))
    }

    fn const_value(&self, n: NodeId) -> Option<&Value> {
        match &self.nodes[n as usize] {
            Node::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The arity of the function a node holds, where the compiler knows it.
    fn arity_of(&self, n: NodeId) -> Option<usize> {
        match (&self.nodes[n as usize], &self.syms[n as usize]) {
            (Node::Const(Value::Func(f)), _) => Some(f.arity()),
            (_, Some(sym)) => Some(sym.arity_with(|&f| self.arity_of(f))),
            _ => None,
        }
    }

    /// Whether a node certainly holds a function (so binding it cannot raise).
    fn is_function(&self, n: NodeId) -> bool {
        matches!(self.nodes[n as usize], Node::Const(Value::Func(_))) || self.syms[n as usize].is_some()
    }

    /// `f(args...)` for a function value, exactly as [`super::func::call`] evaluates it.
    fn call(&mut self, f: &Value, args: &[NodeId]) -> NodeId {
        if self.nodes.len() > MAX_KERNEL_NODES {
            let function = self.constant(f);
            return self.dynamic_call(function, args);
        }
        let func = match callable(f, args.len()) {
            // Called as it is, element by element (a constant taken from a container).
            Ok(Func::Foreign(_)) => {
                let function = self.constant(f);
                return self.dynamic_call(function, args);
            }
            Ok(func) => func,
            Err(e) => {
                self.read_containers |= holds_container(f);
                return self.push(Node::Raise(e));
            }
        };
        self.inline(func, args)
    }

    /// `f(args...)` for a function held by a node.
    fn call_node(&mut self, f: NodeId, args: &[NodeId]) -> NodeId {
        if let Some(v) = self.const_value(f) {
            let v = v.clone();
            return self.call(&v, args);
        }
        match self.syms[f as usize].clone() {
            // A wrong arity raises with the closure's text, which only the built closure has.
            Some(sym) if self.arity_of(f) == Some(args.len()) && self.nodes.len() <= MAX_KERNEL_NODES => {
                self.inline(&sym, args)
            }
            _ => self.dynamic_call(f, args),
        }
    }

    /// `f(args...)` through the scalar path, element by element.
    fn dynamic_call(&mut self, function: NodeId, args: &[NodeId]) -> NodeId {
        let args = Args::from_slice(args);
        self.made_once(Some(Key::Call(function, args.clone())), |b| {
            b.push(Node::Call { function, args })
        })
    }

    /// A closure's body on arguments: a symbolic closure's, or a function value's (whose parts
    /// become nodes only where they are values, not where they are called).
    fn inline<P: Part>(&mut self, sym: &Func<P>, args: &[NodeId]) -> NodeId {
        match sym {
            Func::Prim(id) => self.prim(*id, args),
            Func::Compose(outer, inner) => {
                let x = inner.called(self, args);
                outer.called(self, &[x])
            }
            Func::Chain(h, g, f) => {
                let x = f.called(self, args);
                let y = g.called(self, &[x]);
                h.called(self, &[y])
            }
            Func::Fork(outer, a, b) => {
                let x = a.called(self, args);
                let y = b.called(self, args);
                outer.called(self, &[x, y])
            }
            Func::Matcher(function, target) => {
                let value = function.called(self, args);
                let target = target.node(self);
                match (self.const_value(value), self.const_value(target)) {
                    (Some(v), Some(t)) => {
                        let (read, b) = (holds_container(v) || holds_container(t), Value::Bool(v == t));
                        self.read_containers |= read;
                        self.push(Node::Const(b))
                    }
                    _ => self.made_once(Some(Key::Equals(value, target)), |b| {
                        b.push(Node::Equals(value, target))
                    }),
                }
            }
            Func::Rbind(function, fixed) => {
                let mut full = Args::from_slice(args);
                full.push(fixed.node(self));
                function.called(self, &full)
            }
            Func::Lbind(function, fixed) => {
                let mut full: Args = SmallVec::new();
                full.push(fixed.node(self));
                full.extend(args.iter().copied());
                function.called(self, &full)
            }
            Func::Power(function, n) => {
                let mut x = function.called(self, args);
                for _ in 1..*n {
                    x = function.called(self, &[x]);
                }
                x
            }
            // Called as it is, element by element ([`Builder::call`] does so before it gets
            // here; work holding one does not even compile, see `one_at_a_time`).
            Func::Foreign(f) => {
                let function = self.constant(&Value::func(Func::Foreign(f.clone())));
                self.dynamic_call(function, args)
            }
        }
    }

    /// A primitive call, simplified where its result is known without running it per element.
    fn prim(&mut self, id: PrimId, args: &[NodeId]) -> NodeId {
        self.made_once(Some(Key::Prim(id, Args::from_slice(args))), |b| b.new_prim(id, args))
    }

    /// [`Builder::prim`] made anew.
    fn new_prim(&mut self, id: PrimId, args: &[NodeId]) -> NodeId {
        let known = &*KNOWN;
        if id == known.identity {
            return args[0];
        }
        if id == known.first || id == known.last {
            if let Node::Prim { id: inner, args: pair } = &self.nodes[args[0] as usize] {
                if *inner == known.astuple {
                    return pair[usize::from(id == known.last)];
                }
            }
        }
        if args.iter().all(|&a| self.const_value(a).is_some()) {
            let constants: SmallVec<[Value; 4]> = args.iter().filter_map(|&a| self.const_value(a).cloned()).collect();
            self.read_containers |= constants.iter().any(holds_container);
            match (id.spec().imp)(&constants) {
                Ok(v) => return self.push(Node::Const(v)),
                Err(e) if !e.is_transient() => return self.push(Node::Raise(e)),
                Err(_) => {}
            }
        }
        if let Some(sym) = self.symbolic(id, args) {
            if let Func::Power(f, 1) = sym {
                return f;
            }
            let n = self.push(Node::Prim {
                id,
                args: Args::from_slice(args),
            });
            self.syms[n as usize] = Some(sym);
            return n;
        }
        if let Some(mapping) = id.spec().mapping {
            let (container, function) = (args[mapping.container], args[mapping.function]);
            if self.is_function(function) {
                if let Some(n) = self.without(id, container, function) {
                    return n;
                }
                return self.nested(mapping, container, function);
            }
        }
        self.push(Node::Prim {
            id,
            args: Args::from_slice(args),
        })
    }

    /// The closure a closure-building primitive makes, when it cannot raise.
    fn symbolic(&self, id: PrimId, args: &[NodeId]) -> Option<Sym> {
        let k = &*KNOWN;
        Some(match args {
            [a, b] if id == k.compose => Func::Compose(*a, *b),
            [a, b, c] if id == k.chain => Func::Chain(*a, *b, *c),
            [a, b, c] if id == k.fork => Func::Fork(*a, *b, *c),
            [a, b] if id == k.matcher => Func::Matcher(*a, *b),
            [a, b] if id == k.rbind && self.is_function(*a) => Func::Rbind(*a, *b),
            [a, b] if id == k.lbind && self.is_function(*a) => Func::Lbind(*a, *b),
            [a, b] if id == k.power => match self.const_value(*b)?.as_int().ok()? {
                n @ 1..=super::func::MAX_POWER => Func::Power(*a, n as u32),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// A mapping primitive whose function is a constant or a symbolic closure.
    fn nested(&mut self, mapping: &'static Mapping, container: NodeId, function: NodeId) -> NodeId {
        let (nested, read_containers) = self.compile_nested(smallvec![mapping], container, &[function]);
        self.read_containers |= read_containers;
        let n = self.push(Node::Nested(Box::new(nested)));
        self.functions.push((n, function));
        n
    }

    /// `mappings` over `container`, each applying the function its place in `functions` names
    /// (symbolic closures or constants of this builder), compiled into one inner kernel with an
    /// output per function; and whether compiling it read a container of the closure.
    fn compile_nested(
        &self,
        mappings: SmallVec<[&'static Mapping; 1]>,
        container: NodeId,
        functions: &[NodeId],
    ) -> (Nested, bool) {
        let mut inner = Builder::new(1, Some(self));
        let outs = functions
            .iter()
            .map(|&function| {
                let f = inner.import(function);
                inner.call_node(f, &[0])
            })
            .collect();
        let captures = std::mem::take(&mut inner.captures);
        let read_containers = inner.read_containers;
        let nested = Nested {
            mappings,
            container,
            inner: inner.finish_all(outs),
            captures,
            skip_memo: AtomicU32::new(0),
            skip_elements: AtomicU32::new(0),
        };
        (nested, read_containers)
    }

    /// `valmin(remove(m, S), f)` (or `valmax`, `argmin`, `argmax`) for a constant set `S`, as
    /// the summary of `S` under `f`, which does not depend on `m`, and the result picked from it
    /// for `m` (see [`Without`]). `remove(m, S)` itself stays where it is, and may raise there.
    fn without(&mut self, id: PrimId, container: NodeId, function: NodeId) -> Option<NodeId> {
        let op = Without::of(id)?;
        let (member, set) = self.removed_from_set(container)?;
        let summary = self.nested(op.best_two(), set, function);
        let args = [summary, member, container, function].into_iter().collect();
        Some(self.push(Node::Without { op, args }))
    }

    /// `(m, S)` where node `n` is `remove(m, S)` of a constant set `S` ([`Value::Set`]), made
    /// by this builder or captured from its parent's.
    fn removed_from_set(&mut self, n: NodeId) -> Option<(NodeId, NodeId)> {
        let removal = |b: &Builder, n: NodeId| match &b.nodes[n as usize] {
            Node::Prim { id, args } if *id == KNOWN.remove && matches!(b.const_value(args[1]), Some(Value::Set(_))) => {
                Some((args[0], args[1]))
            }
            _ => None,
        };
        match self.nodes[n as usize] {
            Node::Arg(k) if k >= self.arity => {
                let parent = self.parent?;
                let (member, set) = removal(parent, self.captures[k - self.arity])?;
                Some((self.import(member), self.import(set)))
            }
            _ => removal(self, n),
        }
    }

    /// A parent's node as a node of this (inner) builder.
    fn import(&mut self, n: NodeId) -> NodeId {
        let parent = self.parent.expect("only inner builders import");
        if let Some(done) = self.imported[n as usize] {
            return done;
        }
        let mine = match (&parent.nodes[n as usize], &parent.syms[n as usize]) {
            (Node::Const(v), _) => self.constant(v),
            (Node::Prim { id, args }, Some(sym)) => {
                let args: Args = args.iter().map(|&a| self.import(a)).collect();
                let sym = sym.map(|&part| self.import(part));
                let node = self.push(Node::Prim { id: *id, args });
                self.syms[node as usize] = Some(sym);
                node
            }
            _ => {
                self.captures.push(n);
                self.push(Node::Arg(self.arity + self.captures.len() - 1))
            }
        };
        self.imported[n as usize] = Some(mine);
        mine
    }
}

/// A part of a closure that [`Builder::inline`] inlines: a node of a symbolic closure, or a
/// value of a function value's tree. A value part that is called is inlined where it is, without
/// a node of its own (nothing reads it at run time); one that is bound or compared is a constant.
trait Part {
    /// The part called on `args`.
    fn called(&self, builder: &mut Builder<'_>, args: &[NodeId]) -> NodeId;
    /// The node holding the part.
    fn node(&self, builder: &mut Builder<'_>) -> NodeId;
}

impl Part for NodeId {
    fn called(&self, builder: &mut Builder<'_>, args: &[NodeId]) -> NodeId {
        builder.call_node(*self, args)
    }

    fn node(&self, _: &mut Builder<'_>) -> NodeId {
        *self
    }
}

impl Part for Value {
    fn called(&self, builder: &mut Builder<'_>, args: &[NodeId]) -> NodeId {
        builder.call(self, args)
    }

    fn node(&self, builder: &mut Builder<'_>) -> NodeId {
        builder.constant(self)
    }
}

/// Which nodes depend on constants and the first argument only, and which on constants and
/// the other arguments only ([`Kernel::member_only`], [`Kernel::capture_only`]), in one pass.
fn member_and_capture_only(nodes: &[Node]) -> (Vec<bool>, Vec<bool>) {
    let mut member_only: Vec<bool> = Vec::with_capacity(nodes.len());
    let mut capture_only: Vec<bool> = Vec::with_capacity(nodes.len());
    for node in nodes {
        let (member, capture) = match node {
            Node::Arg(k) => (*k == 0, *k != 0),
            _ => {
                let (mut member, mut capture) = (true, true);
                reads(node, |n| {
                    member &= member_only[n as usize];
                    capture &= capture_only[n as usize];
                });
                (member, capture)
            }
        };
        member_only.push(member);
        capture_only.push(capture);
    }
    (member_only, capture_only)
}

/// Which nodes must run: those read by a node that runs, and every node that may raise.
fn runs(nodes: &[Node], syms: &[Option<Sym>], outs: &[NodeId]) -> Vec<bool> {
    let mut runs = vec![false; nodes.len()];
    for &out in outs {
        runs[out as usize] = true;
    }
    for k in (0..nodes.len()).rev() {
        runs[k] |= !cannot_raise(nodes, syms, k);
        if runs[k] {
            reads(&nodes[k], |n| runs[n as usize] = true);
        }
    }
    runs
}

/// Whether node `k` certainly does not raise.
fn cannot_raise(nodes: &[Node], syms: &[Option<Sym>], k: usize) -> bool {
    match &nodes[k] {
        Node::Arg(_) | Node::Const(_) | Node::Equals(..) | Node::Moved => true,
        Node::Prim { id, .. } => *id == KNOWN.astuple || syms[k].is_some(),
        _ => false,
    }
}

/// Calls `read` with each node `node` reads.
fn reads(node: &Node, mut read: impl FnMut(NodeId)) {
    match node {
        Node::Prim { args, .. } | Node::Fused { args, .. } | Node::Without { args, .. } => {
            args.iter().copied().for_each(read)
        }
        Node::Call { function, args } => {
            read(*function);
            args.iter().copied().for_each(read);
        }
        Node::Equals(a, b) => {
            read(*a);
            read(*b);
        }
        Node::Nested(nested) => {
            read(nested.container);
            nested.captures.iter().copied().for_each(read);
        }
        Node::Arg(_) | Node::Const(_) | Node::Raise(_) | Node::Moved => {}
    }
}

// ----- the kernel cache ---------------------------------------------------------------------

thread_local! {
    /// Recently compiled kernels: a function applied in a loop (once per element of an outer
    /// container) compiles once, and so does a closure built anew with other containers in the
    /// same places (`lbind(shift, obj)` for each object), whose kernel is the first's with the
    /// constants replaced (in place where no run holds the first's: the entry becomes the new
    /// closure's, and the loop's closures take one entry, not all). Each entry holds its
    /// function, so that no allocation it names is reused by another while it is here.
    static KERNELS: RefCell<Vec<CachedKernel>> = const { RefCell::new(Vec::new()) };
}

/// A compiled function.
struct CachedKernel {
    /// [`closure_hashes`] of the function, by its values and by its shape.
    hash: u64,
    shape: u64,
    func: Shared<Func>,
    /// The arity it was compiled for.
    arity: usize,
    /// Counted without atomic instructions: a kernel never leaves its thread's cache and the
    /// runs of it that this thread has under way.
    kernel: Rc<Kernel>,
}

const CACHED_KERNELS: usize = 32;

/// The most parts a look-up walks in a closure (a tree built by sharing may be exponentially
/// large as a tree).
const WALKED_PARTS: u32 = 64;

/// Whether two functions are the same closure tree over the same values: primitives, numbers
/// and pairs compared by value (`True` is not `1` here), containers by allocation only, so that
/// the test never walks data. A solver's `fork(either, vline, hline)` is built anew on every
/// sample, and finds the kernel compiled for the first.
fn same_func(a: &Func, b: &Func) -> bool {
    same_func_walked(a, b, &mut SmallVec::new())
}

/// [`same_func`], given the pairs of closures (by address) found the same so far in this walk.
/// A pair met again is not walked again, as [`same_shape`] does: a closure built by sharing (a
/// solver's `x5`, which every step that uses it holds) may be exponentially larger as a tree
/// than its distinct parts (`fork(f, f, f)` nested twenty deep is 3^20 closures, 21 distinct),
/// and this walk, unlike the hash's, has no budget.
fn same_func_walked(a: &Func, b: &Func, same: &mut SmallVec<[(usize, usize); 8]>) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    if let (Func::Prim(x), Func::Prim(y)) = (a, b) {
        return x == y;
    }
    let key = (a as *const Func as usize, b as *const Func as usize);
    if same.contains(&key) {
        return true;
    }
    let found = same_tree(a, b, |x, y| match (x, y) {
        (Value::Func(f), Value::Func(g)) => same_func_walked(f, g, same),
        _ => same_part(x, y),
    });
    if found {
        same.push(key);
    }
    found
}

/// Whether two functions are the same kind of closure with the same primitive or the same
/// power, and `same` holds for each pair of their parts in turn.
fn same_tree(a: &Func, b: &Func, mut same: impl FnMut(&Value, &Value) -> bool) -> bool {
    use Func::*;
    match (a, b) {
        (Prim(x), Prim(y)) => x == y,
        (Compose(a0, a1), Compose(b0, b1))
        | (Matcher(a0, a1), Matcher(b0, b1))
        | (Rbind(a0, a1), Rbind(b0, b1))
        | (Lbind(a0, a1), Lbind(b0, b1)) => same(a0, b0) && same(a1, b1),
        (Chain(a0, a1, a2), Chain(b0, b1, b2)) | (Fork(a0, a1, a2), Fork(b0, b1, b2)) => {
            same(a0, b0) && same(a1, b1) && same(a2, b2)
        }
        (Power(f, n), Power(g, m)) => n == m && same(f, g),
        (Foreign(f), Foreign(g)) => f == g,
        _ => false,
    }
}

/// A part of a closure that is not a closure itself, for [`same_func`] (which walks those).
fn same_part(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Pair(x0, x1), Value::Pair(y0, y1)) => (x0, x1) == (y0, y1),
        (Value::Cell(x), Value::Cell(y)) => x == y,
        (Value::Ints(x), Value::Ints(y)) => Arc::ptr_eq(x, y),
        (Value::LocPair(x0, x1), Value::LocPair(y0, y1)) => (x0, x1) == (y0, y1),
        (Value::CellPair(x0, x1), Value::CellPair(y0, y1)) => (x0, x1) == (y0, y1),
        (Value::Grid(x), Value::Grid(y)) => Shared::ptr_eq(x, y),
        (Value::Indices(x), Value::Indices(y)) => Shared::ptr_eq(x, y),
        (Value::Object(x), Value::Object(y)) => Shared::ptr_eq(x, y),
        (Value::Tuple(x), Value::Tuple(y)) | (Value::Set(x), Value::Set(y)) => Items::ptr_eq(x, y),
        _ => false,
    }
}

/// Whether a value is compared by allocation in [`same_part`]: a container.
fn is_container(v: &Value) -> bool {
    matches!(
        v,
        Value::Ints(_) | Value::Grid(_) | Value::Indices(_) | Value::Object(_) | Value::Tuple(_) | Value::Set(_)
    )
}

/// Whether a value is a container or a function that may capture one (past
/// [`WALKED_PARTS`], it may).
fn holds_container(v: &Value) -> bool {
    fn walk(v: &Value, budget: &mut u32) -> bool {
        let Value::Func(f) = v else {
            return is_container(v);
        };
        if *budget == 0 {
            return true;
        }
        *budget -= 1;
        let mut found = false;
        f.map(|part| found = found || walk(part, budget));
        found
    }
    walk(v, &mut { WALKED_PARTS })
}

/// Two hashes of a function, in one walk of its tree: of its values (`.0`: containers by
/// allocation, equal for closures [`same_func`] finds the same), and of its shape (`.1`: its
/// tree, primitives and numbers, each container counted by its kind only, equal for closures of
/// the same shape, [`same_shape`]). Past `budget` parts, the rest of the tree counts as nothing.
/// A closure met again (a solver's `x5`, held by every step that uses it) gives the hashes of
/// its first walk, found in `met`, and costs no budget: the budget goes to the distinct parts,
/// where closures that share most of their tree differ (walking every path, the hash of
/// `fork(recolor, x46, x34)` stopped inside `x46`, equal for the three such closures of a
/// solver, whose shapes then had to be walked and refused).
fn closure_hashes(f: &Func, budget: &mut u32, met: &mut Hashed) -> (u64, u64) {
    if *budget == 0 {
        return (0, 0);
    }
    *budget -= 1;
    let mix = |(h, s): (u64, u64), (x, y): (u64, u64)| {
        let one = |h: u64, x: u64| (h ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
        (one(h, x), one(s, y))
    };
    let tag = |t: u64| (t, t);
    let prim = |id: PrimId| mix(tag(1), tag(id.0.into()));
    use Func::*;
    let mut part = |v: &Value| match v {
        // A primitive, the most common part, hashed here as the call below would hash it.
        Value::Func(g) => match **g {
            Prim(id) if *budget > 0 => {
                *budget -= 1;
                prim(id)
            }
            Prim(_) => (0, 0),
            _ => {
                let at = Shared::as_ptr(g) as usize;
                match met.iter().find(|(a, _)| *a == at) {
                    Some(&(_, hashes)) => hashes,
                    None => {
                        let hashes = closure_hashes(g, budget, met);
                        met.push((at, hashes));
                        hashes
                    }
                }
            }
        },
        other => {
            let id = identity(other);
            let by_value = id.unwrap_or(u64::MAX);
            let by_shape = match is_container(other) {
                true => id.map_or(u64::MAX, |id| id >> 60),
                false => by_value,
            };
            (by_value, by_shape)
        }
    };
    match f {
        Prim(id) => prim(*id),
        Compose(a, b) => mix(mix(tag(2), part(a)), part(b)),
        Matcher(a, b) => mix(mix(tag(3), part(a)), part(b)),
        Rbind(a, b) => mix(mix(tag(4), part(a)), part(b)),
        Lbind(a, b) => mix(mix(tag(5), part(a)), part(b)),
        Chain(a, b, c) => mix(mix(mix(tag(6), part(a)), part(b)), part(c)),
        Fork(a, b, c) => mix(mix(mix(tag(7), part(a)), part(b)), part(c)),
        Power(g, n) => mix(mix(tag(8), tag((*n).into())), part(g)),
        Foreign(g) => mix(tag(9), tag(g.get().id() as u64)),
    }
}

/// The closures a hash walk has met (by address) and their hashes, for [`closure_hashes`].
type Hashed = SmallVec<[(usize, (u64, u64)); 16]>;

/// For each container and function of a closure (by [`identity`]), what another closure of
/// the same shape holds in its place. A closure holds a handful of containers: a scan of a
/// small vector finds one for less than a hash table costs to allocate and hash. Its functions
/// (every closure of its tree) are kept apart, so that a constant container does not scan them.
struct Rebinding {
    containers: Pairs,
    functions: Pairs,
}

/// Identities and the values paired with them.
type Pairs = SmallVec<[(u64, Value); 8]>;

impl Rebinding {
    fn new() -> Rebinding {
        Rebinding {
            containers: SmallVec::new(),
            functions: SmallVec::new(),
        }
    }

    /// The pairs that would hold `old`'s: none for a primitive, which holds no container and
    /// is never paired.
    fn pairs(&self, old: &Value) -> Option<&Pairs> {
        match old {
            Value::Func(f) if matches!(**f, Func::Prim(_)) => None,
            Value::Func(_) => Some(&self.functions),
            _ => is_container(old).then_some(&self.containers),
        }
    }

    /// What `old` (of identity `key`) is paired with, if it is.
    fn get(&self, old: &Value, key: u64) -> Option<&Value> {
        let pairs = self.pairs(old)?;
        pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// What `old` (a container or a closure, of identity `key`) is paired with, if it is; else
    /// pairs it with `new`.
    fn get_or_pair(&mut self, old: &Value, key: u64, new: &Value) -> Option<&Value> {
        let pairs = match old {
            Value::Func(_) => &mut self.functions,
            _ => &mut self.containers,
        };
        match pairs.iter().position(|(k, _)| *k == key) {
            Some(at) => Some(&pairs[at].1),
            None => {
                pairs.push((key, new.clone()));
                None
            }
        }
    }
}

/// Whether `b` is `a` with other containers of the same kinds in places: the same tree, the
/// same primitives and numbers. Records what `b` holds in place of each of `a`'s containers and
/// functions; false where one of them would take two values, or past `budget` parts.
fn same_shape(a: &Value, b: &Value, rebinding: &mut Rebinding, budget: &mut u32) -> bool {
    // Whether `a` was paired with `b` before (`Some(true)`), with something else
    // (`Some(false)`), or not yet (`None`, and now it is).
    let record = |rebinding: &mut Rebinding| {
        let (Some(key), Some(new)) = (identity(a), identity(b)) else {
            return Some(false);
        };
        rebinding
            .get_or_pair(a, key, b)
            .map(|paired| identity(paired) == Some(new))
    };
    match (a, b) {
        // A part both closures share is walked too: a container in it may be one the other
        // parts replace, and then it cannot be both. A primitive holds none.
        (Value::Func(f), Value::Func(g)) => {
            if let (Func::Prim(x), Func::Prim(y)) = (&**f, &**g) {
                return x == y;
            }
            if *budget == 0 {
                return false;
            }
            match record(rebinding) {
                // The same pair of parts met again (a closure shared by several places of
                // both trees, as a solver's `x5` is by the steps that use it): its walk
                // succeeded, or this one would have stopped there, and a part cannot hold
                // itself, so it is not being walked now. Walking a shared part once keeps the
                // budget for the closure's distinct parts, not the paths to them.
                Some(same) => same,
                None => {
                    *budget -= 1;
                    same_tree(f, g, |x, y| same_shape(x, y, rebinding, budget))
                }
            }
        }
        _ if is_container(a) => {
            std::mem::discriminant(a) == std::mem::discriminant(b) && record(rebinding) != Some(false)
        }
        _ => same_part(a, b),
    }
}

impl Kernel {
    /// This kernel with every constant that `rebinding` pairs with a value holding that value:
    /// the kernel of the closure of the same shape it was made for, where this one is
    /// [`rebindable`](Kernel::rebindable). Its nodes read the closure's parts only at run time.
    fn rebound(&self, rebinding: &Rebinding) -> Kernel {
        let mut kernel = self.clone();
        kernel.rebind(rebinding);
        kernel
    }

    /// Replaces, in place and in the inner kernels, the constants `rebinding` pairs.
    fn rebind(&mut self, rebinding: &Rebinding) {
        for node in &mut self.nodes {
            match node {
                Node::Const(v) => {
                    if let Some(new) = identity(v).and_then(|k| rebinding.get(v, k)) {
                        *v = new.clone();
                    }
                }
                Node::Nested(nested) => nested.inner.rebind(rebinding),
                _ => {}
            }
        }
        if let Some(siblings) = &mut self.siblings {
            siblings.rebind(rebinding);
        }
    }
}

/// The kernel of `f` for `arity` arguments: the cached one for the same function, or one
/// rebound from a cached one for a closure of the same shape, or a new one.
fn with_kernel<R>(f: &Value, arity: usize, run: impl FnOnce(&Kernel) -> R) -> R {
    let Value::Func(func) = f else {
        return run(&Kernel::compile(f, arity));
    };
    // The very closure cached (a program's closure built once for all its samples, see
    // `program::Invariants`): found by address, which the entry's reference keeps its own.
    let held = KERNELS.with(|k| {
        (k.borrow().iter())
            .find(|c| Shared::ptr_eq(&c.func, func) && c.arity == arity)
            .map(|c| c.kernel.clone())
    });
    if let Some(kernel) = held {
        return run(&kernel);
    }
    let (hash, shape) = closure_hashes(func, &mut { WALKED_PARTS }, &mut Hashed::new());
    // Found by value, the entry becomes this closure's, which its kernel serves as well (the
    // same tree over the same values and allocations): the closure's next look-up finds it by
    // address. A program's closures are built anew on each run (its steps that read no input
    // once per run), and each look-up after the first run walked both trees.
    let same = KERNELS.with(|k| {
        (k.borrow_mut().iter_mut())
            .find(|c| c.hash == hash && c.arity == arity && same_func(&c.func, func))
            .map(|c| {
                c.func = func.clone();
                c.kernel.clone()
            })
    });
    if let Some(kernel) = same {
        return run(&kernel);
    }
    let entry = |kernel: &Rc<Kernel>| CachedKernel {
        hash,
        shape,
        func: func.clone(),
        arity,
        kernel: kernel.clone(),
    };
    let rebound = KERNELS.with(|k| {
        let mut k = k.borrow_mut();
        let (at, rebinding) = (k.iter().enumerate())
            .filter(|(_, c)| c.shape == shape && c.arity == arity && c.kernel.rebindable)
            .find_map(|(at, c)| {
                let mut rebinding = Rebinding::new();
                same_shape(&Value::Func(c.func.clone()), f, &mut rebinding, &mut { WALKED_PARTS })
                    .then_some((at, rebinding))
            })?;
        let cached = &mut k[at];
        // Held by the cache alone (no run of it is under way): the entry becomes the new
        // closure's, its constants replaced in place, and moves to the front as a new one would.
        if let Some(kernel) = Rc::get_mut(&mut cached.kernel) {
            kernel.rebind(&rebinding);
            cached.hash = hash;
            cached.func = func.clone();
            k[..=at].rotate_right(1);
            return Some(k[0].kernel.clone());
        }
        let kernel = Rc::new(cached.kernel.rebound(&rebinding));
        cache_first(&mut k, entry(&kernel));
        Some(kernel)
    });
    // A rebound kernel may be cached as the one it was rebound from was: its errors are the same.
    let kernel = rebound.unwrap_or_else(|| {
        let kernel = Rc::new(Kernel::compile(f, arity));
        if kernel.cacheable() {
            KERNELS.with(|k| cache_first(&mut k.borrow_mut(), entry(&kernel)));
        }
        kernel
    });
    run(&kernel)
}

/// Puts `entry` first in the cache `cached`, the oldest entry leaving when it is full.
fn cache_first(cached: &mut Vec<CachedKernel>, entry: CachedKernel) {
    if cached.len() == CACHED_KERNELS {
        cached.pop();
    }
    cached.insert(0, entry);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::{Cell, Grid, Loc};

    fn prim(name: &str) -> Value {
        Value::prim(PrimId::of(name).expect("registered"))
    }

    /// A reader gives the values `Column::get` gives at rows `0, stride, 2 stride, ...`, for
    /// every layout, stride and length (periods and blocks that the stride crosses, skips
    /// or divides).
    #[test]
    fn a_reader_reads_what_get_reads_row_after_row() {
        let ints = |n: i64| (0..n).map(Value::Int).collect::<Vec<_>>();
        let arg = ints(40);
        let args: Vec<&[Value]> = vec![&arg];
        for stride in 1..=9 {
            let mut columns = vec![Column::Arg(0), Column::Values(ints(40)), Column::Const(Value::Int(7))];
            for length in 1..=5 {
                columns.push(Column::Tiled(ints(length as i64), length));
                columns.push(Column::Blocked(ints(40usize.div_ceil(length) as i64), length));
            }
            for column in &columns {
                let mut reader = Reader::new(column, &args, stride);
                for k in 0..(40 - 1) / stride + 1 {
                    assert_eq!(reader.next(), column.get(&args, k * stride), "row {k}, stride {stride}");
                }
            }
        }
    }

    /// A cheap primitive's loops compiled for its arity give what the primitive gives row by
    /// row on the values `Column::get` reads (values, and the first row that raised with its
    /// error), for arguments of every layout, strides and row counts; and so do the loops for
    /// any number of arguments, which a node with more arguments than its primitive takes.
    #[test]
    fn loops_compiled_for_an_arity_give_the_loops_for_any() {
        let mixed = |n: i64| -> Vec<Value> {
            let odd = |k: i64| {
                if k % 7 == 3 {
                    Value::empty_set()
                } else {
                    Value::Int(k - 5)
                }
            };
            (0..n).map(odd).collect()
        };
        let arg = mixed(30);
        let args: Vec<&[Value]> = vec![&arg];
        // Every layout a column takes: an argument, computed values, a constant, tiled and
        // blocked columns of several lengths.
        let layout = |k: usize| match k {
            0 => Column::Arg(0),
            1 => Column::Values(mixed(30).into_iter().rev().collect()),
            2 => Column::Const(Value::Int(4)),
            k if k % 2 == 1 => Column::Tiled(mixed(k as i64 / 2), k / 2),
            k => Column::Blocked(mixed(30usize.div_ceil(k / 2) as i64), k / 2),
        };
        let layouts = 10;
        let outcome = |(values, failure): (Vec<Value>, Option<(usize, DslError)>)| {
            (values, failure.map(|(row, e)| (row, e.to_string())))
        };
        // The simple path: each row's arguments read with `get`, the primitive called on them.
        let row_by_row = |imp: fn(&[Value]) -> DslResult<Value>, nodes: &[NodeId], values: &[Column], rows: Rows| {
            let mut out = Vec::new();
            for i in (0..rows.count).map(|k| k * rows.stride) {
                let row: Vec<Value> = nodes
                    .iter()
                    .map(|&n| values[n as usize].get(&args, i).clone())
                    .collect();
                match imp(&row) {
                    Ok(v) => out.push(v),
                    Err(e) => return (out, Some((i, e))),
                }
            }
            (out, None)
        };
        for cheap in [Cheap::Increment, Cheap::Add, Cheap::Greater] {
            let imp = PrimId::of(cheap.name()).expect("registered").spec().imp;
            let nodes: &[NodeId] = if cheap.arity() == 1 { &[0] } else { &[0, 1] };
            for (a, b) in (0..layouts).flat_map(|a| (0..layouts).map(move |b| (a, b))) {
                let values = [layout(a), layout(b)];
                for (count, stride) in [(1, 1), (30, 1), (10, 3), (4, 7)] {
                    let rows = Rows { count, stride };
                    let work = PerElement {
                        args: nodes,
                        values: &values,
                        columns: &args,
                        rows,
                    };
                    let expected = outcome(row_by_row(imp, nodes, &values, rows));
                    let any = per_element::<0>(nodes, &values, &args, rows, |_, x| imp(x));
                    assert_eq!(
                        outcome(cheap.with(work)),
                        expected,
                        "{} over {count} rows",
                        cheap.name()
                    );
                    assert_eq!(outcome(any), expected, "{} over {count} rows, any arity", cheap.name());
                }
            }
        }
        // `increment` given two arguments: the loop for any number, which passes both.
        let values = [Column::Arg(0), Column::Const(Value::Int(1))];
        let rows = Rows { count: 30, stride: 1 };
        let work = PerElement {
            args: &[0, 1],
            values: &values,
            columns: &args,
            rows,
        };
        let increment = PrimId::of("increment").expect("registered").spec().imp;
        let expected = row_by_row(increment, &[0, 1], &values, rows);
        assert_eq!(outcome(Cheap::Increment.with(work)), outcome(expected));
    }

    /// Past its deadline, a function over a column stops where the clock is first read, after
    /// the 256th row: that row fails, those before it keep their values (one argument, and two
    /// read as a pair).
    #[test]
    fn a_column_past_its_deadline_stops_at_the_first_clock_reading() {
        let xs: Vec<Value> = (0..1000).map(Value::Int).collect();
        let doubled = call(&prim("fork"), &[prim("add"), prim("identity"), prim("identity")]).unwrap();
        for f in [prim("increment"), doubled] {
            let _deadline = Deadline::set(Some(std::time::Duration::ZERO));
            let m = map(&f, &[&xs]);
            assert_eq!(m.error, Some(DslError::Timeout), "{f}");
            assert_eq!(m.values.len(), CLOCK_ROWS - 1, "{f}");
        }
    }

    /// What `Mapping::run` reads in place of a tuple's or set's members is what every
    /// mapping's `members` gives for them.
    #[test]
    fn every_mapping_lists_a_tuple_or_set_as_its_own_members() {
        let items = vec![Value::Int(4), Value::Pair(1, 2), prim("size")];
        let containers = [Value::tuple(items.clone()), Value::set(items)];
        let mut mappings = 0;
        for id in super::super::registry::registry().ids() {
            let Some(mapping) = id.spec().mapping else {
                continue;
            };
            mappings += 1;
            for c in &containers {
                let (Value::Tuple(own) | Value::Set(own)) = c else {
                    unreachable!("built as a tuple and a set");
                };
                let mut listed = Vec::new();
                (mapping.members)(c, &mut listed).expect("a tuple or set has members");
                assert_eq!(&listed[..], &own[..], "{} of {c:?}", id.spec().name);
            }
        }
        assert!(mappings >= 9, "{mappings} mapping primitives");
    }

    #[test]
    fn a_mapping_anywhere_in_a_closure_is_found_and_a_shared_tree_ends_the_walk() {
        let plain = Value::func(Func::Fork(prim("add"), prim("first"), prim("last")));
        let mapping = Value::func(Func::Lbind(prim("apply"), prim("size")));
        assert!(!maps_inside(&plain, &mut 64));
        assert!(maps_inside(&mapping, &mut 64));
        assert!(maps_inside(
            &Value::func(Func::Compose(plain.clone(), mapping)),
            &mut 64
        ));
        // 2^60 paths through 60 shared nodes: the budget stops the walk, and says yes.
        let mut shared = plain;
        for _ in 0..60 {
            shared = Value::func(Func::Compose(shared.clone(), shared));
        }
        let mut budget = 64;
        assert!(maps_inside(&shared, &mut budget));
        assert_eq!(budget, 0);
    }

    #[test]
    fn a_node_made_before_is_found_past_the_keys_scanned() {
        let mut made = Made {
            scanned: Vec::new(),
            table: HashMap::new(),
        };
        let keys = |k: NodeId| [Key::Prim(PrimId(0), smallvec![k, 1]), Key::Const(k.into())];
        for k in 0..2 * SCANNED_KEYS as NodeId {
            for (i, key) in keys(k).into_iter().enumerate() {
                let print = key.fingerprint();
                assert_eq!(made.get(&key, print), None);
                made.insert(key, print, 2 * k + i as NodeId);
            }
        }
        for k in 0..2 * SCANNED_KEYS as NodeId {
            for (i, key) in keys(k).iter().enumerate() {
                assert_eq!(made.get(key, key.fingerprint()), Some(2 * k + i as NodeId));
            }
        }
    }

    #[test]
    fn a_call_made_twice_on_the_same_nodes_is_one_node() {
        let count = |kernel: &Kernel, name: &str| {
            let id = PrimId::of(name).expect("registered");
            kernel
                .nodes
                .iter()
                .filter(|n| matches!(n, Node::Prim { id: i, .. } if *i == id))
                .count()
        };
        // x -> (size(x) + 1, size(x)) + size(x): three calls of size, one node.
        let size = prim("size");
        let plus_one = Value::func(Func::Compose(prim("increment"), size.clone()));
        let both = Value::func(Func::Fork(prim("astuple"), plus_one, size.clone()));
        let kernel = Kernel::compile(&Value::func(Func::Fork(prim("add"), both, size)), 1);
        assert_eq!(count(&kernel, "size"), 1);
        // `increment` once, in the chain `add(astuple(increment(s), s), s)` it starts.
        assert_eq!(count(&kernel, "increment"), 0);
        assert_eq!(fused(&kernel), (vec![3], 2));
        // The same primitive on other nodes is another node.
        let apart = Value::func(Func::Fork(prim("astuple"), prim("size"), prim("double")));
        let kernel = Kernel::compile(&Value::func(Func::Compose(apart, prim("size"))), 1);
        assert_eq!(count(&kernel, "size"), 2);
    }

    /// `x -> (sfilter(C, y -> even(x - y)), apply(y -> x - y, C), argmin(S, y -> x - y),
    /// valmin(remove(x, S), y -> x - y))`: the first two map over the same container `C`, the
    /// last two (the summary `valmin` picks from, and `argmin`) over the same set `S`, so the
    /// kernel has two groups of two, in whose inner kernels `x - y` is one node, and its values
    /// are the scalar path's with no grouped run failing; a mapping over another container,
    /// or over a container it computes, is in no group.
    #[test]
    fn mappings_over_one_constant_container_are_grouped_and_share_their_work() {
        let built = |name: &str, args: &[Value]| call(&prim(name), args).expect("a closure");
        let difference = built("lbind", &[prim("lbind"), prim("subtract")]);
        let over = |mapping: &str, container: &Value, f: Value| {
            let bound = match mapping {
                "apply" => built("rbind", &[prim(mapping), container.clone()]),
                _ => built("lbind", &[prim(mapping), container.clone()]),
            };
            built("compose", &[bound, f])
        };
        let even_difference = built(
            "compose",
            &[built("lbind", &[prim("compose"), prim("even")]), difference.clone()],
        );
        let c = Value::tuple((0..5).map(Value::Int).collect());
        let s = Value::set((0..4).map(Value::Int).collect());
        let first_two = built(
            "fork",
            &[
                prim("astuple"),
                over("sfilter", &c, even_difference.clone()),
                over("apply", &c, difference.clone()),
            ],
        );
        let nearest = over("argmin", &s, difference.clone());
        let without = built(
            "fork",
            &[
                prim("valmin"),
                built("rbind", &[prim("remove"), s.clone()]),
                difference.clone(),
            ],
        );
        let last_two = built("fork", &[prim("astuple"), nearest, without]);
        let f = built("fork", &[prim("astuple"), first_two, last_two]);
        let kernel = Kernel::compile(&f, 1);
        let siblings = kernel.siblings.as_ref().expect("a plan");
        assert_eq!(siblings.grouped(), (2, 4));
        let subtract = PrimId::of("subtract").expect("registered");
        for inner in siblings.inner_kernels() {
            let subtracts = inner
                .nodes
                .iter()
                .filter(|n| matches!(n, Node::Prim { id, .. } if *id == subtract))
                .count();
            assert_eq!((inner.outs.len(), subtracts), (2, 1));
        }
        let xs: Vec<Value> = (-2..6).map(Value::Int).collect();
        let mapped = kernel.eval(&[&xs], xs.len(), None);
        let scalar: Vec<Value> = xs
            .iter()
            .map(|x| call(&f, std::slice::from_ref(x)).expect("no error"))
            .collect();
        assert_eq!((mapped.values, mapped.error.is_none()), (scalar, true));
        assert!(!siblings.failed_lately());
        // Over a container the function computes, or two different ones: no group.
        let mapped_over_c = over("sfilter", &c, even_difference.clone());
        let over_itself = built("lbind", &[prim("apply"), prim("double")]);
        let computed = built("fork", &[prim("astuple"), mapped_over_c.clone(), over_itself]);
        assert!(Kernel::compile(&computed, 1).siblings.is_none());
        let other = Value::tuple((0..5).map(Value::Int).collect());
        let apart = built(
            "fork",
            &[prim("astuple"), mapped_over_c, over("sfilter", &other, even_difference)],
        );
        assert!(Kernel::compile(&apart, 1).siblings.is_none());
    }

    /// The fused compositions a kernel runs, by their arity (1: two projections, 2:
    /// `size(op(a, b))`, 3: with `a = shift(patch, offset)`, or a colour count), and how many
    /// calls were moved into them.
    fn fused(kernel: &Kernel) -> (Vec<usize>, usize) {
        let arities = kernel.nodes.iter().filter_map(|n| match n {
            Node::Fused { op, .. } => Some(op.arity()),
            _ => None,
        });
        let moved = kernel.nodes.iter().filter(|n| matches!(n, Node::Moved)).count();
        (arities.collect(), moved)
    }

    /// Two closures built alike by sharing, as a solver builds one per sample: `fork(f, f, f)`
    /// twelve levels deep is 3^12 closures as a tree and 13 distinct ones. The look-up walks
    /// each pair once, and still tells apart two that differ in the innermost part.
    #[test]
    fn closures_built_by_sharing_are_compared_part_by_part_once() {
        let deep = |innermost: &str| {
            let mut f = Value::func(Func::Rbind(prim(innermost), Value::Int(1)));
            for _ in 0..12 {
                f = Value::func(Func::Fork(f.clone(), f.clone(), f));
            }
            f
        };
        let func = |v: &Value| match v {
            Value::Func(f) => f.clone(),
            _ => unreachable!("a closure"),
        };
        let (a, b, other) = (func(&deep("add")), func(&deep("add")), func(&deep("subtract")));
        let mut walked = SmallVec::new();
        assert!(same_func_walked(&a, &b, &mut walked));
        assert_eq!(walked.len(), 13, "each pair of distinct parts walked once");
        assert!(!same_func(&a, &other));
    }

    #[test]
    fn a_set_built_only_to_be_counted_is_fused_and_one_read_again_is_not() {
        let cells = Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 1 }]);
        let bound = |f: &str, v: Value| Value::func(Func::Rbind(prim(f), v));
        let counted = Value::func(Func::Compose(prim("size"), bound("difference", cells.clone())));
        assert_eq!(fused(&Kernel::compile(&counted, 1)), (vec![2], 1));
        // `matcher(size, ZERO)` of it: the count tested is the same one node.
        let covered = Value::func(Func::Compose(
            Value::func(Func::Matcher(prim("size"), Value::Int(0))),
            bound("difference", cells.clone()),
        ));
        assert_eq!(fused(&Kernel::compile(&covered, 1)), (vec![2], 2));
        let patches: Vec<Value> = (0..3)
            .map(|k| diagonal([k, k + 1]))
            .chain([Value::empty_set()])
            .collect();
        let (vectorised, scalar) = both_ways(&covered, &patches);
        assert_eq!(vectorised.unwrap(), scalar.unwrap());
        // `size(difference(shift(x, (1, 0)), cells))`: one node for all three calls.
        let fits = Value::func(Func::Chain(
            prim("size"),
            bound("intersection", cells.clone()),
            bound("shift", Value::Pair(1, 0)),
        ));
        assert_eq!(fused(&Kernel::compile(&fits, 1)), (vec![3], 2));
        // The set is also the result's second half: it is built, and counted as it is.
        let kept = Value::func(Func::Fork(prim("astuple"), prim("size"), prim("identity")));
        let both = Value::func(Func::Compose(kept, bound("difference", cells)));
        assert_eq!(fused(&Kernel::compile(&both, 1)), (vec![], 0));
    }

    /// Two projections in a row compared, `fork(equality, power(first, TWO), compose(first,
    /// last))` as solvers pick pairs of locations on a row (and `compose(last, first)` against
    /// `power(last, TWO)`, a cell's location against another's, or a colour against a
    /// location): one node for the comparison and its four projections, whose results and
    /// errors (members that are not pairs, empty tuples, integers) are the scalar path's, the
    /// first error included. A projection read elsewhere too stays a node of its own.
    #[test]
    fn projections_of_projections_compared_are_one_node() {
        let twice = |f: &str| Value::func(Func::Power(prim(f), 2));
        let of = |outer: &str, inner: &str| Value::func(Func::Compose(prim(outer), prim(inner)));
        let equal = |a: Value, b: Value| Value::func(Func::Fork(prim("equality"), a, b));
        let same_row = equal(twice("first"), of("first", "last"));
        assert_eq!(fused(&Kernel::compile(&same_row, 1)), (vec![1], 4));
        // Both projections stay nodes (of arity 1), the comparison reading them.
        let shared = Value::func(Func::Fork(prim("astuple"), same_row.clone(), twice("first")));
        let (arities, _) = fused(&Kernel::compile(&shared, 1));
        assert_eq!(arities.iter().filter(|&&a| a == 1).count(), 2, "{arities:?}");
        let locs = |i, j, k, l| Value::duo(Value::Pair(i, j), Value::Pair(k, l));
        let cell = |color, i, j| Value::Cell(Cell { color, i, j });
        let mut pairs = vec![
            locs(0, 1, 0, 5),
            locs(1, 1, 2, 1),
            locs(3, 4, 3, 4),
            Value::duo(cell(1, 2, 3), cell(2, 3, 4)),
            Value::duo(cell(1, 2, 3), cell(1, 2, 3)),
            Value::duo(cell(3, 3, 3), cell(4, 3, 3)),
            Value::tuple(vec![Value::Pair(7, 8); 3]),
        ];
        assert!(matches!(pairs[0], Value::LocPair(..)) && matches!(pairs[3], Value::CellPair(..)));
        let (vectorised, scalar) = both_ways(&shared, &pairs);
        assert_eq!(vectorised.unwrap(), scalar.unwrap());
        let functions = [
            same_row,
            equal(of("last", "first"), twice("last")),
            equal(twice("first"), twice("last")),
        ];
        for f in &functions {
            assert_eq!(fused(&Kernel::compile(f, 1)), (vec![1], 4));
            let (vectorised, scalar) = both_ways(f, &pairs);
            assert_eq!(vectorised.unwrap(), scalar.unwrap());
        }
        for bad in [
            Value::tuple(vec![]),
            Value::Int(3),
            Value::tuple(vec![Value::tuple(vec![]), Value::Pair(1, 2)]),
            Value::duo(Value::Pair(1, 1), Value::Int(1)),
        ] {
            pairs.insert(2, bad);
            for f in &functions {
                let (vectorised, scalar) = both_ways(f, &pairs);
                assert_eq!(vectorised.unwrap_err().to_string(), scalar.unwrap_err().to_string());
            }
        }
    }

    /// Chains of integer primitives, `chain(even, rbind(subtract, c), last)` and
    /// `compose(even, fork(subtract, last, first))` (its operand a column, not a constant): one
    /// node each, whose results and errors are the scalar path's over columns of pairs, with
    /// rows of other kinds that the primitives compute (tuples) or raise on (a boolean, a pair
    /// whose difference overflows, a cell), the first error included.
    #[test]
    fn a_chain_of_integer_primitives_is_one_node() {
        let bound = |f: &str, v: Value| Value::func(Func::Rbind(prim(f), v));
        let parity = Value::func(Func::Chain(
            prim("even"),
            bound("subtract", Value::Int(3)),
            prim("last"),
        ));
        assert_eq!(fused(&Kernel::compile(&parity, 1)), (vec![2], 2));
        let spread = Value::func(Func::Fork(prim("subtract"), prim("last"), prim("first")));
        let even_spread = Value::func(Func::Compose(prim("even"), spread));
        assert_eq!(fused(&Kernel::compile(&even_spread, 1)), (vec![2], 2));
        let pairs: Vec<Value> = (0..40).map(|k| Value::Pair(k - 20, 3 * k - 7)).collect();
        let with = |k: usize, v: Value| {
            let mut rows = pairs.clone();
            rows.insert(k, v);
            rows
        };
        let computed = [
            pairs.clone(),
            with(5, Value::tuple(vec![Value::Int(1), Value::Int(2), Value::Int(8)])),
            with(0, Value::tuple(vec![Value::Bool(true), Value::Int(5)])),
        ];
        let raising = [
            with(7, Value::Bool(true)),
            with(39, Value::Pair(i64::MAX, i64::MIN)),
            with(3, Value::Pair(1, i64::MIN)),
            with(0, Value::Cell(Cell { color: 4, i: 1, j: 2 })),
        ];
        for f in [&parity, &even_spread] {
            for rows in &computed {
                let (vectorised, scalar) = both_ways(f, rows);
                assert_eq!(vectorised.unwrap(), scalar.unwrap());
            }
            for rows in &raising {
                let (vectorised, scalar) = both_ways(f, rows);
                assert_eq!(vectorised.unwrap_err().to_string(), scalar.unwrap_err().to_string());
            }
        }
    }

    /// `chain(rbind(colorcount, c), rbind(toobject, grid), neighbors)`, a colour counted around
    /// each location: neither the neighbours nor the object is built. Over a column of locations it counts what
    /// the scalar path counts.
    #[test]
    fn a_colour_counted_in_an_object_of_a_grid_is_read_from_the_grid() {
        let grid = Value::grid(Grid::new(3, 3, vec![1, 2, 1, 2, 1, 2, 1, 1, 0]));
        let bound = |f: &str, v: Value| Value::func(Func::Rbind(prim(f), v));
        let around = Value::func(Func::Chain(
            bound("colorcount", Value::Int(1)),
            bound("toobject", grid),
            prim("neighbors"),
        ));
        // One node for the three calls: the neighbours are never listed either.
        assert_eq!(fused(&Kernel::compile(&around, 1)), (vec![3], 2));
        let locs: Vec<Value> = (-1..4).flat_map(|i| (-1..4).map(move |j| Value::Pair(i, j))).collect();
        let (vectorised, scalar) = both_ways(&around, &locs);
        assert_eq!(vectorised.unwrap(), scalar.unwrap());
    }

    /// `chain(size, rbind(intersection, cells), delta)` and with `outbox`, as solvers score
    /// placements of a shape: one node for the three calls, neither set built, over a column of
    /// patches what the scalar path counts.
    #[test]
    fn a_part_of_a_box_counted_in_a_set_is_one_node() {
        let cells = Value::indices(
            (0..4)
                .flat_map(|i| (0..5).map(move |j| Loc { i, j }))
                .filter(|l| l.i != l.j)
                .collect(),
        );
        let patches: Vec<Value> = (-1..4)
            .map(|k| diagonal([k, k + 1]))
            .chain([Value::empty_set(), Value::Int(2)])
            .collect();
        for part in ["delta", "outbox"] {
            let counted = Value::func(Func::Chain(
                prim("size"),
                Value::func(Func::Rbind(prim("intersection"), cells.clone())),
                prim(part),
            ));
            assert_eq!(fused(&Kernel::compile(&counted, 1)), (vec![2], 2));
            let (vectorised, scalar) = both_ways(&counted, &patches[..5]);
            assert_eq!(vectorised.unwrap(), scalar.unwrap());
            let (vectorised, scalar) = both_ways(&counted, &patches);
            assert_eq!(vectorised.unwrap_err().to_string(), scalar.unwrap_err().to_string());
        }
    }

    /// Index sets of the locations `(k, k)` for `k` in `ks`.
    fn diagonal(ks: impl IntoIterator<Item = i32>) -> Value {
        Value::indices(ks.into_iter().map(|k| Loc { i: k, j: k }).collect())
    }

    /// `f` over `elements` column-wise through the kernel cache, and one element at a time.
    fn both_ways(f: &Value, elements: &[Value]) -> (DslResult<Vec<Value>>, DslResult<Vec<Value>>) {
        let columns = with_kernel(f, 1, |kernel| kernel.eval(&[elements], elements.len(), None).all());
        (columns, map_scalar(f, &[elements], elements.len()).all())
    }

    /// How many nodes of a kernel and of its inner kernels pick a best member without one
    /// ([`Node::Without`]).
    fn picks(kernel: &Kernel) -> usize {
        let inner = |n: &Node| match n {
            Node::Without { .. } => 1,
            Node::Nested(nested) => picks(&nested.inner),
            _ => 0,
        };
        kernel.nodes.iter().map(inner).sum()
    }

    /// `best(remove(m, S), f)` for the four primitives, with `remove` made in the same kernel
    /// (`m -> best(remove(m, S), f)`) or captured from the parent kernel (`m -> apply(l ->
    /// best(remove(m, S), y -> f(l + y)), L)`), is picked from `S`'s summary where `S` is a
    /// constant set, and gives the scalar path's values and first error: ties, the only best
    /// member removed, the only member removed, a value not in `S`, keys that are not integers,
    /// and a key that raises on the member removed or on another.
    /// How a test builds `best(remove(m, set), f)` as a function of `m`.
    type Build<'a> = dyn Fn(&str, &Value, &Value) -> Value + 'a;

    #[test]
    fn best_of_a_set_without_one_member_is_the_scalar_paths() {
        let call = |name: &str, args: Vec<Value>| {
            Value::func(match (name, &args[..]) {
                ("compose", [a, b]) => Func::Compose(a.clone(), b.clone()),
                ("fork", [a, b, c]) => Func::Fork(a.clone(), b.clone(), c.clone()),
                ("rbind", [a, b]) => Func::Rbind(a.clone(), b.clone()),
                ("lbind", [a, b]) => Func::Lbind(a.clone(), b.clone()),
                _ => unreachable!("the closures the test builds"),
            })
        };
        let same_kernel = |best: &str, set: &Value, f: &Value| {
            let removed = call("rbind", vec![prim("remove"), set.clone()]);
            call("compose", vec![call("rbind", vec![prim(best), f.clone()]), removed])
        };
        let captured = |best: &str, set: &Value, f: &Value| {
            let removed = call("rbind", vec![prim("remove"), set.clone()]);
            let key = call(
                "compose",
                vec![
                    call("lbind", vec![prim("compose"), f.clone()]),
                    call("lbind", vec![prim("lbind"), prim("add")]),
                ],
            );
            let bound = call("compose", vec![call("lbind", vec![prim("lbind"), prim(best)]), removed]);
            let per_location = call("compose", vec![call("rbind", vec![prim("compose"), key]), bound]);
            let locations = Value::tuple((0..3).map(Value::Int).collect());
            call(
                "compose",
                vec![call("rbind", vec![prim("apply"), locations]), per_location],
            )
        };
        let ints = |ns: &[i64]| ns.iter().map(|&n| Value::Int(n)).collect::<Vec<_>>();
        let absolute = call("fork", vec![prim("multiply"), prim("sign"), prim("identity")]);
        let six_over = call("lbind", vec![prim("divide"), Value::Int(6)]);
        let halved = call("rbind", vec![prim("divide"), Value::Int(2)]);
        let mixed = {
            let mut members = ints(&[-2, 3]);
            members.push(Value::Pair(1, 1));
            Value::set(members)
        };
        let cases = [
            // Keys 2, 1, 1, 3 (and from l + y): ties, a unique best and a unique worst.
            (
                Value::set(ints(&[-2, -1, 1, 3])),
                absolute.clone(),
                ints(&[-1, 1, 3, -2, 5, 0]),
            ),
            // One member: nothing left when it is removed (`valmin` applies the key to 0,
            // `argmin` raises).
            (Value::set(ints(&[4])), absolute.clone(), ints(&[3, 4, 4])),
            // 6 // 0 raises where 0 is left in the set, and not where it is removed.
            (Value::set(ints(&[0, 2, 3])), six_over.clone(), ints(&[0, 3, 0, 2])),
            (Value::set(ints(&[0, 2, 3])), six_over, ints(&[0, 0, 3])),
            // A pair's key is a pair: the primitive decides.
            (mixed, halved.clone(), ints(&[3, -2, 7])),
            // A tuple keeps every equal member: not rewritten.
            (Value::tuple(ints(&[2, -1, 2, 1])), absolute, ints(&[2, 1, -1, 4])),
        ];
        for (set, f, elements) in &cases {
            for best in ["valmin", "valmax", "argmin", "argmax"] {
                for build in [&same_kernel as &Build<'_>, &captured] {
                    let g = build(best, set, f);
                    let expected = usize::from(matches!(set, Value::Set(_)));
                    assert_eq!(picks(&Kernel::compile(&g, 1)), expected, "{g}");
                    let (columns, scalar) = both_ways(&g, elements);
                    assert_eq!(columns, scalar, "{g} over {elements:?}");
                }
            }
        }
    }

    /// A rebinding keeps the first value each identity was paired with, past the pairs it
    /// holds inline too.
    #[test]
    fn a_rebinding_keeps_the_first_value_paired_with_each_identity() {
        // Containers and closures of distinct identities, more than a vector holds inline.
        let containers: Vec<Value> = (0..20).map(|k| diagonal(0..k)).collect();
        let closures: Vec<Value> = (0..20)
            .map(|k| Value::func(Func::Rbind(prim("add"), Value::Int(k))))
            .collect();
        let id = |v: &Value| identity(v).expect("an address");
        let mut rebinding = Rebinding::new();
        for (k, old) in containers.iter().chain(&closures).enumerate() {
            assert!(rebinding.get_or_pair(old, id(old), &Value::Int(k as i64)).is_none());
        }
        for (k, old) in containers.iter().chain(&closures).enumerate() {
            let again = rebinding.get_or_pair(old, id(old), &Value::Int(-1));
            assert_eq!(again, Some(&Value::Int(k as i64)));
            assert_eq!(rebinding.get(old, id(old)), Some(&Value::Int(k as i64)));
        }
        let other = diagonal(0..3);
        assert_eq!(rebinding.get(&other, id(&other)), None);
    }

    /// Checks that `second`, `first` with other containers of the same kinds, runs on
    /// `first`'s kernel rebound, with its own results (on `elements`, directly and through the
    /// cache); returns how many parts the shape match walked.
    fn rebinds(first: &Value, second: &Value, elements: &[Value]) -> u32 {
        let kernel = Kernel::compile(first, 1);
        assert!(kernel.rebindable);
        let mut rebinding = Rebinding::new();
        let mut budget = WALKED_PARTS;
        assert!(same_shape(first, second, &mut rebinding, &mut budget));
        let rebound = kernel.rebound(&rebinding);
        let on = |k: &Kernel| k.eval(&[elements], elements.len(), None).all();
        assert_eq!(on(&rebound), on(&Kernel::compile(second, 1)));
        assert_ne!(on(&rebound), on(&kernel), "the containers differ in what they count");
        // Through the cache: the second closure's results are its own.
        KERNELS.with(|k| k.borrow_mut().clear());
        for f in [first, second, first] {
            let (columns, scalar) = both_ways(f, elements);
            assert_eq!(columns, scalar);
        }
        WALKED_PARTS - budget
    }

    #[test]
    fn a_closure_built_again_with_other_containers_runs_on_the_first_ones_kernel_rebound() {
        let elements: Vec<Value> = (0..12).map(|k| diagonal(k % 5..k % 7 + 1)).collect();
        let counted = |with: Value| {
            let bound = Value::func(Func::Lbind(prim("intersection"), with));
            Value::func(Func::Compose(prim("size"), bound))
        };
        rebinds(&counted(diagonal(0..3)), &counted(diagonal(2..6)), &elements);
        // A mapping inside: the inner kernel's copy of the container is replaced too.
        let sets: Vec<Value> = (0..10)
            .map(|k| Value::set(vec![diagonal(0..k), diagonal(k..k + 3)]))
            .collect();
        let mapped = |with: Value| {
            Value::func(Func::Lbind(
                prim("apply"),
                Value::func(Func::Lbind(prim("intersection"), with)),
            ))
        };
        for with in [diagonal(0..4), diagonal(3..9), diagonal(1..2)] {
            let (columns, scalar) = both_ways(&mapped(with), &sets);
            assert_eq!(columns, scalar);
        }
    }

    #[test]
    fn a_closure_whose_parts_are_shared_is_rebound_walking_each_part_once() {
        let elements: Vec<Value> = (0..12).map(|k| diagonal(k % 5..k % 7 + 1)).collect();
        // `f(x) = f'(x) + f'(x)`, eight times over `size(intersection(X, x))`: 2^8 paths to
        // the container (more than a walk of the tree's parts allows), ten distinct parts.
        let doubled = |with: Value| {
            let bound = Value::func(Func::Lbind(prim("intersection"), with));
            let mut f = Value::func(Func::Compose(prim("size"), bound));
            for _ in 0..8 {
                f = Value::func(Func::Fork(prim("add"), f.clone(), f));
            }
            f
        };
        let walked = rebinds(&doubled(diagonal(0..3)), &doubled(diagonal(2..6)), &elements);
        assert_eq!(walked, 10, "each shared part walked once");
        // A shared part that holds one container where the other closure holds two.
        let apart = {
            let left = Value::func(Func::Lbind(prim("intersection"), diagonal(1..4)));
            let right = Value::func(Func::Lbind(prim("intersection"), diagonal(0..2)));
            let sized = |g: Value| Value::func(Func::Compose(prim("size"), g));
            Value::func(Func::Fork(prim("add"), sized(left), sized(right)))
        };
        let shared = {
            let g = Value::func(Func::Compose(
                prim("size"),
                Value::func(Func::Lbind(prim("intersection"), diagonal(0..3))),
            ));
            Value::func(Func::Fork(prim("add"), g.clone(), g))
        };
        assert!(!same_shape(&shared, &apart, &mut Rebinding::new(), &mut {
            WALKED_PARTS
        }));
        KERNELS.with(|k| k.borrow_mut().clear());
        for f in [&shared, &apart] {
            let (columns, scalar) = both_ways(f, &elements);
            assert_eq!(columns, scalar);
        }
    }

    #[test]
    fn closures_that_share_a_large_part_and_differ_after_it_hash_apart() {
        // `f'(x) + f'(x)` eight times over: 2^8 paths through nine distinct closures, more
        // paths than a hash walks, the part where the two closures differ after them.
        let mut shared = Value::func(Func::Compose(prim("size"), prim("toindices")));
        for _ in 0..8 {
            shared = Value::func(Func::Fork(prim("add"), shared.clone(), shared));
        }
        let hashes = |last: &str| {
            let f = Func::Fork(prim("astuple"), shared.clone(), prim(last));
            closure_hashes(&f, &mut { WALKED_PARTS }, &mut Hashed::new())
        };
        let (height, width) = (hashes("height"), hashes("width"));
        assert_ne!(height.0, width.0);
        assert_ne!(height.1, width.1);
        assert_eq!(height, hashes("height"));
    }

    #[test]
    fn a_closure_built_again_over_the_same_values_takes_over_its_kernels_entry() {
        let elements: Vec<Value> = (0..12).map(|k| diagonal(k % 5..k % 7 + 1)).collect();
        let counted = |with: &Value| {
            let bound = Value::func(Func::Lbind(prim("intersection"), with.clone()));
            Value::func(Func::Compose(prim("size"), bound))
        };
        // The entries, each by whether its closure is `f` itself.
        let entries_of = |f: &Value| {
            let Value::Func(f) = f else { unreachable!() };
            KERNELS.with(|k| {
                k.borrow()
                    .iter()
                    .map(|c| Shared::ptr_eq(&c.func, f))
                    .collect::<Vec<_>>()
            })
        };
        let container = diagonal(0..4);
        KERNELS.with(|k| k.borrow_mut().clear());
        let first = counted(&container);
        let (columns, scalar) = both_ways(&first, &elements);
        assert_eq!(columns, scalar);
        assert_eq!(entries_of(&first), [true]);
        // Built anew over the same container (as a program's next run builds its closures): one
        // entry still, now the second closure's, and the same results.
        let second = counted(&container);
        let (again, _) = both_ways(&second, &elements);
        assert_eq!(again, columns);
        assert_eq!(entries_of(&second), [true]);
        drop(first);
        assert_eq!(both_ways(&second, &elements).0, columns);
    }

    #[test]
    fn a_kernel_whose_compiling_read_a_container_or_a_shared_one_is_not_rebound() {
        let elements: Vec<Value> = (0..12).map(Value::Int).collect();
        // `size(first(astuple(X, x)))` is `size(X)`, computed when compiling.
        let sized = |with: Value| {
            let paired = Value::func(Func::Lbind(prim("astuple"), with));
            Value::func(Func::Chain(prim("size"), prim("first"), paired))
        };
        assert!(!Kernel::compile(&sized(diagonal(0..3)), 1).rebindable);
        KERNELS.with(|k| k.borrow_mut().clear());
        for with in [diagonal(0..3), diagonal(0..5)] {
            let (columns, scalar) = both_ways(&sized(with), &elements);
            assert_eq!(columns, scalar);
        }
        // One container in two places, then two: the shapes agree, the sharing does not.
        let twice = |a: Value, b: Value| {
            let left = Value::func(Func::Lbind(prim("intersection"), a));
            let right = Value::func(Func::Lbind(prim("difference"), b));
            Value::func(Func::Fork(prim("astuple"), left, right))
        };
        let shared = diagonal(0..4);
        let (first, second) = (twice(shared.clone(), shared), twice(diagonal(1..3), diagonal(2..6)));
        assert!(!same_shape(&first, &second, &mut Rebinding::new(), &mut {
            WALKED_PARTS
        }));
        // The same, where the first place is a part both closures share.
        let inside = diagonal(0..4);
        let part = Value::func(Func::Lbind(prim("intersection"), inside.clone()));
        let with_part = |b: Value| {
            let right = Value::func(Func::Lbind(prim("difference"), b));
            Value::func(Func::Fork(prim("astuple"), part.clone(), right))
        };
        let (third, fourth) = (with_part(inside), with_part(diagonal(2..6)));
        assert!(!same_shape(&third, &fourth, &mut Rebinding::new(), &mut {
            WALKED_PARTS
        }));
        let sets: Vec<Value> = (0..10).map(|k| diagonal(k % 3..k % 4 + 3)).collect();
        KERNELS.with(|k| k.borrow_mut().clear());
        for f in [&first, &second, &third, &fourth] {
            let (columns, scalar) = both_ways(f, &sets);
            assert_eq!(columns, scalar);
        }
    }
}
