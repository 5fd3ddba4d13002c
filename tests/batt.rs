//! batt against the interpreter: for every (solver, task) the merged, columnar evaluation gives
//! exactly what `run` gives; merging changes no result; an error stays in its lane; and each
//! batched op equals its scalar primitive lane by lane (proptest, random grids up to 30x30).

mod shared;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use arcbatch::batch::{call_prim, Arg, CpuBackend, LaneResult};
use arcbatch::batt::{Config, Match, Plan};
use arcbatch::dsl::{Cell, Color, Grid, Loc, PrimId, Value};
use arcbatch::program::{parse_file, run_guarded, Program};
use arcbatch::run::{arguments, run_on_task, run_solvers};
use arcbatch::tasks::{self, Task};
use proptest::prelude::*;

const LIMIT: Duration = Duration::from_secs(10);

fn library() -> Vec<Program> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py");
    parse_file("dsl/solvers.py", &std::fs::read_to_string(path).unwrap()).expect("the library parses")
}

fn training() -> Option<Vec<Task>> {
    let set = tasks::load(&shared::shared("arc/training")?).unwrap();
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    Some(set.tasks)
}

fn batt(solvers: &[Program], differs: &[Program], tasks: &[Task], config: Config) -> Vec<Match> {
    let plan = Plan::new(solvers, differs, tasks, config).unwrap();
    plan.run(&CpuBackend::new(Some(LIMIT)), &|| {}).matches
}

/// (solver, task, correct, pairs) of each match, for comparing with `run`.
fn counts(matches: &[Match]) -> Vec<(String, String, usize, usize)> {
    let mut v: Vec<_> = matches
        .iter()
        .map(|m| (m.solver.clone(), m.task.clone(), m.correct, m.pairs))
        .collect();
    v.sort();
    v
}

/// `run` on each solver's own task, as (solver, task, correct, pairs).
fn run_counts(solvers: &[Program], tasks: &[Task]) -> Vec<(String, String, usize, usize)> {
    let report = run_solvers(solvers, tasks, Some(LIMIT), 1, &|| {});
    let mut v: Vec<_> = report
        .results
        .iter()
        .map(|r| (r.solver.clone(), r.task.clone(), r.correct, r.pairs))
        .collect();
    v.sort();
    v
}

#[test]
fn batt_gives_what_run_gives_on_the_team_library() {
    let Some(tasks) = training() else { return };
    let solvers = library();
    let matches = batt(&solvers, &[], &tasks, Config::default());
    assert_eq!(matches.len(), solvers.len());
    assert_eq!(counts(&matches), run_counts(&solvers, &tasks));
}

/// The published arc-dsl `solvers.py` (../shared/ref): batt's outputs are the interpreter's,
/// value by value, on every sample of every solver's own task, and so are the counts.
#[test]
fn batt_gives_what_run_gives_on_the_published_solvers() {
    let (Some(path), Some(tasks)) = (shared::shared("ref/arc-dsl/solvers.py"), training()) else {
        return;
    };
    let solvers = parse_file("solvers.py", &std::fs::read_to_string(path).unwrap()).unwrap();
    let plan = Plan::new(&solvers, &[], &tasks, Config::default()).unwrap();
    let backend = CpuBackend::new(Some(LIMIT));
    let evaluation = plan.evaluate_all(&backend, &|| {});
    let by_name: HashMap<&str, &Program> = solvers.iter().map(|p| (p.name.as_str(), p)).collect();
    let by_id: HashMap<&str, &Task> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let outputs = plan.outputs(&evaluation);
    assert_eq!(outputs.len(), 400);
    let mut compared = 0;
    for (solver, task, samples) in outputs {
        let task = by_id[task];
        let program = by_name[solver];
        for (example, batt) in task.examples().zip(samples) {
            let args = arguments(program, &task.train_pairs_value(), example);
            let interpreted = run_guarded(program, &args, Some(LIMIT)).map_err(|e| e.kind().to_string());
            let batt = batt
                .expect("every sample has a result")
                .clone()
                .map_err(|e| e.python_name().to_string());
            assert_eq!(batt, interpreted, "{solver} on {}", task.id);
            compared += 1;
        }
    }
    assert_eq!(compared, 1718);
    assert_eq!(
        counts(&plan.run(&backend, &|| {}).matches),
        run_counts(&solvers, &tasks)
    );
}

/// Every solver of the library on the first tasks of its own list, each (solver, task) against
/// the interpreter on that task; merged and unmerged alike.
/// A plan run in chunks of solvers under a memory budget gives the matches, in the same order,
/// of one run with every solver at once.
#[test]
fn chunks_change_no_result() {
    let Some(all) = training() else { return };
    let solvers = library();
    let tasks: Vec<Task> = all.into_iter().step_by(10).collect();
    let config = Config {
        cross: true,
        no_merge: false,
    };
    let cpu = CpuBackend::new(Some(LIMIT));
    let whole = Plan::new(&solvers, &[], &tasks, config).unwrap();
    let expected = whole.run(&cpu, &|| {}).matches;
    assert_eq!(expected.len(), solvers.len() * tasks.len());
    assert!(expected.iter().any(Match::solved));
    for bytes in [1, 40 << 20] {
        let chunked = Plan::new(&solvers, &[], &tasks, config).unwrap().with_memory(bytes);
        let chunk = chunked.chunk_for(bytes, false);
        assert!(
            chunk < solvers.len(),
            "{bytes} bytes should cut the solvers into chunks"
        );
        assert_eq!(chunked.run(&cpu, &|| {}).matches, expected, "chunks of {chunk}");
    }
}

/// Parts of a plan (runs of its solvers on runs of its tasks, as a distributed run cuts it)
/// give, put in their places, the matches of the whole plan; in plain mode too, where each
/// solver has its own task.
#[test]
fn parts_of_a_plan_give_the_whole_plans_matches() {
    let Some(all) = training() else { return };
    let solvers = library();
    let tasks: Vec<Task> = all.into_iter().step_by(10).collect();
    let cpu = CpuBackend::new(Some(LIMIT));
    for cross in [true, false] {
        let config = Config { cross, no_merge: false };
        let whole = Plan::new(&solvers, &[], &tasks, config).unwrap();
        let (n, t) = (whole.solvers(), whole.tasks());
        let expected = whole.run(&cpu, &|| {}).matches;
        let mut keyed = Vec::new();
        for (s0, s1) in [(0, n / 3), (n / 3, 2 * n / 3), (2 * n / 3, n + 3)] {
            for (t0, t1) in [(0, 1), (1, t / 3), (t / 3, t)] {
                let part = Plan::new(&solvers, &[], &tasks, config).unwrap().part(s0..s1, t0..t1);
                let keys = part.pairs().into_iter().map(|(t, k)| (t, s0 + k));
                keyed.extend(keys.zip(part.run(&cpu, &|| {}).matches));
            }
        }
        keyed.sort_by_key(|(key, _)| *key);
        let matches: Vec<Match> = keyed.into_iter().map(|(_, m)| m).collect();
        assert_eq!(matches, expected, "cross {cross}");
    }
}

#[test]
fn cross_mode_gives_what_run_gives_and_merging_changes_nothing() {
    let Some(all) = training() else { return };
    let solvers = library();
    let ids: Vec<&str> = solvers.iter().take(12).filter_map(|p| p.task_id()).collect();
    let tasks: Vec<Task> = all.into_iter().filter(|t| ids.contains(&t.id.as_str())).collect();
    let merged = batt(
        &solvers,
        &[],
        &tasks,
        Config {
            cross: true,
            no_merge: false,
        },
    );
    assert_eq!(merged.len(), solvers.len() * tasks.len());
    let expected: Vec<(String, String, usize, usize)> = {
        let mut v = Vec::new();
        for p in &solvers {
            for t in &tasks {
                let r = run_on_task(p, t, Some(LIMIT));
                v.push((p.name.clone(), t.id.clone(), r.correct, r.pairs));
            }
        }
        v.sort();
        v
    };
    assert_eq!(counts(&merged), expected);
    let unmerged = batt(
        &solvers,
        &[],
        &tasks,
        Config {
            cross: true,
            no_merge: true,
        },
    );
    assert_eq!(merged, unmerged);
}

fn task(json: &str) -> Task {
    let json: serde_json::Value = serde_json::from_str(json).unwrap();
    tasks::from_json(Path::new("t.json"), &json).unwrap().tasks.remove(0)
}

/// Sample 0 has no cell of colour 1, so `first` of its `ofcolor` raises there and only there.
const TWO_LANES: &str = r#"{"train":[{"input":[[0,2],[2,0]],"output":[[0,2],[2,0]]},{"input":[[1,0],[0,0]],"output":[[1,1],[0,0]]}],"test":[]}"#;

#[test]
fn an_error_stays_in_its_lane() {
    let t = task(TWO_LANES);
    let src = "def solve_t(I):\n    x1 = ofcolor(I, ONE)\n    x2 = first(x1)\n    x3 = initset(x2)\n    x4 = shift(x3, RIGHT)\n    O = fill(I, ONE, x4)\n    return O\n\
               def solve_u(I):\n    x1 = ofcolor(I, ONE)\n    O = fill(I, ONE, x1)\n    return O\n";
    let solvers = parse_file("t.py", src).unwrap();
    let differ = parse_file(
        "d.py",
        "def differ(S, I, C):\n    x1 = equality(I, C)\n    O = branch(x1, ZERO, ONE)\n    return O\n",
    )
    .unwrap();
    let m = batt(
        &solvers,
        &differ,
        &[t],
        Config {
            cross: true,
            no_merge: false,
        },
    );
    // solve_t raises on sample 0 and solves sample 1.
    assert_eq!((m[0].solver.as_str(), m[0].correct, m[0].pairs), ("solve_t", 1, 2));
    assert!(
        m[0].error
            .as_deref()
            .is_some_and(|e| e.contains("StopIteration") || e.contains("Index")),
        "{:?}",
        m[0].error
    );
    assert_eq!(m[0].differs[0].1, [None, Some(0)]);
    // solve_u shares ofcolor(I, ONE) with it and is untouched: sample 0 is right, sample 1 not.
    assert_eq!((m[1].correct, m[1].error.as_deref()), (1, None));
    assert_eq!(m[1].differs[0].1, [Some(0), Some(1)]);
}

#[test]
fn an_unused_step_that_raises_fails_the_solver_as_in_the_interpreter() {
    let t = task(TWO_LANES);
    // Sample 0's output is its input, but `first` raises there on a step the output ignores.
    let src = "def solve_t(I):\n    x1 = ofcolor(I, ONE)\n    x2 = first(x1)\n    O = identity(I)\n    return O\n";
    let solvers = parse_file("t.py", src).unwrap();
    let m = batt(&solvers, &[], std::slice::from_ref(&t), Config::default());
    let r = run_on_task(&solvers[0], &t, None);
    assert_eq!((m[0].correct, r.correct), (0, 0));
    assert!(m[0].error.is_some() && r.error.is_some());
    let without = parse_file("t.py", "def solve_t(I):\n    O = identity(I)\n    return O\n").unwrap();
    assert_eq!(batt(&without, &[], &[t], Config::default())[0].correct, 1);
}

// ----- batched ops against the scalar primitives, lane by lane --------------------------------

fn grid() -> impl Strategy<Value = Grid> {
    (1usize..=30, 1usize..=30, 1..=(5 as Color)).prop_flat_map(|(h, w, colours)| {
        proptest::collection::vec(0..colours, h * w).prop_map(move |cells| Grid::new(h, w, cells))
    })
}

/// A lane's first argument: mostly grids, sometimes another shape the op must hand to the
/// scalar primitive (a grid as a tuple of rows, an object, an empty set, an integer).
fn piece() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => grid().prop_map(Value::grid),
        1 => grid().prop_map(|g| Value::tuple((0..g.h).map(|i| Value::tuple(g.row(i).iter().map(|&c| Value::Int(c as i64)).collect())).collect())),
        1 => grid().prop_map(|g| Value::object((0..g.cells.len()).map(|k| Cell { color: g.cells[k], i: (k / g.w) as i32, j: (k % g.w) as i32 }).collect())),
        1 => Just(Value::empty_set()),
        1 => Just(Value::Int(3)),
    ]
}

fn colour() -> impl Strategy<Value = Value> {
    prop_oneof![8 => (-1i64..6).prop_map(Value::Int), 1 => Just(Value::Bool(true)), 1 => Just(Value::Int(300))]
}

fn patch() -> impl Strategy<Value = Value> {
    let cells = proptest::collection::vec((-2i32..32, -2i32..32, 0i32..10), 0..40);
    prop_oneof![
        3 => cells.clone().prop_map(|c| Value::indices(c.into_iter().map(|(i, j, _)| Loc { i, j }).collect())),
        3 => cells.prop_map(|c| Value::object(c.into_iter().map(|(i, j, color)| Cell { color, i, j }).collect())),
        1 => Just(Value::empty_set()),
        1 => Just(Value::Pair(1, 1)),
    ]
}

fn scalar(name: &str, args: &[Value]) -> LaneResult {
    (PrimId::of(name).unwrap().spec().imp)(args)
}

/// Checks `call_prim` against the scalar primitive on every lane; `shared` marks arguments
/// passed as one value for all lanes (from lane 0).
fn check(name: &str, lanes: &[Vec<Value>], shared: &[bool]) -> Result<(), TestCaseError> {
    let id = PrimId::of(name).unwrap();
    let args: Vec<Arg<'_>> = (0..shared.len())
        .map(|a| {
            if shared[a] {
                Arg::Same(&lanes[0][a])
            } else {
                Arg::Each(lanes.iter().map(|l| &l[a]).collect())
            }
        })
        .collect();
    let got = call_prim(&CpuBackend::default(), id, &args, lanes.len());
    prop_assert_eq!(got.len(), lanes.len());
    for (k, lane) in lanes.iter().enumerate() {
        let lane_args: Vec<Value> = (0..shared.len())
            .map(|a| {
                if shared[a] {
                    lanes[0][a].clone()
                } else {
                    lane[a].clone()
                }
            })
            .collect();
        prop_assert_eq!(&got[k], &scalar(name, &lane_args), "{} on lane {}", name, k);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn objects_batched_equals_scalar(gs in proptest::collection::vec(piece(), 1..8), mode in 0i64..8) {
        let flags = [mode & 4 != 0, mode & 2 != 0, mode & 1 != 0].map(Value::Bool);
        let lanes: Vec<Vec<Value>> = gs.iter().map(|g| vec![g.clone(), flags[0].clone(), flags[1].clone(), flags[2].clone()]).collect();
        check("objects", &lanes, &[false, true, true, true])?;
        let lanes: Vec<Vec<Value>> = gs.into_iter().map(|g| vec![g, Value::Int(mode)]).collect();
        check("o_g", &lanes, &[false, true])?;
    }

    #[test]
    fn colour_queries_batched_equal_scalar(lanes in proptest::collection::vec((piece(), colour()), 1..8)) {
        let lanes: Vec<Vec<Value>> = lanes.into_iter().map(|(g, c)| vec![g, c]).collect();
        check("ofcolor", &lanes, &[false, false])?;
        check("colorcount", &lanes, &[false, false])?;
        check("colorcount", &lanes, &[false, true])?;
        let one: Vec<Vec<Value>> = lanes.iter().map(|l| vec![l[0].clone()]).collect();
        check("palette", &one, &[false])?;
        check("p_g", &one, &[false])?;
        for t in ["rot90", "rot180", "rot270", "hmirror", "vmirror", "dmirror", "cmirror"] {
            check(t, &one, &[false])?;
        }
    }

    #[test]
    fn fill_and_paint_batched_equal_scalar(lanes in proptest::collection::vec((piece(), colour(), patch()), 1..8)) {
        let lanes: Vec<Vec<Value>> = lanes.into_iter().map(|(g, c, p)| vec![g, c, p]).collect();
        check("fill", &lanes, &[false, false, false])?;
        let paint: Vec<Vec<Value>> = lanes.iter().map(|l| vec![l[0].clone(), l[2].clone()]).collect();
        check("paint", &paint, &[false, false])?;
    }

    #[test]
    fn colorfilter_and_apply_batched_equal_scalar(gs in proptest::collection::vec(grid(), 1..6), c in colour()) {
        let objs: Vec<Value> = gs.iter().map(|g| scalar("objects", &[Value::grid(g.clone()), Value::Bool(true), Value::Bool(false), Value::Bool(true)]).unwrap()).collect();
        let lanes: Vec<Vec<Value>> = objs.iter().map(|o| vec![o.clone(), c.clone()]).collect();
        check("colorfilter", &lanes, &[false, true])?;
        for f in ["size", "toindices", "normalize", "color", "rot90"] {
            let f = Value::prim(PrimId::of(f).unwrap());
            let lanes: Vec<Vec<Value>> = objs.iter().map(|o| vec![f.clone(), o.clone()]).collect();
            check("apply", &lanes, &[true, false])?;
            check("mapply", &lanes, &[true, false])?;
        }
        // apply(rot90, a tuple of grids) runs as one batched transform.
        let grids = Value::tuple(gs.into_iter().map(Value::grid).collect());
        check("apply", &[vec![Value::prim(PrimId::of("rot90").unwrap()), grids]], &[true, false])?;
    }
}

/// A samples group whose argument is not a tuple of pairs on some lanes: those lanes fail,
/// the others get their palettes (the palettes were once asked of every lane with the values
/// of the good ones only, which indexed past them).
#[test]
fn a_samples_group_keeps_each_lanes_error_in_its_lane() {
    use arcbatch::batch::{call_group, Group};
    let grid = |c: Color| Value::grid(Grid::filled(2, 2, c));
    let samples = Value::tuple(vec![Value::tuple(vec![grid(1), grid(2)])]);
    let not_samples = Value::Int(3);
    let lanes = [&not_samples, &samples, &not_samples];
    let group = Group::Samples {
        in_palettes: true,
        out_palettes: true,
    };
    let results = call_group(&CpuBackend::default(), &group, &Arg::Each(lanes.to_vec()), lanes.len());
    assert_eq!(results.len(), 3);
    assert!(results[0].is_err() && results[2].is_err(), "{results:?}");
    let palette = |c: i64| Value::tuple(vec![Value::Int(c)]);
    let Ok(Value::Tuple(parts)) = &results[1] else {
        panic!("the good lane's group: {:?}", results[1])
    };
    assert_eq!(parts[2], palette(1), "the inputs' palettes");
    assert_eq!(parts[3], palette(2), "the outputs' palettes");
}
