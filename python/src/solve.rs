//! `solve`: programs for tasks never seen, as the CLI's `arcbatch solve`, returning its JSON
//! report and the Kaggle submission. Tasks and the library are read as `run` reads them
//! ([`crate::run`]); the solving is the library's ([`arcbatch::solve`]), with the GIL released.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use arcbatch::device::select::{self, Kind as BackendKind};
use arcbatch::device::SetupError;
use arcbatch::pipeline::Programs;
use arcbatch::program::Program;
use arcbatch::solve::submission::submission_json;
use arcbatch::solve::{report_json, solve_all, Config};

use crate::exceptions::{core_error, error, pool_error, Kind};
use crate::interrupt::on_pool;
use crate::pool::pool;
use crate::run::{load_tasks, skipped, source};

/// A library solver's time limit per input, as the CLI's.
const LIBRARY_TIMEOUT: Duration = Duration::from_millis(50);

/// Finds programs for the tasks (`tasks_path`, `tasks_json` as for `run`, neither: the embedded
/// demo tasks) within `minutes` for all of them, trying the solvers of a library first
/// (`library_path`, a solver file or a folder of them, or `library_source`); `max_candidates`
/// caps the programs evaluated per task, `memory_mb` the enumerators' memory; `backend` is
/// where the enumeration's batched calls run (`cpu`: one call at a time, as the CLI's
/// `--backend`). Returns the JSON report, the Kaggle submission (JSON text) and the problems
/// met loading the tasks.
#[pyfunction]
#[pyo3(signature = (tasks_path=None, tasks_json=None, minutes=1.0, library_path=None, library_source=None, max_candidates=None, memory_mb=1024, threads=None, backend="cpu"))]
#[allow(clippy::too_many_arguments)]
pub fn solve(
    py: Python<'_>,
    tasks_path: Option<PathBuf>,
    tasks_json: Option<&str>,
    minutes: f64,
    library_path: Option<PathBuf>,
    library_source: Option<&str>,
    max_candidates: Option<u64>,
    memory_mb: u64,
    threads: Option<usize>,
    backend: &str,
) -> PyResult<(String, String, Vec<String>)> {
    let backend = match backend.parse().map_err(|e: SetupError| core_error(py, e))? {
        BackendKind::Cpu => None,
        kind => Some(select::backend(kind, None).map_err(|e| core_error(py, e))?),
    };
    let started = Instant::now();
    let until = Duration::try_from_secs_f64(minutes * 60.0)
        .ok()
        .and_then(|budget| started.checked_add(budget))
        .ok_or_else(|| {
            error(
                py,
                Kind::Input,
                format!("minutes must be a finite number of at least 0, got {minutes}"),
            )
        })?;
    let set = load_tasks(py, tasks_path, tasks_json)?;
    let library: Vec<Program> = match (&library_path, library_source) {
        (None, None) => Vec::new(),
        _ => Programs::read(&source(py, library_path, library_source, "library")?)
            .and_then(Programs::into_solvers)
            .map_err(|e| core_error(py, e))?,
    };
    let config = Config {
        until,
        max_evaluations: max_candidates,
        memory_bytes: usize::try_from(memory_mb).unwrap_or(usize::MAX).saturating_mul(1 << 20),
        library_timeout: LIBRARY_TIMEOUT,
    };
    let pool = pool(threads).map_err(|e| pool_error(py, &e))?;
    let solutions = on_pool(py, &pool, || {
        solve_all(&set.tasks, &library, &config, backend.as_deref(), &|_| {})
    })?;
    let report = report_json(&solutions, started.elapsed().as_secs_f64());
    let (submission, _placeholders) = submission_json(&set.tasks, &solutions);
    Ok((report.to_string(), submission.to_string(), skipped(&set)))
}
