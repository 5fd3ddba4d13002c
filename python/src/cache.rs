//! The values of recently seen Python objects, by identity, so that a value passed from one
//! primitive to the next (`x2 = f(x1)`, or the input grid `I` given to every step) is
//! converted once, not at every call.
//!
//! Sound because only deeply immutable objects are kept (tuples and frozensets whose members
//! are ints, bools, `None`, tuples, frozensets and function values: no `set`, no numpy array),
//! and the cache holds a strong reference to each object it keeps, so an object's address is
//! never reused while its entry lives. Direct-mapped: an object evicts whatever sat in its
//! slot. Small on purpose: it only has to hold the values of one solver's few steps, and no
//! giant ones, whose memory it would keep.
//!
//! A second cache holds grid rows by content: the grids of one task share most of their rows
//! (a step changes a few cells; backgrounds repeat), and a row found here costs one reference
//! instead of a tuple of fresh ints. The rows of grids read from Python go in too, so that a
//! result sharing rows with its input (a mirror, a concatenation) is made of the input's tuples.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use arcbatch::batt::eval;
use arcbatch::dsl::{Color, Grid, Value};

use crate::intern::interned;

const SLOTS: usize = 64;

struct Slot {
    obj: Py<PyAny>,
    value: Value,
}

static CACHE: Mutex<[Option<Slot>; SLOTS]> = Mutex::new([const { None }; SLOTS]);

fn slot_of(obj: &Bound<'_, PyAny>) -> usize {
    // Fibonacci hashing of the address: the top bits pick the slot.
    ((obj.as_ptr() as usize as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

/// The value of `obj`, if it is in the cache.
pub fn get(obj: &Bound<'_, PyAny>) -> Option<Value> {
    let cache = CACHE.lock().ok()?;
    match &cache[slot_of(obj)] {
        Some(slot) if slot.obj.as_ptr() == obj.as_ptr() => Some(slot.value.clone()),
        _ => None,
    }
}

/// The largest value the cache keeps, in units of [`eval::size`]: a slot pins its object and
/// its value, so that 64 slots of giant values (a `prapply` of lines: millions of cells) would
/// hold gigabytes after their calls returned; at this size the slots hold ~100 MB at most.
const MAX_CACHED_SIZE: usize = 1 << 14;

/// Remembers that `obj` (deeply immutable) is `value`, unless the value is larger than
/// [`MAX_CACHED_SIZE`].
pub fn put(obj: &Bound<'_, PyAny>, value: &Value) {
    if eval::size(value, MAX_CACHED_SIZE) > MAX_CACHED_SIZE {
        return;
    }
    let Ok(mut cache) = CACHE.lock() else { return };
    let evicted = cache[slot_of(obj)].replace(Slot {
        obj: obj.clone().unbind(),
        value: value.clone(),
    });
    drop(cache);
    // Released after the lock: freeing an object must never wait on the cache.
    drop(evicted);
}

const ROW_SLOTS: usize = 1024;

struct RowSlot {
    cells: Box<[Color]>,
    row: Py<PyTuple>,
}

static ROWS: Mutex<Vec<Option<RowSlot>>> = Mutex::new(Vec::new());

fn row_slot(row: &[Color]) -> usize {
    // FxHash's mix over the colours, eight at a time (a row is hashed on every conversion of a
    // grid both ways, so a byte at a time would cost as much as reading the cells).
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    let chunks = row.chunks_exact(8);
    let tail = chunks
        .remainder()
        .iter()
        .fold(0u64, |w, &c| (w << 8) | u64::from(c as u8));
    let hash = chunks.fold(row.len() as u64, |h, c| {
        mix(h, u64::from_le_bytes(std::array::from_fn(|k| c[k] as u8)))
    });
    (mix(hash, tail) >> 32) as usize % ROW_SLOTS
}

/// The row cache, made on first use; `None` while it is in use. `try_lock`: making or freeing a
/// tuple may run the garbage collector, and so any Python code, which could call back in here;
/// then the caller does without the cache.
fn row_cache() -> Option<MutexGuard<'static, Vec<Option<RowSlot>>>> {
    let mut rows = ROWS.try_lock().ok()?;
    if rows.is_empty() {
        rows.resize_with(ROW_SLOTS, || None);
    }
    Some(rows)
}

/// The rows of a grid as tuples of ints, from the row cache where it has them.
pub fn grid_rows<'py>(py: Python<'py>, g: &Grid) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    let interned = interned(py)?;
    let Some(mut rows) = row_cache() else {
        return (0..g.h).map(|i| interned.row(py, g.row(i))).collect();
    };
    let mut out = Vec::with_capacity(g.h);
    let mut evicted = Vec::new();
    for i in 0..g.h {
        let cells = g.row(i);
        let slot = &mut rows[row_slot(cells)];
        match slot {
            Some(s) if *s.cells == *cells => out.push(s.row.bind(py).clone()),
            _ => {
                let row = interned.row(py, cells)?;
                evicted.push(slot.replace(RowSlot {
                    cells: cells.into(),
                    row: row.clone().unbind(),
                }));
                out.push(row);
            }
        }
    }
    drop(rows);
    drop(evicted);
    Ok(out)
}

/// Puts the row tuples of a grid just read from Python (`rows`, exact tuples of exact ints, is
/// `g`) in the row cache, so that a result sharing rows with its input (a mirror, a
/// concatenation, a crop of whole rows) gives back the input's own tuples, as the reference
/// does, instead of making new ones.
pub fn remember_rows(g: &Grid, rows: &Bound<'_, PyTuple>) {
    let Some(mut cache) = row_cache() else { return };
    let mut evicted = Vec::new();
    for (i, row) in rows.iter_borrowed().enumerate() {
        let cells = g.row(i);
        let slot = &mut cache[row_slot(cells)];
        if slot.as_ref().is_some_and(|s| *s.cells == *cells) {
            continue;
        }
        if let Ok(row) = row.cast_exact::<PyTuple>() {
            evicted.push(slot.replace(RowSlot {
                cells: cells.into(),
                row: row.to_owned().unbind(),
            }));
        }
    }
    drop(cache);
    drop(evicted);
}
