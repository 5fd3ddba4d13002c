//! `arcbatch gpu-info` (what this machine offers the GPU backend, and why not where it offers
//! nothing) and `arcbatch bench-gpu` (the batched kernels on many ARC grids: CPU against one
//! GPU against all of them; with `--host-only`, CPU against the device path's host side, each
//! kernel replaced by its recorded result). Besides each kernel, both time a chain of five grid
//! steps, which a device runs as one job.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use arcbatch::batch::{Backend, CpuBackend, GridChain, LaneResult};
use arcbatch::device::auto;
use arcbatch::device::backend::DEFAULT_SHARD_ABOVE;
use arcbatch::device::cuda::{driver_origin, gpus, CudaDevice, PhaseTimes};
use arcbatch::device::library::DIRS;
use arcbatch::device::nvrtc::{nvrtc, TARGETS};
use arcbatch::device::replay::Transfers;
use arcbatch::device::workload::{bench_chain, task_grids, Workload};
use arcbatch::device::{Device, DeviceBackend, EmuDevice, Entry, ReplayDevice, FAMILIES};
use arcbatch::dsl::Grid;
use arcbatch::Chain;

use super::Failure;

/// `gpu-info`: exit status 1 when NVRTC is there but a kernel fails to build.
pub fn info() -> Result<ExitCode, Failure> {
    let devices = gpus();
    match devices {
        Ok(list) => {
            println!("GPUs: {} (driver from {})", list.len(), driver_origin().unwrap_or("?"));
            for d in list {
                let i = &d.info;
                println!(
                    "  cuda{}: {}, sm_{}, {:.1} GiB, {} multiprocessors",
                    i.ordinal,
                    i.name,
                    i.arch,
                    i.memory_bytes as f64 / (1u64 << 30) as f64,
                    i.multiprocessors
                );
            }
        }
        Err(why) => println!("GPUs: none ({})", Chain(why)),
    }
    println!(
        "(the CUDA libraries are looked up on the loader path, then in {}; ARCBATCH_NVRTC names NVRTC's file)",
        DIRS.join(" and ")
    );
    let mut failed = false;
    match nvrtc() {
        Err(why) => println!(
            "NVRTC: none ({}); the kernels cannot be compiled for a GPU here",
            Chain(&why)
        ),
        Ok(compiler) => {
            println!(
                "NVRTC: {}.{} from {}",
                compiler.version.0, compiler.version.1, compiler.origin
            );
            let mut targets: Vec<u32> = TARGETS.to_vec();
            if let Ok(list) = devices {
                targets.extend(list.iter().map(|d| d.info.arch));
            }
            targets.sort_unstable();
            targets.dedup();
            println!("kernels built by NVRTC (registers per thread / static shared memory per block):");
            print!("  {:<12}", "kernel");
            for t in &targets {
                print!(" {:<18}", format!("sm_{t}"));
            }
            println!();
            let mut cells: Vec<Vec<String>> = vec![Vec::new(); Entry::ALL.len()];
            for family in FAMILIES {
                for &arch in &targets {
                    let built = compiler.compile(family.file, &family.nvrtc_source(), arch);
                    for &entry in family.entries {
                        let cell = match &built {
                            Ok(cubin) => match cubin.entries.iter().find(|e| e.name == entry.symbol()) {
                                Some(e) => format!("ok {} r / {} B", e.registers, e.shared_bytes),
                                None => "ok (no ptxas report)".into(),
                            },
                            Err(e) => {
                                failed = true;
                                format!("FAILED: {}", e.to_string().lines().last().unwrap_or_default())
                            }
                        };
                        cells[entry.index()].push(cell);
                    }
                }
            }
            for entry in Entry::ALL {
                print!("  {:<12}", entry.name());
                for cell in &cells[entry.index()] {
                    print!(" {cell:<18}");
                }
                println!();
            }
        }
    }
    match devices {
        Ok(list) => {
            let thresholds = auto::thresholds(list, &CpuBackend::new(None))?;
            print!("{}", thresholds.describe());
            println!("batches above {DEFAULT_SHARD_ABOVE} lanes are sharded across the {} GPUs", list.len());
        }
        Err(_) => println!("dispatch: --backend auto runs every op on the CPU (no GPU); --backend emu runs the kernels compiled for the host"),
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

pub struct BenchOptions {
    pub tasks: Option<PathBuf>,
    pub sizes: Vec<usize>,
    /// What to time: kernels in [`Entry::ALL`]'s order, then the chain.
    pub kernels: Vec<Measured>,
    /// Run the kernels on emulated devices instead (a dry run where there is no GPU).
    pub emu: usize,
    /// Time the host side alone on this many replaying devices (`--host-only`).
    pub host_only: Option<usize>,
    pub repeat: usize,
    /// Where `--host-only` writes its figures as JSON.
    pub json: Option<PathBuf>,
}

/// `bench-gpu`.
pub fn bench(options: &BenchOptions) -> Result<ExitCode, Failure> {
    let tasks = match &options.tasks {
        Some(path) => arcbatch::tasks::load(path)?,
        None => arcbatch::embedded::demo_tasks(),
    };
    let grids = task_grids(&tasks.tasks);
    println!(
        "{} grids from {} (cycled to each size); CPU: {} threads",
        grids.len(),
        options
            .tasks
            .as_ref()
            .map_or("the embedded demo tasks".to_string(), |p| p.display().to_string()),
        rayon::current_num_threads()
    );
    if let Some(devices) = options.host_only {
        return bench_host(options, &grids, devices);
    }
    if options.emu > 0 {
        let devices: Vec<EmuDevice> = (0..options.emu).map(EmuDevice::new).collect();
        println!(
            "devices: {} emulated (kernels compiled for the host; a dry run, not GPU timings)",
            devices.len()
        );
        return bench_on(options, &grids, devices, &|_| None);
    }
    let devices = gpus().as_ref().map_err(|why| {
        format!(
            "no usable GPU ({}); `arcbatch bench-gpu --emu 1` runs the same benchmark on emulated devices",
            Chain(why)
        )
    })?;
    for d in devices {
        println!("device: {}", d.name());
        d.set_phase_timing(true);
    }
    let phases = |ds: &[std::sync::Arc<CudaDevice>]| {
        Some(ds.iter().fold(PhaseTimes::default(), |acc, d| {
            let t = d.take_phase_times();
            PhaseTimes {
                upload: acc.upload + t.upload,
                kernel: acc.kernel + t.kernel,
                download: acc.download + t.download,
            }
        }))
    };
    bench_on(options, &grids, devices.clone(), &phases)
}

/// One row of the benchmarks: one batched op's kernel, or the chain of grid steps
/// ([`bench_chain`]), which runs on a device as one job.
pub enum Measured {
    Kernel(Entry),
    Chain(GridChain),
}

impl Measured {
    /// Its name in the tables and the JSON (a kernel's short name, or `chain`).
    pub fn name(&self) -> &'static str {
        match self {
            Measured::Kernel(entry) => entry.name(),
            Measured::Chain(_) => "chain",
        }
    }

    /// One call over every lane of `w` on `backend`.
    fn run(&self, w: &Workload, backend: &dyn Backend) -> Vec<LaneResult> {
        match self {
            Measured::Kernel(entry) => w.run(backend, *entry),
            Measured::Chain(chain) => w.run_chain(backend, chain),
        }
    }
}

/// The benchmark over `devices`: per size and kernel, CPU vs the first device vs all of them.
/// `phases` takes the devices' time split since its last call, where they measure one.
fn bench_on<D: Device + Clone>(
    options: &BenchOptions,
    grids: &[arcbatch::dsl::Grid],
    devices: Vec<D>,
    phases: &dyn Fn(&[D]) -> Option<PhaseTimes>,
) -> Result<ExitCode, Failure> {
    let cpu = CpuBackend::new(None);
    let one = DeviceBackend::new("one", devices[..1].to_vec(), cpu.clone());
    let all = DeviceBackend::new("all", devices.clone(), cpu.clone());
    let time = |b: &dyn Backend, w: &Workload, m: &Measured| {
        best_of(options.repeat, &[b], w, m)
            .pop()
            .expect("a timing of the backend")
    };
    let mut mismatches = 0;
    println!(
        "{:>7} {:<12} {:>10} {:>10} {:>7} {:>10} {:>7}  split of one device's time (upload / kernel / download)",
        "lanes", "kernel", "cpu ms", "1 dev ms", "x cpu", "all ms", "x cpu"
    );
    for &n in &options.sizes {
        let w = Workload::new(grids, n).ok_or("no task grid fits a batch")?;
        for measured in &options.kernels {
            measured.run(&w, &one);
            phases(&devices);
            let (t_cpu, expected) = time(&cpu, &w, measured);
            let (t_one, got_one) = time(&one, &w, measured);
            let split = phases(&devices[..1]).map_or("n/a".to_string(), |p| {
                let total = (p.upload + p.kernel + p.download).max(f64::MIN_POSITIVE);
                format!(
                    "{:.0}% / {:.0}% / {:.0}%",
                    100.0 * p.upload / total,
                    100.0 * p.kernel / total,
                    100.0 * p.download / total
                )
            });
            let (t_all, got_all) = time(&all, &w, measured);
            phases(&devices);
            let ok = got_one == expected && got_all == expected;
            if !ok {
                mismatches += 1;
            }
            println!(
                "{:>7} {:<12} {:>10.3} {:>10.3} {:>7.2} {:>10.3} {:>7.2}  {split}{}",
                w.len(),
                measured.name(),
                t_cpu * 1e3,
                t_one * 1e3,
                t_cpu / t_one,
                t_all * 1e3,
                t_cpu / t_all,
                if ok { "" } else { "  MISMATCH against the CPU" }
            );
        }
    }
    let fallbacks = one.fallbacks() + all.fallbacks();
    if fallbacks > 0 {
        println!("{fallbacks} batches fell back to the CPU (see the warnings): their times are CPU times");
    }
    if mismatches > 0 {
        println!("{mismatches} results differ from the CPU's: please report them (arcbatch diff shows where)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Per backend, the best of `repeat` timings of `measured` over `w`, and its results: the
/// backends' calls alternate, so that each follows the others' as the ops of a pipeline do,
/// and all meet the same caches and the same phase of a shared machine (for `objects`, the
/// host side's best over the CPU's ranged over 13 %-38 % in twelve runs of one build with
/// three calls of one backend timed after three of the other; alternated, over 11 %-21 %).
/// Each backend makes one call untimed first: a process's first calls of an op fault in the
/// memory its results take (the host side of `objects`: about 6 MB in each of its first three
/// calls), which a search pays once and a benchmark of three calls would count in each.
fn best_of(repeat: usize, backends: &[&dyn Backend], w: &Workload, measured: &Measured) -> Vec<(f64, Vec<LaneResult>)> {
    // Each backend's results stay alive while its next call runs, and are dropped untimed.
    let mut best: Vec<_> = backends.iter().map(|&b| (f64::INFINITY, measured.run(w, b))).collect();
    for _ in 0..repeat.max(1) {
        for (&backend, (time, result)) in backends.iter().zip(&mut best) {
            let start = Instant::now();
            let results = measured.run(w, backend);
            *time = time.min(start.elapsed().as_secs_f64());
            *result = results;
        }
    }
    best
}

/// `bench-gpu --host-only`: per size and kernel (and the chain), the CPU backend against the
/// device path on `devices` replaying devices (the kernels' outputs recorded once on the
/// emulator), whose time is all host: packing, staging, sharding, copies, unpacking; with the
/// transfers one call makes. `objects` comes back labelled; building its objects, which a step
/// that reads them pays once, is timed apart.
fn bench_host(options: &BenchOptions, grids: &[Grid], devices: usize) -> Result<ExitCode, Failure> {
    if devices == 0 {
        return Err("--host-only needs at least 1 device".into());
    }
    let replaying: Vec<std::sync::Arc<ReplayDevice>> = (0..devices)
        .map(|d| std::sync::Arc::new(ReplayDevice::new(d)))
        .collect();
    println!(
        "devices: {devices} replaying (each kernel replaced by its output recorded on the emulator): \
         the times are the host side's alone"
    );
    let cpu = CpuBackend::new(None);
    let host = DeviceBackend::new("host", replaying.clone(), cpu.clone());
    println!(
        "{:>7} {:<12} {:>12} {:>12} {:>8} {:>13} {:>9}  host split (pack / copies / unpack)",
        "lanes", "kernel", "cpu us/lane", "host us/lane", "host/cpu", "build us/lane", "up/down"
    );
    let (mut rows, mut mismatches) = (Vec::new(), 0);
    for &n in &options.sizes {
        let w = Workload::new(grids, n).ok_or("no task grid fits a batch")?;
        for measured in &options.kernels {
            replaying.iter().for_each(|d| d.record());
            let expected = measured.run(&w, &host);
            replaying.iter().for_each(|d| d.replay());
            // The transfers of one call.
            replaying.iter().for_each(|d| {
                d.take_transfers();
            });
            drop(measured.run(&w, &host));
            let transfers = replaying.iter().fold(Transfers::default(), |sum, d| {
                let t = d.take_transfers();
                Transfers {
                    uploads: sum.uploads + t.uploads,
                    downloads: sum.downloads + t.downloads,
                }
            });
            host.take_shard_times();
            let [(t_cpu, cpu_results), (t_host, got)]: [_; 2] = best_of(options.repeat, &[&cpu, &host], &w, measured)
                .try_into()
                .expect("a timing per backend");
            let split = host.take_shard_times();
            // What a step that reads every member pays on top, once: building the objects of
            // the results that came back labelled (`objects`; the comparison below reads them).
            let start = Instant::now();
            for labelled in got.iter().filter_map(|r| r.as_ref().ok()?.as_labelled()) {
                std::hint::black_box(labelled.members());
            }
            let t_build = start.elapsed().as_secs_f64();
            let ok = got == cpu_results && expected == cpu_results;
            mismatches += usize::from(!ok);
            let lanes = w.len() as f64;
            let total = (split.pack + split.device + split.unpack).max(f64::MIN_POSITIVE);
            println!(
                "{:>7} {:<12} {:>12.3} {:>12.3} {:>7.0}% {:>13.3} {:>9}  {:.0}% / {:.0}% / {:.0}%{}",
                w.len(),
                measured.name(),
                t_cpu * 1e6 / lanes,
                t_host * 1e6 / lanes,
                100.0 * t_host / t_cpu,
                t_build * 1e6 / lanes,
                format!("{}/{}", transfers.uploads, transfers.downloads),
                100.0 * split.pack / total,
                100.0 * split.device / total,
                100.0 * split.unpack / total,
                if ok { "" } else { "  MISMATCH against the CPU" }
            );
            rows.push(json!({
                "name": measured.name(),
                "lanes": w.len(),
                "devices": devices,
                "cpu_us_per_lane": t_cpu * 1e6 / lanes,
                "host_us_per_lane": t_host * 1e6 / lanes,
                "host_over_cpu": t_host / t_cpu,
                "build_us_per_lane": t_build * 1e6 / lanes,
                "uploads": transfers.uploads,
                "downloads": transfers.downloads,
                "split": {"pack": split.pack / total, "copies": split.device / total, "unpack": split.unpack / total},
                "matches_cpu": ok,
            }));
        }
    }
    if let Some(path) = &options.json {
        let report = json!({"threads": rayon::current_num_threads(), "repeat": options.repeat, "kernels": rows});
        super::run::write_json(path, &report)?;
    }
    if host.fallbacks() > 0 {
        println!(
            "{} batches fell back to the CPU (see the warnings): their times are CPU times",
            host.fallbacks()
        );
    }
    if mismatches > 0 {
        println!("{mismatches} results differ from the CPU's: please report them");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads `--sizes` (`1000,10000,100000`).
pub fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("--sizes {text}: {s:?} is not a positive lane count"))
        })
        .collect()
}

/// Reads `--kernels` (`objects,fill,chain`): the kernels named, in [`Entry::ALL`]'s order,
/// then the chain of grid steps ([`bench_chain`]) where named; all of them when absent.
pub fn parse_kernels(text: Option<&str>) -> Result<Vec<Measured>, String> {
    let kernels = |named: &dyn Fn(&str) -> bool| {
        let entries = Entry::ALL.into_iter().filter(|e| named(e.name())).map(Measured::Kernel);
        let chain = named("chain").then(|| Measured::Chain(bench_chain()));
        entries.chain(chain).collect()
    };
    let Some(text) = text else {
        return Ok(kernels(&|_| true));
    };
    let names: Vec<&str> = text.split(',').map(str::trim).collect();
    if let Some(bad) = names.iter().find(|&&s| s != "chain" && Entry::of_name(s).is_none()) {
        return Err(format!(
            "--kernels {text}: {bad:?} is not a kernel (the kernels: {}, and chain)",
            Entry::ALL.map(Entry::name).join(", ")
        ));
    }
    Ok(kernels(&|name| names.contains(&name)))
}
