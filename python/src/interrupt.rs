//! Long calls that Python can interrupt, and the per-call time and memory limits of
//! `arcbatch.dsl`.
//!
//! Python runs signal handlers (Ctrl-C's `KeyboardInterrupt`, a harness's `SIGALRM` timer) on
//! the main thread, between bytecodes; native code holding the thread must ask for them. The
//! core asks its [`Interrupt`] at every [`Deadline::check`](arcbatch::dsl::func::Deadline::check)
//! (each program step, every 256 function-value calls), so:
//!
//! * a call that keeps the GIL (a DSL function called from Python, [`attached`]) polls
//!   `PyErr_CheckSignals` there: a handler that raises stops the computation, and its exception
//!   is what the call raises ([`crate::exceptions::dsl_error`] takes it);
//! * a call that releases the GIL (`run`, `batt`, `profile`, `batch`, [`on_pool`]) runs on the
//!   pool while the calling thread waits, running the handlers every few milliseconds; one
//!   that raises raises the interrupt watched by every thread of the pool, the work stops at its
//!   next check, and the call raises the handler's exception.
//!
//! Either way nothing is left behind: the next call starts afresh.
//!
//! A call's memory limit ([`set_memory_limit`]) bounds what the Rust side allocates for it
//! ([`arcbatch::dsl::memory`]): past it the call raises `arcbatch.DslLimitError`, a
//! `MemoryError`, instead of the process aborting when an allocation fails.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;

use arcbatch::dsl::func::{caught, Deadline, Interrupt, Panicked, Watching};
use arcbatch::dsl::memory;
use arcbatch::dsl::DslResult;

use crate::exceptions::{error, internal, Kind};
use crate::pool::Pool;

/// How often a thread waiting on the pool runs pending signal handlers.
const POLL_EVERY: Duration = Duration::from_millis(2);

thread_local! {
    /// The time limit of each DSL call made from this (Python) thread.
    static CALL_LIMIT: Cell<Option<Duration>> = const { Cell::new(None) };
    /// On a pool thread: the interrupt of the call the pool is running.
    static POOL_WATCH: RefCell<Option<Watching>> = const { RefCell::new(None) };
}

/// Sets the time limit of every DSL call made from the calling thread afterwards (`None`
/// lifts it); a call that runs past it raises `arcbatch.DslTimeoutError`. Returns the limit
/// it replaces. Seconds, as Python counts time.
#[pyfunction]
#[pyo3(signature = (seconds))]
pub fn set_time_limit(py: Python<'_>, seconds: Option<f64>) -> PyResult<Option<f64>> {
    let limit = seconds
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                error(
                    py,
                    Kind::Input,
                    format!("a time limit is a non-negative number of seconds, not {s}"),
                )
            })
        })
        .transpose()?;
    Ok(CALL_LIMIT.with(|l| l.replace(limit)).map(|d| d.as_secs_f64()))
}

/// The memory limit of each DSL call in bytes (0: none), for every thread.
static CALL_MEMORY: AtomicU64 = AtomicU64::new(0);

/// The memory limit of a call unless the user sets another: 2 GB, or half the address space
/// where the process has a limit on it (`RLIMIT_AS`).
const DEFAULT_CALL_MEMORY: u64 = 2 << 30;

/// Sets the default memory limit of a call ([`DEFAULT_CALL_MEMORY`]), at import.
pub fn default_memory_limit() {
    CALL_MEMORY.store(memory::fitting_budget(DEFAULT_CALL_MEMORY), Ordering::Relaxed);
}

/// Sets the memory limit, in MB, of every DSL call made afterwards, from any thread (`None`
/// lifts it): a call whose values would take more raises `arcbatch.DslLimitError`, a
/// `MemoryError`. Returns the limit it replaces.
#[pyfunction]
#[pyo3(signature = (mb))]
pub fn set_memory_limit(mb: Option<u64>) -> Option<u64> {
    let bytes = mb.map_or(0, |mb| mb.saturating_mul(1 << 20));
    match CALL_MEMORY.swap(bytes, Ordering::Relaxed) {
        0 => None,
        previous => Some(previous >> 20),
    }
}

/// The bytes the Rust side of the module holds now, as counted (within 256 KB per thread):
/// what a test checks calls leave behind.
#[pyfunction]
pub fn allocated_bytes() -> u64 {
    memory::process_bytes()
}

/// The memory limit of a call, if any: the one set, and under an address-space limit no more
/// than half of what is left of it, so that the result can still become Python objects.
fn call_memory() -> Option<u64> {
    let set = Some(CALL_MEMORY.load(Ordering::Relaxed)).filter(|&bytes| bytes > 0);
    match memory::address_space_left() {
        Some(left) => Some(set.map_or(left / 2, |set| set.min(left / 2))),
        None => set,
    }
}

/// Objects converted between polls of [`poll_signals`].
const CONVERTED_PER_POLL: u32 = 4096;

thread_local! {
    /// Objects converted on this thread since the last poll.
    static CONVERTED: Cell<u32> = const { Cell::new(0) };
}

/// Counts one object converted between Python and the DSL, and every [`CONVERTED_PER_POLL`]
/// runs pending signal handlers: a conversion of millions of objects stops within
/// milliseconds of a signal whose handler raises, with the handler's exception.
pub fn poll_signals(py: Python<'_>) -> PyResult<()> {
    let due = CONVERTED.with(|c| {
        let n = c.get() + 1;
        c.set(n % CONVERTED_PER_POLL);
        n == CONVERTED_PER_POLL
    });
    if due {
        py.check_signals()?;
    }
    Ok(())
}

/// Runs pending signal handlers; true when one raised (its exception is then pending).
fn signal_raised() -> bool {
    // SAFETY: the poll of `attached`'s watch, which runs only on the thread that installed
    // it, inside `attached`, where that thread holds the GIL.
    unsafe { pyo3::ffi::PyErr_CheckSignals() != 0 }
}

/// Runs a DSL computation on this thread, the GIL held: under the thread's time limit (see
/// [`set_time_limit`]) and the memory limit ([`set_memory_limit`]), stopped with
/// [`arcbatch::dsl::DslError::Interrupted`] when a signal handler raises, whose exception is
/// then pending for the caller to raise. A panic becomes `arcbatch.InternalError`.
pub fn attached<T>(py: Python<'_>, f: impl FnOnce() -> DslResult<T>) -> PyResult<DslResult<T>> {
    let _watch = Interrupt::polling(signal_raised);
    let _deadline = CALL_LIMIT.with(Cell::get).map(|l| Deadline::set(Some(l)));
    let _memory = memory::Budget::set(call_memory());
    caught(f).map_err(|Panicked(message)| internal(py, &message))
}

/// Runs `work` on `pool` with the GIL released, other Python threads going on meanwhile; this
/// thread waits, running pending signal handlers every [`POLL_EVERY`]. When a handler raises,
/// the work is interrupted (it stops at its next check) and, once it has stopped, the call
/// raises the handler's exception. A panic becomes `arcbatch.InternalError`.
///
/// Calls on one pool take turns, so that an interrupt stops only the call it belongs to.
pub fn on_pool<T: Send>(py: Python<'_>, pool: &Pool, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let interrupt = Interrupt::new();
    let (tx, rx) = channel();
    // Locked only by this thread: the lock makes the receiver shareable with `detach`.
    let rx = Mutex::new(rx);
    let receive = |timeout: Option<Duration>| {
        let rx = rx.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            let _turn = pool.turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            watch_pool(pool, Some(&interrupt));
            let result = caught(|| pool.threads.install(work));
            watch_pool(pool, None);
            // The receiver is gone only if the waiting thread itself failed.
            let _ = tx.send(result);
        });
        loop {
            match py.detach(|| receive(Some(POLL_EVERY))) {
                Ok(result) => return result.map_err(|Panicked(message)| internal(py, &message)),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(raised) = py.check_signals() {
                        interrupt.raise();
                        // Stopped work answers within a check or two; it is dropped unread.
                        let _ = py.detach(|| receive(None));
                        return Err(raised);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(internal(py, "the worker of a detached call ended without a result"));
                }
            }
        }
    })
}

/// Makes every thread of `pool` watch `interrupt` (or nothing).
fn watch_pool(pool: &Pool, interrupt: Option<&Interrupt>) {
    pool.threads.broadcast(|_| {
        POOL_WATCH.with(|w| {
            // The old guard first, so that the new one does not restore it when dropped.
            drop(w.borrow_mut().take());
            *w.borrow_mut() = interrupt.map(Interrupt::watch);
        })
    });
}
