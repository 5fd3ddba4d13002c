//! The simple path of the grid primitives: a grid as the reference's code walks it, a tuple of
//! row tuples of any lengths whose cells are any values.
//!
//! The reference builds *ragged* grids (`vconcat` of grids of different widths), colours no
//! [`Color`] holds, and cells that are no integer at all (`paint` of an object `recolor`ed with
//! the `None` that `index` returns outside a grid), and its grid primitives compute with them
//! wherever their code can walk the rows: cells are only copied and compared with `==`. The
//! fast paths take a rectangular [`Grid`]; [`on_grid`] sends every other tuple of tuples, and
//! every call whose fast path meets a colour beyond [`Color`] ([`DslError::ColorRange`]), here. Each function
//! below is one primitive's body in the reference, over rows; the tests check it against the
//! fast path on rectangular grids.

use crate::dsl::error::{DslError, DslResult};
use crate::dsl::memory;
use crate::dsl::shared::{Shared, SliceRef};
use crate::dsl::value::{Grid, Loc, Value};

use super::common::{coord, extreme_color, py_slice, tally, MAX_MEMBERS, MEMBER_BYTES};

/// A grid's rows: `rows[i][j]` is `grid[i][j]`.
pub type Rows = [Vec<Value>];

/// Runs `fast` on `v` as a [`Grid`], or `simple` on its rows where `v` is a tuple of tuples
/// that is no `Grid` (ragged, or with a cell no [`Color`](crate::dsl::Color) holds), or where
/// `fast` meets such a colour. Other values fail as [`Value::as_grid`] fails.
pub fn on_grid<T>(
    v: &Value,
    fast: impl FnOnce(&Shared<Grid>) -> DslResult<T>,
    simple: impl FnOnce(&Rows) -> DslResult<T>,
) -> DslResult<T> {
    match v.as_grid() {
        Ok(g) => match fast(&g) {
            Err(DslError::ColorRange(_)) => simple(&grid_rows(&g)),
            result => result,
        },
        Err(refused) => simple(&rows_of(v).ok_or(refused)?),
    }
}

/// The rows of a grid, or of any tuple of tuples; other values fail as [`Value::as_grid`] fails.
pub fn of(v: &Value) -> DslResult<Vec<Vec<Value>>> {
    match v.as_grid() {
        Ok(g) => Ok(grid_rows(&g)),
        Err(refused) => rows_of(v).ok_or(refused),
    }
}

/// The rows of a tuple of tuples (in any representation: a pair of cells too), their members
/// as they are.
fn rows_of(v: &Value) -> Option<Vec<Vec<Value>>> {
    if !v.is_tuple() {
        return None;
    }
    v.members()?
        .iter()
        .map(|r| if r.is_tuple() { r.members() } else { None })
        .collect()
}

fn grid_rows(g: &Grid) -> Vec<Vec<Value>> {
    (0..g.h)
        .map(|i| g.row(i).iter().map(|&c| Value::Int(c.into())).collect())
        .collect()
}

/// `tuple(tuple(row) for row in rows)`.
fn value(rows: impl IntoIterator<Item = Vec<Value>>) -> Value {
    Value::tuple(rows.into_iter().map(Value::tuple).collect())
}

/// `enumerate` of the cells: `(i, j, v)` row by row.
fn cells(rows: &Rows) -> impl Iterator<Item = (usize, usize, &Value)> + '_ {
    rows.iter()
        .enumerate()
        .flat_map(|(i, r)| r.iter().enumerate().map(move |(j, v)| (i, j, v)))
}

fn loc(i: usize, j: usize) -> DslResult<Loc> {
    Ok(Loc {
        i: coord(i as i64)?,
        j: coord(j as i64)?,
    })
}

/// `tuple(tuple(replacer if v == replacee else v for v in r) for r in grid)`.
pub fn replace(rows: &Rows, replacee: &Value, replacer: &Value) -> Value {
    value(rows.iter().map(|r| {
        r.iter()
            .map(|v| if v == replacee { replacer } else { v }.clone())
            .collect()
    }))
}

/// `switch`: `a` and `b` trade places.
pub fn switch(rows: &Rows, a: &Value, b: &Value) -> Value {
    let swap = |v: &Value| match v {
        v if v == a => b.clone(),
        v if v == b => a.clone(),
        v => v.clone(),
    };
    value(rows.iter().map(|r| r.iter().map(swap).collect()))
}

/// `hconcat`: `tuple(i + j for i, j in zip(a, b))` over the members of `a` and `b`: rows
/// joined pairwise, or Python's `+` on whatever else the members are.
pub fn hconcat(a: &[Value], b: &[Value]) -> DslResult<Value> {
    a.iter()
        .zip(b)
        .map(|(i, j)| super::numbers::py_add(i, j))
        .collect::<DslResult<_>>()
        .map(Value::tuple)
}

/// `crop`: `tuple(r[start[1]:start[1] + dims[1]] for r in grid[start[0]:start[0] + dims[0]])`.
pub fn crop(rows: &Rows, start: (i64, i64), dims: (i64, i64)) -> Value {
    let picked = &rows[py_slice(rows.len(), start.0, start.0.saturating_add(dims.0))];
    value(
        picked
            .iter()
            .map(|r| r[py_slice(r.len(), start.1, start.1.saturating_add(dims.1))].to_vec()),
    )
}

/// `zip(*rows)`: the columns, as many as the shortest row is long.
fn zip<'r>(rows: impl Iterator<Item = &'r [Value]> + Clone) -> Vec<Vec<Value>> {
    let w = rows.clone().map(<[Value]>::len).min().unwrap_or(0);
    (0..w).map(|j| rows.clone().map(|r| r[j].clone()).collect()).collect()
}

fn reversed(rows: Vec<Vec<Value>>) -> impl DoubleEndedIterator<Item = Vec<Value>> {
    rows.into_iter().map(|mut r| {
        r.reverse();
        r
    })
}

/// `rot90`: `tuple(row for row in zip(*grid[::-1]))`.
fn rot90_rows(rows: &Rows) -> Vec<Vec<Value>> {
    zip(rows.iter().rev().map(Vec::as_slice))
}

/// `rot270`: `tuple(tuple(row[::-1]) for row in zip(*grid[::-1]))[::-1]`.
fn rot270_rows(rows: &Rows) -> Vec<Vec<Value>> {
    reversed(rot90_rows(rows)).rev().collect()
}

pub fn rot90(rows: &Rows) -> Value {
    value(rot90_rows(rows))
}

/// `rot180`: `tuple(tuple(row[::-1]) for row in grid[::-1])`.
pub fn rot180(rows: &Rows) -> Value {
    value(reversed(rows.to_vec()).rev())
}

pub fn rot270(rows: &Rows) -> Value {
    value(rot270_rows(rows))
}

/// `dmirror` of a tuple: `tuple(zip(*piece))`.
pub fn dmirror(rows: &Rows) -> Value {
    value(zip(rows.iter().map(Vec::as_slice)))
}

/// `cmirror` of a tuple: `tuple(zip(*(r[::-1] for r in piece[::-1])))`.
pub fn cmirror(rows: &Rows) -> Value {
    let flipped: Vec<Vec<Value>> = reversed(rows.to_vec()).rev().collect();
    value(zip(flipped.iter().map(Vec::as_slice)))
}

/// `lefthalf`: `rot270(tophalf(rot90(grid)))`; with `right`, `righthalf`:
/// `rot270(bottomhalf(rot90(grid)))`.
pub fn half(rows: &Rows, right: bool) -> Value {
    let turned = rot90_rows(rows);
    let n = turned.len();
    let kept = if right {
        &turned[n / 2 + n % 2..]
    } else {
        &turned[..n / 2]
    };
    value(rot270_rows(kept))
}

/// `index`: `h, w = len(grid), len(grid[0])`, `None` outside `h` by `w`, else `grid[i][j]`,
/// Python's `IndexError` where row `i` is shorter than the first.
pub fn index(rows: &Rows, i: i64, j: i64) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let (h, w) = (rows.len() as i64, rows.first().ok_or_else(out_of_range)?.len() as i64);
    if !((0..h).contains(&i) && (0..w).contains(&j)) {
        return Ok(Value::None);
    }
    let cell = rows[i as usize].get(j as usize).ok_or_else(out_of_range)?;
    Ok(cell.clone())
}

/// `hupscale`, `vupscale` and `upscale` of a tuple: each value repeated `fx` times across,
/// each row `fy` times down (`range` of a factor below one is empty).
pub fn scaled(rows: &Rows, fy: usize, fx: usize) -> Value {
    value(rows.iter().flat_map(|r| {
        let wide: Vec<Value> = r.iter().flat_map(|v| std::iter::repeat(v).take(fx)).cloned().collect();
        std::iter::repeat(wide).take(fy)
    }))
}

/// `downscale`: `h, w = len(grid), len(grid[0])`, of each row the items `j < w` with
/// `j % factor == 0`, then the rows `i % factor == 0`; Python's `IndexError` where a row is
/// shorter than the first, `ZeroDivisionError` for a zero factor.
pub fn downscale(rows: &Rows, factor: i64) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let w = rows.first().ok_or_else(out_of_range)?.len();
    if factor == 0 {
        crate::bail!(ZeroDivision, "integer division or modulo by zero");
    }
    let step = usize::try_from(factor.unsigned_abs()).unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(rows.len().div_ceil(step));
    for (i, r) in rows.iter().enumerate() {
        let kept = (0..w)
            .step_by(step)
            .map(|j| r.get(j).cloned().ok_or_else(out_of_range))
            .collect::<DslResult<Vec<Value>>>()?;
        if i % step == 0 {
            out.push(kept);
        }
    }
    Ok(value(out))
}

/// `hsplit` (`vertical` false) and `vsplit`: `n` crops of `len // n` columns (rows), one
/// skipped between parts where `n` does not divide the first row's width (the row count).
pub fn split(rows: &Rows, n: i64, vertical: bool) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let zero = || DslError::ZeroDivision("integer division or modulo by zero".into());
    // `h, w = len(grid), len(grid[0]) // n` (hsplit); `h, w = len(grid) // n, len(grid[0])`.
    let (len, w) = if vertical {
        let len = rows.len() as i64;
        if n == 0 {
            return Err(zero());
        }
        (len, rows.first().ok_or_else(out_of_range)?.len() as i64)
    } else {
        let w = rows.first().ok_or_else(out_of_range)?.len() as i64;
        if n == 0 {
            return Err(zero());
        }
        (w, w)
    };
    let (part, gap) = (len.div_euclid(n), i64::from(len.rem_euclid(n) != 0));
    let parts = usize::try_from(n).unwrap_or(0).min(MAX_MEMBERS);
    let h = rows.len() as i64;
    Ok(Value::tuple(
        (0..parts as i64)
            .map(|k| {
                let at = part * k + k * gap;
                match vertical {
                    true => crop(rows, (at, 0), (part, w)),
                    false => crop(rows, (0, at), (h, part)),
                }
            })
            .collect(),
    ))
}

/// `trim`: `tuple(r[1:-1] for r in grid[1:-1])`.
pub fn trim(rows: &Rows) -> Value {
    value(
        rows[py_slice(rows.len(), 1, -1)]
            .iter()
            .map(|r| r[py_slice(r.len(), 1, -1)].to_vec()),
    )
}

/// `cover`: `fill(grid, mostcolor(grid), toindices(patch))`, the patch's locations read after
/// the background.
pub fn cover<'p>(rows: &Rows, locs: impl FnOnce() -> DslResult<SliceRef<'p, Loc>>) -> DslResult<Value> {
    let Some(bg) = extreme_color(&color_counts(rows), true) else {
        crate::bail!(Value, "max() arg is an empty sequence");
    };
    let locs = locs()?;
    write(
        rows,
        locs.iter().map(|l| (i64::from(l.i), i64::from(l.j), bg.clone())),
        false,
    )
}

/// The cell tuple `(v, (i, j))`.
fn cell(v: &Value, i: usize, j: usize) -> DslResult<Value> {
    Ok(Value::duo(v.clone(), Value::loc(loc(i, j)?)))
}

/// The rows holding one value only (`len(set(r)) == 1`), and the columns of `zip(*grid)` that
/// do: `compress`'s and `frontiers`' `ri`/`ci`.
fn uniform(rows: &Rows) -> (Vec<usize>, Vec<usize>) {
    let one_value = |cells: &[Value]| !cells.is_empty() && cells.iter().all(|v| *v == cells[0]);
    let columns = zip(rows.iter().map(Vec::as_slice));
    (
        (0..rows.len()).filter(|&i| one_value(&rows[i])).collect(),
        (0..columns.len()).filter(|&j| one_value(&columns[j])).collect(),
    )
}

/// `partition` (and with `foreground`, `fgpartition`, which leaves out `mostcolor(grid)`): one
/// object per value, of every cell holding it.
pub fn partition(rows: &Rows, foreground: bool) -> DslResult<Value> {
    let counts = color_counts(rows);
    let skip = match foreground {
        true => match extreme_color(&counts, true) {
            Some(bg) => Some(bg),
            None => crate::bail!(Value, "max() arg is an empty sequence"),
        },
        false => None,
    };
    let classes = counts
        .iter()
        .filter(|(v, _)| Some(v) != skip.as_ref())
        .map(|(value, _)| {
            let members = cells(rows)
                .filter(|&(_, _, v)| v == value)
                .map(|(i, j, v)| cell(v, i, j))
                .collect::<DslResult<_>>()?;
            Ok(Value::set(members))
        })
        .collect::<DslResult<_>>()?;
    Ok(Value::set(classes))
}

/// `toobject`: `h, w = len(grid), len(grid[0])`, then `(grid[i][j], (i, j))` for each location
/// of the patch inside `h` by `w`; Python's `IndexError` where row `i` is shorter than the first.
pub fn toobject<'p>(rows: &Rows, locs: impl FnOnce() -> DslResult<SliceRef<'p, Loc>>) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let (h, w) = (rows.len() as i64, rows.first().ok_or_else(out_of_range)?.len() as i64);
    let mut members = Vec::new();
    for l in locs()?.iter() {
        let (i, j) = (i64::from(l.i), i64::from(l.j));
        if (0..h).contains(&i) && (0..w).contains(&j) {
            let v = rows[i as usize].get(j as usize).ok_or_else(out_of_range)?;
            members.push(cell(v, i as usize, j as usize)?);
        }
    }
    Ok(Value::set(members))
}

/// `compress`: the grid without the rows, and the cells of the columns, that hold one value.
pub fn compress(rows: &Rows) -> Value {
    let (ri, ci) = uniform(rows);
    value((0..rows.len()).filter(|i| !ri.contains(i)).map(|i| {
        (0..rows[i].len())
            .filter(|j| !ci.contains(j))
            .map(|j| rows[i][j].clone())
            .collect()
    }))
}

/// `frontiers`: `h, w = len(grid), len(grid[0])`, each one-valued row as an object over
/// `range(w)`, each one-valued column over `range(h)`; Python's `IndexError` where such a row
/// is shorter than the first.
pub fn frontiers(rows: &Rows) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let (h, w) = (rows.len(), rows.first().ok_or_else(out_of_range)?.len());
    let (ri, ci) = uniform(rows);
    let mut found = Vec::new();
    for &i in &ri {
        let line = (0..w)
            .map(|j| cell(rows[i].get(j).ok_or_else(out_of_range)?, i, j))
            .collect::<DslResult<_>>()?;
        found.push(Value::set(line));
    }
    for &j in &ci {
        // A uniform column lies within the shortest row.
        found.push(Value::set(
            (0..h).map(|i| cell(&rows[i][j], i, j)).collect::<DslResult<_>>()?,
        ));
    }
    Ok(Value::set(found))
}

/// `cellwise`: for `i` in `range(len(a))` and `j` in `range(len(a[0]))`, `a[i][j]` where it
/// equals `b[i][j]`, else `fallback`; a cell either lacks is Python's `IndexError`.
pub fn cellwise(a: &Rows, b: &Rows, fallback: &Value) -> DslResult<Value> {
    let out_of_range = || DslError::Index("tuple index out of range".into());
    let w = a.first().ok_or_else(out_of_range)?.len();
    let mut out = Vec::with_capacity(a.len());
    for (i, row) in a.iter().enumerate() {
        let mut cells = Vec::with_capacity(w);
        for j in 0..w {
            let x = row.get(j).ok_or_else(out_of_range)?;
            let y = b.get(i).and_then(|r| r.get(j)).ok_or_else(out_of_range)?;
            cells.push(if x == y { x } else { fallback }.clone());
        }
        out.push(cells);
    }
    Ok(value(out))
}

/// `fill`, `paint` and their `under` variants: `h, w = len(grid), len(grid[0])`, and each
/// `(i, j, value)` inside `h` by `w` written in turn (with `under`, only over `mostcolor(grid)`).
/// A row shorter than the first is Python's `IndexError` where an item lands past its end.
pub fn write(rows: &Rows, items: impl Iterator<Item = (i64, i64, Value)>, under: bool) -> DslResult<Value> {
    let (h, w) = match rows.first() {
        Some(first) => (rows.len() as i64, first.len() as i64),
        None => crate::bail!(Index, "tuple index out of range"),
    };
    let bg = if under {
        match extreme_color(&color_counts(rows), true) {
            Some(bg) => Some(bg),
            None => crate::bail!(Value, "max() arg is an empty sequence"),
        }
    } else {
        None
    };
    let mut out = rows.to_vec();
    for (i, j, v) in items {
        if (0..h).contains(&i) && (0..w).contains(&j) {
            let Some(cell) = out[i as usize].get_mut(j as usize) else {
                crate::bail!(Index, "list index out of range");
            };
            if bg.as_ref().map_or(true, |bg| cell == bg) {
                *cell = v;
            }
        }
    }
    Ok(value(out))
}

/// `asobject`: `frozenset((v, (i, j)) for i, r in enumerate(grid) for j, v in enumerate(r))`.
pub fn asobject(rows: &Rows) -> DslResult<Value> {
    let members = cells(rows).map(|(i, j, v)| cell(v, i, j)).collect::<DslResult<_>>()?;
    Ok(Value::set(members))
}

/// `ofcolor`: the locations holding `value`.
pub fn ofcolor(rows: &Rows, value: &Value) -> DslResult<Value> {
    let locs = cells(rows)
        .filter(|&(_, _, v)| v == value)
        .map(|(i, j, _)| loc(i, j))
        .collect::<DslResult<_>>()?;
    Ok(Value::indices(locs))
}

/// `asindices`: `frozenset((i, j) for i in range(len(grid)) for j in range(len(grid[0])))`:
/// every row as wide as the first.
pub fn asindices(rows: &Rows) -> DslResult<Value> {
    let w = rows.first().map_or(0, Vec::len);
    if rows.len().saturating_mul(w) > MAX_MEMBERS {
        crate::bail!(TooLarge, "a {}x{w} grid has too many indices", rows.len());
    }
    memory::room_for(rows.len() * w * MEMBER_BYTES, || {
        format!("the indices of a {}x{w} grid", rows.len())
    })?;
    let mut locs = Vec::with_capacity(rows.len() * w);
    for i in 0..rows.len() {
        for j in 0..w {
            locs.push(loc(i, j)?);
        }
    }
    Ok(Value::indices_sorted(locs))
}

/// The colours with their counts, in canonical order: the reference's `values` list of
/// `mostcolor`, `palette`, ... tallied.
pub fn color_counts(rows: &Rows) -> Vec<(Value, usize)> {
    tally(rows.iter().flatten())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::dsl::{Color, PrimId};

    fn p(name: &str, args: Vec<Value>) -> DslResult<Value> {
        (PrimId::of(name).unwrap().spec().imp)(&args)
    }

    /// A tuple of integer tuples.
    fn ints<const N: usize>(rows: [Vec<i64>; N]) -> Value {
        value(rows.map(|r| r.into_iter().map(Value::Int).collect()))
    }

    fn ragged() -> Value {
        ints([vec![1, 2, 3], vec![4, 5], vec![6, 7, 8, 9]])
    }

    proptest! {
        /// On a rectangular grid the simple path is the fast path.
        #[test]
        fn the_simple_path_is_the_fast_path_on_grids(
            h in 1usize..6,
            w in 1usize..6,
            colors in proptest::collection::vec(0..4 as Color, 36),
            x in 0..4i64,
            y in 0..4i64,
            start in (-7..7i64, -7..7i64),
            dims in (-2..7i64, -2..7i64),
            other in (1usize..6, 1usize..6),
            spots in proptest::collection::vec((-1..7i64, -1..7i64), 0..8),
        ) {
            let g = Grid::new(h, w, colors[..h * w].to_vec());
            let rows = grid_rows(&g);
            let v = Value::grid(g);
            let (vx, vy) = (Value::Int(x), Value::Int(y));
            prop_assert_eq!(p("replace", vec![v.clone(), vx.clone(), vy.clone()]).unwrap(), replace(&rows, &vx, &vy));
            prop_assert_eq!(p("switch", vec![v.clone(), vx.clone(), vy.clone()]).unwrap(), switch(&rows, &vx, &vy));
            let members = v.members().unwrap_or_default();
            prop_assert_eq!(p("hconcat", vec![v.clone(), v.clone()]), hconcat(&members, &members));
            prop_assert_eq!(p("asobject", vec![v.clone()]).unwrap(), asobject(&rows).unwrap());
            prop_assert_eq!(p("ofcolor", vec![v.clone(), Value::Int(x)]).unwrap(), ofcolor(&rows, &vx).unwrap());
            prop_assert_eq!(p("asindices", vec![v.clone()]).unwrap(), asindices(&rows).unwrap());
            let patch = Value::indices(spots.iter().map(|&(i, j)| Loc { i: i as i32, j: j as i32 }).collect());
            let mut items: Vec<(i64, i64, Value)> = spots.iter().map(|&(i, j)| (i, j, vy.clone())).collect();
            items.sort();
            items.dedup();
            for (name, under) in [("fill", false), ("underfill", true)] {
                let fast = p(name, vec![v.clone(), Value::Int(y), patch.clone()]).unwrap();
                prop_assert_eq!(fast, write(&rows, items.iter().cloned(), under).unwrap());
            }
            let b = Grid::new(other.0, other.1, colors[36 - other.0 * other.1..].to_vec());
            let b_rows = grid_rows(&b);
            let fast = p("cellwise", vec![v.clone(), Value::grid(b), Value::Int(x)]);
            prop_assert_eq!(fast, cellwise(&rows, &b_rows, &vx));
            let (s, d) = (Value::Pair(start.0, start.1), Value::Pair(dims.0, dims.1));
            prop_assert_eq!(p("crop", vec![v.clone(), s, d]).unwrap(), crop(&rows, start, dims));
            for (name, simple) in [
                ("rot90", rot90 as fn(&Rows) -> Value),
                ("rot180", rot180),
                ("rot270", rot270),
                ("dmirror", dmirror),
                ("cmirror", cmirror),
            ] {
                prop_assert_eq!(p(name, vec![v.clone()]).unwrap(), simple(&rows), "{}", name);
            }
            let n = dims.0;
            prop_assert_eq!(p("hsplit", vec![v.clone(), Value::Int(n)]), split(&rows, n, false));
            prop_assert_eq!(p("vsplit", vec![v.clone(), Value::Int(n)]), split(&rows, n, true));
            prop_assert_eq!(p("downscale", vec![v.clone(), Value::Int(n)]), downscale(&rows, n));
            let f = usize::try_from(dims.1.max(0)).unwrap();
            prop_assert_eq!(p("hupscale", vec![v.clone(), Value::Int(dims.1)]).unwrap(), scaled(&rows, 1, f));
            prop_assert_eq!(p("upscale", vec![v.clone(), Value::Int(dims.1)]).unwrap(), scaled(&rows, f, f));
            prop_assert_eq!(p("trim", vec![v.clone()]).unwrap(), trim(&rows));
            let locs = || Ok(SliceRef::Built(spots.iter().map(|&(i, j)| Loc { i: i as i32, j: j as i32 }).collect()));
            let covered = p("cover", vec![v.clone(), Value::indices(locs().unwrap().to_vec())]);
            prop_assert_eq!(covered, cover(&rows, locs));
            prop_assert_eq!(p("partition", vec![v.clone()]), partition(&rows, false));
            prop_assert_eq!(p("fgpartition", vec![v.clone()]), partition(&rows, true));
            prop_assert_eq!(p("compress", vec![v.clone()]).unwrap(), compress(&rows));
            prop_assert_eq!(p("frontiers", vec![v.clone()]), frontiers(&rows));
            let patch = Value::indices(locs().unwrap().to_vec());
            prop_assert_eq!(p("toobject", vec![patch, v.clone()]), toobject(&rows, locs));
            prop_assert_eq!(p("lefthalf", vec![v.clone()]).unwrap(), half(&rows, false));
            prop_assert_eq!(p("righthalf", vec![v.clone()]).unwrap(), half(&rows, true));
            let at = Value::Pair(start.0, start.1);
            prop_assert_eq!(p("index", vec![v.clone(), at]), index(&rows, start.0, start.1));
            let palette = Value::set(color_counts(&rows).into_iter().map(|(c, _)| c).collect());
            prop_assert_eq!(p("palette", vec![v]).unwrap(), palette);
        }
    }

    #[test]
    fn ragged_grids_compute_as_the_reference_does() {
        let r = ragged();
        let t = |rows: &[&[i64]]| value(rows.iter().map(|r| r.iter().copied().map(Value::Int).collect()));
        assert_eq!(
            p("replace", vec![r.clone(), Value::Int(5), Value::Int(0)]).unwrap(),
            t(&[&[1, 2, 3], &[4, 0], &[6, 7, 8, 9]])
        );
        assert_eq!(
            p("switch", vec![r.clone(), Value::Int(1), Value::Int(9)]).unwrap(),
            t(&[&[9, 2, 3], &[4, 5], &[6, 7, 8, 1]])
        );
        let short = t(&[&[1, 2], &[3, 3, 3]]);
        assert_eq!(
            p("hconcat", vec![r.clone(), short.clone()]).unwrap(),
            t(&[&[1, 2, 3, 1, 2], &[4, 5, 3, 3, 3]])
        );
        assert_eq!(p("mostcolor", vec![short.clone()]).unwrap(), Value::Int(3));
        assert_eq!(p("leastcolor", vec![short.clone()]).unwrap(), Value::Int(1));
        assert_eq!(
            p("colorcount", vec![short.clone(), Value::Int(3)]).unwrap(),
            Value::Int(3)
        );
        assert_eq!(p("numcolors", vec![r.clone()]).unwrap(), Value::Int(9));
        assert_eq!(
            p("ofcolor", vec![short.clone(), Value::Int(3)]).unwrap().to_string(),
            "frozenset({(1, 0), (1, 1), (1, 2)})"
        );
        let corner = vec![r.clone(), Value::Pair(0, 1), Value::Pair(2, 2)];
        assert_eq!(p("crop", corner).unwrap(), t(&[&[2, 3], &[5]]));
        // zip stops at the shortest row; the halves turn the grid twice.
        let one = |name: &str| p(name, vec![r.clone()]).unwrap();
        assert_eq!(one("rot90"), t(&[&[6, 4, 1], &[7, 5, 2]]));
        assert_eq!(one("rot180"), t(&[&[9, 8, 7, 6], &[5, 4], &[3, 2, 1]]));
        assert_eq!(one("rot270"), t(&[&[2, 5, 7], &[1, 4, 6]]));
        assert_eq!(one("dmirror"), t(&[&[1, 4, 6], &[2, 5, 7]]));
        assert_eq!(one("cmirror"), t(&[&[9, 5, 3], &[8, 4, 2]]));
        assert_eq!(one("lefthalf"), t(&[&[1], &[4], &[6]]));
        assert_eq!(one("righthalf"), t(&[&[2], &[5], &[7]]));
        assert_eq!(p("index", vec![r.clone(), Value::Pair(1, 1)]).unwrap(), Value::Int(5));
        // Inside the first row's width, past the end of the second row.
        assert!(matches!(
            p("index", vec![r.clone(), Value::Pair(1, 2)]),
            Err(DslError::Index(_))
        ));
        let by = |name: &str, n: i64| p(name, vec![r.clone(), Value::Int(n)]);
        assert_eq!(
            by("hupscale", 2).unwrap(),
            t(&[&[1, 1, 2, 2, 3, 3], &[4, 4, 5, 5], &[6, 6, 7, 7, 8, 8, 9, 9]])
        );
        assert_eq!(by("vupscale", 2).unwrap().len(), Some(6));
        assert_eq!(by("upscale", 1).unwrap(), r);
        // Widths from the first row: the last row's ninth cell is never reached.
        assert_eq!(
            by("hsplit", 1).unwrap(),
            Value::tuple(vec![t(&[&[1, 2, 3], &[4, 5], &[6, 7, 8]])])
        );
        assert_eq!(
            by("vsplit", 1).unwrap(),
            Value::tuple(vec![t(&[&[1, 2, 3], &[4, 5], &[6, 7, 8]])])
        );
        assert!(matches!(by("downscale", 1), Err(DslError::Index(_))));
        assert!(matches!(by("hsplit", 0), Err(DslError::ZeroDivision(_))));
        assert_eq!(one("trim"), t(&[&[]]));
        let patch = Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 1, j: 1 }]);
        assert_eq!(
            p("subgrid", vec![patch.clone(), r.clone()]).unwrap(),
            t(&[&[1, 2], &[4, 5]])
        );
        assert_eq!(
            p("cover", vec![r.clone(), patch]).unwrap(),
            t(&[&[1, 2, 3], &[4, 1], &[6, 7, 8, 9]])
        );
        assert_eq!(one("partition").len(), Some(9));
        assert_eq!(one("compress"), r);
        let uniform = t(&[&[1, 1, 1], &[2, 2], &[3, 1, 1, 3]]);
        // The second row holds one value but is shorter than the first.
        assert!(matches!(p("frontiers", vec![uniform.clone()]), Err(DslError::Index(_))));
        assert_eq!(p("compress", vec![uniform]).unwrap(), t(&[&[3, 1, 1, 3]]));
        let inside = Value::indices(vec![Loc { i: 2, j: 2 }]);
        assert_eq!(
            p("toobject", vec![inside, r.clone()]).unwrap().to_string(),
            "frozenset({(8, (2, 2))})"
        );
        let past_short_row = Value::indices(vec![Loc { i: 1, j: 2 }]);
        assert!(matches!(
            p("toobject", vec![past_short_row, r.clone()]),
            Err(DslError::Index(_))
        ));
        // objects reads h by w cells: a shorter row fails, a longer row's extra cells are unseen
        // (but count for the background).
        let objects = |g: &Value, without_bg: bool| {
            p(
                "objects",
                vec![
                    g.clone(),
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Bool(without_bg),
                ],
            )
        };
        assert!(matches!(objects(&r, false), Err(DslError::Index(_))));
        let long_last = t(&[&[1, 1], &[0, 1, 0, 0, 0]]);
        let cut = t(&[&[1, 1], &[0, 1]]);
        assert_eq!(objects(&long_last, false), objects(&cut, false));
        assert_eq!(
            objects(&long_last, true).unwrap().to_string(),
            "frozenset({frozenset({(1, (0, 0)), (1, (0, 1)), (1, (1, 1))})})"
        );
        // Every row as wide as the first.
        assert_eq!(p("asindices", vec![r.clone()]).unwrap().len(), Some(9));
        assert_eq!(p("asobject", vec![r]).unwrap().len(), Some(9));
    }

    #[test]
    fn cells_that_are_no_integer_compute_as_the_reference_does() {
        // `((1, None, 0), (None, 1, 0), (2, 2, None))`; the expected values are the reference's.
        let cell = |c: Option<i64>| c.map_or(Value::None, Value::Int);
        let rows = [
            [Some(1), None, Some(0)],
            [None, Some(1), Some(0)],
            [Some(2), Some(2), None],
        ];
        let g = value(rows.map(|r| r.map(cell).to_vec()));
        let int_grid = Value::grid(Grid::new(3, 3, vec![1, 0, 0, 0, 1, 0, 2, 2, 0]));
        let one = |name: &str| p(name, vec![g.clone()]).unwrap().to_string();
        assert_eq!(one("mostcolor"), "None");
        assert_eq!(one("palette"), "frozenset({None, 0, 1, 2})");
        assert_eq!(one("numcolors"), "4");
        assert_eq!(p("colorcount", vec![g.clone(), Value::None]).unwrap(), Value::Int(3));
        assert_eq!(
            p("replace", vec![g.clone(), Value::None, Value::Int(5)]).unwrap(),
            ints([vec![1, 5, 0], vec![5, 1, 0], vec![2, 2, 5]])
        );
        assert_eq!(
            p("switch", vec![g.clone(), Value::None, Value::Int(0)])
                .unwrap()
                .to_string(),
            "((1, 0, None), (0, 1, None), (2, 2, 0))"
        );
        assert_eq!(p("index", vec![g.clone(), Value::Pair(0, 1)]).unwrap(), Value::None);
        assert_eq!(
            p("ofcolor", vec![g.clone(), Value::None]).unwrap().to_string(),
            "frozenset({(0, 1), (1, 0), (2, 2)})"
        );
        assert_eq!(
            p("cellwise", vec![g.clone(), int_grid.clone(), Value::None]).unwrap(),
            g
        );
        assert_eq!(
            one("partition"),
            "frozenset({frozenset({(None, (0, 1)), (None, (1, 0)), (None, (2, 2))}), \
             frozenset({(0, (0, 2)), (0, (1, 2))}), frozenset({(1, (0, 0)), (1, (1, 1))}), \
             frozenset({(2, (2, 0)), (2, (2, 1))})})"
        );
        // The background is None: the objects are those of the integer cells.
        let objects = |univalued: bool, without_bg: bool| {
            let flags = [univalued, false, without_bg].map(Value::Bool);
            p("objects", [vec![g.clone()], flags.to_vec()].concat())
                .unwrap()
                .to_string()
        };
        assert_eq!(
            objects(true, true),
            "frozenset({frozenset({(0, (0, 2)), (0, (1, 2))}), frozenset({(1, (0, 0))}), \
             frozenset({(1, (1, 1))}), frozenset({(2, (2, 0)), (2, (2, 1))})})"
        );
        // Without `without_bg` the background is None all the same (the reference's `bg = None`).
        assert_eq!(
            objects(false, false),
            "frozenset({frozenset({(0, (0, 2)), (0, (1, 2)), (1, (1, 1)), (2, (2, 0)), \
             (2, (2, 1))}), frozenset({(1, (0, 0))})})"
        );
        // An object of None cells: recolor, shift, paint, asobject, as the solver chain does.
        let patch = Value::indices(vec![Loc { i: 0, j: 1 }, Loc { i: 1, j: 1 }]);
        let obj = p("recolor", vec![Value::None, patch.clone()]).unwrap();
        assert_eq!(obj.to_string(), "frozenset({(None, (0, 1)), (None, (1, 1))})");
        assert_eq!(
            p("shift", vec![obj.clone(), Value::Pair(1, 1)]).unwrap().to_string(),
            "frozenset({(None, (1, 2)), (None, (2, 2))})"
        );
        assert_eq!(p("ulcorner", vec![obj.clone()]).unwrap(), Value::Pair(0, 1));
        assert_eq!(p("toindices", vec![obj.clone()]).unwrap(), patch);
        assert_eq!(p("mostcolor", vec![obj.clone()]).unwrap(), Value::None);
        let painted = p("paint", vec![int_grid.clone(), obj.clone()]).unwrap();
        assert_eq!(painted.to_string(), "((1, None, 0), (0, None, 0), (2, 2, 0))");
        assert_eq!(p("fill", vec![int_grid.clone(), Value::None, patch]).unwrap(), painted);
        assert_eq!(
            p("asobject", vec![painted]).unwrap().to_string(),
            "frozenset({(None, (0, 1)), (None, (1, 1)), (0, (0, 2)), (0, (1, 0)), (0, (1, 2)), \
             (0, (2, 2)), (1, (0, 0)), (2, (2, 0)), (2, (2, 1))})"
        );
        assert_eq!(
            p("move", vec![int_grid, obj.clone(), Value::Pair(1, 0)])
                .unwrap()
                .to_string(),
            "((1, 0, 0), (0, None, 0), (2, None, 0))"
        );
        assert_eq!(p("upscale", vec![obj, Value::Int(2)]).unwrap().len(), Some(8));
        // Compared with `==` only: run on the ranks of the values.
        let pattern = Value::set(vec![
            Value::duo(Value::None, Value::Pair(0, 0)),
            Value::duo(Value::Int(1), Value::Pair(0, 1)),
        ]);
        assert_eq!(
            p("occurrences", vec![g.clone(), pattern]).unwrap(),
            Value::indices(vec![Loc { i: 1, j: 0 }])
        );
        let striped = (0..4).map(|j| Value::duo([Value::None, Value::Int(3)][j % 2].clone(), Value::Pair(0, j as i64)));
        assert_eq!(
            p("hperiod", vec![Value::set(striped.collect())]).unwrap(),
            Value::Int(2)
        );
    }

    #[test]
    fn colours_beyond_the_fast_path_are_computed() {
        let wide = ints([vec![1, 1 << 40], vec![1 << 40, 1 << 40]]);
        assert_eq!(p("mostcolor", vec![wide.clone()]).unwrap(), Value::Int(1 << 40));
        assert_eq!(
            p("replace", vec![wide.clone(), Value::Int(1 << 40), Value::Int(2)]).unwrap(),
            ints([vec![1, 2], vec![2, 2]])
        );
        let grid = ints([vec![1, 2]]);
        assert_eq!(
            p("replace", vec![grid, Value::Int(2), Value::Int(1 << 40)]).unwrap(),
            ints([vec![1, 1 << 40]])
        );
        assert_eq!(
            p("palette", vec![wide]).unwrap().to_string(),
            format!("frozenset({{1, {}}})", 1i64 << 40)
        );
        // Not a grid at all: the fast path's error.
        assert!(matches!(
            p("replace", vec![Value::Int(3), Value::Int(1), Value::Int(2)]),
            Err(DslError::Type(_))
        ));
    }
}
