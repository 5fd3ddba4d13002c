//! Location and cell tuples made once and shared by every result, so that converting a patch
//! costs set insertions but no tuple allocations.
//!
//! Locations `(i, j)` are interned for coordinates in `LOC_MIN..LOC_MAX` (grids are at most
//! 30x30, and `shoot` reaches 42 cells past them); cells `(c, (i, j))` for colours `0..10`
//! inside a 32x32 square, sharing the location tuples. Anything else is made as needed.
//! Tuples are immutable, so sharing them changes nothing a program can see.
//!
//! The ints `0..10` are kept too, to make grid rows with, and to recognise colours on the way
//! in: CPython shares one object per small int, so a cell of a grid is almost always one of
//! these, told by address.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyTuple};

use arcbatch::dsl::{Cell, Color, Loc};

const LOC_MIN: i32 = -48;
const LOC_MAX: i32 = 80;
const LOC_SPAN: usize = (LOC_MAX - LOC_MIN) as usize;
const CELL_SIDE: i32 = 32;
const COLORS: i32 = 10;

pub struct Interned {
    /// `(i, j)` at `(i - LOC_MIN) * LOC_SPAN + (j - LOC_MIN)`.
    locs: Vec<Py<PyTuple>>,
    /// `(c, (i, j))` at `(c * CELL_SIDE + i) * CELL_SIDE + j`.
    cells: Vec<Py<PyTuple>>,
    /// The int `c` at `c`, for `c` in `0..COLORS`.
    colors: Vec<Py<PyAny>>,
}

static INTERNED: PyOnceLock<Interned> = PyOnceLock::new();

/// The interned tuples (made on first use).
pub fn interned(py: Python<'_>) -> PyResult<&Interned> {
    INTERNED.get_or_try_init(py, || {
        let ints: Vec<Bound<'_, PyAny>> = (LOC_MIN..LOC_MAX).map(|n| PyInt::new(py, n).into_any()).collect();
        let int = |n: i32| &ints[(n - LOC_MIN) as usize];
        let mut locs = Vec::with_capacity(LOC_SPAN * LOC_SPAN);
        for i in LOC_MIN..LOC_MAX {
            for j in LOC_MIN..LOC_MAX {
                locs.push(PyTuple::new(py, [int(i), int(j)])?.unbind());
            }
        }
        let mut cells = Vec::with_capacity((COLORS * CELL_SIDE * CELL_SIDE) as usize);
        for c in 0..COLORS {
            for i in 0..CELL_SIDE {
                for j in 0..CELL_SIDE {
                    let loc = locs[loc_index(i, j).unwrap_or_default()].bind(py).as_any();
                    cells.push(PyTuple::new(py, [int(c), loc])?.unbind());
                }
            }
        }
        let colors = (0..COLORS).map(|c| int(c).clone().unbind()).collect();
        Ok(Interned { locs, cells, colors })
    })
}

fn loc_index(i: i32, j: i32) -> Option<usize> {
    let inside = |n: i32| (LOC_MIN..LOC_MAX).contains(&n);
    (inside(i) && inside(j)).then(|| (i - LOC_MIN) as usize * LOC_SPAN + (j - LOC_MIN) as usize)
}

impl Interned {
    /// The colour whose shared int object is `obj`, if it is one of them (`None` says nothing
    /// about `obj`: it may be an int of equal value).
    pub fn color_of(&self, obj: &Bound<'_, PyAny>) -> Option<Color> {
        let p = obj.as_ptr();
        self.colors.iter().position(|c| c.as_ptr() == p).map(|c| c as Color)
    }

    /// A grid row as a tuple, sharing the ints `0..10`.
    pub fn row<'py>(&self, py: Python<'py>, cells: &[Color]) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            cells
                .iter()
                .map(|&c| match usize::try_from(c).ok().and_then(|k| self.colors.get(k)) {
                    Some(int) => int.bind(py).clone(),
                    None => PyInt::new(py, c).into_any(),
                }),
        )
    }

    /// `(i, j)`.
    pub fn loc<'py>(&self, py: Python<'py>, l: Loc) -> PyResult<Bound<'py, PyAny>> {
        match loc_index(l.i, l.j) {
            Some(k) => Ok(self.locs[k].bind(py).clone().into_any()),
            None => Ok((l.i, l.j).into_pyobject(py)?.into_any()),
        }
    }

    /// `(colour, (i, j))`.
    pub fn cell<'py>(&self, py: Python<'py>, c: Cell) -> PyResult<Bound<'py, PyAny>> {
        let inside = |n: i32, end: i32| (0..end).contains(&n);
        if inside(c.color, COLORS) && inside(c.i, CELL_SIDE) && inside(c.j, CELL_SIDE) {
            let k = ((c.color * CELL_SIDE + c.i) * CELL_SIDE + c.j) as usize;
            return Ok(self.cells[k].bind(py).clone().into_any());
        }
        Ok((c.color, self.loc(py, c.loc())?).into_pyobject(py)?.into_any())
    }
}
