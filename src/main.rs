//! The `arcbatch` command line. `main` only parses and dispatches: each subcommand lives in its
//! own module under `cli/`. Exit status: 0 success, 1 a check that found failures, 2 a usage or
//! input error (printed prefixed `arcbatch:`, then each of its causes as `  caused by: ...`).

mod allocator;
mod cli;

use std::process::ExitCode;

use allocator::WordAligned;
use arcbatch::dsl::memory::{Counting, UnlessLimited};
use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: setting a signal's action to the default at start-up, before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    GLOBAL.installed();
    allocator::keep_freed_memory();
    allocator::keep_freed_blocks_on_this_thread();
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
/// a sixth off their CPU time (docs/search.md, under `arcbatch search`), and recently freed
/// blocks handed out again take off more ([`allocator`]). Under an address-space
/// limit the system's allocator, whose reservations are smaller ([`UnlessLimited`]); counted,
/// for memory budgets ([`arcbatch::dsl::memory`]).
#[global_allocator]
static GLOBAL: Counting<UnlessLimited<WordAligned>> = Counting(UnlessLimited(WordAligned));
