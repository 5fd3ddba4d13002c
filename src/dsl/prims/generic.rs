//! The generic paths of the grid and patch primitives: the reference's bodies over any values,
//! written with Python's object model ([`super::py`]), for the arguments no fast path takes.
//!
//! The reference duck-types: `ofcolor(frozenset(), 0)` walks the empty set as a grid without
//! rows and returns `frozenset()`, `recolor(0, grid)` takes a grid's rows for locations, and
//! `shift(grid, {(1, 2), (3, 3)})` fails unpacking a row, not the offset. A primitive's fast
//! path takes the shapes it was written for (a [`Value::Grid`], an index set, a pair) and
//! answers everything else by [`or_generic`]: where it refuses the call, the generic path runs
//! the reference's code step by step over the values as they are, so the result, or the class
//! of the exception and the step raising it, is the reference's. The fast path pays nothing
//! for it (the generic path starts only from its error).

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::value::Value;

use super::numbers::check_members;
use super::py;

/// `fast`'s result, or where it raised an exception the reference might not raise (a Python
/// exception class, or a colour no grid cell holds), `generic`'s: the reference's code over
/// the values as they are. Limits, time-outs and interruptions stand.
#[inline]
pub fn or_generic(fast: DslResult<Value>, generic: impl FnOnce() -> DslResult<Value>) -> DslResult<Value> {
    match fast {
        Ok(v) => Ok(v),
        Err(e) => retry(e, generic),
    }
}

/// `generic()` where `refused` (arguments the fast path would answer, wrongly, rather than
/// raise on: a bool colour, say), else [`or_generic`] of `fast()`.
#[inline]
pub fn fast_unless(
    refused: bool,
    fast: impl FnOnce() -> DslResult<Value>,
    generic: impl FnOnce() -> DslResult<Value>,
) -> DslResult<Value> {
    if refused {
        return generic();
    }
    or_generic(fast(), generic)
}

#[cold]
#[inline(never)]
fn retry(e: DslError, generic: impl FnOnce() -> DslResult<Value>) -> DslResult<Value> {
    match e {
        DslError::Type(_)
        | DslError::Value(_)
        | DslError::Index(_)
        | DslError::Key(_)
        | DslError::ZeroDivision(_)
        | DslError::StopIteration(_)
        | DslError::Attribute(_)
        | DslError::ColorRange(_) => generic(),
        other => Err(other),
    }
}

// ----- shared steps ------------------------------------------------------------------------

/// `tuple(tuple(row) for row in rows)`.
fn rows_value(rows: Vec<Vec<Value>>) -> Value {
    Value::tuple(rows.into_iter().map(Value::tuple).collect())
}

/// `list(list(row) for row in grid)`.
fn row_lists(grid: &Value) -> DslResult<Vec<Vec<Value>>> {
    py::iter(grid)?.iter().map(py::iter).collect()
}

/// `len(grid), len(grid[0])`.
fn dims(grid: &Value) -> DslResult<(i64, i64)> {
    let h = py::len(grid)? as i64;
    let w = py::len(&py::item(grid, 0)?)? as i64;
    Ok((h, w))
}

/// `0 <= x < n`, chained as Python evaluates it.
fn within(x: &Value, n: i64) -> DslResult<bool> {
    Ok(py::le(&Value::Int(0), x)? && py::lt(x, &Value::Int(n))?)
}

/// `rows[i][j]` of lists (an `IndexError` past a row's end, as a list's).
fn cell_of<'a>(rows: &'a mut [Vec<Value>], i: &Value, j: &Value) -> DslResult<&'a mut Value> {
    let (i, j) = (py::index_int(i)?, py::index_int(j)?);
    let row = usize::try_from(i).ok().and_then(|i| rows.get_mut(i));
    match row.and_then(|r| usize::try_from(j).ok().and_then(|j| r.get_mut(j))) {
        Some(c) => Ok(c),
        None => crate::bail!(Index, "list index out of range"),
    }
}

/// The body of `fill`/`underfill` (`cells` is `None`, each location gets `value`) and
/// `paint`/`underpaint` (each member of `cells` is unpacked as `value, (i, j)`).
fn write(grid: &Value, items: Writes<'_>, under: bool) -> DslResult<Value> {
    let (h, w) = dims(grid)?;
    let bg = if under { Some(mostcolor(grid)?) } else { None };
    let mut rows = row_lists(grid)?;
    let (members, value) = match items {
        Writes::Fill(value, patch) => (py::iter(&py::toindices(patch)?)?, Some(value)),
        Writes::Paint(obj) => (py::iter(obj)?, None),
    };
    for m in &members {
        let (v, at) = match value {
            Some(v) => (v.clone(), m.clone()),
            None => py::unpack2(m)?,
        };
        let (i, j) = py::unpack2(&at)?;
        if within(&i, h)? && within(&j, w)? {
            let cell = cell_of(&mut rows, &i, &j)?;
            if bg.as_ref().map_or(true, |bg| cell == bg) {
                *cell = v;
            }
        }
    }
    Ok(rows_value(rows))
}

enum Writes<'a> {
    Fill(&'a Value, &'a Value),
    Paint(&'a Value),
}

/// The reference's `values` of `mostcolor`, `palette`, ...: the cells of a tuple's rows, else
/// `v` of each member `v, _`.
fn element_values(element: &Value) -> DslResult<Vec<Value>> {
    let mut values = Vec::new();
    if element.is_tuple() {
        for row in py::iter(element)? {
            values.extend(py::iter(&row)?);
        }
    } else {
        for m in py::iter(element)? {
            values.push(py::unpack2(&m)?.0);
        }
    }
    Ok(values)
}

/// `mostcolor(element)`: `max(set(values), key=values.count)`.
pub fn mostcolor(element: &Value) -> DslResult<Value> {
    commonest(element, true)
}

/// `leastcolor(element)`: `min(set(values), key=values.count)`.
pub fn leastcolor(element: &Value) -> DslResult<Value> {
    commonest(element, false)
}

fn commonest(element: &Value, most: bool) -> DslResult<Value> {
    let values = element_values(element)?;
    let counts = super::common::tally(&values);
    super::common::extreme_color(&counts, most).ok_or_else(|| {
        DslError::Value(format!("{}() arg is an empty sequence", if most { "max" } else { "min" }).into())
    })
}

/// `palette(element)`.
pub fn palette(element: &Value) -> DslResult<Value> {
    Ok(Value::set(element_values(element)?))
}

/// `(i, v)` of each cell, `for i, r in enumerate(grid) for j, v in enumerate(r)`.
fn enumerated(grid: &Value) -> DslResult<Vec<(i64, i64, Value)>> {
    let mut out = Vec::new();
    for (i, r) in py::iter(grid)?.iter().enumerate() {
        for (j, v) in py::iter(r)?.into_iter().enumerate() {
            out.push((i as i64, j as i64, v));
        }
    }
    Ok(out)
}

/// `[x for x, _ in toindices(patch)]` and the same of `_, x`: the rows and the columns.
fn index_parts(patch: &Value, second: bool) -> DslResult<Vec<Value>> {
    py::iter(&py::toindices(patch)?)?
        .iter()
        .map(|m| py::unpack2(m).map(|(i, j)| if second { j } else { i }))
        .collect()
}

/// `uppermost`/`leftmost` (`min`) and `lowermost`/`rightmost` (`max`).
fn extreme_index(patch: &Value, second: bool, max: bool) -> DslResult<Value> {
    let parts = index_parts(patch, second)?;
    if max {
        py::max(&parts)
    } else {
        py::min(&parts)
    }
}

/// `height`/`width`: a tuple's length (of rows, of its first row), else the extent.
fn extent(piece: &Value, second: bool) -> DslResult<Value> {
    if py::len(piece)? == 0 {
        return Ok(Value::Int(0));
    }
    if piece.is_tuple() {
        let measured = if second { py::item(piece, 0)? } else { piece.clone() };
        return Ok(Value::Int(py::len(&measured)? as i64));
    }
    let far = extreme_index(piece, second, true)?;
    let near = extreme_index(piece, second, false)?;
    py::add(&py::sub(&far, &near)?, &Value::Int(1))
}

/// `normalize(patch)`.
fn normalize(patch: &Value) -> DslResult<Value> {
    if py::len(patch)? == 0 {
        return Ok(patch.clone());
    }
    let di = py::neg(&extreme_index(patch, false, false)?)?;
    let dj = py::neg(&extreme_index(patch, true, false)?)?;
    shift(patch, &Value::duo(di, dj))
}

/// The columns of `zip(*members)`: as many as the shortest member has.
fn zip_columns(members: &[Value]) -> DslResult<Vec<Vec<Value>>> {
    let rows = members
        .iter()
        .map(|m| {
            m.members()
                .ok_or_else(|| DslError::Type(format!("'{}' object is not iterable", m.type_name()).into()))
        })
        .collect::<DslResult<Vec<_>>>()?;
    let w = rows.iter().map(Vec::len).min().unwrap_or(0);
    Ok((0..w).map(|k| rows.iter().map(|r| r[k].clone()).collect()).collect())
}

/// The corner functions: `tuple(map(f, zip(*toindices(patch))))` where `f` is `min` or `max`
/// by column (`{0: min, 1: max}[k]` for `urcorner`, a `KeyError` from the third column on).
fn corner(patch: &Value, pick: fn(usize) -> Option<bool>) -> DslResult<Value> {
    let columns = zip_columns(&py::iter(&py::toindices(patch)?)?)?;
    let mut out = Vec::with_capacity(columns.len());
    for (k, column) in columns.iter().enumerate() {
        let Some(max) = pick(k) else {
            crate::bail!(Key, "{k}");
        };
        out.push(if max { py::max(column)? } else { py::min(column)? });
    }
    Ok(Value::tuple(out))
}

// ----- the primitives' generic bodies --------------------------------------------------------

pub fn colorcount(element: &Value, value: &Value) -> DslResult<Value> {
    let mut n = 0;
    if element.is_tuple() {
        for row in py::iter(element)? {
            n += py::count(&row, value)?;
        }
    } else {
        for m in py::iter(element)? {
            n += usize::from(py::unpack2(&m)?.0 == *value);
        }
    }
    Ok(Value::Int(n as i64))
}

pub fn ofcolor(grid: &Value, value: &Value) -> DslResult<Value> {
    let cells = enumerated(grid)?;
    Ok(Value::set(
        cells
            .into_iter()
            .filter(|(_, _, v)| v == value)
            .map(|(i, j, _)| Value::Pair(i, j))
            .collect(),
    ))
}

pub fn asobject(grid: &Value) -> DslResult<Value> {
    let cells = enumerated(grid)?;
    Ok(Value::set(
        cells
            .into_iter()
            .map(|(i, j, v)| Value::duo(v, Value::Pair(i, j)))
            .collect(),
    ))
}

pub fn asindices(grid: &Value) -> DslResult<Value> {
    let h = py::len(grid)? as i64;
    if h == 0 {
        return Ok(Value::empty_set());
    }
    let w = py::len(&py::item(grid, 0)?)? as i64;
    check_members((h * w) as usize)?;
    Ok(Value::set(
        (0..h).flat_map(|i| (0..w).map(move |j| Value::Pair(i, j))).collect(),
    ))
}

/// `partition` (`fg` false) and `fgpartition` (`fg` true).
pub fn partition(grid: &Value, fg: bool) -> DslResult<Value> {
    let mut colors = py::iter(&palette(grid)?)?;
    if fg {
        let bg = mostcolor(grid)?;
        colors.retain(|c| *c != bg);
    }
    let cells = if colors.is_empty() {
        Vec::new()
    } else {
        enumerated(grid)?
    };
    Ok(Value::set(
        colors
            .iter()
            .map(|c| {
                Value::set(
                    cells
                        .iter()
                        .filter(|(_, _, v)| v == c)
                        .map(|(i, j, v)| Value::duo(v.clone(), Value::Pair(*i, *j)))
                        .collect(),
                )
            })
            .collect(),
    ))
}

pub fn replace(grid: &Value, replacee: &Value, replacer: &Value) -> DslResult<Value> {
    let rows = row_lists(grid)?;
    Ok(rows_value(
        rows.into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|v| if v == *replacee { replacer.clone() } else { v })
                    .collect()
            })
            .collect(),
    ))
}

pub fn switch(grid: &Value, a: &Value, b: &Value) -> DslResult<Value> {
    // `{a: b, b: a}[v]`: where `a == b` the one key keeps the value written last, `a`.
    let swap = |v: Value| match () {
        _ if v != *a && v != *b => v,
        _ if v == *b => a.clone(),
        _ => b.clone(),
    };
    let rows = row_lists(grid)?;
    Ok(rows_value(
        rows.into_iter().map(|r| r.into_iter().map(swap).collect()).collect(),
    ))
}

/// `hupscale` (`vertical` false) and `vupscale` (true).
pub fn upscale_rows(grid: &Value, factor: &Value, vertical: bool) -> DslResult<Value> {
    let mut out = Vec::new();
    for row in py::iter(grid)? {
        if vertical {
            let n = py::index_int(factor)?.max(0) as usize;
            check_members(out.len().saturating_add(n))?;
            out.extend(std::iter::repeat(row).take(n));
        } else {
            out.push(repeat_each(&row, factor)?);
        }
    }
    Ok(Value::tuple(out))
}

/// `r + tuple(value for num in range(factor))` for each value of a row.
fn repeat_each(row: &Value, factor: &Value) -> DslResult<Value> {
    let mut r = Vec::new();
    for v in py::iter(row)? {
        let n = py::index_int(factor)?.max(0) as usize;
        check_members(r.len().saturating_add(n))?;
        r.extend(std::iter::repeat(v).take(n));
    }
    Ok(Value::tuple(r))
}

/// `upscale` of a tuple; of anything else, the reference's steps up to its first failure,
/// and then `fast` (the port's object path).
pub fn upscale(element: &Value, factor: &Value, fast: impl FnOnce() -> DslResult<Value>) -> DslResult<Value> {
    if element.is_tuple() {
        let mut out = Vec::new();
        for row in py::iter(element)? {
            let r = repeat_each(&row, factor)?;
            let n = py::index_int(factor)?.max(0) as usize;
            check_members(out.len().saturating_add(n))?;
            out.extend(std::iter::repeat(r).take(n));
        }
        return Ok(Value::tuple(out));
    }
    if py::len(element)? == 0 {
        return Ok(Value::empty_set());
    }
    let (di, dj) = py::unpack2(&corner(element, |_| Some(false))?)?;
    let normed = shift(element, &Value::duo(py::neg(&di)?, py::neg(&dj)?))?;
    for m in py::iter(&normed)? {
        let (_, at) = py::unpack2(&m)?;
        py::unpack2(&at)?;
    }
    fast()
}

pub fn recolor(value: &Value, patch: &Value) -> DslResult<Value> {
    let members = py::iter(&py::toindices(patch)?)?;
    Ok(Value::set(
        members.into_iter().map(|at| Value::duo(value.clone(), at)).collect(),
    ))
}

pub fn shift(patch: &Value, directions: &Value) -> DslResult<Value> {
    if py::len(patch)? == 0 {
        return Ok(patch.clone());
    }
    let (di, dj) = py::unpack2(directions)?;
    let cells = py::item(&py::first(patch)?, 1)?.is_tuple();
    let mut out = Vec::new();
    for m in py::iter(patch)? {
        if cells {
            let (v, at) = py::unpack2(&m)?;
            let (i, j) = py::unpack2(&at)?;
            let moved = Value::duo(py::add(&i, &di)?, py::add(&j, &dj)?);
            out.push(Value::duo(v, moved));
        } else {
            let (i, j) = py::unpack2(&m)?;
            out.push(Value::duo(py::add(&i, &di)?, py::add(&j, &dj)?));
        }
    }
    Ok(Value::set(out))
}

pub fn connect(a: &Value, b: &Value) -> DslResult<Value> {
    let (ai, aj) = py::unpack2(a)?;
    let (bi, bj) = py::unpack2(b)?;
    let one = Value::Int(1);
    let si = py::min(&[ai.clone(), bi.clone()])?;
    let ei = py::add(&py::max(&[ai.clone(), bi.clone()])?, &one)?;
    let sj = py::min(&[aj.clone(), bj.clone()])?;
    let ej = py::add(&py::max(&[aj.clone(), bj.clone()])?, &one)?;
    let span = |s: &Value, e: &Value| py::range(py::index_int(s)?, py::index_int(e)?);
    let line: Vec<Value> = if ai == bi {
        span(&sj, &ej)?.map(|j| Value::duo(ai.clone(), Value::Int(j))).collect()
    } else if aj == bj {
        span(&si, &ei)?.map(|i| Value::duo(Value::Int(i), aj.clone())).collect()
    } else if py::sub(&bi, &ai)? == py::sub(&bj, &aj)? {
        let (is, js) = (span(&si, &ei)?, span(&sj, &ej)?);
        is.zip(js).map(|(i, j)| Value::Pair(i, j)).collect()
    } else if py::sub(&bi, &ai)? == py::sub(&aj, &bj)? {
        let is = span(&si, &ei)?;
        let (hi, lo) = (py::sub(&ej, &one)?, py::sub(&sj, &one)?);
        let (hi, lo) = (py::index_int(&hi)?, py::index_int(&lo)?);
        is.zip((lo + 1..=hi).rev()).map(|(i, j)| Value::Pair(i, j)).collect()
    } else {
        Vec::new()
    };
    Ok(Value::set(line))
}

pub fn shoot(start: &Value, direction: &Value) -> DslResult<Value> {
    let forty_two = Value::Int(42);
    let i = py::add(&py::item(start, 0)?, &py::mul(&forty_two, &py::item(direction, 0)?)?)?;
    let j = py::add(&py::item(start, 1)?, &py::mul(&forty_two, &py::item(direction, 1)?)?)?;
    connect(start, &Value::duo(i, j))
}

pub fn fill(grid: &Value, value: &Value, patch: &Value, under: bool) -> DslResult<Value> {
    write(grid, Writes::Fill(value, patch), under)
}

pub fn paint(grid: &Value, obj: &Value, under: bool) -> DslResult<Value> {
    write(grid, Writes::Paint(obj), under)
}

pub fn cover(grid: &Value, patch: &Value) -> DslResult<Value> {
    let bg = mostcolor(grid)?;
    let locs = py::toindices(patch)?;
    fill(grid, &bg, &locs, false)
}

pub fn move_object(grid: &Value, obj: &Value, offset: &Value) -> DslResult<Value> {
    let covered = cover(grid, obj)?;
    let moved = shift(obj, offset)?;
    paint(&covered, &moved, false)
}

pub fn occurrences(grid: &Value, obj: &Value) -> DslResult<Value> {
    let normed = normalize(obj)?;
    let (h, w) = dims(grid)?;
    let oh = extent(obj, false)?;
    let ow = extent(obj, true)?;
    let h2 = py::add(&py::sub(&Value::Int(h), &oh)?, &Value::Int(1))?;
    let w2 = py::add(&py::sub(&Value::Int(w), &ow)?, &Value::Int(1))?;
    let (h2, w2) = (py::index_int(&h2)?, py::index_int(&w2)?);
    let mut found = Vec::new();
    for i in py::range(0, h2)? {
        for j in py::range(0, w2)? {
            let mut occurs = true;
            for m in py::iter(&shift(&normed, &Value::Pair(i, j))?)? {
                let (v, at) = py::unpack2(&m)?;
                let (a, b) = py::unpack2(&at)?;
                if !(within(&a, h)? && within(&b, w)? && py::getitem(&py::getitem(grid, &a)?, &b)? == v) {
                    occurs = false;
                    break;
                }
            }
            if occurs {
                found.push(Value::Pair(i, j));
            }
        }
    }
    Ok(Value::set(found))
}

/// `hsplit` (`vertical` false) and `vsplit` (true).
pub fn split(grid: &Value, n: &Value, vertical: bool) -> DslResult<Value> {
    let len = Value::Int(py::len(grid)? as i64);
    let (h, w, offset) = if vertical {
        let h = py::floordiv(&len, n)?;
        let w = Value::Int(py::len(&py::item(grid, 0)?)? as i64);
        (h, w, py::rem(&len, n)? != Value::Int(0))
    } else {
        let cols = Value::Int(py::len(&py::item(grid, 0)?)? as i64);
        let w = py::floordiv(&cols, n)?;
        (len, w, py::rem(&cols, n)? != Value::Int(0))
    };
    let offset = Value::Int(offset.into());
    let mut parts = Vec::new();
    for i in py::range(0, py::index_int(n)?)? {
        let i = Value::Int(i);
        let along = if vertical { &h } else { &w };
        let at = py::add(&py::mul(along, &i)?, &py::mul(&i, &offset)?)?;
        let start = if vertical {
            Value::duo(at, Value::Int(0))
        } else {
            Value::duo(Value::Int(0), at)
        };
        parts.push(crop(grid, &start, &Value::duo(h.clone(), w.clone()))?);
    }
    Ok(Value::tuple(parts))
}

pub fn crop(grid: &Value, start: &Value, dims: &Value) -> DslResult<Value> {
    let s0 = py::item(start, 0)?;
    let e0 = py::add(&py::item(start, 0)?, &py::item(dims, 0)?)?;
    let mut out = Vec::new();
    for r in py::iter(&py::slice(grid, &s0, &e0)?)? {
        let s1 = py::item(start, 1)?;
        let e1 = py::add(&py::item(start, 1)?, &py::item(dims, 1)?)?;
        out.push(py::slice(&r, &s1, &e1)?);
    }
    Ok(Value::tuple(out))
}

pub fn trim(grid: &Value) -> DslResult<Value> {
    let (one, last) = (Value::Int(1), Value::Int(-1));
    let rows = py::iter(&py::slice(grid, &one, &last)?)?;
    Ok(Value::tuple(
        rows.iter()
            .map(|r| py::slice(r, &one, &last))
            .collect::<DslResult<_>>()?,
    ))
}

pub fn manhattan(a: &Value, b: &Value) -> DslResult<Value> {
    // The generator's nested loop: `toindices(b)` anew for each member of `a`, each member
    // unpacked just before its distance, so that the first error is the reference's.
    let mut distances = Vec::new();
    for m in py::iter(&py::toindices(a)?)? {
        let (ai, aj) = py::unpack2(&m)?;
        for n in py::iter(&py::toindices(b)?)? {
            let (bi, bj) = py::unpack2(&n)?;
            let di = py::abs(&py::sub(&ai, &bi)?)?;
            let dj = py::abs(&py::sub(&aj, &bj)?)?;
            distances.push(py::add(&di, &dj)?);
        }
    }
    py::min(&distances)
}

pub fn canvas(value: &Value, dimensions: &Value) -> DslResult<Value> {
    let h = py::index_int(&py::item(dimensions, 0)?)?;
    let mut rows = Vec::new();
    for _ in py::range(0, h)? {
        let w = py::index_int(&py::item(dimensions, 1)?)?;
        let w = py::range(0, w)?.count();
        check_members(w.saturating_mul(rows.len() + 1))?;
        rows.push(Value::tuple(vec![value.clone(); w]));
    }
    Ok(Value::tuple(rows))
}

pub fn cellwise(a: &Value, b: &Value, fallback: &Value) -> DslResult<Value> {
    let (h, w) = dims(a)?;
    let mut rows = Vec::new();
    for i in 0..h {
        let mut row = Vec::new();
        for j in 0..w {
            let a_value = py::item(&py::item(a, i)?, j)?;
            let b_value = py::item(&py::item(b, i)?, j)?;
            row.push(if a_value == b_value { a_value } else { fallback.clone() });
        }
        rows.push(Value::tuple(row));
    }
    Ok(Value::tuple(rows))
}

pub fn index(grid: &Value, loc: &Value) -> DslResult<Value> {
    let (i, j) = py::unpack2(loc)?;
    let (h, w) = dims(grid)?;
    if !(within(&i, h)? && within(&j, w)?) {
        return Ok(Value::None);
    }
    py::getitem(&py::getitem(grid, &py::item(loc, 0)?)?, &py::item(loc, 1)?)
}

/// `hfrontier` (`vertical` false: `(location[0], j)`) and `vfrontier` (`(i, location[1])`).
pub fn frontier(location: &Value, vertical: bool) -> DslResult<Value> {
    let fixed = py::item(location, if vertical { 1 } else { 0 })?;
    Ok(Value::set(
        (0..30)
            .map(|k| {
                if vertical {
                    Value::duo(Value::Int(k), fixed.clone())
                } else {
                    Value::duo(fixed.clone(), Value::Int(k))
                }
            })
            .collect(),
    ))
}

/// The neighbours at the given offsets: `(loc[0] + di, loc[1] + dj)`, in the reference's order
/// of evaluation.
pub fn around(loc: &Value, offsets: &[(i64, i64)]) -> DslResult<Value> {
    let step = |x: &Value, d: i64| match d {
        0 => Ok(x.clone()),
        d if d < 0 => py::sub(x, &Value::Int(-d)),
        d => py::add(x, &Value::Int(d)),
    };
    let mut out = Vec::with_capacity(offsets.len());
    for &(di, dj) in offsets {
        let i = step(&py::item(loc, 0)?, di)?;
        let j = step(&py::item(loc, 1)?, dj)?;
        out.push(Value::duo(i, j));
    }
    Ok(Value::set(out))
}

/// `urcorner` (`{0: min, 1: max}`), `llcorner` (`{0: max, 1: min}`).
pub fn keyed_corner(patch: &Value, right: bool) -> DslResult<Value> {
    if right {
        corner(patch, |k| [Some(false), Some(true)].get(k).copied().flatten())
    } else {
        corner(patch, |k| [Some(true), Some(false)].get(k).copied().flatten())
    }
}

/// `dmirror(piece)`: a tuple's columns (`tuple(zip(*piece))`), else the members mirrored about
/// the diagonal through the upper left corner.
fn dmirror(piece: &Value) -> DslResult<Value> {
    if piece.is_tuple() {
        let columns = zip_columns(&py::iter(piece)?)?;
        return Ok(rows_value(columns));
    }
    let (a, b) = py::unpack2(&corner(piece, |_| Some(false))?)?;
    let cells = py::item(&py::first(piece)?, 1)?.is_tuple();
    // `(j - b + a, i - a + b)`.
    let mirrored = |i: &Value, j: &Value| -> DslResult<Value> {
        let x = py::add(&py::sub(j, &b)?, &a)?;
        let y = py::add(&py::sub(i, &a)?, &b)?;
        Ok(Value::duo(x, y))
    };
    let mut out = Vec::new();
    for m in py::iter(piece)? {
        if cells {
            let (v, at) = py::unpack2(&m)?;
            let (i, j) = py::unpack2(&at)?;
            out.push(Value::duo(v, mirrored(&i, &j)?));
        } else {
            let (i, j) = py::unpack2(&m)?;
            out.push(mirrored(&i, &j)?);
        }
    }
    Ok(Value::set(out))
}

/// The indices of the members with a single distinct value (`len(set(r)) == 1`).
fn uniform(lines: &[Value]) -> DslResult<Vec<usize>> {
    let mut out = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        if Value::set(py::iter(line)?).len() == Some(1) {
            out.push(k);
        }
    }
    Ok(out)
}

pub fn compress(grid: &Value) -> DslResult<Value> {
    let rows = py::iter(grid)?;
    let ri = uniform(&rows)?;
    let ci = uniform(&py::iter(&dmirror(grid)?)?)?;
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if !ri.contains(&i) {
            let kept = py::iter(r)?.into_iter().enumerate().filter(|(j, _)| !ci.contains(j));
            out.push(Value::tuple(kept.map(|(_, v)| v).collect()));
        }
    }
    Ok(Value::tuple(out))
}

pub fn corners(patch: &Value) -> DslResult<Value> {
    let ul = corner(patch, |_| Some(false))?;
    let ur = keyed_corner(patch, true)?;
    let ll = keyed_corner(patch, false)?;
    let lr = corner(patch, |_| Some(true))?;
    Ok(Value::set(vec![ul, ur, ll, lr]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::Grid;

    fn grid() -> Value {
        Value::grid(Grid::new(2, 3, vec![0, 1, 2, 7, 8, 9]))
    }

    fn class<T>(r: DslResult<T>) -> String {
        match r {
            Ok(_) => "ok".into(),
            Err(e) => e.python_name().into(),
        }
    }

    // Each expectation checked against the reference's dsl.py.
    #[test]
    fn manhattan_raises_the_first_error_the_reference_meets() {
        // manhattan(((0, 0),), ((1, None), (1, 2, 3))): `0 - None` comes before the second
        // member of `b` is unpacked.
        let a = Value::tuple(vec![Value::Pair(0, 0)]);
        let b = Value::tuple(vec![
            Value::tuple(vec![Value::Int(1), Value::None]),
            Value::tuple(vec![Value::Int(1), Value::Int(2), Value::Int(3)]),
        ]);
        assert_eq!(class(manhattan(&a, &b)), "TypeError");
    }

    #[test]
    fn grid_primitives_walk_any_iterable_as_the_reference_does() {
        let empty = Value::empty_set();
        assert_eq!(ofcolor(&empty, &Value::Int(0)), Ok(Value::empty_set()));
        assert_eq!(asobject(&empty), Ok(Value::empty_set()));
        assert_eq!(partition(&empty, false), Ok(Value::empty_set()));
        assert_eq!(class(partition(&empty, true)), "ValueError");
        // vupscale((1, 2), True) == (1, 2); vupscale((1, 2), 0) == ().
        assert_eq!(
            upscale_rows(&Value::Pair(1, 2), &Value::Bool(true), true),
            Ok(Value::Pair(1, 2))
        );
        assert_eq!(
            upscale_rows(&Value::Pair(1, 2), &Value::Int(0), true),
            Ok(Value::empty_tuple())
        );
        // hupscale((), (1, 2)) == (): the factor is never read.
        assert_eq!(
            upscale_rows(&Value::empty_tuple(), &Value::Pair(1, 2), false),
            Ok(Value::empty_tuple())
        );
        assert_eq!(
            class(upscale_rows(&Value::Pair(1, 2), &Value::Int(1), false)),
            "TypeError"
        );
        // colorcount((1, 2), 0): AttributeError ('int' object has no attribute 'count').
        assert_eq!(class(colorcount(&Value::Pair(1, 2), &Value::Int(0))), "AttributeError");
        assert_eq!(class(mostcolor(&empty)), "ValueError");
        // switch({(1, 2), (3, 3)}, 2, X) == ((1, X), (3, 3)).
        let set = Value::indices(vec![
            crate::dsl::value::Loc { i: 1, j: 2 },
            crate::dsl::value::Loc { i: 3, j: 3 },
        ]);
        let x = Value::tuple(vec![Value::Pair(1, 2)]);
        assert_eq!(
            switch(&set, &Value::Int(2), &x),
            Ok(Value::tuple(vec![
                Value::duo(Value::Int(1), x.clone()),
                Value::Pair(3, 3)
            ]))
        );
        // cellwise((), -1, True): IndexError (`a[0]`).
        assert_eq!(
            class(cellwise(&Value::empty_tuple(), &Value::Int(-1), &Value::Bool(true))),
            "IndexError"
        );
        // vsplit((1, 2), 0): ZeroDivisionError; vsplit((), ()): TypeError.
        assert_eq!(
            class(split(&Value::Pair(1, 2), &Value::Int(0), true)),
            "ZeroDivisionError"
        );
        assert_eq!(
            class(split(&Value::empty_tuple(), &Value::empty_tuple(), true)),
            "TypeError"
        );
        // trim((1, 2)) == ().
        assert_eq!(trim(&Value::Pair(1, 2)), Ok(Value::empty_tuple()));
        // canvas(0, ((1, 2),)): TypeError (range of a tuple).
        assert_eq!(class(canvas(&Value::Int(0), &x)), "TypeError");
        // cover(frozenset(), 0): ValueError (mostcolor of nothing).
        assert_eq!(class(cover(&empty, &Value::Int(0))), "ValueError");
        // fill(((1, 2),), True, {(0, 0)}) keeps the bool.
        let at = Value::indices(vec![crate::dsl::value::Loc { i: 0, j: 0 }]);
        assert_eq!(
            fill(&x, &Value::Bool(true), &at, false),
            Ok(Value::tuple(vec![Value::duo(Value::Bool(true), Value::Int(2))]))
        );
    }

    #[test]
    fn patch_primitives_take_a_grid_for_its_rows() {
        // recolor(2, ((1, 2, 3), (4, 5, 6))) == {(2, (1, 2, 3)), (2, (4, 5, 6))}.
        let rows = Value::tuple(vec![Value::ints(&[1, 2, 3]), Value::ints(&[4, 5, 6])]);
        assert_eq!(
            recolor(&Value::Int(2), &rows),
            Ok(Value::set(vec![
                Value::duo(Value::Int(2), Value::ints(&[1, 2, 3])),
                Value::duo(Value::Int(2), Value::ints(&[4, 5, 6])),
            ]))
        );
        // shift(grid, {(1, 2), (3, 3)}): ValueError (a row of three unpacked as two).
        let offset = Value::set(vec![Value::Pair(1, 2), Value::Pair(3, 3)]);
        assert_eq!(class(shift(&grid(), &offset)), "ValueError");
        // occurrences(0, grid): ValueError (normalize unpacks a row).
        assert_eq!(class(occurrences(&Value::Int(0), &grid())), "ValueError");
        // corners(grid): KeyError (a third column); ulcorner-like of rows.
        assert_eq!(class(corners(&grid())), "KeyError");
        // manhattan((), 0): ValueError, `b` never read.
        assert_eq!(class(manhattan(&Value::empty_tuple(), &Value::Int(0))), "ValueError");
        // shoot((1, 2), ((1, 2),)): TypeError (42 * (1, 2) is a tuple, 1 + it raises).
        assert_eq!(
            class(shoot(&Value::Pair(1, 2), &Value::tuple(vec![Value::Pair(1, 2)]))),
            "TypeError"
        );
        // connect({(1, 2), (3, 3)}, ()): ValueError (unpacking `()`).
        assert_eq!(class(connect(&offset, &Value::empty_tuple())), "ValueError");
        // dneighbors(((1, 2),)): TypeError ((1, 2) - 1).
        assert_eq!(
            class(around(&Value::tuple(vec![Value::Pair(1, 2)]), &[(-1, 0)])),
            "TypeError"
        );
        // hfrontier(grid) pairs its first row with each column.
        let row = Value::ints(&[0, 1, 2]);
        let f = frontier(&grid(), false).unwrap();
        assert_eq!(f.len(), Some(30));
        assert_eq!(f.member(0), Some(Value::duo(row, Value::Int(0))));
        // index(grid, {1, 2}): TypeError (`loc[0]` of a set), after the unpacking.
        let set = Value::set(vec![Value::Int(1), Value::Int(0)]);
        assert_eq!(class(index(&grid(), &set)), "TypeError");
        // crop((), ((1, 2),), {{...}}): TypeError (`dims[0]` of a set).
        assert_eq!(
            class(crop(
                &Value::empty_tuple(),
                &Value::tuple(vec![Value::Pair(1, 2)]),
                &offset
            )),
            "TypeError"
        );
    }
}
