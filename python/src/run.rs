//! `run`, `batt` and `profile`: solver files on ARC tasks, as the CLI's `arcbatch run`,
//! `arcbatch batt` and `arcbatch profile`, returning their JSON reports. Reading, planning and
//! the engine are the library's pipeline ([`arcbatch::pipeline`]), as the CLI's; this module
//! adds the Python forms of input (source text, task JSON) and releases the GIL.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pyo3::prelude::*;

use arcbatch::batt::{Config, Plan, Report};
use arcbatch::device::select::Kind as BackendKind;
use arcbatch::device::SetupError;
use arcbatch::pipeline::{read_tasks, Engine, Loaded, Programs, Source};
use arcbatch::program::Program;
use arcbatch::run::{run_solvers, submission_json};
use arcbatch::tasks::{self, TaskSet};
use arcbatch::tools::profile::{dynamic_json, solver_json};
use arcbatch::Chain;

use crate::exceptions::{core_error, detached, error, pool_error, Kind};
use crate::interrupt::on_pool;
use crate::pool::pool;

/// A program file given as `path` or as source text (named `<what>` in messages).
pub fn source(py: Python<'_>, path: Option<PathBuf>, text: Option<&str>, what: &str) -> PyResult<Source> {
    match (path, text) {
        (Some(path), None) => Ok(Source::File(path)),
        (None, Some(text)) => Ok(Source::Text {
            name: format!("<{what}>"),
            text: text.to_string(),
        }),
        _ => Err(error(
            py,
            Kind::Input,
            format!("give exactly one of {what}_path and {what}_source"),
        )),
    }
}

/// Solvers from a file, a folder of them or source text, as the CLI reads them
/// ([`Programs::read`]).
fn load_programs(py: Python<'_>, path: Option<PathBuf>, text: Option<&str>) -> PyResult<Programs> {
    Programs::read(&source(py, path, text, "solvers")?).map_err(|e| core_error(py, e))
}

/// Differ programs from a file or source text; none when neither is given.
fn load_differs(py: Python<'_>, path: Option<PathBuf>, text: Option<&str>) -> PyResult<Vec<Program>> {
    match (&path, text) {
        (None, None) => Ok(Vec::new()),
        _ => source(py, path, text, "differs")?
            .differs()
            .map_err(|e| core_error(py, e)),
    }
}

/// Tasks from a path (any layout the CLI reads) or the text of one task file (named `<tasks>`
/// in messages); neither stands for the embedded demo tasks, as the CLI without `--tasks`.
pub fn load_tasks(py: Python<'_>, path: Option<PathBuf>, json: Option<&str>) -> PyResult<TaskSet> {
    match (path, json) {
        (path, None) => detached(py, || read_tasks(path.as_deref()))?,
        (None, Some(text)) => tasks::from_text(Path::new("<tasks>"), text),
        (Some(_), Some(_)) => {
            return Err(error(
                py,
                Kind::Input,
                "give at most one of tasks_path and tasks_json".into(),
            ))
        }
    }
    .map_err(|e| core_error(py, e))
}

/// Runs each `solve_<id>` of a solver file (`solvers_path`) or source (`solvers_source`) on
/// task `<id>`. Tasks come from `tasks_path` (any layout the CLI reads) or `tasks_json` (the
/// text of one such file). Returns the JSON report, the Kaggle submission (JSON text) and the
/// problems met loading the tasks (those tasks are skipped, as the CLI skips them).
#[pyfunction]
#[pyo3(signature = (solvers_path=None, solvers_source=None, tasks_path=None, tasks_json=None, timeout_ms=2000, threads=None))]
pub fn run(
    py: Python<'_>,
    solvers_path: Option<PathBuf>,
    solvers_source: Option<&str>,
    tasks_path: Option<PathBuf>,
    tasks_json: Option<&str>,
    timeout_ms: u64,
    threads: Option<usize>,
) -> PyResult<(String, String, Vec<String>)> {
    let programs = load_programs(py, solvers_path, solvers_source)?
        .into_solvers()
        .map_err(|e| core_error(py, e))?;
    let set = load_tasks(py, tasks_path, tasks_json)?;
    let pool = pool(threads).map_err(|e| pool_error(py, &e))?;
    let limit = Some(Duration::from_millis(timeout_ms));
    let report = on_pool(py, &pool, || run_solvers(&programs, &set.tasks, limit, 1, &|| {}))?;
    let (submission, _placeholders) = submission_json(&report, &set.tasks);
    Ok((report.to_json().to_string(), submission.to_string(), skipped(&set)))
}

/// Merges the solvers into one program and evaluates it over every sample of the tasks at
/// once, as `arcbatch batt`: each `solve_<id>` on task `<id>`, or every solver on every task
/// with `cross`. Differ programs (`differs_path` or `differs_source`) score each candidate
/// output. `memory_mb` is the budget of the solvers' values, as `--memory`. Returns the JSON report and the problems met loading the tasks.
#[pyfunction]
#[pyo3(signature = (solvers_path=None, solvers_source=None, tasks_path=None, tasks_json=None, differs_path=None, differs_source=None, cross=false, no_merge=false, timeout_ms=2000, threads=None, backend="auto", memory_mb=512))]
#[allow(clippy::too_many_arguments)]
pub fn batt(
    py: Python<'_>,
    solvers_path: Option<PathBuf>,
    solvers_source: Option<&str>,
    tasks_path: Option<PathBuf>,
    tasks_json: Option<&str>,
    differs_path: Option<PathBuf>,
    differs_source: Option<&str>,
    cross: bool,
    no_merge: bool,
    timeout_ms: u64,
    threads: Option<usize>,
    backend: &str,
    memory_mb: u64,
) -> PyResult<(String, Vec<String>)> {
    let programs = load_programs(py, solvers_path, solvers_source)?;
    let differs = load_differs(py, differs_path, differs_source)?;
    let loaded = Loaded {
        programs,
        tasks: load_tasks(py, tasks_path, tasks_json)?,
    };
    let engine = Engine {
        memory: Some(memory_mb.saturating_mul(1 << 20)),
        ..engine(py, backend, timeout_ms)?
    };
    let plan = loaded
        .plan(&differs, Config { cross, no_merge })
        .map_err(|e| core_error(py, e))?;
    let (report, _) = run_plan(py, &engine.budget(plan), engine, threads)?;
    Ok((report.to_json().to_string(), skipped(&loaded.tasks)))
}

/// The engine of a batt run: the backend by name (`auto`, `cpu`, `gpu`, `emu`, as the command
/// line's `--backend`) and the time limit per step and sample.
fn engine(py: Python<'_>, backend: &str, timeout_ms: u64) -> PyResult<Engine> {
    let kind: BackendKind = backend.parse().map_err(|e: SetupError| core_error(py, e))?;
    Ok(Engine::new(kind, Duration::from_millis(timeout_ms)))
}

/// Evaluates a plan on the engine's backend, on `threads` worker threads with the GIL
/// released. Returns the report and the name of the backend it ran on.
pub fn run_plan(
    py: Python<'_>,
    plan: &Plan<'_>,
    engine: Engine,
    threads: Option<usize>,
) -> PyResult<(Report, &'static str)> {
    let pool = pool(threads).map_err(|e| pool_error(py, &e))?;
    on_pool(py, &pool, || {
        let backend = engine.backend()?;
        Ok((plan.run(backend.as_ref(), &|| {}), backend.name()))
    })?
    .map_err(|e: SetupError| core_error(py, e))
}

/// The problems met loading the tasks, as messages (those tasks are skipped).
pub fn skipped(set: &TaskSet) -> Vec<String> {
    set.errors.iter().map(|e| Chain(e).to_string()).collect()
}

/// The profile of a solver file, as `arcbatch profile`: with no tasks the static profile
/// (`{"counts": ..., "refs": ...}`), with tasks the dynamic one of a batt run (per primitive:
/// calls, lanes, seconds, share, backend). Returns the JSON and the problems met loading tasks.
#[pyfunction]
#[pyo3(signature = (solvers_path=None, solvers_source=None, tasks_path=None, tasks_json=None, cross=false, timeout_ms=2000, threads=None, backend="auto"))]
#[allow(clippy::too_many_arguments)]
pub fn profile(
    py: Python<'_>,
    solvers_path: Option<PathBuf>,
    solvers_source: Option<&str>,
    tasks_path: Option<PathBuf>,
    tasks_json: Option<&str>,
    cross: bool,
    timeout_ms: u64,
    threads: Option<usize>,
    backend: &str,
) -> PyResult<(String, Vec<String>)> {
    let programs = load_programs(py, solvers_path, solvers_source)?;
    if tasks_path.is_none() && tasks_json.is_none() {
        let profile = programs.static_profile().map_err(|e| core_error(py, e))?;
        return Ok((profile.to_json().to_string(), Vec::new()));
    }
    let loaded = Loaded {
        programs,
        tasks: load_tasks(py, tasks_path, tasks_json)?,
    };
    let engine = engine(py, backend, timeout_ms)?;
    let plan = loaded
        .plan(&[], Config { cross, no_merge: false })
        .map_err(|e| core_error(py, e))?;
    let (report, backend) = run_plan(py, &plan, engine, threads)?;
    let set = &loaded.tasks;
    let value = serde_json::json!({
        "backend": backend,
        "lanes": report.lanes,
        "seconds": report.seconds,
        "profile": dynamic_json(&report.profile, backend),
        "solvers": solver_json(&report.solvers),
    });
    Ok((value.to_string(), skipped(set)))
}
