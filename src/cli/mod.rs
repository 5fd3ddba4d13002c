//! Subcommand definitions (clap) and dispatch, one module per subcommand.

mod conform;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "arcbatch", version, about = "Fast, bit-exact evaluation of ARC DSL programs")]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check every primitive against a golden corpus (the format of ../shared/golden).
    Conform {
        /// The corpus folder (holding cases/*.jsonl) or a folder of .jsonl files.
        dir: PathBuf,
        /// Only these primitives (repeatable).
        #[arg(long = "prim")]
        prims: Vec<String>,
        /// Print at most this many failures per primitive.
        #[arg(long, default_value_t = 10)]
        max_failures: usize,
    },
}

/// Runs a parsed command line; `Err` is a usage or input error (exit status 2).
pub fn run(args: Args) -> Result<ExitCode, String> {
    match args.command {
        Command::Conform {
            dir,
            prims,
            max_failures,
        } => conform::run(&dir, &prims, max_failures),
    }
}
