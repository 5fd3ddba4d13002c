//! The `auto` backend's dispatch thresholds: per kernel, the fewest lanes for which a launch
//! on the GPU beats the CPU backend. Small batches lose on a GPU (a launch and two transfers
//! cost about 0.2 ms whatever the size, DESIGN.md §4), so `auto` sends a batch below its op's
//! threshold to the CPU.
//!
//! The thresholds come from, in order: `ARCBATCH_GPU_MIN_LANES` (`500` for every kernel, or
//! `objects=300,fill=2000` for some, the others as below); a cache file of an earlier probe on
//! the same devices, arcbatch version and thread count; or a start-up probe, which times each
//! kernel's op on the CPU backend and on the devices at a few batch sizes (well under a second)
//! and writes the cache. The cache lives in `$ARCBATCH_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/arcbatch`, else `~/.cache/arcbatch`; delete it to probe again.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value as Json};

use super::workload::{task_grids, Workload};
use super::{Device, DeviceBackend, Entry};
use crate::batch::{Backend, CpuBackend};

/// The batch sizes the probe times.
pub const PROBE_SIZES: [usize; 4] = [32, 128, 512, 2048];
/// A threshold that never sends the kernel's batches to the GPU.
pub const NEVER: usize = usize::MAX;
/// The environment variable that overrides thresholds.
pub const MIN_LANES_ENV: &str = "ARCBATCH_GPU_MIN_LANES";

/// The thresholds in force, and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// Indexed as [`Entry::ALL`].
    pub min_lanes: [usize; Entry::ALL.len()],
    /// `probe`, `cache FILE`, or the override's text, for `gpu-info`.
    pub source: String,
}

impl Thresholds {
    /// A device backend with these thresholds applied, running batt programs in the CPU
    /// backend's shards (see [`DeviceBackend::with_cpu_shards`]: measured, one shard of all
    /// lanes lost time and took several times the memory).
    pub fn apply<D: Device>(&self, mut backend: DeviceBackend<D>) -> DeviceBackend<D> {
        for entry in Entry::ALL {
            backend = backend.with_min_lanes(entry, self.min_lanes[entry.index()]);
        }
        backend.with_cpu_shards()
    }

    fn to_json(&self) -> Json {
        Json::Object(
            Entry::ALL
                .iter()
                .map(|e| (e.name().to_string(), json!(self.min_lanes[e.index()])))
                .collect(),
        )
    }

    /// The thresholds as `name >= N lanes` lines.
    pub fn describe(&self) -> String {
        let mut out = format!("dispatch thresholds ({}):\n", self.source);
        for e in Entry::ALL {
            let n = self.min_lanes[e.index()];
            let rule = if n == NEVER {
                "always on the CPU".to_string()
            } else {
                format!("on the GPU from {n} lanes")
            };
            out.push_str(&format!("  {:<12} {rule}\n", e.name()));
        }
        out
    }
}

/// Why [`MIN_LANES_ENV`] cannot be read: its text, and what is wrong in it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{MIN_LANES_ENV}={text}: {problem}; expected a lane count, or name=count pairs with names among {}",
    Entry::ALL.map(Entry::name).join(", ")
)]
pub struct OverrideError {
    pub text: String,
    pub problem: OverrideProblem,
}

/// The part of an override that is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverrideProblem {
    #[error("{0:?} has no '='")]
    NoEquals(String),
    #[error("no kernel {0:?}")]
    NoKernel(String),
    #[error("{0:?} is not a lane count")]
    NotACount(String),
}

/// The thresholds for these devices against `cpu`: the override, else the cache, else a probe
/// (then cached).
pub fn thresholds<D: Device + Clone>(devices: &[D], cpu: &CpuBackend) -> Result<Thresholds, OverrideError> {
    let key = cache_key(devices);
    let overrides = match std::env::var(MIN_LANES_ENV) {
        Ok(text) => parse_override(&text)?,
        Err(_) => Override::Some(Vec::new()),
    };
    let named = match overrides {
        Override::All(n) => {
            return Ok(Thresholds {
                min_lanes: [n; Entry::ALL.len()],
                source: format!("{MIN_LANES_ENV}={n}"),
            })
        }
        Override::Some(named) => named,
    };
    let mut found = read_cache(&key).unwrap_or_else(|| {
        let probed = Thresholds {
            min_lanes: probe(&DeviceBackend::new("probe", devices.to_vec(), cpu.clone()), cpu),
            source: "probe".into(),
        };
        write_cache(&key, &probed);
        probed
    });
    if !named.is_empty() {
        for (entry, n) in named {
            found.min_lanes[entry.index()] = n;
        }
        found.source.push_str(&format!(", overridden by {MIN_LANES_ENV}"));
    }
    Ok(found)
}

/// What `ARCBATCH_GPU_MIN_LANES` sets.
#[derive(Debug, PartialEq, Eq)]
enum Override {
    /// One threshold for every kernel.
    All(usize),
    /// Thresholds for the kernels named (none when the variable is unset).
    Some(Vec<(Entry, usize)>),
}

/// `N` (every kernel) or `name=N,name=N`.
fn parse_override(text: &str) -> Result<Override, OverrideError> {
    let bad = |problem| OverrideError {
        text: text.to_string(),
        problem,
    };
    if let Ok(n) = text.trim().parse::<usize>() {
        return Ok(Override::All(n));
    }
    let mut named = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, n) = part
            .split_once('=')
            .ok_or_else(|| bad(OverrideProblem::NoEquals(part.to_string())))?;
        let entry = Entry::of_name(name.trim()).ok_or_else(|| bad(OverrideProblem::NoKernel(name.to_string())))?;
        let n = n
            .trim()
            .parse()
            .map_err(|_| bad(OverrideProblem::NotACount(n.to_string())))?;
        named.push((entry, n));
    }
    Ok(Override::Some(named))
}

/// Times each kernel's op on the CPU and on the devices at [`PROBE_SIZES`] lanes (best of
/// three each, after one warm-up launch that compiles the kernels); a kernel's threshold is the
/// smallest size from which the devices win at every larger size, or [`NEVER`].
pub fn probe<D: Device>(backend: &DeviceBackend<D>, cpu: &CpuBackend) -> [usize; Entry::ALL.len()] {
    let grids = task_grids(&crate::embedded::demo_tasks().tasks);
    let workloads: Vec<Workload> = PROBE_SIZES.iter().filter_map(|&n| Workload::new(&grids, n)).collect();
    let best_of_3 = |b: &dyn Backend, w: &Workload, e: Entry| {
        (0..3)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(w.run(b, e));
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut out = [NEVER; Entry::ALL.len()];
    for entry in Entry::ALL {
        if let Some(w) = workloads.first() {
            w.run(backend, entry);
        }
        let wins: Vec<bool> = workloads
            .iter()
            .map(|w| best_of_3(backend, w, entry) < best_of_3(cpu, w, entry))
            .collect();
        let from = (0..wins.len()).rev().take_while(|&k| wins[k]).last();
        out[entry.index()] = from.map_or(NEVER, |k| workloads[k].len());
    }
    out
}

/// What a cached probe is valid for: the devices, this version, the CPU threads.
fn cache_key<D: Device>(devices: &[D]) -> String {
    let names: Vec<String> = devices.iter().map(Device::name).collect();
    format!(
        "{} | arcbatch {} | {} threads",
        names.join(", "),
        env!("CARGO_PKG_VERSION"),
        rayon::current_num_threads()
    )
}

fn cache_file() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = var("ARCBATCH_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("arcbatch")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("arcbatch")))?;
    Some(dir.join("gpu-thresholds.json"))
}

fn read_cache(key: &str) -> Option<Thresholds> {
    let path = cache_file()?;
    let json: Json = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
    let entry = json.get(key)?;
    let mut min_lanes = [NEVER; Entry::ALL.len()];
    for e in Entry::ALL {
        min_lanes[e.index()] = usize::try_from(entry.get(e.name())?.as_u64()?).ok()?;
    }
    Some(Thresholds {
        min_lanes,
        source: format!("cache {}", path.display()),
    })
}

/// Adds the probed thresholds to the cache file; a cache that cannot be written is skipped.
fn write_cache(key: &str, t: &Thresholds) {
    let Some(path) = cache_file() else { return };
    let mut json: Json = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .filter(Json::is_object)
        .unwrap_or_else(|| json!({}));
    json[key] = t.to_json();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let _ = std::fs::write(&path, format!("{json:#}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_name_every_kernel_or_some() {
        assert_eq!(parse_override("500"), Ok(Override::All(500)));
        assert_eq!(
            parse_override("objects=300, fill=2000"),
            Ok(Override::Some(vec![(Entry::Objects, 300), (Entry::Fill, 2000)]))
        );
        let e = parse_override("objekts=3").unwrap_err().to_string();
        assert!(e.contains("no kernel \"objekts\"") && e.contains("ofcolor"), "{e}");
        assert_eq!(
            parse_override("fill=x").unwrap_err().problem,
            OverrideProblem::NotACount("x".into())
        );
    }

    #[test]
    fn the_probe_gives_each_kernel_a_probed_size_or_never() {
        let emu = DeviceBackend::emu(1, CpuBackend::new(None)).expect("emu");
        let probed = probe(&emu, &CpuBackend::new(None));
        for (e, n) in Entry::ALL.iter().zip(probed) {
            assert!(n == NEVER || PROBE_SIZES.contains(&n), "{e:?}: {n}");
        }
        let t = Thresholds {
            min_lanes: probed,
            source: "probe".into(),
        };
        assert!(t.describe().lines().count() == 1 + Entry::ALL.len());
    }
}
