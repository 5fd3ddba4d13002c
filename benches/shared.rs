//! What a value's reference count costs: `std::sync::Arc` against [`Shared`], the pointer values
//! hold their containers in, and a `Box` of the same block as the floor.
//!
//! - `new and drop`: a block made and freed by its only holder, as most values are. `Arc`
//!   decrements its count and then its weak count with locked instructions; `Shared` reads its
//!   count and frees.
//! - `clone and drop`: a reference made and released while another is held, a locked
//!   instruction each for both (an immortal `Shared`, as the primitives are, writes nothing).
//!
//! Run: `cargo bench --bench shared`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};

use arcbatch::dsl::shared::Shared;

/// The block: as large as a small object's cells.
type Block = [u64; 4];

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("new and drop");
    g.bench_function("Arc", |b| b.iter(|| drop(black_box(Arc::new(black_box([1u64; 4]))))));
    g.bench_function("Shared", |b| {
        b.iter(|| drop(black_box(Shared::new(black_box([1u64; 4])))))
    });
    // Arc's block is two counts and the value; a Box of as many words is the allocator alone.
    g.bench_function("Box", |b| b.iter(|| drop(black_box(Box::new(black_box([1u64; 6]))))));
    g.finish();

    let mut g = c.benchmark_group("clone and drop");
    let arc: Arc<Block> = Arc::new([1; 4]);
    g.bench_function("Arc", |b| b.iter(|| drop(black_box(black_box(&arc).clone()))));
    let shared: Shared<Block> = Shared::new([1; 4]);
    g.bench_function("Shared", |b| b.iter(|| drop(black_box(black_box(&shared).clone()))));
    let immortal: Shared<Block> = Shared::immortal([1; 4]);
    g.bench_function("Shared, immortal", |b| {
        b.iter(|| drop(black_box(black_box(&immortal).clone())))
    });
    g.finish();
}

criterion_group!(shared, benches);
criterion_main!(shared);
