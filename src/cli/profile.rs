//! `arcbatch profile FILE`: which primitives a solver file calls (static: steps per primitive
//! and references as arguments) or, with `--tasks`, where a batt run of it spends its time
//! (dynamic: per primitive the calls, lanes, total and mean time, share and backend; and per
//! solver, the time of the steps it reads), as a table, JSON, and an SVG bar chart.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use arcbatch::batt::Config;
use arcbatch::device::select::Kind;
use arcbatch::pipeline::{Engine, Programs, Source};
use arcbatch::tools::profile::{dynamic_json, dynamic_svg, dynamic_table, solver_json, solver_table};

use super::batt::load;
use super::progress::Progress;
use super::run::write_json;
use super::Failure;

/// The most expensive solvers the table lists (the JSON has them all).
const SOLVERS_SHOWN: usize = 20;

pub struct Options {
    pub file: PathBuf,
    pub tasks: Option<PathBuf>,
    pub cross: bool,
    pub json: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    pub backend: Kind,
    pub timeout: Duration,
}

pub fn run(options: &Options) -> Result<(), Failure> {
    let Some(tasks) = &options.tasks else {
        if options.svg.is_some() {
            return Err("--svg draws the dynamic profile: give --tasks too".into());
        }
        let profile = Programs::read(&Source::File(options.file.clone()))?.static_profile()?;
        print!("{}", profile.table());
        if let Some(path) = &options.json {
            write_json(path, &profile.to_json())?;
        }
        return Ok(());
    };
    let loaded = load(Some(&options.file), Some(tasks))?;
    let config = Config {
        cross: options.cross,
        no_merge: false,
    };
    let plan = loaded.plan(&[], config)?;
    let backend = Engine::new(options.backend, options.timeout).backend()?;
    let backend_name = backend.name();
    let progress = Progress::new(plan.work(backend.as_ref()), "nodes");
    let report = plan.run(backend.as_ref(), &|| progress.tick());
    progress.finish();
    print!("{}", dynamic_table(&report.profile, backend_name));
    println!(
        "{} steps ({} after merging) over {} lanes in {:.1} ms",
        report.steps_total,
        report.steps_merged,
        report.lanes,
        report.seconds * 1e3
    );
    if report.solvers.len() > 1 {
        print!("\n{}", solver_table(&report.solvers, SOLVERS_SHOWN));
    }
    if let Some(path) = &options.json {
        let value = json!({
            "backend": backend_name,
            "lanes": report.lanes,
            "seconds": report.seconds,
            "profile": dynamic_json(&report.profile, backend_name),
            "solvers": solver_json(&report.solvers),
        });
        write_json(path, &value)?;
    }
    if let Some(path) = &options.svg {
        let title = format!("arcbatch profile: {} on {} lanes", options.file.display(), report.lanes);
        std::fs::write(path, dynamic_svg(&report.profile, &title)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
