//! Running solver programs on their tasks: each `solve_<id>` on every train and test pair of
//! task `<id>`, in parallel over tasks, each program isolated (time limit, panics caught).
//! Which solver runs on which task is an `Assignment`, which batt's plans share.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde_json::{json, Value as Json};
use smallvec::SmallVec;

use crate::dsl::shared::{confined, Shared};
use crate::dsl::value::{as_values, borrowed};
use crate::dsl::{Grid, GridRef, Value};
use crate::program::{parse_file, run_guarded_keeping, Invariants, ParseError, Program, RunError};
use crate::tasks::{grid_json, Example, Input, Task};

/// Why a solver file cannot be run: it cannot be read, it does not parse, or a program takes
/// parameters that no task binds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    /// The file cannot be read (the operating system's words).
    #[error("{path}: {message}")]
    Read { path: String, message: String },
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("{file}:{line}: {name} takes ({}); supported are (I) and (S, I, C)", params.join(", "))]
    Params {
        file: String,
        line: u32,
        name: String,
        params: Vec<String>,
    },
}

/// The parameter lists a program may have: the reference's `(I)` and the search dialect's
/// `(S, I, C)`.
pub fn check_params(program: &Program) -> Result<(), SolverError> {
    match program.params.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["I"] | ["S", "I", "C"] => Ok(()),
        _ => Err(SolverError::Params {
            file: program.file.clone(),
            line: program.line,
            name: program.name.clone(),
            params: program.params.clone(),
        }),
    }
}

/// Parses a solver file and checks every program's parameters; the first problem is the error
/// (with file, line and column).
pub fn load_solvers(name: &str, source: &str) -> Result<Vec<Program>, SolverError> {
    let programs = parse_file(name, source)?;
    for p in &programs {
        check_params(p)?;
    }
    Ok(programs)
}

/// The arguments of a program for one example of a task: `I` the input, `S` the training
/// pairs, `C` the expected output (or `None`). On the stack (a program takes at most three):
/// they are built for every sample.
pub fn arguments(program: &Program, task_pairs: &Value, example: &Example) -> SmallVec<[Value; 3]> {
    program
        .params
        .iter()
        .map(|p| Input::of(p).unwrap_or(Input::I).value(task_pairs, example))
        .collect()
}

/// [`arguments`] as copies that take no reference ([`borrowed`]) of `task_pairs` and of an
/// example's `input` and `expected` values ([`Example::borrowed_values`]), for the runs of
/// [`run_on_task`].
///
/// # Safety
///
/// The copies may be read only while `task_pairs`, `input` and `expected` are alive and
/// unchanged.
unsafe fn borrowed_arguments(
    program: &Program,
    task_pairs: &Value,
    input: &Value,
    expected: &Value,
) -> SmallVec<[ManuallyDrop<Value>; 3]> {
    let bound = |p: &String| Input::of(p).unwrap_or(Input::I).pick(task_pairs, input, expected);
    // SAFETY: the caller reads the copies only while the values they copy live.
    program.params.iter().map(|p| unsafe { borrowed(bound(p)) }).collect()
}

/// One solver's outcome on its task.
#[derive(Clone, Debug)]
pub struct TaskResult {
    pub task: String,
    pub solver: String,
    pub pairs: usize,
    pub correct: usize,
    /// The first error met, if any pair raised, timed out or panicked.
    pub error: Option<RunError>,
    /// The outputs on the test inputs (`None` where the program failed or gave no grid).
    pub test_outputs: Vec<Option<Shared<Grid>>>,
    /// Time taken on all the pairs (the best run's, with `repeat`).
    pub nanos: u64,
}

impl TaskResult {
    pub fn solved(&self) -> bool {
        self.pairs > 0 && self.correct == self.pairs
    }
}

/// Everything a run found.
#[derive(Debug, Default)]
pub struct RunReport {
    /// One per task that has a solver, sorted by task id.
    pub results: Vec<TaskResult>,
    /// Solvers whose task is not among the tasks.
    pub solvers_without_task: Vec<String>,
    /// Tasks that have no solver.
    pub tasks_without_solver: Vec<String>,
    /// Solvers defined more than once for one task (the first definition is used).
    pub duplicate_solvers: Vec<String>,
    pub seconds: f64,
}

impl RunReport {
    /// The JSON report (`arcbatch run --json`, and what the Python module's `run` returns):
    /// totals, and per task whether it was solved, its pair counts, first error and time.
    pub fn to_json(&self) -> Json {
        let results: serde_json::Map<String, Json> = self
            .results
            .iter()
            .map(|r| {
                let entry = json!({
                    "solved": r.solved(),
                    "correct": r.correct,
                    "pairs": r.pairs,
                    "error": r.error.as_ref().map(|e| e.to_string()),
                    "micros": r.nanos / 1000,
                    "nanos": r.nanos,
                });
                (r.task.clone(), entry)
            })
            .collect();
        json!({
            "solved": self.results.iter().filter(|r| r.solved()).count(),
            "tasks": self.results.len(),
            "pairs": self.results.iter().map(|r| r.pairs).sum::<usize>(),
            "correct_pairs": self.results.iter().map(|r| r.correct).sum::<usize>(),
            "seconds": self.seconds,
            "results": results,
        })
    }
}

/// Kaggle's submission: for every test input of every task, two attempts. A task whose solver
/// is missing or fails gets its test input as a placeholder; those are returned too, as
/// `<task>[<k>]`.
pub fn submission_json(report: &RunReport, tasks: &[Task]) -> (Json, Vec<String>) {
    let by_task: BTreeMap<&str, &TaskResult> = report.results.iter().map(|r| (r.task.as_str(), r)).collect();
    let mut placeholders = Vec::new();
    let mut submission = serde_json::Map::new();
    for task in tasks {
        let outputs = by_task.get(task.id.as_str()).map(|r| &r.test_outputs);
        let attempts: Vec<Json> = task
            .test
            .iter()
            .enumerate()
            .map(|(k, ex)| {
                let grid = outputs.and_then(|o| o.get(k).cloned().flatten()).unwrap_or_else(|| {
                    placeholders.push(format!("{}[{k}]", task.id));
                    ex.input.clone()
                });
                json!({"attempt_1": grid_json(&grid), "attempt_2": grid_json(&grid)})
            })
            .collect();
        submission.insert(task.id.clone(), Json::Array(attempts));
    }
    (Json::Object(submission), placeholders)
}

/// A solver's score on one task, sample by sample: what `run`'s [`TaskResult`] and batt's
/// matches report. A sample with an expected output is a pair, correct where the output equals
/// it (in Python's terms: any tuple of rows with its cells); the first error of any sample is
/// kept.
pub(crate) struct Tally<E> {
    pub(crate) pairs: usize,
    pub(crate) correct: usize,
    pub(crate) error: Option<E>,
}

impl<E: Clone> Tally<E> {
    pub(crate) fn new() -> Tally<E> {
        Tally {
            pairs: 0,
            correct: 0,
            error: None,
        }
    }

    /// Counts one sample: its outcome (`None`: not evaluated) against its expected output
    /// (`Value::None`: it has none).
    pub(crate) fn add(&mut self, outcome: Option<Result<&Value, &E>>, expected: &Value) {
        // By its variant: `!=` compares a grid with `None` through `Ord`, on every sample.
        if !matches!(expected, Value::None) {
            self.pairs += 1;
            if matches!(outcome, Some(Ok(v)) if v == expected) {
                self.correct += 1;
            }
        }
        if let Some(Err(e)) = outcome {
            self.error.get_or_insert_with(|| e.clone());
        }
    }
}

/// Runs one program on every train and test pair of a task, the values it makes
/// [confined](crate::dsl::shared::confined) to this thread (where the process allows it): its
/// outputs are published before they leave.
pub fn run_on_task(program: &Program, task: &Task, limit: Option<Duration>) -> TaskResult {
    let start = Instant::now();
    let (tally, test_outputs) = confined(|| {
        // `S` only for the search dialect: building it copies every training grid.
        let reads_pairs = program.params.iter().any(|p| p == "S");
        let pairs_value = if reads_pairs {
            task.train_pairs_value()
        } else {
            Value::None
        };
        let mut tally = Tally::new();
        let mut test_outputs = Vec::new();
        let n_train = task.train.len();
        // What reads no input is computed on the first pair that reaches it, for all of them.
        let mut invariants = Invariants::new(program);
        for (k, example) in task.examples().enumerate() {
            // SAFETY: the copies are read in this iteration only, while `example` and
            // `pairs_value` live; nothing changes them.
            let (input, expected) = unsafe { example.borrowed_values() };
            let params = unsafe { borrowed_arguments(program, &pairs_value, &input, &expected) };
            let out = run_guarded_keeping(program, as_values(&params), limit, Some(&mut invariants));
            tally.add(Some(out.as_ref()), &expected);
            if k >= n_train {
                let grid = out
                    .as_ref()
                    .ok()
                    .and_then(|v| v.as_grid().ok().map(GridRef::into_shared));
                if let Some(grid) = &grid {
                    Shared::publish(grid);
                }
                test_outputs.push(grid);
            }
        }
        (tally, test_outputs)
    });
    // The time of the runs alone, as the reference's is timed: not the report's strings.
    let nanos = start.elapsed().as_nanos() as u64;
    TaskResult {
        task: task.id.clone(),
        solver: program.name.clone(),
        pairs: tally.pairs,
        correct: tally.correct,
        error: tally.error,
        test_outputs,
        nanos,
    }
}

/// Runs each `solve_<id>` on task `<id>` (the first of a task's solvers), in parallel over
/// tasks, the results in task id order; `tick` is called once per
/// task finished (for progress bars). With `repeat` above 1, each solver runs that many times
/// in a row on its task: the results are the first run's, the time the best run's (warm
/// timing, as a benchmark takes the best of several runs of the other side).
pub fn run_solvers(
    programs: &[Program],
    tasks: &[Task],
    limit: Option<Duration>,
    repeat: usize,
    tick: &(dyn Fn() + Sync),
) -> RunReport {
    let start = Instant::now();
    let a = Assignment::of_programs(programs, tasks, false);
    let mut report = RunReport {
        solvers_without_task: a.solvers_without_task,
        tasks_without_solver: a.tasks_without_solver,
        duplicate_solvers: a.duplicate_solvers,
        ..RunReport::default()
    };
    let jobs: Vec<(&Program, &Task)> = a.solvers.iter().map(|&k| &programs[k]).zip(a.chosen).collect();
    report.results = jobs
        .par_iter()
        .map(|(p, t)| {
            let mut r = run_on_task(p, t, limit);
            for _ in 1..repeat {
                r.nanos = r.nanos.min(run_on_task(p, t, limit).nanos);
            }
            tick();
            r
        })
        .collect();
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Which solvers run on which tasks: what `run` and `batt` (and so every front end) plan from.
pub(crate) struct Assignment<'t> {
    /// Indices of the solvers that run, in run order.
    pub(crate) solvers: Vec<usize>,
    pub(crate) names: Vec<String>,
    pub(crate) solver_tasks: Vec<Vec<u32>>,
    pub(crate) chosen: Vec<&'t Task>,
    pub(crate) solvers_without_task: Vec<String>,
    pub(crate) tasks_without_solver: Vec<String>,
    pub(crate) duplicate_solvers: Vec<String>,
}

impl<'t> Assignment<'t> {
    /// Assigns programs to tasks as [`new`](Self::new) does, `solve_<id>` (or a program named
    /// `<id>`) belonging to task `<id>`.
    pub(crate) fn of_programs(programs: &[Program], tasks: &'t [Task], cross: bool) -> Assignment<'t> {
        let keys: Vec<(&str, &str)> = programs
            .iter()
            .map(|p| (p.name.as_str(), p.task_id().unwrap_or(&p.name)))
            .collect();
        Assignment::new(&keys, tasks, cross)
    }

    /// Assigns solvers, given as (name, task id), to tasks: with `cross` every solver to every
    /// task (a solver's name made unique by `#2`, `#3`, ...); else each to its own task, the
    /// first solver of a task winning, the tasks in id order.
    pub(crate) fn new(keys: &[(&str, &str)], tasks: &'t [Task], cross: bool) -> Assignment<'t> {
        let mut a = Assignment {
            solvers: Vec::new(),
            names: Vec::new(),
            solver_tasks: Vec::new(),
            chosen: Vec::new(),
            solvers_without_task: Vec::new(),
            tasks_without_solver: Vec::new(),
            duplicate_solvers: Vec::new(),
        };
        if cross {
            a.chosen = tasks.iter().collect();
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for (k, &(name, _)) in keys.iter().enumerate() {
                let n = seen.entry(name).or_default();
                *n += 1;
                a.names.push(if *n == 1 {
                    name.to_string()
                } else {
                    format!("{name}#{n}")
                });
                a.solvers.push(k);
                a.solver_tasks.push((0..tasks.len() as u32).collect());
            }
            return a;
        }
        let by_id: HashMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
        let mut taken: HashSet<&str> = HashSet::new();
        let mut pairs: Vec<(&Task, usize)> = Vec::new();
        for (k, &(name, id)) in keys.iter().enumerate() {
            if !taken.insert(id) {
                a.duplicate_solvers.push(name.to_string());
                continue;
            }
            match by_id.get(id) {
                Some(t) => pairs.push((t, k)),
                None => a.solvers_without_task.push(name.to_string()),
            }
        }
        pairs.sort_by(|x, y| x.0.id.cmp(&y.0.id));
        a.chosen = pairs.iter().map(|(t, _)| *t).collect();
        for (n, &(_, k)) in pairs.iter().enumerate() {
            a.names.push(keys[k].0.to_string());
            a.solvers.push(k);
            a.solver_tasks.push(vec![n as u32]);
        }
        let with: HashSet<&str> = a.chosen.iter().map(|t| t.id.as_str()).collect();
        a.tasks_without_solver = tasks
            .iter()
            .filter(|t| !with.contains(t.id.as_str()))
            .map(|t| t.id.clone())
            .collect();
        a.solvers_without_task.sort();
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::shared::allow_confinement;
    use crate::embedded::{all_solvers, demo_tasks};

    /// Runs confined on a pool's threads hand back test outputs that the calling thread, and
    /// any other, may clone and drop (a confined one would panic there).
    #[test]
    fn confined_runs_hand_back_outputs_any_thread_may_hold() {
        allow_confinement();
        let programs = parse_file("solvers.py", &all_solvers()).unwrap();
        let tasks = demo_tasks().tasks;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let report = pool.install(|| run_solvers(&programs, &tasks, None, 2, &|| {}));
        assert!(report.results.iter().any(TaskResult::solved));
        let outputs: Vec<Shared<Grid>> = report
            .results
            .iter()
            .flat_map(|r| r.test_outputs.iter().flatten().cloned())
            .collect();
        assert!(!outputs.is_empty());
        std::thread::scope(|s| {
            let held = s.spawn(|| outputs.to_vec()).join().expect("shared outputs");
            assert_eq!(held, outputs);
        });
        drop(report);
    }
}
