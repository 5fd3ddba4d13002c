//! `arcbatch._arcbatch`: the native half of the Python package `arcbatch`.
//!
//! A thin layer over the Rust crate: conversions between Python objects and DSL values
//! ([`convert`]), the function-value class ([`function`]), the registry as Python sees it
//! ([`dsl`]), `run` ([`run`]), `solve` ([`solve`]), batched calls ([`batch`]), runs cut into
//! parts for other processes ([`parts`], for `arcbatch.ray`), interruption and time limits
//! ([`interrupt`]) and the exception hierarchy ([`exceptions`]). Argument handling and
//! documentation live in the Python package (`python/arcbatch/`); the core crate knows nothing
//! of Python.

mod batch;
mod cache;
mod callback;
mod convert;
mod dsl;
mod exceptions;
mod function;
mod intern;
mod interrupt;
mod jit;
mod parts;
mod pool;
mod run;
mod solve;
mod tuples;

use arcbatch::dsl::memory::Counting;
use pyo3::prelude::*;

/// Rust's allocations, counted for the memory limits of calls ([`interrupt::set_memory_limit`]).
#[global_allocator]
static ALLOCATOR: Counting<std::alloc::System> = Counting(std::alloc::System);

#[pymodule]
fn _arcbatch(m: &Bound<'_, PyModule>) -> PyResult<()> {
    ALLOCATOR.installed();
    // A panic is caught and raised as `arcbatch.InternalError` with its message; the default
    // hook would also print it, and capture a backtrace where RUST_BACKTRACE asks for one,
    // allocating on the error path (where memory may have run out) and taking a global lock.
    std::panic::set_hook(Box::new(|_| {}));
    interrupt::default_memory_limit();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    exceptions::register(m)?;
    m.add_class::<function::Function>()?;
    m.add_class::<jit::JitFunction>()?;
    m.add_function(wrap_pyfunction!(dsl::primitives, m)?)?;
    m.add_function(wrap_pyfunction!(dsl::constants, m)?)?;
    m.add_function(wrap_pyfunction!(dsl::signatures, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(run::batt, m)?)?;
    m.add_function(wrap_pyfunction!(run::profile, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(batch::map, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::set_time_limit, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::set_memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::allocated_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(parts::tasks_wire, m)?)?;
    m.add_function(wrap_pyfunction!(parts::library_files, m)?)?;
    m.add_class::<parts::BattParts>()?;
    m.add_class::<parts::SearchRounds>()?;
    Ok(())
}
