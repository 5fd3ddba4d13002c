//! Programs in the DSL's own syntax: parsing ([`parse`]) into a resolved IR ([`ir`]), and the
//! interpreter ([`eval`]). Knows the DSL layer, nothing of tasks or backends.

pub mod eval;
pub mod ir;
pub mod parse;

pub use eval::{eval, eval_keeping, run_guarded, run_guarded_keeping, EvalError, Invariants, RunError};
pub use ir::{Callee, ConstKey, Operand, Program, Step};
pub use parse::{parse_file, parse_program, ParseError};
