//! `run`, `batt` and `profile`: solver files on ARC tasks, as the CLI's `arcbatch run`,
//! `arcbatch batt` and `arcbatch profile`, returning their JSON reports.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pyo3::prelude::*;

use arcbatch::batt::{Config, Plan, Report};
use arcbatch::device::{select, SetupError};
use arcbatch::program::{parse_file, Program};
use arcbatch::run::{load_solvers, run_solvers, submission_json};
use arcbatch::tasks::{self, TaskSet};
use arcbatch::tools::profile::{dynamic_json, static_profile};
use arcbatch::Chain;

use crate::exceptions::{core_error, detached, error, pool_error, Kind};
use crate::interrupt::on_pool;
use crate::pool::pool;

/// Programs from a file (`path`) or source text, named `name` in messages; `parse` parses and
/// validates them (solvers must take `(I)` or `(S, I, C)`).
fn load_programs<E: Into<arcbatch::Error>>(
    py: Python<'_>,
    path: Option<PathBuf>,
    source: Option<&str>,
    what: &str,
    parse: fn(&str, &str) -> Result<Vec<Program>, E>,
) -> PyResult<Vec<Program>> {
    let input_error = |message: String| error(py, Kind::Input, message);
    match (path, source) {
        (Some(path), None) => {
            let source = std::fs::read_to_string(&path).map_err(|e| input_error(format!("{}: {e}", path.display())))?;
            parse(&path.display().to_string(), &source)
        }
        (None, Some(source)) => parse(&format!("<{what}>"), source),
        _ => {
            return Err(input_error(format!(
                "give exactly one of {what}_path and {what}_source"
            )))
        }
    }
    .map_err(|e| core_error(py, e))
}

/// Tasks from a path (any layout the CLI reads) or the text of one task file (named `<tasks>`
/// in messages).
pub fn load_tasks(py: Python<'_>, path: Option<PathBuf>, json: Option<&str>) -> PyResult<TaskSet> {
    match (path, json) {
        (Some(path), None) => detached(py, || tasks::load(&path))?,
        (None, Some(text)) => tasks::from_text(Path::new("<tasks>"), text),
        _ => {
            return Err(error(
                py,
                Kind::Input,
                "give exactly one of tasks_path and tasks_json".into(),
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
    let programs = load_programs(py, solvers_path, solvers_source, "solvers", load_solvers)?;
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
/// output. Returns the JSON report and the problems met loading the tasks.
#[pyfunction]
#[pyo3(signature = (solvers_path=None, solvers_source=None, tasks_path=None, tasks_json=None, differs_path=None, differs_source=None, cross=false, no_merge=false, timeout_ms=2000, threads=None, backend="auto"))]
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
) -> PyResult<(String, Vec<String>)> {
    let programs = load_programs(py, solvers_path, solvers_source, "solvers", load_solvers)?;
    let differs = match (&differs_path, differs_source) {
        (None, None) => Vec::new(),
        _ => load_programs(py, differs_path, differs_source, "differs", parse_file)?,
    };
    let set = load_tasks(py, tasks_path, tasks_json)?;
    let report = run_plan(
        py,
        &programs,
        &differs,
        &set,
        Config { cross, no_merge },
        Engine {
            backend,
            timeout_ms,
            threads,
        },
    )?;
    Ok((report.0.to_json().to_string(), skipped(&set)))
}

/// Where and how a plan runs: the backend by name (`auto`, `cpu`, `gpu`, `emu`, as the
/// command line's `--backend`), the time limit per step and sample, the worker threads.
struct Engine<'a> {
    backend: &'a str,
    timeout_ms: u64,
    threads: Option<usize>,
}

/// Merges and evaluates programs on tasks, the GIL released. Returns the report and the name
/// of the backend it ran on.
fn run_plan(
    py: Python<'_>,
    programs: &[Program],
    differs: &[Program],
    set: &TaskSet,
    config: Config,
    engine: Engine<'_>,
) -> PyResult<(Report, &'static str)> {
    let kind: select::Kind = engine.backend.parse().map_err(|e: SetupError| core_error(py, e))?;
    let pool = pool(engine.threads).map_err(|e| pool_error(py, &e))?;
    let plan = Plan::new(programs, differs, &set.tasks, config).map_err(|e| core_error(py, e))?;
    on_pool(py, &pool, || {
        let backend = select::backend(kind, Some(Duration::from_millis(engine.timeout_ms)))?;
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
    let programs = load_programs(py, solvers_path, solvers_source, "solvers", load_solvers)?;
    if tasks_path.is_none() && tasks_json.is_none() {
        return Ok((static_profile(&programs).to_json().to_string(), Vec::new()));
    }
    let set = load_tasks(py, tasks_path, tasks_json)?;
    let (report, backend) = run_plan(
        py,
        &programs,
        &[],
        &set,
        Config { cross, no_merge: false },
        Engine {
            backend,
            timeout_ms,
            threads,
        },
    )?;
    let value = serde_json::json!({
        "backend": backend,
        "lanes": report.lanes,
        "seconds": report.seconds,
        "profile": dynamic_json(&report.profile, backend),
    });
    Ok((value.to_string(), skipped(&set)))
}
