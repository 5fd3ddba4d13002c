//! `arcbatch gen`: solvers picked from a library, mutated, merged and rewritten into one batt
//! program, written as a batt text file (and optionally a Python module).

use std::path::{Path, PathBuf};

use arcbatch::gen::{self, load_library, python, Options};
use arcbatch::program::Program;

use super::batt::read_differs;
use super::Failure;

/// The command-line form of a generation: the library and the generator's options.
pub struct GenArgs {
    pub library: PathBuf,
    pub differs: Option<PathBuf>,
    pub options: Options,
}

impl GenArgs {
    /// The library and differ programs, with the checks that come before reading them.
    pub fn load(&self) -> Result<(Vec<Program>, Vec<Program>), Failure> {
        gen::check(&self.options)?;
        let library = load_library(&self.library)?;
        let differs = match &self.differs {
            Some(path) => read_differs(path)?,
            None => Vec::new(),
        };
        Ok((library, differs))
    }

    /// The command line that reproduces this generation, for the files' headers.
    pub fn command(&self) -> String {
        let o = &self.options;
        let mut c = format!(
            "arcbatch gen --library {} --count {} --seed {} --mutate {} --mutants {}",
            self.library.display(),
            o.count,
            o.seed,
            o.mutate,
            o.mutants
        );
        if let Some(d) = &self.differs {
            c += &format!(" --differs {}", d.display());
        }
        if !o.rewrite {
            c += " --no-rewrites";
        }
        c
    }
}

/// Writes a file, naming it on failure.
fn write(path: &Path, text: &str) -> Result<(), Failure> {
    Ok(std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?)
}

pub fn run(args: &GenArgs, out: &Path, python_out: Option<&Path>) -> Result<(), Failure> {
    let (library, differs) = args.load()?;
    let generated = gen::generate(&library, &differs, &args.options)?;
    if generated.capped > 0 {
        eprintln!(
            "arcbatch: note: --count {} is more than the library's {} solvers; all {} are used",
            args.options.count,
            library.len(),
            library.len()
        );
    }
    let mutants = generated
        .candidates
        .iter()
        .filter(|c| c.origin.mutation.is_some())
        .count();
    let summary = format!(
        "{} programs ({} solvers, {mutants} mutants); {} steps, {} after merging",
        generated.candidates.len(),
        generated.candidates.len() - mutants,
        generated.merged.steps_total,
        generated.merged.steps_merged()
    );
    let comments = [args.command(), summary.clone()];
    write(out, &generated.text(&comments))?;
    if let Some(path) = python_out {
        write(path, &python::module(&generated, &comments))?;
    }
    println!("gen: {summary}; wrote {}", out.display());
    if let Some(path) = python_out {
        println!("gen: wrote {}", path.display());
    }
    Ok(())
}
