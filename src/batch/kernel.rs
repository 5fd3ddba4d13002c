//! The kernel side of the batched ops, device-neutral: the table of the kernels of `kernels/`
//! ([`Entry`], [`FAMILIES`]), which `build.rs` generates from their `KERNEL(name, params...)`
//! declarations, the kinds of a launch's arguments ([`KernelArg`]), and what packing the lanes
//! of an op for a kernel gives ([`Packed`]) with the helpers the op table's packers and
//! unpackers share. Nothing here runs a kernel: [`crate::device`] does, on a GPU or emulated.

use std::ops::Range;

use rayon::prelude::*;

use super::grids::{GridBatch, GridMeta};
use super::staging::Staging;
use super::LaneResult;
use crate::dsl::{Color, Grid, GridView, Value};

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

// `enum Entry` (one variant per declared kernel: `arcb_colorcount` is `Entry::Colorcount`),
// `Entry::ALL`, `Entry::symbol`, `Entry::params` and `FAMILIES`.
include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

impl Entry {
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

/// The lanes of one op packed for one launch: its blocks and arguments (after the staged
/// input sections), and the output bytes to bring back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    pub blocks: u32,
    pub args: Vec<KernelArg>,
    pub output: Range<usize>,
}

/// What one job runs: its launches in order, each an entry point and its packing, and the
/// output bytes to bring back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub launches: Vec<(Entry, Packed)>,
    pub output: Range<usize>,
}

/// Output bytes that do not decode into results (a wrong kernel, a garbled transfer).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadOutput(pub String);

/// The grids of the given lanes staged as metadata and cells (rebased): their offsets, the
/// number of cells in all, and the launch's block count.
pub struct StagedGrids {
    pub metas: usize,
    pub cells: usize,
    pub total: usize,
    pub blocks: u32,
}

impl StagedGrids {
    /// The launch over these grids: one block per grid, the arguments `(metas, cells, rest...)`.
    pub fn packed(&self, rest: &[KernelArg], output: Range<usize>) -> Packed {
        let grids = [KernelArg::Ptr(self.metas), KernelArg::Ptr(self.cells)];
        Packed {
            blocks: self.blocks,
            args: grids.iter().chain(rest).copied().collect(),
            output,
        }
    }
}

/// Stages the given lanes' grids: their metadata (offsets rebased to the packed cells), then
/// their cells as `i8`. Staged first in a job, the metadata lie at its start and the cells
/// where [`staged_cells`] finds them.
pub fn stage_grids(grids: &GridBatch, lanes: &[usize], staging: &mut Staging) -> StagedGrids {
    let mut at = 0u32;
    let metas = staging.put(lanes.iter().map(|&k| {
        let m = grids.metas[k];
        let rebased = GridMeta { offset: at, ..m };
        at += m.len() as u32;
        rebased
    }));
    let cells = staging.put_part_bytes(
        lanes,
        |k| grids.metas[k].len(),
        |k, part| {
            for (byte, &c) in part.iter_mut().zip(grids.view(k).cells) {
                *byte = c as i8 as u8;
            }
        },
    );
    debug_assert!(metas != 0 || cells == staged_cells_at(lanes.len()));
    StagedGrids {
        metas,
        cells,
        total: at as usize,
        blocks: lanes.len() as u32,
    }
}

/// Where the cells of `lanes` grids staged first in a job begin: after their metadata.
fn staged_cells_at(lanes: usize) -> usize {
    lanes * <GridMeta as super::staging::Plain>::SIZE
}

/// The cells (an `i8` each) of the grids of `lanes` lanes that [`stage_grids`] staged first in
/// a job's input, `staged`: what an unpacker reads of the grids instead of their 4-byte
/// colours. Empty where the input is shorter.
pub fn staged_cells(staged: &[u8], lanes: usize) -> &[u8] {
    staged.get(staged_cells_at(lanes)..).unwrap_or_default()
}

/// Whether a kernel takes lane `k`'s grid: one with cells, every colour fitting the kernels'
/// `i8` cells. Other lanes (an empty grid, a colour a program counted past 127) run on the CPU.
pub fn kernel_grid(grids: &GridBatch, k: usize) -> bool {
    !grids.metas[k].is_empty() && grids.byte_colors(k)
}

/// Whether a colour fits a kernel's `i8` cell.
pub fn kernel_color(c: Color) -> bool {
    i8::try_from(c).is_ok()
}

/// Fewest lanes a thread unpacks at a time.
pub const UNPACK_CHUNK: usize = 64;

/// Each lane's result from its grid and the range of its cells in the packed buffer (`f`),
/// the lanes spread over the thread pool: in lane order, or the first error.
pub fn par_unpack<F>(grids: &GridBatch, lanes: &[usize], f: F) -> super::op::Unpacked
where
    F: Fn(GridView<'_>, Range<usize>) -> Result<LaneResult, BadOutput> + Sync,
{
    par_unpack_runs(grids, lanes, |views, cells, results| {
        let mut at = cells.start;
        for (&v, result) in views.iter().zip(results) {
            let range = at..at + v.cells.len();
            at = range.end;
            *result = f(v, range)?;
        }
        Ok(())
    })
}

/// The lanes' results, each run of consecutive lanes ([`UNPACK_CHUNK`] of them) unpacked at
/// once by `f` from their grids and the range of their cells in the packed buffer, into their
/// places in the list; the runs spread over the thread pool. In lane order, or the first
/// error. For results that share buffers across lanes.
pub fn par_unpack_runs<F>(grids: &GridBatch, lanes: &[usize], f: F) -> super::op::Unpacked
where
    F: Fn(&[GridView<'_>], Range<usize>, &mut [LaneResult]) -> Result<(), BadOutput> + Sync,
{
    // Only the runs' cell ranges are found here, on one thread; their grids' views are made
    // where they are unpacked.
    let mut at = 0;
    let runs: Vec<(&[usize], Range<usize>)> = lanes
        .chunks(UNPACK_CHUNK)
        .map(|run| {
            let cells = at..at + run.iter().map(|&k| grids.metas[k].len()).sum::<usize>();
            at = cells.end;
            (run, cells)
        })
        .collect();
    // Written in place, in parallel, where collecting each run's results and then joining
    // them would copy every result once more on one thread. Every placeholder is overwritten,
    // or the list dropped with the error.
    let mut results: Vec<LaneResult> = Vec::new();
    results.par_extend((0..lanes.len()).into_par_iter().map(|_| Ok(Value::Int(0))));
    let outcomes: Vec<Result<(), BadOutput>> = results
        .par_chunks_mut(UNPACK_CHUNK)
        .zip(runs)
        .map(|(results, (run, cells))| {
            let views: Vec<GridView<'_>> = run.iter().map(|&k| grids.view(k)).collect();
            f(&views, cells, results)
        })
        .collect();
    outcomes.into_iter().collect::<Result<(), BadOutput>>()?;
    Ok(results)
}

/// A grid value from output cells.
pub fn grid_out(h: usize, w: usize, cells: &[u8]) -> LaneResult {
    Ok(Value::grid(Grid::new(
        h,
        w,
        cells.iter().map(|&c| Color::from(c as i8)).collect(),
    )))
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
    fn every_entry_point_is_in_one_family_whose_nvrtc_source_declares_it_with_its_params() {
        for entry in Entry::ALL {
            let defining: Vec<&str> = FAMILIES
                .iter()
                .filter(|f| f.entries.contains(&entry))
                .map(|f| f.file)
                .collect();
            assert_eq!(defining.len(), 1, "{entry:?} in {defining:?}");
            let source = entry.family().nvrtc_source();
            assert!(!source.contains("#include \"portable.h\""));
            let start = source.find(&format!("KERNEL({},", entry.symbol())).expect("declared");
            let declaration = &source[start..start + source[start..].find(')').expect("closed")];
            assert_eq!(declaration.matches(',').count(), entry.params().len(), "{entry:?}");
        }
    }
}
