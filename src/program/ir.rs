//! The compiled form of a program: a straight-line list of steps whose operands are resolved
//! at load time (parameters and earlier steps by index, constants and primitives by value), so
//! running it does no name lookup. The batt engine merges these.

use std::fmt;
use std::mem::ManuallyDrop;

use crate::dsl::{PrimId, Value};

/// Where an operand's value comes from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Operand {
    /// The k-th parameter of the program (`I`, or `S`, `I`, `C`).
    Param(u8),
    /// The result of an earlier step.
    Step(u32),
    /// A constant: a named constant, an integer literal, or a primitive as a function value.
    Const(ConstKey),
}

/// A constant operand, kept hashable for merging: constants are ints, bools, pairs and
/// primitives, never containers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConstKey {
    Bool(bool),
    Int(i64),
    Pair(i64, i64),
    Prim(PrimId),
}

impl ConstKey {
    #[inline]
    pub fn value(&self) -> Value {
        match *self {
            ConstKey::Bool(b) => Value::Bool(b),
            ConstKey::Int(n) => Value::Int(n),
            ConstKey::Pair(a, b) => Value::Pair(a, b),
            ConstKey::Prim(id) => Value::prim(id),
        }
    }

    /// The value as a copy that is never dropped (see [`crate::dsl::value::borrowed`]): a
    /// primitive is the process's own value ([`Value::prim_copy`]); numbers, booleans and pairs
    /// hold no allocation to release.
    pub fn value_copy(&self) -> ManuallyDrop<Value> {
        match *self {
            ConstKey::Prim(id) => Value::prim_copy(id),
            _ => ManuallyDrop::new(self.value()),
        }
    }

    pub fn from_value(v: &Value) -> Option<ConstKey> {
        Some(match v {
            Value::Bool(b) => ConstKey::Bool(*b),
            Value::Int(n) => ConstKey::Int(*n),
            Value::Pair(a, b) => ConstKey::Pair(*a, *b),
            Value::Func(f) => match f.as_ref() {
                crate::dsl::Func::Prim(id) => ConstKey::Prim(*id),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// What a step calls.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Callee {
    /// A primitive, called directly (arity checked at load time).
    Prim(PrimId),
    /// A value that should hold a function (`x5 = x3(x4)`), checked when it runs.
    Value(Operand),
}

/// One step: `target = callee(args)`.
#[derive(Clone, Debug)]
pub struct Step {
    pub callee: Callee,
    pub args: Vec<Operand>,
    /// The variable name in the source (`x3`, `O`), or a generated one for a nested call.
    pub target: String,
    /// 1-based source line.
    pub line: u32,
}

/// A compiled program (one `def`).
#[derive(Clone, Debug)]
pub struct Program {
    /// The function's name (`solve_007bbfb7`, `solve`, `differ`).
    pub name: String,
    pub params: Vec<String>,
    pub steps: Vec<Step>,
    /// The returned operand.
    pub output: Operand,
    /// The file the program came from, for messages.
    pub file: String,
    /// 1-based line of the `def`.
    pub line: u32,
}

impl Program {
    /// The task id of a `solve_<id>` program.
    pub fn task_id(&self) -> Option<&str> {
        self.name.strip_prefix("solve_")
    }

    /// The name of an operand as the source wrote it.
    pub fn operand_name(&self, op: &Operand) -> String {
        match op {
            Operand::Param(k) => self.params[*k as usize].clone(),
            Operand::Step(s) => self.steps[*s as usize].target.clone(),
            Operand::Const(c) => c.to_string(),
        }
    }
}

impl fmt::Display for ConstKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstKey::Prim(id) => f.write_str(id.spec().name),
            other => {
                // The reference's constant name where there is one (of the same kind: `ZERO`,
                // not `F`), else the literal.
                match crate::dsl::constants::CONSTANTS
                    .iter()
                    .find(|(n, c)| ConstKey::from_value(&c.value()).as_ref() == Some(other) && !is_mode_name(n))
                {
                    Some((name, _)) => f.write_str(name),
                    None => write!(f, "{}", other.value()),
                }
            }
        }
    }
}

/// The search dialect's `R0`..`R7`, which a constant is never written as (`RIGHT` is not one).
fn is_mode_name(name: &str) -> bool {
    name.len() == 2 && name.starts_with('R')
}

/// Writes the program back in the reference syntax.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "def {}({}):", self.name, self.params.join(", "))?;
        for step in &self.steps {
            let callee = match &step.callee {
                Callee::Prim(id) => id.spec().name.to_string(),
                Callee::Value(op) => self.operand_name(op),
            };
            let args: Vec<String> = step.args.iter().map(|a| self.operand_name(a)).collect();
            writeln!(f, "    {} = {}({})", step.target, callee, args.join(", "))?;
        }
        writeln!(f, "    return {}", self.operand_name(&self.output))
    }
}
