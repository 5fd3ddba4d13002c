//! The DSL's values, and the one total order every set is kept in.
//!
//! The reference is dynamically typed Python: a grid is a tuple of row tuples, an object is a
//! frozenset of `(colour, (i, j))` tuples, and generic primitives (`first`, `size`, `apply`, ...)
//! walk any of them alike. [`Value`] mirrors that structure but keeps the common shapes in
//! specialised, compact variants:
//!
//! * [`Value::Pair`] for a tuple of two integers (locations, directions, shapes) — no allocation;
//! * [`Value::Cell`] for a tuple `(colour, (i, j))`, one cell of an object — no allocation;
//! * [`Value::LocPair`] and [`Value::CellPair`] for a tuple of two locations or of two cells (the
//!   members of `product` of index sets or of objects, which search builds by the million) —
//!   no allocation;
//! * [`Value::Ints`] for any other tuple of integers that fit an `i32` (a grid row handed out as
//!   a member, an `interval`, the rows of a ragged tuple of tuples): one allocation, 4 bytes an
//!   integer instead of a boxed value each;
//! * [`Value::Grid`] for a grid: one flat buffer of [`Color`]s, row-major (ARC grids have at most
//!   30x30 cells, though `upscale` or `hconcat` can build larger ones; ARC colours are 0..9, but
//!   a program may paint with a negative constant or a count past 127, which the reference
//!   computes with alike);
//! * [`Value::Indices`] and [`Value::Object`] for sets of locations and of cells: sorted flat
//!   vectors of small structs, so set operations are merges and scans, not hashing of boxed values;
//! * [`Value::Tuple`] and [`Value::Set`] for everything else. Their members are [`Items`]: a
//!   list, or for the objects a device found, labels plus a few numbers per object
//!   ([`Labelled`]), which answer `len` and some primitives without building the objects, and
//!   build them (exactly the CPU path's) the first time the members are read.
//!
//! One Python value may have more than one representation (a tuple of rows built by `merge` is a
//! grid too; an empty frozenset is an empty object and an empty index set alike). Equality and
//! ordering are therefore *structural*: they compare what the values are in Python terms, with a
//! fast path when both sides share a variant. Constructors ([`Value::tuple`], [`Value::set`])
//! pick the compact variant whenever the shape allows, so the slow path is rare.
//!
//! # The canonical order
//!
//! Python iterates a frozenset in hash-table order. This port keeps every set sorted in one
//! **ascending canonical order** and iterates it that way everywhere (`first`, `argmax` ties,
//! `totuple`, ...). The order is:
//! `None` < numbers < tuples < sets < functions; numbers by value (as in Python, `True` equals
//! `1`); tuples and sets lexicographically by their members (a set by its sorted
//! members), a shorter prefix first. So cells sort by colour, then row, then column, and
//! locations by row, then column. This order reproduces the reference's output on every
//! published solver the reference solves (DESIGN.md §3).

use std::cmp::Ordering;
use std::fmt;
use std::mem::{self, ManuallyDrop};
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use super::error::{DslError, DslResult};
use super::exact::collect_some;
use super::func::Func;
use super::labelled::Labelled;
use super::points;
use super::shared::{Shared, SharedRef};

/// A grid colour. ARC uses 0..9; programs may also paint with negative constants or counts
/// (`recolor` of an object's rank). The same width as a [`Cell`]'s colour, so painting an object
/// onto a grid never narrows; the device kernels take `i8` cells, and grids with wider colours
/// stay on the CPU there.
pub type Color = i32;

/// A location `(row, column)` inside an index set or object. Shifts can move patches far
/// outside any grid, so the coordinates are signed and wider than a grid needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    pub i: i32,
    pub j: i32,
}

/// One cell of an object: `(colour, (row, column))`. Field order is the canonical sort order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    pub color: i32,
    pub i: i32,
    pub j: i32,
}

impl Cell {
    pub fn loc(self) -> Loc {
        Loc { i: self.i, j: self.j }
    }
}

/// A cell whose colour and coordinates fit an `i16` each, packed so that two fit in a
/// [`Value::CellPair`]. Field order is the canonical order, as in [`Cell`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SmallCell {
    color: i16,
    i: i16,
    j: i16,
}

impl SmallCell {
    pub fn pack(c: Cell) -> Option<SmallCell> {
        Some(SmallCell {
            color: c.color.try_into().ok()?,
            i: c.i.try_into().ok()?,
            j: c.j.try_into().ok()?,
        })
    }

    pub fn cell(self) -> Cell {
        Cell {
            color: self.color.into(),
            i: self.i.into(),
            j: self.j.into(),
        }
    }
}

/// A rectangular grid of colours, row-major. `h` rows of `w` cells; `h` may be 0 (the empty
/// tuple) and `w` may be 0 with `h > 0` (`((), ())`, which `trim` and `canvas` can produce).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Grid {
    pub h: usize,
    pub w: usize,
    pub cells: Vec<Color>,
}

impl Grid {
    pub fn new(h: usize, w: usize, cells: Vec<Color>) -> Grid {
        debug_assert_eq!(cells.len(), h * w);
        Grid { h, w, cells }
    }

    pub fn filled(h: usize, w: usize, color: Color) -> Grid {
        Grid {
            h,
            w,
            cells: vec![color; h * w],
        }
    }

    #[inline]
    pub fn get(&self, i: usize, j: usize) -> Color {
        self.cells[i * self.w + j]
    }

    #[inline]
    pub fn set(&mut self, i: usize, j: usize, c: Color) {
        self.cells[i * self.w + j] = c;
    }

    /// The colour at a signed location, or `None` outside the grid.
    #[inline]
    pub fn at(&self, i: i64, j: i64) -> Option<Color> {
        if i >= 0 && j >= 0 && (i as usize) < self.h && (j as usize) < self.w {
            Some(self.cells[i as usize * self.w + j as usize])
        } else {
            None
        }
    }

    pub fn row(&self, i: usize) -> &[Color] {
        &self.cells[i * self.w..(i + 1) * self.w]
    }

    /// Grids compare as tuples of row tuples: row by row, each row lexicographically.
    fn cmp_rows(&self, other: &Grid) -> Ordering {
        for r in 0..self.h.min(other.h) {
            let o = self.row(r).cmp(other.row(r));
            if o != Ordering::Equal {
                return o;
            }
        }
        self.h.cmp(&other.h)
    }
}

impl Grid {
    /// The grid as a borrowed view.
    pub fn view(&self) -> GridView<'_> {
        GridView {
            cells: &self.cells,
            h: self.h,
            w: self.w,
        }
    }
}

/// A grid read from a value ([`Value::as_grid`]): the value's own, or one built from a tuple of
/// rows.
pub type GridRef<'a> = SharedRef<'a, Grid>;

/// A borrowed grid: row-major cells and the shape. A [`Grid`]'s, or one grid of a flat batch
/// of many (`batch::GridBatch`), so a primitive's core written over a view serves both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridView<'a> {
    pub cells: &'a [Color],
    pub h: usize,
    pub w: usize,
}

impl GridView<'_> {
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> Color {
        self.cells[i * self.w + j]
    }

    pub fn row(&self, i: usize) -> &[Color] {
        &self.cells[i * self.w..(i + 1) * self.w]
    }

    /// An owned copy.
    pub fn to_grid(&self) -> Grid {
        Grid::new(self.h, self.w, self.cells.to_vec())
    }
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Value::Grid(Shared::new(self.clone())))
    }
}

/// A value of the DSL. Cloning is cheap: containers are reference-counted and immutable.
///
/// The tag is a whole word, so that every variant's fields start at the second word and a
/// value moves as three words. With a byte tag, `Bool` sat at offset 1 and `Cell` at 4, and
/// the compiler moved values in overlapping pieces through the stack, stalling each load on
/// the store before it (perf: most of the column engine's own time; 7 % of `run` on training).
#[repr(u64)]
pub enum Value {
    /// Python's `None` (only `index` outside the grid produces it).
    None,
    Bool(bool),
    Int(i64),
    /// A tuple of exactly two integers.
    Pair(i64, i64),
    /// A tuple `(colour, (i, j))` of integers that fit an `i32` each: a cell of an object.
    Cell(Cell),
    /// A tuple of two locations `((i, j), (k, l))` whose coordinates fit an `i32` each.
    LocPair(Loc, Loc),
    /// A tuple of two cells that pack into [`SmallCell`]s.
    CellPair(SmallCell, SmallCell),
    /// A tuple of integers that fit an `i32` each, of any length but 0 and 2 (the empty tuple
    /// is a `Tuple`, two integers a `Pair`).
    Ints(Arc<[Color]>),
    Grid(Shared<Grid>),
    /// A frozenset of locations, sorted and without duplicates.
    Indices(Shared<[Loc]>),
    /// A frozenset of cells, sorted and without duplicates.
    Object(Shared<[Cell]>),
    /// Any other tuple.
    Tuple(Items),
    /// Any other frozenset, sorted in canonical order and without duplicates.
    Set(Items),
    Func(Shared<Func>),
}

/// An element of an index set or object as an integer in the same order, so that sorting sets
/// of them compares the first two elements of each as two numbers.
trait Packed: Ord + Copy {
    /// The element's code, where it fits.
    fn code(self) -> Option<u64>;
}

impl Packed for Loc {
    /// Both coordinates, offset to unsigned (the sign bit flipped): always fits.
    fn code(self) -> Option<u64> {
        let unsigned = |x: i32| u64::from(x as u32 ^ 0x8000_0000);
        Some(unsigned(self.i) << 32 | unsigned(self.j))
    }
}

impl Packed for Cell {
    /// Colour and coordinates offset to unsigned in 21 bits each: a million either side of 0
    /// (one offset past that wraps to a number of 32 bits, out of range too).
    fn code(self) -> Option<u64> {
        const BITS: u32 = 21;
        let field = |x: i32| u64::from(x.wrapping_add(1 << (BITS - 1)) as u32);
        let (c, i, j) = (field(self.color), field(self.i), field(self.j));
        ((c | i | j) < 1 << BITS).then_some(c << (2 * BITS) | i << BITS | j)
    }
}

/// A non-empty sorted slice as [`Value::set_of_slices`] sorts it, from position `at`: the codes
/// of its first two elements (0 for no second one, which sorts first as the shorter slice
/// does: a second element is greater than the first, so its code is not 0), and the rest
/// compared only where they tie. Two words rather than a `u128`, whose alignment took the
/// keys' vector off the allocator's fast path.
struct SliceKey<'a, T> {
    head: (u64, u64),
    rest: &'a [T],
    at: usize,
}

impl<'a, T: Packed> SliceKey<'a, T> {
    /// `None` where one of the first two elements does not pack.
    fn new(s: &'a [T], at: usize) -> Option<SliceKey<'a, T>> {
        let second = match s.get(1) {
            Some(&e) => e.code()?,
            None => 0,
        };
        Some(SliceKey {
            head: (s[0].code()?, second),
            rest: s.get(2..).unwrap_or(&[]),
            at,
        })
    }

    /// The slices' order (Python's for the sets they are).
    #[inline]
    fn order(&self, other: &Self) -> Ordering {
        self.head.cmp(&other.head).then_with(|| self.rest.cmp(other.rest))
    }
}

impl Clone for Value {
    /// Takes the reference the copy will own, then copies the value as three words. The derived
    /// clone rebuilt each variant field by field on the stack, and the copy out of it waited on
    /// those narrower stores (perf: the hottest instruction of the interpreter's step loop).
    #[inline(always)]
    fn clone(&self) -> Value {
        match self {
            Value::Ints(a) => mem::forget(Arc::clone(a)),
            Value::Grid(g) => mem::forget(Shared::clone(g)),
            Value::Indices(l) => mem::forget(Shared::clone(l)),
            Value::Object(c) => mem::forget(Shared::clone(c)),
            Value::Tuple(items) | Value::Set(items) => mem::forget(items.clone()),
            Value::Func(f) => mem::forget(Shared::clone(f)),
            Value::None
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Pair(..)
            | Value::Cell(_)
            | Value::LocPair(..)
            | Value::CellPair(..) => {}
        }
        // SAFETY: the copy shares `self`'s reference-counted parts, and owns the reference
        // taken for it just above (none for the variants that own nothing).
        unsafe { std::ptr::read(self) }
    }
}

// Three words, and `Option<Value>` no larger: the tag's unused values are its niche.
const _: () = assert!(std::mem::size_of::<Value>() == 24);
const _: () = assert!(std::mem::size_of::<Option<Value>>() == 24);
// A primitive's result too: an error is one word behind the tag (see `error::Message`).
const _: () = assert!(std::mem::size_of::<super::error::DslResult<Value>>() == 24);

/// A bitwise copy of `v` that is never dropped, so it takes no reference and releases none:
/// arguments handed to a primitive row after row without touching reference counts (the CPU
/// backend's lanes, the column engine's rows). Clones made from it take their own
/// references, as clones of `v` would.
///
/// # Safety
///
/// The copy may be read only while `v` is alive and unchanged.
#[inline]
pub unsafe fn borrowed(v: &Value) -> ManuallyDrop<Value> {
    // SAFETY: wrapped at once in `ManuallyDrop`, the copy neither duplicates nor releases the
    // reference `v` holds; the caller reads it only while `v` lives.
    ManuallyDrop::new(unsafe { std::ptr::read(v) })
}

/// `out.push(v)` as three word-sized stores. A value an inlined primitive builds in registers
/// is otherwise spilled to the stack word by word and copied into the vector with a 16-byte
/// load, which waits on those narrower stores: in the column engine's loops over cheap
/// primitives that wait was most of the time (perf), and removing it took a fifth off
/// `batt --cross` of solve_06df4c85.
#[inline(always)]
pub fn push_value(out: &mut Vec<Value>, v: Value) {
    // The words first, then room for them: a value kept whole across the call to grow the
    // vector would be copied as one again.
    // SAFETY: `Value` is three words (asserted above); they are moved, not duplicated, into
    // the slot past the end, which was made room for, and counted at once.
    let words: [mem::MaybeUninit<u64>; 3] = unsafe { mem::transmute(v) };
    if out.len() == out.capacity() {
        grow(out);
    }
    unsafe {
        let slot = out.as_mut_ptr().add(out.len()).cast::<mem::MaybeUninit<u64>>();
        for (k, w) in words.into_iter().enumerate() {
            slot.add(k).write(w);
        }
        out.set_len(out.len() + 1);
    }
}

/// Empties `values`, dropping only those that hold an allocation: dropping a `Value` is a call
/// through a jump table, which a column of numbers paid once per element.
pub fn clear_values(values: &mut Vec<Value>) {
    let len = values.len();
    // SAFETY: the length is zero before any value is dropped, so none is dropped twice even
    // if a drop unwound; each of the `len` values is dropped or holds nothing to drop.
    unsafe {
        values.set_len(0);
        for v in std::slice::from_raw_parts_mut(values.as_mut_ptr(), len) {
            if v.holds_allocation() {
                std::ptr::drop_in_place(v);
            }
        }
    }
}

/// Each of `values` appended with [`push_value`].
#[inline(always)]
fn push_all(out: &mut Vec<Value>, values: impl IntoIterator<Item = Value, IntoIter: ExactSizeIterator>) {
    let values = values.into_iter();
    out.reserve(values.len());
    for v in values {
        push_value(out, v);
    }
}

#[cold]
#[inline(never)]
fn grow(out: &mut Vec<Value>) {
    out.reserve(1);
}

/// [`borrowed`] copies as the values they copy.
#[inline]
pub fn as_values(copies: &[ManuallyDrop<Value>]) -> &[Value] {
    // SAFETY: `ManuallyDrop<Value>` is `repr(transparent)` over `Value`, so the copies form a
    // valid `[Value]` for as long as they are borrowed.
    unsafe { std::slice::from_raw_parts(copies.as_ptr().cast::<Value>(), copies.len()) }
}

/// The members of a [`Value::Tuple`] or a [`Value::Set`]: a list, or (for a set of objects a
/// device found) a [`Labelled`] set, whose members are built the first time they are read
/// through [`Deref`]. [`Items::len`] and [`Items::is_empty`] never build them.
#[derive(Clone)]
pub struct Items(Shared<Listing>);

/// No members: the empty tuple's and the empty set's, shared by every thread (see
/// [`Value::empty_set`]).
static EMPTY_ITEMS: LazyLock<Items> = LazyLock::new(|| Items(Shared::immortal(Listing::Listed(Vec::new()))));

enum Listing {
    Listed(Vec<Value>),
    Labelled(Labelled),
}

impl Items {
    pub fn new(items: Vec<Value>) -> Items {
        Items(Shared::new(Listing::Listed(items)))
    }

    pub fn labelled(objects: Labelled) -> Items {
        Items(Shared::new(Listing::Labelled(objects)))
    }

    /// The labelled form, where the members are held as one.
    pub fn as_labelled(&self) -> Option<&Labelled> {
        match &*self.0 {
            Listing::Labelled(l) => Some(l),
            Listing::Listed(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        match &*self.0 {
            Listing::Listed(v) => v.len(),
            Listing::Labelled(l) => l.objects().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether both are the same list (a shared value).
    pub fn ptr_eq(a: &Items, b: &Items) -> bool {
        Shared::ptr_eq(&a.0, &b.0)
    }

    /// The shared list's address: the same for two items exactly when [`Items::ptr_eq`].
    pub fn as_ptr(&self) -> *const () {
        Shared::as_ptr(&self.0).cast()
    }
}

impl Deref for Items {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        match &*self.0 {
            Listing::Listed(v) => v,
            Listing::Labelled(l) => l.members(),
        }
    }
}

/// Where a value stands among Python's kinds, for the canonical order across kinds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    None,
    Number,
    Tuple,
    Set,
    Func,
}

impl Value {
    /// Whether the value holds a reference-counted allocation (a container, grid or function),
    /// so that dropping it does something.
    #[inline(always)]
    pub fn holds_allocation(&self) -> bool {
        !matches!(
            self,
            Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Pair(..)
                | Value::Cell(_)
                | Value::LocPair(..)
                | Value::CellPair(..)
        )
    }

    fn rank(&self) -> Rank {
        match self {
            Value::None => Rank::None,
            Value::Bool(_) | Value::Int(_) => Rank::Number,
            Value::Pair(..)
            | Value::Cell(_)
            | Value::LocPair(..)
            | Value::CellPair(..)
            | Value::Ints(_)
            | Value::Grid(_)
            | Value::Tuple(_) => Rank::Tuple,
            Value::Indices(_) | Value::Object(_) | Value::Set(_) => Rank::Set,
            Value::Func(_) => Rank::Func,
        }
    }

    // ----- constructors -------------------------------------------------------------------

    pub fn loc(l: Loc) -> Value {
        Value::Pair(l.i as i64, l.j as i64)
    }

    pub fn cell(c: Cell) -> Value {
        Value::Cell(c)
    }

    pub fn grid(g: Grid) -> Value {
        Value::Grid(Shared::new(g))
    }

    /// An index set from locations in any order (sorted and deduplicated here, by a bitmap
    /// over their bounding box where it is small; see [`points`]).
    pub fn indices(mut locs: Vec<Loc>) -> Value {
        points::sort_dedup(&mut locs);
        Value::Indices(Shared::from(locs))
    }

    /// An index set from locations already sorted and unique.
    pub fn indices_sorted(locs: impl Into<Shared<[Loc]>>) -> Value {
        let locs = locs.into();
        debug_assert!(locs.windows(2).all(|w| w[0] < w[1]));
        Value::Indices(locs)
    }

    /// An object from cells in any order (sorted and deduplicated here, as [`Value::indices`]).
    pub fn object(mut cells: Vec<Cell>) -> Value {
        points::sort_dedup(&mut cells);
        Value::Object(Shared::from(cells))
    }

    /// An object from cells already sorted and unique.
    pub fn object_sorted(cells: impl Into<Shared<[Cell]>>) -> Value {
        let cells = cells.into();
        debug_assert!(cells.windows(2).all(|w| w[0] < w[1]));
        Value::Object(cells)
    }

    /// A tuple of integers, in the most compact representation its length allows.
    pub fn ints(items: &[Color]) -> Value {
        match *items {
            [] => Value::empty_tuple(),
            [a, b] => Value::Pair(a.into(), b.into()),
            _ => Value::Ints(items.into()),
        }
    }

    /// The tuple `(a, b)`, in the most compact representation its members allow.
    pub fn duo(a: Value, b: Value) -> Value {
        let fits = |n: i64| i32::try_from(n).ok();
        match (&a, &b) {
            (Value::Int(x), Value::Int(y)) => return Value::Pair(*x, *y),
            (Value::Int(color), Value::Pair(i, j)) => {
                if let (Some(color), Some(i), Some(j)) = (fits(*color), fits(*i), fits(*j)) {
                    return Value::Cell(Cell { color, i, j });
                }
            }
            (Value::Pair(..), Value::Pair(..)) => {
                if let (Some(x), Some(y)) = (a.as_loc_exact(), b.as_loc_exact()) {
                    return Value::LocPair(x, y);
                }
            }
            (Value::Cell(x), Value::Cell(y)) => {
                if let (Some(x), Some(y)) = (SmallCell::pack(*x), SmallCell::pack(*y)) {
                    return Value::CellPair(x, y);
                }
            }
            _ => {}
        }
        Value::Tuple(Items::new(vec![a, b]))
    }

    /// A tuple, in the most compact representation its shape allows.
    pub fn tuple(mut items: Vec<Value>) -> Value {
        if items.len() == 2 {
            let b = items.pop().expect("two items");
            let a = items.pop().expect("two items");
            return Value::duo(a, b);
        }
        if !items.is_empty() && items.iter().all(|v| v.as_small_int().is_some()) {
            // Collected straight into the shared slice: one allocation (neither empty nor two
            // long, it is no other form).
            return Value::Ints(items.iter().map(|v| v.as_small_int().unwrap_or_default()).collect());
        }
        Value::Tuple(Items::new(items))
    }

    /// A frozenset from members in any order: sorted canonically, duplicates dropped, and kept
    /// as an index set or an object when every member is a location or a cell. Of equal
    /// members (`0` and `False`) the first one given stays, as in a Python set.
    pub fn set(mut items: Vec<Value>) -> Value {
        // Locations or cells only (`apply` of a function giving pairs): sorted unboxed.
        if matches!(items.first(), Some(Value::Pair(..))) {
            if let Some(locs) = collect_some(items.iter().map(Value::as_loc_exact)) {
                return Value::indices(locs);
            }
        } else if matches!(items.first(), Some(Value::Cell(_))) {
            if let Some(cells) = collect_some(items.iter().map(Value::as_cell_exact)) {
                return Value::object(cells);
            }
        } else if matches!(items.first(), Some(Value::Int(_))) {
            // Numbers only (no bool among them): sorted unboxed.
            if let Some(mut ints) = collect_some(items.iter().map(Value::as_small_int)) {
                points::sort_dedup(&mut ints);
                return Value::set_sorted(ints.into_iter().map(|n| Value::Int(n.into())).collect());
            }
        }
        // Index sets only (`prapply(connect, ..)` gives thousands of lines, most of them
        // empty), or objects only (`apply(fork(recolor, color, connect..), pairs)`): compared
        // as slices, the empty ones set aside (the first stays).
        fn locs_of(v: &Value) -> Option<&[Loc]> {
            match v {
                Value::Indices(l) => Some(&l[..]),
                Value::Set(s) if s.is_empty() => Some(&[]),
                _ => None,
            }
        }
        fn cells_of(v: &Value) -> Option<&[Cell]> {
            match v {
                Value::Object(c) => Some(&c[..]),
                Value::Set(s) if s.is_empty() => Some(&[]),
                _ => None,
            }
        }
        if let Some(set) =
            Value::set_of_slices(&mut items, locs_of).or_else(|| Value::set_of_slices(&mut items, cells_of))
        {
            return set;
        }
        // Equal members are interchangeable unless one may hold a bool where the other holds
        // an int (`True == 1`): only then must the sort keep the order given.
        if items.iter().all(Value::holds_no_bool) {
            items.sort_unstable();
        } else {
            items.sort();
        }
        items.dedup();
        Value::set_sorted(items)
    }

    /// [`Value::set`] of members that `slice` reads as sorted slices (index sets, objects,
    /// empty sets), sorted as slices; `None` (with `items` untouched) if one is not, or its
    /// first elements do not pack (then the general sort takes them). Each member's slice is
    /// read once into a key that holds its first two elements' codes: most comparisons end
    /// there, in two integer comparisons, without following the member's pointers
    /// (`prapply(connect, ..)` and `apply` of a function giving objects sort tens of
    /// thousands of them: a seventh of `batt --cross` went to these sorts). The sort
    /// is unstable (fewer instructions than the stable one: training 0.04 M): members with
    /// equal keys are equal slices, and whichever of them stays is the same value.
    fn set_of_slices<T: Packed>(items: &mut Vec<Value>, slice: fn(&Value) -> Option<&[T]>) -> Option<Value> {
        let mut empty = None;
        let mut keys: Vec<SliceKey<'_, T>> = Vec::with_capacity(items.len());
        for (k, v) in items.iter().enumerate() {
            match slice(v)? {
                [] => {
                    empty.get_or_insert(k);
                }
                s => keys.push(SliceKey::new(s, k)?),
            }
        }
        keys.sort_unstable_by(SliceKey::order);
        keys.dedup_by(|a, b| a.order(b) == Ordering::Equal);
        let order: Vec<usize> = keys.into_iter().map(|key| key.at).collect();
        // The empty set first (the first one met), then the distinct members in order; the
        // duplicates are dropped with what is left of `items`.
        let mut items = std::mem::take(items);
        let sorted = empty
            .into_iter()
            .chain(order)
            .map(|k| std::mem::replace(&mut items[k], Value::None))
            .collect();
        Some(Value::set_sorted(sorted))
    }

    /// True for values whose members are all plain integers (or that have none), so that two
    /// equal such values print alike (no `True` where the other has `1`).
    fn holds_no_bool(&self) -> bool {
        match self {
            Value::Int(_)
            | Value::Pair(..)
            | Value::Cell(_)
            | Value::LocPair(..)
            | Value::CellPair(..)
            | Value::Ints(_)
            | Value::Grid(_)
            | Value::Indices(_)
            | Value::Object(_) => true,
            Value::Tuple(v) | Value::Set(v) => v.is_empty(),
            _ => false,
        }
    }

    /// Like [`Value::set`] for members already sorted and unique.
    pub fn set_sorted(items: Vec<Value>) -> Value {
        if items.is_empty() {
            return Value::empty_set();
        }
        if let Some(locs) = collect_some(items.iter().map(Value::as_loc_exact)) {
            return Value::Indices(Shared::from(locs));
        }
        if let Some(cells) = collect_some(items.iter().map(Value::as_cell_exact)) {
            return Value::Object(Shared::from(cells));
        }
        Value::Set(Items::new(items))
    }

    /// The empty frozenset, shared (as the empty tuple) and [immortal](Shared::immortal):
    /// `connect` of unaligned points and filters that keep nothing return it by the million in
    /// search, one allocation each before.
    pub fn empty_set() -> Value {
        Value::Set(EMPTY_ITEMS.clone())
    }

    /// The locations of an empty index set, shared as [`Value::empty_set`]: no allocation per
    /// empty patch (`recolor(c, connect(a, b))` of points on no common line makes one per pair).
    pub fn no_locs() -> &'static Shared<[Loc]> {
        static EMPTY: LazyLock<Shared<[Loc]>> = LazyLock::new(|| Shared::immortal_slice(&[]));
        &EMPTY
    }

    /// The cells of an empty object, shared as [`Value::empty_set`].
    pub fn no_cells() -> &'static Shared<[Cell]> {
        static EMPTY: LazyLock<Shared<[Cell]>> = LazyLock::new(|| Shared::immortal_slice(&[]));
        &EMPTY
    }

    pub fn empty_tuple() -> Value {
        Value::Tuple(EMPTY_ITEMS.clone())
    }

    // ----- kind tests ---------------------------------------------------------------------

    /// True for Python tuples (grids, pairs and other tuples).
    pub fn is_tuple(&self) -> bool {
        self.rank() == Rank::Tuple
    }

    /// True for Python frozensets (index sets, objects and other sets).
    pub fn is_set(&self) -> bool {
        self.rank() == Rank::Set
    }

    /// The Python type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Func(_) => "function",
            v if v.is_set() => "frozenset",
            _ => "tuple",
        }
    }

    // ----- accessors: Python's duck typing, as errors instead of exceptions ---------------

    /// An integer (Python bools are integers too).
    pub fn as_int(&self) -> DslResult<i64> {
        match self {
            Value::Int(n) => Ok(*n),
            Value::Bool(b) => Ok(*b as i64),
            _ => Err(DslError::type_error("an integer", self)),
        }
    }

    /// Python truthiness (`if x:`), inline: `sfilter` reads it for every test's result.
    #[inline]
    pub fn truthy(&self) -> bool {
        match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(n) => *n != 0,
            Value::Func(_) => true,
            Value::Pair(..) | Value::Cell(_) | Value::LocPair(..) | Value::CellPair(..) => true,
            _ => self.len().unwrap_or(1) != 0,
        }
    }

    /// `a, b = x` in Python: the two members of a container, integers here. A container of
    /// another length is Python's `ValueError`, anything else its `TypeError`.
    #[inline]
    pub fn unpack_pair(&self) -> DslResult<(i64, i64)> {
        match self {
            Value::Pair(a, b) => Ok((*a, *b)),
            _ => self.unpack_members(),
        }
    }

    /// [`Value::unpack_pair`] of anything but an unboxed pair, out of line.
    fn unpack_members(&self) -> DslResult<(i64, i64)> {
        let (a, b) = self.unpack2()?;
        Ok((a.as_int()?, b.as_int()?))
    }

    /// `a, b = x` in Python for any members: a container of another length is Python's
    /// `ValueError`, anything else its `TypeError`.
    pub fn unpack2(&self) -> DslResult<(Value, Value)> {
        match (self.len(), self.member(0), self.member(1)) {
            (Some(2), Some(a), Some(b)) => Ok((a, b)),
            (None, ..) => Err(DslError::mismatch(
                "a pair",
                format_args!("cannot unpack non-iterable {} object", self.type_name()),
            )),
            (Some(n), ..) if n < 2 => Err(DslError::Value(
                format!("not enough values to unpack (expected 2, got {n})").into(),
            )),
            _ => Err(DslError::Value("too many values to unpack (expected 2)".into())),
        }
    }

    /// `(x[0], x[1])` in Python: the first two members of a tuple, integers here. A shorter
    /// tuple is Python's `IndexError`, anything else its `TypeError`.
    #[inline]
    pub fn index_pair(&self) -> DslResult<(i64, i64)> {
        match self {
            Value::Pair(a, b) => Ok((*a, *b)),
            _ => self.index_members(),
        }
    }

    /// [`Value::index_pair`] of anything but an unboxed pair, out of line.
    fn index_members(&self) -> DslResult<(i64, i64)> {
        match self.len() {
            Some(n) if self.is_tuple() && n < 2 => Err(DslError::Index("tuple index out of range".into())),
            Some(_) if self.is_tuple() => Ok((self.member_int(0)?, self.member_int(1)?)),
            _ => Err(DslError::mismatch(
                "a pair of integers",
                format_args!("'{}' object is not subscriptable", self.type_name()),
            )),
        }
    }

    /// Member `n` (in iteration order) as an integer.
    fn member_int(&self, n: usize) -> DslResult<i64> {
        match self.member(n) {
            Some(m) => m.as_int(),
            None => Err(DslError::type_error("a pair of integers", self)),
        }
    }

    /// This value as an `i32`, only if it is exactly an integer (no bool) that fits one.
    fn as_small_int(&self) -> Option<Color> {
        match self {
            Value::Int(n) => Color::try_from(*n).ok(),
            _ => None,
        }
    }

    /// This value as a location, only if it is exactly a pair of integers that fit.
    pub(crate) fn as_loc_exact(&self) -> Option<Loc> {
        match self {
            Value::Pair(a, b) => Some(Loc {
                i: i32::try_from(*a).ok()?,
                j: i32::try_from(*b).ok()?,
            }),
            _ => None,
        }
    }

    /// This value as a cell, only if it is exactly `(int, (int, int))`.
    pub(crate) fn as_cell_exact(&self) -> Option<Cell> {
        match self {
            Value::Cell(c) => Some(*c),
            Value::Tuple(items) if items.len() == 2 => {
                let Value::Int(c) = items[0] else { return None };
                let l = items[1].as_loc_exact()?;
                Some(Cell {
                    color: i32::try_from(c).ok()?,
                    i: l.i,
                    j: l.j,
                })
            }
            _ => None,
        }
    }

    /// A grid: the `Grid` variant, or any tuple of equally long tuples of colours. Inlined
    /// for the `Grid` variant, nearly every call's.
    #[inline]
    pub fn as_grid(&self) -> DslResult<GridRef<'_>> {
        match self {
            Value::Grid(g) => Ok(GridRef::Held(g)),
            _ => self.as_built_grid(),
        }
    }

    /// [`Value::as_grid`] of any other variant.
    #[inline(never)]
    fn as_built_grid(&self) -> DslResult<GridRef<'_>> {
        match self {
            Value::Grid(g) => Ok(GridRef::Held(g)),
            Value::LocPair(a, b) => Ok(GridRef::Built(Shared::new(Grid::new(2, 2, vec![a.i, a.j, b.i, b.j])))),
            Value::CellPair(..) => {
                let rows = self.members().unwrap_or_default();
                Ok(GridRef::Built(Value::Tuple(Items::new(rows)).as_grid()?.into_shared()))
            }
            Value::Tuple(rows) => {
                let w = match rows.first() {
                    None => 0,
                    Some(r) => r.len().ok_or_else(|| DslError::type_error("a grid", self))?,
                };
                let mut cells = Vec::with_capacity(rows.len() * w);
                for r in rows.iter() {
                    if let Value::Ints(row) = r {
                        if row.len() != w {
                            return Err(DslError::type_error("a grid (rows of equal length)", self));
                        }
                        cells.extend_from_slice(row);
                        continue;
                    }
                    let members = r.members().ok_or_else(|| DslError::type_error("a grid", self))?;
                    if members.len() != w || !r.is_tuple() {
                        return Err(DslError::type_error("a grid (rows of equal length)", self));
                    }
                    for m in members {
                        let c = m.as_int()?;
                        cells.push(Color::try_from(c).map_err(|_| DslError::ColorRange(c.to_string().into()))?);
                    }
                }
                Ok(GridRef::Built(Shared::new(Grid::new(rows.len(), w, cells))))
            }
            _ => Err(DslError::type_error("a grid", self)),
        }
    }

    /// The members of a tuple or set as values, in iteration order; `None` for non-containers.
    /// Allocates for the compact variants: hot paths match on the variant instead.
    pub fn members(&self) -> Option<Vec<Value>> {
        let mut members = Vec::with_capacity(self.len().unwrap_or(0));
        self.push_members(&mut members).then_some(members)
    }

    /// Appends the members of a container in iteration order; `false` (and nothing appended)
    /// for a value that is not one.
    pub fn push_members(&self, out: &mut Vec<Value>) -> bool {
        match self {
            Value::Pair(a, b) => push_all(out, [Value::Int(*a), Value::Int(*b)]),
            Value::Cell(c) => push_all(out, [Value::Int(c.color.into()), Value::loc(c.loc())]),
            Value::LocPair(a, b) => push_all(out, [Value::loc(*a), Value::loc(*b)]),
            Value::CellPair(a, b) => push_all(out, [Value::cell(a.cell()), Value::cell(b.cell())]),
            Value::Ints(v) => push_all(out, v.iter().map(|&n| Value::Int(n.into()))),
            Value::Grid(g) => push_all(out, (0..g.h).map(|r| row_value(g.row(r)))),
            Value::Indices(l) => push_all(out, l.iter().map(|&l| Value::loc(l))),
            Value::Object(c) => push_all(out, c.iter().map(|&c| Value::cell(c))),
            Value::Tuple(v) | Value::Set(v) => push_all(out, v.iter().cloned()),
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Func(_) => return false,
        }
        true
    }

    /// A set of objects in the labelled form a device returns (see [`Labelled`]).
    pub fn as_labelled(&self) -> Option<&Labelled> {
        match self {
            Value::Set(items) => items.as_labelled(),
            _ => None,
        }
    }

    /// `len(x)` for containers.
    pub fn len(&self) -> Option<usize> {
        Some(match self {
            Value::Pair(..) | Value::Cell(_) | Value::LocPair(..) | Value::CellPair(..) => 2,
            Value::Ints(v) => v.len(),
            Value::Grid(g) => g.h,
            Value::Indices(l) => l.len(),
            Value::Object(c) => c.len(),
            Value::Tuple(v) | Value::Set(v) => v.len(),
            Value::None | Value::Bool(_) | Value::Int(_) | Value::Func(_) => return None,
        })
    }

    /// True for an empty container (`len(x) == 0`); false for everything else.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// The first or second member of a two-member tuple held unboxed (`Pair`, `Cell`,
    /// `LocPair`, `CellPair`), inlined for `first` and `last`; `None` for anything else
    /// ([`Value::member`] reads those shapes through it).
    #[inline]
    pub fn duo_member(&self, second: bool) -> Option<Value> {
        Some(match (self, second) {
            (Value::Pair(a, _), false) => Value::Int(*a),
            (Value::Pair(_, b), true) => Value::Int(*b),
            (Value::LocPair(a, _), false) => Value::loc(*a),
            (Value::LocPair(_, b), true) => Value::loc(*b),
            (Value::Cell(c), false) => Value::Int(c.color.into()),
            (Value::Cell(c), true) => Value::loc(c.loc()),
            (Value::CellPair(a, _), false) => Value::cell(a.cell()),
            (Value::CellPair(_, b), true) => Value::cell(b.cell()),
            _ => return None,
        })
    }

    /// The `n`-th member in iteration order, without materialising the others.
    pub fn member(&self, n: usize) -> Option<Value> {
        Some(match self {
            Value::Pair(..) | Value::Cell(_) | Value::LocPair(..) | Value::CellPair(..) => match n {
                0 | 1 => return self.duo_member(n == 1),
                _ => return None,
            },
            Value::Ints(v) => Value::Int((*v.get(n)?).into()),
            Value::Grid(g) => {
                if n >= g.h {
                    return None;
                }
                row_value(g.row(n))
            }
            Value::Indices(l) => Value::loc(*l.get(n)?),
            Value::Object(c) => Value::cell(*c.get(n)?),
            Value::Tuple(v) | Value::Set(v) => v.get(n)?.clone(),
            _ => return None,
        })
    }

    pub fn as_func(&self) -> DslResult<&Shared<Func>> {
        match self {
            Value::Func(f) => Ok(f),
            _ => Err(DslError::type_error("a function", self)),
        }
    }
}

/// A grid row as the tuple of integers Python would hand out.
fn row_value(row: &[Color]) -> Value {
    Value::ints(row)
}

// ----- structural equality and the canonical order ----------------------------------------

impl Ord for Value {
    fn cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        // Fast paths: both sides in the same compact variant.
        match (self, other) {
            (Int(a), Int(b)) => return a.cmp(b),
            (Pair(a, b), Pair(c, d)) => return (a, b).cmp(&(c, d)),
            (Value::Cell(a), Value::Cell(b)) => return a.cmp(b),
            (Ints(a), Ints(b)) => return a.cmp(b),
            (LocPair(a, b), LocPair(c, d)) => return (a, b).cmp(&(c, d)),
            (CellPair(a, b), CellPair(c, d)) => return (a, b).cmp(&(c, d)),
            (Grid(a), Grid(b)) => return a.cmp_rows(b),
            (Indices(a), Indices(b)) => return a.cmp(b),
            (Object(a), Object(b)) => return a.cmp(b),
            (Tuple(a), Tuple(b)) | (Set(a), Set(b)) => {
                return if Items::ptr_eq(a, b) {
                    Ordering::Equal
                } else {
                    (**a).cmp(&**b)
                };
            }
            // The same function value: shared parts need no walk (they may be shared deeply).
            (Func(a), Func(b)) if Shared::ptr_eq(a, b) => return Ordering::Equal,
            _ => {}
        }
        let (ra, rb) = (self.rank(), other.rank());
        if ra != rb {
            return ra.cmp(&rb);
        }
        match ra {
            Rank::None => Ordering::Equal,
            // Python: `True == 1` and `False == 0`, so a set never holds both.
            Rank::Number => {
                let key = |v: &Value| match v {
                    Bool(b) => *b as i64,
                    Int(n) => *n,
                    _ => unreachable!("rank Number holds only bools and ints"),
                };
                key(self).cmp(&key(other))
            }
            Rank::Func => {
                let (Func(a), Func(b)) = (self, other) else {
                    unreachable!("rank Func")
                };
                a.cmp(b)
            }
            // Mixed representations of tuples or of sets: compare member by member, one member
            // at a time (an empty set against an index set is common: no allocation for it).
            Rank::Tuple | Rank::Set => {
                let (na, nb) = (self.len().unwrap_or(0), other.len().unwrap_or(0));
                for k in 0..na.min(nb) {
                    let (a, b) = (self.member(k), other.member(k));
                    match a.cmp(&b) {
                        Ordering::Equal => {}
                        o => return o,
                    }
                }
                na.cmp(&nb)
            }
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    /// Numbers, pairs, grids, index sets and objects compared in place (`matcher`'s test per
    /// element), anything else by [`Ord`], where `True == 1` as in Python.
    #[inline]
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Pair(a, b), Value::Pair(c, d)) => a == c && b == d,
            _ => self.eq_in_full(other),
        }
    }
}

impl Value {
    /// [`PartialEq::eq`] of anything but two numbers or two pairs, out of line: the test kept
    /// inline is then small enough to be inlined into the column engine's per-element loops
    /// (`equality` of two columns of numbers), where the whole match was called per element.
    #[inline(never)]
    fn eq_in_full(&self, other: &Value) -> bool {
        match (self, other) {
            // Grids compared as slices (`solve` compares every duplicate grid column in full):
            // equal where the rows are, and grids without rows are all the empty tuple.
            (Value::Grid(a), Value::Grid(b)) => a.h == b.h && (a.h == 0 || (a.w == b.w && a.cells == b.cells)),
            // Sorted without duplicates, so equal as sets where equal as lists: the same
            // allocation at once, else the lengths first (`equality(argmin(objects, f), o)`).
            (Value::Indices(a), Value::Indices(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => self.cmp(other) == Ordering::Equal,
        }
    }
}

impl Eq for Value {}

// ----- display: Python's repr, so messages read like the reference ------------------------

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, open: &str, items: &[Value], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (k, v) in items.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            if open == "(" && items.len() == 1 {
                f.write_str(",")?;
            }
            f.write_str(close)
        }
        match self {
            Value::None => f.write_str("None"),
            Value::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Value::Int(n) => write!(f, "{n}"),
            Value::Func(func) => write!(f, "{func}"),
            v if v.is_set() => {
                let items = v.members().unwrap_or_default();
                if items.is_empty() {
                    return f.write_str("frozenset()");
                }
                seq(f, "frozenset({", &items, "})")
            }
            v => seq(f, "(", &v.members().unwrap_or_default(), ")"),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Value {
    /// Python's repr, cut to at most `max` bytes (the last three then `...`). Formatting stops
    /// there: a function value whose parts are shared over and over (`compose(g, g)`, repeated)
    /// is exponentially long spelled out, and costs no more than `max` here.
    pub fn repr_cut(&self, max: usize) -> String {
        struct Capped(String, usize);
        impl fmt::Write for Capped {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                if self.0.len() + s.len() <= self.1 {
                    self.0.push_str(s);
                    return Ok(());
                }
                for c in s.chars() {
                    if self.0.len() + c.len_utf8() > self.1 {
                        break;
                    }
                    self.0.push(c);
                }
                Err(fmt::Error)
            }
        }
        let mut out = Capped(String::new(), max);
        if fmt::write(&mut out, format_args!("{self}")).is_ok() {
            return out.0;
        }
        let mut cut = max.saturating_sub(3);
        while !out.0.is_char_boundary(cut) {
            cut -= 1;
        }
        out.0.truncate(cut);
        out.0 + "..."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `==` agrees with the canonical order on every pair of values, its fast paths included
    /// (`True == 1` and `(1, 2) == (1, 2)` across representations).
    #[test]
    fn equality_is_the_order_saying_equal() {
        let values = [
            Value::Int(1),
            Value::Int(0),
            Value::Bool(true),
            Value::Bool(false),
            Value::Pair(1, 2),
            Value::Pair(2, 1),
            Value::Tuple(Items::new(vec![Value::Int(1), Value::Int(2)])),
            Value::ints(&[1, 2, 3]),
            Value::None,
            // Grids: the empty ones of any width are one value, the empty tuple.
            Value::grid(Grid::new(0, 3, vec![])),
            Value::grid(Grid::new(0, 2, vec![])),
            Value::empty_tuple(),
            Value::grid(Grid::new(1, 2, vec![1, 2])),
            Value::grid(Grid::new(2, 1, vec![1, 2])),
            Value::grid(Grid::new(1, 2, vec![1, 3])),
            Value::grid(Grid::new(2, 2, vec![1, 2, 1, 2])),
            Value::Tuple(Items::new(vec![Value::Pair(1, 2)])),
            // Index sets and objects: equal in other allocations, or not, by length or member.
            Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 2 }]),
            Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 2 }]),
            Value::indices(vec![Loc { i: 0, j: 0 }]),
            Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 3 }]),
            Value::indices(vec![]),
            Value::set(vec![]),
            Value::object(vec![Cell { color: 1, i: 0, j: 0 }]),
            Value::object(vec![Cell { color: 1, i: 0, j: 0 }]),
            Value::object(vec![Cell { color: 2, i: 0, j: 0 }]),
            Value::object(vec![Cell { color: 1, i: 0, j: 0 }, Cell { color: 1, i: 0, j: 1 }]),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(a == b, a.cmp(b) == Ordering::Equal, "{a:?} == {b:?}");
            }
        }
        assert_eq!(Value::Bool(true), Value::Int(1));
        assert_eq!(
            Value::Pair(1, 2),
            Value::Tuple(Items::new(vec![Value::Int(1), Value::Int(2)]))
        );
    }

    /// `clear_values` empties the vector and releases exactly the allocations its values held.
    #[test]
    fn clearing_values_releases_what_they_hold_and_nothing_else() {
        let held: Shared<[Loc]> = Shared::from(vec![Loc { i: 1, j: 2 }]);
        let mut values = vec![
            Value::Int(4),
            Value::Indices(held.clone()),
            Value::Pair(1, 2),
            Value::Indices(held.clone()),
            Value::Cell(Cell { color: 1, i: 0, j: 0 }),
            Value::tuple(vec![Value::Indices(held.clone()), Value::Int(9)]),
        ];
        assert_eq!(Shared::strong_count(&held), 4);
        let holding = values.iter().filter(|v| v.holds_allocation()).count();
        assert_eq!(holding, 3);
        clear_values(&mut values);
        assert!(values.is_empty());
        assert_eq!(Shared::strong_count(&held), 1);
    }

    /// `push_value` appends as `push` does, for every kind of value, into a full vector and one
    /// with room; each value keeps its own reference (the shared ones are counted once each).
    #[test]
    fn push_value_appends_every_kind_as_push_does() {
        let (a, b) = (Loc { i: -3, j: 7 }, Loc { i: 4, j: 0 });
        let c = Cell { color: 9, i: 2, j: -1 };
        let pack = |c| SmallCell::pack(c).expect("fits");
        let shared = Value::tuple(vec![Value::Int(1), Value::Bool(true)]);
        let kinds = vec![
            Value::None,
            Value::Bool(true),
            Value::Int(-7),
            Value::Pair(5, -6),
            Value::Cell(c),
            Value::LocPair(a, b),
            Value::CellPair(pack(c), pack(Cell { color: 1, ..c })),
            Value::indices(vec![a, b]),
            Value::object(vec![c]),
            shared.clone(),
            Value::set(vec![Value::Int(3), Value::Int(1)]),
        ];
        for room in [0, kinds.len()] {
            let mut pushed = Vec::with_capacity(room);
            let mut expected = Vec::with_capacity(room);
            for v in &kinds {
                push_value(&mut pushed, v.clone());
                expected.push(v.clone());
            }
            assert_eq!(pushed, expected);
        }
        let Value::Tuple(items) = &shared else { unreachable!() };
        // `shared`, its copy in `kinds`, and no other.
        assert_eq!(Shared::strong_count(&items.0), 2);
    }

    /// The two members of each unboxed two-member shape, as Python would hand them out, and
    /// nothing past them; `duo_member` declines every other value.
    #[test]
    fn two_member_shapes_hand_out_their_members() {
        let (a, b) = (Loc { i: -3, j: 7 }, Loc { i: 4, j: 0 });
        let c = Cell { color: 9, i: 2, j: -1 };
        let d = Cell { color: 1, ..c };
        let pack = |c| SmallCell::pack(c).expect("fits");
        for (v, first, second) in [
            (Value::Pair(5, -6), Value::Int(5), Value::Int(-6)),
            (Value::LocPair(a, b), Value::Pair(-3, 7), Value::Pair(4, 0)),
            (Value::Cell(c), Value::Int(9), Value::Pair(2, -1)),
            (Value::CellPair(pack(c), pack(d)), Value::Cell(c), Value::Cell(d)),
        ] {
            assert_eq!(v.member(0), Some(first.clone()), "{v:?}");
            assert_eq!(v.member(1), Some(second.clone()), "{v:?}");
            assert_eq!(v.member(2), None, "{v:?}");
            assert_eq!(v.duo_member(false), Some(first), "{v:?}");
            assert_eq!(v.duo_member(true), Some(second), "{v:?}");
        }
        for v in [
            Value::Int(2),
            Value::indices(vec![a, b]),
            Value::tuple(vec![Value::Int(1)]),
        ] {
            assert_eq!(v.duo_member(false), None, "{v:?}");
        }
    }

    fn g(rows: &[&[Color]]) -> Value {
        let w = rows.first().map_or(0, |r| r.len());
        Value::grid(Grid::new(rows.len(), w, rows.concat()))
    }

    #[test]
    fn a_tuple_of_rows_equals_the_grid() {
        let rows = Value::tuple(vec![Value::Pair(1, 2), Value::Pair(3, 4)]);
        assert_eq!(rows, g(&[&[1, 2], &[3, 4]]));
        assert_eq!(*rows.as_grid().unwrap(), *g(&[&[1, 2], &[3, 4]]).as_grid().unwrap());
    }

    #[test]
    fn sets_pick_compact_variants_and_sort() {
        let s = Value::set(vec![Value::Pair(2, 0), Value::Pair(0, 5), Value::Pair(2, 0)]);
        match &s {
            Value::Indices(l) => assert_eq!(&l[..], &[Loc { i: 0, j: 5 }, Loc { i: 2, j: 0 }]),
            other => panic!("expected indices, got {other}"),
        }
        let o = Value::set(vec![Value::cell(Cell { color: 3, i: 0, j: 1 })]);
        assert!(matches!(o, Value::Object(_)));
        assert_eq!(Value::empty_set(), Value::indices(vec![]));
        assert_eq!(Value::empty_set(), Value::object(vec![]));
    }

    #[test]
    fn canonical_order_across_kinds() {
        let mut v = [
            Value::empty_set(),
            Value::Pair(0, 1),
            Value::Int(3),
            Value::Bool(true),
            Value::None,
        ];
        v.sort();
        assert_eq!(
            v.iter().map(|x| x.type_name()).collect::<Vec<_>>(),
            ["NoneType", "bool", "int", "tuple", "frozenset"]
        );
        assert_eq!(Value::Bool(true), Value::Int(1));
        // A set keeps the first of equal members, as Python does.
        assert_eq!(
            Value::set(vec![Value::Int(0), Value::Bool(false)]).members().unwrap()[0].type_name(),
            "int"
        );
    }

    #[test]
    fn a_cell_tuple_is_unboxed_and_behaves_as_the_boxed_tuple() {
        let boxed = |c: i64, i: i64, j: i64| Value::Tuple(Items::new(vec![Value::Int(c), Value::Pair(i, j)]));
        let cell = Value::tuple(vec![Value::Int(3), Value::Pair(1, -2)]);
        assert!(matches!(cell, Value::Cell(Cell { color: 3, i: 1, j: -2 })));
        assert_eq!(cell, boxed(3, 1, -2));
        assert_eq!(cell.members(), boxed(3, 1, -2).members());
        assert_eq!(
            (cell.len(), cell.member(1), cell.member(2)),
            (Some(2), Some(Value::Pair(1, -2)), None)
        );
        assert_eq!(cell.to_string(), "(3, (1, -2))");
        assert_eq!(cell.type_name(), "tuple");
        // The canonical order across both forms, and against other tuples.
        let mut values = vec![
            boxed(3, 1, 0),
            Value::Pair(9, 9),
            cell.clone(),
            Value::cell(Cell { color: 2, i: 5, j: 5 }),
        ];
        values.sort();
        let expected = [boxed(2, 5, 5), boxed(3, 1, -2), boxed(3, 1, 0), Value::Pair(9, 9)];
        assert_eq!(values, expected);
        // Not a cell: a bool colour (True is kept, as Python keeps it), or coordinates past i32.
        assert!(matches!(
            Value::tuple(vec![Value::Bool(true), Value::Pair(0, 0)]),
            Value::Tuple(_)
        ));
        assert!(matches!(
            Value::tuple(vec![Value::Int(1), Value::Pair(1 << 40, 0)]),
            Value::Tuple(_)
        ));
        assert_eq!(
            Value::set(vec![cell.clone(), boxed(3, 1, -2)]),
            Value::object(vec![Cell { color: 3, i: 1, j: -2 }])
        );
    }

    #[test]
    fn repr_cut_stops_early() {
        let row = Value::tuple((0..100).map(Value::Int).collect());
        let cut = row.repr_cut(20);
        assert_eq!(cut, "(0, 1, 2, 3, 4, 5...");
        assert_eq!(Value::Pair(1, 2).repr_cut(20), "(1, 2)");
        // A function value with 2**200 paths, spelled out only as far as asked.
        let mut f = Value::prim(crate::dsl::PrimId::of("identity").unwrap());
        for _ in 0..200 {
            f = Value::func(Func::Compose(f.clone(), f));
        }
        assert_eq!(f.repr_cut(30), "compose(compose(compose(com...");
        assert_eq!(f.cmp(&f.clone()), Ordering::Equal);
    }

    #[test]
    fn pairs_fail_as_unpacking_and_indexing_do_in_python() {
        let empty = Value::empty_tuple();
        let triple = Value::tuple(vec![Value::Int(1), Value::Int(2), Value::Int(3)]);
        assert_eq!(Value::Pair(1, 2).unpack_pair(), Ok((1, 2)));
        assert_eq!(
            empty.unpack_pair(),
            Err(DslError::Value(
                "not enough values to unpack (expected 2, got 0)".into()
            ))
        );
        assert_eq!(
            triple.unpack_pair(),
            Err(DslError::Value("too many values to unpack (expected 2)".into()))
        );
        assert!(matches!(Value::Int(3).unpack_pair(), Err(DslError::Type(_))));
        assert_eq!(Value::set(vec![Value::Int(4), Value::Int(1)]).unpack_pair(), Ok((1, 4)));
        assert!(matches!(Value::Int(3).unpack2(), Err(DslError::Type(_))));
        assert_eq!(
            triple.unpack2(),
            Err(DslError::Value("too many values to unpack (expected 2)".into()))
        );
        assert_eq!(
            empty.index_pair(),
            Err(DslError::Index("tuple index out of range".into()))
        );
        assert_eq!(triple.index_pair(), Ok((1, 2)));
        assert!(matches!(Value::empty_set().index_pair(), Err(DslError::Type(_))));
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(Value::tuple(vec![Value::Int(1)]).to_string(), "(1,)");
        assert_eq!(g(&[&[1, 2]]).to_string(), "((1, 2),)");
        assert_eq!(Value::empty_set().to_string(), "frozenset()");
    }
}
