//! The registry seen from Python: every primitive as a [`Function`], every constant as its
//! Python value, and the primitives' signatures (for the generated `dsl.pyi` stub).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use arcbatch::dsl::constants::CONSTANTS;
use arcbatch::dsl::{registry, Value};

use crate::convert::to_py;
use crate::function::Function;

/// `{name: Function}` for every primitive, in registry order.
#[pyfunction]
pub fn primitives(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for id in registry().ids() {
        out.set_item(id.spec().name, Function::new(Value::prim(id)))?;
    }
    Ok(out)
}

/// `{name: value}` for every constant (`ZERO`, `DOWN`, `T`, ..., and `R0`..`R7`).
#[pyfunction]
pub fn constants(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, c) in CONSTANTS {
        out.set_item(*name, to_py(py, &c.value())?)?;
    }
    Ok(out)
}

/// `[(name, [parameter types], result type, doc)]` for every primitive, with the reference's
/// type names (`Grid`, `Objects`, ...).
#[pyfunction]
pub fn signatures() -> Vec<(&'static str, Vec<String>, String, &'static str)> {
    registry()
        .specs
        .iter()
        .map(|s| {
            let params = s.params.iter().map(|t| format!("{t:?}")).collect();
            (s.name, params, format!("{:?}", s.ret), s.doc)
        })
        .collect()
}
