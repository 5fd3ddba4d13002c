//! `arcbatch solve`: programs for tasks never seen, two attempts per test input, a Kaggle
//! submission; and `arcbatch score`, a submission against the solutions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use arcbatch::device::select::{self, Kind};
use arcbatch::dsl::memory;
use arcbatch::files;
use arcbatch::pipeline::{read_tasks, Programs, Source};
use arcbatch::program::Program;
use arcbatch::solve::submission::{score, solutions_json, submission_json, Score};
use arcbatch::solve::{report_json, solve_all, Config, Origin, Solution};
use arcbatch::tasks::{self, Task};

use super::run::{list, report_skipped, write_json};
use super::Failure;

pub struct Options {
    pub tasks: Option<PathBuf>,
    pub submission: Option<PathBuf>,
    /// The budget; `None`: a minute, a quarter of one for the embedded demo tasks.
    pub minutes: Option<f64>,
    pub library: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub max_candidates: Option<u64>,
    pub memory_mb: u64,
    pub json: Option<PathBuf>,
    /// Where the enumeration's batched calls run; `cpu`: one call at a time, unbatched.
    pub backend: Kind,
}

/// The default budget, in minutes, and the embedded demo's (a newcomer's first command).
const MINUTES: f64 = 1.0;
const DEMO_MINUTES: f64 = 0.25;

/// How often a line of progress is printed, and the submission on disk brought up to date.
const PROGRESS_EVERY: Duration = Duration::from_secs(15);

pub fn run(options: &Options) -> Result<(), Failure> {
    let started = Instant::now();
    let minutes = options
        .minutes
        .unwrap_or(if options.tasks.is_none() { DEMO_MINUTES } else { MINUTES });
    if !(minutes.is_finite() && minutes >= 0.0) {
        return Err(format!("--minutes must be a number of at least 0, got {minutes}").into());
    }
    let until = started + Duration::from_secs_f64(minutes * 60.0);
    let set = read_tasks(options.tasks.as_deref())?;
    report_skipped(&set);
    let library: Vec<Program> = match &options.library {
        Some(path) => Programs::read(&Source::File(path.clone()))?.into_solvers()?,
        None => Vec::new(),
    };
    let tasks = &set.tasks;
    if let Some(path) = &options.submission {
        // A valid submission from the start (placeholders), replaced as the run goes on.
        write_submission(path, tasks, &[])?;
    }
    let backend = match options.backend {
        Kind::Cpu => None,
        kind => Some(select::backend(kind, None)?),
    };
    eprintln!(
        "solve: {} tasks, {} library solvers, {:.1} minutes on {} threads, {} backend",
        tasks.len(),
        library.len(),
        minutes,
        rayon::current_num_threads(),
        backend.as_deref().map_or("cpu", |b| b.name())
    );
    let memory = memory::fitting_budget(options.memory_mb << 20);
    memory::bound_to_address_space();
    let config = Config {
        until,
        max_evaluations: options.max_candidates,
        memory_bytes: memory as usize,
        library_timeout: Duration::from_millis(LIBRARY_TIMEOUT_MS),
    };
    let progress = Mutex::new(Tally {
        done: Vec::new(),
        printed: Instant::now(),
    });
    let solutions = solve_all(tasks, &library, &config, backend.as_deref(), &|s: &Solution| {
        let mut p = progress.lock().unwrap_or_else(|e| e.into_inner());
        p.done.push(s.clone());
        if p.printed.elapsed() >= PROGRESS_EVERY {
            p.printed = Instant::now();
            eprintln!("solve: {}", p.line(tasks.len(), started, until));
            if let Some(path) = &options.submission {
                if let Err(e) = write_submission(path, tasks, &p.done) {
                    eprintln!("arcbatch: cannot update the submission: {e}");
                }
            }
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    summarise(tasks, &solutions, seconds);
    if let Some(path) = &options.submission {
        write_submission(path, tasks, &solutions)?;
        println!("submission: {}", path.display());
    }
    if let Some(dir) = &options.out {
        write_programs(dir, &solutions)?;
        println!("programs: {}/attempt_1 and {}/attempt_2", dir.display(), dir.display());
    }
    if let Some(path) = &options.json {
        write_json(path, &report_json(&solutions, seconds))?;
    }
    // Tasks that came with their test outputs (the demo, a task folder) are scored here, after
    // solving: the solver never saw them.
    let known = solutions_json(tasks);
    if known.as_object().is_some_and(|m| !m.is_empty()) {
        let (submission, _) = submission_json(tasks, &solutions);
        let s = score(&submission, &known)?;
        println!(
            "against the test outputs in the task files (never read by the solver): {}",
            score_line(&s)
        );
    }
    Ok(())
}

/// A library solver's time limit per input: long enough for the published solvers but one.
const LIBRARY_TIMEOUT_MS: u64 = 50;

struct Tally {
    done: Vec<Solution>,
    printed: Instant,
}

impl Tally {
    fn line(&self, total: usize, started: Instant, until: Instant) -> String {
        let found = self.done.iter().filter(|s| !s.chosen.is_empty()).count();
        let evaluations: u64 = self.done.iter().map(|s| s.evaluations).sum();
        let elapsed = started.elapsed().as_secs_f64().max(1e-9);
        format!(
            "{}/{total} tasks, {found} with a candidate, {:.0}k values/s, {:.0} s left",
            self.done.len(),
            evaluations as f64 / elapsed / 1e3,
            until.saturating_duration_since(Instant::now()).as_secs_f64()
        )
    }
}

fn write_submission(path: &Path, tasks: &[Task], solutions: &[Solution]) -> Result<(), Failure> {
    let (submission, _) = submission_json(tasks, solutions);
    files::write_json(path, &submission, false).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn summarise(tasks: &[Task], solutions: &[Solution], seconds: f64) {
    let with = |origin: fn(&Origin) -> bool| {
        solutions
            .iter()
            .filter(|s| s.chosen.first().is_some_and(|c| origin(&c.origin)))
            .count()
    };
    let library = with(|o| matches!(o, Origin::Library(_)));
    let enumerated = with(|o| matches!(o, Origin::Enumerated { .. }));
    let evaluations: u64 = solutions.iter().map(|s| s.evaluations).sum();
    let values: usize = solutions.iter().map(|s| s.values).sum();
    println!(
        "solved {} of {} tasks on the train pairs ({library} by a library solver, {enumerated} by enumeration); {:.1} s",
        library + enumerated,
        tasks.len(),
        seconds
    );
    println!(
        "enumeration: {evaluations} programs evaluated, {values} distinct values kept ({:.1} programs per value); {:.0}k programs/s, {:.0}k values/s",
        evaluations as f64 / values.max(1) as f64,
        evaluations as f64 / seconds.max(1e-9) / 1e3,
        values as f64 / seconds.max(1e-9) / 1e3
    );
    let mut stops: BTreeMap<&str, usize> = BTreeMap::new();
    for stop in solutions.iter().filter_map(|s| s.stopped) {
        *stops.entry(stop.name()).or_default() += 1;
    }
    let stops: Vec<String> = stops.iter().map(|(why, n)| format!("{why}: {n}")).collect();
    println!("enumeration stopped on {}", stops.join(", "));
    let every = solutions.len() <= 20;
    for s in solutions {
        if let Some(e) = &s.error {
            println!("  {}: {e}", s.task);
        } else if every {
            match s.chosen.first() {
                Some(c) => println!(
                    "  {}: {} ({} candidates, {:.2} s)",
                    s.task, c.origin, s.candidates, s.seconds
                ),
                None => println!("  {}: no program fits the train pairs ({:.2} s)", s.task, s.seconds),
            }
        }
    }
    let placeholders: Vec<String> = solutions
        .iter()
        .filter(|s| s.chosen.is_empty())
        .map(|s| s.task.clone())
        .collect();
    if !every {
        list("tasks given placeholders", &placeholders);
    }
}

/// Each task's chosen programs: `DIR/attempt_1/<task>.py` and `DIR/attempt_2/<task>.py`, each
/// a `solve_<task>` that `arcbatch run --solvers DIR/attempt_1` runs.
fn write_programs(dir: &Path, solutions: &[Solution]) -> Result<(), Failure> {
    for (k, attempt) in ["attempt_1", "attempt_2"].iter().enumerate() {
        let folder = dir.join(attempt);
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for s in solutions {
            if let Some(c) = s.chosen.get(k) {
                let path = folder.join(format!("{}.py", s.task));
                let text = format!("# {}\n{}", c.origin, c.program);
                std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn score_line(s: &Score) -> String {
    format!(
        "{} of {} tasks solved, score {:.2} ({:.1} %), {} of {} test outputs hit",
        s.tasks_solved,
        s.tasks,
        s.points,
        100.0 * s.points / s.tasks.max(1) as f64,
        s.hits,
        s.test_inputs
    )
}

/// `arcbatch score`: a submission against a Kaggle solutions file, or against the test outputs
/// of tasks in any layout `run` reads.
pub fn score_files(submission: &Path, solutions: &Path) -> Result<(), Failure> {
    let read = |p: &Path| -> Result<serde_json::Value, Failure> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?)
    };
    let sub = read(submission)?;
    let sol = if solutions.is_dir() || !is_solutions_file(&read(solutions)?) {
        solutions_json(&tasks::load(solutions)?.tasks)
    } else {
        read(solutions)?
    };
    let s = score(&sub, &sol)?;
    println!("{}", score_line(&s));
    list("tasks missing from the submission", &s.missing);
    Ok(())
}

/// Kaggle's solutions form: every entry a list of grids (a task file's entries are objects).
fn is_solutions_file(json: &serde_json::Value) -> bool {
    json.as_object().is_some_and(|m| {
        m.values()
            .all(|v| v.as_array().is_some_and(|l| l.iter().all(|g| g.is_array())))
    })
}
