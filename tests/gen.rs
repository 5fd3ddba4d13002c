//! `arcbatch gen` and `arcbatch search`: generation is deterministic; its batt text runs under
//! `batt` with exactly the results of the programs it was made from; the rewrites change no
//! result; `generated/` is what gen writes today; harvested programs solve their tasks under
//! `run`; staged evaluation (early exit, chunks, budgets) finds what full evaluation finds;
//! search's memory stays flat as programs grow and `--minutes` stops on time; bad input gives
//! clear messages and exit status 2.

mod shared;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use arcbatch::batch::CpuBackend;
use arcbatch::batch::LaneResult;
use arcbatch::batt::merge::NodeOp;
use arcbatch::batt::staged::{Staged, Staging};
use arcbatch::batt::{text, Config, Match, Plan};
use arcbatch::gen::search::{evaluate, round_plan, Budgets, Evaluated, Harvest};
use arcbatch::gen::{generate, load_library, Generated, Options};
use arcbatch::program::{parse_file, Program};
use arcbatch::run::run_on_task;
use arcbatch::tasks::{self, Task};

const LIMIT: Duration = Duration::from_secs(10);
const CROSS: Config = Config {
    cross: true,
    no_merge: false,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn options(seed: u64, rewrite: bool) -> Options {
    Options {
        count: 32,
        seed,
        mutate: 0.2,
        mutants: 2,
        rewrite,
    }
}

/// Search-dialect programs using the sample pattern and `o_g` with several modes, so that
/// both rewrites occur whatever the library pick.
const DIALECT: &str = "def solve(S, I, C):\n    x1 = apply(first, S)\n    x2 = apply(last, S)\n    x3 = mapply(p_g, x2)\n    x4 = mapply(p_g, x1)\n    x5 = difference(x3, x4)\n    x6 = o_g(I, R5)\n    x7 = colorfilter(x6, FIVE)\n    x8 = merge(x7)\n    O = fill(I, TWO, x8)\n    return O\n\
def solve(S, I, C):\n    x1 = o_g(I, R1)\n    x2 = argmax(x1, size)\n    x3 = apply(last, S)\n    x4 = first(x3)\n    x5 = mostcolor(x4)\n    O = fill(I, x5, x2)\n    return O\n\
def solve(S, I, C):\n    x1 = o_g(I, R7)\n    x2 = sizefilter(x1, ONE)\n    x3 = merge(x2)\n    O = cover(I, x3)\n    return O\n";

fn library() -> Vec<Program> {
    let mut lib = load_library(&root().join("dsl")).expect("the library loads");
    lib.extend(parse_file("dialect.py", DIALECT).unwrap());
    lib
}

fn demo() -> Vec<Task> {
    tasks::load(&root().join("dsl/demo")).unwrap().tasks
}

fn training() -> Option<Vec<Task>> {
    Some(tasks::load(&shared::shared("arc/training")?).unwrap().tasks)
}

fn evaluation() -> Option<Vec<Task>> {
    Some(tasks::load(&shared::shared("arc/evaluation")?).unwrap().tasks)
}

/// Every `step`-th task, to keep full evaluations (every column kept) small.
fn every(tasks: Vec<Task>, step: usize) -> Vec<Task> {
    tasks.into_iter().step_by(step).collect()
}

/// Staged evaluation (first train pairs, then the pairs still alive; in chunks of 7) against
/// evaluating every program on every sample in one go: the same (program, task) pairs are
/// solved, and every output the staged run saw is the full evaluation's on that sample. Returns
/// the pairs solved.
fn staged_is_full(tasks: &[Task], seed: u64, max_size: Option<usize>) -> usize {
    let g = generate(&library(), &[], &options(seed, true)).unwrap();
    let n = g.candidates.len();
    let plan = Plan::from_merged(g.merged, tasks, CROSS).unwrap();
    let cpu = CpuBackend::new(Some(LIMIT)).with_max_members(max_size);
    let staging = Staging {
        chunk: 7,
        early_exit: true,
        max_size,
    };
    let (staged, seen) = outputs(&plan, &cpu, &staging);
    assert_eq!(
        (staged.solvers, staged.chunks, staged.stopped),
        (n, n.div_ceil(7), false)
    );
    assert_eq!(seen.len() as u64, staged.program_samples);
    // Every sample at once, one chunk, under the same budgets.
    let all = Staging {
        chunk: n,
        early_exit: false,
        ..staging
    };
    let (full, full_seen) = outputs(&plan, &cpu, &all);
    assert_eq!(full.program_samples, (n * plan.lanes()) as u64);
    assert!(staged.program_samples < full.program_samples);
    assert_eq!(staged.solved, full.solved, "seed {seed}");
    let full_seen: HashMap<(usize, usize, usize), LaneResult> = full_seen
        .into_iter()
        .map(|(k, t, s, r)| ((k, t, s), r.unwrap()))
        .collect();
    for (k, t, s, result) in &seen {
        assert!(
            result.as_ref() == full_seen.get(&(*k, *t, *s)),
            "program {k} on task {t}, sample {s}: {result:?} staged, {:?} in full",
            full_seen.get(&(*k, *t, *s))
        );
    }
    if max_size.is_none() {
        // Without budgets, against batt's own path: every column kept, and batt's scores.
        let kept = plan.evaluate_all(&cpu, &|| {});
        for ((k, t, s), result) in &full_seen {
            assert!(kept.outcome(&plan.merged.solvers[*k].outcome, *t, *s) == Some(result));
        }
        let matches = plan.run(&cpu, &|| {}).matches;
        let mut solved: Vec<(usize, usize)> = (0..matches.len())
            .filter(|&i| matches[i].solved())
            .map(|i| (i % n, i / n))
            .collect();
        solved.sort_unstable();
        assert_eq!(staged.solved, solved, "seed {seed}");
    }
    staged.solved.len()
}

/// A staged run and every output it saw, as (program, task, sample, result).
fn outputs(plan: &Plan<'_>, cpu: &CpuBackend, staging: &Staging) -> (Staged, Vec<Seen4>) {
    let seen = Mutex::new(Vec::new());
    let staged = plan.run_staged(cpu, staging, &|| false, &|s| {
        seen.lock()
            .unwrap()
            .push((s.solver, s.task, s.sample, s.result.cloned()));
    });
    (staged, seen.into_inner().unwrap())
}

type Seen4 = (usize, usize, usize, Option<LaneResult>);

#[test]
fn staged_evaluation_finds_what_full_evaluation_finds_on_training_tasks() {
    let Some(tasks) = training() else { return };
    let tasks = every(tasks, 3);
    let solved: usize = [1, 2].iter().map(|&seed| staged_is_full(&tasks, seed, None)).sum();
    assert!(solved > 0, "the test should see some solutions");
    // Under a size budget (the search's, much lower here so that it bites).
    staged_is_full(&tasks, 3, Some(500));
}

#[test]
fn staged_evaluation_finds_what_full_evaluation_finds_on_evaluation_tasks() {
    let Some(tasks) = evaluation() else { return };
    let tasks = every(tasks, 3);
    staged_is_full(&tasks, 4, None);
    staged_is_full(&tasks, 5, Some(500));
}

/// A round evaluated in parts (runs of its programs, as `arcbatch.ray` cuts it) and joined
/// harvests exactly what the round evaluated at once harvests.
#[test]
fn a_round_evaluated_in_parts_harvests_what_the_whole_round_harvests() {
    let Some(tasks) = training() else { return };
    let tasks = every(tasks, 4);
    let generated = generate(&library(), &[], &options(7, true)).unwrap();
    let n = generated.candidates.len();
    let cpu = CpuBackend::new(Some(LIMIT)).with_max_members(Some(50_000));
    let budgets = Budgets {
        staging: Staging {
            chunk: 1,
            early_exit: true,
            max_size: Some(50_000),
        },
        memory: Some(64 << 20),
        stop: &|| false,
    };
    let plan = || round_plan(generated.merged.clone(), &tasks).unwrap();
    let whole = evaluate(&plan(), &cpu, &budgets);
    let cuts = [0, 1, n / 3, n / 3, n - 2, n];
    let parts = cuts
        .windows(2)
        .map(|w| evaluate(&plan().part(w[0]..w[1], 0..tasks.len()), &cpu, &budgets));
    let joined = Evaluated::join(parts);
    assert!(!whole.staged.solved.is_empty(), "the test should see some solutions");
    assert_eq!(joined.signatures, whole.signatures);
    let same = |e: &Evaluated| Staged {
        chunks: 0,
        seconds: 0.0,
        ..e.staged.clone()
    };
    assert_eq!(same(&joined), same(&whole));
    let base = std::env::temp_dir().join(format!("arcbatch-parts-{}", std::process::id()));
    let mut files = Vec::new();
    for (name, evaluated) in [("whole", &whole), ("parts", &joined)] {
        let mut harvest = Harvest::open(&base.join(name)).unwrap();
        let r = harvest
            .round(&generated.candidates, evaluated, &tasks, "round 1 of seed 7")
            .unwrap();
        assert_eq!(r.new.len(), harvest.solutions());
        let mut written: Vec<(String, String)> = r
            .new
            .iter()
            .map(|(t, path)| (t.clone(), std::fs::read_to_string(path).unwrap()))
            .collect();
        written.sort();
        files.push(written);
    }
    std::fs::remove_dir_all(&base).unwrap();
    assert!(!files[0].is_empty());
    assert_eq!(files[0], files[1]);
    // An evaluation of other programs is refused, not harvested.
    let mut harvest = Harvest::open(&base.join("other")).unwrap();
    let err = harvest
        .round(&generated.candidates[1..], &whole, &tasks, "r")
        .unwrap_err();
    assert!(matches!(err, arcbatch::gen::GenError::RoundMismatch { .. }), "{err}");
    assert!(err.to_string().contains("does not fit"), "{err}");
    std::fs::remove_dir_all(&base).unwrap();
}

fn batt_text(g: &Generated, tasks: &[Task]) -> Vec<Match> {
    let (merged, _) = text::parse("g.batt", &g.text(&[]), &[]).unwrap();
    let plan = Plan::from_merged(merged, tasks, CROSS).unwrap();
    plan.run(&CpuBackend::new(Some(LIMIT)), &|| {}).matches
}

fn batt_programs(g: &Generated, tasks: &[Task], config: Config) -> Vec<Match> {
    let programs: Vec<Program> = g.candidates.iter().map(|c| c.program.clone()).collect();
    let plan = Plan::new(&programs, &[], tasks, config).unwrap();
    plan.run(&CpuBackend::new(Some(LIMIT)), &|| {}).matches
}

#[test]
fn the_same_seed_gives_byte_identical_output() {
    let lib = library();
    let a = generate(&lib, &[], &options(5, true)).unwrap();
    let b = generate(&lib, &[], &options(5, true)).unwrap();
    assert_eq!(a.text(&[]), b.text(&[]));
    let comments = ["c".to_string()];
    assert_eq!(
        arcbatch::gen::python::module(&a, &comments),
        arcbatch::gen::python::module(&b, &comments)
    );
    assert_ne!(a.text(&[]), generate(&lib, &[], &options(6, true)).unwrap().text(&[]));
    // Every output line names its solver and its mutation.
    let text = a.text(&[]);
    let outs: Vec<&str> = text.lines().filter(|l| l.starts_with("out ")).collect();
    assert_eq!(outs.len(), a.candidates.len());
    assert!(outs.iter().all(|l| l.contains(" ; from solve")));
    assert!(outs.iter().any(|l| l.contains(" ; mutation ")));
    assert!(outs.iter().any(|l| l.ends_with(" ; original")));
}

/// The batt text of a generation runs under batt with the results of its programs merged
/// without rewrites and of each program on its own through the interpreter.
#[test]
fn batt_runs_the_generated_text_with_the_programs_results() {
    let tasks = demo();
    let lib = library();
    for seed in 0..4 {
        let g = generate(&lib, &[], &options(seed, true)).unwrap();
        let from_text = batt_text(&g, &tasks);
        assert_eq!(from_text, batt_programs(&g, &tasks, CROSS), "seed {seed}");
        // Matches come task by task, each task's in program order.
        for (k, m) in from_text.iter().enumerate() {
            let p = &g.candidates[k % g.candidates.len()];
            let t = tasks.iter().find(|t| t.id == m.task).unwrap();
            let r = run_on_task(&p.program, t, Some(LIMIT));
            assert_eq!((m.correct, m.pairs), (r.correct, r.pairs), "{} on {}", m.solver, m.task);
        }
    }
}

/// Merged with rewrites against merged without, on the training tasks: identical matches.
#[test]
fn rewrites_change_no_result_on_the_training_data() {
    let Some(tasks) = training() else { return };
    let lib = library();
    let mut groups = 0;
    for seed in [1, 2] {
        let with = generate(&lib, &[], &options(seed, true)).unwrap();
        let without = generate(&lib, &[], &options(seed, false)).unwrap();
        groups += with
            .merged
            .nodes
            .iter()
            .filter(|n| matches!(n.op, NodeOp::Group(_)))
            .count();
        assert!(without.merged.nodes.iter().all(|n| !matches!(n.op, NodeOp::Group(_))));
        assert_eq!(batt_text(&with, &tasks), batt_text(&without, &tasks), "seed {seed}");
    }
    assert!(groups >= 2, "the rewrites should have fired");
}

fn cli(args: &[&str]) -> Output {
    cli_with(&[], args)
}

/// [`cli`] with environment variables set.
fn cli_with(env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .unwrap()
}

/// The command that writes `generated/`, from the repository root.
const GENERATE: [&str; 13] = [
    "gen",
    "--library",
    "dsl",
    "--count",
    "32",
    "--seed",
    "0",
    "--mutate",
    "0.2",
    "--out",
    "generated/dsl.batt",
    "--python",
    "generated/dsl.py",
];

#[test]
fn generated_is_what_gen_writes_today() {
    let dir = std::env::temp_dir().join(format!("arcbatch-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (batt, py) = (dir.join("dsl.batt"), dir.join("dsl.py"));
    let mut args: Vec<&str> = GENERATE.to_vec();
    args[10] = batt.to_str().unwrap();
    args[12] = py.to_str().unwrap();
    let out = cli(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let refresh = format!("refresh with: cargo run --release -- {}", GENERATE.join(" "));
    for (fresh, kept) in [(&batt, "generated/dsl.batt"), (&py, "generated/dsl.py")] {
        let kept_text = std::fs::read_to_string(root().join(kept)).unwrap_or_default();
        assert!(
            std::fs::read_to_string(fresh).unwrap() == kept_text,
            "{kept} differs from what gen writes now; {refresh}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // And batt runs it.
    let out = cli(&["batt", "--solvers", "generated/dsl.batt", "--cross"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("every solver on every task"));
}

/// Two rounds of search on a handful of training tasks; every harvested program solves its
/// task under `run` (the interpreter), and a second search harvests nothing new.
#[test]
fn search_harvests_programs_that_run_confirms() {
    let Some(all) = training() else { return };
    let ids = [
        "0d3d703e", "3c9b0459", "6150a2bd", "67a3c6ac", "68b16354", "74dd1130", "9dfd6313", "a416b8f3",
    ];
    let picked: Vec<&Task> = all.iter().filter(|t| ids.contains(&t.id.as_str())).collect();
    let base = std::env::temp_dir().join(format!("arcbatch-search-{}", std::process::id()));
    let tasks_dir = base.join("tasks");
    std::fs::create_dir_all(&tasks_dir).unwrap();
    let training_dir = shared::shared("arc/training").unwrap();
    for t in &picked {
        let name = format!("{}.json", t.id);
        std::fs::copy(training_dir.join(&name), tasks_dir.join(&name)).unwrap();
    }
    let found = base.join("found");
    let search = |found: &Path| {
        let out = cli(&[
            "search",
            "--library",
            "dsl",
            "--tasks",
            tasks_dir.to_str().unwrap(),
            "--rounds",
            "2",
            "--seed",
            "3",
            "--mutate",
            "0.3",
            "--out",
            found.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let stdout = search(&found);
    assert!(stdout.contains("round 1/2:") && stdout.contains("round 2/2:") && stdout.contains("summary:"));
    let mut harvested = 0;
    for entry in std::fs::read_dir(&found).unwrap() {
        let path = entry.unwrap().path();
        let source = std::fs::read_to_string(&path).unwrap();
        let programs = parse_file(&path.display().to_string(), &source).unwrap();
        for p in &programs {
            let task = picked.iter().find(|t| Some(t.id.as_str()) == p.task_id()).unwrap();
            let r = run_on_task(p, task, Some(LIMIT));
            assert!(r.solved(), "{} does not solve its task:\n{p}", path.display());
            harvested += 1;
        }
        let out = cli(&[
            "run",
            "--solvers",
            path.to_str().unwrap(),
            "--tasks",
            tasks_dir.to_str().unwrap(),
        ]);
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("solved 1 of 1 tasks"));
    }
    assert!(
        harvested >= ids.len() / 2,
        "only {harvested} programs harvested:\n{stdout}"
    );
    assert!(search(&found).contains(" 0 new solutions (0 novel), "));
    std::fs::remove_dir_all(&base).unwrap();
}

/// `count` tasks of `set` (every 20th) copied into a fresh folder named `name`.
fn task_folder(set: &str, name: &str, count: usize) -> Option<PathBuf> {
    let from = shared::shared(set)?;
    let dir = std::env::temp_dir().join(format!("arcbatch-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&from).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files.iter().step_by(20).take(count) {
        std::fs::copy(f, dir.join(f.file_name().unwrap())).unwrap();
    }
    Some(dir)
}

/// The figure after `key` in a search summary (`peak memory 123 MB`, ...).
fn figure(stdout: &str, key: &str) -> u64 {
    let at = stdout.find(key).unwrap_or_else(|| panic!("no '{key}' in:\n{stdout}")) + key.len();
    stdout[at..].split_whitespace().next().unwrap().parse().unwrap()
}

/// Search's peak memory does not grow with the programs of a round: 100 programs and 2,000
/// (the published solvers and their mutants) on 20 evaluation tasks, under a small memory
/// budget (and small budgets per sample, so that one candidate's transient values do not
/// decide the peak). What may grow is the programs themselves (their IR and merged DAG:
/// `gen` alone peaks at 17 MB for these 2,000); evaluating them in one chunk costs far more.
/// The CLI's allocator (mimalloc) returns freed pages to the system only after a delay, and
/// keeps some 40 to 70 MB more than the data alive at these sizes, and commits its arenas
/// eagerly; the search runs here with the delay off and commits on demand
/// (`MIMALLOC_PURGE_DELAY=0`, `MIMALLOC_ARENA_EAGER_COMMIT=0`), so that the peak measures the
/// data alive (with the delay off alone, one run in a few still peaked at 19 and 60 MB).
#[test]
fn search_memory_stays_flat_from_100_to_2000_programs() {
    let Some(library) = shared::shared("ref/arc-dsl/solvers.py") else {
        return;
    };
    let Some(tasks) = task_folder("arc/evaluation", "flat", 20) else {
        return;
    };
    let peak = |count: &str| {
        let found = tasks.with_extension(format!("found-{count}"));
        let out = cli_with(
            &[("MIMALLOC_PURGE_DELAY", "0"), ("MIMALLOC_ARENA_EAGER_COMMIT", "0")],
            &[
                "search",
                "--library",
                library.to_str().unwrap(),
                "--tasks",
                tasks.to_str().unwrap(),
                "--rounds",
                "1",
                "--count",
                count,
                "--mutants",
                "4",
                "--mutate",
                "0.2",
                "--memory",
                "16",
                "--max-size",
                "2000",
                "--timeout-ms",
                "2",
                "--out",
                found.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        std::fs::remove_dir_all(&found).unwrap();
        let programs = figure(&stdout, "summary: ");
        (programs, figure(&stdout, "peak memory "), stdout)
    };
    let (small, small_peak, _) = peak("20");
    let (large, large_peak, stdout) = peak("400");
    assert!(small <= 100 && large >= 15 * small, "{small} and {large} programs");
    let Some(large_chunks) = stdout.split(" lanes, ").nth(1).map(|s| figure(s, "")) else {
        panic!("no chunks in:\n{stdout}")
    };
    assert!(
        large_chunks >= 20,
        "2,000 programs should run in many chunks:\n{stdout}"
    );
    assert!(
        large_peak <= small_peak + 40,
        "peak memory {small_peak} MB with 100 programs, {large_peak} MB with 2,000:\n{stdout}"
    );
    std::fs::remove_dir_all(&tasks).unwrap();
}

/// `--minutes` ends a search that would otherwise run on (no `--rounds`): on time, with the
/// summary printed and what it found written.
#[test]
fn search_minutes_stops_on_time() {
    let Some(tasks) = task_folder("arc/training", "minutes", 40) else {
        return;
    };
    let found = tasks.with_extension("found");
    let started = Instant::now();
    let out = cli(&[
        "search",
        "--library",
        "dsl",
        "--tasks",
        tasks.to_str().unwrap(),
        "--minutes",
        "0.05",
        "--mutate",
        "0.3",
        "--memory",
        "1",
        "--out",
        found.to_str().unwrap(),
    ]);
    let seconds = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("stopped at the deadline"), "{stdout}");
    assert!(stdout.contains("round 1:"), "{stdout}");
    // 3 s of search; the generous margin is for a loaded machine, not for the search.
    assert!(seconds < 30.0, "--minutes 0.05 took {seconds:.1} s:\n{stdout}");
    let summary = stdout.lines().find(|l| l.starts_with("summary:")).unwrap();
    let written: u64 = std::fs::read_dir(&found)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            parse_file("found.py", &std::fs::read_to_string(path).unwrap())
                .unwrap()
                .len() as u64
        })
        .sum();
    assert!(written > 0, "{stdout}");
    assert_eq!(written, figure(summary, "(size); "), "{stdout}");
    std::fs::remove_dir_all(&found).unwrap();
    std::fs::remove_dir_all(&tasks).unwrap();
}

#[test]
fn bad_input_gives_clear_messages_and_status_2() {
    let empty = std::env::temp_dir().join(format!("arcbatch-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--library", "no/such/dir"], "no/such/dir: no such file or directory"),
        (&["--library", empty.to_str().unwrap()], "no solvers found"),
        (&["--library", "dsl", "--mutate", "1.5"], "--mutate 1.5 is outside 0..1"),
        (&["--library", "dsl", "--count", "0"], "--count must be at least 1"),
    ];
    for (args, message) in cases {
        let mut all = vec!["gen", "--out", "/dev/null"];
        all.extend_from_slice(args);
        let out = cli(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{all:?}: {stderr}");
    }
    // A count beyond the library is capped, with a note.
    let out = cli(&["gen", "--library", "dsl/demo", "--count", "50", "--out", "/dev/null"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--count 50 is more than the library's 6 solvers"));
    // Search's budgets.
    let search: [(&[&str], &str); 3] = [
        (&["--minutes", "0"], "--minutes 0 must be above 0"),
        (&["--minutes=-2"], "--minutes -2 must be above 0"),
        (&["--memory", "0"], "--memory must be at least 1 (MB)"),
    ];
    for (args, message) in search {
        let mut all = vec!["search", "--library", "dsl", "--tasks", "dsl/demo", "--out"];
        all.push(empty.to_str().unwrap());
        all.extend_from_slice(args);
        let out = cli(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{all:?}: {stderr}");
    }
    std::fs::remove_dir_all(&empty).unwrap();
}

/// `run --solvers DIR` reads every solver file below the directory, as a search writes them.
#[test]
fn run_reads_a_directory_of_solver_files() {
    let dir = std::env::temp_dir().join(format!("arcbatch-run-dir-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let library = std::fs::read_to_string(root().join("dsl/solvers.py")).unwrap();
    let (first, rest) = library.split_at(
        library
            .find("\ndef solve_")
            .and_then(|k| library[k + 1..].find("\ndef solve_").map(|m| k + 1 + m))
            .unwrap(),
    );
    std::fs::write(dir.join("a.py"), first).unwrap();
    std::fs::write(dir.join("sub").join("b.py"), rest).unwrap();
    let summary = |solvers: &str| {
        let out = cli(&["run", "--solvers", solvers, "--tasks", "dsl/demo"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .split(';')
            .take(2)
            .collect::<String>()
    };
    assert_eq!(summary(dir.to_str().unwrap()), summary("dsl/solvers.py"));
    std::fs::remove_dir_all(&dir).unwrap();
}
