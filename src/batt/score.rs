//! Scoring: for each (solver, task), how many samples the solver's output matches exactly, and
//! each differ's score on each sample.

use super::eval::{Evaluation, Lanes};
use super::merge::Merged;
use crate::dsl::Value;
use crate::run::Tally;

/// One solver on one task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub solver: String,
    pub task: String,
    /// Samples whose output equals the expected output.
    pub correct: usize,
    /// Samples with an expected output.
    pub pairs: usize,
    /// Each differ's score on each sample with an expected output (`None` where the differ
    /// raised or gave no integer), by differ name.
    pub differs: Vec<(String, Vec<Option<i64>>)>,
    /// The first error met on any sample, if one raised.
    pub error: Option<String>,
}

impl Match {
    pub fn solved(&self) -> bool {
        self.pairs > 0 && self.correct == self.pairs
    }
}

/// The (task, solver) pairs of `solver_tasks`, ordered by task then solver: the order of
/// [`score`]'s matches.
pub fn jobs(solver_tasks: &[Vec<u32>]) -> Vec<(u32, usize)> {
    let mut jobs: Vec<(u32, usize)> = solver_tasks
        .iter()
        .enumerate()
        .flat_map(|(k, tasks)| tasks.iter().map(move |&t| (t, k)))
        .collect();
    jobs.sort_unstable();
    jobs
}

/// Scores every solver on its tasks, ordered by task then solver.
pub fn score(
    merged: &Merged,
    names: &[String],
    lanes: &Lanes<'_>,
    solver_tasks: &[Vec<u32>],
    eval: &Evaluation,
) -> Vec<Match> {
    jobs(solver_tasks)
        .into_iter()
        .map(|(t, k)| {
            let t = t as usize;
            let solver = &merged.solvers[k];
            let mut tally = Tally::new();
            let mut differs: Vec<(String, Vec<Option<i64>>)> =
                merged.differ_names.iter().map(|d| (d.clone(), Vec::new())).collect();
            for s in 0..lanes.samples(t) {
                let out = eval.outcome(&solver.outcome, t, s);
                let expected = &lanes.expected[lanes.lane(t, s)];
                tally.add(out.map(Result::as_ref), expected);
                if *expected == Value::None {
                    continue;
                }
                for (d, (_, scores)) in solver.differs.iter().zip(&mut differs) {
                    let score = eval
                        .outcome(d, t, s)
                        .and_then(|r| r.as_ref().ok())
                        .and_then(|v| v.as_int().ok());
                    scores.push(score);
                }
            }
            Match {
                solver: names[k].clone(),
                task: lanes.tasks[t].id.clone(),
                correct: tally.correct,
                pairs: tally.pairs,
                differs,
                error: tally.error.map(|e| e.to_string()),
            }
        })
        .collect()
}
