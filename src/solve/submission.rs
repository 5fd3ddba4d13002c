//! Kaggle's ARC Prize submission, written and scored.
//!
//! The format: `{task: [{"attempt_1": grid, "attempt_2": grid}, ...]}`, one entry per test
//! input in the task's order. A test input without a candidate gets itself as both attempts
//! (a valid placeholder). The score is the ARC Prize's: a test input counts when either
//! attempt equals its output, a task contributes the fraction of its test inputs counted, and
//! the total is over the tasks of the solutions file.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::Solution;
use crate::tasks::{grid_json, parse_grid, Task};

/// The submission for `tasks` from their solutions (matched by task id), and the test inputs
/// given a placeholder, as `<task>[<k>]`.
pub fn submission_json(tasks: &[Task], solutions: &[Solution]) -> (Json, Vec<String>) {
    let by_task: BTreeMap<&str, &Solution> = solutions.iter().map(|s| (s.task.as_str(), s)).collect();
    let mut placeholders = Vec::new();
    let mut out = serde_json::Map::new();
    for task in tasks {
        let attempts: Vec<Json> = task
            .test
            .iter()
            .enumerate()
            .map(|(k, ex)| {
                let [a, b] = by_task
                    .get(task.id.as_str())
                    .and_then(|s| s.attempts(k))
                    .unwrap_or_else(|| {
                        placeholders.push(format!("{}[{k}]", task.id));
                        [ex.input.clone(), ex.input.clone()]
                    });
                json!({"attempt_1": grid_json(&a), "attempt_2": grid_json(&b)})
            })
            .collect();
        out.insert(task.id.clone(), Json::Array(attempts));
    }
    (Json::Object(out), placeholders)
}

/// A submission's score against the solutions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Score {
    /// The ARC Prize score: per task, the fraction of its test inputs hit, summed.
    pub points: f64,
    /// Tasks whose every test input was hit.
    pub tasks_solved: usize,
    /// Tasks in the solutions.
    pub tasks: usize,
    /// Test inputs hit, of all.
    pub hits: usize,
    pub test_inputs: usize,
    /// Tasks of the solutions the submission lacks.
    pub missing: Vec<String>,
}

/// Why a submission or solutions file cannot be scored.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("{what}: expected an object of task ids")]
    NotAnObject { what: &'static str },
    #[error("{what}, task {task}: {problem}")]
    Task {
        what: &'static str,
        task: String,
        problem: String,
    },
}

/// Scores a submission against solutions in Kaggle's `{task: [grid, ...]}` form.
pub fn score(submission: &Json, solutions: &Json) -> Result<Score, ScoreError> {
    let sub = submission
        .as_object()
        .ok_or(ScoreError::NotAnObject { what: "the submission" })?;
    let sol = solutions
        .as_object()
        .ok_or(ScoreError::NotAnObject { what: "the solutions" })?;
    let mut score = Score::default();
    for (task, outputs) in sol {
        let problem = |what, problem: String| ScoreError::Task {
            what,
            task: task.clone(),
            problem,
        };
        let outputs = outputs
            .as_array()
            .ok_or_else(|| problem("the solutions", "expected a list of grids".into()))?;
        score.tasks += 1;
        score.test_inputs += outputs.len();
        let Some(entries) = sub.get(task) else {
            score.missing.push(task.clone());
            continue;
        };
        let entries = entries
            .as_array()
            .ok_or_else(|| problem("the submission", "expected a list of attempts".into()))?;
        let mut hits = 0;
        for (k, expected) in outputs.iter().enumerate() {
            let expected = parse_grid(expected).map_err(|e| problem("the solutions", format!("output {k}: {e}")))?;
            let hit = entries.get(k).is_some_and(|entry| {
                ["attempt_1", "attempt_2"].iter().any(|a| {
                    entry
                        .get(a)
                        .and_then(|g| parse_grid(g).ok())
                        .is_some_and(|g| g == expected)
                })
            });
            hits += hit as usize;
        }
        score.hits += hits;
        if !outputs.is_empty() {
            score.points += hits as f64 / outputs.len() as f64;
            score.tasks_solved += (hits == outputs.len()) as usize;
        }
    }
    Ok(score)
}

/// Kaggle's solutions form of the tasks whose test outputs are known: `{task: [grid, ...]}`.
pub fn solutions_json(tasks: &[Task]) -> Json {
    let mut out = serde_json::Map::new();
    for task in tasks.iter().filter(|t| !t.test.is_empty()) {
        let outputs: Option<Vec<Json>> = task.test.iter().map(|ex| ex.output.as_deref().map(grid_json)).collect();
        if let Some(outputs) = outputs {
            out.insert(task.id.clone(), Json::Array(outputs));
        }
    }
    Json::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn either_attempt_counts_and_tasks_score_by_fraction() {
        let solutions = json!({"a": [[[1]], [[2]]], "b": [[[3]]], "c": [[[4]]]});
        let submission = json!({
            "a": [{"attempt_1": [[0]], "attempt_2": [[1]]}, {"attempt_1": [[0]], "attempt_2": [[0]]}],
            "b": [{"attempt_1": [[3]], "attempt_2": [[0]]}],
        });
        let s = score(&submission, &solutions).unwrap();
        assert_eq!((s.tasks, s.tasks_solved, s.hits, s.test_inputs), (3, 1, 2, 4));
        assert!((s.points - 1.5).abs() < 1e-9);
        assert_eq!(s.missing, vec!["c".to_string()]);
    }

    #[test]
    fn malformed_files_are_named() {
        let err = score(&json!([]), &json!({})).unwrap_err();
        assert!(err.to_string().contains("the submission"));
        let err = score(&json!({}), &json!({"t": 3})).unwrap_err();
        assert!(err.to_string().contains("task t"));
    }
}
