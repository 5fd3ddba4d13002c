//! The CUDA device: one GPU driven through cudarc, running the kernels of `kernels/` compiled
//! at first use by NVRTC for that GPU's own architecture (so no PTX ever meets a driver older
//! than the compiler that wrote it).
//!
//! Every driver call sits behind the library-presence check and a panic guard (DESIGN.md §5:
//! without libcuda, cudarc panics where one expects an error), so a machine without a GPU, a
//! driver or NVRTC gets a reason in words, never a crash. A job is one upload from a pinned
//! staging buffer reused across jobs, one launch, one download; the device buffer is reused
//! too, and both grow as needed. The stream is synchronised after each of the three phases,
//! which costs a few microseconds a job and gives `bench-gpu` the split between transfers and
//! kernels.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::{nvrtc, Device, DeviceError, Entry, Job, KernelArg};
use crate::dsl::func::panic_message;

/// What `gpu-info` shows of one GPU.
#[derive(Clone, Debug)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    /// Compute capability as `major * 10 + minor` (75 for a T4).
    pub arch: u32,
    pub memory_bytes: usize,
    pub multiprocessors: i32,
}

/// One GPU.
pub struct CudaDevice {
    pub info: GpuInfo,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The compiled module of each kernel family (by file name), or why it did not build.
    modules: Mutex<HashMap<&'static str, Result<Arc<CudaModule>, String>>>,
    buffers: Mutex<Buffers>,
    /// Nanoseconds spent uploading, in kernels and downloading, since the last
    /// [`take_phase_times`](CudaDevice::take_phase_times).
    phases: [AtomicU64; 3],
}

/// Where a device's time went: seconds uploading, running kernels, downloading.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTimes {
    pub upload: f64,
    pub kernel: f64,
    pub download: f64,
}

/// The reused pinned staging buffer and device buffer.
#[derive(Default)]
struct Buffers {
    staging: Option<PinnedHostSlice<u8>>,
    device: Option<CudaSlice<u8>>,
}

/// Runs `f`, a panic inside the CUDA libraries becoming an error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| Err(format!("{what}: {}", panic_message(&panic))))
}

fn driver(what: &str) -> impl Fn(DriverError) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// The GPUs of this machine, opened once per process; `Err` says in words why there are none.
pub fn gpus() -> &'static Result<Vec<Arc<CudaDevice>>, String> {
    static GPUS: OnceLock<Result<Vec<Arc<CudaDevice>>, String>> = OnceLock::new();
    GPUS.get_or_init(|| guarded("opening the CUDA driver", discover))
}

fn discover() -> Result<Vec<Arc<CudaDevice>>, String> {
    // SAFETY: only tries to open the driver library by its usual names.
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver library (libcuda.so) on this machine: no NVIDIA driver is installed".into());
    }
    let count = CudaContext::device_count().map_err(driver("the CUDA driver cannot list devices"))?;
    if count <= 0 {
        return Err("the CUDA driver is installed but sees no device".into());
    }
    (0..count as usize).map(|k| CudaDevice::open(k).map(Arc::new)).collect()
}

impl CudaDevice {
    fn open(ordinal: usize) -> Result<CudaDevice, String> {
        let what = format!("device {ordinal}");
        let ctx = CudaContext::new(ordinal).map_err(driver(&what))?;
        let (major, minor) = ctx.compute_capability().map_err(driver(&what))?;
        let info = GpuInfo {
            ordinal,
            name: ctx.name().map_err(driver(&what))?,
            arch: (major * 10 + minor) as u32,
            memory_bytes: ctx.total_mem().map_err(driver(&what))?,
            multiprocessors: ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(driver(&what))?,
        };
        Ok(CudaDevice {
            info,
            stream: ctx.default_stream(),
            ctx,
            modules: Mutex::new(HashMap::new()),
            buffers: Mutex::new(Buffers::default()),
            phases: Default::default(),
        })
    }

    /// The time spent in each phase of the jobs run since the last call (for `bench-gpu`).
    pub fn take_phase_times(&self) -> PhaseTimes {
        let take = |k: usize| self.phases[k].swap(0, Ordering::Relaxed) as f64 * 1e-9;
        PhaseTimes {
            upload: take(0),
            kernel: take(1),
            download: take(2),
        }
    }

    /// Waits for the stream and adds the time since `since` to phase `k`.
    fn end_phase(
        &self,
        k: usize,
        since: &mut Instant,
        error: impl Fn(DriverError) -> DeviceError,
    ) -> Result<(), DeviceError> {
        self.stream.synchronize().map_err(error)?;
        let now = Instant::now();
        self.phases[k].fetch_add((now - *since).as_nanos() as u64, Ordering::Relaxed);
        *since = now;
        Ok(())
    }

    /// The entry point's function, compiling its family for this GPU on first use.
    fn function(&self, entry: Entry) -> Result<CudaFunction, DeviceError> {
        let family = entry.family();
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let module = modules.entry(family.file).or_insert_with(|| {
            let compiler = nvrtc::nvrtc()?;
            let cubin = compiler.compile(family.file, &family.nvrtc_source(), self.info.arch)?;
            self.ctx
                .load_module(Ptx::from_binary(cubin.image))
                .map_err(driver("loading the compiled kernels"))
        });
        let module = module.clone().map_err(DeviceError::Compile)?;
        module
            .load_function(entry.symbol())
            .map_err(|e| DeviceError::Compile(format!("{}: {e}", entry.symbol())))
    }

    fn run_job(&self, job: &Job<'_>, out: &mut Vec<u8>) -> Result<(), DeviceError> {
        let function = self.function(job.launch.entry)?;
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let Buffers { staging, device } = &mut *buffers;
        let memory = |e: DriverError| {
            if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
                DeviceError::OutOfMemory(e.to_string())
            } else {
                DeviceError::Transfer(e.to_string())
            }
        };
        if device.as_ref().map_or(true, |d| d.len() < job.device_bytes) {
            *device = None;
            // SAFETY: the buffer's bytes are written (by the upload or the kernel) before they
            // are read; the kernels never read past the inputs they were given.
            *device = Some(unsafe { self.stream.alloc::<u8>(grown(job.device_bytes)) }.map_err(memory)?);
        }
        let n = job.input.len();
        if staging.as_ref().map_or(true, |s| s.len() < n) {
            *staging = None;
            // SAFETY: only the first `n` bytes, written just below, are ever read.
            *staging = Some(unsafe { self.ctx.alloc_pinned::<u8>(grown(n)) }.map_err(memory)?);
        }
        let (Some(device), Some(staging)) = (device.as_mut(), staging.as_mut()) else {
            return Err(DeviceError::Transfer("buffers missing after allocation".into()));
        };
        let staged = &mut staging.as_mut_slice().map_err(memory)?[..n];
        staged.copy_from_slice(job.input);
        let (base, _sync) = device.device_ptr(&self.stream);
        let mut clock = Instant::now();
        if n > 0 {
            // SAFETY: `base` is a live allocation of at least `device_bytes >= n` bytes on this
            // stream; `staged` stays alive and unmoved until the stream is synchronised below.
            unsafe { result::memcpy_htod_async(base, &*staged, self.stream.cu_stream()) }.map_err(memory)?;
        }
        self.end_phase(0, &mut clock, memory)?;
        let launch = &job.launch;
        let launch_error = |e: DriverError| DeviceError::Launch(format!("{}: {e}", launch.entry.symbol()));
        if launch.blocks > 0 {
            let (mut pointers, mut scalars) = (Vec::new(), Vec::new());
            for arg in &launch.args {
                match *arg {
                    KernelArg::Ptr(offset) => pointers.push(base + offset as u64),
                    KernelArg::U32(x) => scalars.push(x),
                }
            }
            let mut builder = self.stream.launch_builder(&function);
            let (mut p, mut s) = (pointers.iter(), scalars.iter());
            for arg in &launch.args {
                match arg {
                    KernelArg::Ptr(_) => builder.arg(p.next().expect("one pointer per Ptr argument")),
                    KernelArg::U32(_) => builder.arg(s.next().expect("one scalar per U32 argument")),
                };
            }
            let config = LaunchConfig {
                grid_dim: (launch.blocks, 1, 1),
                block_dim: (launch.threads, 1, 1),
                shared_mem_bytes: launch.shared_bytes,
            };
            // SAFETY: the arguments follow the kernel ABI of `super` (device pointers into the
            // job's buffer, which is `device_bytes` long, and u32 scalars), which every entry
            // point's signature matches; the buffer outlives the launch (synchronised below).
            unsafe { builder.launch(config) }.map_err(launch_error)?;
        }
        self.end_phase(1, &mut clock, launch_error)?;
        out.clear();
        out.resize(job.output.len(), 0);
        if !out.is_empty() {
            // SAFETY: the range lies within the buffer (`output.end <= device_bytes`); `out`
            // holds exactly its length and is not moved before the synchronisation.
            unsafe { result::memcpy_dtoh_async(&mut out[..], base + job.output.start as u64, self.stream.cu_stream()) }
                .map_err(memory)?;
        }
        self.end_phase(2, &mut clock, memory)
    }
}

/// A buffer size with room to grow: 1.5 times what is asked, at least 64 KiB.
fn grown(bytes: usize) -> usize {
    (bytes + bytes / 2).max(1 << 16)
}

impl Device for CudaDevice {
    fn name(&self) -> String {
        format!("cuda{} ({})", self.info.ordinal, self.info.name)
    }

    fn run(&self, job: &Job<'_>, out: &mut Vec<u8>) -> Result<(), DeviceError> {
        catch_unwind(AssertUnwindSafe(|| self.run_job(job, out)))
            .unwrap_or_else(|panic| Err(DeviceError::Launch(panic_message(&panic))))
    }
}
