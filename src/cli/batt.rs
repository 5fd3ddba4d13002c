//! `arcbatch batt`: many solvers merged into one program and evaluated over every sample of the
//! tasks at once; a summary on stdout, progress on stderr, an optional JSON report. The solver
//! file may be a batt text file (`arcbatch gen`'s output, recognised by its first line).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arcbatch::batch::{Backend, CpuBackend};
use arcbatch::batt::{text, Config, Plan, Report};
use arcbatch::device::select::{self, Kind};
use arcbatch::program::{parse_file, Program};
use arcbatch::run::load_solvers;
use arcbatch::tasks::TaskSet;
use arcbatch::Chain;

use super::progress::Progress;
use super::run::{list, read_tasks, solver_source, write_json};
use super::Failure;

/// The backends `--backend` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The GPUs when there are any, each op only from the batch size where it wins (probed
    /// once and cached; see `arcbatch gpu-info`), else the CPU.
    Auto,
    /// rayon over lanes on this machine's cores.
    Cpu,
    /// Every op that has a kernel on all visible GPUs (the CPU, with a warning, if none).
    Gpu,
    /// The GPU kernels compiled for the host and run on the CPU, through the device backend's
    /// staging, dispatch and fallback (ARCBATCH_EMU_DEVICES=N emulated devices, default 1;
    /// ARCBATCH_EMU_FAULT=<kernel> corrupts one kernel's output, for testing).
    Emu,
}

impl BackendKind {
    /// The backend, with a time limit per step and lane.
    pub fn build(self, timeout: Duration) -> Result<Box<dyn Backend>, Failure> {
        self.build_on(CpuBackend::new(Some(timeout)))
    }

    /// The backend over `cpu`, the CPU backend with its limits.
    pub fn build_on(self, cpu: CpuBackend) -> Result<Box<dyn Backend>, Failure> {
        let kind = match self {
            BackendKind::Auto => Kind::Auto,
            BackendKind::Cpu => Kind::Cpu,
            BackendKind::Gpu => Kind::Gpu,
            BackendKind::Emu => Kind::Emu,
        };
        Ok(select::backend_on(kind, cpu)?)
    }
}

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
    pub backend: BackendKind,
    pub timeout: Duration,
}

/// Reads a differ file: each function `differ(S, I, C)` (checked when merging).
pub fn read_differs(path: &Path) -> Result<Vec<Program>, Failure> {
    let source = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(parse_file(&path.display().to_string(), &source)?)
}

pub fn run(options: &Options) -> Result<(), Failure> {
    let started = Instant::now();
    let differs = match &options.differs {
        Some(path) => read_differs(path)?,
        None => Vec::new(),
    };
    let loaded = Loaded::read(options.solvers.as_deref(), options.tasks.as_deref())?;
    if options.memory_mb == 0 {
        return Err("--memory must be at least 1 (MB)".into());
    }
    let plan = loaded
        .plan(&differs, options.config)?
        .with_memory(options.memory_mb << 20)
        .with_max_size(options.max_size);
    let cpu = CpuBackend::new(Some(options.timeout)).with_max_members(options.max_size);
    let backend = options.backend.build_on(cpu)?;
    let progress = Progress::new(plan.work(backend.as_ref()), "nodes");
    let report = plan.run(backend.as_ref(), &|| progress.tick());
    progress.finish();
    print_summary(&plan, &report, options.config);
    eprintln!(
        "(wall time including loading: {:.3} s)",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = &options.json {
        write_json(path, &report.to_json())?;
    }
    Ok(())
}

/// A solver file (or a batt text file, recognised by its first line) and tasks, read; what
/// `batt`, `profile` and `diff` plan from. Bad task files are reported and skipped.
pub struct Loaded {
    tasks: TaskSet,
    programs: Programs,
}

/// The programs of a solver file.
pub enum Programs {
    /// Solvers in the reference syntax or the search dialect, to be merged.
    Solvers(Vec<Program>),
    /// A batt text file (name and text), merged already; parsed when planned, with the
    /// differs given then.
    BattText(String, String),
}

impl Programs {
    /// Reads a solver file (`None`: the embedded library), telling a batt text file by its
    /// first line.
    pub fn read(path: Option<&Path>) -> Result<Programs, Failure> {
        let (name, source) = solver_source(path)?;
        Ok(if text::is_batt_text(&source) {
            Programs::BattText(name, source)
        } else {
            Programs::Solvers(load_solvers(&name, &source)?)
        })
    }
}

impl Loaded {
    pub fn read(solvers: Option<&Path>, tasks: Option<&Path>) -> Result<Loaded, Failure> {
        let programs = Programs::read(solvers)?;
        let tasks = read_tasks(tasks)?;
        for e in &tasks.errors {
            eprintln!("arcbatch: skipped: {}", Chain(e));
        }
        Ok(Loaded { tasks, programs })
    }

    /// The plan: the solvers with `differs`, or the batt text's program (its own differ lines,
    /// then `differs`, on every output).
    pub fn plan(&self, differs: &[Program], config: Config) -> Result<Plan<'_>, Failure> {
        match &self.programs {
            Programs::BattText(file, source) => {
                let (merged, _) = text::parse(file, source, differs)?;
                Ok(Plan::from_merged(merged, &self.tasks.tasks, config)?)
            }
            Programs::Solvers(programs) => Ok(Plan::new(programs, differs, &self.tasks.tasks, config)?),
        }
    }
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
