//! The grids of a batch in one flat buffer, with one small metadata record per grid; and the
//! patches of a batch likewise.
//!
//! This is the layout the GPU kernels take as is (DESIGN.md §4): all cells of all grids back to
//! back in one `Vec<i8>` (one transfer), and per grid a [`GridMeta`] with its offset into that
//! buffer and its shape, so a CUDA block that owns grid `k` finds its cells in O(1) with no
//! padding and no search. [`GridMeta`] is `#[repr(C)]` for that reason; its C twin is
//! `struct GridMeta { uint32_t offset; uint8_t h, w; }` (8 bytes, 2 of them padding).
//!
//! A grid with a side over 255 cells (which `upscale` or `hconcat` can build) does not fit a
//! [`GridMeta`]; [`GridBatch::fits`] says so, and callers keep such a lane on the scalar path.

use super::kernel::kernel_color;
use crate::dsl::{Color, Grid, GridView};

/// Where one grid of a [`GridBatch`] lies in the flat cell buffer, and its shape.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GridMeta {
    /// Index of the grid's first cell in [`GridBatch::cells`].
    pub offset: u32,
    pub h: u8,
    pub w: u8,
}

impl GridMeta {
    /// Number of cells of the grid.
    pub fn len(self) -> usize {
        self.h as usize * self.w as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// Whether a grid of this shape fits a [`GridMeta`].
fn fits_shape(h: usize, w: usize) -> bool {
    h <= u8::MAX as usize && w <= u8::MAX as usize
}

/// Many grids in one flat row-major buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GridBatch {
    pub cells: Vec<Color>,
    pub metas: Vec<GridMeta>,
    /// Per grid, whether every colour fits an `i8` (the kernels' cells): found as the grid
    /// is appended, while its cells are read anyway.
    byte_colors: Vec<bool>,
}

impl GridBatch {
    /// An empty batch with room for `grids` grids of `cells` cells in all.
    pub fn with_capacity(grids: usize, cells: usize) -> GridBatch {
        GridBatch {
            cells: Vec::with_capacity(cells),
            metas: Vec::with_capacity(grids),
            byte_colors: Vec::with_capacity(grids),
        }
    }

    /// Whether a grid can travel in a batch: each side at most 255 cells.
    pub fn fits(g: &Grid) -> bool {
        fits_shape(g.h, g.w)
    }

    /// Appends a grid; `false` (and nothing appended) when it does not [`fit`](Self::fits) or
    /// the buffer would pass `u32::MAX` cells.
    pub fn push(&mut self, g: &Grid) -> bool {
        self.push_view(g.view())
    }

    /// [`push`](Self::push) for a borrowed grid.
    pub fn push_view(&mut self, g: GridView<'_>) -> bool {
        let Ok(offset) = u32::try_from(self.cells.len()) else {
            return false;
        };
        if !fits_shape(g.h, g.w) || u32::try_from(self.cells.len() + g.cells.len()).is_err() {
            return false;
        }
        self.metas.push(GridMeta {
            offset,
            h: g.h as u8,
            w: g.w as u8,
        });
        self.cells.extend_from_slice(g.cells);
        // Without an early exit, so that it runs on vectors.
        let byte_colors = g.cells.iter().fold(true, |fit, &c| fit & kernel_color(c));
        self.byte_colors.push(byte_colors);
        true
    }

    /// A batch of the given grids, all of which must [`fit`](Self::fits) (`None` otherwise).
    pub fn from_grids<'a>(grids: impl IntoIterator<Item = &'a Grid>) -> Option<GridBatch> {
        let mut batch = GridBatch::default();
        for g in grids {
            if !batch.push(g) {
                return None;
            }
        }
        Some(batch)
    }

    /// Number of grids.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    /// Grid `k` as a borrowed view.
    pub fn view(&self, k: usize) -> GridView<'_> {
        let m = self.metas[k];
        let start = m.offset as usize;
        GridView {
            cells: &self.cells[start..start + m.len()],
            h: m.h as usize,
            w: m.w as usize,
        }
    }

    /// Whether every colour of grid `k` fits an `i8`, as the kernels' cells are.
    pub fn byte_colors(&self, k: usize) -> bool {
        self.byte_colors[k]
    }

    /// Grid `k`, copied out.
    pub fn grid(&self, k: usize) -> Grid {
        let v = self.view(k);
        Grid::new(v.h, v.w, v.cells.to_vec())
    }
}

/// The patches of a batch in one flat buffer, as locations (`Loc`, for `fill`) or cells
/// (`Cell`, for `paint`): lane `k`'s items are `items[offsets[k]..offsets[k + 1]]`, in the
/// patch's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatchBatch<T> {
    pub items: Vec<T>,
    pub offsets: Vec<u32>,
}

impl<T> Default for PatchBatch<T> {
    fn default() -> PatchBatch<T> {
        PatchBatch {
            items: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl<T> PatchBatch<T> {
    /// An empty batch with room for `patches` patches of `items` items in all.
    pub fn with_capacity(patches: usize, items: usize) -> PatchBatch<T> {
        let mut offsets = Vec::with_capacity(patches + 1);
        offsets.push(0);
        PatchBatch {
            items: Vec::with_capacity(items),
            offsets,
        }
    }

    /// Appends one patch; `false` (and nothing appended) past `u32::MAX` items in all.
    pub fn push(&mut self, items: impl IntoIterator<Item = T>) -> bool {
        let before = self.items.len();
        self.items.extend(items);
        match u32::try_from(self.items.len()) {
            Ok(end) => {
                self.offsets.push(end);
                true
            }
            Err(_) => {
                self.items.truncate(before);
                false
            }
        }
    }

    /// Number of patches.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items of patch `k`.
    pub fn patch(&self, k: usize) -> &[T] {
        &self.items[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_round_trip_through_the_flat_buffer() {
        let a = Grid::new(2, 3, vec![1, 2, 3, 4, 5, 6]);
        let b = Grid::new(1, 1, vec![9]);
        let empty = Grid::new(0, 0, vec![]);
        let batch = GridBatch::from_grids([&a, &empty, &b]).unwrap();
        assert_eq!(batch.len(), 3);
        assert_eq!(batch.metas[2], GridMeta { offset: 6, h: 1, w: 1 });
        assert_eq!((batch.grid(0), batch.grid(1), batch.grid(2)), (a, empty, b));
        assert!((0..3).all(|k| batch.byte_colors(k)));
        assert_eq!(std::mem::size_of::<GridMeta>(), 8);
    }

    #[test]
    fn a_grid_knows_whether_its_colours_fit_a_byte() {
        let grids = [vec![-128, 127], vec![128, 0], vec![0, -129], vec![0, 9]];
        let grids: Vec<Grid> = grids.into_iter().map(|cells| Grid::new(1, 2, cells)).collect();
        let batch = GridBatch::from_grids(&grids).unwrap();
        let fit: Vec<bool> = (0..4).map(|k| batch.byte_colors(k)).collect();
        assert_eq!(fit, [true, false, false, true]);
    }

    #[test]
    fn an_oversized_grid_is_refused() {
        let wide = Grid::filled(1, 256, 0);
        let mut batch = GridBatch::default();
        assert!(!batch.push(&wide));
        assert!(batch.is_empty() && batch.cells.is_empty());
        assert!(GridBatch::from_grids([&wide]).is_none());
    }
}
