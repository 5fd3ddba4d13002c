//! Memory accounting, so that a program whose values grow too large fails with
//! [`DslError::TooLarge`] instead of taking the process down (Rust aborts on a failed
//! allocation, and a limit such as `ulimit -v` makes one fail).
//!
//! [`Counting`] wraps the process's allocator (the CLI and the Python module install it) and
//! keeps, per thread, the bytes it allocated minus those it freed, and the process's total. A
//! [`Budget`] bounds what one computation (a lane of a batched op, a Python call, a candidate
//! of a search) may add on its thread; a process limit ([`set_process_limit`]) bounds the
//! total. Both are checked where a computation can grow: at every [`Deadline::check`]
//! (each program step, every 256 function calls) and before a primitive builds a large value
//! ([`room_for`]). Without [`Counting`] installed the budgets check nothing.
//!
//! The bytes counted are the ones asked of the allocator, so a computation's count does not
//! depend on the allocator or on other threads: a budget fails the same programs on every run.
//!
//! [`Deadline::check`]: super::func::Deadline::check

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, Ordering};

use super::error::{DslError, DslResult};

/// The process's allocator `A`, counting bytes (see the module's doc). Install it with
/// `#[global_allocator] static A: Counting<System> = Counting(System);`.
pub struct Counting<A>(pub A);

/// `Fast` (an allocator such as mimalloc, which reserves address space in large arenas),
/// unless the process's address space is limited (`ulimit -v`, `RLIMIT_AS`): then the
/// system's allocator, which maps each large block on its own and unmaps it when freed, so
/// that the address space it takes stays close to what is live, with an arena (64 MB of
/// address space) per thread up to one per 256 MB of the limit (`M_ARENA_MAX`; with one
/// arena, two threads took 2.6 times as long). Decided once, at the
/// first allocation, before any block exists that the other could be asked to free.
pub struct UnlessLimited<Fast>(pub Fast);

/// The address space allowed per arena of the system's allocator under a limit.
const ARENA_SHARE: u64 = 256 << 20;

/// [`UnlessLimited`]'s choice: 0 not yet made, 1 the fast allocator, 2 the system's.
static CHOICE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);
/// [`CHOICE`] once the fast allocator is chosen.
const CHOSE_FAST: u8 = 1;
/// [`CHOICE`] once the system's allocator is chosen.
const CHOSE_SYSTEM: u8 = 2;

impl<Fast> UnlessLimited<Fast> {
    /// Whether the fast allocator is chosen: the one test on the path of every allocation.
    #[inline(always)]
    fn fast_chosen(&self) -> bool {
        CHOICE.load(Ordering::Relaxed) == CHOSE_FAST
    }

    /// Whether the system's allocator is chosen, where a block exists already, so that the
    /// choice is made.
    #[inline(always)]
    fn system_chosen(&self) -> bool {
        CHOICE.load(Ordering::Relaxed) == CHOSE_SYSTEM
    }

    /// Whether the system's allocator serves the process, choosing it now if no choice is made.
    fn system(&self) -> bool {
        match CHOICE.load(Ordering::Relaxed) {
            0 => {
                let space = address_space_limit();
                #[cfg(target_os = "linux")]
                if let Some(space) = space {
                    // SAFETY: `sysconf` and `mallopt` read and set parameters; neither allocates.
                    unsafe {
                        let cores = libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as u64;
                        let arenas = (space / ARENA_SHARE).clamp(1, cores);
                        libc::mallopt(libc::M_ARENA_MAX, arenas as libc::c_int);
                    }
                }
                let choice = if space.is_some() { CHOSE_SYSTEM } else { CHOSE_FAST };
                CHOICE.store(choice, Ordering::Relaxed);
                space.is_some()
            }
            choice => choice == CHOSE_SYSTEM,
        }
    }
}

/// [`UnlessLimited`]'s allocations where the fast allocator is not chosen (or nothing is yet):
/// out of line, so that the usual path tests [`UnlessLimited::fast_chosen`] and jumps on to the
/// fast allocator, with nothing to come back for.
impl<Fast: GlobalAlloc> UnlessLimited<Fast> {
    /// [`GlobalAlloc::alloc`] of the allocator chosen, choosing it if need be.
    #[cold]
    #[inline(never)]
    unsafe fn alloc_unless_fast(&self, layout: Layout) -> *mut u8 {
        match self.system() {
            true => std::alloc::System.alloc(layout),
            false => self.0.alloc(layout),
        }
    }

    /// [`GlobalAlloc::alloc_zeroed`] of the allocator chosen, choosing it if need be.
    #[cold]
    #[inline(never)]
    unsafe fn alloc_zeroed_unless_fast(&self, layout: Layout) -> *mut u8 {
        match self.system() {
            true => std::alloc::System.alloc_zeroed(layout),
            false => self.0.alloc_zeroed(layout),
        }
    }
}

// SAFETY: each call goes, unchanged, to the one allocator chosen before the first block.
//
// Inlined always, into [`Counting`]'s calls that the process's allocator makes of it, which
// without it would call this layer instead of jumping to the allocator it chose.
unsafe impl<Fast: GlobalAlloc> GlobalAlloc for UnlessLimited<Fast> {
    #[inline(always)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.fast_chosen() {
            true => self.0.alloc(layout),
            false => self.alloc_unless_fast(layout),
        }
    }

    #[inline(always)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.fast_chosen() {
            true => self.0.alloc_zeroed(layout),
            false => self.alloc_zeroed_unless_fast(layout),
        }
    }

    #[inline(always)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.system_chosen() {
            true => std::alloc::System.dealloc(ptr, layout),
            false => self.0.dealloc(ptr, layout),
        }
    }

    #[inline(always)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match self.system_chosen() {
            true => std::alloc::System.realloc(ptr, layout, new_size),
            false => self.0.realloc(ptr, layout, new_size),
        }
    }
}

/// The process's address-space limit (`RLIMIT_AS`) in bytes, if it has one.
pub fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `getrlimit` writes the limit into the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
        #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every Unix
        (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

thread_local! {
    /// This thread's last reading of [`address_space_left`]: when, and what it was.
    static SPACE_READ: Cell<Option<(std::time::Duration, Option<u64>)>> = const { Cell::new(None) };
}

/// Under an address-space limit, the part of it the process has not mapped (the limit less
/// `/proc/self/statm`'s size), which allocations of every kind share, the uncounted ones of
/// an embedding (Python's objects) included; `None` without a limit. Read again (the limit
/// too: an embedding may change it) only when this thread's last reading is over a millisecond
/// old on the coarse clock (a timer tick, a few milliseconds), so that it costs nothing per
/// call: the Python module asks before each conversion.
pub fn address_space_left() -> Option<u64> {
    let now = super::func::coarse_now();
    if let Some((at, left)) = SPACE_READ.with(Cell::get) {
        if now.saturating_sub(at) < std::time::Duration::from_millis(1) {
            return left;
        }
    }
    let left = address_space_limit().and_then(|limit| {
        let pages: u64 = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|statm| statm.split_whitespace().next()?.parse().ok())?;
        // SAFETY: `sysconf` only reads a system parameter.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
        Some(limit.saturating_sub(pages * page))
    });
    SPACE_READ.with(|read| read.set(Some((now, left))));
    left
}

/// The share of a limited address space that values may take; the rest goes to the program,
/// its libraries, thread stacks and the allocator's own overhead.
const VALUES_SHARE_OF_ADDRESS_SPACE: f64 = 0.5;

/// Where the process has an address-space limit (`ulimit -v`), bounds what it holds to 60 %
/// of it ([`set_process_limit`]), so that values fail by memory before an allocation fails and
/// Rust aborts. Without such a limit nothing is set: chunk sizes and the per-step budgets keep
/// a run near its budget, and a bound on the whole process would fail programs by what other
/// threads happen to hold (a GPU run, whose single shard holds every lane's values, lost 28
/// correct samples of 680 to one).
pub fn bound_to_address_space() {
    if let Some(space) = address_space_limit() {
        set_process_limit(Some((space as f64 * PROCESS_SHARE_OF_ADDRESS_SPACE) as u64));
    }
}

/// The share of a limited address space the process's counted bytes may reach.
const PROCESS_SHARE_OF_ADDRESS_SPACE: f64 = 0.6;

/// A memory budget of `bytes` for values, lowered to fit the process's address-space limit
/// when it has one (half of it), so that a run under `ulimit -v` fails programs by memory
/// instead of aborting.
pub fn fitting_budget(bytes: u64) -> u64 {
    match address_space_limit() {
        Some(limit) => bytes.min((limit as f64 * VALUES_SHARE_OF_ADDRESS_SPACE) as u64),
        None => bytes,
    }
}

/// One thread's count: the bytes it allocated minus the bytes it freed since it started are
/// `flushed + unflushed` ([`ThreadCount::net`]), so that an allocation updates one counter.
struct ThreadCount {
    /// The part of the count added to [`TOTAL`].
    flushed: Cell<isize>,
    /// The part not yet added to [`TOTAL`].
    unflushed: Cell<isize>,
}

impl ThreadCount {
    /// Bytes this thread allocated minus the bytes it freed, since it started.
    fn net(&self) -> isize {
        self.flushed.get() + self.unflushed.get()
    }
}

thread_local! {
    // Constant-initialised and without a destructor: reading it never allocates, as an
    // allocator must not.
    static COUNT: ThreadCount = const {
        ThreadCount {
            flushed: Cell::new(0),
            unflushed: Cell::new(0),
        }
    };
    /// The budget in force on this thread: the count it started from and the bytes it allows.
    static BUDGET: Cell<Option<(isize, isize)>> = const { Cell::new(None) };
}

/// The process's count, within [`FLUSH`] bytes per thread.
static TOTAL: AtomicIsize = AtomicIsize::new(0);
/// The largest [`TOTAL`] seen.
static PEAK: AtomicIsize = AtomicIsize::new(0);
/// How far a thread's count may drift from what [`TOTAL`] holds of it.
const FLUSH: isize = 256 << 10;
/// Whether [`Counting`] is the process's allocator (set at its first allocation).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The process limit in bytes; 0: none.
static PROCESS_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Adds `delta` to this thread's count; true where the part of it not yet in [`TOTAL`] has
/// reached [`FLUSH`] bytes either way, for the caller to [`flush`].
#[inline]
fn count_is_due(delta: isize) -> bool {
    COUNT.with(|c| {
        let unflushed = c.unflushed.get() + delta;
        c.unflushed.set(unflushed);
        // `|unflushed| >= FLUSH` as one unsigned comparison.
        (unflushed + (FLUSH - 1)) as usize > 2 * (FLUSH - 1) as usize
    })
}

/// Adds this thread's unflushed count to [`TOTAL`].
#[cold]
fn flush() {
    COUNT.with(|c| {
        let unflushed = c.unflushed.replace(0);
        c.flushed.set(c.flushed.get() + unflushed);
        let total = TOTAL.fetch_add(unflushed, Ordering::Relaxed) + unflushed;
        PEAK.fetch_max(total, Ordering::Relaxed);
    });
}

// SAFETY: every call goes to the wrapped allocator with the caller's arguments unchanged; the
// counting reads and writes only constant-initialised thread locals and atomics.
//
// Each call is counted before it is made, so that the call to the wrapped allocator is the last
// thing done (a jump, with no registers kept across it): what is counted is what was asked. A
// request the allocator refuses ends the process (Rust aborts on a failed allocation, and
// nothing here asks for memory it could do without), so it is never counted wrongly for long.
// A count due to be flushed takes a path of its own, out of line (`flush_then_alloc` and the
// like), so that the usual one makes no call either.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match count_is_due(layout.size() as isize) {
            false => self.0.alloc(layout),
            true => self.flush_then_alloc(layout),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match count_is_due(layout.size() as isize) {
            false => self.0.alloc_zeroed(layout),
            true => self.flush_then_alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match count_is_due(-(layout.size() as isize)) {
            false => self.0.dealloc(ptr, layout),
            true => self.flush_then_dealloc(ptr, layout),
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match count_is_due(new_size as isize - layout.size() as isize) {
            false => self.0.realloc(ptr, layout, new_size),
            true => self.flush_then_realloc(ptr, layout, new_size),
        }
    }
}

/// [`Counting`]'s calls where this thread's count is due to be flushed.
impl<A: GlobalAlloc> Counting<A> {
    /// [`flush`], then [`GlobalAlloc::alloc`] of the wrapped allocator.
    #[cold]
    #[inline(never)]
    unsafe fn flush_then_alloc(&self, layout: Layout) -> *mut u8 {
        flush();
        self.0.alloc(layout)
    }

    /// [`flush`], then [`GlobalAlloc::alloc_zeroed`] of the wrapped allocator.
    #[cold]
    #[inline(never)]
    unsafe fn flush_then_alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        flush();
        self.0.alloc_zeroed(layout)
    }

    /// [`flush`], then [`GlobalAlloc::dealloc`] of the wrapped allocator.
    #[cold]
    #[inline(never)]
    unsafe fn flush_then_dealloc(&self, ptr: *mut u8, layout: Layout) {
        flush();
        self.0.dealloc(ptr, layout)
    }

    /// [`flush`], then [`GlobalAlloc::realloc`] of the wrapped allocator.
    #[cold]
    #[inline(never)]
    unsafe fn flush_then_realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        flush();
        self.0.realloc(ptr, layout, new_size)
    }
}

impl<A> Counting<A> {
    /// Marks the counting as working; call once at start-up (the CLI's `main`, the Python
    /// module's init), after which budgets are checked.
    pub fn installed(&self) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
}

/// Whether allocations are counted, so that budgets mean something.
pub fn counting() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// The bytes the process holds, as counted (within 256 KB per thread); 0 when not counting.
pub fn process_bytes() -> u64 {
    TOTAL.load(Ordering::Relaxed).max(0) as u64
}

/// The most bytes the process held at once, as counted; 0 when not counting.
pub fn peak_bytes() -> u64 {
    PEAK.load(Ordering::Relaxed).max(0) as u64
}

/// Bounds the bytes the whole process may hold (`None`: no bound): once past it, every check
/// of every thread fails until enough is freed.
pub fn set_process_limit(bytes: Option<u64>) {
    PROCESS_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The process limit in force.
pub fn process_limit() -> Option<u64> {
    match PROCESS_LIMIT.load(Ordering::Relaxed) {
        0 => None,
        bytes => Some(bytes),
    }
}

/// A bound on the bytes the computations on this thread may add while the guard lives
/// (`None`: none, whatever was in force). Dropping it restores the budget before it.
pub struct Budget {
    previous: Option<(isize, isize)>,
}

impl Budget {
    pub fn set(bytes: Option<u64>) -> Budget {
        let budget = bytes.map(|b| (COUNT.with(ThreadCount::net), b.min(isize::MAX as u64) as isize));
        Budget {
            previous: BUDGET.with(|cell| cell.replace(budget)),
        }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        BUDGET.with(|cell| cell.set(self.previous));
    }
}

/// Fails with [`DslError::TooLarge`] where `extra` more bytes would take this thread's budget
/// or the process past its bound. `what` names the value for the message. Small enough to be
/// inlined into [`Deadline::check`], which runs between any two steps of a program: the
/// message is made out of line.
#[inline]
pub fn room_for(extra: usize, what: impl FnOnce() -> String) -> DslResult<()> {
    if !counting() {
        return Ok(());
    }
    let extra = extra.min(isize::MAX as usize) as isize;
    if let Some((start, bytes)) = BUDGET.with(Cell::get) {
        let used = COUNT.with(ThreadCount::net) - start;
        if used.saturating_add(extra) > bytes {
            return Err(too_large(what, "this computation past its budget", bytes as u64));
        }
    }
    if let Some(limit) = process_limit() {
        if process_bytes().saturating_add(extra as u64) > limit {
            return Err(too_large(what, "the process past its limit", limit));
        }
    }
    Ok(())
}

/// [`room_for`]'s error: `what` would take `whom` past `bound` bytes.
#[cold]
#[inline(never)]
fn too_large(what: impl FnOnce() -> String, whom: &str, bound: u64) -> DslError {
    DslError::TooLarge(format!("memory: {} would take {whom} of {}", what(), mb(bound)).into())
}

/// [`room_for`] nothing more: fails once this thread's budget or the process's bound is spent.
#[inline]
pub fn check() -> DslResult<()> {
    room_for(0, || "what it holds".to_string())
}

/// Bytes as MB for messages.
fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts `delta` bytes as [`Counting`] does.
    fn count(delta: isize) {
        if count_is_due(delta) {
            flush();
        }
    }

    // The library's tests run on the system allocator, uncounted: the count is driven by hand.
    #[test]
    fn a_budget_fails_what_passes_it_and_restores_the_one_before() {
        INSTALLED.store(true, Ordering::Relaxed);
        let outer = Budget::set(Some(1000));
        assert!(room_for(1000, String::new).is_ok());
        count(600);
        let err = room_for(500, || "a grid".into()).unwrap_err();
        assert!(err.to_string().contains("a grid"), "{err}");
        {
            let _inner = Budget::set(Some(100));
            assert!(room_for(100, String::new).is_ok());
            count(101);
            assert!(check().is_err());
            count(-101);
        }
        assert!(room_for(400, String::new).is_ok());
        assert!(room_for(401, String::new).is_err());
        drop(outer);
        assert!(room_for(1 << 40, String::new).is_ok());
        count(-600);
    }
}
