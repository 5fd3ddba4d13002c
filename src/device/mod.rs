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
//! where the entry point `name` becomes `name_host` (see `kernels/portable.h`).

pub mod auto;
pub mod backend;
pub mod cuda;
pub mod emu;
pub mod library;
pub mod nvrtc;
pub mod replay;
pub mod select;
pub mod staging;
pub mod workload;

use std::ops::Range;

pub use backend::DeviceBackend;
pub use emu::{EmuDevice, ThreadOrder};
pub use replay::ReplayDevice;
pub use staging::Staging;

/// The portability header every kernel source includes.
pub const PORTABLE_H: &str = include_str!("../../kernels/portable.h");

/// One kernel source and the entry points it defines.
#[derive(Clone, Copy, Debug)]
pub struct KernelFamily {
    /// The file name under `kernels/`.
    pub file: &'static str,
    /// The source text, as in the file (it includes `portable.h`).
    pub source: &'static str,
    /// The entry points it defines.
    pub entries: &'static [Entry],
}

impl KernelFamily {
    /// The source for NVRTC: [`PORTABLE_H`] inlined in place of its `#include`, so the
    /// compiler needs no header.
    pub fn nvrtc_source(&self) -> String {
        self.source.replace("#include \"portable.h\"", PORTABLE_H)
    }
}

/// Every kernel family.
pub const FAMILIES: &[KernelFamily] = &[
    KernelFamily {
        file: "objects.cu",
        source: include_str!("../../kernels/objects.cu"),
        entries: &[Entry::Objects],
    },
    KernelFamily {
        file: "colors.cu",
        source: include_str!("../../kernels/colors.cu"),
        entries: &[Entry::Ofcolor, Entry::Colorcount, Entry::Palette, Entry::Colorfilter],
    },
    KernelFamily {
        file: "grids.cu",
        source: include_str!("../../kernels/grids.cu"),
        entries: &[Entry::Fill, Entry::Paint, Entry::Transform],
    },
];

/// A kernel entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Entry {
    /// `(metas, cells, labels out, mode)`: a `u32` label per cell.
    Objects,
    /// `(metas, cells, colours as i64 per grid, flags out)`: a `u8` flag per cell.
    Ofcolor,
    /// `(metas, cells, colours as i64 per grid, counts out)`: a `u32` per grid.
    Colorcount,
    /// `(metas, cells, masks out)`: 8 `u32` per grid, bit `s` set for colour slot `s`.
    Palette,
    /// `(starts, first colours as i32, values as i64, keep out)`: a `u8` per object.
    Colorfilter,
    /// `(metas, cells, colours as i8, starts, locations as (i32, i32), cells out)`.
    Fill,
    /// `(metas, cells, starts, items as (colour, i, j) i32, scratch i32 per cell, cells out)`.
    Paint,
    /// `(metas, cells, cells out, transform)`, the transform as [`Transform`] index 0..7.
    ///
    /// [`Transform`]: crate::batch::Transform
    Transform,
}

impl Entry {
    /// Every entry point.
    pub const ALL: [Entry; 8] = [
        Entry::Objects,
        Entry::Ofcolor,
        Entry::Colorcount,
        Entry::Palette,
        Entry::Colorfilter,
        Entry::Fill,
        Entry::Paint,
        Entry::Transform,
    ];

    /// The entry point's name in the CUDA source.
    pub fn symbol(self) -> &'static str {
        match self {
            Entry::Objects => "arcb_objects",
            Entry::Ofcolor => "arcb_ofcolor",
            Entry::Colorcount => "arcb_colorcount",
            Entry::Palette => "arcb_palette",
            Entry::Colorfilter => "arcb_colorfilter",
            Entry::Fill => "arcb_fill",
            Entry::Paint => "arcb_paint",
            Entry::Transform => "arcb_transform",
        }
    }

    /// The short name (`objects`, `ofcolor`, ...): the symbol without its `arcb_` prefix.
    pub fn name(self) -> &'static str {
        &self.symbol()["arcb_".len()..]
    }

    /// The entry point's position in [`Entry::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The entry point of a short name.
    pub fn of_name(name: &str) -> Option<Entry> {
        Entry::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The kinds of its parameters, in order (as its `KERNEL(...)` declaration has them).
    pub fn params(self) -> &'static [Param] {
        use Param::{Ptr, U32};
        match self {
            Entry::Objects | Entry::Transform => &[Ptr, Ptr, Ptr, U32],
            Entry::Ofcolor | Entry::Colorcount | Entry::Colorfilter => &[Ptr; 4],
            Entry::Palette => &[Ptr; 3],
            Entry::Fill | Entry::Paint => &[Ptr; 6],
        }
    }

    /// The family whose source defines it.
    pub fn family(self) -> &'static KernelFamily {
        FAMILIES
            .iter()
            .find(|f| f.entries.contains(&self))
            .expect("every entry point is in a family")
    }
}

/// One argument of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// A device pointer: the job's buffer plus this many bytes.
    Ptr(usize),
    /// A 32-bit unsigned scalar.
    U32(u32),
}

/// The kind of a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A device pointer (`T*`).
    Ptr,
    /// A 32-bit unsigned scalar (`u32`).
    U32,
}

impl KernelArg {
    /// The kind of parameter it passes.
    pub fn kind(self) -> Param {
        match self {
            KernelArg::Ptr(_) => Param::Ptr,
            KernelArg::U32(_) => Param::U32,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_points_index_is_its_position_in_all() {
        for (k, entry) in Entry::ALL.into_iter().enumerate() {
            assert_eq!(entry.index(), k);
            assert_eq!(Entry::of_name(entry.name()), Some(entry));
        }
    }

    #[test]
    fn every_entry_point_is_in_one_family_whose_nvrtc_source_defines_it() {
        for entry in Entry::ALL {
            let defining: Vec<&str> = FAMILIES
                .iter()
                .filter(|f| f.entries.contains(&entry))
                .map(|f| f.file)
                .collect();
            assert_eq!(defining.len(), 1, "{entry:?} in {defining:?}");
            let source = entry.family().nvrtc_source();
            assert!(source.contains(&format!("KERNEL({},", entry.symbol())), "{entry:?}");
            assert!(!source.contains("#include \"portable.h\""));
            assert_eq!(Entry::of_name(entry.name()), Some(entry));
        }
    }

    #[test]
    fn an_entry_points_params_are_those_of_its_kernel_declaration() {
        for entry in Entry::ALL {
            let source = entry.family().source;
            let start = source.find(&format!("KERNEL({},", entry.symbol())).expect("declared");
            let declaration = &source[start..start + source[start..].find(')').expect("closed")];
            let declared: Vec<Param> = declaration
                .split(',')
                .skip(1)
                .map(|p| if p.contains('*') { Param::Ptr } else { Param::U32 })
                .collect();
            assert!(declaration
                .split(',')
                .skip(1)
                .all(|p| p.contains('*') || p.trim().starts_with("u32 ")));
            assert_eq!(declared, entry.params(), "{entry:?}");
        }
    }
}
