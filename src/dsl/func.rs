//! Function values: primitives referred to by name, and the closures that `compose`, `chain`,
//! `fork`, `matcher`, `rbind`, `lbind` and `power` build.
//!
//! A closure keeps its parts as plain [`Value`]s, as the reference's lambdas do: `compose(5, f)`
//! builds fine and fails only when called, exactly like Python. Calls go through [`call`], which
//! checks the arity the reference's `co_argcount` would report.
//!
//! An embedding may add functions of its own ([`Foreign`]: the Python module's callables). They
//! are called once per call the reference makes: work on values holding one is never
//! compiled into a kernel or memoised ([`holds_foreign`]).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use smallvec::SmallVec;

use super::error::{DslError, DslResult};
use super::registry::PrimId;
use super::shared::Shared;
use super::value::{as_values, borrowed, Value};

/// A callable value. `T` is what a closure's parts are: [`Value`]s in a function value, and
/// nodes of a kernel while the column compiler keeps a closure symbolic ([`super::column`]).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Func<T = Value> {
    /// A primitive of the registry.
    Prim(PrimId),
    /// `compose(outer, inner)`: `x -> outer(inner(x))`.
    Compose(T, T),
    /// `chain(h, g, f)`: `x -> h(g(f(x)))`.
    Chain(T, T, T),
    /// `fork(outer, a, b)`: `x -> outer(a(x), b(x))`.
    Fork(T, T, T),
    /// `matcher(function, target)`: `x -> function(x) == target`.
    Matcher(T, T),
    /// `rbind(function, fixed)`: fixes the last argument.
    Rbind(T, T),
    /// `lbind(function, fixed)`: fixes the first argument.
    Lbind(T, T),
    /// `power(function, n)` for `n >= 2`: `function` applied `n` times.
    Power(T, u32),
    /// A function of the embedding's own ([`Foreign`]).
    Foreign(ForeignFn),
}

/// A function supplied from outside the DSL (a Python callable): called with DSL values, as
/// the reference calls a Python function. It may do anything, so the engine calls it exactly
/// where and as often as the reference would, in the reference's order.
pub trait Foreign: Send + Sync {
    /// Calls it; what it raises comes back as [`DslError::Foreign`].
    fn call(&self, args: &[Value]) -> DslResult<Value>;
    /// What the reference's `rbind` and `lbind` read (`__code__.co_argcount`); `None` for a
    /// callable without `__code__` (a builtin, a `functools.partial`), which they refuse.
    fn arg_count(&self) -> Option<usize>;
    /// Its type's name (`function`, `functools.partial`), for messages.
    fn type_name(&self) -> &str;
    /// How it reads in messages (Python's `repr`).
    fn repr(&self) -> &str;
    /// Its identity: a foreign function equals only itself, as Python's functions do.
    fn id(&self) -> usize;
    /// Itself, for the embedding to find its object again.
    fn as_any(&self) -> &dyn Any;
}

/// A shared [`Foreign`] function, compared by identity.
#[derive(Clone)]
pub struct ForeignFn(Arc<dyn Foreign>);

/// Whether a foreign function was ever made in this process: until one is, no function value
/// is walked to look for one.
static FOREIGN_MADE: AtomicBool = AtomicBool::new(false);

impl ForeignFn {
    pub fn new(f: Arc<dyn Foreign>) -> ForeignFn {
        FOREIGN_MADE.store(true, Ordering::Relaxed);
        ForeignFn(f)
    }

    pub fn get(&self) -> &dyn Foreign {
        &*self.0
    }
}

impl PartialEq for ForeignFn {
    fn eq(&self, other: &ForeignFn) -> bool {
        self.0.id() == other.0.id()
    }
}

impl Eq for ForeignFn {}

impl PartialOrd for ForeignFn {
    fn partial_cmp(&self, other: &ForeignFn) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ForeignFn {
    fn cmp(&self, other: &ForeignFn) -> std::cmp::Ordering {
        self.0.id().cmp(&other.0.id())
    }
}

/// Whether values hold a [`Foreign`] function: one of them, a part of a function value, or a
/// member of a tuple or set (past 4,096 functions and containers walked, they are taken to).
/// Work on such values goes through [`call`] only, so that each foreign function is called
/// exactly where and as often as the reference would call it.
pub fn holds_foreign(values: &[Value]) -> bool {
    fn walk(v: &Value, budget: &mut u32) -> bool {
        let parts: &[Value] = match v {
            Value::Func(_) | Value::Tuple(_) | Value::Set(_) if *budget == 0 => return true,
            Value::Func(f) => {
                *budget -= 1;
                if matches!(**f, Func::Foreign(_)) {
                    return true;
                }
                let mut found = false;
                f.map(|part| found = found || walk(part, budget));
                return found;
            }
            Value::Tuple(items) | Value::Set(items) => {
                *budget -= 1;
                items
            }
            _ => return false,
        };
        parts.iter().any(|p| walk(p, budget))
    }
    FOREIGN_MADE.load(Ordering::Relaxed) && {
        let mut budget = 4096;
        values.iter().any(|v| walk(v, &mut budget))
    }
}

/// The deepest `power` the port builds. The reference builds `power(f, n)` by recursion and
/// raises `RecursionError` near CPython's default limit of 1000 frames.
pub const MAX_POWER: i64 = 990;

impl Func {
    /// The number of arguments the function takes (Python's `__code__.co_argcount`).
    #[inline]
    pub fn arity(&self) -> usize {
        self.arity_with(|f| match f {
            Value::Func(f) => Some(f.arity()),
            _ => None,
        })
    }
}

impl<T> Func<T> {
    /// The number of arguments the function takes, given the arity of a part where it is
    /// known to be a function. `rbind(f, x)` / `lbind(f, x)` take the reference's three-way
    /// branch on `f`'s arity.
    #[inline(always)]
    pub fn arity_with(&self, part_arity: impl FnOnce(&T) -> Option<usize>) -> usize {
        match self {
            Func::Prim(id) => id.spec().arity(),
            // Never checked ([`callable`]): the callable raises itself on a wrong count.
            Func::Foreign(f) => f.0.arg_count().unwrap_or(0),
            Func::Compose(..) | Func::Chain(..) | Func::Fork(..) | Func::Matcher(..) | Func::Power(..) => 1,
            Func::Rbind(f, _) | Func::Lbind(f, _) => match part_arity(f) {
                Some(2) => 1,
                Some(3) => 2,
                _ => 3,
            },
        }
    }

    /// The same closure over other parts, each mapped in order (left to right).
    pub fn map<U>(&self, mut part: impl FnMut(&T) -> U) -> Func<U> {
        match self {
            Func::Prim(id) => Func::Prim(*id),
            Func::Compose(a, b) => Func::Compose(part(a), part(b)),
            Func::Chain(a, b, c) => Func::Chain(part(a), part(b), part(c)),
            Func::Fork(a, b, c) => Func::Fork(part(a), part(b), part(c)),
            Func::Matcher(a, b) => Func::Matcher(part(a), part(b)),
            Func::Rbind(a, b) => Func::Rbind(part(a), part(b)),
            Func::Lbind(a, b) => Func::Lbind(part(a), part(b)),
            Func::Power(a, n) => Func::Power(part(a), *n),
            Func::Foreign(f) => Func::Foreign(f.clone()),
        }
    }
}

/// One function value per primitive, for [`Value::prim`]: immortal ([`Shared::immortal`]), so
/// that every thread clones and drops them without writing to them.
static PRIMS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    super::registry::registry()
        .ids()
        .map(|id| Value::Func(Shared::immortal(Func::Prim(id))))
        .collect()
});

impl Value {
    /// A primitive as a function value: a copy of the process's own, so that a step passing
    /// `size` or `rbind` to another allocates nothing and changes no count (the interpreter
    /// makes such a value each time a step names a primitive).
    pub fn prim(id: PrimId) -> Value {
        PRIMS[id.0 as usize].clone()
    }

    /// [`Value::prim`] as a bitwise copy that is never dropped (see [`borrowed`]).
    pub fn prim_copy(id: PrimId) -> ManuallyDrop<Value> {
        // SAFETY: the table lives as long as the process and is never changed.
        unsafe { borrowed(&PRIMS[id.0 as usize]) }
    }

    pub fn func(f: Func) -> Value {
        Value::Func(Shared::new(f))
    }
}

thread_local! {
    /// The current deadline, in nanoseconds on [`coarse_nanos`]'s clock ([`NO_DEADLINE`]: none).
    static DEADLINE: Cell<u64> = const { Cell::new(NO_DEADLINE) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
    static WATCH: RefCell<Watch> = const {
        RefCell::new(Watch {
            flag: None,
            poll: None,
            tripped: false,
        })
    };
    /// Whether [`WATCH`] has anything to consult ([`Watch::active`]), so that a check on a
    /// thread without one reads a flag, not the watch.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}

/// A time limit for the programs run on this thread. Function-value calls check it (every
/// 256th call, so the clock costs nothing measurable) and fail with [`DslError::Timeout`]
/// once it has passed; the interpreter checks it between steps. Dropping the guard lifts it.
///
/// The same check also stops a computation that was interrupted from outside (see
/// [`Interrupt`]), failing with [`DslError::Interrupted`].
pub struct Deadline {
    previous: u64,
}

/// [`DEADLINE`] when there is none.
const NO_DEADLINE: u64 = u64::MAX;

/// The interpreter reads the clock before the steps whose index is a multiple of this (see
/// [`Deadline::check_reading_clock`]).
pub const STEPS_PER_READING: usize = 4;

impl Deadline {
    /// A deadline `limit` from now (`None`: none), read on the clock [`Deadline::check`] reads:
    /// setting one costs one cheap clock reading, which counts when it is set for every pair
    /// of a task.
    pub fn set(limit: Option<Duration>) -> Deadline {
        // A limit past the clock's range (584 years) is none.
        let at = limit.map_or(NO_DEADLINE, |limit| {
            let limit = u64::try_from(limit.as_nanos()).unwrap_or(NO_DEADLINE);
            coarse_nanos().saturating_add(limit)
        });
        Deadline {
            previous: DEADLINE.with(|d| d.replace(at)),
        }
    }

    /// Fails once the current thread's computation was interrupted, its deadline passed or
    /// its memory budget ([`memory::Budget`](super::memory::Budget)) was spent. Inlined where it
    /// is called (between any two steps of a program): where nothing is watched or bounded it
    /// reads three thread locals and two globals, and the clock where a deadline is set, which
    /// is kept in nanoseconds so that a reading is compared with it as it comes.
    #[inline]
    pub fn check() -> DslResult<()> {
        Deadline::check_reading_clock(true)
    }

    /// [`Deadline::check`], the clock read only where `read_clock`: the interpreter checks
    /// before every step of a program it computes, and reads the clock before those whose
    /// index is a multiple of [`STEPS_PER_READING`]. A reading before every step was 1 % of
    /// `run`'s time over the published solvers, whose steps mostly take under a microsecond. A
    /// program has no loop of steps, and a step that loops reads the clock itself (its kernels
    /// every 256 rows, its calls of function values every 256 calls), so a deadline is still
    /// noticed within a few steps' work.
    #[inline]
    pub fn check_reading_clock(read_clock: bool) -> DslResult<()> {
        if WATCHED.with(Cell::get) {
            check_watch()?;
        }
        super::memory::check()?;
        if read_clock {
            let at = DEADLINE.with(Cell::get);
            if at != NO_DEADLINE && coarse_nanos() >= at {
                return Err(DslError::Timeout);
            }
        }
        Ok(())
    }
}

/// A monotonic clock cheap enough to read at every program step, for [`Deadline::check`], in
/// nanoseconds. On Linux it is the coarse clock (the time of the last timer tick: about 5 ns to
/// read against 25 for the precise clock, measured on the development machine, at a resolution
/// of a few milliseconds, which time limits of hundreds of milliseconds do not notice);
/// elsewhere the time since the first reading, by [`std::time::Instant`].
#[cfg(target_os = "linux")]
#[inline]
fn coarse_nanos() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes the current time into the `timespec` it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut now) };
    // A monotonic clock counts from boot: its nanoseconds fit 64 bits for 584 years.
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

#[cfg(not(target_os = "linux"))]
fn coarse_nanos() -> u64 {
    static START: std::sync::LazyLock<std::time::Instant> = std::sync::LazyLock::new(std::time::Instant::now);
    START.elapsed().as_nanos() as u64
}

/// [`coarse_nanos`] as a duration.
pub(crate) fn coarse_now() -> Duration {
    Duration::from_nanos(coarse_nanos())
}

impl Drop for Deadline {
    fn drop(&mut self) {
        DEADLINE.with(|d| d.set(self.previous));
    }
}

/// What [`Deadline::check`] consults on one thread besides the clock.
#[derive(Default)]
struct Watch {
    /// Set from any thread to stop the computations watching it.
    flag: Option<Arc<AtomicBool>>,
    /// Asked on this thread whether to stop (an embedding's own check, e.g. for pending
    /// signals); `true` stops.
    poll: Option<fn() -> bool>,
    /// Once stopped, every later check fails too, until the watch is lifted: a caller that
    /// swallowed the first error cannot carry on.
    tripped: bool,
}

/// Fails once the current thread's watch was tripped. The poll runs with the watch released,
/// so it may itself run computations that watch (a signal handler calling the DSL).
fn check_watch() -> DslResult<()> {
    let (stop, poll) = WATCH.with(|w| {
        let w = w.borrow();
        let flagged = w.flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
        (w.tripped || flagged, w.poll)
    });
    if stop || poll.is_some_and(|poll| poll()) {
        WATCH.with(|w| w.borrow_mut().tripped = true);
        return Err(DslError::Interrupted);
    }
    Ok(())
}

/// A way to stop computations from outside them: a shared flag that any thread may raise.
/// Installing it on a thread with [`Interrupt::watch`] makes that thread's checks
/// ([`Deadline::check`]: every program step and every 256 function-value calls) fail with
/// [`DslError::Interrupted`] once the flag is raised. [`Interrupt::polling`] asks a function
/// instead.
#[derive(Clone, Default)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    pub fn new() -> Interrupt {
        Interrupt::default()
    }

    /// Makes the current thread's checks ask `poll` until the guard drops; `true` stops the
    /// computation. `poll` runs on this thread, so it may use whatever the thread holds (a
    /// lock, an interpreter).
    pub fn polling(poll: fn() -> bool) -> Watching {
        watching(Watch {
            flag: None,
            poll: Some(poll),
            tripped: false,
        })
    }

    /// Stops every computation watching this interrupt at its next check.
    pub fn raise(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Makes the current thread's checks consult this interrupt until the guard drops (and
    /// then the one watched before, if any).
    pub fn watch(&self) -> Watching {
        watching(Watch {
            flag: Some(self.flag.clone()),
            poll: None,
            tripped: false,
        })
    }
}

impl Watch {
    /// Whether there is anything to consult: a flag, a poll, or a stop already met.
    fn active(&self) -> bool {
        self.flag.is_some() || self.poll.is_some() || self.tripped
    }
}

/// Installs `watch` on the current thread until the guard drops.
fn watching(watch: Watch) -> Watching {
    WATCHED.with(|w| w.set(watch.active()));
    Watching {
        previous: WATCH.with(|w| w.replace(watch)),
    }
}

/// The guard of [`Interrupt::watch`] and [`Interrupt::polling`].
pub struct Watching {
    previous: Watch,
}

impl Drop for Watching {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.previous);
        WATCHED.with(|w| w.set(previous.active()));
        WATCH.with(|w| *w.borrow_mut() = previous);
    }
}

/// A panic that [`caught`] caught (a bug in the port): its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Panicked(pub String);

/// Runs `f`, a panic in it caught and returned with its message, so that a bug cannot take
/// down the programs, lanes or jobs around the one it hit.
pub fn caught<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        Panicked(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".into()),
        )
    })
}

/// Runs `f` isolated, as a program or a call runs on its own: under a [`Deadline`] `limit`
/// from now (`None`: none, whatever the thread had) and [`caught`].
pub fn guarded<T>(limit: Option<Duration>, f: impl FnOnce() -> T) -> Result<T, Panicked> {
    let _deadline = Deadline::set(limit);
    caught(f)
}

/// Counts one call towards the periodic deadline check (every 256th call reads the clock).
#[inline]
pub fn tick() -> DslResult<()> {
    let n = CALLS.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n
    });
    if n % 256 == 0 {
        Deadline::check()?;
    }
    Ok(())
}

/// The function `f` is, if Python could call it with `nargs` arguments; otherwise the
/// `TypeError` the call raises.
#[inline]
pub fn callable(f: &Value, nargs: usize) -> DslResult<&Func> {
    let Value::Func(func) = f else {
        return Err(not_callable(f));
    };
    if let Func::Foreign(_) = &**func {
        return Ok(func);
    }
    let arity = func.arity();
    if nargs != arity {
        return Err(wrong_count(f, arity, nargs));
    }
    Ok(func)
}

/// [`callable`]'s error for a value that is not a function (out of line, as the next).
#[cold]
#[inline(never)]
fn not_callable(f: &Value) -> DslError {
    DslError::mismatch("a callable", format_args!("'{}' object is not callable", f.type_name()))
}

/// [`callable`]'s error for a function of `arity` arguments given `nargs`.
#[cold]
#[inline(never)]
fn wrong_count(f: &Value, arity: usize, nargs: usize) -> DslError {
    DslError::mismatch(
        // Cut short: a function value may bind large containers.
        format_args!("{arity} argument(s) for {}", f.repr_cut(80)),
        format_args!("{nargs} argument(s)"),
    )
}

/// Calls a function value with arguments, as Python's `f(*args)` would.
pub fn call(f: &Value, args: &[Value]) -> DslResult<Value> {
    tick()?;
    // The most common call, a primitive given as many arguments as it takes: its entry in the
    // registry read once, for the count and the function.
    if let Value::Func(func) = f {
        if let Func::Prim(id) = **func {
            let spec = id.spec();
            if spec.arity() == args.len() {
                return (spec.imp)(args);
            }
        }
    }
    let func = callable(f, args.len())?;
    match func {
        Func::Prim(id) => (id.spec().imp)(args),
        Func::Compose(outer, inner) => call1(outer, call(inner, args)?),
        Func::Chain(h, g, f) => call1(h, call1(g, call(f, args)?)?),
        Func::Fork(outer, a, b) => {
            let (x, y) = (call(a, args)?, call(b, args)?);
            call(outer, &[x, y])
        }
        Func::Matcher(function, target) => Ok(Value::Bool(call(function, args)? == *target)),
        // Bound calls build their argument list inline (they run once per element in
        // `apply`), of copies that are never dropped (see `borrowed`): no count changes.
        // SAFETY (of each copy): `args` and `fixed` outlive the call and do not change.
        Func::Rbind(function, fixed) => {
            let full: SmallVec<[ManuallyDrop<Value>; 4]> =
                (args.iter().chain([fixed])).map(|v| unsafe { borrowed(v) }).collect();
            call(function, as_values(&full))
        }
        Func::Lbind(function, fixed) => {
            let full: SmallVec<[ManuallyDrop<Value>; 4]> = (std::iter::once(fixed).chain(args))
                .map(|v| unsafe { borrowed(v) })
                .collect();
            call(function, as_values(&full))
        }
        Func::Power(function, n) => {
            let mut x = call(function, args)?;
            for _ in 1..*n {
                x = call1(function, x)?;
            }
            Ok(x)
        }
        Func::Foreign(f) => f.0.call(args),
    }
}

/// Calls a one-argument function.
pub fn call1(f: &Value, x: Value) -> DslResult<Value> {
    call(f, std::slice::from_ref(&x))
}

impl<T: fmt::Display> fmt::Display for Func<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Func::Prim(id) => f.write_str(id.spec().name),
            Func::Compose(a, b) => write!(f, "compose({a}, {b})"),
            Func::Chain(a, b, c) => write!(f, "chain({a}, {b}, {c})"),
            Func::Fork(a, b, c) => write!(f, "fork({a}, {b}, {c})"),
            Func::Matcher(a, b) => write!(f, "matcher({a}, {b})"),
            Func::Rbind(a, b) => write!(f, "rbind({a}, {b})"),
            Func::Lbind(a, b) => write!(f, "lbind({a}, {b})"),
            Func::Power(a, n) => write!(f, "power({a}, {n})"),
            Func::Foreign(g) => f.write_str(g.0.repr()),
        }
    }
}
