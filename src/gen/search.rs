//! The search loop: rounds of generate → evaluate (every program on every task) → harvest. A
//! program (a library solver or a mutant) that solves every train and test pair of a task is
//! kept as a standalone solver in the reference syntax, `def solve_<task>(I):` (or
//! `(S, I, C)` when it reads the training pairs), deduplicated by its normalised text
//! ([`super::normalised`]) against everything harvested before, the files already in the
//! output folder included. A program that reads `C` (the expected output) is never kept.
//!
//! Evaluation is staged and chunked ([`crate::batt::staged`]): under the search's budgets, in
//! chunks sized to a memory budget, each program on a task's other samples only where its
//! output on the first train pair was right. Candidates whose outputs are identical on every
//! sample evaluated are observationally equivalent: the search keeps the shortest of each
//! such class (fewest steps, then the first) and counts the others.
//!
//! A round's evaluation splits: [`evaluate`] takes a part of the round's plan (a run of its
//! programs, [`Plan::part`]) as well as the whole, and the parts' results join
//! ([`Evaluated::join`]) into the whole round's, which [`Harvest::round`] harvests. That is
//! how the Python module's `arcbatch.ray` spreads a round over a cluster, and harvests
//! exactly what `arcbatch search` harvests.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::{generate, normalised, Candidate, GenError, Options};
use crate::batch::Backend;
use crate::batt::staged::{Seen, Staged, Staging};
use crate::batt::{Config, Merged, Plan, PlanError};
use crate::dsl::Value;
use crate::program::{parse_file, Operand, Program};
use crate::rng::Rng;
use crate::tasks::Task;

/// What one round did.
#[derive(Clone, Debug, Default)]
pub struct Round {
    /// Programs evaluated (solvers and mutants).
    pub programs: usize,
    /// Lanes (samples of all tasks) each program ran on.
    pub lanes: usize,
    /// Steps after merging.
    pub steps: usize,
    /// Seconds generating, and evaluating and scoring.
    pub gen_seconds: f64,
    pub eval_seconds: f64,
    /// Programs evaluated: all of them, unless the deadline came first.
    pub evaluated: usize,
    /// (program, sample) pairs evaluated (with early exit, fewer than programs x lanes).
    pub program_samples: u64,
    /// (program, task) pairs right on the task's first train pair, and so evaluated on its
    /// other samples (with early exit).
    pub alive: usize,
    /// Chunks the programs were evaluated in.
    pub chunks: usize,
    /// Programs that ran past the time budget on some sample, and that made a value past the
    /// size budget on some sample.
    pub timed_out: usize,
    pub too_large: usize,
    /// Programs observationally equivalent to a shorter (or earlier) one of the round, and so
    /// not harvested.
    pub equivalent: usize,
    /// Whether the deadline stopped the round before every program was evaluated.
    pub stopped: bool,
    /// (program, task) runs that solved their task (before deduplication), programs
    /// equivalent to another one left out.
    pub solving: usize,
    /// New harvested solutions, as (task, file).
    pub new: Vec<(String, PathBuf)>,
    /// Of those, the ones that are not a library solver on its own task (a mutant, or a
    /// solver solving another task).
    pub novel: usize,
}

/// Harvested solvers by task: their normalised texts, and the folder they are written to.
pub struct Harvest {
    dir: PathBuf,
    seen: BTreeMap<String, BTreeSet<String>>,
}

impl Harvest {
    /// A harvest writing to `dir` (created if missing), knowing the solvers already there.
    pub fn open(dir: &Path) -> Result<Harvest, GenError> {
        std::fs::create_dir_all(dir).map_err(GenError::write(dir))?;
        let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let entries = std::fs::read_dir(dir).map_err(GenError::read(dir))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        files.sort();
        for f in files {
            let source = std::fs::read_to_string(&f).map_err(GenError::read(&f))?;
            let programs = parse_file(&f.display().to_string(), &source)?;
            for p in programs {
                if let Some(task) = p.task_id() {
                    seen.entry(task.to_string()).or_default().insert(normalised(&p));
                }
            }
        }
        Ok(Harvest {
            dir: dir.to_path_buf(),
            seen,
        })
    }

    /// Distinct solvers known, over all tasks.
    pub fn solutions(&self) -> usize {
        self.seen.values().map(BTreeSet::len).sum()
    }

    /// Tasks with at least one solver.
    pub fn tasks(&self) -> usize {
        self.seen.len()
    }

    /// Keeps `program` as a solver of `task` unless an equal one is known; the file it went
    /// to when it is new.
    fn keep(&mut self, program: &Program, task: &str, note: &str) -> Result<Option<PathBuf>, GenError> {
        let mut p = program.clone();
        p.name = format!("solve_{task}");
        let text = normalised(&p);
        if !self.seen.entry(task.to_string()).or_default().insert(text.clone()) {
            return Ok(None);
        }
        let path = self.dir.join(format!("{task}.py"));
        let mut content = if path.exists() {
            std::fs::read_to_string(&path).map_err(GenError::read(&path))?
        } else {
            "from dsl import *\nfrom constants import *\n".to_string()
        };
        let def = text.replacen("def solve(", &format!("def solve_{task}("), 1);
        content += &format!("\n\n# {note}\n{def}");
        std::fs::write(&path, content).map_err(GenError::write(&path))?;
        Ok(Some(path))
    }
}

/// Whether a program reads `C`, the expected output (which no real solver may).
fn reads_expected(p: &Program) -> bool {
    let Some(c) = p.params.iter().position(|n| n == "C") else {
        return false;
    };
    let c = Operand::Param(c as u8);
    p.steps.iter().any(|s| s.args.contains(&c)) || p.output == c
}

/// The seed of round `round` (from 0) of a search seeded `seed`.
pub fn round_seed(seed: u64, round: usize) -> u64 {
    let mut rng = Rng::new(seed);
    (0..round).for_each(|_| {
        rng.next_u64();
    });
    rng.next_u64()
}

/// The label of round `round` (from 0) of a search seeded `seed`, in progress lines and in the
/// notes of the solvers it harvests.
pub fn round_label(seed: u64, round: usize) -> String {
    format!("round {} of seed {seed}", round + 1)
}

/// How a round evaluates: its staging, and when to stop.
pub struct Budgets<'a> {
    pub staging: Staging,
    /// The memory budget in bytes: sets the chunk size ([`Plan::chunk_for`]) when given.
    pub memory: Option<u64>,
    /// Asked before each chunk: once it says so, the round ends with what it has.
    pub stop: &'a (dyn Fn() -> bool + Sync),
}

impl<'a> Budgets<'a> {
    /// A search's budgets: every step capped at `max_size` members, chunks sized to
    /// `memory_mb`, the first train pairs first unless `early_exit` is off.
    pub fn search(
        early_exit: bool,
        max_size: usize,
        memory_mb: u64,
        stop: &'a (dyn Fn() -> bool + Sync),
    ) -> Budgets<'a> {
        Budgets {
            staging: Staging {
                chunk: 1,
                early_exit,
                max_size: Some(max_size),
            },
            memory: Some(memory_mb << 20),
            stop,
        }
    }
}

/// What evaluating a round's programs, or a run of them, found: all the harvest needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluated {
    pub staged: Staged,
    /// Each program's signature: the (wrapping) sum of [`output_hash`] over the samples it was
    /// evaluated on, so that programs with identical outputs share it.
    pub signatures: Vec<u64>,
}

impl Evaluated {
    /// The evaluation of a plan's programs from those of its parts, in order, each a run of
    /// the next programs on every task ([`Plan::part`]): what evaluating them together gives,
    /// but for the chunks and seconds, which are summed. A part the deadline stopped ends the
    /// join: the programs after it count as not evaluated.
    pub fn join(parts: impl IntoIterator<Item = Evaluated>) -> Evaluated {
        let mut out = Evaluated::default();
        for part in parts {
            if out.staged.stopped {
                break;
            }
            let (offset, s) = (out.signatures.len(), part.staged);
            out.staged.solved.extend(s.solved.iter().map(|&(k, t)| (offset + k, t)));
            out.staged.solvers = offset + s.solvers;
            out.staged.program_samples += s.program_samples;
            out.staged.alive += s.alive;
            out.staged.timed_out += s.timed_out;
            out.staged.too_large += s.too_large;
            out.staged.chunks += s.chunks;
            out.staged.stopped = s.stopped;
            out.staged.seconds += s.seconds;
            out.signatures.extend(part.signatures);
        }
        out
    }
}

/// The plan of a round: every program generated on every task.
pub fn round_plan(merged: Merged, tasks: &[Task]) -> Result<Plan<'_>, PlanError> {
    Plan::from_merged(
        merged,
        tasks,
        Config {
            cross: true,
            no_merge: false,
        },
    )
}

/// Evaluates every program of `plan` (a round's, [`round_plan`], or a part of one,
/// [`Plan::part`]) on its tasks within `budgets`.
pub fn evaluate(plan: &Plan<'_>, backend: &dyn Backend, budgets: &Budgets<'_>) -> Evaluated {
    let mut staging = budgets.staging;
    if let Some(bytes) = budgets.memory {
        staging.chunk = plan.chunk_for(bytes, staging.early_exit);
    }
    let signatures: Vec<AtomicU64> = (0..plan.solvers()).map(|_| AtomicU64::new(0)).collect();
    let sink = |seen: Seen<'_>| {
        signatures[seen.solver].fetch_add(output_hash(&seen), Ordering::Relaxed);
    };
    let staged = plan.run_staged(backend, &staging, budgets.stop, &sink);
    Evaluated {
        staged,
        signatures: signatures.into_iter().map(AtomicU64::into_inner).collect(),
    }
}

/// One round: generates with `options` (its seed already the round's), evaluates every
/// program on every task within `budgets`, and harvests the solvers.
pub fn round(
    library: &[Program],
    options: &Options,
    tasks: &[Task],
    backend: &dyn Backend,
    budgets: &Budgets<'_>,
    harvest: &mut Harvest,
    label: &str,
) -> Result<Round, GenError> {
    let started = Instant::now();
    let generated = generate(library, &[], options)?;
    let gen_seconds = started.elapsed().as_secs_f64();
    let steps = generated.merged.steps_merged();
    let plan = round_plan(generated.merged, tasks)?;
    let evaluated = evaluate(&plan, backend, budgets);
    Ok(Round {
        lanes: plan.lanes(),
        steps,
        gen_seconds,
        ..harvest.round(&generated.candidates, &evaluated, tasks, label)?
    })
}

impl Harvest {
    /// Harvests what evaluating a round's programs `candidates` on `tasks` found (`evaluated`,
    /// whole or joined from parts, [`Evaluated::join`]): the round's counts and new solutions.
    /// Of each class of observationally equivalent programs only the shortest is kept. The
    /// round's lanes, steps and generation time are left for the caller.
    pub fn round(
        &mut self,
        candidates: &[Candidate],
        evaluated: &Evaluated,
        tasks: &[Task],
        label: &str,
    ) -> Result<Round, GenError> {
        let staged = &evaluated.staged;
        let fits = evaluated.signatures.len() == candidates.len()
            && staged.solvers <= candidates.len()
            && staged
                .solved
                .iter()
                .all(|&(k, t)| k < staged.solvers && t < tasks.len());
        if !fits {
            return Err(GenError::RoundMismatch {
                signatures: evaluated.signatures.len(),
                evaluated: staged.solvers,
                programs: candidates.len(),
                tasks: tasks.len(),
            });
        }
        let kept = representatives(&candidates[..staged.solvers], &evaluated.signatures);
        let mut r = Round {
            programs: candidates.len(),
            eval_seconds: staged.seconds,
            evaluated: staged.solvers,
            program_samples: staged.program_samples,
            alive: staged.alive,
            chunks: staged.chunks,
            timed_out: staged.timed_out,
            too_large: staged.too_large,
            equivalent: (0..staged.solvers)
                .filter(|&k| !kept[k] && !reads_expected(&candidates[k].program))
                .count(),
            stopped: staged.stopped,
            ..Round::default()
        };
        for &(k, t) in &staged.solved {
            let c = &candidates[k];
            if !kept[k] {
                continue;
            }
            r.solving += 1;
            let what = match &c.origin.mutation {
                Some(m) => format!("mutation {m}"),
                None => "as written".to_string(),
            };
            let note = format!("arcbatch search {label}: from {}; {what}", c.origin.from);
            let task = &tasks[t].id;
            if let Some(path) = self.keep(&c.program, task, &note)? {
                let own = c.origin.mutation.is_none() && c.program.task_id() == Some(task.as_str());
                r.novel += !own as usize;
                r.new.push((task.clone(), path));
            }
        }
        Ok(r)
    }
}

/// A hash of one output on one sample: a candidate's signature is the sum of these over the
/// samples it was evaluated on, so candidates with identical outputs share it.
fn output_hash(seen: &Seen<'_>) -> u64 {
    let mut h = DefaultHasher::new();
    (seen.task, seen.sample).hash(&mut h);
    match seen.result {
        Some(Ok(Value::Grid(g))) => (0u8, g.as_ref()).hash(&mut h),
        Some(Ok(v)) => spelled(&mut h, 1, v),
        Some(Err(e)) => spelled(&mut h, 2, e),
        None => 3u8.hash(&mut h),
    }
    h.finish()
}

/// Hashes a tag and how `x` is spelled, as the hasher receives it piece by piece (no string
/// is built: outputs are hashed by the hundred thousand in a search).
fn spelled(h: &mut DefaultHasher, tag: u8, x: &dyn fmt::Display) {
    struct Feed<'a>(&'a mut DefaultHasher);
    impl fmt::Write for Feed<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    tag.hash(h);
    // Writing into a hasher cannot fail.
    let _ = write!(Feed(h), "{x}");
}

/// Which candidates represent their observational-equivalence class (equal signatures): the
/// one with the fewest steps, the first of those on a tie. Programs that read `C` represent
/// nothing (they are never kept).
fn representatives(candidates: &[Candidate], signatures: &[u64]) -> Vec<bool> {
    let mut best: HashMap<u64, usize> = HashMap::new();
    for (k, c) in candidates.iter().enumerate() {
        if reads_expected(&c.program) {
            continue;
        }
        let b = best.entry(signatures[k]).or_insert(k);
        if c.program.steps.len() < candidates[*b].program.steps.len() {
            *b = k;
        }
    }
    let mut kept = vec![false; candidates.len()];
    for &k in best.values() {
        kept[k] = true;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::LaneResult;
    use crate::program::parse_program;

    #[test]
    fn a_program_reading_the_expected_output_is_never_kept() {
        let p = parse_program("t.py", "def solve(S, I, C):\n    O = identity(C)\n    return O\n").unwrap();
        assert!(reads_expected(&p));
        let q = parse_program("t.py", "def solve(S, I, C):\n    O = identity(I)\n    return O\n").unwrap();
        assert!(!reads_expected(&q));
        assert_ne!(round_seed(1, 0), round_seed(1, 1));
        assert_eq!(round_seed(1, 3), round_seed(1, 3));
    }

    fn candidate(source: &str) -> Candidate {
        Candidate {
            program: parse_program("t.py", source).unwrap(),
            origin: crate::batt::text::Origin {
                from: "t".into(),
                mutation: None,
            },
        }
    }

    /// Of candidates with one signature, the one with the fewest steps is kept (the first of
    /// those on a tie); a candidate reading `C` never is, whatever its signature.
    #[test]
    fn the_shortest_of_equivalent_candidates_is_kept() {
        let long = "def solve(S, I, C):\n    x1 = identity(I)\n    O = identity(x1)\n    return O\n";
        let short = "def solve(S, I, C):\n    O = identity(I)\n    return O\n";
        let cheat = "def solve(S, I, C):\n    O = identity(C)\n    return O\n";
        let cs: Vec<Candidate> = [long, short, short, long, cheat, cheat].map(candidate).into();
        let kept = representatives(&cs, &[7, 7, 7, 9, 7, 11]);
        assert_eq!(kept, [false, true, false, true, false, false]);
    }

    /// Equal outputs on the same sample hash alike; another sample, output or error does not.
    #[test]
    fn output_hashes_tell_outputs_and_samples_apart() {
        let grid = |c: i32| -> LaneResult { Ok(Value::grid(crate::dsl::Grid::filled(2, 2, c))) };
        let (a, b) = (grid(1), grid(2));
        let err: LaneResult = Err(crate::dsl::DslError::Timeout);
        let h = |task, sample, result| {
            output_hash(&Seen {
                solver: 0,
                task,
                sample,
                result,
            })
        };
        let same = grid(1);
        assert_eq!(h(0, 0, Some(&a)), h(0, 0, Some(&same)));
        let others = [
            h(0, 0, Some(&b)),
            h(0, 1, Some(&a)),
            h(1, 0, Some(&a)),
            h(0, 0, Some(&err)),
            h(0, 0, None),
        ];
        assert!(others.iter().all(|&x| x != h(0, 0, Some(&a))));
    }
}
