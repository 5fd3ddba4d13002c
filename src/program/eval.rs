//! The interpreter: runs a compiled [`Program`] step by step on one set of inputs.
//!
//! Isolation lives here too: [`run_guarded`] gives a program a deadline and turns a panic into
//! an error, so a caller running thousands of programs never dies because of one.

use std::mem::ManuallyDrop;
use std::time::Duration;

use smallvec::SmallVec;

use super::ir::{Callee, Operand, Program};
use crate::dsl::func::{call, guarded, Deadline, Panicked};
use crate::dsl::value::{as_values, borrowed, push_value};
use crate::dsl::{DslError, Value};

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
        // A step's constants, built for the call; its other arguments (the parameters and
        // earlier results, grids and containers mostly) are handed over as bitwise copies
        // that are never dropped (see `borrowed`): a call takes no reference and releases none.
        let constants: SmallVec<[Value; 4]> = step
            .args
            .iter()
            .filter_map(|a| match a {
                Operand::Const(c) => Some(c.value()),
                _ => None,
            })
            .collect();
        let mut constant = constants.iter();
        // SAFETY (of each copy): `params`, `values` and `constants` outlive the call and are
        // not changed before it returns.
        let args: SmallVec<[ManuallyDrop<Value>; 4]> = step
            .args
            .iter()
            .map(|a| unsafe {
                borrowed(match a {
                    Operand::Param(k) => &params[*k as usize],
                    Operand::Step(s) => &values[*s as usize],
                    Operand::Const(_) => constant.next().expect("one constant built per constant operand"),
                })
            })
            .collect();
        let result = match &step.callee {
            Callee::Prim(id) => (id.spec().imp)(as_values(&args)),
            Callee::Value(f) => call(&operand(f, params, &values), as_values(&args)),
        };
        drop(args);
        drop(constants);
        push_value(&mut values, result.map_err(fail)?);
    }
    Ok(operand(&program.output, params, &values))
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
