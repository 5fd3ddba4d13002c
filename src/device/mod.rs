//! Batched ops on a device: the kernels, the [`Device`] trait every device implements (the CUDA
//! device, [`emu::EmuDevice`], which runs the same kernel sources compiled for the host, and
//! [`replay::ReplayDevice`], which replays recorded outputs to time the host side alone), the
//! staging of one launch's bytes ([`staging`]), and [`backend::DeviceBackend`], the
//! [`Backend`](crate::batch::Backend) that packs lanes, runs them on the devices and falls back
//! to the CPU.
//!
//! # The kernel ABI
//!
//! A batched op is one [`Job`]: the staged input bytes go to the device in ONE transfer into
//! one device buffer of [`Job::device_bytes`] bytes (inputs first, then the outputs and any
//! scratch, which are not uploaded and start uninitialised); ONE launch of
//! [`Launch::entry`] with [`Launch::blocks`] blocks (one per grid or lane) of
//! [`Launch::threads`] threads and [`Launch::shared_bytes`] of dynamic shared memory (the
//! kernels use static shared memory only, so 0); then ONE transfer back of the bytes
//! [`Job::output`] of that buffer. The kernel's parameters are [`Launch::args`] in order:
//! [`KernelArg::Ptr`]`(offset)` is a device pointer, the buffer's base plus `offset` bytes
//! (offsets are multiples of 8), and [`KernelArg::U32`] a 32-bit unsigned scalar. Every
//! section is little-endian, as both host and device are.
//!
//! Each kernel family is one CUDA C++ source in `kernels/` ([`FAMILIES`]); its text for NVRTC,
//! with the portability header `kernels/portable.h` inlined, is
//! [`KernelFamily::nvrtc_source`]. The same sources are compiled as host C++ by `build.rs`,
//! where the entry point `name` becomes `name_host` (see `kernels/portable.h`). The kernel
//! table ([`Entry`], [`FAMILIES`], [`KernelArg`]) is generated from the sources' `KERNEL(...)`
//! declarations and lives in [`crate::batch::kernel`], beside the op table that packs for it.

pub mod auto;
pub mod backend;
pub mod cuda;
pub mod emu;
pub mod library;
pub mod nvrtc;
pub mod replay;
pub mod select;
pub mod workload;

use std::ops::Range;

pub use crate::batch::staging::{self, Staging};
pub use backend::DeviceBackend;
pub use emu::{EmuDevice, ThreadOrder};
pub use replay::ReplayDevice;

pub use crate::batch::kernel::{Entry, KernelArg, KernelFamily, Param, FAMILIES, PORTABLE_H};

/// One kernel launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub entry: Entry,
    /// Blocks in the grid (1-D): one per grid or lane.
    pub blocks: u32,
    /// Threads per block (1-D).
    pub threads: u32,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    pub args: Vec<KernelArg>,
}

impl Launch {
    /// Whether the arguments are of the kinds, in the number, that the entry point takes: a
    /// launch that passes a scalar where a pointer goes would read any memory.
    pub fn check_args(&self) -> Result<(), DeviceError> {
        let kinds = self.args.iter().map(|a| a.kind());
        if kinds.clone().eq(self.entry.params().iter().copied()) {
            return Ok(());
        }
        Err(DeviceError::Launch(format!(
            "{}: arguments {:?} where the kernel takes {:?}",
            self.entry.symbol(),
            kinds.collect::<Vec<_>>(),
            self.entry.params()
        )))
    }
}

/// One batched op on a device: upload, launch, download.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    pub launch: Launch,
    /// The bytes to upload to the start of the device buffer.
    pub input: &'a [u8],
    /// The size of the device buffer (at least `input.len()`, and the end of `output`).
    pub device_bytes: usize,
    /// The bytes of the device buffer to bring back.
    pub output: Range<usize>,
}

/// Why a device could not run a job. The backend then runs the op on the CPU.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("no device: {0}")]
    NoDevice(String),
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    #[error("kernel compilation failed: {0}")]
    Compile(String),
    #[error("launch failed: {0}")]
    Launch(String),
    #[error("transfer failed: {0}")]
    Transfer(String),
    #[error("kernel output rejected: {0}")]
    BadOutput(String),
}

impl DeviceError {
    /// The kind of failure, for warning once per cause.
    pub fn kind(&self) -> &'static str {
        match self {
            DeviceError::NoDevice(_) => "no device",
            DeviceError::OutOfMemory(_) => "out of memory",
            DeviceError::Compile(_) => "compile",
            DeviceError::Launch(_) => "launch",
            DeviceError::Transfer(_) => "transfer",
            DeviceError::BadOutput(_) => "bad output",
        }
    }
}

/// A setting read when a device backend is set up that names nothing valid. A machine without
/// a GPU is never an error: the backends run on the CPU then.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("unknown backend {0:?} (auto, cpu, gpu, emu)")]
    UnknownKind(String),
    #[error("{var}={0}: expected a number of devices, at least 1", var = select::EMU_DEVICES_ENV)]
    EmuDevices(String),
    #[error("{var}={0} names no kernel", var = emu::FAULT_VAR)]
    EmuFault(String),
    #[error(transparent)]
    MinLanes(#[from] auto::OverrideError),
}

/// A device that runs jobs: one upload, one launch, one download each.
pub trait Device: Send + Sync {
    /// A name for messages (`emu0`, `cuda0 (Tesla T4)`).
    fn name(&self) -> String;

    /// Runs `job`, leaving the bytes of `job.output` in `out` (replacing its contents).
    fn run(&self, job: &Job<'_>, out: &mut Vec<u8>) -> Result<(), DeviceError>;
}

/// A shared device is a device (the CUDA devices are opened once per process and shared).
impl<D: Device + ?Sized> Device for std::sync::Arc<D> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn run(&self, job: &Job<'_>, out: &mut Vec<u8>) -> Result<(), DeviceError> {
        (**self).run(job, out)
    }
}
