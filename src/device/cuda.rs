//! The CUDA device: one GPU driven through cudarc, running the kernels of `kernels/` compiled
//! by NVRTC at first use, once per architecture in the process (so no PTX ever meets a driver
//! older than the compiler that wrote it), and loaded into every GPU of that architecture.
//!
//! Every driver call sits behind the library-presence check and a panic guard (DESIGN.md §5:
//! without libcuda, cudarc panics where one expects an error), so a machine without a GPU, a
//! driver or NVRTC gets a reason in words, never a crash. Jobs come from any thread (rayon
//! workers, several GPUs in turn), so each job first binds the device's context to its thread.
//! A job takes an idle [`Slot`] (its own stream, a write-combined pinned upload buffer, a
//! pinned download buffer and a device buffer, all reused and grown as needed), so jobs from
//! several threads overlap on one GPU; it is one upload, its launches in stream order and one
//! download, with one synchronisation at the end. `bench-gpu` turns on
//! [`CudaDevice::set_phase_timing`], which synchronises after each phase to split the time
//! between transfers and kernels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig,
    PinnedHostSlice, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use super::library::{self, NotFound};
use super::nvrtc::{self, NvrtcError};
use super::{staging, Device, DeviceError, Entry, Job, KernelArg, KernelFamily};
use crate::dsl::func::{caught, Panicked};
use crate::error::Chain;

/// Why the GPUs cannot be used, or a kernel family not loaded on one.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CudaError {
    #[error("{0}: no NVIDIA driver is installed")]
    NoDriver(NotFound),
    #[error("the CUDA driver is installed but sees no device")]
    NoDevice,
    /// A driver call failed; `what` says what it was doing.
    #[error("{what}")]
    Driver {
        what: String,
        #[source]
        source: DriverError,
    },
    /// The CUDA libraries panicked (cudarc does where a library lacks a function).
    #[error("{what}: {message}")]
    Panic { what: &'static str, message: String },
    #[error(transparent)]
    Nvrtc(#[from] NvrtcError),
}

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
    /// The loaded module of each kernel family (by file name), or why it did not build.
    modules: Mutex<HashMap<&'static str, Result<Arc<CudaModule>, CudaError>>>,
    /// Each entry point's function (indexed as [`Entry::ALL`]), looked up once.
    functions: Mutex<[Option<CudaFunction>; Entry::ALL.len()]>,
    /// Idle slots; a job takes one, or makes one when none is idle.
    slots: Mutex<Vec<Slot>>,
    /// Whether jobs synchronise after each phase to time it.
    timing: AtomicBool,
    /// Nanoseconds spent uploading, in kernels and downloading, since the last
    /// [`take_phase_times`](CudaDevice::take_phase_times) (while timing).
    phases: [AtomicU64; 3],
}

/// Where a device's time went: seconds uploading, running kernels, downloading.
#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseTimes {
    pub upload: f64,
    pub kernel: f64,
    pub download: f64,
}

/// What one job in flight holds: a stream of its own and the reused buffers.
struct Slot {
    stream: Arc<CudaStream>,
    /// Write-combined pinned memory the input is staged in (the host only writes it).
    upload: Option<PinnedHostSlice<u8>>,
    /// Pinned memory (cached, the host reads it) the output comes back to.
    download: Option<PinnedHostSlice<u8>>,
    device: Option<CudaSlice<u8>>,
}

/// Runs `f`, a panic inside the CUDA libraries becoming an error.
fn guarded<T>(what: &'static str, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
    caught(f).unwrap_or_else(|Panicked(message)| Err(CudaError::Panic { what, message }))
}

/// For `map_err`: a failed driver call, saying what it was doing.
fn driver(what: &str) -> impl Fn(DriverError) -> CudaError + '_ {
    move |source| CudaError::Driver {
        what: what.to_string(),
        source,
    }
}

/// The GPUs of this machine, opened once per process; `Err` says in words why there are none.
pub fn gpus() -> &'static Result<Vec<Arc<CudaDevice>>, CudaError> {
    static GPUS: OnceLock<Result<Vec<Arc<CudaDevice>>, CudaError>> = OnceLock::new();
    GPUS.get_or_init(|| guarded("opening the CUDA driver", discover))
}

/// Where the driver library was found (a file or [`library::LOADER_PATH`]), once [`gpus`]
/// has looked; `None` when it found none.
pub fn driver_origin() -> Option<&'static str> {
    let _ = gpus();
    DRIVER_ORIGIN.get().map(String::as_str)
}

static DRIVER_ORIGIN: OnceLock<String> = OnceLock::new();

fn discover() -> Result<Vec<Arc<CudaDevice>>, CudaError> {
    // SAFETY: only tries to open the driver library by its usual names.
    let origin = library::locate("libcuda.so.1", || unsafe { sys::is_culib_present() }).map_err(CudaError::NoDriver)?;
    let _ = DRIVER_ORIGIN.set(origin);
    let count = CudaContext::device_count().map_err(driver("the CUDA driver cannot list devices"))?;
    if count <= 0 {
        return Err(CudaError::NoDevice);
    }
    (0..count as usize).map(|k| CudaDevice::open(k).map(Arc::new)).collect()
}

/// The CUBIN of a kernel family for `sm_<arch>`, compiled once per process: GPUs of one
/// architecture share it.
fn cubin(family: &KernelFamily, arch: u32) -> Result<Arc<Vec<u8>>, NvrtcError> {
    type Built = HashMap<(&'static str, u32), Result<Arc<Vec<u8>>, NvrtcError>>;
    static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    built
        .entry((family.file, arch))
        .or_insert_with(|| {
            let compiler = nvrtc::nvrtc()?;
            Ok(Arc::new(
                compiler.compile(family.file, &family.nvrtc_source(), arch)?.image,
            ))
        })
        .clone()
}

impl CudaDevice {
    fn open(ordinal: usize) -> Result<CudaDevice, CudaError> {
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
            ctx,
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(Default::default()),
            slots: Mutex::new(Vec::new()),
            timing: AtomicBool::new(false),
            phases: Default::default(),
        })
    }

    /// Makes every job synchronise after each phase and add its time to
    /// [`take_phase_times`](CudaDevice::take_phase_times) (for `bench-gpu`), or stops it.
    pub fn set_phase_timing(&self, on: bool) {
        self.timing.store(on, Ordering::Relaxed);
    }

    /// The time spent in each phase of the jobs run since the last call, while timing.
    pub fn take_phase_times(&self) -> PhaseTimes {
        let take = |k: usize| self.phases[k].swap(0, Ordering::Relaxed) as f64 * 1e-9;
        PhaseTimes {
            upload: take(0),
            kernel: take(1),
            download: take(2),
        }
    }

    /// While timing: waits for the stream and adds the time since `since` to phase `k`.
    fn end_phase(
        &self,
        stream: &CudaStream,
        k: usize,
        since: &mut Instant,
        error: impl Fn(DriverError) -> DeviceError,
    ) -> Result<(), DeviceError> {
        if !self.timing.load(Ordering::Relaxed) {
            return Ok(());
        }
        stream.synchronize().map_err(error)?;
        let now = Instant::now();
        self.phases[k].fetch_add((now - *since).as_nanos() as u64, Ordering::Relaxed);
        *since = now;
        Ok(())
    }

    /// The entry point's function, compiling and loading its family on first use.
    fn function(&self, entry: Entry) -> Result<CudaFunction, DeviceError> {
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = &functions[entry.index()] {
            return Ok(f.clone());
        }
        let family = entry.family();
        let module = self
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(family.file)
            .or_insert_with(|| {
                let image = cubin(family, self.info.arch)?;
                self.ctx
                    .load_module(Ptx::from_binary(image.to_vec()))
                    .map_err(driver("loading the compiled kernels"))
            })
            .clone()
            .map_err(|e| DeviceError::Compile(Chain(&e).to_string()))?;
        let function = module
            .load_function(entry.symbol())
            .map_err(|e| DeviceError::Compile(format!("{}: {e}", entry.symbol())))?;
        functions[entry.index()] = Some(function.clone());
        Ok(function)
    }

    /// An idle slot, or a new one with a stream of its own.
    fn take_slot(&self) -> Result<Slot, DeviceError> {
        if let Some(slot) = self.slots.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(slot);
        }
        let stream = self
            .ctx
            .new_stream()
            .map_err(|e| DeviceError::Launch(format!("creating a stream: {e}")))?;
        Ok(Slot {
            stream,
            upload: None,
            download: None,
            device: None,
        })
    }

    fn run_job(&self, job: &Job<'_>, read: &mut dyn FnMut(&[u8])) -> Result<(), DeviceError> {
        job.check()?;
        // First of all: the job may run on any thread, whose current context may be none or
        // another GPU's; every driver call below (frees included) needs this device's.
        self.ctx
            .bind_to_thread()
            .map_err(|e| DeviceError::Launch(format!("binding the context of cuda{}: {e}", self.info.ordinal)))?;
        let functions = (job.launches.iter())
            .map(|l| self.function(l.entry))
            .collect::<Result<Vec<_>, _>>()?;
        let mut slot = self.take_slot()?;
        let result = self.run_in(&mut slot, &functions, job, read);
        if result.is_ok() {
            self.slots.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
        }
        // A failed slot is dropped here, its context bound above.
        result
    }

    fn run_in(
        &self,
        slot: &mut Slot,
        functions: &[CudaFunction],
        job: &Job<'_>,
        read: &mut dyn FnMut(&[u8]),
    ) -> Result<(), DeviceError> {
        let memory = |e: DriverError| {
            if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
                DeviceError::OutOfMemory(e.to_string())
            } else {
                DeviceError::Transfer(e.to_string())
            }
        };
        let Slot {
            stream,
            upload,
            download,
            device,
        } = slot;
        let (n, m) = (job.input.len(), job.output.len());
        if device.as_ref().map_or(true, |d| d.len() < job.device_bytes) {
            *device = None;
            // SAFETY: the buffer's bytes are written (by the upload or the kernel) before they
            // are read; the kernels never read past the inputs they were given.
            *device = Some(unsafe { stream.alloc::<u8>(grown(job.device_bytes)) }.map_err(memory)?);
        }
        if upload.as_ref().map_or(true, |s| s.len() < n) {
            *upload = None;
            // SAFETY: only the first `n` bytes, written just below, are ever read.
            *upload = Some(unsafe { self.ctx.alloc_pinned::<u8>(grown(n)) }.map_err(memory)?);
        }
        if download.as_ref().map_or(true, |s| s.len() < m) {
            *download = None;
            // SAFETY: only the first `m` bytes, written by the download, are ever read. Flags 0:
            // cached memory, as the host reads it (write-combined memory reads slowly).
            *download = Some(unsafe { self.ctx.alloc_pinned_with_flags::<u8>(grown(m), 0) }.map_err(memory)?);
        }
        let (Some(device), Some(upload), Some(download)) = (device.as_mut(), upload.as_mut(), download.as_mut()) else {
            return Err(DeviceError::Transfer("buffers missing after allocation".into()));
        };
        let staged = &mut upload.as_mut_slice().map_err(memory)?[..n];
        staging::copy_in_parallel(staged, job.input);
        let (base, _sync) = device.device_ptr(stream);
        let mut clock = Instant::now();
        if n > 0 {
            // SAFETY: `base` is a live allocation of at least `device_bytes >= n` bytes on this
            // stream; `staged` stays alive and unmoved until the stream is synchronised below.
            unsafe { result::memcpy_htod_async(base, &*staged, stream.cu_stream()) }.map_err(memory)?;
        }
        self.end_phase(stream, 0, &mut clock, memory)?;
        // In stream order: each launch sees what the ones before it wrote.
        for (launch, function) in job.launches.iter().zip(functions) {
            let launch_error = |e: DriverError| DeviceError::Launch(format!("{}: {e}", launch.entry.symbol()));
            if launch.blocks > 0 {
                let (mut pointers, mut scalars) = (Vec::new(), Vec::new());
                for arg in &launch.args {
                    match *arg {
                        KernelArg::Ptr(offset) => pointers.push(base + offset as u64),
                        KernelArg::U32(x) => scalars.push(x),
                    }
                }
                let mut builder = stream.launch_builder(function);
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
                // SAFETY: the arguments are of the kinds the entry point takes (`Job::check`):
                // device pointers into the job's buffer, which is `device_bytes` long, and u32
                // scalars; the buffer outlives the launch (synchronised below).
                unsafe { builder.launch(config) }.map_err(launch_error)?;
            }
        }
        let launch_error = |e: DriverError| DeviceError::Launch(format!("a launch of {:?}: {e}", job.entries()));
        self.end_phase(stream, 1, &mut clock, launch_error)?;
        let fetched = &mut download.as_mut_slice().map_err(memory)?[..m];
        if m > 0 {
            // SAFETY: the range lies within the buffer (`output.end <= device_bytes`);
            // `fetched` holds exactly its length and is not read before the synchronisation.
            unsafe { result::memcpy_dtoh_async(&mut *fetched, base + job.output.start as u64, stream.cu_stream()) }
                .map_err(memory)?;
        }
        stream.synchronize().map_err(memory)?;
        self.end_phase(stream, 2, &mut clock, memory)?;
        // Read where it came back: the slot, and so its download buffer, stays this job's
        // until the reader is done.
        read(fetched);
        Ok(())
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

    fn run(&self, job: &Job<'_>, read: &mut dyn FnMut(&[u8])) -> Result<(), DeviceError> {
        caught(|| self.run_job(job, read)).unwrap_or_else(|Panicked(message)| Err(DeviceError::Launch(message)))
    }
}
