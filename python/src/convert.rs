//! Python objects to DSL values and back, exactly, as the reference's types: `int`, `bool`,
//! `None`, tuples (a grid is a tuple of row tuples), frozensets (of cells, locations, or
//! anything else), and DSL function values ([`Function`]). A 2-D numpy array of integers is
//! also taken as a grid (numpy itself is never imported here: the array is read through its
//! own methods). Results always come back as the reference's types.
//!
//! Conversion picks the core's compact representations as it goes (a pair of ints, a grid, an
//! index set, an object), so the primitives get their fast paths; anything else becomes a
//! generic tuple or set, which compares equal to the compact form of the same Python value.
//! `bool` stays `bool` and `int` stays `int` both ways, so `True` never comes back as `1`.

use arcbatch::dsl::shared::Shared;
use std::collections::HashMap;

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFrozenSet, PyInt, PySet, PyTuple};

use arcbatch::batt::eval;
use arcbatch::dsl::memory;
use arcbatch::dsl::{Cell, Color, DslError, Func, Grid, Loc, Value};

use crate::cache;
use crate::callback::Callback;
use crate::exceptions::{class, error, Kind};
use crate::function::Function;
use crate::intern::interned;
use crate::interrupt::poll_signals;

/// How deep values may nest (a grid is 2 levels, a set of objects 4). Deeper values are refused
/// both ways rather than risk the stack.
pub const MAX_DEPTH: usize = 100;

/// How deep function values may nest (`compose` of `compose` of ...), counting the containers
/// in them. Calling one recurses once per level, so a function built deeper by a loop in
/// Python could overflow the stack; the reference raises `RecursionError` near 1000 levels.
pub const MAX_FUNCTION_DEPTH: usize = 400;

/// A Python object as a DSL value.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    free_set_aside();
    let container = obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyFrozenSet>();
    if !container {
        return Converter { immutable: true }.value_at(obj, 0);
    }
    if let Some(v) = cache::get(obj) {
        return Ok(v);
    }
    let mut converter = Converter { immutable: true };
    let v = converter.value_at(obj, 0)?;
    if converter.immutable {
        cache::put(obj, &v);
    }
    Ok(v)
}

/// One conversion, noting whether every object met was immutable (so the result may be cached).
struct Converter {
    immutable: bool,
}

impl Converter {
    fn value_at(&mut self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
        if depth > MAX_DEPTH {
            return Err(too_deep(obj.py()));
        }
        poll_signals(obj.py())?;
        if let Ok(t) = obj.cast::<PyTuple>() {
            return self.tuple_value(t, depth);
        }
        if obj.is_instance_of::<PyBool>() {
            return Ok(Value::Bool(obj.is_truthy()?));
        }
        if let Ok(n) = obj.cast::<PyInt>() {
            return int_value(n.as_any()).map(Value::Int);
        }
        if let Ok(s) = obj.cast::<PyFrozenSet>() {
            return self.set_value(collect_py(obj.py(), s.iter().map(Ok))?, depth);
        }
        if obj.is_none() {
            return Ok(Value::None);
        }
        if let Ok(f) = obj.cast::<Function>() {
            return Ok(f.get().value().clone());
        }
        if let Ok(s) = obj.cast::<PySet>() {
            self.immutable = false;
            return self.set_value(collect_py(obj.py(), s.iter().map(Ok))?, depth);
        }
        if obj.hasattr("__array_interface__")? {
            self.immutable = false;
            return numpy_value(obj);
        }
        if obj.is_callable() {
            return Callback::value(obj);
        }
        Err(not_convertible(obj))
    }

    fn tuple_value(&mut self, t: &Bound<'_, PyTuple>, depth: usize) -> PyResult<Value> {
        let n = t.len();
        if n == 2 {
            if let (Some(a), Some(b)) = (exact_int(&t.get_item(0)?), exact_int(&t.get_item(1)?)) {
                return Ok(Value::Pair(a, b));
            }
        }
        if let Some(grid) = grid_of_rows(t) {
            return Ok(Value::grid(grid));
        }
        let items = t
            .iter()
            .map(|item| self.value_at(&item, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Value::tuple(items))
    }

    /// [`members_value`](Self::members_value); on an error (a signal's, say) the members are
    /// set aside to be freed at the next conversion ([`collect_py`]).
    fn set_value(&mut self, members: Vec<Bound<'_, PyAny>>, depth: usize) -> PyResult<Value> {
        let value = self.members_value(&members, depth);
        if value.is_err() {
            set_aside(members);
        }
        value
    }

    /// A frozenset (or set) from its members: an index set or an object when every member is a
    /// location or a cell, else a generic set.
    fn members_value(&mut self, members: &[Bound<'_, PyAny>], depth: usize) -> PyResult<Value> {
        if let Some(locs) = all_of(members, loc_of)? {
            return Ok(Value::indices(locs));
        }
        if let Some(cells) = all_of(members, cell_of)? {
            return Ok(Value::object(cells));
        }
        let items = members
            .iter()
            .map(|m| self.value_at(m, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Value::set(items))
    }
}

/// `read` of every member, or `None` where one is not what it reads; signals polled between
/// members ([`poll_signals`]).
fn all_of<T>(members: &[Bound<'_, PyAny>], read: impl Fn(&Bound<'_, PyAny>) -> Option<T>) -> PyResult<Option<Vec<T>>> {
    let mut out = Vec::with_capacity(members.len());
    for m in members {
        poll_signals(m.py())?;
        match read(m) {
            Some(v) => out.push(v),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// A Python int as an `i64`.
fn int_value(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            error(
                obj.py(),
                Kind::DslLimit,
                format!("the integer {obj} does not fit in 64 bits"),
            )
        } else {
            e
        }
    })
}

/// An exact `int` (not a `bool`) as an `i64`, or `None`.
fn exact_int(obj: &Bound<'_, PyAny>) -> Option<i64> {
    if obj.is_exact_instance_of::<PyInt>() {
        obj.extract().ok()
    } else {
        None
    }
}

/// A tuple of equally long tuples of exact ints that fit a grid cell, as a grid. Items are read
/// without reference counting; a cell holding the same object as the cell before has its colour
/// (every object read stays alive in the grid meanwhile, so an address is one object), and one
/// holding a shared int `0..10` is read by its address ([`Interned::color_of`]).
fn grid_of_rows(t: &Bound<'_, PyTuple>) -> Option<Grid> {
    let interned = interned(t.py()).ok();
    let w = t.get_borrowed_item(0).ok()?.cast::<PyTuple>().ok()?.len();
    let mut cells = Vec::with_capacity(t.len() * w);
    let mut last = (std::ptr::null_mut(), 0);
    for row in t.iter_borrowed() {
        let row = row.cast_exact::<PyTuple>().ok()?;
        if row.len() != w {
            return None;
        }
        for c in row.iter_borrowed() {
            if c.as_ptr() != last.0 {
                let color = match interned.and_then(|i| i.color_of(&c)) {
                    Some(k) => k,
                    None => Color::try_from(exact_int(&c)?).ok()?,
                };
                last = (c.as_ptr(), color);
            }
            cells.push(last.1);
        }
    }
    let grid = Grid::new(t.len(), w, cells);
    cache::remember_rows(&grid, t);
    Some(grid)
}

/// `(i, j)` of exact ints that fit the core's locations.
fn loc_of(obj: &Bound<'_, PyAny>) -> Option<Loc> {
    let t = obj.cast_exact::<PyTuple>().ok()?;
    if t.len() != 2 {
        return None;
    }
    Some(Loc {
        i: i32::try_from(exact_int(&t.get_item(0).ok()?)?).ok()?,
        j: i32::try_from(exact_int(&t.get_item(1).ok()?)?).ok()?,
    })
}

/// `(colour, (i, j))` of exact ints that fit the core's cells.
fn cell_of(obj: &Bound<'_, PyAny>) -> Option<Cell> {
    let t = obj.cast_exact::<PyTuple>().ok()?;
    if t.len() != 2 {
        return None;
    }
    let color = i32::try_from(exact_int(&t.get_item(0).ok()?)?).ok()?;
    let loc = loc_of(&t.get_item(1).ok()?)?;
    Some(Cell {
        color,
        i: loc.i,
        j: loc.j,
    })
}

/// A numpy value: a 2-D integer array as a grid, an integer or boolean scalar as an int or a
/// bool.
fn numpy_value(array: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = array.py();
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    match (&shape[..], kind.as_str()) {
        ([], "b") => Ok(Value::Bool(array.is_truthy()?)),
        ([], "i" | "u") => int_value(&array.call_method0("__index__")?).map(Value::Int),
        ([], _) => Err(not_convertible(array)),
        (&[h, w], "i" | "u") => numpy_grid(array, h, w),
        ([_, _], _) => Err(error(
            py,
            Kind::DslType,
            format!("a numpy grid must have an integer dtype, this array has {dtype}"),
        )),
        _ => Err(error(
            py,
            Kind::DslType,
            format!("a numpy grid must have 2 dimensions, this array has shape {shape:?}"),
        )),
    }
}

/// A 2-D numpy array of integers (`h` by `w`) as a grid.
fn numpy_grid(array: &Bound<'_, PyAny>, h: usize, w: usize) -> PyResult<Value> {
    let py = array.py();
    if h == 0 {
        return Ok(Value::empty_tuple());
    }
    let as_i64 = array.call_method1("astype", ("<i8",))?.call_method0("tobytes")?;
    let bytes = as_i64.cast::<PyBytes>()?.as_bytes();
    let mut cells = Vec::with_capacity(h * w);
    for chunk in bytes.chunks_exact(8) {
        let mut le = [0u8; 8];
        le.copy_from_slice(chunk);
        let c = i64::from_le_bytes(le);
        cells.push(Color::try_from(c).map_err(|_| {
            error(
                py,
                Kind::DslLimit,
                DslError::ColorRange(c.to_string().into()).to_string(),
            )
        })?);
    }
    Ok(Value::grid(Grid::new(h, w, cells)))
}

fn too_deep(py: Python<'_>) -> PyErr {
    error(
        py,
        Kind::DslLimit,
        format!("a value nested deeper than {MAX_DEPTH} levels"),
    )
}

/// The error for an object that is no DSL value, with a hint for the common cases.
fn not_convertible(obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    let mut shown = obj.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
    if shown.chars().count() > 60 {
        shown = shown.chars().take(57).collect::<String>() + "...";
    }
    let hint = if type_name == "list" {
        "DSL values are tuples, not lists (arcbatch.grid(rows) turns a list of lists into a grid)"
    } else {
        "DSL values are int, bool, None, tuples, frozensets and DSL functions (and numpy integer arrays as grids)"
    };
    error(
        obj.py(),
        Kind::DslType,
        format!("cannot use {type_name} {shown} as a DSL value: {hint}"),
    )
}

/// Bytes a Python object of a value takes per unit of its size ([`eval::size`]): a tuple
/// `(i, j)` and its slot in a frozenset.
const PY_BYTES_PER_UNIT: u64 = 100;

/// A DSL value as the reference's Python object. Under an address-space limit, a value whose
/// objects would take more than half of what is left of it raises `arcbatch.DslLimitError`
/// (a `MemoryError`) instead, before any is made: Python would run out of memory midway, and
/// anything allocating then, Rust code included, would fail.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    free_set_aside();
    if let Some(left) = memory::address_space_left() {
        let cap = (left / 2 / PY_BYTES_PER_UNIT) as usize;
        let units = eval::size(v, cap);
        if units > cap {
            return Err(error(
                py,
                Kind::DslLimit,
                format!(
                    "a result of over {units} members would take more memory as Python objects than the \
                     address space has left ({} MB)",
                    left >> 20
                ),
            ));
        }
    }
    let obj = py_at(py, v, 0).inspect_err(|e| {
        // Refused as nested too deep (a container or a function value): dropping the value
        // could recurse once per level, past the end of the stack, so one reference is leaked
        // and it is never freed. (Not for an interrupted conversion: a giant value would stay.)
        let refused = |kind| class(py, kind).is_ok_and(|class| e.is_instance(py, class));
        if refused(Kind::DslLimit) || refused(Kind::DslRecursion) {
            std::mem::forget(v.clone());
        }
    })?;
    if v.is_tuple() || v.is_set() {
        cache::put(&obj, v);
    }
    Ok(obj)
}

fn py_at<'py>(py: Python<'py>, v: &Value, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    if depth > MAX_DEPTH {
        return Err(too_deep(py));
    }
    // Signals are polled by the caller: every value but the top one is a member that
    // `collect_py` counts.
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(n) => n.into_pyobject(py)?.into_any(),
        Value::Pair(a, b) => PyTuple::new(py, [a, b])?.into_any(),
        Value::Ints(v) => PyTuple::new(py, v.iter())?.into_any(),
        Value::LocPair(..) | Value::CellPair(..) => {
            let members = v.members().unwrap_or_default();
            PyTuple::new(py, items_py(py, &members, depth)?)?.into_any()
        }
        Value::Cell(c) => interned(py)?.cell(py, *c)?,
        Value::Grid(g) => PyTuple::new(py, cache::grid_rows(py, g)?)?.into_any(),
        Value::Indices(locs) => {
            let interned = interned(py)?;
            let members = collect_py(py, locs.iter().map(|&l| interned.loc(py, l)))?;
            PyFrozenSet::new(py, members)?.into_any()
        }
        Value::Object(cells) => {
            let interned = interned(py)?;
            let members = collect_py(py, cells.iter().map(|&c| interned.cell(py, c)))?;
            PyFrozenSet::new(py, members)?.into_any()
        }
        Value::Tuple(items) => PyTuple::new(py, items_py(py, items, depth)?)?.into_any(),
        Value::Set(items) => PyFrozenSet::new(py, items_py(py, items, depth)?)?.into_any(),
        Value::Func(f) => {
            if let Func::Foreign(g) = &**f {
                // A Python callable passed through comes back as itself.
                return Callback::object_of(py, g)
                    .ok_or_else(|| error(py, Kind::Internal, format!("a foreign function {f} of no callback")));
            }
            if nested_deeper(v, MAX_FUNCTION_DEPTH, &mut HashMap::new()) {
                return Err(error(
                    py,
                    Kind::DslRecursion,
                    format!("a function value nested deeper than {MAX_FUNCTION_DEPTH} levels"),
                ));
            }
            Bound::new(py, Function::new(v.clone()))?.into_any()
        }
    })
}

/// Whether a value nests function values and containers deeper than `budget` levels. Shared
/// parts are looked at once (`fine` holds those found within budget), so a function built by
/// `fork(f, f, f)` over and over costs its size, not its number of paths; the search stops at
/// the budget, so its own recursion is bounded too.
fn nested_deeper(v: &Value, budget: usize, fine: &mut HashMap<*const (), usize>) -> bool {
    let (key, parts): (*const (), Vec<&Value>) = match v {
        Value::Func(f) => (Shared::as_ptr(f).cast(), function_parts(f)),
        Value::Tuple(items) | Value::Set(items) => (items.as_ptr(), items.iter().collect()),
        _ => return false,
    };
    if parts.is_empty() || fine.get(&key).is_some_and(|&b| b <= budget) {
        return false;
    }
    if budget == 0 || parts.iter().any(|p| nested_deeper(p, budget - 1, fine)) {
        return true;
    }
    fine.insert(key, budget);
    false
}

/// The values a function value holds.
fn function_parts(f: &Func) -> Vec<&Value> {
    match f {
        Func::Prim(_) | Func::Foreign(_) => Vec::new(),
        Func::Power(g, _) => vec![g],
        Func::Compose(a, b) | Func::Matcher(a, b) | Func::Rbind(a, b) | Func::Lbind(a, b) => vec![a, b],
        Func::Chain(a, b, c) | Func::Fork(a, b, c) => vec![a, b, c],
    }
}

fn items_py<'py>(py: Python<'py>, items: &[Value], depth: usize) -> PyResult<Vec<Bound<'py, PyAny>>> {
    collect_py(py, items.iter().map(|v| py_at(py, v, depth + 1)))
}

thread_local! {
    /// Objects of conversions that stopped midway (either way), freed at the start of the
    /// next conversion.
    static SET_ASIDE: std::cell::RefCell<Vec<Py<PyAny>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The members, signals polled between them ([`poll_signals`]); on the first error, that error,
/// the members already made set aside to be freed at the next conversion
/// ([`free_set_aside`]): freeing hundreds of thousands of objects takes tens of milliseconds,
/// which the exception of an interrupt should not wait for.
fn collect_py<'py>(
    py: Python<'py>,
    members: impl ExactSizeIterator<Item = PyResult<Bound<'py, PyAny>>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut out = Vec::with_capacity(members.len());
    for member in members {
        match poll_signals(py).and(member) {
            Ok(m) => out.push(m),
            Err(e) => {
                set_aside(out);
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// Keeps `objects` until the next conversion frees them ([`free_set_aside`]).
fn set_aside(objects: Vec<Bound<'_, PyAny>>) {
    SET_ASIDE.with(|aside| aside.borrow_mut().extend(objects.into_iter().map(Bound::unbind)));
}

/// Frees what conversions that stopped midway set aside ([`collect_py`]).
fn free_set_aside() {
    let aside = SET_ASIDE.with(|aside| std::mem::take(&mut *aside.borrow_mut()));
    drop(aside);
}
