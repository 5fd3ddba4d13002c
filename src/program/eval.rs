//! The interpreter: runs a compiled [`Program`] step by step on one set of inputs.
//!
//! Isolation lives here too: [`run_guarded`] gives a program a deadline and turns a panic into
//! an error, so a caller running thousands of programs never dies because of one.

use std::mem::ManuallyDrop;
use std::time::Duration;

use super::ir::{Callee, Operand, Program, Step};
use crate::dsl::func::{call, guarded, Deadline, Panicked};
use crate::dsl::value::{as_values, borrowed, push_value};
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
    let mut values: Vec<Value> = Vec::with_capacity(program.steps.len());
    for step in &program.steps {
        let fail = |error| EvalError {
            line: step.line,
            target: step.target.clone(),
            error,
        };
        Deadline::check().map_err(fail)?;
        let result = match step.args.len() {
            n if n <= INLINE_ARGS => call_step(step, params, &values, &mut [NO_VALUE; INLINE_ARGS][..n]),
            n => call_step(step, params, &values, &mut vec![NO_VALUE; n]),
        };
        push_value(&mut values, result.map_err(fail)?);
    }
    Ok(operand(&program.output, params, &values))
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
    match guarded(limit, || eval(program, params)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) if e.error == DslError::Timeout => Err(RunError::Timeout { line: e.line }),
        Ok(Err(e)) => Err(RunError::Raised(e)),
        Err(Panicked(message)) => Err(RunError::Panic(message)),
    }
}
