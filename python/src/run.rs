//! `run`: solver files on ARC tasks, as the CLI's `arcbatch run`, returning its JSON report.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pyo3::prelude::*;

use arcbatch::run::{load_solvers, run_solvers, submission_json};
use arcbatch::tasks::{self, TaskSet};

use crate::exceptions::{detached, error, Kind};
use crate::pool::pool;

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
    let input_error = |message: String| error(py, Kind::Input, message);
    let programs = match (solvers_path, solvers_source) {
        (Some(path), None) => {
            let source = std::fs::read_to_string(&path).map_err(|e| input_error(format!("{}: {e}", path.display())))?;
            load_solvers(&path.display().to_string(), &source)
        }
        (None, Some(source)) => load_solvers("<solvers>", source),
        _ => {
            return Err(input_error(
                "give exactly one of solvers_path and solvers_source".into(),
            ))
        }
    }
    .map_err(input_error)?;
    let set = match (tasks_path, tasks_json) {
        (Some(path), None) => detached(py, || tasks::load(&path))?.map_err(|e| input_error(e.to_string()))?,
        (None, Some(text)) => tasks_from_text(text).map_err(input_error)?,
        _ => return Err(input_error("give exactly one of tasks_path and tasks_json".into())),
    };
    let pool = pool(threads).map_err(input_error)?;
    let limit = Some(Duration::from_millis(timeout_ms));
    let report = detached(py, || {
        pool.install(|| run_solvers(&programs, &set.tasks, limit, &|| {}))
    })?;
    let skipped = set.errors.iter().map(|e| e.to_string()).collect();
    let (submission, _placeholders) = submission_json(&report, &set.tasks);
    Ok((report.to_json().to_string(), submission.to_string(), skipped))
}

/// Tasks from the text of a task file, named `<tasks>` in messages.
fn tasks_from_text(text: &str) -> Result<TaskSet, String> {
    let name = Path::new("<tasks>");
    let json = serde_json::from_str(text).map_err(|e| format!("{}: malformed JSON: {e}", name.display()))?;
    tasks::from_json(name, &json).map_err(|e| e.to_string())
}
