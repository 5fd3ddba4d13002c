//! Batched calls: one DSL function over many values (grids, usually) in parallel, with the GIL
//! released while the core works.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use rayon::prelude::*;

use arcbatch::dsl::func::{guarded, holds_foreign, Panicked};
use arcbatch::dsl::{call, DslError, Value};

use crate::convert::{to_py, to_value};
use crate::exceptions::{dsl_error, error, internal, pool_error, Kind};
use crate::function::Function;
use crate::interrupt::{attached, on_pool};
use crate::pool::{chunk_len, pool};

/// Why one item gave no value.
enum Failure {
    Raised(DslError),
    Panic(String),
}

/// `[function(item, *args) for item in items]`, in parallel. With `raise_errors`, the first
/// failing item raises its exception; otherwise the exception object takes the item's place.
/// `timeout_ms` bounds each item.
#[pyfunction]
#[pyo3(signature = (function, items, args, raise_errors=true, threads=None, timeout_ms=None))]
pub fn map<'py>(
    py: Python<'py>,
    function: &Bound<'py, PyAny>,
    items: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    raise_errors: bool,
    threads: Option<usize>,
    timeout_ms: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let f = function.cast::<Function>().map_err(|_| {
        error(
            py,
            Kind::DslType,
            "batch functions take a DSL function value (e.g. arcbatch.dsl.objects) first".into(),
        )
    })?;
    let name = f.get().describe();
    let f = f.get().value().clone();
    let items = items
        .try_iter()
        .map_err(|_| error(py, Kind::DslType, "batch functions take an iterable of items".into()))?
        .map(|x| to_value(&x?))
        .collect::<PyResult<Vec<_>>>()?;
    let args = args.iter().map(|a| to_value(&a)).collect::<PyResult<Vec<_>>>()?;
    let pool = pool(threads).map_err(|e| pool_error(py, &e))?;
    let limit = timeout_ms.map(Duration::from_millis);
    let one = |item: &Value| -> Result<Value, Failure> {
        let mut full = Vec::with_capacity(1 + args.len());
        full.push(item.clone());
        full.extend(args.iter().cloned());
        match guarded(limit, || call(&f, &full)) {
            Ok(result) => result.map_err(Failure::Raised),
            Err(Panicked(message)) => Err(Failure::Panic(message)),
        }
    };
    let results: Vec<Result<Value, Failure>> = if [std::slice::from_ref(&f), &items[..], &args[..]]
        .iter()
        .any(|v| holds_foreign(v))
    {
        // A Python callable runs under the GIL anyway: on this thread, where a signal reaches
        // it, rather than on workers that would take turns at the GIL.
        match attached(py, || Ok(items.iter().map(one).collect()))? {
            Ok(results) => results,
            Err(e) => return Err(dsl_error(py, &name, &e)),
        }
    } else {
        on_pool(py, &pool, || {
            let chunk = chunk_len(items.len(), rayon::current_num_threads());
            items
                .par_chunks(chunk)
                .flat_map_iter(|chunk| chunk.iter().map(one))
                .collect()
        })?
    };
    let out = PyList::empty(py);
    for (k, result) in results.iter().enumerate() {
        let failure = match result {
            Ok(v) => {
                out.append(to_py(py, v)?)?;
                continue;
            }
            Err(Failure::Raised(e)) => dsl_error(py, &format!("{name} (item {k})"), e),
            Err(Failure::Panic(message)) => internal(py, message),
        };
        if raise_errors {
            return Err(failure);
        }
        out.append(failure.into_value(py))?;
    }
    Ok(out)
}
