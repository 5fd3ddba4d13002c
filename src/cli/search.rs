//! `arcbatch search`: rounds of gen → batt (every program on every task) → harvest, with a
//! line of progress per round and a summary at the end.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arcbatch::gen::search::{round, round_seed, Harvest};
use arcbatch::tasks;

use super::batt::BackendKind;
use super::gen::GenArgs;

pub struct Options {
    pub gen: GenArgs,
    pub tasks: PathBuf,
    pub rounds: usize,
    pub out: PathBuf,
    pub backend: BackendKind,
    pub timeout: Duration,
}

pub fn run(options: &Options) -> Result<(), String> {
    let started = Instant::now();
    let (library, _) = options.gen.load()?;
    if options.gen.differs.is_some() {
        return Err("search scores by exact match; --differs is for gen and batt".into());
    }
    let set = tasks::load(&options.tasks).map_err(|e| e.to_string())?;
    for e in &set.errors {
        eprintln!("arcbatch: skipped: {e}");
    }
    if set.tasks.is_empty() {
        return Err(format!("{}: no tasks", options.tasks.display()));
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
    let backend = options.backend.build(options.timeout)?;
    println!(
        "search: {} library solvers, {} tasks, {} rounds; {known} solutions already in {}",
        library.len(),
        set.tasks.len(),
        options.rounds,
        options.out.display()
    );
    let (mut programs, mut program_samples, mut eval_seconds, mut new, mut novel) = (0, 0, 0.0, 0, 0);
    for r in 0..options.rounds {
        let mut gen = options.gen.options.clone();
        gen.seed = round_seed(options.gen.options.seed, r);
        let label = format!("round {} of seed {}", r + 1, options.gen.options.seed);
        let done = round(&library, &gen, &set.tasks, backend.as_ref(), &mut harvest, &label)?;
        let work = done.programs * done.lanes;
        println!(
            "round {}/{}: {} programs, {} steps merged, {} lanes, {} solving runs, {} new solutions ({} novel); \
             {:.2} s, {:.0} program-samples/s",
            r + 1,
            options.rounds,
            done.programs,
            done.steps,
            done.lanes,
            done.solving,
            done.new.len(),
            done.novel,
            done.gen_seconds + done.eval_seconds,
            work as f64 / done.eval_seconds.max(1e-9)
        );
        programs += done.programs;
        program_samples += work;
        eval_seconds += done.eval_seconds;
        new += done.new.len();
        novel += done.novel;
    }
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    println!(
        "summary: {programs} programs over {} rounds, {program_samples} program-samples evaluated in {eval_seconds:.2} s \
         ({:.0} per second); {new} new solutions ({novel} novel: mutants, or solvers of another task), \
         {:.1} per minute; {} solutions for {} tasks in {}",
        options.rounds,
        program_samples as f64 / eval_seconds.max(1e-9),
        new as f64 / minutes.max(1e-9),
        harvest.solutions(),
        harvest.tasks(),
        options.out.display()
    );
    eprintln!("(wall time: {:.2} s)", minutes * 60.0);
    Ok(())
}
