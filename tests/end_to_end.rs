//! End to end: solver files on ARC tasks through the library and the `arcbatch` binary.

mod shared;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use arcbatch::dsl::func::{Deadline, Interrupt};
use arcbatch::dsl::DslError;
use arcbatch::program::{parse_file, RunError};
use arcbatch::run::{run_on_task, run_solvers};
use arcbatch::tasks::{self, Task};

fn library() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py")).expect("dsl/solvers.py")
}

fn task(json: &str) -> Task {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    tasks::from_json(Path::new("t.json"), &json).unwrap().tasks.remove(0)
}

#[test]
fn every_solver_of_the_team_library_solves_its_training_task() {
    let Some(training) = shared::shared("arc/training") else {
        return;
    };
    let programs = parse_file("dsl/solvers.py", &library()).expect("the library parses");
    assert!(programs.len() >= 40, "the library has {} solvers", programs.len());
    let set = tasks::load(&training).unwrap();
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let report = run_solvers(&programs, &set.tasks, Some(Duration::from_secs(5)), 1, &|| {});
    assert!(
        report.solvers_without_task.is_empty(),
        "{:?}",
        report.solvers_without_task
    );
    let unsolved: Vec<String> = report
        .results
        .iter()
        .filter(|r| !r.solved())
        .map(|r| format!("{}: {}/{} {:?}", r.task, r.correct, r.pairs, r.error))
        .collect();
    assert!(unsolved.is_empty(), "unsolved: {unsolved:#?}");
    let with_objects = programs.iter().filter(|p| p.to_string().contains("objects(")).count();
    assert!(with_objects >= 10, "only {with_objects} solvers use objects");
    // Runs in a row (`run --repeat`) report the first run's results and the best time.
    let repeated = run_solvers(&programs, &set.tasks, Some(Duration::from_secs(5)), 3, &|| {});
    let without_time = |r: &arcbatch::run::TaskResult| (r.task.clone(), r.correct, r.pairs, r.test_outputs.clone());
    assert_eq!(
        repeated.results.iter().map(without_time).collect::<Vec<_>>(),
        report.results.iter().map(without_time).collect::<Vec<_>>()
    );
}

/// The published arc-dsl `solvers.py` (../shared/ref): every task the reference solves (399 of
/// 400) is solved.
#[test]
fn the_published_solvers_solve_what_the_reference_solves() {
    let (Some(path), Some(training)) = (shared::shared("ref/arc-dsl/solvers.py"), shared::shared("arc/training"))
    else {
        return;
    };
    let programs = parse_file("solvers.py", &std::fs::read_to_string(path).unwrap()).unwrap();
    let set = tasks::load(&training).unwrap();
    let report = run_solvers(&programs, &set.tasks, Some(Duration::from_secs(10)), 1, &|| {});
    let unsolved: Vec<&str> = report
        .results
        .iter()
        .filter(|r| !r.solved())
        .map(|r| r.task.as_str())
        .collect();
    assert_eq!(unsolved, ["e40b9e2f"], "the reference fails only e40b9e2f");
}

const TINY_TASK: &str = r#"{"train":[{"input":[[1,0],[0,0]],"output":[[0,1],[0,0]]}],"test":[{"input":[[0,0],[2,0]],"output":[[0,0],[0,2]]}]}"#;

#[test]
fn a_runaway_program_times_out_alone() {
    let src = "def solve_t(I):\n    x1 = power(rot90, 900)\n    x2 = power(x1, 900)\n    x3 = power(x2, 900)\n    O = x3(I)\n    return O\n\
               def solve_u(I):\n    O = vmirror(I)\n    return O\n";
    let programs = parse_file("t.py", src).unwrap();
    let t = task(TINY_TASK);
    let slow = run_on_task(&programs[0], &t, Some(Duration::from_millis(20)));
    assert!(
        matches!(slow.error, Some(RunError::Timeout { line: 5 })),
        "{:?}",
        slow.error
    );
    let fine = run_on_task(&programs[1], &t, Some(Duration::from_millis(20)));
    assert!(fine.solved() && fine.error.is_none());
}

#[test]
fn an_interrupt_stops_a_runaway_program_from_another_thread() {
    let src = "def solve_t(I):\n    x1 = power(rot90, 900)\n    x2 = power(x1, 900)\n    x3 = power(x2, 900)\n    O = x3(I)\n    return O\n";
    let programs = parse_file("t.py", src).unwrap();
    let t = task(TINY_TASK);
    let interrupt = Interrupt::new();
    let raiser = interrupt.clone();
    let started = Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        raiser.raise();
    });
    let stopped = {
        let _watch = interrupt.watch();
        run_on_task(&programs[0], &t, None)
    };
    stopper.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    match stopped.error {
        Some(RunError::Raised(e)) => assert_eq!(e.error, DslError::Interrupted),
        other => panic!("expected an interruption, got {other:?}"),
    }
    // The watch is lifted with its guard: the same thread runs on.
    assert!(Deadline::check().is_ok());
    let fine = parse_file("u.py", "def solve_u(I):\n    O = vmirror(I)\n    return O\n").unwrap();
    assert!(run_on_task(&fine[0], &t, None).solved());
}

#[test]
fn a_polling_interrupt_stays_tripped_until_its_watch_ends() {
    fn stop() -> bool {
        true
    }
    let outer = Interrupt::new();
    let _outer = outer.watch();
    {
        let _inner = Interrupt::polling(stop);
        assert_eq!(Deadline::check(), Err(DslError::Interrupted));
        assert_eq!(Deadline::check(), Err(DslError::Interrupted));
    }
    assert_eq!(Deadline::check(), Ok(()));
    outer.raise();
    assert_eq!(Deadline::check(), Err(DslError::Interrupted));
}

#[test]
fn an_explosive_value_is_an_error_not_a_crash() {
    let src = "def solve_t(I):\n    x1 = interval(ZERO, 1000000000000, ONE)\n    O = size(x1)\n    return O\n";
    let programs = parse_file("t.py", src).unwrap();
    let r = run_on_task(&programs[0], &task(TINY_TASK), None);
    assert_eq!(r.error.as_ref().map(|e| e.kind()), Some("MemoryError"), "{:?}", r.error);
}

#[test]
fn the_cli_writes_a_report_and_a_submission() {
    let dir = std::env::temp_dir().join(format!("arcbatch-e2e-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::fs::write(dir.join("tasks/t.json"), TINY_TASK).unwrap();
    std::fs::write(dir.join("tasks/u.json"), TINY_TASK).unwrap();
    std::fs::write(
        dir.join("s.py"),
        "def solve_t(I):\n    O = vmirror(I)\n    return O\ndef solve_x(I):\n    return I\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(["run", "--solvers"])
        .arg(dir.join("s.py"))
        .arg("--tasks")
        .arg(dir.join("tasks"))
        .arg("--json")
        .arg(dir.join("r.json"))
        .arg("--submission")
        .arg(dir.join("sub.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("solved 1 of 1 tasks with a solver"), "{stdout}");
    assert!(stdout.contains("solvers without a task (1): solve_x"), "{stdout}");
    assert!(stdout.contains("tasks without a solver (1): u"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(report["solved"], 1);
    assert_eq!(report["correct_pairs"], 2);
    assert_eq!(report["results"]["t"]["solved"], true);
    let sub: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("sub.json")).unwrap()).unwrap();
    assert_eq!(sub["t"][0]["attempt_1"], serde_json::json!([[0, 0], [0, 2]]));
    // A task without a solver gets its input as a placeholder.
    assert_eq!(sub["u"][0]["attempt_2"], serde_json::json!([[0, 0], [2, 0]]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_parse_error_is_reported_with_its_place_and_exit_status_2() {
    let dir = std::env::temp_dir().join(format!("arcbatch-e2e-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.json"), TINY_TASK).unwrap();
    std::fs::write(dir.join("s.py"), "def solve_t(I):\n    O = vmiror(I)\n    return O\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(["run", "--solvers"])
        .arg(dir.join("s.py"))
        .arg("--tasks")
        .arg(dir.join("t.json"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("s.py:2:9: unknown name \"vmiror\"; similar primitives: vmirror"),
        "{stderr}"
    );
}
