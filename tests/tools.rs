//! The profile tool: static counts against an independent count of the source text, and the
//! dynamic profile covering every primitive a run calls.

mod shared;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use arcbatch::batch::op::FILL;
use arcbatch::batch::{Arg, Backend, CpuBackend, LaneResult, Lanes, Op};
use arcbatch::batt::{Config, Plan};
use arcbatch::dsl::error::DslError;
use arcbatch::dsl::{Grid, PrimId, Value};
use arcbatch::program::parse_file;
use arcbatch::tasks;
use arcbatch::tools::diff::diff;
use arcbatch::tools::profile::static_profile;

fn library() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py")).expect("dsl/solvers.py")
}

type Counts = BTreeMap<String, usize>;

/// Counts from the text alone, without the parser: in each `NAME = CALLEE(ARGS)` line, the
/// callee if it is a primitive, and every argument word that is a primitive.
fn count_text(source: &str) -> (Counts, Counts) {
    let (mut calls, mut refs) = (Counts::new(), Counts::new());
    for line in source.lines() {
        let code = line.split('#').next().unwrap_or("");
        let Some((_, rhs)) = code.split_once(" = ") else {
            continue;
        };
        let Some((callee, args)) = rhs.split_once('(') else {
            continue;
        };
        if PrimId::of(callee.trim()).is_some() {
            *calls.entry(callee.trim().to_string()).or_default() += 1;
        }
        for word in args.split(|c: char| c == ',' || c == ')' || c.is_whitespace()) {
            if PrimId::of(word).is_some() {
                *refs.entry(word.to_string()).or_default() += 1;
            }
        }
    }
    (calls, refs)
}

fn owned(map: &BTreeMap<&'static str, usize>) -> Counts {
    map.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn static_counts_agree_with_a_count_of_the_text() {
    let source = library();
    let profile = static_profile(&parse_file("dsl/solvers.py", &source).unwrap());
    let (calls, refs) = count_text(&source);
    assert_eq!(owned(&profile.counts), calls);
    assert_eq!(owned(&profile.refs), refs);
    assert!(calls.len() > 50, "the library calls many primitives");
}

/// Counts from a batt text file alone: on each step line, the callee (after `else` on a pick
/// line; `@objects` for a group), and every argument word that is a primitive.
fn count_batt_text(source: &str) -> (Counts, Counts) {
    let (mut calls, mut refs) = (Counts::new(), Counts::new());
    for line in source.lines().filter(|l| l.starts_with('n')) {
        let Some((_, rhs)) = line.split_once(" = ") else {
            continue;
        };
        let call = rhs.rsplit(" else ").next().unwrap_or(rhs);
        let Some((callee, args)) = call.split_once('(') else {
            continue;
        };
        if PrimId::of(callee).is_some() || callee.starts_with('@') {
            *calls.entry(callee.to_string()).or_default() += 1;
        }
        for word in args.split(|c: char| c == ',' || c == ')' || c == ';' || c.is_whitespace()) {
            if PrimId::of(word).is_some() {
                *refs.entry(word.to_string()).or_default() += 1;
            }
        }
    }
    (calls, refs)
}

#[test]
fn static_counts_of_a_batt_text_file_agree_with_a_count_of_its_text() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/dsl.batt");
    let source = std::fs::read_to_string(&path).expect("generated/dsl.batt");
    let out = std::env::temp_dir().join(format!("arcbatch-batt-profile-{}.json", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .arg("profile")
        .arg(&path)
        .arg("--json")
        .arg(&out)
        .output()
        .expect("run");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("json")).expect("json");
    let _ = std::fs::remove_file(&out);
    let as_counts = |v: &serde_json::Value| -> Counts {
        v.as_object()
            .expect("an object")
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().expect("a count") as usize))
            .collect()
    };
    let (calls, refs) = count_batt_text(&source);
    assert_eq!(as_counts(&json["counts"]), calls);
    assert_eq!(as_counts(&json["refs"]), refs);
    assert!(calls.contains_key("@objects"), "the generated file has a group step");
}

#[test]
fn the_cli_writes_the_static_profile_as_json() {
    let out = std::env::temp_dir().join(format!("arcbatch-profile-{}.json", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .arg("profile")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py"))
        .arg("--json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(String::from_utf8_lossy(&status.stdout).contains("most called: fill"));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).unwrap();
    let (calls, _) = count_text(&library());
    assert_eq!(json["counts"]["objects"], calls["objects"]);
    assert!(json["refs"].is_object());
}

#[test]
fn the_dynamic_profile_covers_every_primitive_the_run_calls() {
    let Some(training) = shared::shared("arc/training") else {
        return;
    };
    let programs = parse_file("dsl/solvers.py", &library()).unwrap();
    let set = tasks::load(&training).unwrap();
    let plan = Plan::new(&programs, &[], &set.tasks, Config::default()).unwrap();
    let report = plan.run(&CpuBackend::new(None), &|| {});
    let profiled: BTreeSet<&str> = report.profile.iter().map(|r| r.name.as_str()).collect();
    let mut called: BTreeSet<&str> = static_profile(&programs).counts.keys().copied().collect();
    if programs
        .iter()
        .flat_map(|p| &p.steps)
        .any(|s| matches!(s.callee, arcbatch::program::Callee::Value(_)))
    {
        called.insert("(call)");
    }
    assert_eq!(profiled, called);
    for row in &report.profile {
        assert!(row.calls > 0 && row.lanes >= row.calls, "{row:?}");
    }
    assert!(report.profile.iter().any(|r| r.name == "objects" && r.batched));
    // Every solver has its share, and the shares add up to the steps' time (each step here is
    // read by some solver).
    let names: BTreeSet<&str> = report.solvers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, programs.iter().map(|p| p.name.as_str()).collect());
    let steps: f64 = report.profile.iter().map(|r| r.seconds).sum();
    let solvers: f64 = report.solvers.iter().map(|s| s.seconds).sum();
    assert!(
        (steps - solvers).abs() <= 1e-9 * steps.max(1.0),
        "{steps} s of steps, {solvers} s of solvers"
    );
    assert!(report.solvers.iter().all(|s| s.steps >= s.own_steps && s.steps > 0));
}

/// The CPU backend with one planted change to every `fill` result: a bug (`paint_7`, cell
/// (0, 0) of every result colour 7) or a time limit hit (`time_out`). (The emulated GPU
/// backend has its own hook for the same purpose; this one keeps the diff tool's test
/// independent of any device code.)
struct FaultyFill(CpuBackend, fn(LaneResult) -> LaneResult);

fn paint_7(r: LaneResult) -> LaneResult {
    r.map(|v| match v.as_grid() {
        Ok(g) if !g.cells.is_empty() => {
            let mut cells = g.cells.clone();
            cells[0] = 7;
            Value::grid(Grid::new(g.h, g.w, cells))
        }
        _ => v,
    })
}

fn time_out(_: LaneResult) -> LaneResult {
    Err(DslError::Timeout)
}

impl Backend for FaultyFill {
    fn name(&self) -> &'static str {
        "faulty"
    }
    fn shards(&self, lanes: usize) -> usize {
        self.0.shards(lanes)
    }
    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.0.map_scalar(prim, args, lanes)
    }
    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.0.map_call(function, args, lanes)
    }
    fn run_op(&self, op: &'static Op, param: u32, lanes: &Lanes) -> Vec<LaneResult> {
        let results = self.0.run_op(op, param, lanes);
        if !std::ptr::eq(op, &FILL) {
            return results;
        }
        results.into_iter().map(self.1).collect()
    }
}

fn demo_plan_inputs() -> (Vec<arcbatch::program::Program>, Vec<arcbatch::tasks::Task>) {
    let programs = parse_file("demo/solvers.py", arcbatch::embedded::DEMO_SOLVERS).expect("demo solvers parse");
    (programs, arcbatch::embedded::demo_tasks().tasks)
}

#[test]
fn diff_finds_a_planted_wrong_fill_and_names_its_step_and_sample() {
    let (programs, tasks) = demo_plan_inputs();
    let plan = Plan::new(&programs, &[], &tasks, Config::default()).expect("plan");
    let cpu = CpuBackend::new(None);
    let clean = diff(&plan, &cpu, &CpuBackend::new(None), 10, &|| ());
    assert_eq!((clean.mismatches, clean.divergences.len()), (0, 0));
    assert!(clean.steps > 0 && clean.values > clean.steps, "{clean:?}");

    let report = diff(&plan, &cpu, &FaultyFill(CpuBackend::new(None), paint_7), 3, &|| ());
    assert!(report.roots > 0 && report.mismatches >= report.roots, "{report:?}");
    assert_eq!(report.divergences.len(), 3, "the limit is kept");
    let first = &report.divergences[0];
    assert!(first.root && first.step.contains("= fill("), "{first:?}");
    assert!(
        first.task.starts_with("demo_") && first.sample.contains('['),
        "{first:?}"
    );
    assert_eq!(first.args.len(), 3, "grid, colour and patch are shown");
    let (Ok(a), Ok(b)) = (&first.a, &first.b) else {
        panic!("both backends computed a value: {first:?}")
    };
    assert_eq!(b.as_grid().expect("a grid").cells[0], 7);
    assert_ne!(a, b);
    let svg = first.svg("cpu", "faulty");
    assert!(svg.contains("stroke=\"#ff0000\""), "the differing cell is outlined");
    let text = report.text("cpu", "faulty");
    assert!(text.contains("divergence 1 (root)") && text.contains(&format!("{} differ", report.mismatches)));
    assert_eq!(report.unfinished, 0);
}

#[test]
fn diff_sets_aside_the_values_one_run_did_not_finish() {
    let (programs, tasks) = demo_plan_inputs();
    let plan = Plan::new(&programs, &[], &tasks, Config::default()).expect("plan");
    let cpu = CpuBackend::new(None);
    let clean = diff(&plan, &cpu, &cpu, 10, &|| ());
    let report = diff(&plan, &cpu, &FaultyFill(CpuBackend::new(None), time_out), 10, &|| ());
    assert_eq!((report.mismatches, report.divergences.len()), (0, 0), "{report:?}");
    // Every fill lane, and every later lane computed from one, did not finish on `b`.
    assert!(report.unfinished > 0, "{report:?}");
    assert_eq!(report.values + report.unfinished, clean.values);
    let text = report.text("cpu", "faulty");
    assert!(
        text.contains(&format!(
            "; {} not compared (a run hit its time limit)",
            report.unfinished
        )),
        "{text}"
    );
}

#[test]
fn diff_cli_exits_0_when_the_backends_agree_and_2_on_bad_input() {
    let exe = env!("CARGO_BIN_EXE_arcbatch");
    let out = Command::new(exe)
        .args(["diff", "--a", "cpu", "--b", "cpu"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("0 differ (0 roots)"), "{stdout}");
    let bad = Command::new(exe)
        .args(["diff", "--tasks", "/nonexistent/tasks"])
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn diff_cli_finds_a_kernel_fault_planted_in_the_emulator_and_draws_it() {
    let out_dir = std::env::temp_dir().join(format!("arcbatch-diff-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(["diff", "--a", "cpu", "--b", "emu", "--max", "2", "--out"])
        .arg(&out_dir)
        .env("ARCBATCH_EMU_FAULT", "fill")
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("divergence 1 (root): n") && stdout.contains("= fill("),
        "{stdout}"
    );
    let drawn = std::fs::read_dir(&out_dir).expect("the --out folder").count();
    assert_eq!(drawn, 2, "one SVG per divergence shown");
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn diff_cpu_against_emu_over_the_arc_training_data_finds_no_mismatch() {
    let Some(training) = shared::shared("arc/training") else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(["diff", "--a", "cpu", "--b", "emu", "--tasks"])
        .arg(&training)
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(summary.contains("0 differ (0 roots)"), "{summary}");
    let values: usize = summary
        .split(" values compared")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        values > 2000,
        "every step of the team library on every sample: {summary}"
    );
}
