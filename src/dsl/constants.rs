//! The reference's named constants (`constants.py`) and the search dialect's `R0`..`R7`.

use super::value::Value;

/// Every constant name with its value.
pub const CONSTANTS: &[(&str, Const)] = &[
    ("F", Const::Bool(false)),
    ("T", Const::Bool(true)),
    ("ZERO", Const::Int(0)),
    ("ONE", Const::Int(1)),
    ("TWO", Const::Int(2)),
    ("THREE", Const::Int(3)),
    ("FOUR", Const::Int(4)),
    ("FIVE", Const::Int(5)),
    ("SIX", Const::Int(6)),
    ("SEVEN", Const::Int(7)),
    ("EIGHT", Const::Int(8)),
    ("NINE", Const::Int(9)),
    ("TEN", Const::Int(10)),
    ("NEG_ONE", Const::Int(-1)),
    ("NEG_TWO", Const::Int(-2)),
    ("DOWN", Const::Pair(1, 0)),
    ("RIGHT", Const::Pair(0, 1)),
    ("UP", Const::Pair(-1, 0)),
    ("LEFT", Const::Pair(0, -1)),
    ("ORIGIN", Const::Pair(0, 0)),
    ("UNITY", Const::Pair(1, 1)),
    ("NEG_UNITY", Const::Pair(-1, -1)),
    ("UP_RIGHT", Const::Pair(-1, 1)),
    ("DOWN_LEFT", Const::Pair(1, -1)),
    ("ZERO_BY_TWO", Const::Pair(0, 2)),
    ("TWO_BY_ZERO", Const::Pair(2, 0)),
    ("TWO_BY_TWO", Const::Pair(2, 2)),
    ("THREE_BY_THREE", Const::Pair(3, 3)),
    // The search dialect's `o_g` modes: R = 4*univalued + 2*diagonal + without_bg.
    ("R0", Const::Int(0)),
    ("R1", Const::Int(1)),
    ("R2", Const::Int(2)),
    ("R3", Const::Int(3)),
    ("R4", Const::Int(4)),
    ("R5", Const::Int(5)),
    ("R6", Const::Int(6)),
    ("R7", Const::Int(7)),
];

/// A constant's value, in a form that can live in a `const` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Const {
    Bool(bool),
    Int(i64),
    Pair(i64, i64),
}

impl Const {
    pub fn value(self) -> Value {
        match self {
            Const::Bool(b) => Value::Bool(b),
            Const::Int(n) => Value::Int(n),
            Const::Pair(a, b) => Value::Pair(a, b),
        }
    }
}

/// The value of the constant called `name`.
pub fn constant(name: &str) -> Option<Value> {
    CONSTANTS.iter().find(|(n, _)| *n == name).map(|(_, c)| c.value())
}
