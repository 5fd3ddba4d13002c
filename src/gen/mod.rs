//! The batt generator and the search loop: solvers picked from a library (seeded), mutated by
//! type ([`mutate`]), merged into one DAG, rewritten ([`rewrite`]) and written as a batt text
//! file ([`crate::batt::text`]) or a Python module ([`python`]); [`search`] runs rounds of
//! that and keeps the programs that solve a task.
//!
//! Everything is deterministic: the same library, options and seed give the same programs,
//! the same DAG and byte-identical files (the random choices come from [`crate::rng::Rng`]; no hash
//! map's order reaches the output).

pub mod mutate;
pub mod python;
pub mod rewrite;
pub mod search;

use std::path::{Path, PathBuf};

use crate::batt::merge::{self, MergeError, Merged};
use crate::batt::text::{self, Origin};
use crate::batt::PlanError;
use crate::program::{ParseError, Program};
use crate::rng::Rng;
use crate::run::{load_solvers, SolverError};

/// Why a library, a generation or a search round failed.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: no solvers found (a library holds `def solve_<id>(I):` or `def solve(S, I, C):` functions in .py files)",
        .0.display()
    )]
    NoSolvers(PathBuf),
    /// A library file that cannot be run.
    #[error(transparent)]
    Solvers(#[from] SolverError),
    /// A harvested solver file that does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("--mutate {0} is outside 0..1 (the probability of mutating each argument)")]
    MutateRate(f64),
    #[error("--count must be at least 1")]
    Count,
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// An evaluation (say, joined from parts run elsewhere) that is not of this round.
    #[error(
        "an evaluation of {signatures} programs ({evaluated} evaluated) does not fit a round of {programs} programs on {tasks} tasks"
    )]
    RoundMismatch {
        signatures: usize,
        evaluated: usize,
        programs: usize,
        tasks: usize,
    },
}

impl GenError {
    /// For `map_err`: a failed read of `path`.
    fn read(path: &Path) -> impl FnOnce(std::io::Error) -> GenError + '_ {
        move |source| GenError::Read {
            path: path.into(),
            source,
        }
    }

    /// For `map_err`: a failed write of `path`.
    fn write(path: &Path) -> impl FnOnce(std::io::Error) -> GenError + '_ {
        move |source| GenError::Write {
            path: path.into(),
            source,
        }
    }
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Solvers to pick from the library.
    pub count: usize,
    pub seed: u64,
    /// Probability of mutating each argument (and each called primitive), in 0..=1.
    pub mutate: f64,
    /// Mutants per picked solver (none when `mutate` is 0).
    pub mutants: usize,
    /// Apply the generation-time rewrites.
    pub rewrite: bool,
}

/// One program of a generated batt: a library solver or a mutant of one.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub program: Program,
    pub origin: Origin,
}

/// A generated batt program.
pub struct Generated {
    pub candidates: Vec<Candidate>,
    pub merged: Merged,
    /// Solvers asked for beyond the library's size (the count was capped), else 0.
    pub capped: usize,
}

impl Generated {
    /// The batt text file, with `comments` after its header.
    pub fn text(&self, comments: &[String]) -> String {
        let origins: Vec<Origin> = self.candidates.iter().map(|c| c.origin.clone()).collect();
        text::write(&self.merged, &origins, comments)
    }
}

/// Reads a library: a solver file, or every `*.py` file of a directory and its
/// subdirectories (in path order). Files in the reference syntax or the search dialect; a
/// file that does not parse is an error, naming it.
pub fn load_library(path: &Path) -> Result<Vec<Program>, GenError> {
    parse_library(path, &library_files(path)?)
}

/// The files of a library (see [`load_library`]) as (name, source) pairs, in path order: the
/// library in a form that travels to other processes, read by [`parse_library`].
pub fn library_files(path: &Path) -> Result<Vec<(String, String)>, GenError> {
    let files = if path.is_dir() {
        let mut files = Vec::new();
        collect_py(path, &mut files)?;
        files.sort();
        files
    } else if path.is_file() {
        vec![path.to_path_buf()]
    } else {
        return Err(GenError::NoSuchPath(path.into()));
    };
    files
        .iter()
        .map(|f| {
            let source = std::fs::read_to_string(f).map_err(GenError::read(f))?;
            Ok((f.display().to_string(), source))
        })
        .collect()
}

/// The solvers of a library's files, as [`library_files`] gives them; `path` names the
/// library when it holds none.
pub fn parse_library(path: &Path, files: &[(String, String)]) -> Result<Vec<Program>, GenError> {
    let mut programs = Vec::new();
    for (name, source) in files {
        programs.extend(load_solvers(name, source)?);
    }
    if programs.is_empty() {
        return Err(GenError::NoSolvers(path.into()));
    }
    Ok(programs)
}

fn collect_py(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), GenError> {
    let entries = std::fs::read_dir(dir).map_err(GenError::read(dir))?;
    for e in entries {
        let p = e.map_err(GenError::read(dir))?.path();
        if p.is_dir() {
            collect_py(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "py") {
            out.push(p);
        }
    }
    Ok(())
}

/// Checks the options: a rate in 0..=1 and a count of at least one.
pub fn check(options: &Options) -> Result<(), GenError> {
    if !(0.0..=1.0).contains(&options.mutate) {
        return Err(GenError::MutateRate(options.mutate));
    }
    if options.count == 0 {
        return Err(GenError::Count);
    }
    Ok(())
}

/// Picks `count` solvers of the library (all of them, noting the cap, when it has fewer),
/// adds `mutants` distinct mutants of each, and merges them into one DAG with an instance of
/// each differ per program.
pub fn generate(library: &[Program], differs: &[Program], options: &Options) -> Result<Generated, GenError> {
    check(options)?;
    let mut rng = Rng::new(options.seed);
    let picked = rng.sample(library.len(), options.count);
    let mut candidates = Vec::new();
    for &k in &picked {
        let p = &library[k];
        let from = format!("{} {}:{}", p.name, p.file, p.line);
        candidates.push(Candidate {
            program: p.clone(),
            origin: Origin {
                from: from.clone(),
                mutation: None,
            },
        });
        if options.mutate == 0.0 {
            continue;
        }
        let mut seen = vec![normalised(p)];
        // A few draws per mutant asked for: a draw may change nothing or repeat one.
        for _ in 0..options.mutants * 4 {
            if seen.len() > options.mutants {
                break;
            }
            let Some(m) = mutate::mutate(p, options.mutate, &mut rng) else {
                continue;
            };
            let text = normalised(&m.program);
            if seen.contains(&text) {
                continue;
            }
            seen.push(text);
            let mut program = m.program;
            program.name = format!("{}~{}", p.name, seen.len() - 1);
            candidates.push(Candidate {
                program,
                origin: Origin {
                    from: from.clone(),
                    mutation: Some(m.changes.join(", ")),
                },
            });
        }
    }
    let refs: Vec<&Program> = candidates.iter().map(|c| &c.program).collect();
    let mut merged = merge::merge(&refs, differs, true)?;
    if options.rewrite {
        merged = rewrite::rewrite(&merged);
    }
    Ok(Generated {
        candidates,
        merged,
        capped: options.count.saturating_sub(library.len()),
    })
}

/// A program's text with its name and variables renamed canonically (`solve`, `x1`..,
/// the last step `O`): two programs that differ only in names normalise alike.
pub fn normalised(p: &Program) -> String {
    let mut q = p.clone();
    q.name = "solve".into();
    let n = q.steps.len();
    for (k, s) in q.steps.iter_mut().enumerate() {
        s.target = if k + 1 == n { "O".into() } else { format!("x{}", k + 1) };
    }
    q.to_string()
}
