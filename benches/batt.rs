//! batt benches (criterion): merged programs of 32, 100 and 400 solvers, every solver on every
//! lane (`--cross`), over 10, 100 and 1,000 lanes; the columnar evaluation against a per-lane
//! loop of the interpreter on the same solvers; and a 32-solver program with 0, 3 and 10
//! mutants per solver, merged and not.
//!
//! Solvers: the team library `dsl/solvers.py`, and the published arc-dsl `solvers.py` when
//! `ARCBATCH_REFERENCE_SOLVERS` names a local copy, less any solver that costs over 5 ms a lane
//! (see [`PATHOLOGICAL`]). Lanes: the samples of the training tasks of `../shared/arc` (or
//! `ARCBATCH_SHARED`), in task order, cut to the lane count.
//!
//! `cargo bench --bench batt` (all), `cargo bench --bench batt -- mutants` (one group).

#[path = "../tests/shared/mod.rs"]
mod shared;

use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;

use arcbatch::batch::CpuBackend;
use arcbatch::batt::{Config, Plan};
use arcbatch::program::{parse_file, run_guarded, ConstKey, Operand, Program};
use arcbatch::run::arguments;
use arcbatch::tasks::{self, Task};

const LANES: [usize; 3] = [10, 100, 1000];
const LIMIT: Option<Duration> = Some(Duration::from_secs(2));

/// A solver costing more than this per lane (every task's samples) is left out of the pools:
/// a step that runs for seconds on foreign grids (arc-dsl's `solve_d22278a0` does) would make
/// every figure a measure of that one step.
const PATHOLOGICAL: Duration = Duration::from_millis(5);

/// The solver sets, (name, programs), loaded once.
static POOLS: LazyLock<Vec<(&'static str, Vec<Program>)>> = LazyLock::new(|| {
    let team =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py")).expect("dsl/solvers.py");
    let mut pools = vec![("team", parse_file("dsl/solvers.py", &team).expect("the library parses"))];
    match std::env::var_os("ARCBATCH_REFERENCE_SOLVERS") {
        Some(path) => {
            let text = std::fs::read_to_string(&path).expect("ARCBATCH_REFERENCE_SOLVERS is readable");
            pools.push((
                "ref",
                parse_file("solvers.py", &text).expect("the published solvers parse"),
            ));
        }
        None => eprintln!("note: set ARCBATCH_REFERENCE_SOLVERS to bench the 400 published solvers too"),
    }
    let Some(all) = training() else { return pools };
    // One sample of every tenth task: small and large grids alike.
    let probe: Vec<Task> = all
        .iter()
        .step_by(10)
        .map(|t| Task {
            train: t.train[..1].to_vec(),
            test: Vec::new(),
            ..t.clone()
        })
        .collect();
    let backend = CpuBackend::new(Some(PATHOLOGICAL * 8));
    for (name, programs) in &mut pools {
        programs.retain(|p| {
            let plan = Plan::new(std::slice::from_ref(p), &[], &probe, cross()).expect("a solver merges");
            let start = Instant::now();
            plan.run(&backend, &|| {});
            let fine = start.elapsed() < PATHOLOGICAL * plan.lanes() as u32;
            if !fine {
                eprintln!("note: {name}: {} left out (over {PATHOLOGICAL:?} per lane)", p.name);
            }
            fine
        });
    }
    pools
});

/// The training tasks, cut so that they hold exactly `lanes` samples (train then test).
fn tasks_with_lanes(all: &[Task], lanes: usize) -> Vec<Task> {
    let mut out = Vec::new();
    let mut left = lanes;
    for t in all {
        if left == 0 {
            break;
        }
        let mut t = t.clone();
        let n = t.train.len() + t.test.len();
        if n > left {
            t.train.truncate(left);
            t.test.truncate(left - t.train.len());
        }
        left -= t.train.len() + t.test.len();
        out.push(t);
    }
    out
}

fn training() -> Option<Vec<Task>> {
    Some(tasks::load(&shared::shared("arc/training")?).ok()?.tasks)
}

fn cross() -> Config {
    Config {
        cross: true,
        no_merge: false,
    }
}

/// Cost against solvers and lanes.
fn solvers_and_lanes(c: &mut Criterion) {
    let Some(all) = training() else { return };
    let backend = CpuBackend::new(LIMIT);
    let mut g = c.benchmark_group("cpu/merged");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (pool, programs) in POOLS.iter() {
        let mut sizes: Vec<usize> = [32, 100, 400].into_iter().filter(|&n| n <= programs.len()).collect();
        if programs.len() < 400 {
            sizes.push(programs.len());
        }
        for n in sizes {
            for lanes in LANES {
                let tasks = tasks_with_lanes(&all, lanes);
                let plan = Plan::new(&programs[..n], &[], &tasks, cross()).expect("the solvers merge");
                g.throughput(Throughput::Elements(lanes as u64));
                g.bench_function(BenchmarkId::new(format!("{pool}-{n}"), lanes), |b| {
                    b.iter(|| plan.run(&backend, &|| {}))
                });
            }
        }
    }
    g.finish();
}

/// The columnar evaluation against the interpreter, lane by lane, on the same 32 solvers.
fn columnar_vs_interpreter(c: &mut Criterion) {
    let Some(all) = training() else { return };
    let backend = CpuBackend::new(LIMIT);
    let mut g = c.benchmark_group("cpu/columnar-vs-interpreter");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let (_, programs) = &POOLS[0];
    let programs = &programs[..32.min(programs.len())];
    for lanes in [100, 1000] {
        let tasks = tasks_with_lanes(&all, lanes);
        g.throughput(Throughput::Elements(lanes as u64));
        let plan = Plan::new(programs, &[], &tasks, cross()).expect("the solvers merge");
        g.bench_function(BenchmarkId::new("columnar", lanes), |b| {
            b.iter(|| plan.run(&backend, &|| {}))
        });
        let jobs: Vec<(&Task, usize, arcbatch::dsl::Value)> = tasks
            .iter()
            .flat_map(|t| (0..t.train.len() + t.test.len()).map(move |s| (t, s, t.train_pairs_value())))
            .collect();
        g.bench_function(BenchmarkId::new("interpreter", lanes), |b| {
            b.iter(|| {
                jobs.par_iter()
                    .map(|(t, s, pairs)| {
                        let example = t.examples().nth(*s).expect("a sample");
                        programs
                            .iter()
                            .filter(|p| run_guarded(p, &arguments(p, pairs, example), LIMIT).is_ok())
                            .count()
                    })
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

/// Mutant `m` of a program: its `m`-th constant argument (cycling) changed, every other step
/// the same, so a merged program shares the steps before the change.
fn mutant(p: &Program, m: usize) -> Option<Program> {
    let sites: Vec<(usize, usize)> = p
        .steps
        .iter()
        .enumerate()
        .flat_map(|(s, step)| {
            step.args.iter().enumerate().filter_map(move |(a, op)| match op {
                Operand::Const(ConstKey::Int(_) | ConstKey::Bool(_) | ConstKey::Pair(..)) => Some((s, a)),
                _ => None,
            })
        })
        .collect();
    let &(s, a) = sites.get(m % sites.len().max(1))?;
    let mut q = p.clone();
    q.name = format!("{}_m{m}", p.name);
    let op = &mut q.steps[s].args[a];
    let bump = (m / sites.len()) as i64 + 1;
    *op = match &*op {
        Operand::Const(ConstKey::Int(n)) => Operand::Const(ConstKey::Int(*n + bump)),
        Operand::Const(ConstKey::Bool(b)) => Operand::Const(ConstKey::Bool(!*b)),
        Operand::Const(ConstKey::Pair(i, j)) => Operand::Const(ConstKey::Pair(*j + bump, *i)),
        other => other.clone(),
    };
    Some(q)
}

/// A 32-solver program with 0, 3 and 10 mutants per solver, merged and not.
fn mutants(c: &mut Criterion) {
    let Some(all) = training() else { return };
    let backend = CpuBackend::new(LIMIT);
    let mut g = c.benchmark_group("cpu/mutants");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let (_, programs) = &POOLS[0];
    let base = &programs[..32.min(programs.len())];
    let tasks = tasks_with_lanes(&all, 100);
    for per_solver in [0, 3, 10] {
        let mut set: Vec<Program> = base.to_vec();
        set.extend(base.iter().flat_map(|p| (1..=per_solver).filter_map(|m| mutant(p, m))));
        for no_merge in [false, true] {
            let plan = Plan::new(&set, &[], &tasks, Config { cross: true, no_merge }).expect("the solvers merge");
            let name = if no_merge { "no-merge" } else { "merged" };
            g.bench_function(BenchmarkId::new(name, per_solver), |b| {
                b.iter(|| plan.run(&backend, &|| {}))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, solvers_and_lanes, columnar_vs_interpreter, mutants);
criterion_main!(benches);
