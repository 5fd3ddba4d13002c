//! `arcbatch run`: each `solve_<id>` of a solver file on every pair of task `<id>`, with a
//! progress bar, a summary, and optional JSON report and Kaggle submission files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use arcbatch::dsl::shared::allow_confinement;
use arcbatch::files;
use arcbatch::pipeline::{read_tasks, Programs, Source};
use arcbatch::program::Program;
use arcbatch::run::{run_solvers, submission_json, RunReport};
use arcbatch::tasks::{Task, TaskSet};
use arcbatch::Chain;

use super::progress::Progress;
use super::Failure;

/// Where the solvers and tasks of a run come from: files, or the embedded demo.
pub struct Inputs {
    pub programs: Vec<Program>,
    pub tasks: TaskSet,
}

/// Reads the solvers and tasks of a run; `None` stands for the embedded library and demo tasks.
/// A directory of solver files (a library, or what `arcbatch search` harvested) is read whole,
/// as `gen --library` reads it.
pub fn read_inputs(solvers: Option<&Path>, tasks_path: Option<&Path>) -> Result<Inputs, Failure> {
    Ok(Inputs {
        programs: Programs::read(&Source::file_or_embedded(solvers))?.into_solvers()?,
        tasks: read_tasks(tasks_path)?,
    })
}

/// Says which task files were skipped, and why.
pub fn report_skipped(tasks: &TaskSet) {
    for e in &tasks.errors {
        eprintln!("arcbatch: skipped: {}", Chain(e));
    }
}

pub struct Options {
    /// The embedded demo: leave out the library solvers that have no demo task.
    pub demo: bool,
    pub json: Option<PathBuf>,
    pub submission: Option<PathBuf>,
    pub timeout: Duration,
    /// Runs of each solver on its task; the best time is reported.
    pub repeat: usize,
}

pub fn run(inputs: Inputs, options: &Options) -> Result<(), Failure> {
    // This process's threads run nothing but whole runs of a solver on a task, each of which
    // publishes what it hands back: the values of a run can be confined to its thread.
    allow_confinement();
    report_skipped(&inputs.tasks);
    let started = Instant::now();
    let progress = Progress::new(inputs.programs.len().min(inputs.tasks.tasks.len()) as u64, "tasks");
    let report = run_solvers(
        &inputs.programs,
        &inputs.tasks.tasks,
        Some(options.timeout),
        options.repeat.max(1),
        &|| progress.tick(),
    );
    progress.finish();
    print_summary(&report, &inputs.tasks.tasks, options.demo);
    eprintln!(
        "(wall time including start-up work: {:.3} s)",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = &options.json {
        write_json(path, &report.to_json())?;
    }
    if let Some(path) = &options.submission {
        write_submission(path, &report, &inputs.tasks.tasks)?;
    }
    Ok(())
}

/// Runs with at most this many tasks print a line for every task.
const TASKS_SHOWN: usize = 20;

fn print_summary(report: &RunReport, tasks: &[Task], demo: bool) {
    let solved = report.results.iter().filter(|r| r.solved()).count();
    let pairs: usize = report.results.iter().map(|r| r.pairs).sum();
    let correct: usize = report.results.iter().map(|r| r.correct).sum();
    let mut failures: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &report.results {
        if !r.solved() {
            *failures
                .entry(r.error.as_ref().map_or("wrong output", |e| e.kind()))
                .or_default() += 1;
        }
    }
    println!(
        "solved {solved} of {} tasks with a solver ({} tasks loaded); {correct} of {pairs} pairs correct; {:.1} ms",
        report.results.len(),
        tasks.len(),
        report.seconds * 1e3
    );
    if !failures.is_empty() {
        let parts: Vec<String> = failures.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        println!("unsolved by kind: {}", parts.join(", "));
    }
    let every_task = report.results.len() <= TASKS_SHOWN;
    for r in report.results.iter().filter(|r| every_task || !r.solved()) {
        let why = match &r.error {
            _ if r.solved() => "solved".to_string(),
            Some(e) => e.to_string(),
            None => "wrong output".to_string(),
        };
        println!(
            "  {} ({}): {}/{} pairs, {} µs; {why}",
            r.task,
            r.solver,
            r.correct,
            r.pairs,
            r.nanos / 1000
        );
    }
    if demo {
        println!(
            "the embedded library also holds {} solvers of ARC training tasks: \
             `arcbatch run --tasks DIR` runs them on a task folder",
            report.solvers_without_task.len()
        );
    } else {
        list("solvers without a task", &report.solvers_without_task);
    }
    list("tasks without a solver", &report.tasks_without_solver);
    list("duplicate solvers (first one used)", &report.duplicate_solvers);
}

/// Prints a list of names on one line, the first dozen of them.
pub fn list(what: &str, names: &[String]) {
    if names.is_empty() {
        return;
    }
    const SHOWN: usize = 12;
    let more = if names.len() > SHOWN {
        format!(" ... ({} more)", names.len() - SHOWN)
    } else {
        String::new()
    };
    println!(
        "{what} ({}): {}{more}",
        names.len(),
        names[..names.len().min(SHOWN)].join(" ")
    );
}

/// Writes a JSON value, pretty-printed.
pub fn write_json(path: &Path, value: &Json) -> Result<(), Failure> {
    Ok(files::write_json(path, value, true).map_err(|e| format!("{}: {e}", path.display()))?)
}

/// Writes Kaggle's submission file and lists the test inputs given a placeholder.
fn write_submission(path: &Path, report: &RunReport, tasks: &[Task]) -> Result<(), Failure> {
    let (submission, placeholders) = submission_json(report, tasks);
    list("test inputs given a placeholder in the submission", &placeholders);
    write_json(path, &submission)
}
