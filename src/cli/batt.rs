//! `arcbatch batt`: many solvers merged into one program and evaluated over every sample of the
//! tasks at once; a summary on stdout, progress on stderr, an optional JSON report. The solver
//! file may be a batt text file (`arcbatch gen`'s output, recognised by its first line).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arcbatch::batt::{Config, Plan, Report};
use arcbatch::device::select::Kind;
use arcbatch::dsl::memory;
use arcbatch::files;
use arcbatch::pipeline::{Engine, Loaded, Source};
use arcbatch::program::Program;

use super::progress::Progress;
use super::run::{list, report_skipped};
use super::Failure;

pub struct Options {
    pub solvers: Option<PathBuf>,
    pub tasks: Option<PathBuf>,
    pub differs: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub config: Config,
    /// Memory budget for the solvers' values ([`Plan::with_memory`]).
    pub memory_mb: u64,
    /// Size budget per value ([`Plan::with_max_size`]), or none.
    pub max_size: Option<usize>,
    pub backend: Kind,
    pub timeout: Duration,
}

/// Reads a differ file: each function `differ(S, I, C)` (checked when merging).
pub fn read_differs(path: &Path) -> Result<Vec<Program>, Failure> {
    Ok(Source::File(path.to_path_buf()).differs()?)
}

/// Reads the solvers (`None`: the embedded library) and tasks (`None`: the demo tasks) that
/// `batt`, `profile` and `diff` plan from, saying which task files were skipped.
pub fn load(solvers: Option<&Path>, tasks: Option<&Path>) -> Result<Loaded, Failure> {
    let loaded = Loaded::read(&Source::file_or_embedded(solvers), tasks)?;
    report_skipped(&loaded.tasks);
    Ok(loaded)
}

/// How often `--json` is rewritten with the chunks done so far.
const SAVE_EVERY: Duration = Duration::from_secs(15);

pub fn run(options: &Options) -> Result<(), Failure> {
    let started = Instant::now();
    let differs = match &options.differs {
        Some(path) => read_differs(path)?,
        None => Vec::new(),
    };
    let loaded = load(options.solvers.as_deref(), options.tasks.as_deref())?;
    if options.memory_mb == 0 {
        return Err("--memory must be at least 1 (MB)".into());
    }
    let engine = Engine {
        memory: Some(options.memory_mb << 20),
        max_size: options.max_size,
        ..Engine::new(options.backend, options.timeout)
    };
    let plan = engine.budget(loaded.plan(&differs, options.config)?);
    let backend = engine.backend()?;
    memory::bound_to_address_space();
    let progress = Progress::new(plan.work(backend.as_ref()), "nodes");
    // What was finished is on disk as the run goes, so that a killed run keeps it.
    let mut save = |report: &Report| {
        if let Some(path) = &options.json {
            if let Err(e) = write_report(path, report) {
                eprintln!("arcbatch: {e}");
            }
        }
    };
    let report = plan.run_saving(backend.as_ref(), &|| progress.tick(), Some(SAVE_EVERY), &mut save);
    progress.finish();
    print_summary(&plan, &report, options.config);
    eprintln!(
        "(wall time including loading: {:.3} s; values held at most: {} MB)",
        started.elapsed().as_secs_f64(),
        memory::peak_bytes() >> 20
    );
    if let Some(path) = &options.json {
        write_report(path, &report)?;
    }
    Ok(())
}

/// Writes the JSON report atomically ([`files::write_atomically`]); the error names the file.
fn write_report(path: &Path, report: &Report) -> Result<(), String> {
    files::write_atomically(path, |out| report.write_json(out)).map_err(|e| format!("{}: {e}", path.display()))
}

fn print_summary(plan: &Plan<'_>, report: &Report, config: Config) {
    let solvers = plan.merged.solvers.len();
    let tasks = report
        .matches
        .iter()
        .map(|m| m.task.as_str())
        .collect::<std::collections::BTreeSet<_>>();
    let mode = if config.cross {
        "every solver on every task"
    } else {
        "each solver on its task"
    };
    println!(
        "batt: {solvers} solvers, {} tasks, {} lanes ({mode}{})",
        tasks.len(),
        report.lanes,
        if config.no_merge { ", not merged" } else { "" }
    );
    let shared = report.steps_total.saturating_sub(report.steps_merged);
    println!(
        "steps: {} in all, {} after merging ({shared} shared)",
        report.steps_total, report.steps_merged
    );
    let solved = report.matches.iter().filter(|m| m.solved()).count();
    let pairs: usize = report.matches.iter().map(|m| m.pairs).sum();
    let correct: usize = report.matches.iter().map(|m| m.correct).sum();
    let solved_tasks = report
        .matches
        .iter()
        .filter(|m| m.solved())
        .map(|m| m.task.as_str())
        .collect::<std::collections::BTreeSet<_>>();
    println!(
        "{solved} of {} (solver, task) runs solve their task; {} of {} tasks solved; {correct} of {pairs} samples correct",
        report.matches.len(),
        solved_tasks.len(),
        tasks.len()
    );
    let per_lane = if report.lanes > 0 {
        report.seconds * 1e6 / report.lanes as f64
    } else {
        0.0
    };
    println!("{:.1} ms ({per_lane:.1} µs per lane)", report.seconds * 1e3);
    list("solvers without a task", &plan.solvers_without_task);
    list("tasks without a solver", &plan.tasks_without_solver);
    list("duplicate solvers (first one used)", &plan.duplicate_solvers);
}
