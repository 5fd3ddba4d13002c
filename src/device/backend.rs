//! [`DeviceBackend`]: the [`Backend`] that runs batched ops on a set of [`Device`]s.
//!
//! Each batched op with a kernel, and each chain of grid steps ([`GridChain`]: one job, its
//! grids staying on the device from step to step), runs as its entry in the op table says
//! ([`Op::kernel`]): which lanes the kernel takes (grids with cells, and what else the kernel
//! is written for; the other, odd lanes go to the CPU backend), how to pack the taken lanes
//! into one [`Job`], and how to unpack the bytes that come back into the very [`LaneResult`]s
//! the CPU backend gives. A batch of more than
//! [`DeviceBackend::with_shard_threshold`] lanes (default [`DEFAULT_SHARD_ABOVE`]) is cut into
//! one contiguous shard per device, each run on a thread of its own and merged back in lane
//! order. Packing and unpacking spread the lanes over the thread pool.
//!
//! Any device failure (no device, out of memory, a compile, launch or transfer error, output
//! that does not decode, a panic) sends that shard to the CPU backend, which gives identical
//! results, with one warning on stderr per kind of failure per process; it never reaches the
//! caller. Ops without a kernel and function values run on the CPU backend too.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::emu::EmuDevice;
use super::{Device, DeviceError, Entry, Job, Launch, SetupError, Staging};
use crate::batch::kernel::Plan;
use crate::batch::op::Unpacked;
use crate::batch::{Arg, Backend, CpuBackend, GridChain, Kernel, LaneResult, Lanes, Op, Selection};
use crate::dsl::func::{caught, Panicked};
use crate::dsl::PrimId;

/// Lanes above which a batch is sharded across the devices.
pub const DEFAULT_SHARD_ABOVE: usize = 120;

/// Threads per block of every launch (grids have at most 900 cells in ARC, so a thread
/// handles a few cells).
pub const THREADS_PER_BLOCK: u32 = 256;

/// A batched-op backend over devices of type `D`, with a CPU backend for everything else.
pub struct DeviceBackend<D: Device> {
    name: &'static str,
    devices: Vec<D>,
    cpu: CpuBackend,
    shard_above: usize,
    /// Whether a batt program runs in the CPU backend's shards rather than in one.
    cpu_shards: bool,
    /// Per entry point (indexed as [`Entry::ALL`]), the fewest lanes worth a launch: smaller
    /// batches run on the CPU backend (the `auto` backend's thresholds; 0 for `gpu`/`emu`).
    min_lanes: [usize; Entry::ALL.len()],
    /// Reused staging buffers.
    buffers: Mutex<Vec<Staging>>,
    /// Shards that fell back to the CPU.
    fallbacks: AtomicUsize,
    /// Nanoseconds packing, in the devices' runs and unpacking, summed over shards.
    clock: [AtomicU64; 3],
}

/// Where the shards' time went, in seconds summed over shards (so over threads): packing the
/// lanes into jobs, the devices' runs (transfers and kernels), unpacking the results.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShardTimes {
    pub pack: f64,
    pub device: f64,
    pub unpack: f64,
}

impl<D: Device> DeviceBackend<D> {
    /// A backend named `name` (for reports) over `devices`, falling back to `cpu`. With no
    /// device every op runs on `cpu` (after one warning).
    pub fn new(name: &'static str, devices: Vec<D>, cpu: CpuBackend) -> DeviceBackend<D> {
        DeviceBackend {
            name,
            devices,
            cpu,
            shard_above: DEFAULT_SHARD_ABOVE,
            cpu_shards: false,
            min_lanes: [0; Entry::ALL.len()],
            buffers: Mutex::new(Vec::new()),
            fallbacks: AtomicUsize::new(0),
            clock: Default::default(),
        }
    }

    /// Shards a batch across the devices when it has more than `lanes` lanes.
    pub fn with_shard_threshold(self, lanes: usize) -> DeviceBackend<D> {
        DeviceBackend {
            shard_above: lanes,
            ..self
        }
    }

    /// Has a batt program run in the CPU backend's shards of a few lanes, not in one shard of
    /// all its lanes. One shard holds every node's values for all its lanes while it runs:
    /// `batt --cross` of the published solvers over the evaluation tasks (1,782 lanes) on an
    /// H200 took 4.3–4.7 GB in one shard against 0.9–2.1 GB in the CPU's, and more time (37.6
    /// against 33.8 s with 4 threads, 13.0 against 10.3 s with 16, in one call), as the ops a
    /// GPU takes are under 1 % of that work. Launches are then as small as the shards, so
    /// kernels whose thresholds ([`Self::with_min_lanes`]) are larger run on the CPU.
    pub fn with_cpu_shards(self) -> DeviceBackend<D> {
        DeviceBackend {
            cpu_shards: true,
            ..self
        }
    }

    /// Runs an entry point's batches of fewer than `lanes` lanes on the CPU backend.
    pub fn with_min_lanes(mut self, entry: Entry, lanes: usize) -> DeviceBackend<D> {
        self.min_lanes[entry.index()] = lanes;
        self
    }

    /// The devices.
    pub fn devices(&self) -> &[D] {
        &self.devices
    }

    /// How many shards have fallen back to the CPU after a device failure so far.
    pub fn fallbacks(&self) -> usize {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// The time split of the shards run since the last call.
    pub fn take_shard_times(&self) -> ShardTimes {
        let take = |k: usize| self.clock[k].swap(0, Ordering::Relaxed) as f64 * 1e-9;
        ShardTimes {
            pack: take(0),
            device: take(1),
            unpack: take(2),
        }
    }

    /// Adds the time since `since` to phase `k` of [`ShardTimes`] and restarts it.
    fn lap(&self, k: usize, since: &mut Instant) {
        let now = Instant::now();
        self.clock[k].fetch_add((now - *since).as_nanos() as u64, Ordering::Relaxed);
        *since = now;
    }

    /// Runs an op or a chain: its lanes on the devices (sharded when there are many), its odd
    /// lanes and any failed shard on the CPU; results in lane order.
    fn offload(&self, op: &dyn Work) -> Vec<LaneResult> {
        let n = op.lanes().len();
        let mut taken = Selection::par_new(n, |k| op.takes(k));
        let fewest = op
            .entries()
            .iter()
            .map(|e| self.min_lanes[e.index()])
            .min()
            .unwrap_or(0);
        if taken.len() < fewest {
            taken = Selection::new(n, |_| false);
        }
        let lanes = taken.taken();
        let shards: Vec<&[usize]> = if lanes.is_empty() {
            Vec::new()
        } else if lanes.len() > self.shard_above && self.devices.len() > 1 {
            lanes.chunks(lanes.len().div_ceil(self.devices.len())).collect()
        } else {
            vec![lanes]
        };
        let on_devices: Vec<Vec<LaneResult>> = if shards.len() > 1 {
            // A thread of its own per shard, so the devices work at the same time even when
            // every pool worker is busy (a job mostly waits on its device).
            std::thread::scope(|scope| {
                let running: Vec<_> = (shards.iter().enumerate())
                    .map(|(d, lanes)| scope.spawn(move || self.on_device(d, op, lanes)))
                    .collect();
                // The shards pack and unpack on the pool: a pool worker that only waited here
                // would hold back their work, and with every worker waiting, nothing would
                // move. It runs the pool's work until they are done.
                while running.iter().any(|shard| !shard.is_finished()) {
                    match rayon::yield_now() {
                        Some(rayon::Yield::Executed) => {}
                        Some(rayon::Yield::Idle) => std::thread::sleep(Duration::from_micros(20)),
                        None => break,
                    }
                }
                running
                    .into_iter()
                    .map(|shard| shard.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                    .collect()
            })
        } else {
            shards.iter().map(|lanes| self.on_device(0, op, lanes)).collect()
        };
        // Every lane on one shard: its results as they are.
        if let (true, [_]) = (taken.is_all(), &on_devices[..]) {
            return on_devices.into_iter().next().expect("one shard");
        }
        // The shards are consecutive runs of the taken lanes.
        let mut odd = op.on_cpu(&self.cpu, taken.rest().taken()).into_iter();
        taken.merge(on_devices.into_iter().flatten(), |_| {
            odd.next().expect("the CPU gives one result per odd lane")
        })
    }

    /// One shard on device `d`, or on the CPU if that fails.
    fn on_device(&self, d: usize, op: &dyn Work, lanes: &[usize]) -> Vec<LaneResult> {
        let Some(device) = self.devices.get(d) else {
            let error = DeviceError::NoDevice(format!("the {} backend has no device", self.name));
            return self.fall_back(self.name.to_string(), op, lanes, &error);
        };
        let mut staging = self
            .buffers
            .lock()
            .map(|mut b| b.pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        let attempt = caught(|| {
            let mut clock = Instant::now();
            staging.clear();
            let plan = op.pack(lanes, &mut staging);
            let launches = (plan.launches.into_iter())
                .map(|(entry, packed)| Launch {
                    entry,
                    blocks: packed.blocks,
                    threads: THREADS_PER_BLOCK,
                    shared_bytes: 0,
                    args: packed.args,
                })
                .collect();
            let job = Job {
                launches,
                input: staging.input(),
                device_bytes: staging.device_bytes(),
                output: plan.output,
            };
            self.lap(0, &mut clock);
            // Unpacked straight from where the output came back.
            let mut unpacked = None;
            device.run(&job, &mut |output| {
                self.lap(1, &mut clock);
                unpacked = Some(op.unpack(lanes, job.input, output));
                self.lap(2, &mut clock);
            })?;
            match unpacked {
                Some(results) => results.map_err(|e| DeviceError::BadOutput(e.0)),
                None => Err(DeviceError::Transfer("the device gave no output".into())),
            }
        })
        .unwrap_or_else(|Panicked(message)| Err(DeviceError::Launch(format!("panicked: {message}"))));
        if let Ok(mut pool) = self.buffers.lock() {
            pool.push(staging);
        }
        match attempt {
            Ok(results) if results.len() == lanes.len() => results,
            Ok(results) => {
                let error = DeviceError::BadOutput(format!("{} results for {} lanes", results.len(), lanes.len()));
                self.fall_back(device.name(), op, lanes, &error)
            }
            Err(error) => self.fall_back(device.name(), op, lanes, &error),
        }
    }

    /// A failed shard on the CPU, with a warning the first time this kind of failure occurs.
    fn fall_back(&self, device: String, op: &dyn Work, lanes: &[usize], error: &DeviceError) -> Vec<LaneResult> {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        warn_once(&device, &op.entries(), error);
        op.on_cpu(&self.cpu, lanes)
    }
}

impl DeviceBackend<EmuDevice> {
    /// The emulated backend (`--backend emu`): `devices` emulated devices, corrupting the
    /// kernel that `ARCBATCH_EMU_FAULT` names, if any (see [`super::emu`]).
    pub fn emu(devices: usize, cpu: CpuBackend) -> Result<DeviceBackend<EmuDevice>, SetupError> {
        let fault = EmuDevice::fault_from_env()?;
        let devices = (0..devices).map(|d| EmuDevice::new(d).with_fault(fault)).collect();
        Ok(DeviceBackend::new("emu", devices, cpu))
    }
}

/// Prints a fallback warning once per kind of failure per process.
fn warn_once(device: &str, entries: &[Entry], error: &DeviceError) {
    static WARNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let first = WARNED
        .lock()
        .map(|mut w| w.get_or_insert_with(HashSet::new).insert(error.kind()))
        .unwrap_or(true);
    if first {
        eprintln!(
            "arcbatch: warning: {device}: {}: {error}; running it on the CPU instead (further {} failures are not reported)",
            entries.iter().map(|e| e.name()).collect::<Vec<_>>().join(", "),
            error.kind()
        );
    }
}

impl<D: Device> Backend for DeviceBackend<D> {
    fn name(&self) -> &'static str {
        self.name
    }

    /// One shard, so that each op launches as large as it can (and shards across the
    /// devices); as the CPU backend cuts them with [`Self::with_cpu_shards`] or without a
    /// device.
    fn shards(&self, lanes: usize) -> usize {
        if self.cpu_shards || self.devices.is_empty() {
            self.cpu.shards(lanes)
        } else {
            1
        }
    }

    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.cpu.map_scalar(prim, args, lanes)
    }

    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.cpu.map_call(function, args, lanes)
    }

    fn run_op(&self, op: &'static Op, param: u32, lanes: &Lanes) -> Vec<LaneResult> {
        match &op.kernel {
            Some(kernel) => self.offload(&Offload {
                op,
                kernel,
                param,
                lanes,
            }),
            None => self.cpu.run_op(op, param, lanes),
        }
    }

    fn run_chain(&self, chain: &GridChain, lanes: &Lanes) -> Vec<LaneResult> {
        self.offload(&ChainCall { chain, lanes })
    }
}

/// What the device backend runs as one job per shard: one batched op with a kernel
/// ([`Offload`]) or a chain of grid steps ([`GridChain`]), over lanes.
trait Work: Sync {
    fn lanes(&self) -> &Lanes;
    /// Its kernels' entry points, in launch order.
    fn entries(&self) -> Vec<Entry>;
    /// Whether the devices take lane `k` (else it runs on the CPU).
    fn takes(&self, k: usize) -> bool;
    /// The given lanes (all taken) staged for one job.
    fn pack(&self, taken: &[usize], staging: &mut Staging) -> Plan;
    /// The given lanes' results from the job's output.
    fn unpack(&self, taken: &[usize], staged: &[u8], out: &[u8]) -> Unpacked;
    /// The given lanes (ascending) on the CPU backend.
    fn on_cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult>;
}

/// One call of an op with a kernel.
struct Offload<'a> {
    op: &'static Op,
    kernel: &'static Kernel,
    param: u32,
    lanes: &'a Lanes,
}

impl Work for Offload<'_> {
    fn lanes(&self) -> &Lanes {
        self.lanes
    }

    fn entries(&self) -> Vec<Entry> {
        vec![self.kernel.entry]
    }

    fn takes(&self, k: usize) -> bool {
        (self.kernel.takes)(self.lanes, k)
    }

    fn pack(&self, taken: &[usize], staging: &mut Staging) -> Plan {
        self.kernel.pack(self.lanes, taken, self.param, staging)
    }

    fn unpack(&self, taken: &[usize], staged: &[u8], out: &[u8]) -> Unpacked {
        self.kernel.unpack(self.lanes, taken, self.param, staged, out)
    }

    fn on_cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        on_cpu(self.lanes, lanes, |l| cpu.run_op(self.op, self.param, l))
    }
}

/// One call of a chain of grid steps.
struct ChainCall<'a> {
    chain: &'a GridChain,
    lanes: &'a Lanes,
}

impl Work for ChainCall<'_> {
    fn lanes(&self) -> &Lanes {
        self.lanes
    }

    fn entries(&self) -> Vec<Entry> {
        self.chain.entries()
    }

    fn takes(&self, k: usize) -> bool {
        self.chain.takes(self.lanes, k)
    }

    fn pack(&self, taken: &[usize], staging: &mut Staging) -> Plan {
        self.chain.pack(self.lanes, taken, staging)
    }

    fn unpack(&self, taken: &[usize], _: &[u8], out: &[u8]) -> Unpacked {
        self.chain.unpack(self.lanes, taken, out)
    }

    fn on_cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        on_cpu(self.lanes, lanes, |l| self.chain.run_stepwise(cpu, l))
    }
}

/// `run` over the given lanes (ascending) of `all`: all of them as they are, as when a batch
/// is below the kernels' threshold, else a copy of those lanes.
fn on_cpu(all: &Lanes, lanes: &[usize], run: impl FnOnce(&Lanes) -> Vec<LaneResult>) -> Vec<LaneResult> {
    if lanes.len() == all.len() {
        return run(all);
    }
    run(&all.select(lanes))
}
