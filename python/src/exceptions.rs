//! The Python exception hierarchy and the one mapping from the core's errors to it.
//!
//! Every exception the module raises derives from `arcbatch.ArcbatchError`. What a primitive
//! raises (a [`DslError`]) becomes a subclass of `arcbatch.DslError` that also derives from the
//! builtin the reference would raise, so `except ValueError:` in user code keeps working:
//! `DslValueError(DslError, ValueError)`, `DslIndexError(DslError, IndexError)`, and so on.
//! pyo3's `create_exception!` takes a single base, so the classes are made here by calling
//! `type(name, bases, namespace)` once, at import time.
//!
//! Any other error of the core ([`arcbatch::Error`]) gets its class from the layer and kind it
//! comes from ([`core_error`]), and as message the error with its causes, as the CLI prints it.

use pyo3::exceptions::{
    PyAttributeError, PyException, PyIndexError, PyKeyError, PyKeyboardInterrupt, PyMemoryError, PyRecursionError,
    PyRuntimeError, PyStopIteration, PyTimeoutError, PyTypeError, PyValueError, PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use arcbatch::dsl::func::{caught, Panicked};
use arcbatch::dsl::DslError;
use arcbatch::{Chain, Error};

use crate::callback::exception_of;
use crate::pool::PoolError;

/// The classes, in the order they are made (a base before its subclasses).
#[derive(Clone, Copy)]
pub enum Kind {
    Arcbatch,
    Dsl,
    DslType,
    DslValue,
    DslIndex,
    DslKey,
    DslZeroDivision,
    DslStopIteration,
    DslRuntime,
    DslRecursion,
    DslAttribute,
    DslLimit,
    DslTimeout,
    Input,
    Internal,
}

/// Where a class stands: its name, its arcbatch base (`None` for the root), the builtin it also
/// derives from, and its docstring.
struct ClassSpec {
    kind: Kind,
    name: &'static str,
    base: Option<Kind>,
    builtin: fn(Python<'_>) -> Bound<'_, PyType>,
    doc: &'static str,
}

const CLASSES: &[ClassSpec] = &[
    ClassSpec {
        kind: Kind::Arcbatch,
        name: "ArcbatchError",
        base: None,
        builtin: |py| py.get_type::<PyException>(),
        doc: "Base class of every exception arcbatch raises.",
    },
    ClassSpec {
        kind: Kind::Dsl,
        name: "DslError",
        base: Some(Kind::Arcbatch),
        builtin: |py| py.get_type::<PyException>(),
        doc: "A primitive raised: the reference would have thrown. Subclasses also derive from the builtin \
              exception the reference throws.",
    },
    ClassSpec {
        kind: Kind::DslType,
        name: "DslTypeError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyTypeError>(),
        doc: "An argument of the wrong kind, a call with the wrong number of arguments, or a value that is not \
              a DSL value (the reference raises TypeError).",
    },
    ClassSpec {
        kind: Kind::DslValue,
        name: "DslValueError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyValueError>(),
        doc: "The reference raises ValueError (max() of an empty container, unpacking the wrong length, ...).",
    },
    ClassSpec {
        kind: Kind::DslIndex,
        name: "DslIndexError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyIndexError>(),
        doc: "The reference raises IndexError (the first member of an empty tuple, ...).",
    },
    ClassSpec {
        kind: Kind::DslKey,
        name: "DslKeyError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyKeyError>(),
        doc: "The reference raises KeyError (urcorner or llcorner of members with more than two items).",
    },
    ClassSpec {
        kind: Kind::DslZeroDivision,
        name: "DslZeroDivisionError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyZeroDivisionError>(),
        doc: "The reference raises ZeroDivisionError.",
    },
    ClassSpec {
        kind: Kind::DslStopIteration,
        name: "DslStopIteration",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyStopIteration>(),
        doc: "The reference raises StopIteration (next(iter(x)) of an empty container).",
    },
    ClassSpec {
        kind: Kind::DslRuntime,
        name: "DslRuntimeError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyRuntimeError>(),
        doc:
            "The reference raises RuntimeError (a function raising StopIteration inside apply, sfilter, ...: PEP 479).",
    },
    ClassSpec {
        kind: Kind::DslRecursion,
        name: "DslRecursionError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyRecursionError>(),
        doc: "The reference raises RecursionError (power(f, n) with n < 1, or too large an n).",
    },
    ClassSpec {
        kind: Kind::DslAttribute,
        name: "DslAttributeError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyAttributeError>(),
        doc: "The reference raises AttributeError (.count of a frozenset, ...).",
    },
    ClassSpec {
        kind: Kind::DslLimit,
        name: "DslLimitError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyMemoryError>(),
        doc: "A value beyond this port's limits, a MemoryError: a grid colour beyond 32 bits, an integer beyond \
              64 bits, a container too large or nested too deeply, a call past its memory limit (the reference \
              would accept it or run out of memory).",
    },
    ClassSpec {
        kind: Kind::DslTimeout,
        name: "DslTimeoutError",
        base: Some(Kind::Dsl),
        builtin: |py| py.get_type::<PyTimeoutError>(),
        doc: "A program ran past its time limit.",
    },
    ClassSpec {
        kind: Kind::Input,
        name: "InputError",
        base: Some(Kind::Arcbatch),
        builtin: |py| py.get_type::<PyValueError>(),
        doc: "A solver file that does not parse, a task file that cannot be read, or a bad argument.",
    },
    ClassSpec {
        kind: Kind::Internal,
        name: "InternalError",
        base: Some(Kind::Arcbatch),
        builtin: |py| py.get_type::<PyRuntimeError>(),
        doc: "A bug in arcbatch (a caught panic). Please report it with the input that caused it.",
    },
];

// Each class sits at the index of its kind, after its base.
const _: () = {
    let mut k = 0;
    while k < CLASSES.len() {
        assert!(CLASSES[k].kind as usize == k);
        if let Some(base) = CLASSES[k].base {
            assert!((base as usize) < k);
        }
        k += 1;
    }
};

static CLASS_OBJECTS: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn make_classes(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let mut made: Vec<Py<PyType>> = Vec::with_capacity(CLASSES.len());
    for spec in CLASSES {
        let builtin = (spec.builtin)(py);
        let bases = match spec.base {
            None => PyTuple::new(py, [builtin])?,
            Some(base) => {
                let base = made[base as usize].bind(py).clone();
                if builtin.is(py.get_type::<PyException>()) {
                    PyTuple::new(py, [base])?
                } else {
                    PyTuple::new(py, [base, builtin])?
                }
            }
        };
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "arcbatch")?;
        namespace.set_item("__doc__", spec.doc)?;
        let class = py.get_type::<PyType>().call1((spec.name, bases, namespace))?;
        made.push(class.cast_into::<PyType>()?.unbind());
    }
    Ok(made)
}

/// The class of a kind.
pub fn class(py: Python<'_>, kind: Kind) -> PyResult<&Bound<'_, PyType>> {
    let classes = CLASS_OBJECTS.get_or_try_init(py, || make_classes(py))?;
    Ok(classes[kind as usize].bind(py))
}

/// Adds every class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for spec in CLASSES {
        m.add(spec.name, class(py, spec.kind)?)?;
    }
    Ok(())
}

/// An exception of `kind` with `message`.
pub fn error(py: Python<'_>, kind: Kind, message: String) -> PyErr {
    match class(py, kind) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

/// The exception class standing for a primitive's error.
fn dsl_kind(e: &DslError) -> Kind {
    match e {
        DslError::Type(_) => Kind::DslType,
        DslError::Value(_) => Kind::DslValue,
        DslError::Index(_) => Kind::DslIndex,
        DslError::Key(_) => Kind::DslKey,
        DslError::ZeroDivision(_) => Kind::DslZeroDivision,
        DslError::StopIteration(_) => Kind::DslStopIteration,
        DslError::Runtime(_) => Kind::DslRuntime,
        DslError::Recursion(_) => Kind::DslRecursion,
        DslError::Attribute(_) => Kind::DslAttribute,
        DslError::ColorRange(_) | DslError::TooLarge(_) => Kind::DslLimit,
        DslError::Timeout => Kind::DslTimeout,
        // Raised as the exception that interrupted it (see `dsl_error`); never made here.
        DslError::Interrupted => Kind::Internal,
        // Raised as the callable's own exception (see `dsl_error`).
        DslError::Internal(_) | DslError::Foreign(_) => Kind::Internal,
    }
}

/// The exception class for an error of the core.
fn core_kind(e: &Error) -> Kind {
    match e {
        Error::Dsl(e) => dsl_kind(e),
        // What the caller gave: a program or task file, its contents, a setting.
        Error::Parse(_)
        | Error::Task(_)
        | Error::Solvers(_)
        | Error::Group(_)
        | Error::Merge(_)
        | Error::Text(_)
        | Error::Plan(_)
        | Error::Gen(_)
        | Error::Golden(_)
        | Error::Setup(_) => Kind::Input,
        // A device that fails or is missing: the backends run on the CPU then, so one that
        // reaches Python is a bug.
        Error::Device(_) | Error::Cuda(_) | Error::Nvrtc(_) => Kind::Internal,
    }
}

/// An error of the core as a Python exception: the class its kind stands for, and as message
/// the error with its causes on one line (`t.json: cannot read: No such file or directory`).
pub fn core_error(py: Python<'_>, e: impl Into<Error>) -> PyErr {
    let e = e.into();
    error(py, core_kind(&e), Chain(&e).to_string())
}

/// No worker pool for a call (a bad `threads`, threads that do not start) as
/// `arcbatch.InputError`, with its cause.
pub fn pool_error(py: Python<'_>, e: &PoolError) -> PyErr {
    error(py, Kind::Input, Chain(e).to_string())
}

/// A primitive's error as a Python exception; `context` names the call (`"objects"`), and the
/// message is then the CLI's: `objects: TypeError: expected a grid, got int 5`. An interrupted
/// computation raises what interrupted it: the exception a signal handler left pending (see
/// [`crate::interrupt::attached`]), else `KeyboardInterrupt`.
pub fn dsl_error(py: Python<'_>, context: &str, e: &DslError) -> PyErr {
    if *e == DslError::Interrupted {
        return PyErr::take(py).unwrap_or_else(|| PyKeyboardInterrupt::new_err(format!("{context}: interrupted")));
    }
    if let DslError::Foreign(raised) = e {
        if let Some(exception) = exception_of(py, raised) {
            return exception;
        }
    }
    error(py, dsl_kind(e), format!("{context}: {e}"))
}

/// Runs `f` with the GIL released (other Python threads go on meanwhile), turning a panic into
/// `arcbatch.InternalError`. For work outside the DSL (reading task files); DSL work runs
/// through [`crate::interrupt`], which can stop it.
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| caught(f))
        .map_err(|Panicked(message)| internal(py, &message))
}

/// `arcbatch.InternalError` for a caught panic.
pub fn internal(py: Python<'_>, message: &str) -> PyErr {
    error(py, Kind::Internal, format!("internal error (panic): {message}"))
}
