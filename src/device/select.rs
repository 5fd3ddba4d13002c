//! Choosing the backend a run uses: what `--backend` names.
//!
//! `cpu` is the rayon backend; `emu` the kernels compiled for the host, through the device
//! backend (`ARCBATCH_EMU_DEVICES=N` emulated devices, default 1); `gpu` every batched op
//! with a kernel on all visible GPUs; `auto` (the default) the GPUs when there are any, each
//! op only from its probed batch size up ([`super::auto`]), else the CPU. Where `gpu` finds
//! no usable GPU it says why, once, and runs on the CPU: a run never fails for want of one.

use std::time::Duration;

use super::cuda::gpus;
use super::{auto, DeviceBackend, SetupError};
use crate::batch::{Backend, CpuBackend};
use crate::error::Chain;

/// The backends by name, as `--backend` offers them (the variants' docs are its help) and
/// the Python module's `backend=` takes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// The GPUs when there are any, each op only from the batch size where it wins (probed
    /// once and cached; see `arcbatch gpu-info`), else the CPU.
    Auto,
    /// rayon over lanes on this machine's cores.
    Cpu,
    /// Every op that has a kernel on all visible GPUs (the CPU, with a warning, if none).
    Gpu,
    /// The GPU kernels compiled for the host and run on the CPU, through the device backend's
    /// staging, dispatch and fallback (ARCBATCH_EMU_DEVICES=N emulated devices, default 1;
    /// ARCBATCH_EMU_FAULT=<kernel> corrupts one kernel's output, for testing).
    Emu,
}

impl std::str::FromStr for Kind {
    type Err = SetupError;

    /// A backend by its command-line name: `auto`, `cpu`, `gpu` or `emu`.
    fn from_str(name: &str) -> Result<Kind, SetupError> {
        <Kind as clap::ValueEnum>::from_str(name, false).map_err(|_| SetupError::UnknownKind(name.to_string()))
    }
}

/// The environment variable giving the number of emulated devices.
pub const EMU_DEVICES_ENV: &str = "ARCBATCH_EMU_DEVICES";

/// The backend of `kind`, with a time limit per step and lane.
pub fn backend(kind: Kind, timeout: Option<Duration>) -> Result<Box<dyn Backend>, SetupError> {
    backend_on(kind, CpuBackend::new(timeout))
}

/// The backend of `kind` over `cpu`, the CPU backend it runs (and falls back to) with that
/// backend's limits.
pub fn backend_on(kind: Kind, cpu: CpuBackend) -> Result<Box<dyn Backend>, SetupError> {
    Ok(match kind {
        Kind::Cpu => Box::new(cpu),
        Kind::Emu => {
            let devices = match std::env::var(EMU_DEVICES_ENV) {
                Ok(n) => n
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(SetupError::EmuDevices(n))?,
                Err(_) => 1,
            };
            Box::new(DeviceBackend::emu(devices, cpu)?)
        }
        Kind::Gpu => match gpus() {
            Ok(devices) => Box::new(DeviceBackend::new("gpu", devices.clone(), cpu)),
            Err(why) => {
                eprintln!(
                    "arcbatch: warning: --backend gpu: no usable GPU ({}); running on the CPU",
                    Chain(why)
                );
                Box::new(cpu)
            }
        },
        Kind::Auto => match gpus() {
            Ok(devices) => {
                let thresholds = auto::thresholds(devices, &cpu)?;
                Box::new(thresholds.apply(DeviceBackend::new("gpu", devices.clone(), cpu)))
            }
            Err(_) => Box::new(cpu),
        },
    })
}
