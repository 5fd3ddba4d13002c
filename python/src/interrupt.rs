//! Long calls that Python can interrupt, and the per-call time limit of `arcbatch.dsl`.
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

use std::cell::{Cell, RefCell};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;

use arcbatch::dsl::func::{caught, Deadline, Interrupt, Panicked, Watching};
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

/// Runs pending signal handlers; true when one raised (its exception is then pending).
fn signal_raised() -> bool {
    // SAFETY: the poll of `attached`'s watch, which runs only on the thread that installed
    // it, inside `attached`, where that thread holds the GIL.
    unsafe { pyo3::ffi::PyErr_CheckSignals() != 0 }
}

/// Runs a DSL computation on this thread, the GIL held: under the thread's time limit (see
/// [`set_time_limit`]), stopped with [`arcbatch::dsl::DslError::Interrupted`] when a signal
/// handler raises, whose exception is then pending for the caller to raise. A panic becomes
/// `arcbatch.InternalError`.
pub fn attached<T>(py: Python<'_>, f: impl FnOnce() -> DslResult<T>) -> PyResult<DslResult<T>> {
    let _watch = Interrupt::polling(signal_raised);
    let _deadline = CALL_LIMIT.with(Cell::get).map(|l| Deadline::set(Some(l)));
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
