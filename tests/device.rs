//! The device backend through the emulated device: every kernel against the scalar primitives
//! (through the CPU backend, whose lanes call them) on random grids and on every ARC training
//! grid, with several thread counts and thread orders; sharding over several devices; the
//! fallback to the CPU on device failures; a planted kernel fault being visible; jobs from fresh
//! threads alternating between devices (on the emulator, and on the GPUs where there are any);
//! the replaying device of `bench-gpu --host-only`; launches whose arguments do not fit the
//! kernel; and batt on the emulated backend giving exactly the CPU backend's results.

mod shared;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arcbatch::batch::chain::ChainError;
use arcbatch::batch::op::{Locs, FILL, OBJECTS, PAINT, TRANSFORM};
use arcbatch::batch::{Backend, ChainStep, CpuBackend, GridChain, Lane, LaneResult, Lanes, OPS};
use arcbatch::batt::{Config, Match, Plan};
use arcbatch::device::auto::Thresholds;
use arcbatch::device::replay::Transfers;
use arcbatch::device::workload::{bench_chain, Workload};
use arcbatch::device::{
    Device, DeviceBackend, DeviceError, EmuDevice, Entry, Job, KernelArg, Launch, ReplayDevice, ThreadOrder,
};
use arcbatch::dsl::labelled::Labelled;
use arcbatch::dsl::prims::objects_of;
use arcbatch::dsl::{call, Cell, Color, Grid, Loc, PrimId, Value};
use arcbatch::program::{parse_file, Program};
use arcbatch::tasks::{self, Task};
use proptest::prelude::*;

/// Thread counts per block the emulated kernels run with.
const THREADS: [u32; 4] = [1, 7, 32, 256];

fn orders(seed: u64) -> [ThreadOrder; 3] {
    [ThreadOrder::Forward, ThreadOrder::Reverse, ThreadOrder::Shuffled(seed)]
}

fn emu(threads: u32, order: ThreadOrder) -> DeviceBackend<EmuDevice> {
    let device = EmuDevice::new(0).with_threads(threads).with_order(order);
    DeviceBackend::new("emu", vec![device], CpuBackend::default())
}

/// The arguments of every batched op over some grids, one lane per grid; each op reads the
/// parts it takes.
struct Inputs {
    grids: Vec<Grid>,
    /// Colours for `ofcolor`, `colorcount`, `fill`, and the value of `colorfilter`.
    colors: Vec<i64>,
    locs: Vec<Vec<Loc>>,
    cells: Vec<Vec<Cell>>,
    /// Objects (of each grid, in some mode) for `colorfilter`.
    objects: Vec<Value>,
}

/// A small deterministic generator for the arguments of grids that come without any.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> i64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n) as i64
    }
}

impl Inputs {
    /// Inputs over the grids, with arguments drawn from `seed`: colours mostly in the grids'
    /// range, sometimes any `i8`, sometimes far outside it; patches and objects partly off the
    /// grid.
    fn of(grids: &[Grid], seed: u64) -> Inputs {
        let mut r = Lcg(seed);
        let mut inputs = Inputs {
            grids: grids.to_vec(),
            colors: Vec::new(),
            locs: Vec::new(),
            cells: Vec::new(),
            objects: Vec::new(),
        };
        for g in grids {
            inputs.colors.push(match r.below(12) {
                0 => 300,
                1 => i64::MIN,
                2 | 3 => r.below(256) - 128,
                _ => r.below(12) - 2,
            });
            let (h, w) = (g.h as i64 + 3, g.w as i64 + 3);
            let n = r.below(3 * (g.cells.len() as u64 + 1));
            let mut locs = Vec::new();
            let mut cells = Vec::new();
            // Now and then a coordinate far off the grid, where a kernel's byte for it could wrap.
            const FAR: [i32; 6] = [254, 255, 256, 511, -256, i32::MAX];
            let coordinate = |r: &mut Lcg, side: i64| match r.below(24) {
                0 => FAR[r.below(FAR.len() as u64) as usize],
                _ => r.below(side as u64) as i32 - 1,
            };
            for _ in 0..n {
                let (i, j) = (coordinate(&mut r, h), coordinate(&mut r, w));
                locs.push(Loc { i, j });
                cells.push(Cell {
                    color: r.below(20) as i32 - 5,
                    i,
                    j,
                });
            }
            locs.sort_unstable();
            locs.dedup();
            cells.sort_unstable();
            cells.dedup();
            inputs.locs.push(locs);
            inputs.cells.push(cells);
            let mode = r.below(8);
            let objects = if g.cells.is_empty() {
                Value::empty_set()
            } else {
                objects_of(g.view(), mode & 4 != 0, mode & 2 != 0, mode & 1 != 0).unwrap()
            };
            inputs.objects.push(objects);
        }
        inputs
    }

    /// Every lane with every part, packed.
    fn lanes(&self) -> Lanes {
        let mut lanes = Lanes::default();
        for k in 0..self.grids.len() {
            let pushed = lanes.push(Lane {
                grid: Some(&self.grids[k]),
                value: Some(&self.objects[k]),
                int: Some(self.colors[k]),
                locs: Some(Locs::Indices(&self.locs[k])),
                cells: Some(&self.cells[k]),
            });
            assert!(pushed, "grids fit");
        }
        lanes
    }
}

/// Where a backend's results of an op first differ from the CPU's.
#[derive(Debug, PartialEq)]
enum Divergence {
    Count {
        op: String,
        results: usize,
        lanes: usize,
    },
    Lane {
        op: String,
        lane: usize,
        device: Box<LaneResult>,
        cpu: Box<LaneResult>,
    },
}

/// The first lane where two backends differ.
fn differ(op: &str, got: &[LaneResult], want: &[LaneResult]) -> Result<(), Divergence> {
    if got.len() != want.len() {
        return Err(Divergence::Count {
            op: op.to_string(),
            results: got.len(),
            lanes: want.len(),
        });
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        Some(k) => Err(Divergence::Lane {
            op: op.to_string(),
            lane: k,
            device: Box::new(got[k].clone()),
            cpu: Box::new(want[k].clone()),
        }),
        None => Ok(()),
    }
}

/// Every batched op (`objects` in the given modes, the others with every constant of their
/// primitives) on `b` against the CPU.
fn same_as_cpu(b: &dyn Backend, inputs: &Inputs, modes: &[u8]) -> Result<(), Divergence> {
    let cpu = CpuBackend::default();
    let lanes = inputs.lanes();
    for op in OPS {
        let params: Vec<u32> = if std::ptr::eq(op, &OBJECTS) {
            modes.iter().map(|&m| m.into()).collect()
        } else {
            (0..op.prims.len() as u32).collect()
        };
        for param in params {
            let name = format!("{} {}", op.name, param);
            differ(&name, &b.run_op(op, param, &lanes), &cpu.run_op(op, param, &lanes))?;
        }
    }
    Ok(())
}

const ALL_MODES: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

/// The launches of one [`same_as_cpu`] with `modes` modes of `objects`, when every op takes
/// some lanes: one per mode, and one per primitive of every other op with a kernel.
fn launches(modes: usize) -> usize {
    let others = OPS
        .iter()
        .filter(|op| op.kernel.is_some() && !std::ptr::eq(**op, &OBJECTS));
    modes + others.map(|op| op.prims.len()).sum::<usize>()
}

fn grid(max_side: usize, colors: impl Strategy<Value = Color> + Clone) -> impl Strategy<Value = Grid> {
    (0..=max_side, 0..=max_side).prop_flat_map(move |(h, w)| {
        proptest::collection::vec(colors.clone(), h * w).prop_map(move |cells| Grid::new(h, w, cells))
    })
}

/// Grids up to 30x30 (empty, one row or column included), in few colours (negative ones
/// too), in any `i8` colour, or in colours some of which no kernel cell holds (those lanes
/// must come back from the CPU).
fn arc_like() -> impl Strategy<Value = Grid> {
    prop_oneof![
        4 => grid(30, -2..5 as Color),
        2 => grid(4, -1..3 as Color),
        1 => (1usize..=30).prop_flat_map(|w| proptest::collection::vec(0..3 as Color, w).prop_map(move |c| Grid::new(1, w, c))),
        1 => grid(12, any::<i8>().prop_map(Color::from)),
        1 => grid(12, prop_oneof![0..3 as Color, 126..130 as Color, -130..-126 as Color]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn every_kernel_equals_the_scalar_primitive_on_random_grids(
        grids in proptest::collection::vec(arc_like(), 1..10),
        threads in 0usize..THREADS.len(),
        order in 0usize..3,
        seed in any::<u64>(),
    ) {
        let b = emu(THREADS[threads], orders(seed)[order]);
        let lanes = Inputs::of(&grids, seed);
        prop_assert_eq!(same_as_cpu(&b, &lanes, &ALL_MODES), Ok(()));
        prop_assert_eq!(b.fallbacks(), 0);
    }
}

#[test]
fn every_kernel_equals_the_scalar_primitive_on_large_grids() {
    let mut r = Lcg(5);
    let mut grids: Vec<Grid> = [(60, 40), (40, 60), (255, 3), (1, 255), (100, 100)]
        .iter()
        .map(|&(h, w)| Grid::new(h, w, (0..h * w).map(|_| r.below(3) as Color).collect()))
        .collect();
    // A snake, the slowest case for label propagation.
    let mut snake = Grid::filled(61, 61, 0);
    for i in 0..61 {
        if i % 2 == 0 {
            (0..61).for_each(|j| snake.set(i, j, 1));
        } else {
            snake.set(i, if i % 4 == 1 { 60 } else { 0 }, 1);
        }
    }
    grids.push(snake);
    grids.push(Grid::filled(255, 255, 7));
    for (threads, order) in [(256, ThreadOrder::Shuffled(3)), (32, ThreadOrder::Reverse)] {
        let b = emu(threads, order);
        assert_eq!(same_as_cpu(&b, &Inputs::of(&grids, threads as u64), &ALL_MODES), Ok(()));
        assert_eq!(b.fallbacks(), 0);
    }
}

fn training() -> Option<Vec<Task>> {
    let set = tasks::load(&shared::shared("arc/training")?).unwrap();
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    Some(set.tasks)
}

#[test]
fn every_kernel_equals_the_scalar_primitive_on_the_training_grids() {
    let Some(tasks) = training() else { return };
    let grids = arcbatch::device::workload::task_grids(&tasks);
    assert!(grids.len() > 3000);
    let lanes = Inputs::of(&grids, 11);
    // Every thread count in every order; each `objects` mode under three of these launches.
    let mut config = 0;
    for threads in THREADS {
        for order in orders(threads as u64) {
            let modes = [(config * 2 % 8) as u8, (config * 2 % 8 + 1) as u8];
            let b = emu(threads, order);
            assert_eq!(same_as_cpu(&b, &lanes, &modes), Ok(()), "{threads} threads, {order:?}");
            assert_eq!(b.fallbacks(), 0);
            config += 1;
        }
    }
}

/// Checks what a labelled set of objects (`got`, as the device path returns them) answers from
/// its metadata against the same primitives on the CPU's listed set (`want`): `size`,
/// `sizefilter` for every size there and some that are not, `colorfilter` for every colour and
/// a few other values, `argmax`/`argmin` by `size`; all without building `got`'s objects. Then
/// the objects themselves, and the same answers once they are built.
fn answers_from_metadata(got: &Value, want: &Value) -> Result<(), String> {
    let labelled = got.as_labelled().ok_or("not labelled")?;
    let call = |name: &str, args: &[Value]| call(&Value::prim(PrimId::of(name).expect("registered")), args);
    let mut sizes: Vec<i64> = labelled.objects().iter().map(|o| o.size.into()).collect();
    sizes.extend([0, 1, 2, 901]);
    let mut questions: Vec<(&str, Value)> = sizes.into_iter().map(|n| ("sizefilter", Value::Int(n))).collect();
    questions.extend((-2..11).map(|c| ("colorfilter", Value::Int(c))));
    questions.extend([("colorfilter", Value::Bool(true)), ("colorfilter", Value::Pair(1, 1))]);
    // Of no objects, `argmax` raises as the CPU's does (building nothing costs nothing).
    if !labelled.objects().is_empty() {
        let size = Value::prim(PrimId::of("size").expect("registered"));
        questions.extend([("argmax", size.clone()), ("argmin", size)]);
    }
    let ask = || {
        let mut answers = vec![(
            "size".to_string(),
            call("size", std::slice::from_ref(got)),
            call("size", std::slice::from_ref(want)),
        )];
        for (name, arg) in &questions {
            let question = format!("{name}(_, {arg})");
            answers.push((
                question,
                call(name, &[got.clone(), arg.clone()]),
                call(name, &[want.clone(), arg.clone()]),
            ));
        }
        answers
    };
    let compare = |answers: Vec<(String, _, _)>| {
        for (question, a, b) in answers {
            if a != b {
                return Err(format!("{question}: {a:?} from the labels, {b:?} on the CPU"));
            }
        }
        Ok(())
    };
    let answers = ask();
    if labelled.is_built() {
        return Err("the metadata answers built the objects".into());
    }
    compare(answers)?;
    if got != want || !labelled.is_built() {
        return Err(format!("the objects: {got} from the labels, {want} on the CPU"));
    }
    // Once built, the filters keep the members built.
    compare(ask())?;
    Ok(())
}

#[test]
fn labelled_objects_answer_as_the_cpus_on_the_training_grids() {
    let Some(tasks) = training() else { return };
    let grids = arcbatch::device::workload::task_grids(&tasks);
    let lanes = Inputs::of(&grids, 12).lanes();
    let (b, cpu) = (emu(32, ThreadOrder::Forward), CpuBackend::default());
    for mode in ALL_MODES {
        let got = b.run_op(&OBJECTS, mode.into(), &lanes);
        let want = cpu.run_op(&OBJECTS, mode.into(), &lanes);
        let mut labelled = 0;
        for (k, (got, want)) in got.iter().zip(&want).enumerate() {
            match (got, want) {
                (Ok(g), Ok(w)) if g.as_labelled().is_some() => {
                    labelled += 1;
                    assert_eq!(answers_from_metadata(g, w), Ok(()), "mode {mode}, lane {k}");
                }
                _ => assert_eq!(got, want, "mode {mode}, lane {k}"),
            }
        }
        // Every training grid but the empty ones goes to the device.
        assert!(labelled > 3000, "mode {mode}: {labelled} labelled lanes");
    }
    assert_eq!(b.fallbacks(), 0);
}

// ----- chains of grid steps ------------------------------------------------------------------

/// A chain of the grid steps named by `picks` (each a transform's index, or 7 for `fill`, 8
/// for `paint`).
fn chain_of(picks: &[u32]) -> GridChain {
    let steps = picks.iter().map(|&p| match p {
        0..=6 => ChainStep {
            op: &TRANSFORM,
            param: p,
        },
        7 => ChainStep { op: &FILL, param: 0 },
        _ => ChainStep { op: &PAINT, param: 0 },
    });
    GridChain::new(steps.collect()).expect("grid steps")
}

/// Inputs for chains: a lane's colour is one a grid holds, as the dispatcher puts in a lane
/// (`fill`'s lanes), some of them beyond what a kernel's cell holds.
fn chain_inputs(grids: &[Grid], seed: u64) -> Inputs {
    let mut inputs = Inputs::of(grids, seed);
    for c in &mut inputs.colors {
        if Color::try_from(*c).is_err() {
            *c = 300;
        }
    }
    inputs
}

/// The chain as the scalar primitives compute it, lane by lane: the reference for every
/// backend's chain.
fn chain_by_primitives(picks: &[u32], inputs: &Inputs) -> Vec<LaneResult> {
    let prim = |name: &str| Value::prim(PrimId::of(name).expect("registered"));
    (0..inputs.grids.len())
        .map(|k| {
            let mut value = Value::grid(inputs.grids[k].clone());
            for &p in picks {
                let args = match p {
                    0..=6 => vec![value],
                    7 => vec![
                        value,
                        Value::Int(inputs.colors[k]),
                        Value::indices(inputs.locs[k].clone()),
                    ],
                    _ => vec![value, Value::object(inputs.cells[k].clone())],
                };
                let name = match p {
                    0..=6 => TRANSFORM.prims[p as usize],
                    7 => "fill",
                    _ => "paint",
                };
                value = call(&prim(name), &args)?;
            }
            Ok(value)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A chain run as one job on the emulated device, with any thread count and order, gives
    /// what the CPU backend gives step by step, which is what the scalar primitives give.
    #[test]
    fn a_chain_on_the_device_is_the_scalar_primitives_one_after_another(
        grids in proptest::collection::vec(arc_like(), 1..8),
        picks in proptest::collection::vec(0u32..9, 1..9),
        threads in 0usize..THREADS.len(),
        order in 0usize..3,
        seed in any::<u64>(),
    ) {
        let inputs = chain_inputs(&grids, seed);
        let lanes = inputs.lanes();
        let chain = chain_of(&picks);
        let want = chain_by_primitives(&picks, &inputs);
        let cpu = CpuBackend::default().run_chain(&chain, &lanes);
        prop_assert_eq!(differ("cpu chain", &cpu, &want), Ok(()));
        let b = emu(THREADS[threads], orders(seed)[order]);
        prop_assert_eq!(differ("emu chain", &b.run_chain(&chain, &lanes), &want), Ok(()));
        prop_assert_eq!(b.fallbacks(), 0);
    }
}

#[test]
fn a_chain_is_one_job_per_device_and_falls_back_whole() {
    let inputs = chain_inputs(&many_grids(301), 9);
    let lanes = inputs.lanes();
    let picks = [0, 7, 3, 8, 5, 7, 1];
    let want = chain_by_primitives(&picks, &inputs);
    let chain = chain_of(&picks);
    for devices in 1..=3 {
        let b = DeviceBackend::new(
            "emu",
            (0..devices).map(|d| Counting::new(d, None)).collect(),
            CpuBackend::default(),
        );
        assert_eq!(differ("chain", &b.run_chain(&chain, &lanes), &want), Ok(()));
        let jobs: Vec<usize> = b.devices().iter().map(|d| d.jobs.load(Ordering::Relaxed)).collect();
        assert_eq!(jobs, vec![1; devices], "one job per shard, whatever the steps");
        assert_eq!(b.fallbacks(), 0);
    }
    // A device that fails: its shard runs step by step on the CPU, with the same results.
    let failing = vec![
        Counting::new(0, None),
        Counting::new(1, Some(DeviceError::OutOfMemory("test".into()))),
    ];
    let b = DeviceBackend::new("emu", failing, CpuBackend::default());
    assert_eq!(differ("chain", &b.run_chain(&chain, &lanes), &want), Ok(()));
    assert_eq!(b.fallbacks(), 1);
    // A planted fault in any one step's kernel shows in the results.
    for entry in [Entry::Transform, Entry::Fill, Entry::Paint] {
        let device = EmuDevice::new(0).with_fault(Some(entry));
        let b = DeviceBackend::new("emu", vec![device], CpuBackend::default());
        assert!(
            differ("chain", &b.run_chain(&chain, &lanes), &want).is_err(),
            "a fault in {} went unseen",
            entry.name()
        );
    }
}

#[test]
fn a_chain_replays_with_one_upload_and_one_download() {
    let w = Workload::new(&many_grids(200), 200).expect("grids with cells");
    let device = Arc::new(ReplayDevice::new(0));
    let b = DeviceBackend::new("host", vec![Arc::clone(&device)], CpuBackend::default());
    let chain = bench_chain();
    assert!(chain.steps().len() >= 5);
    let recorded = w.run_chain(&b, &chain);
    device.replay();
    device.take_transfers();
    assert_eq!(w.run_chain(&b, &chain), recorded);
    assert_eq!(recorded, w.run_chain(&CpuBackend::default(), &chain));
    assert_eq!(
        device.take_transfers(),
        Transfers {
            uploads: 1,
            downloads: 1
        }
    );
}

#[test]
fn a_chain_takes_grid_steps_only() {
    assert_eq!(GridChain::new(Vec::new()).unwrap_err(), ChainError::Empty);
    let not_a_step = ChainStep { op: &OBJECTS, param: 0 };
    assert_eq!(
        GridChain::new(vec![not_a_step]).unwrap_err(),
        ChainError::NotAGridStep("objects")
    );
}

// ----- sharding and fallback ----------------------------------------------------------------

/// A device that counts its jobs and passes them to an emulated device, or fails them all.
struct Counting {
    inner: EmuDevice,
    fail: Option<DeviceError>,
    jobs: AtomicUsize,
}

impl Counting {
    fn new(index: usize, fail: Option<DeviceError>) -> Counting {
        Counting {
            inner: EmuDevice::new(index),
            fail,
            jobs: AtomicUsize::new(0),
        }
    }
}

impl Device for Counting {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn run(&self, job: &Job<'_>, read: &mut dyn FnMut(&[u8])) -> Result<(), DeviceError> {
        self.jobs.fetch_add(1, Ordering::Relaxed);
        match &self.fail {
            Some(e) => Err(e.clone()),
            None => self.inner.run(job, read),
        }
    }
}

/// Grids of every size up to 12x12, with the odd lanes (no cells) among them.
fn many_grids(n: usize) -> Vec<Grid> {
    let mut r = Lcg(n as u64);
    (0..n)
        .map(|k| {
            let (h, w) = if k % 50 == 7 {
                (0, 0)
            } else {
                (1 + r.below(12) as usize, 1 + r.below(12) as usize)
            };
            Grid::new(h, w, (0..h * w).map(|_| r.below(4) as Color).collect())
        })
        .collect()
}

#[test]
fn sharding_over_one_two_or_three_devices_gives_the_same_lanes_in_order() {
    let lanes = Inputs::of(&many_grids(301), 2);
    for devices in 1..=3 {
        let b = DeviceBackend::new(
            "emu",
            (0..devices).map(|d| Counting::new(d, None)).collect(),
            CpuBackend::default(),
        );
        assert_eq!(same_as_cpu(&b, &lanes, &ALL_MODES), Ok(()), "{devices} devices");
        assert_eq!(b.fallbacks(), 0);
        let launches = launches(ALL_MODES.len());
        for d in b.devices() {
            assert_eq!(
                d.jobs.load(Ordering::Relaxed),
                launches,
                "each device runs one shard of each op"
            );
        }
    }
    // At or below the threshold, one device takes the whole batch.
    let b = DeviceBackend::new(
        "emu",
        (0..3).map(|d| Counting::new(d, None)).collect(),
        CpuBackend::default(),
    )
    .with_shard_threshold(400);
    assert_eq!(same_as_cpu(&b, &lanes, &[3]), Ok(()));
    let jobs: Vec<usize> = b.devices().iter().map(|d| d.jobs.load(Ordering::Relaxed)).collect();
    assert_eq!(jobs, [launches(1), 0, 0]);
}

#[test]
fn a_device_failure_falls_back_to_the_cpu_with_identical_results() {
    let lanes = Inputs::of(&many_grids(200), 3);
    let failures = [
        DeviceError::OutOfMemory("2 GB requested".into()),
        DeviceError::Launch("too many resources requested".into()),
        DeviceError::Compile("sm_60".into()),
    ];
    for error in failures {
        let devices = vec![Counting::new(0, None), Counting::new(1, Some(error))];
        let b = DeviceBackend::new("emu", devices, CpuBackend::default());
        assert_eq!(same_as_cpu(&b, &lanes, &ALL_MODES), Ok(()));
        assert_eq!(b.fallbacks(), b.devices()[1].jobs.load(Ordering::Relaxed));
        assert!(b.fallbacks() > 0);
    }
    // No device at all, and a device refusing a launch of too many threads.
    let none: DeviceBackend<EmuDevice> = DeviceBackend::new("emu", Vec::new(), CpuBackend::default());
    assert_eq!(same_as_cpu(&none, &lanes, &ALL_MODES), Ok(()));
    assert!(none.fallbacks() > 0);
    let refused = emu(2048, ThreadOrder::Forward);
    assert_eq!(same_as_cpu(&refused, &lanes, &ALL_MODES), Ok(()));
    assert!(refused.fallbacks() > 0);
}

/// A device backend runs a batt program in one shard, so that each op launches as large as it
/// can; `auto` (its thresholds applied) and a backend without a device shard as the CPU
/// backend does, which keeps fewer values alive at once.
#[test]
fn auto_and_a_backend_without_devices_shard_as_the_cpu() {
    let cpu = CpuBackend::default();
    assert!(cpu.shards(1782) > 1);
    let gpu = DeviceBackend::new("gpu", vec![EmuDevice::new(0)], cpu.clone());
    assert_eq!(gpu.shards(1782), 1);
    let thresholds = Thresholds {
        min_lanes: [2048; Entry::ALL.len()],
        source: "test".into(),
    };
    let auto = thresholds.apply(DeviceBackend::new("auto", vec![EmuDevice::new(0)], cpu.clone()));
    assert_eq!(auto.shards(1782), cpu.shards(1782));
    let none: DeviceBackend<EmuDevice> = DeviceBackend::new("gpu", Vec::new(), cpu.clone());
    assert_eq!(none.shards(1782), cpu.shards(1782));
}

/// A device whose kernels write labels no component can have.
struct Garbage;

impl Device for Garbage {
    fn name(&self) -> String {
        "garbage".into()
    }

    fn run(&self, job: &Job<'_>, read: &mut dyn FnMut(&[u8])) -> Result<(), DeviceError> {
        read(&vec![0xEE; job.output.len()]);
        Ok(())
    }
}

#[test]
fn labels_that_do_not_decode_fall_back_to_the_cpu() {
    let lanes = Inputs::of(&many_grids(20), 4).lanes();
    let b = DeviceBackend::new("garbage", vec![Garbage], CpuBackend::default());
    let cpu = CpuBackend::default();
    for mode in ALL_MODES {
        assert_eq!(
            differ(
                "objects",
                &b.run_op(&OBJECTS, mode.into(), &lanes),
                &cpu.run_op(&OBJECTS, mode.into(), &lanes)
            ),
            Ok(())
        );
    }
    assert_eq!(b.fallbacks(), 8);
}

#[test]
fn a_planted_kernel_fault_changes_results_or_is_refused() {
    let lanes = Inputs::of(&many_grids(40), 5);
    for entry in Entry::ALL {
        let device = EmuDevice::new(0).with_fault(Some(entry));
        let b = DeviceBackend::new("emu", vec![device], CpuBackend::default());
        let result = same_as_cpu(&b, &lanes, &ALL_MODES);
        if entry == Entry::Objects {
            // Zeroed words label every cell with the first one, which has no size: they do
            // not decode, and the lanes fall back to the CPU.
            assert_eq!(result, Ok(()));
            assert!(b.fallbacks() > 0);
        } else {
            assert!(result.is_err(), "a fault in {} went unseen", entry.name());
            assert_eq!(b.fallbacks(), 0);
        }
    }
}

/// Every op from fresh threads (not the pool's), each thread's jobs alternating between the
/// devices: a device may not depend on the thread that calls it (a CUDA device binds its
/// context on each job), and the results are the CPU's.
fn from_fresh_threads<D: Device + Clone>(devices: &[D]) {
    let w = Workload::new(&many_grids(150), 150).expect("grids with cells");
    let cpu = CpuBackend::default();
    let expected: Vec<Vec<LaneResult>> = Entry::ALL.iter().map(|&e| w.run(&cpu, e)).collect();
    std::thread::scope(|scope| {
        for t in 0..4 {
            let (w, expected) = (&w, &expected);
            scope.spawn(move || {
                for (k, &entry) in Entry::ALL.iter().enumerate() {
                    let device = devices[(t + k) % devices.len()].clone();
                    let b = DeviceBackend::new("alternating", vec![device], CpuBackend::default());
                    assert_eq!(w.run(&b, entry), expected[k], "thread {t}, {}", entry.name());
                    assert_eq!(b.fallbacks(), 0, "thread {t}, {}", entry.name());
                }
            });
        }
    });
}

#[test]
fn jobs_from_fresh_threads_alternating_between_devices_give_the_cpus_results() {
    let emulated = [Arc::new(EmuDevice::new(0)), Arc::new(EmuDevice::new(1))];
    from_fresh_threads(&emulated);
    match arcbatch::device::cuda::gpus() {
        Ok(gpus) if !gpus.is_empty() => from_fresh_threads(gpus),
        _ => eprintln!("note: no GPU here: jobs from fresh threads ran on emulated devices only"),
    }
}

#[test]
fn a_replaying_device_gives_the_recorded_results_and_rejects_other_jobs() {
    let w = Workload::new(&many_grids(90), 90).expect("grids with cells");
    let cpu = CpuBackend::default();
    let devices = [Arc::new(ReplayDevice::new(0)), Arc::new(ReplayDevice::new(1))];
    let b = DeviceBackend::new("replay", devices.to_vec(), CpuBackend::default()).with_shard_threshold(20);
    for entry in Entry::ALL {
        devices.iter().for_each(|d| d.record());
        let recorded = w.run(&b, entry);
        devices.iter().for_each(|d| d.replay());
        assert_eq!(w.run(&b, entry), recorded, "{}", entry.name());
        assert_eq!(w.run(&b, entry), w.run(&cpu, entry), "{}", entry.name());
    }
    assert_eq!(b.fallbacks(), 0);
    // Replaying for other jobs (fewer lanes, so shorter outputs) is refused: the CPU runs them.
    let small = Workload::new(&many_grids(30), 30).expect("grids with cells");
    assert_eq!(small.run(&b, Entry::Transform), small.run(&cpu, Entry::Transform));
    assert!(b.fallbacks() > 0);
}

#[test]
fn a_launch_whose_arguments_do_not_fit_the_kernel_is_refused() {
    let input = [0u8; 64];
    let job = |args: Vec<KernelArg>| Job {
        launches: vec![Launch {
            entry: Entry::Transform,
            blocks: 0,
            threads: 32,
            shared_bytes: 0,
            args,
        }],
        input: &input,
        device_bytes: 64,
        output: 0..0,
    };
    let (ptr, scalar) = (KernelArg::Ptr(0), KernelArg::U32(0));
    let device = EmuDevice::new(0);
    assert_eq!(
        device.run(&job(vec![ptr, ptr, ptr, scalar, scalar]), &mut |_| {}),
        Ok(())
    );
    for wrong in [
        vec![ptr, ptr, ptr, ptr, scalar],
        vec![ptr, ptr, scalar, scalar, scalar],
        vec![ptr, ptr, ptr, scalar],
    ] {
        let refused = device.run(&job(wrong.clone()), &mut |_| {});
        assert!(matches!(refused, Err(DeviceError::Launch(_))), "{wrong:?}: {refused:?}");
    }
}

/// Words as the objects kernel writes them, from the objects themselves: 0x8000 for a
/// background cell, 0x8000 plus its object's size for an object's first cell, that first
/// cell's row-major index for its other cells; and the order, the objects' first cells in the
/// order of the objects.
fn words_of(g: &Grid, objects: &Value) -> (Vec<u16>, Vec<u16>) {
    let mut words = vec![0x8000; g.h * g.w];
    // Cells past the objects' are not read: garbage, as the kernel leaves them.
    let mut order = vec![0xA5A5; g.h * g.w];
    for (k, object) in objects.members().expect("a set").iter().enumerate() {
        let Value::Object(cells) = object else {
            panic!("not an object")
        };
        let at = |c: &Cell| c.i as usize * g.w + c.j as usize;
        let root = cells.iter().map(at).min().expect("a non-empty object");
        cells.iter().for_each(|c| words[at(c)] = root as u16);
        words[root] = 0x8000 + cells.len() as u16;
        order[k] = root as u16;
    }
    (words, order)
}

proptest! {
    #[test]
    fn objects_from_kernel_words_are_the_primitives(g in arc_like(), mode in 0u8..8, pick in any::<usize>()) {
        prop_assume!(!g.cells.is_empty(), "the kernels take grids with cells only");
        prop_assume!(g.cells.iter().all(|&c| i8::try_from(c).is_ok()), "and colours that fit an i8");
        let (univalued, diagonal, without_bg) = (mode & 4 != 0, mode & 2 != 0, mode & 1 != 0);
        let objects = objects_of(g.view(), univalued, diagonal, without_bg).expect("a grid with cells");
        let (words, order) = words_of(&g, &objects);
        let bytes = |words: &[u16]| -> Vec<u8> { words.iter().flat_map(|w| w.to_le_bytes()).collect() };
        let decode_with = |words: &[u16], order: &[u16]| {
            let colors: Vec<u8> = g.cells.iter().map(|&c| c as u8).collect();
            Labelled::from_words(&[g.view()], &colors, &bytes(words), &bytes(order), univalued).next().flatten()
        };
        let decode = |words: &[u16]| decode_with(words, &order);
        let labelled = decode(&words).map(Labelled::into_value);
        prop_assert_eq!(answers_from_metadata(labelled.as_ref().expect("words that decode"), &objects), Ok(()));
        // Words no kernel run can write are refused: a label not before its cell or naming a
        // cell that is no root, a size counted to the wrong root.
        let is_root = |w: u16| w > 0x8000;
        let labels: Vec<usize> = (0..words.len()).filter(|&c| words[c] < 0x8000).collect();
        let roots: Vec<usize> = (0..words.len()).filter(|&c| is_root(words[c])).collect();
        if let Some(&c) = labels.get(pick % labels.len().max(1)) {
            let mut wrong = words.clone();
            wrong[c] = c as u16;
            prop_assert!(decode(&wrong).is_none(), "a cell labelled with itself, without a size");
            if let Some(&other) = labels.iter().find(|&&o| o < c && words[o] != words[c]) {
                let mut wrong = words.clone();
                wrong[c] = other as u16;
                prop_assert!(decode(&wrong).is_none(), "a label naming a cell that is no root");
            }
            let mut wrong = words.clone();
            wrong[c] = 0x8000;
            prop_assert!(decode(&wrong).is_none(), "a labelled cell turned background");
        }
        let background: Vec<usize> = (0..words.len()).filter(|&c| words[c] == 0x8000).collect();
        if let (Some(&c), Some(&root)) = (background.get(pick % background.len().max(1)), roots.first()) {
            if root < c {
                let mut wrong = words.clone();
                wrong[c] = root as u16;
                prop_assert!(decode(&wrong).is_none(), "a background cell labelled");
            }
        }
        if let [a, b, ..] = roots[..] {
            let mut wrong = words.clone();
            wrong[a] += 1;
            wrong[b] -= 1;
            prop_assert!(decode(&wrong).is_none(), "a cell counted to the wrong root");
            let mut wrong = words.clone();
            wrong[b] += 1;
            prop_assert!(decode(&wrong).is_none(), "one size too many");
        }
        // An order no kernel run can write is refused: two objects swapped, one named twice,
        // a cell that is no root named.
        let objects_count = roots.len();
        if objects_count >= 2 {
            let (a, b) = (pick % objects_count, (pick / objects_count) % objects_count);
            if a != b {
                let mut swapped = order.clone();
                swapped.swap(a, b);
                prop_assert!(decode_with(&words, &swapped).is_none(), "objects out of order");
                let mut twice = order.clone();
                twice[a] = twice[b];
                prop_assert!(decode_with(&words, &twice).is_none(), "an object named twice");
            }
        }
        if let (Some(&c), true) = (labels.get(pick % labels.len().max(1)), objects_count > 0) {
            let mut wrong = order.clone();
            wrong[pick % objects_count] = c as u16;
            prop_assert!(decode_with(&words, &wrong).is_none(), "a cell that is no root named");
        }
    }
}

// ----- batt ---------------------------------------------------------------------------------

const LIMIT: Duration = Duration::from_secs(10);

fn library() -> Vec<Program> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py");
    parse_file("dsl/solvers.py", &std::fs::read_to_string(path).unwrap()).expect("the library parses")
}

fn batt(backend: &dyn Backend, solvers: &[Program], tasks: &[Task], cross: bool) -> Vec<Match> {
    let config = Config { cross, no_merge: false };
    Plan::new(solvers, &[], tasks, config)
        .unwrap()
        .run(backend, &|| {})
        .matches
}

#[test]
fn batt_on_the_emulated_backend_gives_the_cpu_backends_results() {
    let Some(tasks) = training() else { return };
    let solvers = library();
    let cpu = CpuBackend::new(Some(LIMIT));
    let emu = DeviceBackend::emu(1, cpu.clone()).unwrap();
    let on_cpu = batt(&cpu, &solvers, &tasks, false);
    assert_eq!(batt(&emu, &solvers, &tasks, false), on_cpu);
    assert!(on_cpu.iter().filter(|m| m.solved()).count() > 50);
    // Cross mode on a subset of the tasks, sharded over three emulated devices.
    let subset: Vec<Task> = tasks.iter().step_by(8).cloned().collect();
    let three = DeviceBackend::new("emu", (0..3).map(EmuDevice::new).collect(), cpu.clone());
    assert_eq!(
        batt(&three, &solvers, &subset, true),
        batt(&cpu, &solvers, &subset, true)
    );
    assert_eq!((emu.fallbacks(), three.fallbacks()), (0, 0));
}

#[test]
fn the_cli_reports_the_same_matches_on_emu_as_on_cpu() {
    let Some(training) = shared::shared("arc/training") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("arcbatch-device-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = |backend: &str| -> serde_json::Value {
        let json = dir.join(format!("{backend}.json"));
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_arcbatch"))
            .args(["batt", "--backend", backend, "--solvers"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py"))
            .arg("--tasks")
            .arg(&training)
            .arg("--json")
            .arg(&json)
            .env_remove("ARCBATCH_EMU_FAULT")
            .output()
            .unwrap();
        assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
    };
    let (cpu, emu) = (report("cpu"), report("emu"));
    assert_eq!(cpu["matches"], emu["matches"]);
    assert_eq!(cpu["lanes"], emu["lanes"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_gpu_host_only_times_every_kernel_against_the_cpu_and_writes_json() {
    let json = std::env::temp_dir().join(format!("arcbatch-host-only-{}.json", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .args([
            "bench-gpu",
            "--host-only",
            "2",
            "--sizes",
            "40,300",
            "--repeat",
            "1",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    let kernels = report["kernels"].as_array().expect("kernels");
    // Every kernel, then the chain of grid steps, per size.
    let names: Vec<&str> = Entry::ALL.iter().map(|e| e.name()).chain(["chain"]).collect();
    assert_eq!(kernels.len(), 2 * names.len());
    for (k, row) in kernels.iter().enumerate() {
        assert_eq!(row["name"], names[k % names.len()]);
        let lanes = [40, 300][k / names.len()];
        assert_eq!(row["lanes"], lanes);
        assert_eq!(row["devices"], 2);
        assert_eq!(row["matches_cpu"], true);
        for field in ["cpu_us_per_lane", "host_us_per_lane"] {
            assert!(row[field].as_f64().is_some_and(|t| t > 0.0), "{field} in {row}");
        }
        // One job per device that has a shard: 300 lanes are cut in two, 40 are not.
        let jobs = if lanes > 120 { 2 } else { 1 };
        assert_eq!(
            (row["uploads"].as_u64(), row["downloads"].as_u64()),
            (Some(jobs), Some(jobs)),
            "{row}"
        );
    }
}

#[test]
fn bench_gpu_kernels_times_only_the_kernels_named_and_refuses_an_unknown_one() {
    let json = std::env::temp_dir().join(format!("arcbatch-host-only-kernels-{}.json", std::process::id()));
    let bench = |kernels: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_arcbatch"))
            .args([
                "bench-gpu",
                "--host-only",
                "--sizes",
                "30",
                "--repeat",
                "1",
                "--kernels",
                kernels,
                "--json",
            ])
            .arg(&json)
            .output()
            .unwrap()
    };
    let out = bench("fill, objects");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    let names: Vec<&str> = report["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|row| row["name"].as_str().expect("a name"))
        .collect();
    let mut expected = vec!["objects", "fill"];
    expected.sort_by_key(|name| Entry::of_name(name).map(Entry::index));
    assert_eq!(names, expected);
    let out = bench("chain");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert_eq!(report["kernels"][0]["name"], "chain");
    assert_eq!(report["kernels"].as_array().map(Vec::len), Some(1));
    let out = bench("objects,flood");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"flood\" is not a kernel"), "{stderr}");
}
