//! Python callables as DSL functions: a lambda, a `def`, a bound method, a `functools.partial`,
//! a builtin or any object with `__call__`, passed where the reference takes a function
//! (`sfilter(objs, lambda o: size(o) > 2)`), becomes a [`Foreign`] function of the core. The
//! core calls it once per call the reference makes, in the reference's order, with the same
//! arguments as Python objects; its result is read back as a DSL value, and what it raises
//! leaves the DSL call as it is (the same exception object).

use std::any::Any;
use std::sync::Arc;

use pyo3::exceptions::{PyStopIteration, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

use arcbatch::dsl::{DslError, DslResult, Foreign, ForeignFn, Func, Raised, Value};

use crate::convert::{to_py, to_value};
use crate::exceptions::{error, Kind};

/// A Python callable, as the core calls it.
pub struct Callback {
    object: Py<PyAny>,
    /// `__code__.co_argcount`, which the reference's `rbind` and `lbind` read.
    arg_count: Option<usize>,
    type_name: String,
    repr: String,
}

impl Callback {
    /// The DSL function value of a Python callable.
    pub fn value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
        let arg_count = match obj.getattr("__code__") {
            Ok(code) => code.getattr("co_argcount").and_then(|n| n.extract()).ok(),
            Err(_) => None,
        };
        let type_name = python_type_name(&obj.get_type());
        let repr = obj.repr().map_or_else(|_| format!("<{type_name}>"), |r| r.to_string());
        let callback = Callback {
            object: obj.clone().unbind(),
            arg_count,
            type_name,
            repr,
        };
        Ok(Value::func(Func::Foreign(ForeignFn::new(Arc::new(callback)))))
    }

    /// The Python object of a foreign function made here.
    pub fn object_of<'py>(py: Python<'py>, f: &ForeignFn) -> Option<Bound<'py, PyAny>> {
        let callback = f.get().as_any().downcast_ref::<Callback>()?;
        Some(callback.object.bind(py).clone())
    }
}

/// A type's name as CPython's messages spell it (its `tp_name`): with the module for a static
/// type of an extension (`functools.partial`), bare for a class defined in Python.
fn python_type_name(ty: &Bound<'_, PyType>) -> String {
    const HEAP_TYPE: u64 = 1 << 9;
    let flags: u64 = ty.getattr("__flags__").and_then(|f| f.extract()).unwrap_or(0);
    let name = if flags & HEAP_TYPE != 0 {
        ty.name()
    } else {
        ty.fully_qualified_name()
    };
    name.map_or_else(|_| "?".into(), |n| n.to_string())
}

impl Foreign for Callback {
    fn call(&self, args: &[Value]) -> DslResult<Value> {
        Python::attach(|py| {
            let called = || {
                let args = args.iter().map(|a| to_py(py, a)).collect::<PyResult<Vec<_>>>()?;
                let result = self.object.bind(py).call1(PyTuple::new(py, args)?)?;
                to_value(&result).map_err(|e| returned(py, &self.repr, &result, e))
            };
            called().map_err(|e| raised(py, e))
        })
    }

    fn arg_count(&self) -> Option<usize> {
        self.arg_count
    }

    fn type_name(&self) -> &str {
        &self.type_name
    }

    fn repr(&self) -> &str {
        &self.repr
    }

    fn id(&self) -> usize {
        self.object.as_ptr() as usize
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A Python exception as the core carries it.
fn raised(py: Python<'_>, e: PyErr) -> DslError {
    let class = e
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".into(), |n| n.to_string());
    let message = e.value(py).str().map_or_else(|_| String::new(), |s| s.to_string());
    DslError::Foreign(Arc::new(Raised {
        class,
        message,
        stop_iteration: e.is_instance_of::<PyStopIteration>(py),
        exception: Box::new(e),
    }))
}

/// A result the DSL cannot hold, as `arcbatch.DslTypeError` naming the callable (the
/// reference takes any object: a float key of `argmax`, a list).
fn returned(py: Python<'_>, repr: &str, result: &Bound<'_, PyAny>, e: PyErr) -> PyErr {
    if !e.is_instance_of::<PyTypeError>(py) {
        return e;
    }
    let type_name = python_type_name(&result.get_type());
    error(
        py,
        Kind::DslType,
        format!(
            "{repr} returned a {type_name}, which the DSL cannot hold: a callable passed to the DSL must \
             return int, bool, None, a tuple, a frozenset or a function"
        ),
    )
}

/// The exception a callback raised, to raise again.
pub fn exception_of(py: Python<'_>, raised: &Raised) -> Option<PyErr> {
    raised.exception.downcast_ref::<PyErr>().map(|e| e.clone_ref(py))
}
