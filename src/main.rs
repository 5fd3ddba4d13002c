//! The `arcbatch` command line. `main` only parses and dispatches: each subcommand lives in its
//! own module under `cli/`. Exit status: 0 success, 1 a check that found failures, 2 a usage or
//! input error (printed prefixed `arcbatch:`, then each of its causes as `  caused by: ...`).

mod cli;

use std::process::ExitCode;

use arcbatch::dsl::memory::{Counting, UnlessLimited};
use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: setting a signal's action to the default at start-up, before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    GLOBAL.installed();
    keep_freed_memory();
    let args = cli::Args::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("arcbatch: {:#}", arcbatch::Chain(&*e));
            ExitCode::from(2)
        }
    }
}

/// Values are small and short-lived (a boxed tuple per pair, a vector per set): with the system
/// allocator, malloc and free were 15-20 % of `run` and `search` (perf); mimalloc takes about
/// a sixth off their CPU time (docs/search.md, under `arcbatch search`). Under an address-space
/// limit the system's allocator, whose reservations are smaller ([`UnlessLimited`]); counted,
/// for memory budgets ([`arcbatch::dsl::memory`]).
#[global_allocator]
static GLOBAL: Counting<UnlessLimited<WordAligned>> = Counting(UnlessLimited(WordAligned));

/// mimalloc, through its plain entry points for what asks no more than a word's alignment
/// (all but a few of the program's allocations). The `mimalloc` crate calls
/// `mi_malloc_aligned` for every allocation, which checks the alignment of the block it finds
/// and takes a slower path for blocks over 1 KB: 3 % of the instructions of `run` on the
/// training tasks where CPython takes 0.3 to 2 ms (callgrind, 2026-11-28).
struct WordAligned;

const WORD: usize = std::mem::size_of::<usize>();

extern "C" {
    fn mi_malloc(size: usize) -> *mut libc::c_void;
    fn mi_zalloc(size: usize) -> *mut libc::c_void;
    fn mi_realloc(p: *mut libc::c_void, size: usize) -> *mut libc::c_void;
}

// SAFETY: every block mimalloc hands out is word-aligned (a page's first block is 16-byte
// aligned, and blocks are whole numbers of words), so its plain entry points serve any layout
// aligned to a word or less; the rest goes to its aligned ones, through the crate. Both kinds
// are freed by `mi_free`.
unsafe impl std::alloc::GlobalAlloc for WordAligned {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        match layout.align() <= WORD {
            true => mi_malloc(layout.size()).cast(),
            false => mimalloc::MiMalloc.alloc(layout),
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        match layout.align() <= WORD {
            true => mi_zalloc(layout.size()).cast(),
            false => mimalloc::MiMalloc.alloc_zeroed(layout),
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        mimalloc::MiMalloc.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        match layout.align() <= WORD {
            true => mi_realloc(ptr.cast(), new_size).cast(),
            false => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (15 in the option enums of both its v2 and v3).
const MI_OPTION_PURGE_DELAY: libc::c_int = 15;

extern "C" {
    fn mi_option_set(option: libc::c_int, value: libc::c_long);
}

/// Tells mimalloc never to hand freed memory back to the system (unless
/// `MIMALLOC_PURGE_DELAY` says otherwise). A batched step frees megabytes that the next one
/// allocates again; returned after mimalloc's delay, they came back as fresh pages that the
/// kernel zeroed on first touch: 3 to 4 of `batt --cross`'s 55 CPU-s were system time, most of
/// it that, 0.4 to 0.7 without (peak memory 440 to 500 MB).
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option; mimalloc reads it when it next considers purging.
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}
