//! `arcbatch.Function`: a DSL function value in Python. Every primitive of `arcbatch.dsl` is
//! one, and so is what `compose`, `rbind`, `fork`, ... return; calling one converts the
//! arguments, runs the core and converts the result back (a primitive with a tuple form, called
//! on tuples, works on them directly: [`crate::tuples`]). Passing one to a primitive hands the
//! core value over as it is.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use arcbatch::dsl::{call, Func, Value};

use crate::convert::{to_py, to_value};
use crate::exceptions::{dsl_error, error, Kind};
use crate::interrupt::attached;
use crate::tuples::TupleOp;

/// How much of a closure its name and repr spell out.
const NAME_LENGTH: usize = 200;

/// A DSL function value (a primitive, or a closure built by `compose`, `rbind`, ...).
#[pyclass(frozen, name = "Function", module = "arcbatch")]
pub struct Function {
    /// Always a `Value::Func`.
    value: Value,
    /// A primitive's tuple form, which its calls on tuples take.
    tuple_op: Option<TupleOp>,
}

impl Function {
    /// Wraps a `Value::Func`.
    pub fn new(value: Value) -> Function {
        let tuple_op = match &value {
            Value::Func(f) => match **f {
                Func::Prim(id) => TupleOp::of(id),
                _ => None,
            },
            _ => unreachable!("a Function holds a function value"),
        };
        Function { value, tuple_op }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// How the function reads in messages: a primitive's name, or the closure spelled out
    /// (cut short when long).
    pub fn describe(&self) -> String {
        self.value.repr_cut(60)
    }
}

#[pymethods]
impl Function {
    /// Calls the function: `f(*args)` with DSL values; errors raise `arcbatch.DslError`s.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Err(error(
                py,
                Kind::DslType,
                format!("{}: DSL functions take positional arguments only", self.describe()),
            ));
        }
        if let Some(op) = self.tuple_op {
            if let Some(out) = op.apply(&args.iter().collect::<Vec<_>>()) {
                return Ok(out);
            }
        }
        let values = args.iter().map(|a| to_value(&a)).collect::<PyResult<Vec<_>>>()?;
        let result = attached(py, || call(&self.value, &values))?;
        to_py(py, &result.map_err(|e| dsl_error(py, &self.describe(), &e))?)
    }

    /// The number of arguments it takes.
    #[getter]
    fn arity(&self) -> usize {
        match &self.value {
            Value::Func(f) => f.arity(),
            _ => 0,
        }
    }

    /// A primitive's name, or the closure spelled out (`compose(size, first)`; cut short after
    /// 200 characters).
    #[getter]
    fn __name__(&self) -> String {
        self.value.repr_cut(NAME_LENGTH)
    }

    /// True for a primitive of the registry (not a closure).
    #[getter]
    fn is_primitive(&self) -> bool {
        matches!(&self.value, Value::Func(f) if matches!(f.as_ref(), Func::Prim(_)))
    }

    fn __repr__(&self) -> String {
        format!("<arcbatch.Function {}>", self.value.repr_cut(NAME_LENGTH))
    }

    /// Function values compare as the core compares them: by structure.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Function>().is_ok_and(|o| o.get().value == self.value)
    }

    /// Equal values spell out alike, so the start of the spelling is a consistent hash.
    fn __hash__(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.value.repr_cut(NAME_LENGTH).hash(&mut h);
        h.finish()
    }
}
