//! Objects found on a grid: `objects` (connected components), `partition` and `fgpartition`
//! (one object per colour), and the search dialect's `o_g` (`objects` with its three flags
//! packed into one integer) and `p_g` (the palette as an ascending tuple). Also the grid
//! helper they share with the patch family, [`sorted_cells`] (colour counts are
//! [`common::Histogram`]).
//!
//! `objects` is the hottest primitive of the published solvers, so it is written for speed.
//! The reference floods from each unvisited cell in hash order; the components it finds do
//! not depend on that order, so the port finds them in one row-major pass instead: each row
//! is cut into runs of connecting cells (read from masks of its cells, [`RowRuns`]), and
//! union-find joins every run to the runs of the row above that it touches. A second pass
//! copies each run into its component. The working arrays live in a per-thread [`Labels`]
//! reused across calls, so a call allocates only its result. The result comes out in
//! canonical order without a generic sort: row-major order is sorted within a one-coloured
//! object (a many-coloured one is sorted by colour with a counting sort), and objects are
//! ordered by their first cell, which decides the canonical order because two objects never
//! share a cell.

use std::cell::RefCell;

use crate::dsl::error::DslResult;
use crate::dsl::registry::PrimSpec;
use crate::dsl::shared::{Shared, SliceBuilder};
use crate::dsl::value::{Cell, Color, Grid, GridView, Items, Value};
use crate::{bail, prim};

use super::common::{self, slot, unequal, Against, Histogram};
use super::generic;
use super::rows;

pub const PRIMS: &[PrimSpec] = &[
    prim!(objects, [Grid, Boolean, Boolean, Boolean] -> Objects, "connected components (univalued, diagonal, without_bg)"),
    prim!(partition, [Grid] -> Objects, "one object per colour"),
    prim!(fgpartition, [Grid] -> Objects, "one object per colour, the most common one left out"),
    prim!(o_g, [Grid, Integer] -> Objects, "objects with flags R = 4*univalued + 2*diagonal + without_bg"),
    prim!(p_g, [Grid] -> Tuple, "the grid's colours as an ascending tuple"),
];

/// A grid's cells sorted by (colour, row, column): the reference's `asobject`. A counting sort
/// where every colour is [`narrow`](common::narrow), else [`sorted_cells_by_sorting`].
pub(super) fn sorted_cells(g: GridView<'_>) -> Vec<Cell> {
    match Histogram::of(g.cells) {
        Histogram::Small { lo, counts } => sorted_cells_by_counts(g, &counts, |c| (c - lo) as usize),
        Histogram::Narrow { counts, .. } => sorted_cells_by_counts(g, &counts, slot),
        Histogram::Wide(_) => sorted_cells_by_sorting(g),
    }
}

/// [`sorted_cells`] by a counting sort, given the cells of each colour in `counts`, in
/// ascending order of colour, at the index `index` gives it.
fn sorted_cells_by_counts<const N: usize>(
    g: GridView<'_>,
    counts: &[u32; N],
    index: impl Fn(Color) -> usize,
) -> Vec<Cell> {
    let mut next = [0usize; N];
    let mut at = 0;
    for (n, &count) in next.iter_mut().zip(counts) {
        (*n, at) = (at, at + count as usize);
    }
    // Every slot is written once (the counts are the grid's own): not cleared first.
    let n = g.cells.len();
    let mut out = Vec::with_capacity(n);
    let room = &mut out.spare_capacity_mut()[..n];
    for i in 0..g.h {
        for (j, &c) in g.row(i).iter().enumerate() {
            let pos = &mut next[index(c)];
            room[*pos].write(Cell {
                color: c,
                i: i as i32,
                j: j as i32,
            });
            *pos += 1;
        }
    }
    debug_assert_eq!(counts.iter().map(|&k| k as usize).sum::<usize>(), n);
    // SAFETY: the slots of each colour's cells are `next`'s starts up to their counts, which
    // partition `0..n`; every cell of the grid was written to its colour's next slot.
    unsafe { out.set_len(n) };
    out
}

/// The simple path of [`sorted_cells`], for any colours.
fn sorted_cells_by_sorting(g: GridView<'_>) -> Vec<Cell> {
    let mut out: Vec<Cell> = (0..g.h)
        .flat_map(|i| {
            g.row(i).iter().enumerate().map(move |(j, &c)| Cell {
                color: c,
                i: i as i32,
                j: j as i32,
            })
        })
        .collect();
    out.sort_unstable();
    out
}

// ----- connected components -----------------------------------------------------------------

/// No label: a label not yet chosen for a run.
const NONE: u32 = u32::MAX;

/// A horizontal run of connecting cells of one row: columns `start..end`, starting with a
/// cell of colour `color` (with `univalued`, all its cells have it).
#[derive(Clone, Copy, Default)]
struct Run {
    start: u32,
    end: u32,
    label: u32,
    color: Color,
}

/// The working arrays of the component labelling. They only grow, to the most a grid can
/// need (a run or a label per cell), and are written by index with the counts kept apart:
/// a push would reload each vector's length and capacity after every write.
#[derive(Default)]
struct Labels {
    /// The runs of every row, row after row, left to right within a row.
    runs: Vec<Run>,
    /// Per row: the index of its first run (and one more entry: the number of runs).
    rows: Vec<usize>,
    /// How many labels there are.
    labels: usize,
    /// Per label: its parent in the union-find forest, never above the label itself.
    parent: Vec<u32>,
    /// Per label: how many cells its runs hold; after [`Labels::flatten`], per root, the size
    /// of its component.
    size: Vec<u32>,
    /// Per label: the colour of the run that created it (with `univalued`, its component's).
    color: Vec<Color>,
    /// Per root: the index of its component in the output.
    rank: Vec<u32>,
    /// The roots, listed ascending by [`Labels::flatten`] (a wide colour's sort may reorder
    /// them).
    order: Vec<u32>,
    /// Per component, in the output's order: its size.
    sizes: Vec<u32>,
}

thread_local! {
    static LABELS: RefCell<Labels> = RefCell::new(Labels::default());
}

/// Makes `v` at least `n` long.
fn grow<T: Copy + Default>(v: &mut Vec<T>, n: usize) {
    if v.len() < n {
        v.resize(n, T::default());
    }
}

/// The root of a label in the union-find forest, halving the path on the way.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let grand = parent[parent[x as usize] as usize];
        parent[x as usize] = grand;
        x = grand;
    }
    x
}

/// The runs of connecting cells of a row that are not of the background, as `(start, end)`
/// column ranges, left to right. `UNIVALUED`: cells connect where they are of one colour;
/// otherwise, where neither is `bg`.
enum RowRuns<'r, const UNIVALUED: bool> {
    /// A row under 64 cells wide, read once into two masks, a bit per cell, without a branch
    /// per cell: the first cells of the runs left (`starts`), and the cuts, where a run of
    /// connecting cells or of `bg` starts, and the row's end. A run ends at the first cut after
    /// its start.
    Masks { starts: u64, cuts: u64 },
    /// A wider row, scanned from column `at`.
    Scan {
        row: &'r [Color],
        bg: Option<Color>,
        at: usize,
    },
}

impl<'r, const UNIVALUED: bool> RowRuns<'r, UNIVALUED> {
    #[inline]
    fn new(row: &'r [Color], bg: Option<Color>) -> Self {
        if row.len() >= 64 {
            return RowRuns::Scan { row, bg, at: 0 };
        }
        let end = 1u64 << row.len();
        let foreground = match bg {
            Some(bg) => unequal(row, Against::Color(bg)),
            None => end - 1,
        };
        let cuts = match UNIVALUED {
            // Where the colour changes, and the first cell.
            true => match row.len() {
                0 => 1,
                n => unequal(&row[1..], Against::Cells(&row[..n - 1])) << 1 | 1,
            },
            // Where a cell is of `bg` and the one before not, or the reverse.
            false => foreground ^ (foreground << 1),
        };
        RowRuns::Masks {
            starts: foreground & cuts,
            cuts: cuts | end,
        }
    }
}

impl<const UNIVALUED: bool> Iterator for RowRuns<'_, UNIVALUED> {
    type Item = (usize, usize);

    #[inline]
    fn next(&mut self) -> Option<(usize, usize)> {
        match self {
            RowRuns::Masks { starts, cuts } => {
                if *starts == 0 {
                    return None;
                }
                let start = starts.trailing_zeros();
                *starts &= *starts - 1;
                let end = (*cuts & (u64::MAX << start << 1)).trailing_zeros();
                Some((start as usize, end as usize))
            }
            RowRuns::Scan { row, bg, at } => loop {
                if *at >= row.len() {
                    return None;
                }
                let (start, v) = (*at, row[*at]);
                let is_bg = *bg == Some(v);
                *at += 1;
                while *at < row.len()
                    && (if UNIVALUED {
                        row[*at] == v
                    } else {
                        (*bg == Some(row[*at])) == is_bg
                    })
                {
                    *at += 1;
                }
                if !is_bg {
                    return Some((start, *at));
                }
            },
        }
    }
}

/// Folds the label `other` of a connecting run into `l`, the label chosen so far for the
/// current run: the first one met is taken, later ones are joined to it under the smaller
/// root.
fn meet(parent: &mut [u32], l: u32, other: u32) -> u32 {
    if l == NONE || l == other {
        return other;
    }
    let (ra, rb) = (find(parent, l), find(parent, other));
    if ra < rb {
        parent[rb as usize] = ra;
    } else if rb < ra {
        parent[ra as usize] = rb;
    }
    l
}

impl Labels {
    /// Pass 1: cuts every row into runs of connecting cells (of one colour when
    /// `UNIVALUED`, of any colour but `bg` otherwise) and labels each run, joining it to the
    /// runs of the row above that it touches (by a side, or a corner too when `diagonal`).
    /// Kept out of line, as is pass 2: inlined into one function, they spill more.
    #[inline(never)]
    fn label<const UNIVALUED: bool>(&mut self, g: GridView<'_>, diagonal: bool, bg: Option<Color>) {
        let most = g.cells.len();
        grow(&mut self.runs, most);
        grow(&mut self.rows, g.h + 1);
        grow(&mut self.parent, most);
        grow(&mut self.size, most);
        grow(&mut self.color, most);
        let (runs, rows) = (&mut self.runs[..], &mut self.rows[..]);
        let (parent, size, color) = (&mut self.parent[..], &mut self.size[..], &mut self.color[..]);
        let reach = diagonal as u32;
        let (mut n, mut labels) = (0, 0);
        let mut above = 0;
        for (i, row_start) in rows[..g.h].iter_mut().enumerate() {
            let first = n;
            *row_start = first;
            let row = g.row(i);
            for (start, end) in RowRuns::<UNIVALUED>::new(row, bg) {
                let v = row[start];
                let (start, end) = (start as u32, end as u32);
                // The runs above that end before this one (less a corner) touch neither it
                // nor any later run of this row.
                let prev = &runs[..first];
                while above < first && prev[above].end + reach <= start {
                    above += 1;
                }
                let mut l = NONE;
                for r in prev[above..].iter().take_while(|r| r.start < end + reach) {
                    if !UNIVALUED || r.color == v {
                        l = meet(parent, l, r.label);
                    }
                }
                if l == NONE {
                    l = labels as u32;
                    labels += 1;
                    parent[l as usize] = l;
                    size[l as usize] = 0;
                    color[l as usize] = v;
                }
                size[l as usize] += end - start;
                runs[n] = Run {
                    start,
                    end,
                    label: l,
                    color: v,
                };
                n += 1;
            }
            above = first;
        }
        rows[g.h] = n;
        self.labels = labels;
    }

    /// Points every label straight at its root, gathers the sizes at the roots and lists
    /// the roots in `order`, ascending. Labels are visited upwards, so a parent (never above
    /// its child) already points at its root.
    fn flatten(&mut self) {
        self.order.clear();
        let (parent, size) = (&mut self.parent[..self.labels], &mut self.size[..self.labels]);
        for x in 0..parent.len() {
            let root = parent[parent[x] as usize];
            parent[x] = root;
            if root as usize == x {
                self.order.push(root);
            } else {
                size[root as usize] += size[x];
            }
        }
    }

    /// Pass 2: the components, in row-major order within each (see [`canonical`]).
    #[inline(never)]
    fn components(&mut self, g: GridView<'_>, univalued: bool) -> Vec<SliceBuilder<Cell>> {
        let Labels {
            runs,
            rows,
            parent,
            size,
            color,
            rank,
            order,
            sizes,
            ..
        } = self;
        // Only the roots' ranks are read.
        grow(rank, parent.len());
        if univalued {
            rank_by_color(color, order, rank);
        } else {
            for (n, &root) in order.iter().enumerate() {
                rank[root as usize] = n as u32;
            }
        }
        // Each component's cells are written where its value will hold them.
        sizes.clear();
        sizes.resize(order.len(), 0);
        for &root in order.iter() {
            sizes[rank[root as usize] as usize] = size[root as usize];
        }
        let mut comps: Vec<SliceBuilder<Cell>> = sizes.iter().map(|&n| SliceBuilder::new(n as usize)).collect();
        for i in 0..g.h {
            let row = g.row(i);
            for run in &runs[rows[i]..rows[i + 1]] {
                let comp = &mut comps[rank[parent[run.label as usize] as usize] as usize];
                let (start, end) = (run.start as usize, run.end as usize);
                let cell = |color, j: usize| Cell {
                    color,
                    i: i as i32,
                    j: j as i32,
                };
                // A run of one colour needs no reading of the grid.
                if univalued {
                    comp.extend_with(end - start, |k| cell(run.color, start + k));
                } else {
                    let colors = &row[start..end];
                    comp.extend_with(colors.len(), |k| cell(colors[k], start + k));
                }
            }
        }
        comps
    }
}

/// Ranks the roots (ascending, that is in ascending order of their components' first cells)
/// stably by colour, which with row-major cells gives the canonical order of one-coloured
/// components (see [`canonical`]): `rank[root]` is its component's index in the output. A
/// counting sort where every colour is narrow, else a stable sort; the roots keep their order
/// where they are sorted already (often one colour).
fn rank_by_color(color: &[Color], roots: &mut [u32], rank: &mut [u32]) {
    let of = |root: &u32| color[*root as usize];
    if !roots.windows(2).all(|w| of(&w[0]) <= of(&w[1])) {
        if !roots.iter().all(|root| common::narrow(of(root))) {
            roots.sort_by_key(of);
        } else {
            let mut next = [0u32; 256];
            let (mut lo, mut hi) = (usize::MAX, 0);
            for root in roots.iter() {
                let k = slot(of(root));
                next[k] += 1;
                (lo, hi) = (lo.min(k), hi.max(k));
            }
            let mut at = 0;
            for n in next.iter_mut().take(hi + 1).skip(lo) {
                (*n, at) = (at, at + *n);
            }
            for root in roots.iter() {
                let n = &mut next[slot(of(root))];
                rank[*root as usize] = *n;
                *n += 1;
            }
            return;
        }
    }
    for (n, &root) in roots.iter().enumerate() {
        rank[root as usize] = n as u32;
    }
}

/// The components as an Objects value in canonical order, given in the order of
/// [`order_roots`] with their cells in row-major order. A one-coloured object's row-major
/// cells are sorted already; a many-coloured one is sorted here, and such objects are then
/// ordered by their first cell, which decides the canonical order because two objects never
/// share a cell.
fn canonical(mut comps: Vec<SliceBuilder<Cell>>, univalued: bool) -> Value {
    if !univalued {
        let mut scratch = Vec::new();
        for c in &mut comps {
            sort_row_major_by_color(c.written_mut(), &mut scratch);
        }
        comps.sort_unstable_by_key(|c| c.written().first().copied());
    }
    objects_value(comps.into_iter().map(SliceBuilder::finish))
}

/// Cells in row-major order sorted by (colour, row, column): where the colours span at most
/// [`common::SMALL_SPAN`], a counting sort by colour, stable, so that each colour's cells keep
/// their row-major order (through `scratch`, a copy of the cells), else a comparison sort.
fn sort_row_major_by_color(cells: &mut [Cell], scratch: &mut Vec<Cell>) {
    let Some(first) = cells.first() else {
        return;
    };
    let (lo, hi) = cells.iter().fold((first.color, first.color), |(lo, hi), c| {
        (lo.min(c.color), hi.max(c.color))
    });
    if lo == hi {
        return;
    }
    let span = i64::from(hi) - i64::from(lo) + 1;
    if span > common::SMALL_SPAN as i64 {
        cells.sort_unstable();
        return;
    }
    let index = |c: &Cell| (c.color - lo) as usize;
    let mut next = [0usize; common::SMALL_SPAN];
    for c in cells.iter() {
        next[index(c)] += 1;
    }
    let mut at = 0;
    for n in &mut next {
        (*n, at) = (at, at + *n);
    }
    scratch.clear();
    scratch.extend_from_slice(cells);
    for c in scratch.iter() {
        let pos = &mut next[index(c)];
        cells[*pos] = *c;
        *pos += 1;
    }
}

/// Objects already in canonical order as an Objects value.
fn objects_value(comps: impl Iterator<Item = Shared<[Cell]>>) -> Value {
    Value::Set(Items::new(comps.map(Value::Object).collect()))
}

/// The reference's `objects(grid, univalued, diagonal, without_bg)`.
fn find_objects(grid: &Value, univalued: bool, diagonal: bool, without_bg: bool) -> DslResult<Value> {
    match grid.as_grid() {
        Ok(g) => objects_of(g.view(), univalued, diagonal, without_bg),
        Err(_) => ragged_objects(grid, univalued, diagonal, without_bg),
    }
}

/// `objects` of a tuple of tuples that is no grid (ragged, or with cells no [`Color`] holds).
/// The reference takes `mostcolor` over every cell, then `h, w = len(grid), len(grid[0])`, and
/// reads every location of `h` by `w`: a row shorter than the first is an `IndexError`, and the
/// cells of longer rows past `w` are never reached, so the objects are those of the grid cut to
/// the first row's width. It only compares cells with `==`, so the cut grid is labelled with
/// each cell's rank among the distinct values, and the ranks turned back into the values.
/// Without `without_bg` the background is `None`, which only a cell that is `None` equals.
fn ragged_objects(grid: &Value, univalued: bool, diagonal: bool, without_bg: bool) -> DslResult<Value> {
    let rows = rows::of(grid)?;
    // `bg = mostcolor(grid) if without_bg else None`: then `None` cells are background too.
    let bg = match without_bg {
        true => match common::extreme_color(&rows::color_counts(&rows), true) {
            Some(bg) => bg,
            None => bail!(Value, "max() arg is an empty sequence"),
        },
        false => Value::None,
    };
    let Some(w) = rows.first().map(Vec::len) else {
        bail!(Index, "tuple index out of range");
    };
    if rows.iter().any(|r| r.len() < w) {
        bail!(Index, "tuple index out of range");
    }
    let ranks = common::Ranks::of(rows.iter().flat_map(|r| &r[..w]));
    let cells = rows.iter().flat_map(|r| &r[..w]).map(|v| ranks.rank(v)).collect();
    let cut = Grid::new(rows.len(), w, cells);
    let found = objects_with(cut.view(), univalued, diagonal, Some(ranks.rank(&bg)))?;
    let objs = found
        .members()
        .unwrap_or_default()
        .iter()
        .map(|o| ranks.unrank(o))
        .collect::<DslResult<_>>()?;
    Ok(Value::set(objs))
}

/// `objects` of a borrowed grid: the primitive's core, and the lane function of the batched
/// op (`batch::cpu`).
pub fn objects_of(g: GridView<'_>, univalued: bool, diagonal: bool, without_bg: bool) -> DslResult<Value> {
    let bg = if without_bg {
        Some(common::background(g.cells)?)
    } else {
        None
    };
    objects_with(g, univalued, diagonal, bg)
}

/// `objects` with the background colour given (`None`: every cell belongs to an object).
fn objects_with(g: GridView<'_>, univalued: bool, diagonal: bool, bg: Option<Color>) -> DslResult<Value> {
    if g.h == 0 {
        bail!(Index, "tuple index out of range (objects of an empty grid)");
    }
    if !univalued && bg.is_none() {
        // Every cell connects to its neighbours: the whole grid is one object.
        let whole = (!g.cells.is_empty()).then(|| Shared::from(sorted_cells(g)));
        return Ok(objects_value(whole.into_iter()));
    }
    let comps = LABELS.with_borrow_mut(|labels| {
        if univalued {
            labels.label::<true>(g, diagonal, bg);
        } else {
            labels.label::<false>(g, diagonal, bg);
        }
        labels.flatten();
        labels.components(g, univalued)
    });
    Ok(canonical(comps, univalued))
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
        .filter(|c| c.first().map(|c| c.color) != skip)
        .map(Shared::from_slice);
    objects_value(comps)
}

fn partition(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(
        rows::on_grid(&a[0], |g| Ok(color_classes(g, None)), |r| rows::partition(r, false)),
        || generic::partition(&a[0], false),
    )
}

fn fgpartition(a: &[Value]) -> DslResult<Value> {
    generic::or_generic(fgpartition_fast(a), || generic::partition(&a[0], true))
}

fn fgpartition_fast(a: &[Value]) -> DslResult<Value> {
    rows::on_grid(
        &a[0],
        |g| Ok(color_classes(g, Some(common::background(&g.cells)?))),
        |r| rows::partition(r, true),
    )
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
            colors in prop::collection::vec(prop_oneof![3 => 0..4 as Color, 1 => 126..130 as Color], 64),
            mode in 0i64..8,
        ) {
            let g = Grid::new(h, w, colors[..h * w].to_vec());
            let (univalued, diagonal, without_bg) = (mode & 4 != 0, mode & 2 != 0, mode & 1 != 0);
            let expected = flood(&g, univalued, diagonal, without_bg);
            let got = o_g(&[Value::grid(g.clone()), Value::Int(mode)]).unwrap();
            prop_assert_eq!(got, expected);
        }

        /// Grids with rows of 64 cells and more, whose runs are scanned cell by cell.
        #[test]
        fn objects_of_wide_grids_are_the_flood_fill_components(
            h in 1usize..4,
            w in 60usize..70,
            colors in prop::collection::vec(prop_oneof![6 => Just(0 as Color), 1 => 1..4 as Color], 210),
            mode in 0i64..8,
        ) {
            let g = Grid::new(h, w, colors[..h * w].to_vec());
            let (univalued, diagonal, without_bg) = (mode & 4 != 0, mode & 2 != 0, mode & 1 != 0);
            let expected = flood(&g, univalued, diagonal, without_bg);
            prop_assert_eq!(o_g(&[Value::grid(g.clone()), Value::Int(mode)]).unwrap(), expected);
        }

        /// A row's runs read from its masks are those a scan of its cells finds.
        #[test]
        fn row_runs_by_masks_are_the_scanned_runs(
            row in prop::collection::vec(prop_oneof![3 => 0..3 as Color, 1 => any::<Color>()], 0..64),
            bg in prop::option::of(0..3 as Color),
        ) {
            fn both<const UNIVALUED: bool>(row: &[Color], bg: Option<Color>) -> [Vec<(usize, usize)>; 2] {
                let scanned: RowRuns<'_, UNIVALUED> = RowRuns::Scan { row, bg, at: 0 };
                [RowRuns::<UNIVALUED>::new(row, bg).collect(), scanned.collect()]
            }
            let [masks, scanned] = both::<true>(&row, bg);
            prop_assert_eq!(masks, scanned);
            let [masks, scanned] = both::<false>(&row, bg);
            prop_assert_eq!(masks, scanned);
        }

        /// The counting sort of a grid's cells (over a small span of colours or a wide one, or
        /// sorting where some colour has no slot) is the comparison sort.
        #[test]
        fn cells_sort_by_counting_as_by_comparing(
            h in 1usize..9,
            w in 1usize..9,
            colors in prop::collection::vec(prop_oneof![3 => 0..4 as Color, 1 => 126..130 as Color], 64),
        ) {
            let g = Grid::new(h, w, colors[..h * w].to_vec());
            prop_assert_eq!(sorted_cells(g.view()), sorted_cells_by_sorting(g.view()));
        }

        /// The sort of a component's row-major cells by colour (counting over a small span of
        /// colours, comparing over a wide one) is the comparison sort.
        #[test]
        fn row_major_cells_sort_by_colour_as_by_comparing(
            colors in prop::collection::vec(
                prop_oneof![3 => 0..4 as Color, 1 => -3..20 as Color, 1 => any::<Color>()],
                0..40,
            ),
            w in 1i32..7,
        ) {
            let at = |k: usize| (k as i32 / w, k as i32 % w);
            let mut cells: Vec<Cell> =
                colors.iter().enumerate().map(|(k, &color)| Cell { color, i: at(k).0, j: at(k).1 }).collect();
            let mut expected = cells.clone();
            expected.sort_unstable();
            sort_row_major_by_color(&mut cells, &mut Vec::new());
            prop_assert_eq!(cells, expected);
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
        assert!(o_g(&[no_columns.clone(), Value::Int(8)]).is_err());
        assert!(o_g(&[no_columns, Value::Int(-1)]).is_err());
    }

    #[test]
    fn p_g_is_the_palette_as_a_tuple() {
        let g = |cells: Vec<Color>| Value::grid(Grid::new(2, 2, cells));
        let three = p_g(&[g(vec![7, 0, 3, 0])]).unwrap();
        assert_eq!(three, Value::tuple(vec![Value::Int(0), Value::Int(3), Value::Int(7)]));
        assert_eq!(p_g(&[g(vec![5, 2, 2, 5])]).unwrap(), Value::Pair(2, 5));
    }
}
