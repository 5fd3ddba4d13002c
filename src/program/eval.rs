//! The interpreter: runs a compiled [`Program`] step by step on one set of inputs; the results
//! of the steps that read no input may be kept from one run to the next ([`Invariants`]).
//!
//! Isolation lives here too: [`run_guarded`] gives a program a deadline and turns a panic into
//! an error, so a caller running thousands of programs never dies because of one.

use std::mem::{ManuallyDrop, MaybeUninit};
use std::time::Duration;

use super::ir::{Callee, Operand, Program, Step};
use crate::dsl::func::{call, guarded, Deadline, Panicked, STEPS_PER_READING};
use crate::dsl::value::{as_values, borrowed};
use crate::dsl::{DslError, DslResult, Value};

/// A primitive's error, with the step that raised it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line} ({target}): {error}")]
pub struct EvalError {
    pub line: u32,
    pub target: String,
    pub error: DslError,
}

/// Why a guarded run produced no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A primitive raised (the reference would have thrown).
    #[error(transparent)]
    Raised(EvalError),
    /// The program ran past its time limit.
    #[error("time limit exceeded (at line {line})")]
    Timeout { line: u32 },
    /// A bug in the port: a primitive panicked. Reported, never fatal.
    #[error("internal error (panic): {0}")]
    Panic(String),
}

impl RunError {
    /// A short name for summaries: the Python exception, `timeout` or `panic`.
    pub fn kind(&self) -> &str {
        match self {
            RunError::Raised(e) => e.error.python_name(),
            RunError::Timeout { .. } => "timeout",
            RunError::Panic(_) => "panic",
        }
    }
}

/// The value of an operand, given the parameters and the results so far.
#[inline]
fn operand(op: &Operand, params: &[Value], values: &[Value]) -> Value {
    match op {
        Operand::Param(k) => params[*k as usize].clone(),
        Operand::Step(s) => values[*s as usize].clone(),
        Operand::Const(c) => c.value(),
    }
}

/// Runs a program on its parameters (in the order of `program.params`).
pub fn eval(program: &Program, params: &[Value]) -> Result<Value, EvalError> {
    eval_keeping(program, params, None)
}

/// The results of a program's steps that read no parameter (closures built from constants, a
/// canvas of a constant shape), kept from one run of the program to the next: a solver run on
/// every sample of a task builds them once, not once per sample, and the closures it maps with
/// are then the same values on every sample, whose compiled kernels are found by address.
///
/// A step keeps its result only where it succeeded, when the run reaches it, so that every run
/// raises what it raised before and where: a step that fails (an error, the time limit, a
/// panic) runs again in the next run.
pub struct Invariants {
    /// Per step: whether it reads no parameter, and its result once it was computed.
    invariant: Vec<bool>,
    kept: Vec<Option<Value>>,
}

impl Invariants {
    /// None kept yet for `program`'s steps.
    pub fn new(program: &Program) -> Invariants {
        let mut invariant = Vec::with_capacity(program.steps.len());
        for step in &program.steps {
            let reads_invariant = |op: &Operand| match op {
                Operand::Param(_) => false,
                Operand::Step(s) => invariant[*s as usize],
                Operand::Const(_) => true,
            };
            let callee = match &step.callee {
                Callee::Prim(_) => true,
                Callee::Value(op) => reads_invariant(op),
            };
            invariant.push(callee && step.args.iter().all(reads_invariant));
        }
        let kept = std::iter::repeat_with(|| None).take(invariant.len()).collect();
        Invariants { invariant, kept }
    }
}

/// [`eval`], with the results of steps that read no parameter taken from `invariants` where
/// an earlier run kept them, and kept there as this run computes them.
pub fn eval_keeping(
    program: &Program,
    params: &[Value],
    mut invariants: Option<&mut Invariants>,
) -> Result<Value, EvalError> {
    let mut on_stack = [NO_RESULT; INLINE_RESULTS];
    let mut on_heap: Vec<Value>;
    let slots = match program.steps.len() {
        n if n <= INLINE_RESULTS => &mut on_stack[..],
        n => {
            on_heap = Vec::with_capacity(n);
            on_heap.spare_capacity_mut()
        }
    };
    let mut values = Results::new(slots);
    for (k, step) in program.steps.iter().enumerate() {
        let fail = |error| EvalError {
            line: step.line,
            target: step.target.clone(),
            error,
        };
        // A kept result costs no work, so the limits are checked before the next step that works.
        let keep = invariants.as_deref_mut().filter(|i| i.invariant[k]);
        if let Some(v) = keep.as_ref().and_then(|i| i.kept[k].as_ref()) {
            values.push(v.clone());
            continue;
        }
        Deadline::check_reading_clock(k % STEPS_PER_READING == 0).map_err(fail)?;
        let result = match step.args.len() {
            n if n <= INLINE_ARGS => call_step(step, params, values.as_slice(), &mut [NO_VALUE; INLINE_ARGS][..n]),
            n => call_step(step, params, values.as_slice(), &mut vec![NO_VALUE; n]),
        };
        match &result {
            Ok(value) => {
                if let Some(i) = keep {
                    i.kept[k] = Some(value.clone());
                }
                // SAFETY: `result` is forgotten just after: the slot takes its value over.
                unsafe { values.push_moved(value) };
                std::mem::forget(result);
            }
            Err(_) => return Err(fail(result.unwrap_err())),
        }
    }
    Ok(operand(&program.output, params, values.as_slice()))
}

/// Programs of at most this many steps (nineteen in twenty of the reference's solvers) keep
/// their results on the stack: a vector allocated for each run (a program runs once per sample)
/// was a tenth of an identity solver's cost. A longer one allocates room for as many as it has
/// steps, so that what a run asks of the allocator depends on the program alone (see
/// [`crate::dsl::memory`]).
const INLINE_RESULTS: usize = 32;

/// A result's slot before its step has run.
const NO_RESULT: MaybeUninit<Value> = MaybeUninit::uninit();

/// The results of the steps run so far: the first `len` of `slots`, dropped with it (also when
/// a step fails or panics).
struct Results<'s> {
    slots: &'s mut [MaybeUninit<Value>],
    len: usize,
}

impl<'s> Results<'s> {
    fn new(slots: &'s mut [MaybeUninit<Value>]) -> Results<'s> {
        Results { slots, len: 0 }
    }

    fn as_slice(&self) -> &[Value] {
        // SAFETY: the first `len` slots were written by `push`.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr().cast::<Value>(), self.len) }
    }

    /// Adds a step's result (there is a slot per step).
    fn push(&mut self, v: Value) {
        self.slots[self.len].write(v);
        self.len += 1;
    }

    /// Adds a step's result where the step returned it, word by word: the primitive wrote it
    /// in words, and a copy in wider loads (as a move compiles to) waits for those stores to
    /// reach the cache before it can read them (store forwarding fails), twice per step.
    ///
    /// # Safety
    ///
    /// The slot takes `value` over: the caller forgets it.
    unsafe fn push_moved(&mut self, value: &Value) {
        const WORDS: usize = std::mem::size_of::<Value>() / std::mem::size_of::<usize>();
        let from = (value as *const Value).cast::<MaybeUninit<usize>>();
        let to = self.slots[self.len].as_mut_ptr().cast::<MaybeUninit<usize>>();
        for w in 0..WORDS {
            // SAFETY: both are a value's words; volatile, so that they stay word loads.
            unsafe { to.add(w).write(from.add(w).read_volatile()) };
        }
        self.len += 1;
    }
}

impl Drop for Results<'_> {
    fn drop(&mut self) {
        // SAFETY: the first `len` slots were written by `push` and are dropped only here.
        unsafe {
            let results = std::ptr::slice_from_raw_parts_mut(self.slots.as_mut_ptr().cast::<Value>(), self.len);
            std::ptr::drop_in_place(results)
        }
    }
}

/// Steps with at most this many arguments (all of the DSL's calls) lay them out on the stack.
const INLINE_ARGS: usize = 4;

/// An argument slot before it is written.
const NO_VALUE: ManuallyDrop<Value> = ManuallyDrop::new(Value::None);

/// Calls a step, its arguments laid out in `slots` (one per argument) as bitwise copies that
/// are never dropped (see `borrowed`): the parameters and earlier results, grids and containers
/// mostly, and the constants ([`super::ir::ConstKey::value_copy`]). A call takes no reference
/// and releases none.
#[inline(always)]
fn call_step(step: &Step, params: &[Value], values: &[Value], slots: &mut [ManuallyDrop<Value>]) -> DslResult<Value> {
    for (slot, a) in slots.iter_mut().zip(&step.args) {
        *slot = match a {
            // SAFETY (of each copy): `params` and `values` outlive the call and are not changed
            // before it returns.
            Operand::Param(k) => unsafe { borrowed(&params[*k as usize]) },
            Operand::Step(s) => unsafe { borrowed(&values[*s as usize]) },
            Operand::Const(c) => c.value_copy(),
        };
    }
    match &step.callee {
        Callee::Prim(id) => (id.spec().imp)(as_values(slots)),
        Callee::Value(f) => call(&operand(f, params, values), as_values(slots)),
    }
}

/// Runs a program with a time limit, turning a panic into [`RunError::Panic`].
pub fn run_guarded(program: &Program, params: &[Value], limit: Option<Duration>) -> Result<Value, RunError> {
    run_guarded_keeping(program, params, limit, None)
}

/// [`run_guarded`] with [`eval_keeping`]'s `invariants`.
pub fn run_guarded_keeping(
    program: &Program,
    params: &[Value],
    limit: Option<Duration>,
    invariants: Option<&mut Invariants>,
) -> Result<Value, RunError> {
    match guarded(limit, || eval_keeping(program, params, invariants)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) if e.error == DslError::Timeout => Err(RunError::Timeout { line: e.line }),
        Ok(Err(e)) => Err(RunError::Raised(e)),
        Err(Panicked(message)) => Err(RunError::Panic(message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::Grid;
    use crate::program::parse_file;

    /// `x0 = size(I)`, `x1 = identity(I)` (1 and a grid for a grid of one row), then increments
    /// of `x0` up to `steps` steps (at least 3), then, if `failing`, a division by zero.
    fn counting_program(steps: usize, failing: bool) -> Program {
        let mut src = String::from("def f(I):\n    x0 = size(I)\n    x1 = identity(I)\n    x2 = increment(x0)\n");
        for k in 3..steps {
            src += &format!("    x{k} = increment(x{})\n", k - 1);
        }
        let last = if failing {
            src += &format!("    x{steps} = divide(x{}, ZERO)\n", steps - 1);
            steps
        } else {
            steps - 1
        };
        src += &format!("    return x{last}\n");
        parse_file("f.py", &src).unwrap().remove(0)
    }

    /// A grid of `rows` rows of one cell.
    fn rows(rows: usize) -> Value {
        Value::grid(Grid::new(rows, 1, vec![0; rows]))
    }

    #[test]
    fn steps_reading_no_input_are_kept_once_they_succeed_and_runs_give_what_they_gave() {
        let src = "def f(I):
    x1 = rbind(add, TWO)
    x2 = size(I)
    x3 = x1(x2)
    x4 = x1(FIVE)
    x5 = subtract(x2, ONE)
    x6 = divide(TEN, x5)
    x7 = divide(x4, ZERO)
    return x7
";
        let program = parse_file("f.py", src).unwrap().remove(0);
        let mut invariants = Invariants::new(&program);
        assert_eq!(invariants.invariant, [true, false, false, true, false, false, true]);
        // One row: `x6` divides by zero first and `x7` is never reached; more: `x7` raises.
        for n in [1, 2, 1, 3] {
            let input = [rows(n)];
            let kept = eval_keeping(&program, &input, Some(&mut invariants));
            assert_eq!(kept, eval(&program, &input), "{n} rows");
            assert_eq!(kept.unwrap_err().line, if n == 1 { 7 } else { 8 });
        }
        let kept: Vec<bool> = invariants.kept.iter().map(Option::is_some).collect();
        assert_eq!(
            kept,
            [true, false, false, true, false, false, false],
            "the failing step is not kept"
        );

        // A kept closure is the same value in every run.
        let src = "def g(I):\n    x1 = rbind(add, TWO)\n    x2 = x1(FIVE)\n    x3 = size(I)\n    return x1\n";
        let program = parse_file("g.py", src).unwrap().remove(0);
        let mut invariants = Invariants::new(&program);
        let mut closures = [1, 2].map(|n| {
            let out = eval_keeping(&program, &[rows(n)], Some(&mut invariants)).unwrap();
            assert_eq!(out.to_string(), "rbind(add, 2)");
            out
        });
        let [Value::Func(a), Value::Func(b)] = &mut closures else {
            panic!("not closures")
        };
        assert!(crate::dsl::shared::Shared::ptr_eq(a, b));
    }

    #[test]
    fn programs_past_the_results_on_the_stack_run_as_shorter_ones() {
        let input = [Value::grid(Grid::new(1, 1, vec![0]))];
        for steps in [3, INLINE_RESULTS, INLINE_RESULTS + 1, 3 * INLINE_RESULTS] {
            let sum = eval(&counting_program(steps, false), &input);
            assert_eq!(sum, Ok(Value::Int(steps as i64 - 1)), "{steps} steps");
            // The failing step's line (the `def` is line 1).
            let error = eval(&counting_program(steps, true), &input).unwrap_err();
            assert_eq!(
                (error.line, error.error.python_name()),
                (steps as u32 + 2, "ZeroDivisionError")
            );
            let Value::Grid(grid) = &input[0] else { unreachable!() };
            assert_eq!(
                crate::dsl::shared::Shared::strong_count(grid),
                1,
                "the results hold no reference"
            );
        }
    }
}
