//! Canonical order for the members of index sets and objects: sorted and deduplicated, as
//! `sort(); dedup()` leaves them, but without comparisons where the points lie in a small box.
//!
//! Locations and cells come from grids of at most 30 x 30 and their shifts, so the members of
//! one set almost always fill a good part of their bounding box (by colour, row and column). A
//! bitmap over that box, read word by word, yields them in order in time linear in the members
//! (`merge` of many index sets, `mapply` gathering objects, `connect` over all pairs), where a
//! comparison sort costs `n log n` comparisons. Points spread thinly over a large box (a patch
//! shifted far away beside one at the origin) take the comparison sort.

use super::shared::{Shared, SliceBuilder};
use super::value::{Cell, Loc};

/// A point whose natural order is the lexicographic order of its (up to three) coordinates.
pub trait Point: Copy + Ord {
    fn coords(self) -> [i32; 3];
    fn from_coords(c: [i32; 3]) -> Self;
}

impl Point for Loc {
    fn coords(self) -> [i32; 3] {
        [0, self.i, self.j]
    }
    fn from_coords([_, i, j]: [i32; 3]) -> Loc {
        Loc { i, j }
    }
}

impl Point for Cell {
    fn coords(self) -> [i32; 3] {
        [self.color, self.i, self.j]
    }
    fn from_coords([color, i, j]: [i32; 3]) -> Cell {
        Cell { color, i, j }
    }
}

/// A number, as one coordinate: sets of numbers (`apply` of `size`, of `color`, of a sum over
/// many members) sort through the bitmap as points do.
impl Point for i32 {
    fn coords(self) -> [i32; 3] {
        [0, 0, self]
    }
    fn from_coords([_, _, n]: [i32; 3]) -> i32 {
        n
    }
}

/// Below this many points a comparison sort is as quick as building a bitmap.
const SMALL: usize = 24;

/// Sorts `points` and removes duplicates: the result of `points.sort(); points.dedup()`.
pub fn sort_dedup<P: Point>(points: &mut Vec<P>) {
    if points.windows(2).all(|w| w[0] < w[1]) {
        return;
    }
    if points.len() < SMALL || !by_bitmap(points) {
        // Equal points are the same point: any sort leaves them alike, and the unstable one
        // takes fewer branches that the data decides.
        points.sort_unstable();
        points.dedup();
    }
}

/// A mirror of a patch (see [`sort_mirrored`]): which way it turns the patch's points, each
/// cell keeping its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirror {
    /// The rows reversed (`hmirror`).
    Rows,
    /// The columns reversed (`vmirror`).
    Columns,
    /// Rows and columns swapped (`dmirror`).
    Diagonal,
    /// Rows and columns swapped and both reversed (`cmirror`).
    Counterdiagonal,
}

/// Rows a colour's points may span for [`sort_mirrored`]'s counting sort: a patch of a grid
/// spans at most 30; one spread wider is compared.
const MIRROR_ROWS: usize = 64;

/// Sorts `image`, the points of a sorted, unique patch moved one by one (in the patch's order)
/// by a mirror of kind `mirror`, as [`sort_dedup`] would, in time linear in the points: a
/// mirror is one to one and keeps the first coordinate (the colour), so the image's order is
/// the patch's read another way. The rows reversed, each colour's rows come in reverse
/// order; the columns reversed, each row's points do; swapped, the points come by column, then
/// row (reversed in both for the counterdiagonal), and a counting sort by row puts them in
/// order. Compared with `sort`, this takes no branch that the data decides but at the ends of
/// rows.
pub fn sort_mirrored<P: Point>(image: &mut Vec<P>, mirror: Mirror) {
    let same_color = |a: &P, b: &P| a.coords()[0] == b.coords()[0];
    let same_row = |a: &P, b: &P| a.coords()[..2] == b.coords()[..2];
    match mirror {
        Mirror::Rows => {
            for color in image.chunk_by_mut(same_color) {
                color.reverse();
                color.chunk_by_mut(same_row).for_each(<[P]>::reverse);
            }
        }
        Mirror::Columns => image.chunk_by_mut(same_row).for_each(<[P]>::reverse),
        Mirror::Diagonal | Mirror::Counterdiagonal => {
            if mirror == Mirror::Counterdiagonal {
                image.chunk_by_mut(same_color).for_each(<[P]>::reverse);
            }
            // Each colour's points, from `image`, into its place in `sorted`, where a copy of
            // them is until then.
            let mut sorted = image.clone();
            let mut at = 0;
            for color in image.chunk_by(same_color) {
                let out = &mut sorted[at..at + color.len()];
                at += color.len();
                if !counted_by_row(color, out) {
                    out.sort_unstable();
                }
            }
            *image = sorted;
        }
    }
}

/// Writes `points` (all of one colour) into `out` (as long) stably sorted by row: false, with
/// `out` untouched, where they span over [`MIRROR_ROWS`] rows.
fn counted_by_row<P: Point>(points: &[P], out: &mut [P]) -> bool {
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for p in points {
        (lo, hi) = (lo.min(p.coords()[1]), hi.max(p.coords()[1]));
    }
    let rows = (i64::from(hi) - i64::from(lo) + 1) as usize;
    if rows > MIRROR_ROWS {
        return false;
    }
    // Each row's first place in `out`, then the next free one.
    let mut at = [0u32; MIRROR_ROWS + 1];
    for p in points {
        at[(p.coords()[1] - lo) as usize + 1] += 1;
    }
    for r in 0..rows {
        at[r + 1] += at[r];
    }
    for &p in points {
        let slot = &mut at[(p.coords()[1] - lo) as usize];
        out[*slot as usize] = p;
        *slot += 1;
    }
    true
}

/// The bounding box of `points` (not empty): its lowest corner and its extent along each
/// coordinate.
fn bounds<P: Point>(points: &[P]) -> ([i32; 3], [u64; 3]) {
    let mut extent = Extent::NONE;
    extent.scan::<P, 0>(points);
    extent.bounds()
}

/// [`bounds`] of the points of all `parts` (each sorted, not all empty). In a sorted part the
/// coordinates before the first in which its first and last points differ are the same
/// throughout, and that one runs from the first point's to the last's, so only the coordinates
/// after it are scanned: the columns of index sets and of objects of one colour.
fn bounds_of_sorted_parts<P: Point>(parts: &[&[P]]) -> ([i32; 3], [u64; 3]) {
    let mut extent = Extent::NONE;
    for part in parts {
        let (Some(first), Some(last)) = (part.first(), part.last()) else {
            continue;
        };
        let (first, last) = (first.coords(), last.coords());
        for d in 0..3 {
            extent.lo[d] = extent.lo[d].min(first[d]);
            extent.hi[d] = extent.hi[d].max(last[d]);
            if first[d] != last[d] {
                match d {
                    0 => extent.scan::<P, 1>(part),
                    1 => extent.scan::<P, 2>(part),
                    _ => {}
                }
                break;
            }
        }
    }
    extent.bounds()
}

/// The lowest and highest of each coordinate of the points met so far.
struct Extent {
    lo: [i32; 3],
    hi: [i32; 3],
}

impl Extent {
    /// Before any point.
    const NONE: Extent = Extent {
        lo: [i32::MAX; 3],
        hi: [i32::MIN; 3],
    };

    /// Takes in coordinates `FROM..3` of `points`.
    fn scan<P: Point, const FROM: usize>(&mut self, points: &[P]) {
        for p in points {
            for (d, c) in p.coords().into_iter().enumerate().skip(FROM) {
                self.lo[d] = self.lo[d].min(c);
                self.hi[d] = self.hi[d].max(c);
            }
        }
    }

    /// The box: its lowest corner and its extent along each coordinate (at least one point
    /// met).
    fn bounds(&self) -> ([i32; 3], [u64; 3]) {
        let (lo, hi) = (self.lo, self.hi);
        (lo, [0, 1, 2].map(|d| (i64::from(hi[d]) - i64::from(lo[d]) + 1) as u64))
    }
}

/// How many cells of its box a bitmap over `n` points may have: 64 per point, beyond which
/// scanning or clearing it costs more than comparing.
fn cell_budget(n: usize) -> u64 {
    64 * n as u64 + 4096
}

/// The bitmap path of [`sort_dedup`]: false (and `points` untouched) where their box is over
/// [`cell_budget`].
fn by_bitmap<P: Point>(points: &mut Vec<P>) -> bool {
    let (lo, span) = bounds(points);
    let Some(bitmap) = Bitmap::of_parts(&[points], points.len(), lo, span) else {
        return false;
    };
    bitmap.overwrite(points);
    true
}

/// The union of sorted, deduplicated lists of points (the cells of objects, the locations of
/// index sets), sorted and deduplicated: `parts.concat()` then [`sort_dedup`], `total` being
/// their length in all. Where the points lie in a box within [`cell_budget`], their bits are
/// set straight from the parts, without the concatenation: a merge of many overlapping shifted
/// patches wrote and read back several times the points it keeps, and one of lines shot past
/// the grid (a box wider than 64 columns) concatenated them, then scanned them for their order
/// and their box again before it set their bits.
pub fn union_of_sorted<P: Point>(parts: &[&[P]], total: usize) -> Shared<[P]> {
    if total == 0 {
        return Shared::from_slice(&[]);
    }
    let (lo, span) = bounds_of_sorted_parts(parts);
    match Bitmap::of_parts(parts, total, lo, span) {
        Some(bitmap) => bitmap.to_shared(),
        // Spread too thinly for a bitmap: compared.
        None => {
            let mut all = parts.concat();
            all.sort_unstable();
            all.dedup();
            all.into()
        }
    }
}

/// The union of `patch` (sorted, deduplicated points) moved by each of `offsets` (rows and
/// columns), sorted and deduplicated: `mapply(lbind(shift, patch), offsets)`, the copies of a
/// tile laid over a grid. Each line of the patch (colour and row) is one word of bits, so a
/// copy costs a few operations per line, not a point moved, stored and read back each: the
/// line's word is or-ed into the union's bitmap at the copy's place. `None` where the patch or
/// the offsets are empty, the patch is over 64 columns wide, a moved coordinate leaves `i32`
/// (`shift` then makes members of another kind), or the union's box is over [`cell_budget`].
pub fn union_of_moved<P: Point>(patch: &[P], offsets: &[Loc]) -> Option<Shared<[P]>> {
    let (Some(first), Some(last), false) = (offsets.first(), offsets.last(), patch.is_empty()) else {
        return None;
    };
    let (lo, span) = bounds_of_sorted_parts(&[patch]);
    // The offsets are sorted by row: their columns are scanned.
    let (j_lo, j_hi) = offsets
        .iter()
        .fold((i32::MAX, i32::MIN), |(lo, hi), o| (lo.min(o.j), hi.max(o.j)));
    let extent = |from: i32, to: i32| (i64::from(to) - i64::from(from)) as u64;
    let (planes, rows, cols) = (span[0], span[1] + extent(first.i, last.i), span[2] + extent(j_lo, j_hi));
    // The union's box: its first and last row and column stay inside `i32`.
    let union_lo = [lo[0], lo[1].checked_add(first.i)?, lo[2].checked_add(j_lo)?];
    let fits = |lo: i32, extent: u64| i64::from(lo) + extent as i64 - 1 <= i64::from(i32::MAX);
    if span[2] > 64 || !fits(union_lo[1], rows) || !fits(union_lo[2], cols) {
        return None;
    }
    let lines = planes.checked_mul(rows)?;
    if lines.checked_mul(cols)? > cell_budget(patch.len().saturating_mul(offsets.len())) {
        return None;
    }
    // Each line (colour and row) of the union in whole words (at most twice the box's cells,
    // a line holding one or more): the bit of a column is `line * stride + col`.
    let per_line = cols.div_ceil(64);
    let stride = 64 * per_line;
    // The patch's lines: each one's first bit in the union's bitmap (moved by the first row
    // and column of the offsets) and its columns as bits from the patch's first column.
    let mut patch_lines: Vec<(u64, u64)> = Vec::new();
    for p in patch {
        let [plane, row, col] = [0, 1, 2].map(|d| (i64::from(p.coords()[d]) - i64::from(lo[d])) as u64);
        let start = (plane * rows + row) * stride;
        match patch_lines.last_mut() {
            Some((s, bits)) if *s == start => *bits |= 1 << col,
            _ => patch_lines.push((start, 1 << col)),
        }
    }
    // A word past the end: a line's bits shifted into the next word may reach it (as zeros).
    let mut words = vec![0u64; (lines * per_line) as usize + 1];
    for o in offsets {
        let moved_by = extent(first.i, o.i) * stride + extent(j_lo, o.j);
        for &(start, bits) in &patch_lines {
            let k = start + moved_by;
            let (word, shift) = ((k / 64) as usize, k % 64);
            words[word] |= bits << shift;
            if shift != 0 {
                words[word + 1] |= bits >> (64 - shift);
            }
        }
    }
    words.pop();
    let union = Bitmap::Lines(LineBitmap {
        lo: union_lo,
        planes,
        rows,
        per_line: per_line as usize,
        words,
    });
    Some(union.to_shared())
}

/// The distinct points of some lists as bits, for reading them back in order: a word per line
/// where the box is at most 64 columns wide, else one bit string over the box.
enum Bitmap {
    Lines(LineBitmap),
    Box(BoxBitmap),
}

impl Bitmap {
    /// The points of all `parts`, `n` of them, in the box at `lo` of `span` ([`bounds`]);
    /// `None` where the box is over [`cell_budget`].
    fn of_parts<P: Point>(parts: &[&[P]], n: usize, lo: [i32; 3], span: [u64; 3]) -> Option<Bitmap> {
        if let Some(mut lines) = LineBitmap::new(lo, span, n) {
            // Part by part: a flattening iterator checked which part it was in on every point.
            for part in parts {
                part.iter().for_each(|&p| lines.set(p));
            }
            return Some(Bitmap::Lines(lines));
        }
        BoxBitmap::in_box(parts, n, lo, span).map(Bitmap::Box)
    }

    /// How many distinct points are set.
    fn count(&self) -> usize {
        let words = match self {
            Bitmap::Lines(lines) => &lines.words,
            Bitmap::Box(bitmap) => &bitmap.words,
        };
        words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Calls `f` on each point set, in order.
    #[inline]
    fn each_point<P: Point>(&self, f: impl FnMut(P)) {
        match self {
            Bitmap::Lines(lines) => lines.each_point(f),
            Bitmap::Box(bitmap) => bitmap.each_point(f),
        }
    }

    /// The points set, in order, written where the value will hold them.
    fn to_shared<P: Point>(&self) -> Shared<[P]> {
        let mut out = SliceBuilder::new(self.count());
        let room = out.room();
        let mut written = 0;
        self.each_point(|p| {
            room[written].write(p);
            written += 1;
        });
        // SAFETY: the first `written` places of the room were written just now.
        unsafe { out.set_written(written) };
        out.finish()
    }

    /// Replaces `points`, those the bitmap was made of, by the points set, in order: written
    /// over the points already read (there are no more of them), where pushing checked the
    /// list's room on every point.
    fn overwrite<P: Point>(&self, points: &mut Vec<P>) {
        let mut distinct = 0;
        self.each_point(|p| {
            points[distinct] = p;
            distinct += 1;
        });
        points.truncate(distinct);
    }
}

/// Points in a box, line by line (colour and row), a point one bit of its line's words: one
/// word for a box at most 64 columns wide, as [`Bitmap::of_parts`] makes them, more for a wide
/// union of copies ([`union_of_moved`]). The lines are read in order without a division per
/// point.
struct LineBitmap {
    lo: [i32; 3],
    planes: u64,
    rows: u64,
    /// Words per line: one, but for [`union_of_moved`] of a union over 64 columns wide.
    per_line: usize,
    words: Vec<u64>,
}

impl LineBitmap {
    /// An empty bitmap over the box at `lo` of `span`, for `n` points; `None` where the box is
    /// over 64 columns or [`cell_budget`].
    fn new(lo: [i32; 3], [planes, rows, cols]: [u64; 3], n: usize) -> Option<LineBitmap> {
        let lines = planes
            .checked_mul(rows)
            .filter(|&lines| cols <= 64 && lines.saturating_mul(64) <= cell_budget(n))?;
        Some(LineBitmap {
            lo,
            planes,
            rows,
            per_line: 1,
            words: vec![0; lines as usize],
        })
    }

    /// Sets `p`, which lies in the box (of one word per line).
    #[inline]
    fn set<P: Point>(&mut self, p: P) {
        let [a, b, c] = p.coords();
        let lo = self.lo;
        let line = (i64::from(a) - i64::from(lo[0])) as u64 * self.rows + (i64::from(b) - i64::from(lo[1])) as u64;
        self.words[line as usize] |= 1 << (i64::from(c) - i64::from(lo[2]));
    }

    /// Calls `f` on each point set, in order.
    fn each_point<P: Point>(&self, mut f: impl FnMut(P)) {
        let mut lines = self.words.chunks_exact(self.per_line);
        for plane in 0..self.planes as i32 {
            for row in 0..self.rows as i32 {
                let line = lines.next().unwrap_or_default();
                for (w, &word) in line.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let col = 64 * w as i32 + bits.trailing_zeros() as i32;
                        bits &= bits - 1;
                        f(P::from_coords([self.lo[0] + plane, self.lo[1] + row, self.lo[2] + col]));
                    }
                }
            }
        }
    }
}

/// `p` moved by `(di, dj)` rows and columns, as `shift` moves a member; `None` where a row or
/// column leaves `i32` (`shift` then makes members of another kind).
pub fn moved<P: Point>(p: P, (di, dj): (i64, i64)) -> Option<P> {
    let [c, i, j] = p.coords();
    let (i, j) = (i64::from(i).checked_add(di)?, i64::from(j).checked_add(dj)?);
    Some(P::from_coords([c, i32::try_from(i).ok()?, i32::try_from(j).ok()?]))
}

/// Membership in one set of points by a bit per cell of its bounding box: a look-up is an
/// index and a bit test where a binary search walks `log n` members. Built for a set that is
/// searched again and again (the set algebra of [`crate::dsl::prims`] against the same grid
/// cells for every offset of a pattern), and by [`sort_dedup`] for points in a wide box, read
/// back in order.
pub struct BoxBitmap {
    lo: [i32; 3],
    span: [u64; 3],
    words: Vec<u64>,
}

impl BoxBitmap {
    /// The bitmap of `points`, or `None` where their box is over [`cell_budget`] (points spread
    /// thinly) or there are none.
    pub fn of<P: Point>(points: &[P]) -> Option<BoxBitmap> {
        if points.is_empty() {
            return None;
        }
        let (lo, span) = bounds(points);
        BoxBitmap::in_box(&[points], points.len(), lo, span)
    }

    /// The bitmap of the points of all `parts`, `n` of them, given their box ([`bounds`]):
    /// `None` where it is over [`cell_budget`].
    fn in_box<P: Point>(parts: &[&[P]], n: usize, lo: [i32; 3], span: [u64; 3]) -> Option<BoxBitmap> {
        let cells = span[0].checked_mul(span[1])?.checked_mul(span[2])?;
        if cells > cell_budget(n) {
            return None;
        }
        let mut bitmap = BoxBitmap {
            lo,
            span,
            words: vec![0; cells.div_ceil(64) as usize],
        };
        for part in parts {
            for &p in part.iter() {
                if let Some(k) = bitmap.index(p) {
                    bitmap.words[(k / 64) as usize] |= 1 << (k % 64);
                }
            }
        }
        Some(bitmap)
    }

    /// Whether `p` is one of the points.
    #[inline]
    pub fn contains<P: Point>(&self, p: P) -> bool {
        self.index(p)
            .is_some_and(|k| self.words[(k / 64) as usize] >> (k % 64) & 1 != 0)
    }

    /// `points` placed in this bitmap's box, to be asked about again and again, each time
    /// moved by another offset ([`Placed::all_moved`]).
    pub fn place<P: Point>(&self, points: &[P]) -> Placed {
        let [planes, rows, cols] = self.span;
        let offset = |c: i32, d: usize| i64::from(c) - i64::from(self.lo[d]);
        let points = points
            .iter()
            .map(|p| {
                let [c, i, j] = p.coords();
                let plane = offset(c, 0);
                // A point of a colour the box lacks is never in it.
                let first_bit = match (0..planes as i64).contains(&plane) {
                    true => plane * (rows * cols) as i64,
                    false => -1,
                };
                [first_bit, offset(i, 1), offset(j, 2)]
            })
            .collect();
        Placed { points, rows, cols }
    }

    /// How many of `points` are this bitmap's points moved by `(di, dj)` (rows and columns):
    /// the size of `shift(these, (di, dj)) & points`, each of `points` moved back and looked
    /// up. `None` where the move takes a row or column of these points out of `i32` (`shift`
    /// then makes members of another kind): the box's corners are points' coordinates.
    pub fn count_moved_back<P: Point>(&self, points: &[P], (di, dj): (i64, i64)) -> Option<usize> {
        let far = [0, 1, 2].map(|d| (i64::from(self.lo[d]) + self.span[d] as i64 - 1) as i32);
        moved(P::from_coords(self.lo), (di, dj))?;
        moved(P::from_coords(far), (di, dj))?;
        let back = (di.checked_neg()?, dj.checked_neg()?);
        Some(
            points
                .iter()
                .filter(|&&q| moved(q, back).is_some_and(|p| self.contains(p)))
                .count(),
        )
    }

    /// How many points lie in rows `top..=bottom` and columns `left..=right` (of any colour):
    /// each row of the rectangle, clipped to the box, one masked count of its bits, where a
    /// scan of the points walked every point of those rows.
    pub fn count_in_rect(&self, (top, bottom, left, right): (i32, i32, i32, i32)) -> usize {
        // The offsets within the box of the rectangle's first and last row or column.
        let clip = |d: usize, from: i32, to: i32| {
            let lo = i64::from(self.lo[d]);
            let from = (i64::from(from) - lo).max(0);
            let to = (i64::from(to) - lo).min(self.span[d] as i64 - 1);
            (from <= to).then_some((from as u64, to as u64))
        };
        let (Some((first_row, last_row)), Some((first_col, last_col))) = (clip(1, top, bottom), clip(2, left, right))
        else {
            return 0;
        };
        let [planes, rows, cols] = self.span;
        let mut n = 0;
        for plane in 0..planes {
            let mut start = (plane * rows + first_row) * cols + first_col;
            for _ in first_row..=last_row {
                n += self.count_bits(start, last_col - first_col + 1);
                start += cols;
            }
        }
        n
    }

    /// How many of the `len` bits from bit `start` are set.
    #[inline]
    fn count_bits(&self, start: u64, len: u64) -> usize {
        // The `len` (1 to 64) bits from bit `k`, which lie in one word.
        let in_word = |k: u64, len: u64| {
            (self.words[(k / 64) as usize] >> (k % 64) & u64::MAX >> (64 - len)).count_ones() as usize
        };
        if start % 64 + len <= 64 {
            // As a row of a box of a grid's width mostly is.
            return in_word(start, len);
        }
        let (mut k, end, mut n) = (start, start + len, 0);
        while k < end {
            let take = (64 - k % 64).min(end - k);
            n += in_word(k, take);
            k += take;
        }
        n
    }

    /// Calls `f` on each point, in their order (the box's cells are numbered in it). The bits come
    /// in ascending order, so the line (colour and row) of each is found by stepping on from
    /// the line of the one before, not by dividing its number by the box's sides.
    fn each_point<P: Point>(&self, mut f: impl FnMut(P)) {
        let [_, rows, cols] = self.span;
        // The line the last point lay on: its first cell's number, its colour and row.
        let (mut line_start, mut plane, mut row) = (0u64, 0u64, 0u64);
        for (w, &word) in self.words.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let k = w as u64 * 64 + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                while k >= line_start + cols {
                    line_start += cols;
                    row += 1;
                    if row == rows {
                        (row, plane) = (0, plane + 1);
                    }
                }
                f(P::from_coords([
                    self.lo[0] + plane as i32,
                    self.lo[1] + row as i32,
                    self.lo[2] + (k - line_start) as i32,
                ]));
            }
        }
    }

    /// The bit of `p`, if `p` lies in the box.
    #[inline]
    fn index<P: Point>(&self, p: P) -> Option<u64> {
        let mut k = 0;
        for ((c, lo), span) in p.coords().into_iter().zip(self.lo).zip(self.span) {
            // Below the corner wraps to a huge offset, outside the span.
            let offset = (i64::from(c) - i64::from(lo)) as u64;
            if offset >= span {
                return None;
            }
            k = k * span + offset;
        }
        Some(k)
    }
}

/// Points placed in a [`BoxBitmap`]'s box ([`BoxBitmap::place`]): for each, the first bit of
/// its colour's plane (`-1` for a colour the box lacks), and its row and column from the
/// box's corner.
pub struct Placed {
    points: Vec<[i64; 3]>,
    rows: u64,
    cols: u64,
}

impl Placed {
    /// Whether every point moved by `(di, dj)` is in `bitmap` (`inside`), or none is (not
    /// `inside`): the bitmap the points were placed in. The caller makes sure the moved
    /// coordinates stay inside `i32`.
    pub fn all_moved(&self, bitmap: &BoxBitmap, (di, dj): (i64, i64), inside: bool) -> bool {
        self.points.iter().all(|&[first_bit, i, j]| {
            let (row, col) = ((i + di) as u64, (j + dj) as u64);
            let holds = first_bit >= 0 && row < self.rows && col < self.cols && {
                let k = first_bit as u64 + row * self.cols + col;
                bitmap.words[(k / 64) as usize] >> (k % 64) & 1 != 0
            };
            holds == inside
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference<P: Point>(mut v: Vec<P>) -> Vec<P> {
        v.sort();
        v.dedup();
        v
    }

    fn cell((color, i, j): (i32, i32, i32)) -> Cell {
        Cell { color, i, j }
    }

    proptest! {
        /// A bitmap answers membership as a search of the points would, for points in and
        /// around the box, and is refused only where the box is over the budget.
        #[test]
        fn a_box_bitmap_holds_exactly_its_points(
            points in prop::collection::vec((-2i32..12, -5i32..35, -5i32..35), 0..300),
            far in prop::option::of((i32::MIN..i32::MAX, i32::MIN..i32::MAX, i32::MIN..i32::MAX)),
            queries in prop::collection::vec((-3i32..13, -7i32..37, -7i32..37), 0..200),
        ) {
            let mut points = reference(points.into_iter().map(cell).collect::<Vec<_>>());
            points.extend(far.map(cell));
            let points = reference(points);
            match BoxBitmap::of(&points) {
                None => {
                    let cells = (!points.is_empty()).then(|| bounds(&points).1.iter().try_fold(1u64, |n, &s| n.checked_mul(s)));
                    prop_assert!(cells.map_or(true, |cells| cells.map_or(true, |n| n > cell_budget(points.len()))));
                }
                Some(bitmap) => {
                    for q in queries.into_iter().map(cell).chain(points.iter().copied()).chain(far.map(cell)) {
                        prop_assert_eq!(bitmap.contains(q), points.binary_search(&q).is_ok(), "{:?}", q);
                    }
                }
            }
        }

        /// A rectangle's count in a bitmap is the number of points whose row and column lie in
        /// it, of every colour: rectangles inside, across and outside the box, at the ends of
        /// `i32`, in boxes up to 64 columns wide and wider (rows across words).
        #[test]
        fn a_rectangle_count_is_the_points_in_the_rectangle(
            points in prop::collection::vec((0i32..3, -5i32..35, -40i32..40), 1..300),
            width in 1i32..90,
            rects in prop::collection::vec(
                prop_oneof![
                    4 => (-8i32..40, -8i32..40, -45i32..45, -45i32..45),
                    1 => (Just(i32::MIN), i32::MIN..i32::MAX, Just(i32::MIN), i32::MIN..i32::MAX),
                    1 => (i32::MIN..i32::MAX, Just(i32::MAX), i32::MIN..i32::MAX, Just(i32::MAX)),
                ],
                1..20,
            ),
        ) {
            let points = reference(points.into_iter().map(|(c, i, j)| cell((c, i, j.rem_euclid(width) - width / 2))).collect());
            // Few points spread over the box have none.
            let Some(bitmap) = BoxBitmap::of(&points) else {
                return Ok(());
            };
            for (top, bottom, left, right) in rects {
                let inside = points.iter().filter(|p| (top..=bottom).contains(&p.i) && (left..=right).contains(&p.j)).count();
                prop_assert_eq!(bitmap.count_in_rect((top, bottom, left, right)), inside);
            }
        }

        /// Each mirror's image of a sorted patch (cells of a few colours, or locations) in the
        /// order of [`sort_dedup`]: patches of a grid, spread over more rows than the counting
        /// sort takes, and far apart.
        #[test]
        fn mirrored_patches_as_sort_dedup(
            points in prop::collection::vec((0i32..4, -5i32..35, -40i32..40), 0..200),
            rows in prop_oneof![Just(30i32), Just(100)],
            far in prop::option::of((0i32..4, -1_000_000i32..1_000_000, -1_000_000i32..1_000_000)),
        ) {
            let mut cells: Vec<Cell> = points.into_iter().map(|(c, i, j)| cell((c, i.rem_euclid(rows), j))).collect();
            cells.extend(far.map(cell));
            let cells = reference(cells);
            let locs = reference(cells.iter().map(|c| Loc { i: c.i, j: c.j }).collect::<Vec<_>>());
            let (top, bottom) = (cells.iter().map(|c| c.i).min().unwrap_or(0), cells.iter().map(|c| c.i).max().unwrap_or(0));
            let (left, right) = (cells.iter().map(|c| c.j).min().unwrap_or(0), cells.iter().map(|c| c.j).max().unwrap_or(0));
            let f = |mirror: Mirror, i: i32, j: i32| match mirror {
                Mirror::Rows => (top + bottom - i, j),
                Mirror::Columns => (i, left + right - j),
                Mirror::Diagonal => (j - left + top, i - top + left),
                Mirror::Counterdiagonal => (top + right - j, left + bottom - i),
            };
            for mirror in [Mirror::Rows, Mirror::Columns, Mirror::Diagonal, Mirror::Counterdiagonal] {
                let mut image: Vec<Cell> = cells.iter().map(|c| {
                    let (i, j) = f(mirror, c.i, c.j);
                    Cell { color: c.color, i, j }
                }).collect();
                let want = reference(image.clone());
                sort_mirrored(&mut image, mirror);
                prop_assert_eq!(image, want, "{:?} of cells", mirror);
                let mut image: Vec<Loc> = locs.iter().map(|l| {
                    let (i, j) = f(mirror, l.i, l.j);
                    Loc { i, j }
                }).collect();
                let want = reference(image.clone());
                sort_mirrored(&mut image, mirror);
                prop_assert_eq!(image, want, "{:?} of locations", mirror);
            }
        }

        /// Dense boxes (the bitmap: a word per row up to 64 columns, one bit string beyond),
        /// sparse ones (the sort), duplicates, negative coordinates.
        #[test]
        fn locations_as_sort_dedup(
            points in prop::collection::vec((-40i32..40, -40i32..40), 0..300),
            width in 1i32..90,
            far in prop::option::of((i32::MIN..i32::MAX, i32::MIN..i32::MAX)),
        ) {
            let mut v: Vec<Loc> = points.into_iter().map(|(i, j)| Loc { i, j: j.rem_euclid(width) - width / 2 }).collect();
            v.extend(far.map(|(i, j)| Loc { i, j }));
            let want = reference(v.clone());
            sort_dedup(&mut v);
            prop_assert_eq!(v, want);
        }

        /// As for locations, with several colours: boxes up to 64 columns wide and wider.
        #[test]
        fn cells_as_sort_dedup(
            points in prop::collection::vec((-2i32..12, -5i32..35, -40i32..40), 0..400),
            width in 1i32..90,
            far in prop::option::of((i32::MIN..i32::MAX, i32::MIN..i32::MAX, i32::MIN..i32::MAX)),
        ) {
            let mut v: Vec<Cell> = points.into_iter().map(|(c, i, j)| cell((c, i, j.rem_euclid(width) - width / 2))).collect();
            v.extend(far.map(cell));
            let want = reference(v.clone());
            sort_dedup(&mut v);
            prop_assert_eq!(v, want);
        }
        /// The union of sorted parts is the sorted, deduplicated concatenation: overlapping
        /// parts in a box up to 64 columns wide (a word per line), wider (a bit string over the
        /// box), parts far apart (compared), empty parts among them.
        #[test]
        fn a_union_of_sorted_parts_as_sort_dedup(
            parts in prop::collection::vec(
                (prop::collection::vec((0i32..10, 0i32..30, 0i32..30), 0..60), -3i32..3, -40i32..40, 0i32..4),
                0..12,
            ),
        ) {
            let parts: Vec<Vec<Cell>> = parts
                .into_iter()
                .map(|(cells, dc, dj, stretch)| {
                    reference(cells.into_iter().map(|(c, i, j)| cell((c + dc, i, j * (stretch + 1) + dj))).collect())
                })
                .collect();
            let slices: Vec<&[Cell]> = parts.iter().map(Vec::as_slice).collect();
            let total = slices.iter().map(|s| s.len()).sum();
            prop_assert_eq!(&union_of_sorted(&slices, total)[..], &reference(parts.concat())[..]);
            let locs: Vec<Vec<Loc>> = parts.iter().map(|p| reference(p.iter().map(|c| Loc { i: c.i, j: c.j }).collect())).collect();
            let slices: Vec<&[Loc]> = locs.iter().map(Vec::as_slice).collect();
            let total = slices.iter().map(|s| s.len()).sum();
            prop_assert_eq!(&union_of_sorted(&slices, total)[..], &reference(locs.concat())[..]);
        }
    }

    proptest! {
        /// The box of sorted parts, read from their ends and the coordinates after the first
        /// that varies, is the box of all their points: cells of one colour and of several,
        /// locations, numbers, single points, empty parts and the ends of `i32`.
        #[test]
        fn the_box_of_sorted_parts_is_the_box_of_their_points(
            parts in prop::collection::vec(
                (prop::collection::vec((0i32..3, -5i32..35, -40i32..40), 0..40), prop::bool::ANY),
                1..8,
            ),
            far in prop::option::of((i32::MIN..i32::MAX, i32::MIN..i32::MAX, i32::MIN..i32::MAX)),
        ) {
            let mut parts: Vec<Vec<Cell>> = parts
                .into_iter()
                .map(|(cells, one_colour)| {
                    reference(cells.into_iter().map(|(c, i, j)| cell((if one_colour { 1 } else { c }, i, j))).collect())
                })
                .collect();
            parts.extend(far.map(|p| vec![cell(p)]));
            prop_assume!(parts.iter().any(|p| !p.is_empty()));
            let slices: Vec<&[Cell]> = parts.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(bounds_of_sorted_parts(&slices), bounds(&parts.concat()));
            let locs: Vec<Vec<Loc>> = parts.iter().map(|p| reference(p.iter().map(|c| Loc { i: c.i, j: c.j }).collect())).collect();
            let slices: Vec<&[Loc]> = locs.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(bounds_of_sorted_parts(&slices), bounds(&locs.concat()));
            let numbers: Vec<Vec<i32>> = parts.iter().map(|p| reference(p.iter().map(|c| c.j).collect())).collect();
            let slices: Vec<&[i32]> = numbers.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(bounds_of_sorted_parts(&slices), bounds(&numbers.concat()));
        }
    }

    #[test]
    fn extreme_corners_of_the_coordinate_range() {
        let corners = [i32::MIN, i32::MAX];
        let mut v: Vec<Cell> = Vec::new();
        for k in 0..40 {
            v.push(cell((corners[k % 2], corners[k / 2 % 2], corners[k / 4 % 2])));
        }
        let want = reference(v.clone());
        sort_dedup(&mut v);
        assert_eq!(v, want);
    }
}
