//! The search loop: rounds of generate → evaluate (batt, every program on every task) →
//! harvest. A program (a library solver or a mutant) that solves every train and test pair of
//! a task is kept as a standalone solver in the reference syntax, `def solve_<task>(I):` (or
//! `(S, I, C)` when it reads the training pairs), deduplicated by its normalised text
//! ([`super::normalised`]) against everything harvested before, the files already in the
//! output folder included. A program that reads `C` (the expected output) is never kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::rng::Rng;
use super::{generate, normalised, Candidate, Options};
use crate::batch::Backend;
use crate::batt::{Config, Plan};
use crate::program::{parse_file, Operand, Program};
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
    /// Programs that solved some task (before deduplication).
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
    pub fn open(dir: &Path) -> Result<Harvest, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect();
        files.sort();
        for f in files {
            let source = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            let programs = parse_file(&f.display().to_string(), &source).map_err(|e| e.to_string())?;
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
    fn keep(&mut self, program: &Program, task: &str, note: &str) -> Result<Option<PathBuf>, String> {
        let mut p = program.clone();
        p.name = format!("solve_{task}");
        let text = normalised(&p);
        if !self.seen.entry(task.to_string()).or_default().insert(text.clone()) {
            return Ok(None);
        }
        let path = self.dir.join(format!("{task}.py"));
        let mut content = if path.exists() {
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            "from dsl import *\nfrom constants import *\n".to_string()
        };
        let def = text.replacen("def solve(", &format!("def solve_{task}("), 1);
        content += &format!("\n\n# {note}\n{def}");
        std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
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

/// One round: generates with `options` (its seed already the round's), evaluates every
/// program on every task, and harvests the solvers.
pub fn round(
    library: &[Program],
    options: &Options,
    tasks: &[Task],
    backend: &dyn Backend,
    harvest: &mut Harvest,
    label: &str,
) -> Result<Round, String> {
    let started = Instant::now();
    let generated = generate(library, &[], options)?;
    let gen_seconds = started.elapsed().as_secs_f64();
    // Programs are planned under their index, so that a match names its candidate.
    let mut merged = generated.merged;
    for (k, s) in merged.solvers.iter_mut().enumerate() {
        s.name = k.to_string();
    }
    let steps = merged.steps_merged();
    let plan = Plan::from_merged(
        merged,
        tasks,
        Config {
            cross: true,
            no_merge: false,
        },
    )?;
    let report = plan.run(backend, &|| {});
    let mut r = Round {
        programs: generated.candidates.len(),
        lanes: plan.lanes(),
        steps,
        gen_seconds,
        eval_seconds: report.seconds,
        ..Round::default()
    };
    for m in report.matches.iter().filter(|m| m.solved()) {
        let Some(c): Option<&Candidate> = m.solver.parse::<usize>().ok().and_then(|k| generated.candidates.get(k))
        else {
            continue;
        };
        if reads_expected(&c.program) {
            continue;
        }
        r.solving += 1;
        let what = match &c.origin.mutation {
            Some(m) => format!("mutation {m}"),
            None => "as written".to_string(),
        };
        let note = format!("arcbatch search {label}: from {}; {what}", c.origin.from);
        if let Some(path) = harvest.keep(&c.program, &m.task, &note)? {
            let own = c.origin.mutation.is_none() && c.program.task_id() == Some(m.task.as_str());
            r.novel += !own as usize;
            r.new.push((m.task.clone(), path));
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
