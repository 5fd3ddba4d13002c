//! What a primitive raises. Where the reference throws a Python exception, the port returns a
//! [`DslError`]: a value the interpreter and the batt engine carry in place of a result, so one
//! failing program (or one failing lane) never stops the others.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use super::value::Value;

pub type DslResult<T> = Result<T, DslError>;

/// An error's message, behind one pointer: with every variant at most a word wide, a
/// `DslResult<Value>` is no larger than a [`Value`] (the happy path moves three words, not six).
/// (`Box<str>` would be two words.)
#[derive(Clone, PartialEq, Eq)]
#[allow(clippy::box_collection)] // the box makes the pointer thin: that is its purpose
pub struct Message(Box<String>);

impl From<String> for Message {
    fn from(s: String) -> Message {
        Message(Box::new(s))
    }
}

impl From<&str> for Message {
    fn from(s: &str) -> Message {
        Message(Box::new(s.to_string()))
    }
}

impl std::ops::Deref for Message {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// An error raised by a primitive, named after the Python exception the reference raises.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DslError {
    /// Python's `TypeError`: an argument of the wrong kind, or a call with the wrong arity.
    #[error("TypeError: {0}")]
    Type(Message),
    /// Python's `ValueError` (e.g. `max()` of an empty sequence, unpacking the wrong length).
    #[error("ValueError: {0}")]
    Value(Message),
    /// Python's `IndexError` (e.g. `tuple[0]` of an empty tuple).
    #[error("IndexError: {0}")]
    Index(Message),
    /// Python's `KeyError` (`urcorner` of a patch whose members have more than two items:
    /// `{0: min, 1: max}[2]`).
    #[error("KeyError: {0}")]
    Key(Message),
    /// Python's `ZeroDivisionError`.
    #[error("ZeroDivisionError: {0}")]
    ZeroDivision(Message),
    /// Python's `StopIteration` (`next(iter(x))` of an empty container).
    #[error("StopIteration: {0}")]
    StopIteration(Message),
    /// Python's `RuntimeError`: a function raised `StopIteration` inside one of the reference's
    /// generator expressions (`apply`, `sfilter`, `papply`, ...), which PEP 479 turns into this.
    #[error("RuntimeError: {0}")]
    Runtime(Message),
    /// Python's `RecursionError` (`power(f, n)` with `n < 1` never terminates in the reference).
    #[error("RecursionError: {0}")]
    Recursion(Message),
    /// Python's `AttributeError` (e.g. `.count` on a frozenset).
    #[error("AttributeError: {0}")]
    Attribute(Message),
    /// A colour (given as its repr) that no compact cell holds: an integer past `i32`, or no
    /// integer at all (`None`); the reference would accept it. The fast paths return it so that
    /// the simple paths (`rows`, generic cells) take the call over.
    #[error("colour {0} does not fit in a grid cell (this port stores colours as i32)")]
    ColorRange(Message),
    /// A value that would exceed the port's size caps (the reference would run out of memory
    /// or time first).
    #[error("size limit: {0}")]
    TooLarge(Message),
    /// A bug in the port (a panic caught in a lane, broken bookkeeping): reported as this lane's
    /// error so that it never takes the other lanes down.
    #[error("internal error: {0}")]
    Internal(Message),
    /// The program ran past its time limit (see [`crate::dsl::func::Deadline`]).
    #[error("time limit exceeded")]
    Timeout,
    /// The computation was stopped from outside (see [`crate::dsl::func::Interrupt`]): a
    /// signal, a cancelled search. Not a result of the program.
    #[error("interrupted")]
    Interrupted,
    /// What a [`Foreign`](crate::dsl::func::Foreign) function (a Python callable) raised,
    /// carried out of the DSL as it is.
    #[error("{}: {}", .0.class, .0.message)]
    Foreign(Arc<Raised>),
}

/// An exception of the embedding's: its class's name and message for reports, and the
/// exception itself for the embedding to raise again.
pub struct Raised {
    pub class: String,
    pub message: String,
    /// Whether it is a `StopIteration`, which a generator expression turns into a
    /// `RuntimeError` ([`DslError::in_generator`]).
    pub stop_iteration: bool,
    pub exception: Box<dyn Any + Send + Sync>,
}

/// Each exception is itself only.
impl PartialEq for Raised {
    fn eq(&self, other: &Raised) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Raised {}

impl fmt::Debug for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({:?})", self.class, self.message)
    }
}

impl DslError {
    pub fn type_error(expected: &str, got: &Value) -> DslError {
        DslError::mismatch(expected, format_args!("{} {}", got.type_name(), got.repr_cut(80)))
    }

    /// Python's `TypeError`, as "expected ..., got ...".
    pub fn mismatch(expected: impl fmt::Display, got: impl fmt::Display) -> DslError {
        DslError::Type(format!("expected {expected}, got {got}").into())
    }

    /// True for errors that say how this run went rather than what the values are (the time
    /// limit, an interruption): a result computed once and reused must not keep them.
    pub fn is_transient(&self) -> bool {
        matches!(self, DslError::Timeout | DslError::Interrupted)
    }

    /// What an error raised by a function inside a generator expression becomes (PEP 479).
    pub fn in_generator(self) -> DslError {
        match self {
            DslError::StopIteration(_) => DslError::Runtime("generator raised StopIteration".into()),
            DslError::Foreign(raised) if raised.stop_iteration => {
                DslError::Runtime("generator raised StopIteration".into())
            }
            other => other,
        }
    }

    /// The Python exception class this error stands for.
    pub fn python_name(&self) -> &str {
        match self {
            DslError::Type(_) => "TypeError",
            DslError::Value(_) => "ValueError",
            DslError::Index(_) => "IndexError",
            DslError::Key(_) => "KeyError",
            DslError::ZeroDivision(_) => "ZeroDivisionError",
            DslError::StopIteration(_) => "StopIteration",
            DslError::Runtime(_) => "RuntimeError",
            DslError::Recursion(_) => "RecursionError",
            DslError::Attribute(_) => "AttributeError",
            DslError::ColorRange(_) | DslError::TooLarge(_) => "MemoryError",
            DslError::Timeout => "TimeoutError",
            DslError::Interrupted => "KeyboardInterrupt",
            DslError::Internal(_) => "InternalError",
            DslError::Foreign(raised) => &raised.class,
        }
    }
}

/// Return early with a [`DslError`] built from the variant name and a format string.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($fmt:tt)*) => {
        return Err($crate::dsl::DslError::$kind(format!($($fmt)*).into()))
    };
}
