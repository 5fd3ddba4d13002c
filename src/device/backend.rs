//! [`DeviceBackend`]: the [`Backend`] that runs batched ops on a set of [`Device`]s.
//!
//! Each batched op with a kernel is an `Offload`: which lanes the kernel takes (grids with
//! cells, and what else the kernel is written for; the other, odd lanes go to the CPU
//! backend), how to pack the taken lanes into one [`Job`], and how to unpack the bytes that
//! come back into the very [`LaneResult`]s the CPU backend gives. A batch of more than
//! [`DeviceBackend::with_shard_threshold`] lanes (default [`DEFAULT_SHARD_ABOVE`]) is cut into
//! one contiguous shard per device, each run on a thread of its own and merged back in lane
//! order. Packing and unpacking spread the lanes over the thread pool.
//!
//! Any device failure (no device, out of memory, a compile, launch or transfer error, output
//! that does not decode, a panic) sends that shard to the CPU backend, which gives identical
//! results, with one warning on stderr per kind of failure per process; it never reaches the
//! caller. Ops without a kernel and function values run on the CPU backend too.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use super::emu::EmuDevice;
use super::{Device, DeviceError, Entry, Job, KernelArg, Launch, SetupError};
use crate::batch::kernel::{
    grid_out, kernel_color, kernel_grid, par_unpack, stage_grids, BadOutput, Packed, UNPACK_CHUNK,
};
use crate::batch::staging::{u32s, Staging};
use crate::batch::{Arg, Backend, CpuBackend, GridBatch, GridMeta, LaneResult, PatchBatch, Selection, Transform};
use crate::dsl::func::panic_message;
use crate::dsl::prims::{self, objects_from_labels};
use crate::dsl::{Cell, Color, Loc, PrimId, Value};

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
    /// Per entry point (indexed as [`Entry::ALL`]), the fewest lanes worth a launch: smaller
    /// batches run on the CPU backend (the `auto` backend's thresholds; 0 for `gpu`/`emu`).
    min_lanes: [usize; Entry::ALL.len()],
    /// Reused staging and download buffers.
    buffers: Mutex<Vec<(Staging, Vec<u8>)>>,
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

    /// Runs an op: its lanes on the devices (sharded when there are many), its odd lanes and
    /// any failed shard on the CPU; results in lane order.
    fn offload(&self, op: &dyn Offload) -> Vec<LaneResult> {
        let mut taken = Selection::new(op.lanes(), |&k| op.takes(k));
        if taken.len() < self.min_lanes[op.entry().index()] {
            taken = Selection::new(op.lanes(), |_| false);
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
                running
                    .into_iter()
                    .map(|shard| shard.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                    .collect()
            })
        } else {
            shards.iter().map(|lanes| self.on_device(0, op, lanes)).collect()
        };
        // The shards are consecutive runs of the taken lanes.
        let mut odd = op.cpu(&self.cpu, taken.rest().taken()).into_iter();
        taken.merge(on_devices.into_iter().flatten(), |_| {
            odd.next().expect("the CPU gives one result per odd lane")
        })
    }

    /// One shard on device `d`, or on the CPU if that fails.
    fn on_device(&self, d: usize, op: &dyn Offload, lanes: &[usize]) -> Vec<LaneResult> {
        let Some(device) = self.devices.get(d) else {
            let error = DeviceError::NoDevice(format!("the {} backend has no device", self.name));
            return self.fall_back(self.name.to_string(), op, lanes, &error);
        };
        let (mut staging, mut out) = self
            .buffers
            .lock()
            .map(|mut b| b.pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        let attempt = catch_unwind(AssertUnwindSafe(|| {
            let mut clock = Instant::now();
            staging.clear();
            let packed = op.pack(lanes, &mut staging);
            let job = Job {
                launch: Launch {
                    entry: op.entry(),
                    blocks: packed.blocks,
                    threads: THREADS_PER_BLOCK,
                    shared_bytes: 0,
                    args: packed.args,
                },
                input: staging.input(),
                device_bytes: staging.device_bytes(),
                output: packed.output,
            };
            self.lap(0, &mut clock);
            device.run(&job, &mut out)?;
            self.lap(1, &mut clock);
            let results = op.unpack(lanes, &out).map_err(|e| DeviceError::BadOutput(e.0));
            self.lap(2, &mut clock);
            results
        }))
        .unwrap_or_else(|panic| Err(DeviceError::Launch(format!("panicked: {}", panic_message(&panic)))));
        if let Ok(mut pool) = self.buffers.lock() {
            pool.push((staging, out));
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
    fn fall_back(&self, device: String, op: &dyn Offload, lanes: &[usize], error: &DeviceError) -> Vec<LaneResult> {
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        warn_once(&device, op.entry(), error);
        op.cpu(&self.cpu, lanes)
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
fn warn_once(device: &str, entry: Entry, error: &DeviceError) {
    static WARNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let first = WARNED
        .lock()
        .map(|mut w| w.get_or_insert_with(HashSet::new).insert(error.kind()))
        .unwrap_or(true);
    if first {
        eprintln!(
            "arcbatch: warning: {device}: {}: {error}; running it on the CPU instead (further {} failures are not reported)",
            entry.name(),
            error.kind()
        );
    }
}

impl<D: Device> Backend for DeviceBackend<D> {
    fn name(&self) -> &'static str {
        self.name
    }

    /// One shard: each op then launches as large as it can, and shards across the devices.
    fn shards(&self, _lanes: usize) -> usize {
        1
    }

    fn map_scalar(&self, prim: PrimId, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.cpu.map_scalar(prim, args, lanes)
    }

    fn map_call(&self, function: &Arg<'_>, args: &[Arg<'_>], lanes: usize) -> Vec<LaneResult> {
        self.cpu.map_call(function, args, lanes)
    }

    fn objects(&self, grids: &GridBatch, mode: u8) -> Vec<LaneResult> {
        self.offload(&Objects { grids, mode })
    }

    fn ofcolor(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        self.offload(&ColorQuery {
            grids,
            colors,
            count: false,
        })
    }

    fn colorcount(&self, grids: &GridBatch, colors: &[i64]) -> Vec<LaneResult> {
        self.offload(&ColorQuery {
            grids,
            colors,
            count: true,
        })
    }

    fn palette(&self, grids: &GridBatch, as_tuple: bool) -> Vec<LaneResult> {
        self.offload(&Palette { grids, as_tuple })
    }

    fn colorfilter(&self, objects: &[&Value], colors: &[i64]) -> Vec<LaneResult> {
        self.offload(&Colorfilter { objects, colors })
    }

    fn fill(&self, grids: &GridBatch, colors: &[Color], patches: &PatchBatch<Loc>) -> Vec<LaneResult> {
        self.offload(&Fill { grids, colors, patches })
    }

    fn paint(&self, grids: &GridBatch, objects: &PatchBatch<Cell>) -> Vec<LaneResult> {
        self.offload(&Paint { grids, objects })
    }

    fn transform(&self, grids: &GridBatch, t: Transform) -> Vec<LaneResult> {
        self.offload(&Transformed { grids, t })
    }
}

// ----- the ops ------------------------------------------------------------------------------

/// One batched op with a kernel. Most take one grid per lane ([`Offload::grids`]); their
/// lane count and which lanes the kernel takes follow from it.
trait Offload: Sync {
    /// The kernel.
    fn entry(&self) -> Entry;
    /// The grid of each lane, for the ops that take one.
    fn grids(&self) -> Option<&GridBatch>;
    /// Number of lanes.
    fn lanes(&self) -> usize {
        self.grids().map_or(0, GridBatch::len)
    }
    /// Whether lane `k` goes to the device (else it is odd and goes to the CPU): by default,
    /// a grid the kernels can hold ([`kernel_grid`]).
    fn takes(&self, k: usize) -> bool {
        self.grids().is_some_and(|g| kernel_grid(g, k))
    }
    /// Stages the given lanes (all taken) for one launch.
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed;
    /// The results of the given lanes from the output bytes.
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput>;
    /// The given lanes on the CPU backend.
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult>;
}

/// The given lanes' grids as a batch of their own.
fn sub_batch(grids: &GridBatch, lanes: &[usize]) -> GridBatch {
    let mut sub = GridBatch::with_capacity(lanes.len(), 0);
    for &k in lanes {
        let m = grids.metas[k];
        sub.metas.push(GridMeta {
            offset: sub.cells.len() as u32,
            ..m
        });
        sub.cells.extend_from_slice(grids.view(k).cells);
    }
    sub
}

/// The given lanes' patches as a batch of their own.
fn sub_patches<T: Copy>(patches: &PatchBatch<T>, lanes: &[usize]) -> PatchBatch<T> {
    let mut sub = PatchBatch::default();
    for &k in lanes {
        sub.push(patches.patch(k).iter().copied());
    }
    sub
}

/// The per-lane patch starts (one more than lanes), rebased to the packed items.
fn patch_starts<T>(patches: &PatchBatch<T>, lanes: &[usize]) -> Vec<u32> {
    let mut starts = Vec::with_capacity(lanes.len() + 1);
    let mut at = 0u32;
    starts.push(0);
    for &k in lanes {
        at += patches.patch(k).len() as u32;
        starts.push(at);
    }
    starts
}

fn pick<T: Copy>(items: &[T], lanes: &[usize]) -> Vec<T> {
    lanes.iter().map(|&k| items[k]).collect()
}

/// The output grids of ops that keep each grid's shape (`fill`, `paint`), from the packed cells.
fn same_shape_grids(grids: &GridBatch, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
    par_unpack(grids, lanes, |v, range| Ok(grid_out(v.h, v.w, &out[range])))
}

struct Objects<'a> {
    grids: &'a GridBatch,
    mode: u8,
}

impl Offload for Objects<'_> {
    fn entry(&self) -> Entry {
        Entry::Objects
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let labels = staging.reserve(4 * g.total);
        g.packed(
            &[KernelArg::Ptr(labels), KernelArg::U32(self.mode.into())],
            labels..labels + 4 * g.total,
        )
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        thread_local! {
            static LABELS: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let univalued = self.mode & 4 != 0;
        par_unpack(self.grids, lanes, |v, range| {
            let objects = LABELS.with_borrow_mut(|labels| {
                labels.clear();
                labels.extend(u32s(&out[4 * range.start..4 * range.end]));
                objects_from_labels(v, labels, univalued)
            });
            objects
                .map(Ok)
                .ok_or_else(|| BadOutput("a label that is not a component's first cell".into()))
        })
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        cpu.objects(&sub_batch(self.grids, lanes), self.mode)
    }
}

/// `ofcolor` (a flag per cell) or `colorcount` (a count per grid).
struct ColorQuery<'a> {
    grids: &'a GridBatch,
    colors: &'a [i64],
    count: bool,
}

impl Offload for ColorQuery<'_> {
    fn entry(&self) -> Entry {
        if self.count {
            Entry::Colorcount
        } else {
            Entry::Ofcolor
        }
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let colors = staging.put(lanes.iter().map(|&k| self.colors[k]));
        let bytes = if self.count { 4 * lanes.len() } else { g.total };
        let out = staging.reserve(bytes);
        g.packed(&[KernelArg::Ptr(colors), KernelArg::Ptr(out)], out..out + bytes)
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        if self.count {
            return Ok(u32s(out).map(|n| Ok(Value::Int(n.into()))).collect());
        }
        par_unpack(self.grids, lanes, |v, range| {
            let rows = out[range].chunks_exact(v.w);
            let locs = rows
                .enumerate()
                .flat_map(|(i, row)| {
                    let at = move |(j, _)| Loc {
                        i: i as i32,
                        j: j as i32,
                    };
                    row.iter().enumerate().filter(|&(_, &flag)| flag != 0).map(at)
                })
                .collect();
            Ok(Ok(Value::indices_sorted(locs)))
        })
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        let (grids, colors) = (sub_batch(self.grids, lanes), pick(self.colors, lanes));
        if self.count {
            cpu.colorcount(&grids, &colors)
        } else {
            cpu.ofcolor(&grids, &colors)
        }
    }
}

struct Palette<'a> {
    grids: &'a GridBatch,
    as_tuple: bool,
}

impl Offload for Palette<'_> {
    fn entry(&self) -> Entry {
        Entry::Palette
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let masks = staging.reserve(32 * lanes.len());
        Packed {
            blocks: g.blocks,
            args: vec![KernelArg::Ptr(g.metas), KernelArg::Ptr(g.cells), KernelArg::Ptr(masks)],
            output: masks..masks + 32 * lanes.len(),
        }
    }
    fn unpack(&self, _lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        let f = if self.as_tuple {
            prims::p_g_of
        } else {
            prims::palette_of
        };
        let words: Vec<u32> = u32s(out).collect();
        let results = words.par_chunks_exact(8).with_min_len(UNPACK_CHUNK).map(|mask| {
            // Each colour present once, ascending: the palette of these is the grid's.
            let mut colors: Vec<Color> = Vec::new();
            for (k, &word) in mask.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let s = 32 * k + bits.trailing_zeros() as usize;
                    colors.push(Color::from((s as u8 ^ 0x80) as i8));
                    bits &= bits - 1;
                }
            }
            Ok(f(&colors))
        });
        Ok(results.collect())
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        cpu.palette(&sub_batch(self.grids, lanes), self.as_tuple)
    }
}

struct Colorfilter<'a> {
    objects: &'a [&'a Value],
    colors: &'a [i64],
}

impl Colorfilter<'_> {
    /// The objects of lane `k`, when the kernel takes it: a set of non-empty objects.
    fn members(&self, k: usize) -> Option<&Arc<Vec<Value>>> {
        match self.objects[k] {
            Value::Set(items) if items.iter().all(|o| matches!(o, Value::Object(c) if !c.is_empty())) => Some(items),
            _ => None,
        }
    }

    fn all_members<'s>(&'s self, lanes: &'s [usize]) -> impl Iterator<Item = &'s Value> + 's {
        lanes
            .iter()
            .flat_map(|&k| self.members(k).map_or(&[][..], |m| m.as_slice()))
    }
}

impl Offload for Colorfilter<'_> {
    fn entry(&self) -> Entry {
        Entry::Colorfilter
    }
    /// Its lanes are sets of objects.
    fn grids(&self) -> Option<&GridBatch> {
        None
    }
    fn lanes(&self) -> usize {
        self.objects.len()
    }
    fn takes(&self, k: usize) -> bool {
        self.members(k).is_some()
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let mut at = 0u32;
        let starts = staging.put([0].into_iter().chain(lanes.iter().map(|&k| {
            at += self.members(k).map_or(0, |m| m.len() as u32);
            at
        })));
        let first_colors = staging.put(self.all_members(lanes).map(|o| match o {
            Value::Object(cells) => cells[0].color,
            _ => unreachable!("a taken lane holds non-empty objects only"),
        }));
        let values = staging.put(lanes.iter().map(|&k| self.colors[k]));
        let keep = staging.reserve(at as usize);
        Packed {
            blocks: lanes.len() as u32,
            args: vec![
                KernelArg::Ptr(starts),
                KernelArg::Ptr(first_colors),
                KernelArg::Ptr(values),
                KernelArg::Ptr(keep),
            ],
            output: keep..keep + at as usize,
        }
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        let mut flags = out.iter();
        let results = lanes.iter().map(|&k| {
            let members = self.members(k).map_or(&[][..], |m| m.as_slice());
            let kept = members
                .iter()
                .zip(flags.by_ref())
                .filter(|&(_, &keep)| keep != 0)
                .map(|(o, _)| o.clone())
                .collect();
            Ok(Value::set_sorted(kept))
        });
        Ok(results.collect())
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        let objects: Vec<&Value> = lanes.iter().map(|&k| self.objects[k]).collect();
        cpu.colorfilter(&objects, &pick(self.colors, lanes))
    }
}

struct Fill<'a> {
    grids: &'a GridBatch,
    colors: &'a [Color],
    patches: &'a PatchBatch<Loc>,
}

impl Offload for Fill<'_> {
    fn entry(&self) -> Entry {
        Entry::Fill
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    fn takes(&self, k: usize) -> bool {
        kernel_grid(self.grids, k) && kernel_color(self.colors[k])
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let colors = staging.put(lanes.iter().map(|&k| self.colors[k] as i8));
        let starts = staging.put(patch_starts(self.patches, lanes));
        let locs = staging.put_parts(
            lanes,
            |k| 2 * self.patches.patch(k).len(),
            |k| self.patches.patch(k).iter().flat_map(|l| [l.i, l.j]),
        );
        let out = staging.reserve(g.total);
        g.packed(
            &[
                KernelArg::Ptr(colors),
                KernelArg::Ptr(starts),
                KernelArg::Ptr(locs),
                KernelArg::Ptr(out),
            ],
            out..out + g.total,
        )
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        same_shape_grids(self.grids, lanes, out)
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        let grids = sub_batch(self.grids, lanes);
        cpu.fill(&grids, &pick(self.colors, lanes), &sub_patches(self.patches, lanes))
    }
}

struct Paint<'a> {
    grids: &'a GridBatch,
    objects: &'a PatchBatch<Cell>,
}

impl Offload for Paint<'_> {
    fn entry(&self) -> Entry {
        Entry::Paint
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    /// A colour beyond `i8` is the CPU's to paint.
    fn takes(&self, k: usize) -> bool {
        kernel_grid(self.grids, k) && self.objects.patch(k).iter().all(|c| kernel_color(c.color))
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let starts = staging.put(patch_starts(self.objects, lanes));
        let items = staging.put_parts(
            lanes,
            |k| 3 * self.objects.patch(k).len(),
            |k| self.objects.patch(k).iter().flat_map(|c| [c.color, c.i, c.j]),
        );
        let winner = staging.reserve(4 * g.total);
        let out = staging.reserve(g.total);
        g.packed(
            &[
                KernelArg::Ptr(starts),
                KernelArg::Ptr(items),
                KernelArg::Ptr(winner),
                KernelArg::Ptr(out),
            ],
            out..out + g.total,
        )
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        same_shape_grids(self.grids, lanes, out)
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        cpu.paint(&sub_batch(self.grids, lanes), &sub_patches(self.objects, lanes))
    }
}

struct Transformed<'a> {
    grids: &'a GridBatch,
    t: Transform,
}

impl Transformed<'_> {
    /// Whether the output is the input's transpose in shape.
    fn transposes(&self) -> bool {
        matches!(
            self.t,
            Transform::Rot90 | Transform::Rot270 | Transform::Dmirror | Transform::Cmirror
        )
    }
}

impl Offload for Transformed<'_> {
    fn entry(&self) -> Entry {
        Entry::Transform
    }
    fn grids(&self) -> Option<&GridBatch> {
        Some(self.grids)
    }
    fn pack(&self, lanes: &[usize], staging: &mut Staging) -> Packed {
        let g = stage_grids(self.grids, lanes, staging);
        let out = staging.reserve(g.total);
        let t = Transform::ALL.iter().position(|&t| t == self.t).expect("a transform") as u32;
        g.packed(&[KernelArg::Ptr(out), KernelArg::U32(t)], out..out + g.total)
    }
    fn unpack(&self, lanes: &[usize], out: &[u8]) -> Result<Vec<LaneResult>, BadOutput> {
        par_unpack(self.grids, lanes, |v, range| {
            let (h, w) = if self.transposes() { (v.w, v.h) } else { (v.h, v.w) };
            Ok(grid_out(h, w, &out[range]))
        })
    }
    fn cpu(&self, cpu: &CpuBackend, lanes: &[usize]) -> Vec<LaneResult> {
        cpu.transform(&sub_batch(self.grids, lanes), self.t)
    }
}
