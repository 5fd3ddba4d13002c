//! The worker pools of the module's parallel calls (`run` and the batched functions).
//!
//! One shared pool of named threads, sized by `ARCBATCH_THREADS` or else the number of cores
//! (as the CLI's pool). A call given `threads=N` runs in a pool of that size, kept for the next
//! call that asks the same. Work is split into one contiguous range per thread ([`chunk_len`]).

use std::sync::{Arc, Mutex, OnceLock};

use rayon::{ThreadPool, ThreadPoolBuilder};

/// Pools built for explicit `threads=N`, by size.
static SIZED: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
static SHARED: OnceLock<Result<Arc<ThreadPool>, String>> = OnceLock::new();

fn build(threads: usize) -> Result<Arc<ThreadPool>, String> {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("arcbatch-{k}"))
        .build()
        .map(Arc::new)
        .map_err(|e| format!("cannot start {threads} threads: {e}"))
}

/// The pool for a call: `threads` threads, or the shared pool.
pub fn pool(threads: Option<usize>) -> Result<Arc<ThreadPool>, String> {
    match threads {
        Some(0) => Err("threads must be at least 1".into()),
        Some(n) => {
            let mut sized = SIZED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some((_, p)) = sized.iter().find(|(size, _)| *size == n) {
                return Ok(p.clone());
            }
            let p = build(n)?;
            sized.push((n, p.clone()));
            Ok(p)
        }
        None => SHARED
            .get_or_init(|| {
                let from_env = std::env::var("ARCBATCH_THREADS").ok().and_then(|s| s.parse().ok());
                build(from_env.unwrap_or_else(rayon::current_num_threads).max(1))
            })
            .clone(),
    }
}

/// The length of the contiguous ranges `n` items are split into: one range per thread.
pub fn chunk_len(n: usize, threads: usize) -> usize {
    n.div_ceil(threads.max(1)).max(1)
}
