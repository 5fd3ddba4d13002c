//! `arcbatch solve`: programs found for tasks without their solvers, chosen without the test
//! outputs, reproduced by the interpreter and by the reference `dsl.py`; the submission, the
//! budget, determinism and bad input.

mod shared;

use arcbatch::dsl::shared::Shared;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use arcbatch::batch::{Backend, CpuBackend};
use arcbatch::device::DeviceBackend;
use arcbatch::dsl::Grid;
use arcbatch::embedded::demo_tasks;
use arcbatch::program::parse_program;
use arcbatch::run::run_on_task;
use arcbatch::solve::enumerate::{Budget, Enumerator};
use arcbatch::solve::prior::USES;
use arcbatch::solve::submission::submission_json;
use arcbatch::solve::{solve_all, Config, Problem, Solution};
use arcbatch::tasks::{Example, Task};

/// Evaluations per task in the deterministic tests: enough for most demo tasks (at 150,000,
/// 6 of 6 fit their train pairs and 5 their test outputs; at 40,000, 2 of 6).
const EVALUATIONS: u64 = 150_000;

fn config() -> Config {
    Config {
        until: Instant::now() + Duration::from_secs(600),
        max_evaluations: Some(EVALUATIONS),
        memory_bytes: 512 << 20,
        library_timeout: Duration::from_millis(200),
    }
}

fn solve(tasks: &[Task]) -> Vec<Solution> {
    solve_all(tasks, &[], &config(), None, &|_| {})
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arcbatch-solve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cli(args: &[&str], dir: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_demo_tasks_are_solved_without_their_solvers() {
    let tasks = demo_tasks().tasks;
    let solutions = solve(&tasks);
    let mut right = 0;
    for (task, s) in tasks.iter().zip(&solutions) {
        assert!(s.error.is_none(), "{}: {:?}", task.id, s.error);
        let hit = task.test.iter().enumerate().all(|(k, ex)| {
            s.attempts(k)
                .is_some_and(|a| a.iter().any(|g| Some(g) == ex.output.as_ref()))
        });
        right += hit as usize;
    }
    // The mirror and the crop are found within the budget every time; most others too.
    assert!(right >= 3, "only {right} demo tasks solved");
}

#[test]
fn test_outputs_wrong_or_missing_give_the_same_submission() {
    let tasks = demo_tasks().tasks;
    let strip = |wrong: bool| -> Vec<Task> {
        tasks
            .iter()
            .map(|t| Task {
                test: t
                    .test
                    .iter()
                    .map(|ex| Example {
                        input: ex.input.clone(),
                        output: wrong.then(|| Shared::new(Grid::filled(3, 3, 7))),
                    })
                    .collect(),
                ..t.clone()
            })
            .collect()
    };
    let (hidden, wrong) = (strip(false), strip(true));
    let sub = |tasks: &[Task]| submission_json(tasks, &solve(tasks)).0;
    let reference = sub(&tasks);
    assert_eq!(sub(&hidden), reference);
    assert_eq!(sub(&wrong), reference);
}

#[test]
fn chosen_programs_reproduce_the_train_outputs_in_the_interpreter() {
    let tasks = demo_tasks().tasks;
    let solutions = solve(&tasks);
    let mut checked = 0;
    for (task, s) in tasks.iter().zip(&solutions) {
        for c in &s.chosen {
            let program = parse_program("chosen", &c.program).unwrap_or_else(|e| panic!("{e}\n{}", c.program));
            let train_only = Task {
                test: Vec::new(),
                ..task.clone()
            };
            let r = run_on_task(&program, &train_only, Some(Duration::from_secs(5)));
            assert_eq!(r.correct, task.train.len(), "{}:\n{}", task.id, c.program);
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} programs chosen");
}

/// The chosen programs of the demo tasks run by CPython's `dsl.py` on the train inputs.
#[test]
fn chosen_programs_reproduce_the_train_outputs_in_the_reference() {
    let Some(reference) = shared::shared("ref/arc-dsl") else {
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        panic!("python3 is needed to run the reference dsl.py");
    }
    let tasks = demo_tasks().tasks;
    let solutions = solve(&tasks);
    let mut script = format!(
        "import sys\nsys.path.insert(0, {:?})\nfrom dsl import *\nfrom constants import *\nchecked = 0\n",
        reference.display().to_string()
    );
    for (task, s) in tasks.iter().zip(&solutions) {
        for c in &s.chosen {
            script.push_str(&c.program);
            for ex in &task.train {
                let grid = |g: &Grid| {
                    let rows: Vec<String> = (0..g.h)
                        .map(|i| {
                            format!(
                                "({},)",
                                g.row(i).iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
                            )
                        })
                        .collect();
                    format!("({},)", rows.join(", "))
                };
                let out = ex.output.as_ref().unwrap();
                script.push_str(&format!(
                    "assert solve_{}({}) == {}, {:?}\nchecked += 1\n",
                    task.id,
                    grid(&ex.input),
                    grid(out),
                    c.program
                ));
            }
        }
    }
    script.push_str("print(checked)\n");
    let out = Command::new("python3").arg("-c").arg(&script).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let checked: usize = stdout.trim().parse().unwrap();
    assert!(checked >= 6, "only {checked} train outputs checked");
}

#[test]
fn max_candidates_gives_the_same_submission_on_one_thread_and_two() {
    let dir = temp_dir("threads");
    let run = |threads: &str| {
        let sub = format!("sub{threads}.json");
        let (ok, stdout, stderr) = cli(
            &[
                "solve",
                "--max-candidates",
                "20000",
                "--minutes",
                "10",
                "--threads",
                threads,
                "--submission",
                &sub,
            ],
            &dir,
        );
        assert!(ok, "{stdout}{stderr}");
        std::fs::read_to_string(dir.join(sub)).unwrap()
    };
    assert_eq!(run("1"), run("2"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The enumeration's nodes (how each was computed, and its values) and its candidates.
fn enumerated(problem: &Problem, backend: Option<&dyn Backend>) -> (Vec<String>, usize) {
    let budget = Budget {
        until: Instant::now() + Duration::from_secs(600),
        max_evaluations: Some(20_000),
        max_bytes: 1 << 30,
        max_resident: usize::MAX,
    };
    let mut e = Enumerator::new(&problem.train, &problem.test);
    e.run(&budget, usize::MAX, backend);
    let nodes = e.nodes.iter().map(|n| format!("{:?} {:?}", n.expr, n.col)).collect();
    (nodes, e.candidates.len())
}

/// With a backend, each primitive's calls run batched (here on the emulated device, two of
/// them, sharding from 8 lanes): the same nodes in the same order, so the same candidates.
#[test]
fn batched_enumeration_keeps_the_nodes_of_calls_one_at_a_time() {
    let mut tasks = demo_tasks().tasks;
    if let Some(dir) = shared::shared("arc/evaluation") {
        let evaluation = arcbatch::tasks::load(&dir).expect("the evaluation tasks");
        tasks.extend(evaluation.tasks.into_iter().step_by(20));
    }
    let emu = DeviceBackend::emu(2, CpuBackend::default())
        .expect("emulated devices")
        .with_shard_threshold(8);
    for task in &tasks {
        let problem = Problem::of(task).expect("a task with train pairs and test inputs");
        let (one_at_a_time, batched) = (enumerated(&problem, None), enumerated(&problem, Some(&emu)));
        assert_eq!(one_at_a_time.1, batched.1, "{}: candidates", task.id);
        if let Some(k) = (0..one_at_a_time.0.len()).find(|&k| one_at_a_time.0.get(k) != batched.0.get(k)) {
            panic!(
                "{}: node {k}: {:?} one at a time, {:?} batched",
                task.id,
                one_at_a_time.0[k],
                batched.0.get(k)
            );
        }
        assert_eq!(one_at_a_time.0.len(), batched.0.len(), "{}", task.id);
    }
    assert_eq!(emu.fallbacks(), 0);
}

#[test]
fn the_emulated_backend_gives_the_cpus_submission() {
    let dir = temp_dir("backend");
    let run = |backend: &str| {
        let sub = format!("sub-{backend}.json");
        let args = [
            "solve",
            "--max-candidates",
            "20000",
            "--minutes",
            "10",
            "--backend",
            backend,
        ];
        let (ok, stdout, stderr) = cli(&[&args[..], &["--submission", &sub]].concat(), &dir);
        assert!(ok, "{stdout}{stderr}");
        assert!(stderr.contains(&format!("{backend} backend")), "{stderr}");
        std::fs::read_to_string(dir.join(sub)).unwrap()
    };
    assert_eq!(run("cpu"), run("emu"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn minutes_bound_the_run() {
    let dir = temp_dir("minutes");
    let started = Instant::now();
    let (ok, stdout, stderr) = cli(&["solve", "--minutes", "0.05", "--submission", "sub.json"], &dir);
    let seconds = started.elapsed().as_secs_f64();
    assert!(ok, "{stdout}{stderr}");
    // 3 s of budget; the process start, the last programs' verification and writing the
    // files come on top.
    assert!(seconds < 8.0, "took {seconds:.1} s for a 3 s budget");
    let sub: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sub.json")).unwrap()).unwrap();
    assert_eq!(sub.as_object().unwrap().len(), demo_tasks().tasks.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_run_killed_midway_leaves_a_valid_submission() {
    let dir = temp_dir("killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(["solve", "--minutes", "2", "--submission", "sub.json"])
        .current_dir(&dir)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let path = dir.join("sub.json");
    let started = Instant::now();
    while !path.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SIGKILL: nothing of the run's own gets to finish the file.
    child.kill().unwrap();
    child.wait().unwrap();
    let sub: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for task in demo_tasks().tasks {
        let attempts = sub[&task.id].as_array().unwrap_or_else(|| panic!("{}: {sub}", task.id));
        assert_eq!(attempts.len(), task.test.len());
        for a in attempts {
            assert!(a["attempt_1"].is_array() && a["attempt_2"].is_array(), "{a}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_tasks_are_named_and_the_others_still_run() {
    let dir = temp_dir("bad");
    let tasks = dir.join("tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    let good = r#"{"train": [{"input": [[1, 0], [0, 0]], "output": [[0, 1], [0, 0]]},
                             {"input": [[0, 0], [2, 0]], "output": [[0, 0], [0, 2]]}],
                   "test": [{"input": [[0, 0], [3, 0]]}]}"#;
    std::fs::write(tasks.join("good.json"), good).unwrap();
    std::fs::write(
        tasks.join("no_train.json"),
        r#"{"train": [], "test": [{"input": [[1]]}]}"#,
    )
    .unwrap();
    std::fs::write(
        tasks.join("no_test.json"),
        r#"{"train": [{"input": [[1]], "output": [[2]]}], "test": []}"#,
    )
    .unwrap();
    std::fs::write(
        tasks.join("ragged.json"),
        r#"{"train": [{"input": [[1, 2], [3]], "output": [[1]]}], "test": [{"input": [[1]]}]}"#,
    )
    .unwrap();
    let (ok, stdout, stderr) = cli(
        &[
            "solve",
            "--tasks",
            "tasks",
            "--max-candidates",
            "20000",
            "--submission",
            "sub.json",
        ],
        &dir,
    );
    assert!(ok, "{stdout}{stderr}");
    assert!(stderr.contains("ragged"), "{stderr}");
    assert!(stderr.contains(r#"task no_train: "train" is empty"#), "{stderr}");
    assert!(stdout.contains("no_test: the task has no test inputs"), "{stdout}");
    let sub: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sub.json")).unwrap()).unwrap();
    assert_eq!(sub["good"][0]["attempt_1"], serde_json::json!([[0, 0], [0, 3]]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_cli_writes_programs_that_run_solves_and_score_counts() {
    let dir = temp_dir("programs");
    let (ok, stdout, stderr) = cli(
        &[
            "solve",
            "--max-candidates",
            "20000",
            "--submission",
            "sub.json",
            "--out",
            "found",
        ],
        &dir,
    );
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains("against the test outputs in the task files"),
        "{stdout}"
    );
    let (ok, stdout, stderr) = cli(&["run", "--solvers", "found/attempt_1", "--json", "r.json"], &dir);
    assert!(ok, "{stdout}{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert!(
        report["results"]["demo_mirror"]["solved"].as_bool().unwrap(),
        "{report}"
    );
    // Score against the embedded tasks, written out as files.
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    for task in demo_tasks().tasks {
        let json = arcbatch::tasks::to_list(std::slice::from_ref(&task))[0].clone();
        std::fs::write(dir.join("tasks").join(format!("{}.json", task.id)), json.to_string()).unwrap();
    }
    let (ok, stdout, stderr) = cli(&["score", "--submission", "sub.json", "--solutions", "tasks"], &dir);
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("of {} tasks solved", demo_tasks().tasks.len())),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The enumerator's only prior is recounted from the published solvers of the training tasks.
#[test]
fn the_prior_counts_the_published_training_solvers() {
    let Some(solvers) = shared::shared("ref/arc-dsl/solvers.py") else {
        return;
    };
    let text = std::fs::read_to_string(solvers).unwrap();
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    for &(name, uses) in USES {
        let counted = words.iter().filter(|&&w| w == name).count() as u32;
        assert_eq!(counted, uses, "{name}");
    }
}
