//! The emulated device: the kernels of `kernels/`, compiled for the host by `build.rs` through
//! the portability header, run on the CPU. Blocks run one after another; within a block each
//! phase (the code between two barriers) runs for every thread in the chosen [`ThreadOrder`],
//! with the thread count of the launch or one the device forces, so tests can shake out
//! kernels that depend on an order or a count. Device memory starts filled with `0xA5` bytes,
//! as uninitialised memory would, so a kernel that reads what it never wrote is caught.
//!
//! For tests of what consumes kernel results, an emulated device can corrupt the output of
//! one kernel (every output byte zeroed: labels, flags, counts and grids that decode fine but
//! are wrong): [`EmuDevice::with_fault`], or the environment variable
//! `ARCBATCH_EMU_FAULT=<kernel>` (`objects`, `ofcolor`, `colorcount`, `palette`, `colorfilter`,
//! `fill`, `paint`, `transform`), which only the emulated backend reads
//! ([`DeviceBackend::emu`](super::DeviceBackend::emu)).

use super::{Device, DeviceError, Entry, Job, KernelArg, SetupError};
use crate::rng::Rng;

/// The environment variable naming a kernel whose output the emulated devices corrupt.
pub const FAULT_VAR: &str = "ARCBATCH_EMU_FAULT";

/// The most threads per block, as on CUDA devices (and `EMU_MAX_THREADS` in `portable.h`).
pub const MAX_THREADS: u32 = 1024;

/// One launch as the host kernels see it (`struct EmuCtx` in `portable.h`).
#[repr(C)]
struct EmuCtx {
    blocks: u32,
    threads: u32,
    order: *const u32,
}

/// A host-compiled kernel: `name_host(ctx, args)`, each argument in a 64-bit slot.
type HostKernel = unsafe extern "C" fn(*const EmuCtx, *const u64);

extern "C" {
    fn arcb_objects_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_ofcolor_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_colorcount_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_palette_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_colorfilter_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_fill_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_paint_host(ctx: *const EmuCtx, args: *const u64);
    fn arcb_transform_host(ctx: *const EmuCtx, args: *const u64);
}

/// The host build of an entry point (whose parameters are [`Entry::params`]).
fn host_kernel(entry: Entry) -> HostKernel {
    match entry {
        Entry::Objects => arcb_objects_host,
        Entry::Ofcolor => arcb_ofcolor_host,
        Entry::Colorcount => arcb_colorcount_host,
        Entry::Palette => arcb_palette_host,
        Entry::Colorfilter => arcb_colorfilter_host,
        Entry::Fill => arcb_fill_host,
        Entry::Paint => arcb_paint_host,
        Entry::Transform => arcb_transform_host,
    }
}

/// The order in which the threads of a block run within each phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThreadOrder {
    #[default]
    Forward,
    Reverse,
    /// A permutation drawn from this seed (the same for every phase of a launch).
    Shuffled(u64),
}

impl ThreadOrder {
    /// The thread indices `0..n` in this order.
    fn permutation(self, n: u32) -> Vec<u32> {
        let mut order: Vec<u32> = (0..n).collect();
        match self {
            ThreadOrder::Forward => {}
            ThreadOrder::Reverse => order.reverse(),
            ThreadOrder::Shuffled(seed) => {
                // Fisher-Yates.
                let mut rng = Rng::new(seed);
                for k in (1..order.len()).rev() {
                    order.swap(k, (rng.next_u64() % (k as u64 + 1)) as usize);
                }
            }
        }
        order
    }
}

/// A device that runs the host builds of the kernels.
#[derive(Clone, Debug, Default)]
pub struct EmuDevice {
    index: usize,
    threads: Option<u32>,
    order: ThreadOrder,
    fault: Option<Entry>,
}

impl EmuDevice {
    /// Emulated device number `index`, running each launch with its own thread count, forward.
    pub fn new(index: usize) -> EmuDevice {
        EmuDevice {
            index,
            ..EmuDevice::default()
        }
    }

    /// Runs every launch with `threads` threads per block instead of the launch's.
    pub fn with_threads(self, threads: u32) -> EmuDevice {
        EmuDevice {
            threads: Some(threads),
            ..self
        }
    }

    /// Runs the threads of each phase in this order.
    pub fn with_order(self, order: ThreadOrder) -> EmuDevice {
        EmuDevice { order, ..self }
    }

    /// Test hook: corrupts the output of `entry` (every output byte zeroed), so that tests can
    /// check what catches a wrong kernel result. `None` runs faithfully.
    #[doc(hidden)]
    pub fn with_fault(self, fault: Option<Entry>) -> EmuDevice {
        EmuDevice { fault, ..self }
    }

    /// The kernel named by [`FAULT_VAR`], if set (an unknown name is an error).
    pub fn fault_from_env() -> Result<Option<Entry>, SetupError> {
        match std::env::var(FAULT_VAR) {
            Ok(name) => Entry::of_name(&name).map(Some).ok_or(SetupError::EmuFault(name)),
            Err(_) => Ok(None),
        }
    }
}

impl Device for EmuDevice {
    fn name(&self) -> String {
        format!("emu{}", self.index)
    }

    fn run(&self, job: &Job<'_>, out: &mut Vec<u8>) -> Result<(), DeviceError> {
        let launch = &job.launch;
        let threads = self.threads.unwrap_or(launch.threads);
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(DeviceError::Launch(format!("{threads} threads per block")));
        }
        launch.check_args()?;
        let kernel = host_kernel(launch.entry);
        let in_bounds = |offset: usize| offset <= job.device_bytes;
        let args_fit = launch.args.iter().all(|a| match *a {
            KernelArg::Ptr(offset) => in_bounds(offset),
            KernelArg::U32(_) => true,
        });
        if !args_fit || !in_bounds(job.input.len()) || !in_bounds(job.output.end) || job.output.start > job.output.end {
            return Err(DeviceError::Launch(format!(
                "{}: an argument or the output lies outside the buffer",
                launch.entry.symbol()
            )));
        }
        // Device memory: 8-byte aligned, like a device allocation, and filled with garbage.
        let mut memory = vec![0xA5A5_A5A5_A5A5_A5A5_u64; job.device_bytes.div_ceil(8)];
        // SAFETY: the u64 buffer is valid for `len * 8` bytes, and any byte is a valid u8.
        let bytes = unsafe { std::slice::from_raw_parts_mut(memory.as_mut_ptr().cast::<u8>(), memory.len() * 8) };
        bytes[..job.input.len()].copy_from_slice(job.input);
        let base = bytes.as_mut_ptr();
        let slots: Vec<u64> = launch
            .args
            .iter()
            .map(|a| match *a {
                // SAFETY: `offset` is within the buffer (checked above), so the pointer stays in
                // (or one past) the same allocation.
                KernelArg::Ptr(offset) => (unsafe { base.add(offset) }) as u64,
                KernelArg::U32(v) => u64::from(v),
            })
            .collect();
        let order = self.order.permutation(threads);
        let ctx = EmuCtx {
            blocks: launch.blocks,
            threads,
            order: order.as_ptr(),
        };
        // SAFETY: `slots` holds the arguments of the kinds the kernel takes (checked above), pointers
        // into `memory`, which outlives the call. The kernel reads and writes only the sections
        // its packer laid out in that buffer for `launch.blocks` blocks (the packers in
        // `backend.rs` size every section for the blocks they launch), and `order` is a
        // permutation of `0..threads` with `threads <= EMU_MAX_THREADS`.
        unsafe { kernel(&ctx, slots.as_ptr()) };
        out.clear();
        out.extend_from_slice(&bytes[job.output.clone()]);
        if self.fault == Some(launch.entry) {
            out.fill(0);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_orders_are_permutations() {
        for order in [ThreadOrder::Forward, ThreadOrder::Reverse, ThreadOrder::Shuffled(7)] {
            let mut p = order.permutation(33);
            p.sort_unstable();
            assert_eq!(p, (0..33).collect::<Vec<_>>());
        }
        assert_ne!(
            ThreadOrder::Shuffled(1).permutation(32),
            ThreadOrder::Shuffled(2).permutation(32)
        );
    }
}
