//! The reference's tuple primitives done on the Python tuples themselves: mirrors, rotations,
//! halves, concatenations and crops of a grid, and the pairs `astuple`, `tojvec`, `toivec`.
//!
//! On a tuple the reference computes these by slicing, zipping and concatenating: its result
//! shares the argument's row objects (or the cells in them), and costs about what converting the
//! grid into the core would. So a call of one of these primitives on exact tuples
//! (`arcbatch.dsl`'s, or every step of a [`crate::jit::JitFunction`] made only of them) is done
//! here, by the reference's own steps on the objects, instead of converting the grid in, running
//! the core and converting the result out. The cells are never looked at, so they may be
//! anything the reference takes (a `None`, a wide colour; rows may be ragged).
//!
//! [`TupleOp::apply`] takes only exact tuples (of exact-tuple rows where the reference walks the
//! rows, of exact ints for the pairs) and answers `None` for anything else: a frozenset patch, a
//! numpy array, a row that is no tuple, a tuple subclass. The caller then converts and runs the
//! core as usual, which gives the reference's result or error for those.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyInt, PySlice, PyTuple};

use arcbatch::dsl::PrimId;
use arcbatch::program::{Callee, Operand, Program};

use crate::convert::to_py;

/// A primitive that has a tuple form here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TupleOp {
    Hmirror,
    Vmirror,
    Dmirror,
    Cmirror,
    Rot90,
    Rot180,
    Rot270,
    Tophalf,
    Bottomhalf,
    Lefthalf,
    Righthalf,
    Vconcat,
    Hconcat,
    Crop,
    Astuple,
    Tojvec,
    Toivec,
}

type Tuple<'py> = Bound<'py, PyTuple>;

impl TupleOp {
    /// The tuple form of a primitive, if it has one.
    pub fn of(id: PrimId) -> Option<TupleOp> {
        Some(match id.spec().name {
            "hmirror" => TupleOp::Hmirror,
            "vmirror" => TupleOp::Vmirror,
            "dmirror" => TupleOp::Dmirror,
            "cmirror" => TupleOp::Cmirror,
            "rot90" => TupleOp::Rot90,
            "rot180" => TupleOp::Rot180,
            "rot270" => TupleOp::Rot270,
            "tophalf" => TupleOp::Tophalf,
            "bottomhalf" => TupleOp::Bottomhalf,
            "lefthalf" => TupleOp::Lefthalf,
            "righthalf" => TupleOp::Righthalf,
            "vconcat" => TupleOp::Vconcat,
            "hconcat" => TupleOp::Hconcat,
            "crop" => TupleOp::Crop,
            "astuple" => TupleOp::Astuple,
            "tojvec" => TupleOp::Tojvec,
            "toivec" => TupleOp::Toivec,
            _ => return None,
        })
    }

    /// What the reference returns for `args`, computed on the objects themselves; `None` where
    /// the arguments are not what this takes (see the module's doc), or their number is not
    /// the primitive's, or Python fails to allocate: the caller then runs the core.
    pub fn apply<'py>(self, args: &[Bound<'py, PyAny>]) -> Option<Bound<'py, PyAny>> {
        use TupleOp::*;
        let py = args.first()?.py();
        let out = match (self, args) {
            (Hmirror, [g]) => reversed(exact(g)?),
            (Vmirror, [g]) => map_rows(py, &rows(exact(g)?)?, reversed),
            (Dmirror, [g]) => transposed(py, &rows(exact(g)?)?),
            (Cmirror, [g]) => {
                let flipped = rows(exact(g)?)?
                    .iter()
                    .rev()
                    .map(reversed)
                    .collect::<Option<Vec<_>>>()?;
                transposed(py, &flipped)
            }
            (Rot90, [g]) => rot90(exact(g)?),
            (Rot180, [g]) => map_rows(py, &rows(&reversed(exact(g)?)?)?, reversed),
            (Rot270, [g]) => rot270(exact(g)?),
            (Tophalf, [g]) => Some(tophalf(exact(g)?)),
            (Bottomhalf, [g]) => Some(bottomhalf(exact(g)?)),
            (Lefthalf, [g]) => rot270(&tophalf(&rot90(exact(g)?)?)),
            (Righthalf, [g]) => rot270(&bottomhalf(&rot90(exact(g)?)?)),
            (Vconcat, [a, b]) => concat(exact(a)?, exact(b)?),
            (Hconcat, [a, b]) => {
                let (a, b) = (exact(a)?, exact(b)?);
                let joined = (0..a.len().min(b.len()))
                    .map(|k| concat(&row(a, k)?, &row(b, k)?))
                    .collect::<Option<Vec<_>>>()?;
                PyTuple::new(py, joined).ok()
            }
            (Crop, [g, start, dims]) => {
                let ((i, j), (h, w)) = (int_pair(start)?, int_pair(dims)?);
                let top = rows(&slice(exact(g)?, i, i + h)?)?;
                map_rows(py, &top, |r| slice(r, j, j + w))
            }
            (Astuple, [a, b]) => PyTuple::new(py, [int(a)?, int(b)?]).ok(),
            (Tojvec, [j]) => PyTuple::new(py, [zero(py), int(j)?]).ok(),
            (Toivec, [i]) => PyTuple::new(py, [int(i)?, zero(py)]).ok(),
            _ => None,
        };
        out.map(Bound::into_any)
    }
}

/// A compiled solver whose every step calls a primitive with a tuple form, run on the objects
/// as [`TupleOp::apply`] runs one step.
pub struct TupleProgram {
    steps: Vec<(TupleOp, Vec<Arg>)>,
    output: Arg,
}

/// Where a step's argument comes from.
enum Arg {
    Param(usize),
    Step(usize),
    Const(Py<PyAny>),
}

impl TupleProgram {
    /// `program` as a tuple program, if every step calls a primitive with a tuple form with as
    /// many arguments as it takes (anything else is left to the core, errors included).
    pub fn of(py: Python<'_>, program: &Program) -> PyResult<Option<TupleProgram>> {
        let arg = |op: &Operand| -> PyResult<Arg> {
            Ok(match op {
                Operand::Param(k) => Arg::Param(*k as usize),
                Operand::Step(s) => Arg::Step(*s as usize),
                Operand::Const(c) => Arg::Const(to_py(py, &c.value())?.unbind()),
            })
        };
        let mut steps = Vec::with_capacity(program.steps.len());
        for step in &program.steps {
            let Callee::Prim(id) = step.callee else { return Ok(None) };
            let Some(op) = TupleOp::of(id) else { return Ok(None) };
            if step.args.len() != id.spec().params.len() {
                return Ok(None);
            }
            steps.push((op, step.args.iter().map(arg).collect::<PyResult<_>>()?));
        }
        Ok(Some(TupleProgram {
            steps,
            output: arg(&program.output)?,
        }))
    }

    /// The program's result on `params` (the arguments in the order of its parameters), or
    /// `None` where a step's arguments are not what its tuple form takes: then the core runs
    /// the whole program (steps have no effects, so nothing is done twice that shows).
    pub fn run<'py>(&self, params: &[Bound<'py, PyAny>]) -> Option<Bound<'py, PyAny>> {
        let py = params.first()?.py();
        let mut done: Vec<Bound<'py, PyAny>> = Vec::with_capacity(self.steps.len());
        let value = |arg: &Arg, done: &[Bound<'py, PyAny>]| match arg {
            Arg::Param(k) => params[*k].clone(),
            Arg::Step(s) => done[*s].clone(),
            Arg::Const(c) => c.bind(py).clone(),
        };
        for (op, args) in &self.steps {
            let args: Vec<_> = args.iter().map(|a| value(a, &done)).collect();
            done.push(op.apply(&args)?);
        }
        Some(value(&self.output, &done))
    }
}

/// `obj` as an exact tuple.
fn exact<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Tuple<'py>> {
    obj.cast_exact::<PyTuple>().ok()
}

/// Row `k` of `t` as an exact tuple.
fn row<'py>(t: &Tuple<'py>, k: usize) -> Option<Tuple<'py>> {
    t.get_item(k).ok()?.cast_into_exact::<PyTuple>().ok()
}

/// Every member of `t` as an exact tuple.
fn rows<'py>(t: &Tuple<'py>) -> Option<Vec<Tuple<'py>>> {
    (0..t.len()).map(|k| row(t, k)).collect()
}

/// A bool, or an exact int within 64 bits (the core's limit), as it is: the reference's pairs
/// hold their arguments.
fn int<'py>(obj: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let int = obj.is_exact_instance_of::<PyInt>() && obj.extract::<i64>().is_ok();
    (int || obj.is_instance_of::<PyBool>()).then(|| obj.clone())
}

/// An exact tuple of two exact ints small enough that their sums stay far inside `isize`.
fn int_pair(obj: &Bound<'_, PyAny>) -> Option<(isize, isize)> {
    let t = exact(obj)?;
    let small = |k: usize| -> Option<isize> {
        let v = t.get_item(k).ok()?;
        v.is_exact_instance_of::<PyInt>().then_some(())?;
        isize::try_from(v.extract::<i32>().ok()?).ok()
    };
    (t.len() == 2).then_some(())?;
    Some((small(0)?, small(1)?))
}

/// The int `0`.
fn zero(py: Python<'_>) -> Bound<'_, PyAny> {
    PyInt::new(py, 0).into_any()
}

/// `slice(None, None, -1)`, made once.
static BACKWARDS: PyOnceLock<Py<PySlice>> = PyOnceLock::new();

/// `t[::-1]`, by the tuple's own subscript (which copies the pointers in one loop).
fn reversed<'py>(t: &Tuple<'py>) -> Option<Tuple<'py>> {
    let py = t.py();
    let backwards = BACKWARDS
        .get_or_try_init(py, || {
            let slice = py.get_type::<PySlice>().call1((py.None(), py.None(), -1))?;
            PyResult::Ok(slice.cast_into::<PySlice>()?.unbind())
        })
        .ok()?;
    t.as_any().get_item(backwards.bind(py)).ok()?.cast_into_exact().ok()
}

/// `a + b`.
fn concat<'py>(a: &Tuple<'py>, b: &Tuple<'py>) -> Option<Tuple<'py>> {
    a.as_sequence().concat(b.as_sequence()).ok()?.cast_into_exact().ok()
}

/// `t[start:stop]`, Python's slice (negative bounds count from the end).
fn slice<'py>(t: &Tuple<'py>, start: isize, stop: isize) -> Option<Tuple<'py>> {
    t.as_any()
        .get_item(PySlice::new(t.py(), start, stop, 1))
        .ok()?
        .cast_into_exact()
        .ok()
}

/// `tuple(f(row) for row in rows)`.
fn map_rows<'py>(
    py: Python<'py>,
    rows: &[Tuple<'py>],
    f: impl Fn(&Tuple<'py>) -> Option<Tuple<'py>>,
) -> Option<Tuple<'py>> {
    PyTuple::new(py, rows.iter().map(f).collect::<Option<Vec<_>>>()?).ok()
}

/// `tuple(zip(*rows))`: as many columns as the shortest row has cells.
fn transposed<'py>(py: Python<'py>, rows: &[Tuple<'py>]) -> Option<Tuple<'py>> {
    let width = rows.iter().map(|r| r.len()).min().unwrap_or(0);
    let columns = (0..width)
        .map(|c| {
            let column = rows.iter().map(|r| r.get_item(c).ok()).collect::<Option<Vec<_>>>()?;
            PyTuple::new(py, column).ok()
        })
        .collect::<Option<Vec<_>>>()?;
    PyTuple::new(py, columns).ok()
}

/// `tuple(row for row in zip(*grid[::-1]))`.
fn rot90<'py>(g: &Tuple<'py>) -> Option<Tuple<'py>> {
    transposed(g.py(), &rows(g)?.into_iter().rev().collect::<Vec<_>>())
}

/// `tuple(tuple(row[::-1]) for row in zip(*grid[::-1]))[::-1]`.
fn rot270<'py>(g: &Tuple<'py>) -> Option<Tuple<'py>> {
    reversed(&map_rows(g.py(), &rows(&rot90(g)?)?, reversed)?)
}

/// `grid[:len(grid) // 2]`.
fn tophalf<'py>(g: &Tuple<'py>) -> Tuple<'py> {
    g.get_slice(0, g.len() / 2)
}

/// `grid[len(grid) // 2 + len(grid) % 2:]`.
fn bottomhalf<'py>(g: &Tuple<'py>) -> Tuple<'py> {
    g.get_slice(g.len().div_ceil(2), g.len())
}
