//! The staging buffer of one job: the input sections written back to back (each at a multiple
//! of 8 bytes, little-endian) into one reused byte buffer, uploaded in one transfer; then the
//! output and scratch sections, which only reserve room on the device. A section with a part
//! per lane is written in parallel over the lanes. Also the readers of the bytes that come
//! back.

use rayon::prelude::*;

use super::grids::GridMeta;

/// Alignment of every section, in bytes.
const ALIGN: usize = 8;

/// Fewest lanes a thread packs at a time.
const PARALLEL_LANES: usize = 64;

/// A value with a fixed little-endian layout in a section.
pub trait Plain: Copy {
    /// Its size in bytes.
    const SIZE: usize;
    /// Writes its bytes into `out` (exactly [`Plain::SIZE`] long).
    fn write(self, out: &mut [u8]);
}

macro_rules! plain_numbers {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn write(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
plain_numbers!(u8, i8, u32, i32, i64);

/// Several bytes in a row (a location's row and column, a cell's colour, row and column).
impl<const N: usize> Plain for [u8; N] {
    const SIZE: usize = N;
    fn write(self, out: &mut [u8]) {
        out.copy_from_slice(&self);
    }
}

impl Plain for GridMeta {
    /// `struct GridMeta { uint32_t offset; uint8_t h, w; }`: 8 bytes, the last 2 padding.
    const SIZE: usize = 8;
    fn write(self, out: &mut [u8]) {
        self.offset.write(&mut out[..4]);
        out[4..].copy_from_slice(&[self.h, self.w, 0, 0]);
    }
}

/// The sections of one job, reused from job to job.
#[derive(Clone, Debug, Default)]
pub struct Staging {
    /// The input sections, the bytes to upload, in `bytes[..len]`. The rest is what earlier
    /// jobs wrote: kept, so that a job as large as one before it writes its bytes once, not
    /// zeros first (a job's input is megabytes).
    bytes: Vec<u8>,
    len: usize,
    /// The end of the reserved (not uploaded) sections; 0 while there are none.
    end: usize,
}

impl Staging {
    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.len = 0;
        self.end = 0;
    }

    /// Starts a section of `len` bytes at the next aligned offset (the padding zeroed): its
    /// offset, with the section's bytes to write.
    fn section(&mut self, len: usize) -> (usize, &mut [u8]) {
        debug_assert_eq!(self.end, 0, "input sections come before reserved ones");
        let offset = self.len.next_multiple_of(ALIGN);
        if self.bytes.len() < offset + len {
            self.bytes.resize(offset + len, 0);
        }
        self.bytes[self.len..offset].fill(0);
        self.len = offset + len;
        (offset, &mut self.bytes[offset..offset + len])
    }

    /// Appends an input section; returns its offset.
    pub fn put<T: Plain>(&mut self, items: impl IntoIterator<Item = T>) -> usize {
        let mut items = items.into_iter();
        // As many items as the iterator says it has, written in place; then any it did not
        // announce, one at a time.
        let (announced, _) = items.size_hint();
        let (offset, section) = self.section(announced * T::SIZE);
        let mut written = 0;
        for (slot, item) in section.chunks_exact_mut(T::SIZE).zip(items.by_ref()) {
            item.write(slot);
            written += 1;
        }
        self.len = offset + written * T::SIZE;
        for item in items {
            let at = self.len;
            if self.bytes.len() < at + T::SIZE {
                self.bytes.resize(at + T::SIZE, 0);
            }
            item.write(&mut self.bytes[at..at + T::SIZE]);
            self.len = at + T::SIZE;
        }
        offset
    }

    /// Appends a section made of one part per lane, `len(k)` items for lane `k`, which
    /// `items(k)` gives; the parts are written in parallel. Returns its offset.
    pub fn put_parts<T, I>(
        &mut self,
        lanes: &[usize],
        len: impl Fn(usize) -> usize + Sync,
        items: impl Fn(usize) -> I + Sync,
    ) -> usize
    where
        T: Plain,
        I: Iterator<Item = T>,
    {
        self.put_part_bytes(
            lanes,
            |k| len(k) * T::SIZE,
            |k, part| {
                for (slot, item) in part.chunks_exact_mut(T::SIZE).zip(items(k)) {
                    item.write(slot);
                }
            },
        )
    }

    /// Appends a section made of one part per lane, `len(k)` bytes for lane `k`, which
    /// `fill(k, part)` writes (all of them); the parts are measured and written in parallel,
    /// a run of [`PARALLEL_LANES`] lanes per task, so that no pass over every lane runs on one
    /// thread. Returns its offset.
    pub fn put_part_bytes(
        &mut self,
        lanes: &[usize],
        len: impl Fn(usize) -> usize + Sync,
        fill: impl Fn(usize, &mut [u8]) + Sync,
    ) -> usize {
        let run_bytes: Vec<usize> = lanes
            .par_chunks(PARALLEL_LANES)
            .map(|run| run.iter().map(|&k| len(k)).sum())
            .collect();
        self.put_bytes(run_bytes.iter().sum(), |mut bytes| {
            let mut runs = Vec::with_capacity(run_bytes.len());
            for (run, &n) in lanes.chunks(PARALLEL_LANES).zip(&run_bytes) {
                let (part, rest) = bytes.split_at_mut(n);
                runs.push((run, part));
                bytes = rest;
            }
            runs.into_par_iter().for_each(|(run, mut bytes)| {
                for &k in run {
                    let (part, rest) = bytes.split_at_mut(len(k));
                    fill(k, part);
                    bytes = rest;
                }
            });
        })
    }

    /// Appends a section of `len` bytes that `fill` writes (all of them); returns its offset.
    pub fn put_bytes(&mut self, len: usize, fill: impl FnOnce(&mut [u8])) -> usize {
        let (offset, section) = self.section(len);
        fill(section);
        offset
    }

    /// Reserves an output or scratch section of `bytes` bytes on the device; returns its offset.
    pub fn reserve(&mut self, bytes: usize) -> usize {
        let offset = self.end.max(self.len).next_multiple_of(ALIGN);
        self.end = offset + bytes;
        offset
    }

    /// The bytes to upload.
    pub fn input(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The size of the device buffer: the inputs and every reserved section.
    pub fn device_bytes(&self) -> usize {
        self.end.max(self.len)
    }
}

/// Bytes per part of a copy on the thread pool.
const COPY_PART: usize = 1 << 18;

/// Copies `src` into `dst` (as long), in parts on the thread pool: a job's input and output
/// are megabytes, which one thread copies at a fraction of the memory's speed.
pub fn copy_in_parallel(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "a copy between buffers of different lengths");
    dst.par_chunks_mut(COPY_PART)
        .zip(src.par_chunks(COPY_PART))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// The `u32`s of a section that came back.
pub fn u32s(bytes: &[u8]) -> impl ExactSizeIterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_aligned_and_reserved_ones_are_not_uploaded() {
        let mut s = Staging::default();
        assert_eq!(s.put_bytes(3, |b| b.copy_from_slice(&[1, 255, 3])), 0);
        assert_eq!(s.put([7u32]), 8);
        assert_eq!(s.put([GridMeta { offset: 5, h: 2, w: 3 }]), 16);
        assert_eq!(s.input().len(), 24);
        assert_eq!(&s.input()[..3], &[1, 255, 3]);
        assert_eq!(&s.input()[16..24], &[5, 0, 0, 0, 2, 3, 0, 0]);
        assert_eq!(s.reserve(3), 24);
        assert_eq!(s.reserve(4), 32);
        assert_eq!((s.input().len(), s.device_bytes()), (24, 36));
        assert_eq!(u32s(&[1, 0, 0, 0, 0, 1, 0, 0]).collect::<Vec<_>>(), [1, 256]);
        s.clear();
        assert_eq!((s.input().len(), s.device_bytes()), (0, 0));
        let parts: Vec<Vec<i32>> = (0..200).map(|k| (0..k % 7).map(|x| x - k).collect()).collect();
        let lanes: Vec<usize> = (0..200).rev().step_by(3).collect();
        let at = s.put_parts(&lanes, |k| parts[k].len(), |k| parts[k].iter().copied());
        let mut serial = Staging::default();
        serial.put(lanes.iter().flat_map(|&k| parts[k].iter().copied()));
        assert_eq!(&s.input()[at..], serial.input());
    }

    #[test]
    fn a_job_after_a_larger_one_uploads_its_own_bytes_with_zeroed_padding() {
        let mut s = Staging::default();
        s.put_bytes(64, |b| b.fill(0xAB));
        s.reserve(100);
        s.clear();
        assert_eq!(s.put_bytes(3, |b| b.copy_from_slice(&[1, 2, 3])), 0);
        assert_eq!(s.put([9u8, 8]), 8);
        assert_eq!(s.input(), &[1, 2, 3, 0, 0, 0, 0, 0, 9, 8]);
        assert_eq!(s.device_bytes(), 10);
        // Unannounced items (a filter's) go on past the announced length.
        let at = s.put((1..=3u32).filter(|x| x % 2 == 1));
        assert_eq!(at, 16);
        assert_eq!(&s.input()[16..], &[1, 0, 0, 0, 3, 0, 0, 0]);
    }
}
