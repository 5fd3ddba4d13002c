//! Benchmarks of the hot primitives over real ARC grids: every train and test input grid of
//! the ARC-AGI-1 training split (`ARC_TRAINING_DIR`, by default `../shared/arc/training` beside the checkout).
//!
//! Primitives are called through the registry, so the benches compile whichever family
//! implements them; a primitive that is not registered is skipped with a note. Each bench
//! iteration calls the primitive once per grid (or per grid and colour) and declares that
//! many elements, so criterion's throughput reads as calls per second.
//!
//! Run: `cargo bench --bench dsl -- objects` (a filter picks benches by name).

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use arcbatch::dsl::registry::PrimFn;
use arcbatch::dsl::{PrimId, Value};
use arcbatch::tasks::{self, TaskError};
use arcbatch::Chain;

/// Every train and test input grid of the task files in `dir`.
fn load_grids(dir: &Path) -> Result<Vec<Value>, TaskError> {
    let set = tasks::load(dir)?;
    for e in &set.errors {
        println!("note: skipped: {}", Chain(e));
    }
    Ok(set
        .tasks
        .iter()
        .flat_map(|t| t.examples())
        .map(|ex| ex.input_value())
        .collect())
}

/// A registered primitive's implementation, or a note that its bench is skipped.
fn prim(name: &str) -> Option<PrimFn> {
    let f = PrimId::of(name).map(|id| id.spec().imp);
    if f.is_none() {
        println!("note: {name} is not registered; its bench is skipped");
    }
    f
}

/// Benches `f` over a list of argument lists: one iteration calls it once per list.
fn bench_calls(c: &mut Criterion, group: &str, name: &str, f: PrimFn, calls: &[Vec<Value>]) {
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(calls.len() as u64));
    g.bench_function(name, |b| {
        b.iter(|| {
            for args in calls {
                let _ = black_box(f(black_box(args)));
            }
        })
    });
    g.finish();
}

/// The objects of a grid by `objects(grid, T, F, T)`, in canonical order.
fn foreground_objects(objects: PrimFn, grid: &Value) -> Vec<Value> {
    let args = [grid.clone(), Value::Bool(true), Value::Bool(false), Value::Bool(true)];
    objects(&args).ok().and_then(|objs| objs.members()).unwrap_or_default()
}

fn benches(c: &mut Criterion) {
    let dir = std::env::var("ARC_TRAINING_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/arc/training").to_string());
    let grids = match load_grids(Path::new(&dir)) {
        Ok(g) if !g.is_empty() => g,
        Ok(_) => return println!("note: no ARC grids in {dir}; nothing to bench"),
        Err(e) => return println!("note: cannot read the ARC grids ({}); nothing to bench", Chain(&e)),
    };
    println!("{} input grids from {dir}", grids.len());

    let objects = prim("objects");
    if let Some(f) = objects {
        for flags in 0..8 {
            let (univalued, diagonal, without_bg) = (flags & 4 != 0, flags & 2 != 0, flags & 1 != 0);
            let name: String = [univalued, diagonal, without_bg]
                .iter()
                .map(|&b| if b { 'T' } else { 'F' })
                .collect();
            let calls: Vec<Vec<Value>> = grids
                .iter()
                .map(|g| {
                    vec![
                        g.clone(),
                        Value::Bool(univalued),
                        Value::Bool(diagonal),
                        Value::Bool(without_bg),
                    ]
                })
                .collect();
            bench_calls(c, "objects", &name, f, &calls);
        }
    }

    let ofcolor = prim("ofcolor");
    if let Some(f) = ofcolor {
        let calls: Vec<Vec<Value>> = grids
            .iter()
            .flat_map(|g| (0..10).map(move |color| vec![g.clone(), Value::Int(color)]))
            .collect();
        bench_calls(c, "ofcolor", "colours 0..9", f, &calls);
    }

    if let (Some(f), Some(ofcolor)) = (prim("fill"), ofcolor) {
        let calls: Vec<Vec<Value>> = grids
            .iter()
            .filter_map(|g| {
                let zeros = ofcolor(&[g.clone(), Value::Int(0)]).ok()?;
                Some(vec![g.clone(), Value::Int(1), zeros])
            })
            .collect();
        bench_calls(c, "fill", "colour 1 at ofcolor 0", f, &calls);
    }

    if let (Some(f), Some(objects)) = (prim("paint"), objects) {
        let calls: Vec<Vec<Value>> = grids
            .iter()
            .filter_map(|g| {
                let first = foreground_objects(objects, g).into_iter().next()?;
                Some(vec![g.clone(), first])
            })
            .collect();
        bench_calls(c, "paint", "first object", f, &calls);
    }

    if let (Some(f), Some(objects)) = (prim("occurrences"), objects) {
        let calls: Vec<Vec<Value>> = grids
            .iter()
            .filter_map(|g| {
                let objs = foreground_objects(objects, g);
                let smallest = objs.into_iter().min_by_key(|o| o.len().unwrap_or(0))?;
                Some(vec![g.clone(), smallest])
            })
            .collect();
        bench_calls(c, "occurrences", "smallest object", f, &calls);
    }
}

criterion_group!(dsl, benches);
criterion_main!(dsl);
