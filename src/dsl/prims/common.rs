//! Views shared by the primitive families: patches as locations or cells, the way the
//! reference's `toindices` and `for v, (i, j) in obj` loops see them; a grid's colour counts
//! and its background (`mostcolor`); the cells of a row that differ from a colour or from
//! another row, or that hold a colour, as a mask ([`unequal`], [`of_color`]); Python's slice
//! rule.

use std::borrow::Cow;
use std::ops::Range;

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::points;
use crate::dsl::shared::SliceRef;
use crate::dsl::value::{Cell, Color, Loc, Value};

/// Converts a Python integer to a patch coordinate or colour (`i32`). Inlined, its error built
/// out of line: it runs once per coordinate of every patch a mirror or a shift moves.
#[inline]
pub fn coord(n: i64) -> DslResult<i32> {
    i32::try_from(n).map_err(|_| coord_out_of_range(n))
}

#[cold]
#[inline(never)]
fn coord_out_of_range(n: i64) -> DslError {
    DslError::TooLarge(format!("coordinate {n} is out of range").into())
}

/// A member `(i, j)` of an index set as a location, unpacked as `for i, j in patch` does.
fn member_loc(v: &Value) -> DslResult<Loc> {
    let (i, j) = v.unpack_pair()?;
    Ok(Loc {
        i: coord(i)?,
        j: coord(j)?,
    })
}

/// A member `(colour, (i, j))` of an object as a cell, unpacked as `for v, (i, j) in obj` does.
/// A colour no [`Cell`] holds (no integer, or past `i32`) is [`DslError::ColorRange`]: the
/// callers then take the object's [`any_cells`].
pub fn member_cell(v: &Value) -> DslResult<Cell> {
    if let Value::Cell(c) = v {
        return Ok(*c);
    }
    let (color, l) = member_any_cell(v)?;
    let color = match color.as_int() {
        Ok(c) => i32::try_from(c).ok(),
        Err(_) => None,
    };
    let color = color.ok_or_else(|| DslError::ColorRange(color_repr(v).into()))?;
    Ok(Cell { color, i: l.i, j: l.j })
}

/// Members as cells, in their order ([`member_cell`] of each). Compact cells are copied as they
/// are: each one passed through a `DslResult` was stored in two parts and read back across
/// them, which stalled the loop on every cell (perf: a third of solve_c3f564a4, which paints a
/// tuple of 5,000 cells).
pub fn member_cells(members: &[Value]) -> DslResult<Vec<Cell>> {
    let mut cells = Vec::with_capacity(members.len());
    for m in members {
        cells.push(match m {
            Value::Cell(c) => *c,
            other => member_cell(other)?,
        });
    }
    Ok(cells)
}

/// The repr of a member's colour, for [`DslError::ColorRange`].
fn color_repr(v: &Value) -> String {
    v.member(0).map_or_else(String::new, |c| c.repr_cut(80))
}

/// A member `(value, (i, j))` of an object whose value is anything (`None`, say), unpacked as
/// `for value, (i, j) in obj` does.
fn member_any_cell(v: &Value) -> DslResult<(Value, Loc)> {
    let (color, at) = v.unpack2()?;
    Ok((color, member_loc(&at)?))
}

/// The cells of an object whose colours are any values, in canonical order, unique: the simple
/// path of [`cells`], for objects that are no [`Value::Object`] (a `recolor` with `None`).
pub fn any_cells(obj: &Value) -> DslResult<Vec<(Value, Loc)>> {
    let mut c = any_cells_in_order(obj)?;
    c.sort();
    c.dedup();
    Ok(c)
}

/// The cells of an object whose colours are any values, in iteration order: a tuple's own
/// order (duplicates kept), a set's canonical order.
pub fn any_cells_in_order(obj: &Value) -> DslResult<Vec<(Value, Loc)>> {
    match obj.members() {
        Some(members) => members.iter().map(member_any_cell).collect(),
        None => Err(DslError::type_error("an object", obj)),
    }
}

/// The locations of a patch, sorted and unique: the reference's `toindices`.
pub fn locs(patch: &Value) -> DslResult<SliceRef<'_, Loc>> {
    if let Value::Indices(l) = patch {
        return Ok(SliceRef::Held(l));
    }
    let mut l = locs_in_any_order(patch)?.into_owned();
    if l.is_empty() {
        return Ok(SliceRef::Held(Value::no_locs()));
    }
    points::sort_dedup(&mut l);
    Ok(SliceRef::Built(l))
}

/// The locations of a patch in the order its members come, repeats kept (an index set's are
/// sorted and unique already), with [`locs`]' errors: for a caller that does the same at every
/// location whatever their order (`fill` writes one colour at each), which then skips the sort
/// of a merged tuple of lines or an object's cells.
pub fn locs_in_any_order(patch: &Value) -> DslResult<Cow<'_, [Loc]>> {
    // Pairs and compact cells read in place, as `member_cells` reads cells (a location passed
    // through a `DslResult` stalls the loop: a sixth of solve_5c2c9af4, which fills a merged
    // tuple of boxes).
    let members_to_locs = |members: &[Value]| -> DslResult<Vec<Loc>> {
        let Some(of_cells) = holds_cells(members.first())? else {
            return Ok(Vec::new());
        };
        let mut locs = Vec::with_capacity(members.len());
        for m in members {
            locs.push(match (of_cells, m) {
                (false, Value::Pair(i, j)) => match (i32::try_from(*i), i32::try_from(*j)) {
                    (Ok(i), Ok(j)) => Loc { i, j },
                    _ => member_loc(m)?,
                },
                (false, other) => member_loc(other)?,
                (true, Value::Cell(c)) => c.loc(),
                (true, other) => member_any_cell(other)?.1,
            });
        }
        Ok(locs)
    };
    match patch {
        Value::Indices(l) => Ok(Cow::Borrowed(l)),
        Value::Object(cells) => Ok(Cow::Owned(cells.iter().map(|c| c.loc()).collect())),
        // Members read in place.
        Value::Tuple(items) | Value::Set(items) => Ok(Cow::Owned(members_to_locs(items)?)),
        // A tuple of pairs may arrive as a grid of width 2 (from Python, say).
        _ if patch.is_tuple() || patch.is_set() => {
            Ok(Cow::Owned(members_to_locs(&patch.members().unwrap_or_default())?))
        }
        // Python treats any empty container, `()` included, as an empty patch.
        other if other.is_empty() => Ok(Cow::Borrowed(&[])),
        _ => Err(DslError::type_error("a patch", patch)),
    }
}

/// Whether a patch's members are cells, as the reference decides it: by its first member's
/// second item being a tuple (`next(iter(patch))[1]`, which only a tuple of two or more
/// members survives), from that first member; `None` for no members.
pub fn holds_cells(first: Option<&Value>) -> DslResult<Option<bool>> {
    let Some(first) = first else {
        return Ok(None);
    };
    if !first.is_tuple() {
        return Err(DslError::mismatch(
            "a patch",
            format_args!("'{}' object is not subscriptable", first.type_name()),
        ));
    }
    match first.member(1) {
        Some(second) => Ok(Some(second.is_tuple())),
        None => Err(DslError::Index("tuple index out of range".into())),
    }
}

/// The cells of an object, sorted and unique; [`DslError::ColorRange`] for a colour no [`Cell`]
/// holds.
pub fn cells(obj: &Value) -> DslResult<SliceRef<'_, Cell>> {
    match obj {
        Value::Object(c) => Ok(SliceRef::Held(c)),
        _ if obj.is_tuple() || obj.is_set() => {
            let members = obj.members().unwrap_or_default();
            let mut c = member_cells(&members)?;
            if c.is_empty() {
                return Ok(SliceRef::Held(Value::no_cells()));
            }
            points::sort_dedup(&mut c);
            Ok(SliceRef::Built(c))
        }
        other if other.is_empty() => Ok(SliceRef::Held(Value::no_cells())),
        _ => Err(DslError::type_error("an object", obj)),
    }
}

/// The distinct values among some cells or colours, in canonical order, each standing for its
/// rank (a [`Color`], in the same order): a primitive that only compares cells with `==`
/// (`objects`, `occurrences`, the periods) runs its compact path on the ranks of values no
/// [`Color`] holds (`None`), then turns the ranks back into the values.
pub struct Ranks<'a>(Vec<&'a Value>);

impl<'a> Ranks<'a> {
    pub fn of(values: impl IntoIterator<Item = &'a Value>) -> Ranks<'a> {
        let mut values: Vec<&Value> = values.into_iter().collect();
        values.sort();
        values.dedup();
        Ranks(values)
    }

    /// The rank of a value; one past the last rank for a value not among them.
    pub fn rank(&self, v: &Value) -> Color {
        self.0.binary_search(&v).unwrap_or(self.0.len()) as Color
    }

    /// The value of a rank.
    pub fn value(&self, rank: Color) -> &'a Value {
        self.0[rank as usize]
    }

    /// An object of cells whose colours are ranks, with each rank's value back.
    pub fn unrank(&self, obj: &Value) -> DslResult<Value> {
        let cell = |c: &Cell| Value::duo(self.value(c.color).clone(), Value::loc(c.loc()));
        Ok(Value::set(cells(obj)?.iter().map(cell).collect()))
    }

    /// Cells of any colours as compact cells of their colours' ranks (sorted as they were).
    pub fn cells(&self, cells: &[(Value, Loc)]) -> Vec<Cell> {
        cells
            .iter()
            .map(|(color, l)| Cell {
                color: self.rank(color),
                i: l.i,
                j: l.j,
            })
            .collect()
    }
}

/// Values with their counts, in canonical order; of equal values the first met stands for them
/// all, as in Python's `set(values)`.
pub fn tally<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<(Value, usize)> {
    let mut values: Vec<&Value> = values.into_iter().collect();
    values.sort();
    values
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0].clone(), run.len()))
        .collect()
}

/// Largest number of members the port lets one container have; past it a primitive returns
/// [`DslError::TooLarge`] instead of exhausting memory (the reference would stall or die).
pub const MAX_MEMBERS: usize = 1 << 20;

/// The bytes a member of a container is reckoned at when checking a memory budget before
/// building it ([`memory::room_for`](crate::dsl::memory::room_for)): a [`Value`]'s size.
pub const MEMBER_BYTES: usize = size_of::<Value>();

thread_local! {
    static MEMBER_LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_MEMBERS) };
}

/// A lower cap than [`MAX_MEMBERS`] on the members of the containers that primitives build on
/// this thread (checked before building, as for [`MAX_MEMBERS`]), while the guard lives: a
/// search's size budget, so that a candidate asking for a huge `product` fails at once.
/// Dropping the guard restores the cap before it.
pub struct MemberLimit {
    previous: usize,
}

impl MemberLimit {
    pub fn set(limit: usize) -> MemberLimit {
        MemberLimit {
            previous: MEMBER_LIMIT.with(|m| m.replace(limit.min(MAX_MEMBERS))),
        }
    }

    /// The cap in force on this thread.
    pub fn get() -> usize {
        MEMBER_LIMIT.with(std::cell::Cell::get)
    }
}

impl Drop for MemberLimit {
    fn drop(&mut self) {
        MEMBER_LIMIT.with(|m| m.set(self.previous));
    }
}

/// Largest number of cells the port lets one grid have: more than [`MAX_MEMBERS`], as a cell is
/// four bytes where a member is a boxed value, and the reference builds a canvas of millions of
/// cells in a fraction of a second (`solve_feca6190`'s five cells a side per object).
pub const MAX_GRID_CELLS: usize = 1 << 24;

/// The reference's `mostcolor`/`leastcolor` rule over colour counts: `max(set(values),
/// key=values.count)` meets the colours in canonical (ascending) order and keeps the first
/// extreme, so ties go to the smallest colour. `counts` holds `(colour, count)` pairs in
/// ascending colour order.
pub fn extreme_color<C: Clone>(counts: &[(C, usize)], most: bool) -> Option<C> {
    let mut best: Option<(&C, usize)> = None;
    for (color, n) in counts {
        let n = *n;
        if n == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => {
                if most {
                    n > b
                } else {
                    n < b
                }
            }
        };
        if better {
            best = Some((color, n));
        }
    }
    best.map(|(c, _)| c.clone())
}

/// Whether a colour has a slot in the fast paths' 256-entry tables: the `i8` range, which holds
/// every ARC colour and the DSL's negative constants. Wider colours take the simple paths.
pub fn narrow(c: Color) -> bool {
    (-128..=127).contains(&c)
}

/// The table slot of a [`narrow`] colour; ascending slots are ascending colours (-128 -> 0,
/// 0 -> 128).
pub fn slot(c: Color) -> usize {
    debug_assert!(narrow(c), "colour {c} has no slot");
    (c as i8 as u8 ^ 0x80) as usize
}

fn slot_color(k: usize) -> Color {
    Color::from(k as u8 as i8 ^ i8::MIN)
}

/// What [`unequal`] compares a row's cells with.
#[derive(Clone, Copy)]
pub enum Against<'r> {
    Color(Color),
    /// The cells of another row, as long.
    Cells(&'r [Color]),
}

impl Against<'_> {
    #[inline]
    fn at(self, k: usize) -> Color {
        match self {
            Against::Color(c) => c,
            Against::Cells(cells) => cells[k],
        }
    }
}

/// A bit per cell of `a` (at most 64 cells), set where it differs from `b` at its index: four
/// cells at a time on x86-64.
#[inline]
pub fn unequal(a: &[Color], b: Against<'_>) -> u64 {
    debug_assert!(a.len() <= 64);
    let mut bits = 0u64;
    let mut k = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let load = |cells: &[Color], k: usize| {
            let four = &cells[k..k + 4];
            // SAFETY: `four` holds four `i32`s, read unaligned.
            unsafe { _mm_loadu_si128(four.as_ptr().cast()) }
        };
        while k + 4 <= a.len() {
            // SAFETY: SSE2, which every x86-64 CPU has.
            let equal = unsafe {
                let other = match b {
                    Against::Color(c) => _mm_set1_epi32(c),
                    Against::Cells(cells) => load(cells, k),
                };
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(load(a, k), other)))
            };
            bits |= u64::from(!equal as u32 & 0xF) << k;
            k += 4;
        }
    }
    while k < a.len() {
        bits |= u64::from(a[k] != b.at(k)) << k;
        k += 1;
    }
    bits
}

/// A bit per cell of `row` (at most 64 cells), set where it holds `color`.
#[inline]
pub fn of_color(row: &[Color], color: Color) -> u64 {
    let cells = u64::MAX.checked_shr(64 - row.len() as u32).unwrap_or(0);
    !unequal(row, Against::Color(color)) & cells
}

/// The widest colour range [`Histogram::of`] counts with its interleaved small tables.
pub const SMALL_SPAN: usize = 16;

/// The colour counts of a grid.
pub enum Histogram {
    /// Every colour [`narrow`] and within [`SMALL_SPAN`] of the smallest, `lo` (the ARC case):
    /// cells of colour `lo + k` counted in `counts[k]`. Small enough to build and move on the
    /// stack without a table of every colour to clear and copy.
    Small { lo: Color, counts: [u32; SMALL_SPAN] },
    /// Every colour [`narrow`], over a wider span: counted in a table.
    Narrow {
        /// Cells per colour, indexed by [`slot`].
        counts: Box<[u32; 256]>,
        /// The slots from the smallest to the largest colour present.
        range: Range<usize>,
    },
    /// Some colour beyond: `(colour, count)` of each colour present, ascending.
    Wide(Vec<(Color, usize)>),
}

impl Histogram {
    pub fn of(cells: &[Color]) -> Histogram {
        let Some(&first) = cells.first() else {
            return Histogram::Small {
                lo: 0,
                counts: [0; SMALL_SPAN],
            };
        };
        let (lo, hi) = cells.iter().fold((first, first), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        if !narrow(lo) || !narrow(hi) {
            return Histogram::by_sorting(cells);
        }
        let range = slot(lo)..slot(hi) + 1;
        if range.len() > SMALL_SPAN {
            let mut counts = Box::new([0u32; 256]);
            for &c in cells {
                counts[slot(c)] += 1;
            }
            return Histogram::Narrow { counts, range };
        }
        // Four small tables filled in turn, so that a run of one colour does not wait on a
        // single counter.
        let mut lanes = [[0u32; SMALL_SPAN]; 4];
        let offset = |c: Color| (c - lo) as usize % SMALL_SPAN;
        let mut quads = cells.chunks_exact(4);
        for q in &mut quads {
            for (lane, &c) in lanes.iter_mut().zip(q) {
                lane[offset(c)] += 1;
            }
        }
        for &c in quads.remainder() {
            lanes[0][offset(c)] += 1;
        }
        let counts = std::array::from_fn(|k| lanes.iter().map(|lane| lane[k]).sum());
        Histogram::Small { lo, counts }
    }

    /// The simple path, for any colours: the cells sorted, and equal runs counted.
    pub fn by_sorting(cells: &[Color]) -> Histogram {
        let mut sorted = cells.to_vec();
        sorted.sort_unstable();
        Histogram::Wide(sorted.chunk_by(|a, b| a == b).map(|run| (run[0], run.len())).collect())
    }

    /// `(colour, count)` of each colour present, ascending by colour.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (Color, usize)> + '_ {
        let (small, narrow, wide) = match self {
            &Histogram::Small { lo, ref counts } => (
                Some(
                    (0..SMALL_SPAN)
                        .filter(|&k| counts[k] > 0)
                        .map(move |k| (lo + k as Color, counts[k] as usize)),
                ),
                None,
                None,
            ),
            Histogram::Narrow { counts, range } => (
                None,
                Some(
                    range
                        .clone()
                        .filter(|&k| counts[k] > 0)
                        .map(|k| (slot_color(k), counts[k] as usize)),
                ),
                None,
            ),
            Histogram::Wide(present) => (None, None, Some(present.iter().copied())),
        };
        let (small, narrow, wide) = (
            small.into_iter().flatten(),
            narrow.into_iter().flatten(),
            wide.into_iter().flatten(),
        );
        small.chain(narrow).chain(wide)
    }

    /// The most common colour, ties to the smallest: the reference's `mostcolor` of a grid.
    pub fn most_common(&self) -> Option<Color> {
        // `max_by_key` keeps the last of equal maxima: walking down, that is the smallest colour.
        self.iter().rev().max_by_key(|&(_, n)| n).map(|(c, _)| c)
    }

    /// The least common colour, ties to the smallest (the rule of [`extreme_color`]).
    pub fn least_common(&self) -> Option<Color> {
        // `min_by_key` keeps the first of equal minima, the smallest colour.
        self.iter().min_by_key(|&(_, n)| n).map(|(c, _)| c)
    }
}

/// `mostcolor(grid)` of a grid's cells (ties to the smallest colour), or the reference's
/// `ValueError` for a grid without cells: the background of `objects`, `underfill`, ...
pub fn background(cells: &[Color]) -> DslResult<Color> {
    match Histogram::of(cells).most_common() {
        Some(c) => Ok(c),
        None => Err(DslError::Value(
            "max() arg is an empty sequence (mostcolor of an empty grid)".into(),
        )),
    }
}

/// The index range of Python's slice `seq[start:stop]` over `len` items.
pub fn py_slice(len: usize, start: i64, stop: i64) -> Range<usize> {
    let n = len as i64;
    let clamp = |x: i64| (if x < 0 { (x + n).max(0) } else { x.min(n) }) as usize;
    let (s, e) = (clamp(start), clamp(stop));
    s..e.max(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::Grid;

    #[test]
    fn a_grid_of_width_two_is_a_patch_of_its_rows() {
        // ((1, 2), (3, 4)) is a tuple of locations in Python, whatever its representation.
        let grid = Value::grid(Grid::new(2, 2, vec![1, 2, 3, 4]));
        let tuple = Value::tuple(vec![Value::Pair(1, 2), Value::Pair(3, 4)]);
        assert_eq!(*locs(&grid).unwrap(), *locs(&tuple).unwrap());
        assert_eq!(&locs(&grid).unwrap()[..], &[Loc { i: 1, j: 2 }, Loc { i: 3, j: 4 }]);
        assert!(cells(&grid).is_err(), "rows of ints are not cells");
    }

    /// Compact cells and cells spelled as tuples give the same cells, in order; a member that
    /// is no cell raises as `member_cell` does.
    #[test]
    fn member_cells_reads_compact_and_spelled_out_cells_alike() {
        let compact = Value::Cell(Cell { color: 3, i: 1, j: 2 });
        let spelled = Value::Tuple(crate::dsl::value::Items::new(vec![Value::Int(4), Value::Pair(0, 5)]));
        let cells = member_cells(&[compact.clone(), spelled.clone(), compact]).unwrap();
        let expected = [(3, 1, 2), (4, 0, 5), (3, 1, 2)].map(|(color, i, j)| Cell { color, i, j });
        assert_eq!(cells, expected);
        let bad = Value::Int(7);
        assert_eq!(
            member_cells(&[spelled, bad.clone()]).unwrap_err().to_string(),
            member_cell(&bad).unwrap_err().to_string()
        );
    }

    #[test]
    fn histogram_orders_negative_colours_first() {
        let h = Histogram::of(&[3, -2, 3, 0, -2]);
        assert_eq!(h.iter().collect::<Vec<_>>(), [(-2, 2), (0, 1), (3, 2)]);
        assert_eq!(h.most_common(), Some(-2));
        let wide = Histogram::of(&[100, -100, 5, 100]);
        assert_eq!(wide.iter().collect::<Vec<_>>(), [(-100, 1), (5, 1), (100, 2)]);
        assert_eq!(wide.most_common(), Some(100));
        assert_eq!(Histogram::of(&[]).most_common(), None);
        let wider = Histogram::of(&[300, -2, 300, 128, -129]);
        assert!(matches!(wider, Histogram::Wide(_)));
        assert_eq!(
            wider.iter().collect::<Vec<_>>(),
            [(-129, 1), (-2, 1), (128, 1), (300, 2)]
        );
        assert_eq!(wider.most_common(), Some(300));
    }

    /// The histogram of `cells` lists, forwards and backwards, and picks the most common colour
    /// as sorting the cells does.
    fn counts_as_sorting(table: &Histogram, cells: &[Color]) -> Result<(), proptest::test_runner::TestCaseError> {
        let sorted = Histogram::by_sorting(cells);
        proptest::prop_assert_eq!(table.iter().collect::<Vec<_>>(), sorted.iter().collect::<Vec<_>>());
        proptest::prop_assert_eq!(
            table.iter().rev().collect::<Vec<_>>(),
            sorted.iter().rev().collect::<Vec<_>>()
        );
        proptest::prop_assert_eq!(table.most_common(), sorted.most_common());
        Ok(())
    }

    proptest::proptest! {
        #[test]
        fn the_table_counts_as_sorting_does(cells in proptest::collection::vec(-128..=127 as Color, 0..200)) {
            let table = Histogram::of(&cells);
            proptest::prop_assert!(!matches!(table, Histogram::Wide(_)));
            counts_as_sorting(&table, &cells)?;
        }

        #[test]
        fn a_small_span_counts_as_sorting_does(
            lo in -128..=112 as Color,
            offsets in proptest::collection::vec(0..16 as Color, 0..200),
        ) {
            let cells: Vec<Color> = offsets.iter().map(|&k| lo + k).collect();
            let table = Histogram::of(&cells);
            let small = matches!(table, Histogram::Small { .. });
            proptest::prop_assert!(small);
            counts_as_sorting(&table, &cells)?;
        }

        /// A tuple's locations read in place are each member's as `member_loc` (or a cell's
        /// location, as `member_any_cell`) reads it, errors included: pairs and cells, fitting
        /// `i32` or not, other members, a cell among pairs and a pair among cells.
        #[test]
        fn a_tuples_locations_are_each_members(
            members in proptest::collection::vec((0..6u8, -3i64..4, -3i64..4), 1..12),
        ) {
            let far = i64::from(i32::MAX) + 1;
            let member = |&(kind, i, j): &(u8, i64, i64)| match kind {
                0 | 1 => Value::Pair(i, j),
                2 => Value::Pair(i, far),
                3 | 4 => Value::Cell(crate::dsl::value::Cell { color: 1, i: i as i32, j: j as i32 }),
                _ => Value::tuple(vec![Value::Int(1), Value::Pair(far, j)]),
            };
            let members: Vec<Value> = members.iter().map(member).collect();
            let patch = Value::tuple(members.clone());
            let of_cells = holds_cells(members.first());
            let each: DslResult<Vec<Loc>> = match of_cells {
                Ok(Some(true)) => members.iter().map(|m| member_any_cell(m).map(|(_, l)| l)).collect(),
                Ok(_) => members.iter().map(member_loc).collect(),
                Err(e) => Err(e),
            };
            // A tuple of two may be another kind of value (two locations, say), read as members.
            let read = locs_in_any_order(&patch).map(|l| l.into_owned());
            proptest::prop_assert_eq!(read, each);
        }
    }

    #[test]
    fn slices_follow_python() {
        assert_eq!(py_slice(5, 1, 3), 1..3);
        assert_eq!(py_slice(5, -2, 3), 3..3);
        assert_eq!(py_slice(5, -2, 7), 3..5);
        assert_eq!(py_slice(5, -9, -6), 0..0);
        assert_eq!(py_slice(5, -9, -2), 0..3);
        assert_eq!(py_slice(5, 4, 1), 4..4);
        assert_eq!(py_slice(5, 3, i64::MAX), 3..5);
    }
}
