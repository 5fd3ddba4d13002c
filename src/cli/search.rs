//! `arcbatch search`: rounds of gen → staged batt (every program on every task, within the
//! search's budgets) → harvest, with a line of progress per round and a summary at the end;
//! `--minutes` ends the run cleanly at a deadline.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arcbatch::device::select::Kind;
use arcbatch::dsl::memory;
use arcbatch::gen::search::{round, round_label, round_seed, Budgets, Harvest};
use arcbatch::pipeline::Engine;
use arcbatch::tasks;

use super::gen::GenArgs;
use super::run::report_skipped;
use super::Failure;

/// Rounds when neither `--rounds` nor `--minutes` is given.
const DEFAULT_ROUNDS: usize = 10;

pub struct Options {
    pub gen: GenArgs,
    pub tasks: PathBuf,
    /// Rounds; `None`: [`DEFAULT_ROUNDS`], or no limit with `minutes`.
    pub rounds: Option<usize>,
    pub minutes: Option<f64>,
    pub out: PathBuf,
    pub memory_mb: u64,
    pub max_size: usize,
    pub early_exit: bool,
    pub backend: Kind,
    /// Time limit per step and sample.
    pub timeout: Duration,
}

pub fn run(options: &Options) -> Result<(), Failure> {
    let started = Instant::now();
    let deadline = match options.minutes {
        Some(m) if !(m.is_finite() && m > 0.0) => return Err(format!("--minutes {m} must be above 0").into()),
        Some(m) => Some(started + Duration::from_secs_f64(m * 60.0)),
        None => None,
    };
    if options.memory_mb == 0 {
        return Err("--memory must be at least 1 (MB)".into());
    }
    let rounds = options
        .rounds
        .unwrap_or(if deadline.is_some() { usize::MAX } else { DEFAULT_ROUNDS });
    let (library, _) = options.gen.load()?;
    if options.gen.differs.is_some() {
        return Err("search scores by exact match; --differs is for gen and batt".into());
    }
    let set = tasks::load(&options.tasks)?;
    report_skipped(&set);
    if set.tasks.is_empty() {
        return Err(format!("{}: no tasks", options.tasks.display()).into());
    }
    if options.gen.options.count > library.len() {
        eprintln!(
            "arcbatch: note: --count {} is more than the library's {} solvers; all are used each round",
            options.gen.options.count,
            library.len()
        );
    }
    let mut harvest = Harvest::open(&options.out)?;
    let known = harvest.solutions();
    let engine = Engine {
        max_size: Some(options.max_size),
        memory: Some(options.memory_mb << 20),
        ..Engine::new(options.backend, options.timeout)
    };
    let backend = engine.backend()?;
    let stop = || deadline.is_some_and(|d| Instant::now() >= d);
    let memory_mb = memory::fitting_budget(options.memory_mb << 20) >> 20;
    let budgets = Budgets::search(options.early_exit, options.max_size, memory_mb.max(1), &stop);
    memory::bound_to_address_space();
    let limit = match (options.rounds, options.minutes) {
        (None, Some(m)) => format!("{m} minutes"),
        (Some(r), Some(m)) => format!("{r} rounds or {m} minutes"),
        _ => format!("{rounds} rounds"),
    };
    println!(
        "search: {} library solvers, {} tasks, {limit}; budgets per step and sample {} ms, size {}; \
         memory {} MB; {known} solutions already in {}",
        library.len(),
        set.tasks.len(),
        options.timeout.as_millis(),
        options.max_size,
        options.memory_mb,
        options.out.display()
    );
    let mut total = Totals::default();
    for r in 0..rounds {
        if stop() {
            break;
        }
        let mut gen = options.gen.options.clone();
        gen.seed = round_seed(options.gen.options.seed, r);
        let label = round_label(options.gen.options.seed, r);
        let done = round(
            &library,
            &gen,
            &set.tasks,
            backend.as_ref(),
            &budgets,
            &mut harvest,
            &label,
        )?;
        // Throughput counts every program on every sample it stands for: with early exit, a
        // sample skipped after a failed first pair is decided, not evaluated.
        let work = done.evaluated * done.lanes;
        total.rounds += 1;
        total.programs += done.evaluated;
        total.program_samples += work;
        total.evaluated += done.program_samples;
        total.eval_seconds += done.eval_seconds;
        total.new += done.new.len();
        total.novel += done.novel;
        total.equivalent += done.equivalent;
        total.timed_out += done.timed_out;
        total.too_large += done.too_large;
        let of = if rounds == usize::MAX {
            String::new()
        } else {
            format!("/{rounds}")
        };
        println!(
            "round {}{of}: {} programs{}, {} steps merged, {} lanes, {} chunks, {} evaluated program-samples \
             ({} program-task pairs past the first train pair); \
             {} solving runs, {} new solutions ({} novel), {} equivalent programs left out, budget hit by {} (time) \
             and {} (size); {:.2} s, {:.0} program-samples/s; found so far {} solutions for {} tasks, {:.0} s",
            r + 1,
            done.programs,
            if done.stopped {
                format!(" ({} evaluated before the deadline)", done.evaluated)
            } else {
                String::new()
            },
            done.steps,
            done.lanes,
            done.chunks,
            done.program_samples,
            done.alive,
            done.solving,
            done.new.len(),
            done.novel,
            done.equivalent,
            done.timed_out,
            done.too_large,
            done.gen_seconds + done.eval_seconds,
            work as f64 / done.eval_seconds.max(1e-9),
            harvest.solutions(),
            harvest.tasks(),
            started.elapsed().as_secs_f64()
        );
    }
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    println!(
        "summary: {} programs over {} rounds{}, {} program-samples ({} evaluated) in {:.2} s ({:.0} per second); \
         {} new solutions ({} novel: mutants, or solvers of another task), {:.1} per minute; {} equivalent programs \
         left out; budget hit by {} programs (time) and {} (size); {} solutions for {} tasks in {}{}",
        total.programs,
        total.rounds,
        if stop() { ", stopped at the deadline" } else { "" },
        total.program_samples,
        total.evaluated,
        total.eval_seconds,
        total.program_samples as f64 / total.eval_seconds.max(1e-9),
        total.new,
        total.novel,
        total.new as f64 / minutes.max(1e-9),
        total.equivalent,
        total.timed_out,
        total.too_large,
        harvest.solutions(),
        harvest.tasks(),
        options.out.display(),
        peak_memory()
            .map(|mb| format!("; peak memory {mb} MB"))
            .unwrap_or_default()
    );
    eprintln!("(wall time: {:.2} s)", minutes * 60.0);
    Ok(())
}

/// Sums over rounds.
#[derive(Default)]
struct Totals {
    rounds: usize,
    programs: usize,
    program_samples: usize,
    evaluated: u64,
    eval_seconds: f64,
    new: usize,
    novel: usize,
    equivalent: usize,
    timed_out: usize,
    too_large: usize,
}

/// This process's peak resident memory in MB (Linux's `VmHWM`), where the system says.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}
