//! Runs cut into parts for other processes (`arcbatch.ray`): the work travels as plain text
//! (task lists, solver sources, results as JSON), each process evaluates its part with the
//! core's own code, and the parts join into exactly what one process computes.
//!
//! - [`tasks_wire`] and [`library_files`]: tasks and a library loaded here, as text to ship.
//! - [`BattParts`]: `batt` over a range of its solvers and of its tasks ([`Plan::part`]); the
//!   matches come back with their places in the whole report.
//! - [`SearchRounds`]: the rounds of `arcbatch search`: a round's programs generated from the
//!   library and the round's seed, a run of them evaluated under the search's budgets, and the
//!   parts joined ([`Evaluated::join`]) and harvested ([`Harvest::round`]) as the CLI does.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value as Json};

use arcbatch::batt::staged::Staged;
use arcbatch::batt::{Config, Plan};
use arcbatch::device::select::Kind as BackendKind;
use arcbatch::device::SetupError;
use arcbatch::gen::search::{evaluate, round_label, round_plan, round_seed, Budgets, Evaluated, Harvest};
use arcbatch::gen::{self, generate, library_files as files_of, parse_library, Generated, Options};
use arcbatch::pipeline::{Engine, Loaded, Programs, Source};
use arcbatch::program::Program;
use arcbatch::tasks::{self, Task, TaskSet};

use arcbatch::Chain;

use crate::exceptions::{core_error, error, pool_error, Kind};
use crate::interrupt::on_pool;
use crate::pool::pool;
use crate::run::{load_tasks, run_plan, skipped};

/// `InputError` with `message`.
fn input(py: Python<'_>, message: String) -> PyErr {
    error(py, Kind::Input, message)
}

/// Tasks from a path (any layout the CLI reads), the text of one task file or neither (the
/// embedded demo tasks), as the wire text [`tasks::to_list`] writes; with the problems met
/// loading them.
#[pyfunction]
#[pyo3(signature = (tasks_path=None, tasks_json=None))]
pub fn tasks_wire(
    py: Python<'_>,
    tasks_path: Option<PathBuf>,
    tasks_json: Option<&str>,
) -> PyResult<(String, Vec<String>)> {
    let set = load_tasks(py, tasks_path, tasks_json)?;
    Ok((tasks::to_list(&set.tasks).to_string(), skipped(&set)))
}

/// The files of a library (a solver file, or the `*.py` files under a folder) as (name,
/// source) pairs, as `arcbatch search --library` reads them.
#[pyfunction]
pub fn library_files(py: Python<'_>, path: PathBuf) -> PyResult<Vec<(String, String)>> {
    files_of(&path).map_err(|e| core_error(py, e))
}

/// Tasks from [`tasks_wire`]'s text.
fn wire_tasks(py: Python<'_>, text: &str) -> PyResult<Vec<Task>> {
    let json: Json = serde_json::from_str(text).map_err(|e| input(py, format!("task list: malformed JSON: {e}")))?;
    tasks::from_list(&json).map_err(|e| core_error(py, e))
}

/// `arcbatch.batt`'s run, evaluated part by part: solvers, differs and tasks parsed once, and
/// any range of the solvers on any range of the tasks evaluated on demand.
#[pyclass(frozen, module = "arcbatch")]
pub struct BattParts {
    loaded: Loaded,
    differs: Vec<Program>,
    config: Config,
    backend: BackendKind,
}

impl BattParts {
    fn plan(&self, py: Python<'_>) -> PyResult<Plan<'_>> {
        self.loaded
            .plan(&self.differs, self.config)
            .map_err(|e| core_error(py, e))
    }
}

#[pymethods]
impl BattParts {
    /// `solvers` (a solver or batt text file) and `differs` as (name, source) pairs, `tasks`
    /// as [`tasks_wire`]'s text; `backend` where the parts run, as `arcbatch.batt`'s.
    #[new]
    #[pyo3(signature = (solvers, tasks, differs=None, cross=false, backend="auto"))]
    fn new(
        py: Python<'_>,
        solvers: (String, String),
        tasks: &str,
        differs: Option<(String, String)>,
        cross: bool,
        backend: &str,
    ) -> PyResult<Self> {
        let text = |(name, text)| Source::Text { name, text };
        let differs = match differs {
            Some(pair) => text(pair).differs().map_err(|e| input(py, e.to_string()))?,
            None => Vec::new(),
        };
        let parts = BattParts {
            loaded: Loaded {
                programs: Programs::read(&text(solvers)).map_err(|e| core_error(py, e))?,
                tasks: TaskSet {
                    tasks: wire_tasks(py, tasks)?,
                    errors: Vec::new(),
                },
            },
            differs,
            config: Config { cross, no_merge: false },
            backend: backend.parse().map_err(|e: SetupError| core_error(py, e))?,
        };
        // Merging fails on a program batt cannot bind: said here, before any part runs.
        parts.plan(py)?;
        Ok(parts)
    }

    /// The whole run's sizes: `solvers` and `tasks` evaluated (the ranges the parts cut),
    /// `steps_total`, `steps_merged` and `lanes` (the report's).
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let plan = self.plan(py)?;
        let out = PyDict::new(py);
        out.set_item("solvers", plan.solvers())?;
        out.set_item("tasks", plan.tasks())?;
        out.set_item("steps_total", plan.merged.steps_total)?;
        out.set_item("steps_merged", plan.merged.steps_merged())?;
        out.set_item("lanes", plan.lanes())?;
        Ok(out)
    }

    /// Solvers `solvers` (a range of the plan's) on tasks `tasks`: each match's place in the
    /// whole report, as (task, solver) indices, and the matches as the report's JSON list.
    #[pyo3(signature = (solvers, tasks, timeout_ms=2000, threads=None))]
    fn run(
        &self,
        py: Python<'_>,
        solvers: (usize, usize),
        tasks: (usize, usize),
        timeout_ms: u64,
        threads: Option<usize>,
    ) -> PyResult<(Vec<(u32, usize)>, String)> {
        let engine = Engine::new(self.backend, Duration::from_millis(timeout_ms));
        let plan = self.plan(py)?;
        let first = solvers.0.min(plan.solvers());
        let part = plan.part(solvers.0..solvers.1, tasks.0..tasks.1);
        let (report, _) = run_plan(py, &part, engine, threads)?;
        let keys = part.pairs().into_iter().map(|(t, k)| (t, first + k)).collect();
        Ok((keys, report.to_json()["matches"].to_string()))
    }
}

/// The budgets of a search, as `arcbatch search`'s flags set them.
struct SearchBudgets {
    timeout_ms: u64,
    max_size: usize,
    memory_mb: u64,
    early_exit: bool,
}

/// A round's programs, kept between the calls that need them.
struct GeneratedRound {
    round: usize,
    generated: Generated,
    seconds: f64,
}

/// The rounds of `arcbatch search --library L --tasks T --seed ...`: each round's programs
/// generated here, evaluated in parts (on any process holding the same library and tasks),
/// and harvested into a folder as the command does.
#[pyclass(frozen, module = "arcbatch")]
pub struct SearchRounds {
    library: Vec<Program>,
    tasks: Vec<Task>,
    options: Options,
    budgets: SearchBudgets,
    /// The round generated last.
    round: Mutex<Option<Arc<GeneratedRound>>>,
    harvest: Mutex<Option<Harvest>>,
}

/// A lock, whatever a panicking holder left.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SearchRounds {
    /// Round `round`'s programs, generated (the GIL released) unless they were last time.
    fn generated(&self, py: Python<'_>, round: usize) -> PyResult<Arc<GeneratedRound>> {
        py.detach(|| -> Result<Arc<GeneratedRound>, gen::GenError> {
            let mut slot = lock(&self.round);
            match slot.as_ref() {
                Some(g) if g.round == round => Ok(g.clone()),
                _ => {
                    let started = Instant::now();
                    let options = Options {
                        seed: round_seed(self.options.seed, round),
                        ..self.options.clone()
                    };
                    let generated = generate(&self.library, &[], &options)?;
                    let g = Arc::new(GeneratedRound {
                        round,
                        generated,
                        seconds: started.elapsed().as_secs_f64(),
                    });
                    *slot = Some(g.clone());
                    Ok(g)
                }
            }
        })
        .map_err(|e| core_error(py, e))
    }
}

#[pymethods]
impl SearchRounds {
    /// `library` as [`library_files`] gives it (`name` names it in messages), `tasks` as
    /// [`tasks_wire`]'s text; the generation options and budgets of `arcbatch search`.
    #[new]
    #[pyo3(signature = (library, name, tasks, count=32, seed=0, mutate=0.0, mutants=1, rewrite=true, timeout_ms=5, max_size=50_000, memory_mb=512, early_exit=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        library: Vec<(String, String)>,
        name: PathBuf,
        tasks: &str,
        count: usize,
        seed: u64,
        mutate: f64,
        mutants: usize,
        rewrite: bool,
        timeout_ms: u64,
        max_size: usize,
        memory_mb: u64,
        early_exit: bool,
    ) -> PyResult<Self> {
        let options = Options {
            count,
            seed,
            mutate,
            mutants,
            rewrite,
        };
        gen::check(&options).map_err(|e| core_error(py, e))?;
        if memory_mb == 0 {
            return Err(input(py, "memory_mb must be at least 1".into()));
        }
        let tasks = wire_tasks(py, tasks)?;
        if tasks.is_empty() {
            return Err(input(py, "no tasks to search on".into()));
        }
        Ok(SearchRounds {
            library: parse_library(&name, &library).map_err(|e| core_error(py, e))?,
            tasks,
            options,
            budgets: SearchBudgets {
                timeout_ms,
                max_size,
                memory_mb,
                early_exit,
            },
            round: Mutex::new(None),
            harvest: Mutex::new(None),
        })
    }

    /// Solvers in the library.
    #[getter]
    fn library_size(&self) -> usize {
        self.library.len()
    }

    /// Tasks searched on.
    #[getter]
    fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// The label of round `round` (from 0), as the harvested files' notes give it.
    fn label(&self, round: usize) -> String {
        round_label(self.options.seed, round)
    }

    /// The number of programs of round `round` (from 0).
    fn programs(&self, py: Python<'_>, round: usize) -> PyResult<usize> {
        Ok(self.generated(py, round)?.generated.candidates.len())
    }

    /// Evaluates programs `programs` (a range) of round `round` on every task under the
    /// search's budgets, on `threads` threads; the result as JSON text for [`harvest`].
    #[pyo3(signature = (round, programs, threads=None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        round: usize,
        programs: (usize, usize),
        threads: Option<usize>,
    ) -> PyResult<String> {
        let pool = pool(threads).map_err(|e| pool_error(py, &e))?;
        let merged = self.generated(py, round)?.generated.merged.clone();
        let plan = round_plan(merged, &self.tasks)
            .map_err(|e| core_error(py, e))?
            .part(programs.0..programs.1, 0..self.tasks.len());
        let b = &self.budgets;
        let engine = Engine {
            max_size: Some(b.max_size),
            ..Engine::new(BackendKind::Cpu, Duration::from_millis(b.timeout_ms))
        };
        let backend = engine.backend().map_err(|e| core_error(py, e))?;
        let budgets = Budgets::search(b.early_exit, b.max_size, b.memory_mb, &|| false);
        let evaluated = on_pool(py, &pool, || evaluate(&plan, backend.as_ref(), &budgets))?;
        Ok(evaluated_json(&evaluated).to_string())
    }

    /// Opens the folder harvested solvers go to (created if missing); the solutions already
    /// there (which are not harvested again) and the tasks they solve.
    fn open(&self, py: Python<'_>, out: PathBuf) -> PyResult<(usize, usize)> {
        let harvest = Harvest::open(&out).map_err(|e| core_error(py, e))?;
        let known = (harvest.solutions(), harvest.tasks());
        *lock(&self.harvest) = Some(harvest);
        Ok(known)
    }

    /// Joins the results of [`evaluate`] on round `round`'s programs, in order (each range
    /// following the last, together every program), and harvests them into the folder
    /// [`open`] opened, as `arcbatch search` does. Returns the round's counts.
    fn harvest<'py>(&self, py: Python<'py>, round: usize, parts: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
        let parts = parts
            .iter()
            .map(|text| json_evaluated(text).map_err(|e| input(py, format!("a part's result: {}", Chain(&e)))))
            .collect::<PyResult<Vec<_>>>()?;
        let evaluated = Evaluated::join(parts);
        let g = self.generated(py, round)?;
        let mut harvest = lock(&self.harvest);
        let Some(harvest) = harvest.as_mut() else {
            return Err(input(py, "open the output folder before harvesting".into()));
        };
        let label = round_label(self.options.seed, round);
        let r = harvest
            .round(&g.generated.candidates, &evaluated, &self.tasks, &label)
            .map_err(|e| core_error(py, e))?;
        let out = PyDict::new(py);
        out.set_item("programs", r.programs)?;
        out.set_item("steps", g.generated.merged.steps_merged())?;
        out.set_item("gen_seconds", g.seconds)?;
        out.set_item("eval_seconds", r.eval_seconds)?;
        out.set_item("evaluated", r.evaluated)?;
        out.set_item("program_samples", r.program_samples)?;
        out.set_item("alive", r.alive)?;
        out.set_item("chunks", r.chunks)?;
        out.set_item("timed_out", r.timed_out)?;
        out.set_item("too_large", r.too_large)?;
        out.set_item("equivalent", r.equivalent)?;
        out.set_item("solving", r.solving)?;
        out.set_item("novel", r.novel)?;
        let new: Vec<(String, String)> = r
            .new
            .iter()
            .map(|(t, p)| (t.clone(), p.display().to_string()))
            .collect();
        out.set_item("new", new)?;
        out.set_item("solutions", harvest.solutions())?;
        out.set_item("tasks", harvest.tasks())?;
        Ok(out)
    }
}

/// An evaluation as JSON text's value (read back by [`json_evaluated`]).
fn evaluated_json(e: &Evaluated) -> Json {
    let s = &e.staged;
    json!({
        "solved": s.solved,
        "solvers": s.solvers,
        "program_samples": s.program_samples,
        "alive": s.alive,
        "timed_out": s.timed_out,
        "too_large": s.too_large,
        "chunks": s.chunks,
        "stopped": s.stopped,
        "seconds": s.seconds,
        "signatures": e.signatures,
    })
}

/// [`evaluated_json`]'s text, read back.
fn json_evaluated(text: &str) -> Result<Evaluated, PartError> {
    let json: Json = serde_json::from_str(text)?;
    let field = |name: &'static str| json.get(name).ok_or(PartError::Missing(name));
    let count = |name: &'static str| field(name)?.as_u64().ok_or(PartError::Kind(name, "a count"));
    let pairs = field("solved")?.as_array().ok_or(PartError::Kind("solved", "a list"))?;
    let solved = pairs
        .iter()
        .map(|p| match p.as_array().map(Vec::as_slice) {
            Some([k, t]) => k.as_u64().zip(t.as_u64()).map(|(k, t)| (k as usize, t as usize)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or(PartError::Kind("solved", "a list of (program, task) pairs"))?;
    let signatures = field("signatures")?
        .as_array()
        .and_then(|s| s.iter().map(Json::as_u64).collect::<Option<Vec<_>>>())
        .ok_or(PartError::Kind("signatures", "a list of counts"))?;
    Ok(Evaluated {
        staged: Staged {
            solved,
            solvers: count("solvers")? as usize,
            program_samples: count("program_samples")?,
            alive: count("alive")? as usize,
            timed_out: count("timed_out")? as usize,
            too_large: count("too_large")? as usize,
            chunks: count("chunks")? as usize,
            stopped: field("stopped")?
                .as_bool()
                .ok_or(PartError::Kind("stopped", "a bool"))?,
            seconds: field("seconds")?
                .as_f64()
                .ok_or(PartError::Kind("seconds", "a number"))?,
        },
        signatures,
    })
}

/// Why a part's result ([`evaluated_json`]'s text) does not read back.
#[derive(Debug, thiserror::Error)]
enum PartError {
    #[error("malformed JSON")]
    Json(#[from] serde_json::Error),
    #[error("missing field {0:?}")]
    Missing(&'static str),
    #[error("field {0:?} is not {1}")]
    Kind(&'static str, &'static str),
}
