//! The pipeline every front end runs (the CLI's `run`, `batt`, `profile` and `diff`, the Python
//! module and its Ray layer), from files to reports:
//!
//! - **load**: a solver file, a folder of them or a batt text file ([`Source`], [`Programs`]),
//!   differ programs ([`Source::differs`]) and tasks ([`read_tasks`]), as [`Loaded`];
//! - **plan**: solvers assigned to tasks (one assignment for `run` and `batt`) and, for batt,
//!   merged ([`Loaded::plan`]);
//! - **evaluate and score**: [`crate::run::run_solvers`] (each solver by the interpreter on its
//!   task) or [`Plan::run`] on the backend and under the budgets an [`Engine`] names.
//!
//! The front ends add only their own forms of input (paths, source text, Python objects) and
//! of output (progress, summaries, JSON, Python values). Bad task files are in
//! [`TaskSet::errors`]: each front end reports them its own way and runs the other tasks.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::batch::{Backend, CpuBackend};
use crate::batt::{text, Config, Plan};
use crate::device::select::{self, Kind};
use crate::device::SetupError;
use crate::dsl::memory;
use crate::program::{parse_file, Program};
use crate::run::{load_solvers, SolverError};
use crate::tasks::{self, TaskError, TaskSet};
use crate::tools::profile::{merged_profile, static_profile, StaticProfile};
use crate::{embedded, gen, Error};

/// Where programs come from: a file (or, for solvers, a folder of `.py` files), or text with
/// the name messages give it.
#[derive(Clone, Debug)]
pub enum Source {
    File(PathBuf),
    Text { name: String, text: String },
}

impl Source {
    /// The file at `path`; `None` stands for the embedded library (`dsl/solvers.py` and the
    /// demo solvers).
    pub fn file_or_embedded(path: Option<&Path>) -> Source {
        match path {
            Some(path) => Source::File(path.to_path_buf()),
            None => Source::Text {
                name: "(embedded) dsl/solvers.py".to_string(),
                text: embedded::all_solvers(),
            },
        }
    }

    /// The name messages give the programs, and their text.
    fn read(&self) -> Result<(String, String), SolverError> {
        match self {
            Source::File(path) => {
                let name = path.display().to_string();
                match std::fs::read_to_string(path) {
                    Ok(text) => Ok((name, text)),
                    Err(e) => Err(SolverError::Read {
                        path: name,
                        message: e.to_string(),
                    }),
                }
            }
            Source::Text { name, text } => Ok((name.clone(), text.clone())),
        }
    }

    /// Differ programs: each `NAME(S, I, C)` (checked when merging).
    pub fn differs(&self) -> Result<Vec<Program>, Error> {
        let (name, text) = self.read()?;
        Ok(parse_file(&name, &text)?)
    }
}

/// The programs of a solver file.
pub enum Programs {
    /// Solvers in the reference syntax or the search dialect, to be merged or run one by one.
    Solvers(Vec<Program>),
    /// A batt text file (name and text), merged already; parsed when planned, with the
    /// differs given then.
    BattText(String, String),
}

impl Programs {
    /// Reads solvers: a folder is a library, every `.py` file under it (as `gen --library`
    /// and what `arcbatch search` harvested); a file whose first line says so is a batt text
    /// file; any other is a solver file, parsed and its programs' parameters checked.
    pub fn read(source: &Source) -> Result<Programs, Error> {
        if let Source::File(dir) = source {
            if dir.is_dir() {
                return Ok(Programs::Solvers(gen::load_library(dir)?));
            }
        }
        let (name, text) = source.read()?;
        Ok(if text::is_batt_text(&text) {
            Programs::BattText(name, text)
        } else {
            Programs::Solvers(load_solvers(&name, &text)?)
        })
    }

    /// The static profile: steps and references per primitive, of the solvers or of the
    /// merged program of a batt text file.
    pub fn static_profile(&self) -> Result<StaticProfile, Error> {
        Ok(match self {
            Programs::Solvers(programs) => static_profile(programs),
            Programs::BattText(name, text) => merged_profile(&text::parse(name, text, &[])?.0),
        })
    }

    /// The solvers, for running one by one: a batt text file is no solver file, and fails as
    /// one (its first line does not parse).
    pub fn into_solvers(self) -> Result<Vec<Program>, Error> {
        match self {
            Programs::Solvers(programs) => Ok(programs),
            Programs::BattText(name, text) => Ok(load_solvers(&name, &text)?),
        }
    }
}

/// The tasks at `path`, in any layout [`tasks::load`] reads; `None` stands for the embedded
/// demo tasks.
pub fn read_tasks(path: Option<&Path>) -> Result<TaskSet, TaskError> {
    match path {
        Some(path) => tasks::load(path),
        None => Ok(embedded::demo_tasks()),
    }
}

/// Solvers and tasks, read: what a run is planned from.
pub struct Loaded {
    pub programs: Programs,
    pub tasks: TaskSet,
}

impl Loaded {
    /// Reads the solvers and the tasks ([`Programs::read`], [`read_tasks`]).
    pub fn read(solvers: &Source, tasks: Option<&Path>) -> Result<Loaded, Error> {
        Ok(Loaded {
            programs: Programs::read(solvers)?,
            tasks: read_tasks(tasks)?,
        })
    }

    /// The batt plan: the solvers merged with `differs`, or the batt text's program (its own
    /// differ lines, then `differs`, on every output).
    pub fn plan(&self, differs: &[Program], config: Config) -> Result<Plan<'_>, Error> {
        match &self.programs {
            Programs::BattText(file, source) => {
                let (merged, _) = text::parse(file, source, differs)?;
                Ok(Plan::from_merged(merged, &self.tasks.tasks, config)?)
            }
            Programs::Solvers(programs) => Ok(Plan::new(programs, differs, &self.tasks.tasks, config)?),
        }
    }
}

/// Where and under which budgets a batt plan is evaluated.
#[derive(Clone, Copy, Debug)]
pub struct Engine {
    /// The backend, as `--backend` and the Python module's `backend=` name it.
    pub backend: Kind,
    /// The time limit per step and sample.
    pub timeout: Duration,
    /// The memory budget for the solvers' values ([`Plan::with_memory`]); `None`: all
    /// solvers in one chunk.
    pub memory: Option<u64>,
    /// The size budget per value ([`Plan::with_max_size`]), or none.
    pub max_size: Option<usize>,
}

impl Engine {
    /// The engine of `backend` with a time limit and no other budget.
    pub fn new(backend: Kind, timeout: Duration) -> Engine {
        Engine {
            backend,
            timeout,
            memory: None,
            max_size: None,
        }
    }

    /// The backend, over a CPU backend with the time limit, the size budget's member cap and
    /// a lane's share of the memory budget ([`lane_memory`]).
    pub fn backend(&self) -> Result<Box<dyn Backend>, SetupError> {
        let cpu = CpuBackend::new(Some(self.timeout))
            .with_max_members(self.max_size)
            .with_lane_memory(self.memory.map(lane_memory));
        select::backend_on(self.backend, cpu)
    }

    /// The plan under this engine's memory and size budgets: chunks sized to the memory budget
    /// as it fits the address space ([`memory::fitting_budget`]). (A lane's budget is a share of
    /// the budget as given, so that a limit on the address space changes no result but by
    /// failing what does not fit in it.)
    pub fn budget<'t>(&self, plan: Plan<'t>) -> Plan<'t> {
        let plan = match self.memory {
            Some(bytes) => plan.with_memory(memory::fitting_budget(bytes)),
            None => plan,
        };
        plan.with_max_size(self.max_size)
    }
}

/// What one lane of one step may allocate under a memory budget of `bytes`: an eighth of it,
/// whatever the number of threads, so that the programs that fail by memory are the same on
/// every machine. A budget of 512 MB lets one value take 64 MB: a grid of 16 M cells, or a
/// container of 2.8 M members.
pub fn lane_memory(bytes: u64) -> u64 {
    bytes / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_a_batt_text_file_and_a_solver_file_are_each_read_as_such() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let file = |path: &str| Source::File(root.join(path));
        let solvers = |programs| match programs {
            Programs::Solvers(programs) => programs.len(),
            Programs::BattText(name, _) => panic!("{name} read as a batt text file"),
        };
        let library = solvers(Programs::read(&file("dsl")).expect("the team library"));
        assert_eq!(
            library,
            solvers(Programs::read(&Source::file_or_embedded(None)).expect("embedded"))
        );
        let batt = Programs::read(&file("generated/dsl.batt")).expect("a batt text file");
        assert!(matches!(batt, Programs::BattText(..)));
        assert!(batt.into_solvers().is_err(), "a batt text file is no solver file");
        let missing = Programs::read(&file("no/such.py")).err().expect("no such file");
        assert!(
            matches!(missing, Error::Solvers(SolverError::Read { .. })),
            "{missing:?}"
        );
    }
}
