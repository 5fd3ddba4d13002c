//! Solving tasks never seen before: candidate programs that map every train input to its
//! train output, chosen without the test outputs, two attempts per test input.
//!
//! Candidates come from two sources under one time budget per task: the solvers of a library
//! (`--library`; each run on the train pairs, kept where it fits them all), then bottom-up
//! enumeration of the DSL's primitives with observational equivalence ([`enumerate`]).
//! Candidates are ranked library first (a long program that fits every train pair is strong
//! evidence), then by enumeration cost; each test input gets the two best candidates'
//! *distinct* outputs. The test inputs' expected outputs are never read: [`Problem::of`]
//! keeps only the test inputs, whatever the task file holds.

pub mod emit;
pub mod enumerate;
pub mod kinds;
pub mod pieces;
pub mod prior;
pub mod recolour;
pub mod submission;
pub mod tiles;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::batch::Backend;
use crate::dsl::func::guarded;
use crate::dsl::memory;
use crate::dsl::shared::Shared;
use crate::dsl::{Grid, GridRef, Value};
use crate::program::{parse_program, run_guarded, Program};
use crate::tasks::{Example, Input, Task};
use enumerate::{Budget, Enumerator, Finish, Stop};

/// How a run spends its budget.
#[derive(Clone, Debug)]
pub struct Config {
    /// Every task is done by then (each gets a fair share of what is left when it starts).
    pub until: Instant,
    /// Columns evaluated per task at most: a run that stops on this rather than on time is
    /// deterministic, the same for any number of threads.
    pub max_evaluations: Option<u64>,
    /// Memory budget for the enumerators running at once, in bytes.
    pub memory_bytes: usize,
    /// Time limit of one library solver on one input.
    pub library_timeout: Duration,
}

/// What one task's train pairs and test inputs are, and nothing else.
pub struct Problem {
    pub id: String,
    pub train: Vec<(Shared<Grid>, Shared<Grid>)>,
    pub test: Vec<Shared<Grid>>,
}

impl Problem {
    /// The train pairs and test inputs of a task. Test outputs are dropped here, so no later
    /// step can read them; a task without train pairs, with a train pair lacking its output,
    /// or without test inputs is refused with the reason.
    pub fn of(task: &Task) -> Result<Problem, String> {
        if task.train.is_empty() {
            return Err("the task has no train pairs".into());
        }
        if task.test.is_empty() {
            return Err("the task has no test inputs".into());
        }
        let train = task
            .train
            .iter()
            .enumerate()
            .map(|(k, ex)| match &ex.output {
                Some(o) => Ok((ex.input.clone(), o.clone())),
                None => Err(format!("train pair {k} has no output")),
            })
            .collect::<Result<_, String>>()?;
        Ok(Problem {
            id: task.id.clone(),
            train,
            test: task.test.iter().map(|ex| ex.input.clone()).collect(),
        })
    }
}

/// Where a candidate came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A library solver, by name.
    Library(String),
    /// Enumeration, at this cost; `finish` says what ends the program, if anything does
    /// (a colour map learned from the train pairs, pieces drawn on the input).
    Enumerated { cost: u32, finish: &'static str },
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Library(name) => write!(f, "library solver {name}"),
            Origin::Enumerated { cost, finish: "" } => write!(f, "enumerated, cost {cost}"),
            Origin::Enumerated { cost, finish } => write!(f, "enumerated, cost {cost}, {finish}"),
        }
    }
}

/// A program that fits every train pair, with its outputs on the test inputs.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub origin: Origin,
    /// The program in the reference syntax, `def solve_<task>(I): ...`.
    pub program: String,
    pub test_outputs: Vec<Shared<Grid>>,
}

/// What solving one task gave.
#[derive(Clone, Debug, Default)]
pub struct Solution {
    pub task: String,
    /// At most two candidates with distinct test outputs, best first.
    pub chosen: Vec<Candidate>,
    /// Candidates found in all (before keeping two distinct ones).
    pub candidates: usize,
    /// Why the enumeration stopped.
    pub stopped: Option<Stop>,
    /// Columns evaluated and distinct columns kept by the enumerator.
    pub evaluations: u64,
    pub values: usize,
    pub seconds: f64,
    /// Why the task could not be attempted, if it could not.
    pub error: Option<String>,
}

impl Solution {
    /// The two attempts for test input `k`, if any candidate was found.
    pub fn attempts(&self, k: usize) -> Option<[Shared<Grid>; 2]> {
        let first = self.chosen.first()?.test_outputs.get(k)?.clone();
        let second = self.chosen.get(1).and_then(|c| c.test_outputs.get(k).cloned());
        Some([first.clone(), second.unwrap_or(first)])
    }
}

/// Solves every task, in parallel over rayon's pool; `done` is called as each finishes.
pub fn solve_all(
    tasks: &[Task],
    library: &[Program],
    config: &Config,
    backend: Option<&dyn Backend>,
    done: &(dyn Fn(&Solution) + Sync),
) -> Vec<Solution> {
    let started = AtomicUsize::new(0);
    let threads = rayon::current_num_threads().max(1);
    let per_thread_bytes = config.memory_bytes / threads;
    tasks
        .par_iter()
        .map(|task| {
            let begun = started.fetch_add(1, Ordering::Relaxed);
            // A fair share of the time left: what remains, over the tasks not yet begun, times
            // the tasks that run at once.
            let left = config.until.saturating_duration_since(Instant::now());
            let share = left.mul_f64(threads as f64 / (tasks.len() - begun) as f64).min(left);
            let budget = Budget {
                until: Instant::now() + share,
                max_evaluations: config.max_evaluations,
                max_bytes: per_thread_bytes,
                max_resident: config.memory_bytes,
            };
            let solution = match Problem::of(task) {
                Ok(problem) => solve(&problem, library, &budget, config.library_timeout, backend),
                Err(error) => Solution {
                    task: task.id.clone(),
                    error: Some(error),
                    ..Solution::default()
                },
            };
            done(&solution);
            solution
        })
        .collect()
}

/// Solves one task within its budget; the enumeration's batched calls run on `backend` where
/// one is given ([`Enumerator::run`]).
pub fn solve(
    problem: &Problem,
    library: &[Program],
    budget: &Budget,
    library_timeout: Duration,
    backend: Option<&dyn Backend>,
) -> Solution {
    let start = Instant::now();
    // What the task's programs and values allocate on this thread, counted: a call past it
    // fails, and the enumeration stops by memory.
    let _memory = memory::Budget::set(Some(budget.max_bytes as u64));
    let mut candidates = library_candidates(problem, library, budget, library_timeout);
    let mut solution = Solution {
        task: problem.id.clone(),
        ..Solution::default()
    };
    // Enumeration ends at the budget or once there are enough distinct candidates.
    let limit = budget.until.saturating_duration_since(Instant::now());
    let enumerated = guarded(Some(limit + Duration::from_millis(50)), || {
        let mut e = Enumerator::new(&problem.train, &problem.test);
        let stop = e.run(budget, ENOUGH_CANDIDATES, backend);
        (e, stop)
    });
    match enumerated {
        Ok((e, stop)) => {
            solution.stopped = Some(stop);
            solution.evaluations = e.evaluations;
            solution.values = e.nodes.len();
            // Cheapest first.
            let mut found = e.candidates.clone();
            found.sort_by_key(|f| f.cost(&e));
            for found in &found {
                let program = emit::program_text(&e, found, &problem.id);
                match verified(problem, &program, &e.test_outputs(found)) {
                    Ok(test_outputs) => candidates.push(Candidate {
                        origin: Origin::Enumerated {
                            cost: found.cost(&e),
                            finish: match found.finish {
                                Finish::Exact => "",
                                Finish::Recolour(_) => "recoloured",
                                Finish::Pieces(_) => "pieces drawn on the input",
                                Finish::Tiles { .. } => "tiled",
                            },
                        },
                        program,
                        test_outputs,
                    }),
                    Err(why) => solution.error = Some(format!("internal: an enumerated program {why}:\n{program}")),
                }
            }
        }
        Err(panic) => solution.error = Some(format!("internal: the enumerator panicked: {}", panic.0)),
    }
    solution.candidates = candidates.len();
    solution.chosen = two_distinct(candidates);
    solution.seconds = start.elapsed().as_secs_f64();
    solution
}

/// Candidates beyond this many are not looked for: two distinct ones are submitted, and the
/// first found are the cheapest.
const ENOUGH_CANDIDATES: usize = 8;

/// The first two candidates whose test outputs differ.
fn two_distinct(candidates: Vec<Candidate>) -> Vec<Candidate> {
    let mut chosen: Vec<Candidate> = Vec::new();
    for c in candidates {
        if chosen.len() < 2 && chosen.iter().all(|k| k.test_outputs != c.test_outputs) {
            chosen.push(c);
        }
    }
    chosen
}

/// The library solvers that map every train input to its output, with their test outputs.
fn library_candidates(problem: &Problem, library: &[Program], budget: &Budget, timeout: Duration) -> Vec<Candidate> {
    let pairs = Value::tuple(
        problem
            .train
            .iter()
            .map(|(i, o)| Value::tuple(vec![Value::Grid(i.clone()), Value::Grid(o.clone())]))
            .collect(),
    );
    let mut found = Vec::new();
    'programs: for program in library {
        if Instant::now() >= budget.until {
            break;
        }
        for (input, output) in &problem.train {
            match run_on(program, &pairs, input, timeout) {
                Some(g) if *g == **output => {}
                _ => continue 'programs,
            }
        }
        let test_outputs: Option<Vec<Shared<Grid>>> = problem
            .test
            .iter()
            .map(|i| run_on(program, &pairs, i, timeout))
            .collect();
        if let Some(test_outputs) = test_outputs {
            let mut renamed = program.clone();
            renamed.name = format!("solve_{}", problem.id);
            found.push(Candidate {
                origin: Origin::Library(program.name.clone()),
                program: renamed.to_string(),
                test_outputs,
            });
        }
    }
    found
}

/// A program's output grid on one input (`C` is `None`: no expected output is given).
fn run_on(program: &Program, pairs: &Value, input: &Shared<Grid>, timeout: Duration) -> Option<Shared<Grid>> {
    let example = Example {
        input: input.clone(),
        output: None,
    };
    let args: Vec<Value> = program
        .params
        .iter()
        .map(|p| Input::of(p).map_or(Value::None, |i| i.value(pairs, &example)))
        .collect();
    run_guarded(program, &args, Some(timeout))
        .ok()?
        .as_grid()
        .ok()
        .map(GridRef::into_shared)
}

/// Checks an enumerated program the way a user will run it: parsed from its text and run by
/// the interpreter, it must give every train output and the enumerator's test outputs.
fn verified(problem: &Problem, text: &str, test_values: &[Value]) -> Result<Vec<Shared<Grid>>, String> {
    let program = parse_program("<enumerated>", text).map_err(|e| format!("does not parse ({e})"))?;
    let pairs = Value::None;
    for (input, output) in &problem.train {
        if run_on(&program, &pairs, input, Duration::from_secs(10)).as_deref() != Some(&**output) {
            return Err("does not reproduce a train output".into());
        }
    }
    let mut outputs = Vec::new();
    for (input, expected) in problem.test.iter().zip(test_values) {
        let out = run_on(&program, &pairs, input, Duration::from_secs(10)).ok_or("fails on a test input")?;
        if Value::Grid(out.clone()) != *expected {
            return Err("gives another test output than enumerated".into());
        }
        outputs.push(out);
    }
    Ok(outputs)
}

/// The JSON report of a run (`arcbatch solve --json`, and what `arcbatch.solve` returns): per
/// task the chosen programs with their origin, the counts and the time.
pub fn report_json(solutions: &[Solution], seconds: f64) -> serde_json::Value {
    let tasks: serde_json::Map<String, serde_json::Value> = solutions
        .iter()
        .map(|s| {
            let chosen: Vec<serde_json::Value> = s
                .chosen
                .iter()
                .map(|c| serde_json::json!({"origin": c.origin.to_string(), "program": c.program}))
                .collect();
            let entry = serde_json::json!({
                "chosen": chosen,
                "candidates": s.candidates,
                "evaluations": s.evaluations,
                "values": s.values,
                "stopped": s.stopped.map(Stop::name),
                "seconds": s.seconds,
                "error": s.error,
            });
            (s.task.clone(), entry)
        })
        .collect();
    serde_json::json!({
        "tasks": solutions.len(),
        "with_candidate": solutions.iter().filter(|s| !s.chosen.is_empty()).count(),
        "evaluations": solutions.iter().map(|s| s.evaluations).sum::<u64>(),
        "values": solutions.iter().map(|s| s.values).sum::<usize>(),
        "seconds": seconds,
        "results": tasks,
    })
}
