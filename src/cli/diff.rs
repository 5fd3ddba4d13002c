//! `arcbatch diff`: one merged program on two backends, every step compared on every lane;
//! the first divergences printed (and drawn with `--out`). Exit status 0 when everything
//! agrees, 1 on any mismatch (2, as everywhere, on a usage or input error).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use arcbatch::batt::Config;
use arcbatch::device::select::Kind;
use arcbatch::pipeline::Engine;
use arcbatch::tools::diff::diff;

use super::batt::load;
use super::progress::Progress;
use super::Failure;

pub struct Options {
    pub solvers: Option<PathBuf>,
    pub tasks: Option<PathBuf>,
    pub a: Kind,
    pub b: Kind,
    pub out: Option<PathBuf>,
    pub cross: bool,
    pub max: usize,
    pub timeout: Duration,
}

pub fn run(options: &Options) -> Result<ExitCode, Failure> {
    let loaded = load(options.solvers.as_deref(), options.tasks.as_deref())?;
    let config = Config {
        cross: options.cross,
        no_merge: false,
    };
    let plan = loaded.plan(&[], config)?;
    let backend = |kind| Engine::new(kind, options.timeout).backend();
    let (a, b) = (backend(options.a)?, backend(options.b)?);
    let (name_a, name_b) = (a.name(), b.name());
    let progress = Progress::new(2 * plan.work_all(), "nodes");
    let report = diff(&plan, a.as_ref(), b.as_ref(), options.max, &|| progress.tick());
    progress.finish();
    print!("{}", report.text(name_a, name_b));
    if let Some(dir) = &options.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (n, d) in report.divergences.iter().enumerate() {
            let path = dir.join(format!(
                "{:03}-{}-{}-n{}.svg",
                n + 1,
                d.task,
                d.sample.replace(['[', ']'], ""),
                d.node
            ));
            std::fs::write(&path, d.svg(name_a, name_b)).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        if !report.divergences.is_empty() {
            println!("drew {} divergences in {}", report.divergences.len(), dir.display());
        }
    }
    Ok(if report.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
