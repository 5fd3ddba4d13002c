//! Objects found on a grid: `objects` (connected components), `partition` and `fgpartition`
//! (one object per colour), and the search dialect's `o_g` (`objects` with its three flags
//! packed into one integer) and `p_g` (the palette as an ascending tuple). Also the grid
//! helpers they share with the patch family: a colour [`Histogram`] and [`sorted_cells`].
//!
//! `objects` is the hottest primitive of the published solvers, so it is written for speed.
//! The reference floods from each unvisited cell in hash order; the components it finds do
//! not depend on that order, so the port labels them in one row-major union-find pass over
//! the flat grid instead (each cell meets only its already-visited neighbours: left, up and,
//! with `diagonal`, the two upper diagonals), then hands every cell to its component in a
//! second row-major pass. The working arrays live in a per-thread [`Labels`] reused across
//! calls, so a call allocates only its result. The result comes out in canonical order
//! without a generic sort: cells in row-major order are sorted within a one-coloured object
//! (a many-coloured one is sorted once), and objects are ordered by their first cell, which
//! decides the canonical order because two objects never share a cell.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use crate::dsl::error::DslResult;
use crate::dsl::registry::PrimSpec;
use crate::dsl::value::{Cell, Color, Grid, GridView, Value};
use crate::{bail, prim};

pub const PRIMS: &[PrimSpec] = &[
    prim!(objects, [Grid, Boolean, Boolean, Boolean] -> Objects, "connected components (univalued, diagonal, without_bg)"),
    prim!(partition, [Grid] -> Objects, "one object per colour"),
    prim!(fgpartition, [Grid] -> Objects, "one object per colour, the most common one left out"),
    prim!(o_g, [Grid, Integer] -> Objects, "objects with flags R = 4*univalued + 2*diagonal + without_bg"),
    prim!(p_g, [Grid] -> Tuple, "the grid's colours as an ascending tuple"),
];

// ----- colour counts ------------------------------------------------------------------------

/// The histogram slot of a colour; ascending slots are ascending colours (-128 -> 0, 0 -> 128).
fn slot(c: Color) -> usize {
    (c as u8 ^ 0x80) as usize
}

fn slot_color(k: usize) -> Color {
    (k as u8 ^ 0x80) as Color
}

/// The colour counts of a grid.
pub(super) struct Histogram {
    /// Cells per colour, indexed by [`slot`].
    counts: [u32; 256],
    /// The slots from the smallest to the largest colour present.
    range: Range<usize>,
}

impl Histogram {
    pub(super) fn of(cells: &[Color]) -> Histogram {
        let mut counts = [0u32; 256];
        for &c in cells {
            counts[slot(c)] += 1;
        }
        let range = match (cells.iter().min(), cells.iter().max()) {
            (Some(&lo), Some(&hi)) => slot(lo)..slot(hi) + 1,
            _ => 0..0,
        };
        Histogram { counts, range }
    }

    /// `(colour, count)` of each colour present, ascending by colour.
    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = (Color, usize)> + '_ {
        self.range
            .clone()
            .filter(|&k| self.counts[k] > 0)
            .map(|k| (slot_color(k), self.counts[k] as usize))
    }

    /// The most common colour, ties to the smallest: the reference's `mostcolor` of a grid.
    pub(super) fn most_common(&self) -> Option<Color> {
        // `max_by_key` keeps the last of equal maxima: walking down, that is the smallest colour.
        self.iter().rev().max_by_key(|&(_, n)| n).map(|(c, _)| c)
    }
}

/// `mostcolor(grid)`, or the reference's `ValueError` for a grid without cells.
fn background(g: GridView<'_>) -> DslResult<Color> {
    match Histogram::of(g.cells).most_common() {
        Some(c) => Ok(c),
        None => bail!(Value, "max() arg is an empty sequence (mostcolor of an empty grid)"),
    }
}

/// A grid's cells sorted by (colour, row, column), by counting sort: the reference's
/// `asobject`.
pub(super) fn sorted_cells(g: GridView<'_>) -> Vec<Cell> {
    let mut next = [0usize; 256];
    let mut at = 0;
    for (c, n) in Histogram::of(g.cells).iter() {
        next[slot(c)] = at;
        at += n;
    }
    let mut out = vec![Cell { color: 0, i: 0, j: 0 }; g.cells.len()];
    for i in 0..g.h {
        for (j, &c) in g.row(i).iter().enumerate() {
            let pos = &mut next[slot(c)];
            out[*pos] = Cell {
                color: c as i32,
                i: i as i32,
                j: j as i32,
            };
            *pos += 1;
        }
    }
    out
}

// ----- connected components -----------------------------------------------------------------

/// No label: a background cell, or a root not yet given an output slot.
const NONE: u32 = u32::MAX;

/// The working arrays of the component labelling.
#[derive(Default)]
struct Labels {
    /// Per cell: its provisional label, or [`NONE`] for background.
    cell: Vec<u32>,
    /// Per label: its parent in the union-find forest, never above the label itself.
    parent: Vec<u32>,
    /// Per label: how many cells it was given; after [`Labels::flatten`], per root, the size
    /// of its component.
    size: Vec<u32>,
    /// Per root: the index of its component in the output, or [`NONE`].
    slot: Vec<u32>,
}

thread_local! {
    static LABELS: RefCell<Labels> = RefCell::new(Labels::default());
}

impl Labels {
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of two labels under the smaller root.
    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra < rb {
            self.parent[rb as usize] = ra;
        } else if rb < ra {
            self.parent[ra as usize] = rb;
        }
    }

    /// Folds the neighbour cell `nb` into `l`, the label found so far for the current cell:
    /// if they connect, the current cell takes the neighbour's label or joins it to its own.
    #[inline]
    fn meet(&mut self, l: u32, nb: usize, connects: bool) -> u32 {
        let nl = self.cell[nb];
        if !connects || nl == NONE {
            l
        } else if l == NONE {
            nl
        } else {
            if nl != l {
                self.union(l, nl);
            }
            l
        }
    }

    /// Pass 1: labels every non-background cell, joining it to the already-labelled
    /// neighbours it connects to (of its own colour when `univalued`, of any colour otherwise).
    fn label(&mut self, g: GridView<'_>, univalued: bool, diagonal: bool, bg: Option<Color>) {
        let w = g.w;
        self.cell.clear();
        self.cell.resize(g.cells.len(), NONE);
        self.parent.clear();
        self.size.clear();
        for i in 0..g.h {
            for j in 0..w {
                let idx = i * w + j;
                let v = g.cells[idx];
                if bg == Some(v) {
                    continue;
                }
                let connects = |nb: usize| !univalued || g.cells[nb] == v;
                let mut l = NONE;
                if j > 0 {
                    l = self.meet(l, idx - 1, connects(idx - 1));
                }
                if i > 0 {
                    let up = idx - w;
                    l = self.meet(l, up, connects(up));
                    if diagonal && j > 0 {
                        l = self.meet(l, up - 1, connects(up - 1));
                    }
                    if diagonal && j + 1 < w {
                        l = self.meet(l, up + 1, connects(up + 1));
                    }
                }
                if l == NONE {
                    l = self.parent.len() as u32;
                    self.parent.push(l);
                    self.size.push(0);
                }
                self.size[l as usize] += 1;
                self.cell[idx] = l;
            }
        }
    }

    /// Points every label straight at its root and gathers the sizes at the roots. Labels
    /// are visited upwards, so a parent (never above its child) already points at its root.
    fn flatten(&mut self) {
        for x in 0..self.parent.len() {
            let root = self.parent[self.parent[x] as usize];
            self.parent[x] = root;
            if root as usize != x {
                self.size[root as usize] += self.size[x];
            }
        }
    }

    /// Pass 2: the cells of each component in row-major order, the components in the order
    /// of their first cell in that order.
    fn components(&mut self, g: GridView<'_>) -> Vec<Vec<Cell>> {
        self.slot.clear();
        self.slot.resize(self.parent.len(), NONE);
        let mut comps: Vec<Vec<Cell>> = Vec::new();
        for i in 0..g.h {
            for j in 0..g.w {
                let idx = i * g.w + j;
                let l = self.cell[idx];
                if l == NONE {
                    continue;
                }
                let root = self.parent[l as usize] as usize;
                let k = match self.slot[root] {
                    NONE => {
                        self.slot[root] = comps.len() as u32;
                        comps.push(Vec::with_capacity(self.size[root] as usize));
                        comps.len() - 1
                    }
                    k => k as usize,
                };
                comps[k].push(Cell {
                    color: g.cells[idx] as i32,
                    i: i as i32,
                    j: j as i32,
                });
            }
        }
        comps
    }
}

/// Objects, each sorted, as an Objects value in canonical order.
fn objects_value(mut comps: Vec<Vec<Cell>>) -> Value {
    comps.sort_unstable_by_key(|c| c.first().copied());
    Value::Set(Arc::new(
        comps.into_iter().map(|c| Value::Object(Arc::new(c))).collect(),
    ))
}

/// The reference's `objects(grid, univalued, diagonal, without_bg)`.
fn find_objects(grid: &Value, univalued: bool, diagonal: bool, without_bg: bool) -> DslResult<Value> {
    objects_of(grid.as_grid()?.view(), univalued, diagonal, without_bg)
}

/// `objects` of a borrowed grid: the primitive's core, and the lane function of the batched
/// op (`batch::cpu`).
pub fn objects_of(g: GridView<'_>, univalued: bool, diagonal: bool, without_bg: bool) -> DslResult<Value> {
    let bg = if without_bg { Some(background(g)?) } else { None };
    if g.h == 0 {
        bail!(Index, "tuple index out of range (objects of an empty grid)");
    }
    let comps = if !univalued && bg.is_none() {
        // Every cell connects to its neighbours: the whole grid is one object.
        if g.cells.is_empty() {
            Vec::new()
        } else {
            vec![sorted_cells(g)]
        }
    } else {
        let mut comps = LABELS.with_borrow_mut(|labels| {
            labels.label(g, univalued, diagonal, bg);
            labels.flatten();
            labels.components(g)
        });
        if !univalued {
            for c in &mut comps {
                c.sort_unstable();
            }
        }
        comps
    };
    Ok(objects_value(comps))
}

fn objects(a: &[Value]) -> DslResult<Value> {
    find_objects(&a[0], a[1].truthy(), a[2].truthy(), a[3].truthy())
}

fn o_g(a: &[Value]) -> DslResult<Value> {
    let r = a[1].as_int()?;
    if !(0..=7).contains(&r) {
        bail!(Value, "o_g mode R{r} is not one of R0..R7");
    }
    find_objects(&a[0], r & 4 != 0, r & 2 != 0, r & 1 != 0)
}

// ----- one object per colour ----------------------------------------------------------------

/// One object per colour of the grid, the colour `skip` left out.
fn color_classes(g: &Grid, skip: Option<Color>) -> Value {
    let cells = sorted_cells(g.view());
    let comps = cells
        .chunk_by(|a, b| a.color == b.color)
        .filter(|c| c.first().map(|c| c.color) != skip.map(i32::from))
        .map(<[Cell]>::to_vec)
        .collect();
    objects_value(comps)
}

fn partition(a: &[Value]) -> DslResult<Value> {
    let g = a[0].as_grid()?;
    Ok(color_classes(&g, None))
}

fn fgpartition(a: &[Value]) -> DslResult<Value> {
    let g = a[0].as_grid()?;
    let bg = background(g.view())?;
    Ok(color_classes(&g, Some(bg)))
}

fn p_g(a: &[Value]) -> DslResult<Value> {
    Ok(p_g_of(&a[0].as_grid()?.cells))
}

/// `p_g` of a grid's cells: the lane function of the batched op.
pub fn p_g_of(cells: &[Color]) -> Value {
    let colors = Histogram::of(cells).iter().map(|(c, _)| Value::Int(c as i64)).collect();
    Value::tuple(colors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference's flood fill, written plainly: from each unvisited seed, grow the set of
    /// connecting neighbours.
    fn flood(g: &Grid, univalued: bool, diagonal: bool, without_bg: bool) -> Value {
        let bg = if without_bg {
            Histogram::of(&g.cells).most_common()
        } else {
            None
        };
        let mut seen = vec![false; g.cells.len()];
        let mut objs = Vec::new();
        for start in 0..g.cells.len() {
            let val = g.cells[start];
            if seen[start] || Some(val) == bg {
                continue;
            }
            seen[start] = true;
            let (mut todo, mut cells) = (vec![start], Vec::new());
            while let Some(k) = todo.pop() {
                let (i, j) = ((k / g.w) as i64, (k % g.w) as i64);
                cells.push(Value::tuple(vec![Value::Int(g.cells[k] as i64), Value::Pair(i, j)]));
                for di in -1..=1i64 {
                    for dj in -1..=1i64 {
                        if (di, dj) == (0, 0) || (!diagonal && di != 0 && dj != 0) {
                            continue;
                        }
                        let Some(v) = g.at(i + di, j + dj) else { continue };
                        let nb = ((i + di) as usize) * g.w + (j + dj) as usize;
                        let joins = if univalued { v == val } else { Some(v) != bg };
                        if joins && !seen[nb] {
                            seen[nb] = true;
                            todo.push(nb);
                        }
                    }
                }
            }
            objs.push(Value::set(cells));
        }
        Value::set(objs)
    }

    proptest! {
        #[test]
        fn objects_are_the_flood_fill_components(
            h in 1usize..9,
            w in 1usize..9,
            colors in prop::collection::vec(0i8..4, 64),
            mode in 0i64..8,
        ) {
            let g = Grid::new(h, w, colors[..h * w].to_vec());
            let (univalued, diagonal, without_bg) = (mode & 4 != 0, mode & 2 != 0, mode & 1 != 0);
            let expected = flood(&g, univalued, diagonal, without_bg);
            let got = o_g(&[Value::grid(g.clone()), Value::Int(mode)]).unwrap();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn empty_grids_raise_and_zero_width_grids_have_no_objects() {
        let empty = Value::grid(Grid::new(0, 0, Vec::new()));
        let no_columns = Value::grid(Grid::new(2, 0, Vec::new()));
        for mode in 0..8 {
            assert!(o_g(&[empty.clone(), Value::Int(mode)]).is_err());
            let on_no_columns = o_g(&[no_columns.clone(), Value::Int(mode)]);
            if mode & 1 == 1 {
                assert!(on_no_columns.is_err());
            } else {
                assert_eq!(on_no_columns.unwrap(), Value::empty_set());
            }
        }
        assert!(o_g(&[no_columns, Value::Int(8)]).is_err());
    }

    #[test]
    fn histogram_orders_negative_colours_first() {
        let h = Histogram::of(&[3, -2, 3, 0, -2]);
        assert_eq!(h.iter().collect::<Vec<_>>(), [(-2, 2), (0, 1), (3, 2)]);
        assert_eq!(h.most_common(), Some(-2));
    }
}
