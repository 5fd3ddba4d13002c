//! The worker pools of the module's parallel calls (`run` and the batched functions).
//!
//! One shared pool of named threads, sized by `ARCBATCH_THREADS` or else the number of cores
//! (as the CLI's pool). A call given `threads=N` runs in a pool of that size, kept for the next
//! call that asks the same. Work is split into one contiguous range per thread ([`chunk_len`]).
//!
//! Pools remember the process that built them: a child made by `fork` (Python's
//! `multiprocessing` on Linux) has none of its parent's threads, so it builds its own pools
//! rather than wait forever on the parent's.

use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder};

/// A pool of threads, and the lock its calls take turns by (see [`crate::interrupt::on_pool`]).
pub struct Pool {
    pub threads: ThreadPool,
    pub turn: Mutex<()>,
}

/// Why there is no pool for a call: a bad `threads` argument, or threads that do not start.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("threads must be at least 1")]
    NoThreads,
    #[error("cannot start {threads} threads")]
    Start {
        threads: usize,
        #[source]
        source: ThreadPoolBuildError,
    },
}

/// A pool and the process that built it.
struct Built {
    pid: u32,
    threads: Option<usize>,
    pool: Arc<Pool>,
}

/// The shared pool (`threads: None`) and the pools built for explicit sizes.
static POOLS: Mutex<Vec<Built>> = Mutex::new(Vec::new());

fn build(threads: usize) -> Result<Arc<Pool>, PoolError> {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("arcbatch-{k}"))
        // As a main thread's: nested function values recurse once per level.
        .stack_size(8 << 20)
        .build()
        .map(|threads| {
            Arc::new(Pool {
                threads,
                turn: Mutex::new(()),
            })
        })
        .map_err(|source| PoolError::Start { threads, source })
}

/// The pool for a call: `threads` threads, or the shared pool.
pub fn pool(threads: Option<usize>) -> Result<Arc<Pool>, PoolError> {
    if threads == Some(0) {
        return Err(PoolError::NoThreads);
    }
    let pid = std::process::id();
    let mut pools = POOLS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if pools.iter().any(|b| b.pid != pid) {
        // Inherited through fork: their threads are not in this process. Dropping them would
        // signal threads that do not exist, so they are forgotten instead.
        for stale in pools.drain(..) {
            std::mem::forget(stale);
        }
    }
    if let Some(b) = pools.iter().find(|b| b.threads == threads) {
        return Ok(b.pool.clone());
    }
    let size = threads.unwrap_or_else(|| {
        let from_env = std::env::var("ARCBATCH_THREADS").ok().and_then(|s| s.parse().ok());
        from_env
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1)
    });
    let pool = build(size)?;
    pools.push(Built {
        pid,
        threads,
        pool: pool.clone(),
    });
    Ok(pool)
}

/// The length of the contiguous ranges `n` items are split into: one range per thread.
pub fn chunk_len(n: usize, threads: usize) -> usize {
    n.div_ceil(threads.max(1)).max(1)
}
