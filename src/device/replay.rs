//! A device whose kernels are replaced by their precomputed results: what `bench-gpu
//! --host-only` runs the device path on, so that what it times is exactly what the host adds
//! (packing, staging, sharding, unpacking), on a machine without a GPU.
//!
//! [`ReplayDevice`] first records: each job runs on an emulated device and its output is kept,
//! per sequence of entry points launched ([`Job::entries`]) in job order. Then it replays: a
//! job's output is the next recorded one of its entry points (cycling), after the host-side copy a GPU job makes (the input into a
//! reused upload buffer, as into a GPU's pinned staging memory), handed to the reader where it
//! lies, as a GPU's download buffer is. A benchmark repeats the same calls, so each device sees
//! the same jobs in the same order; a replayed output whose length does not fit the job is an
//! error, and the backend's results are checked against the CPU's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{staging, Device, DeviceError, EmuDevice, Entry, Job};

/// An emulated device that records its outputs, then replays them without running a kernel.
#[derive(Debug)]
pub struct ReplayDevice {
    emu: EmuDevice,
    replaying: AtomicBool,
    recorded: Mutex<HashMap<Vec<Entry>, Recording>>,
    /// Reused upload buffers (one per job in flight), as a GPU's pinned staging memory.
    uploads: Mutex<Vec<Vec<u8>>>,
    /// Transfers replayed since the last [`ReplayDevice::take_transfers`]: uploads, downloads.
    transfers: [AtomicUsize; 2],
}

/// The transfers a device made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfers {
    pub uploads: usize,
    pub downloads: usize,
}

#[derive(Debug, Default)]
struct Recording {
    outputs: Vec<Arc<[u8]>>,
    next: usize,
}

impl ReplayDevice {
    /// Device number `index`, recording.
    pub fn new(index: usize) -> ReplayDevice {
        ReplayDevice {
            emu: EmuDevice::new(index),
            replaying: AtomicBool::new(false),
            recorded: Mutex::new(HashMap::new()),
            uploads: Mutex::new(Vec::new()),
            transfers: Default::default(),
        }
    }

    /// The transfers replayed since the last call (each job is one upload, one download).
    pub fn take_transfers(&self) -> Transfers {
        Transfers {
            uploads: self.transfers[0].swap(0, Ordering::Relaxed),
            downloads: self.transfers[1].swap(0, Ordering::Relaxed),
        }
    }

    /// Forgets what was recorded and records again.
    pub fn record(&self) {
        self.replaying.store(false, Ordering::Relaxed);
        self.recorded.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Replays what was recorded since [`record`](ReplayDevice::record), from the start.
    pub fn replay(&self) {
        for r in self.recorded.lock().unwrap_or_else(|e| e.into_inner()).values_mut() {
            r.next = 0;
        }
        self.replaying.store(true, Ordering::Relaxed);
    }
}

impl Device for ReplayDevice {
    fn name(&self) -> String {
        format!("replay({})", self.emu.name())
    }

    fn run(&self, job: &Job<'_>, read: &mut dyn FnMut(&[u8])) -> Result<(), DeviceError> {
        let entries = job.entries();
        if !self.replaying.load(Ordering::Relaxed) {
            return self.emu.run(job, &mut |output| {
                let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
                recorded.entry(entries.clone()).or_default().outputs.push(output.into());
                drop(recorded);
                read(output);
            });
        }
        job.check()?;
        let mut upload = self
            .uploads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        // Into memory the buffer already holds, as into a GPU's pinned buffer of that size.
        upload.resize(job.input.len(), 0);
        staging::copy_in_parallel(&mut upload, job.input);
        self.transfers[0].fetch_add(1, Ordering::Relaxed);
        self.uploads.lock().unwrap_or_else(|e| e.into_inner()).push(upload);
        let output = {
            let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
            let recording = recorded
                .get_mut(&entries)
                .filter(|r| !r.outputs.is_empty())
                .ok_or_else(|| DeviceError::BadOutput(format!("no recorded output of {}", names(&entries))))?;
            let output = Arc::clone(&recording.outputs[recording.next % recording.outputs.len()]);
            recording.next += 1;
            output
        };
        if output.len() != job.output.len() {
            return Err(DeviceError::BadOutput(format!(
                "{}: a recorded output of {} bytes for a job of {} (the jobs differ from those recorded)",
                names(&entries),
                output.len(),
                job.output.len()
            )));
        }
        // Read outside the lock, as other jobs may replay meanwhile.
        self.transfers[1].fetch_add(1, Ordering::Relaxed);
        read(&output);
        Ok(())
    }
}

/// The entry points of a job, for messages (`transform, fill`).
fn names(entries: &[Entry]) -> String {
    entries.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
}
