//! Property tests of the primitives on random grids up to 30x30 (proptest): the algebra of the
//! rotations and mirrors, `objects` as a partition into connected pieces, `shift` inverses,
//! painting an object back, and the compact representations agreeing with the generic ones.

use arcbatch::dsl::{Color, Grid, Loc, PrimId, Value};
use proptest::prelude::*;

/// Calls a primitive by name.
fn p(name: &str, args: Vec<Value>) -> Value {
    let id = PrimId::of(name).unwrap_or_else(|| panic!("{name} is registered"));
    (id.spec().imp)(&args).unwrap_or_else(|e| panic!("{name} failed: {e}"))
}

/// Random grids: 1..=30 per side, few colours so components are non-trivial.
fn grids() -> impl Strategy<Value = Grid> {
    (1usize..=30, 1usize..=30, 1..=(4 as Color)).prop_flat_map(|(h, w, colours)| {
        proptest::collection::vec(0..colours, h * w).prop_map(move |cells| Grid::new(h, w, cells))
    })
}

fn flags() -> impl Strategy<Value = (bool, bool, bool)> {
    (any::<bool>(), any::<bool>(), any::<bool>())
}

fn locs_of(v: &Value) -> Vec<Loc> {
    match p("toindices", vec![v.clone()]) {
        Value::Indices(l) => l.to_vec(),
        other if other.len() == Some(0) => Vec::new(),
        other => panic!("toindices gave {other}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn four_quarter_turns_are_the_identity(g in grids()) {
        let v = Value::grid(g);
        let mut r = v.clone();
        for _ in 0..4 {
            r = p("rot90", vec![r]);
        }
        prop_assert_eq!(&r, &v);
        prop_assert_eq!(p("rot180", vec![v.clone()]), p("rot90", vec![p("rot90", vec![v.clone()])]));
        prop_assert_eq!(p("rot270", vec![v.clone()]), p("rot90", vec![p("rot180", vec![v])]));
    }

    #[test]
    fn mirrors_are_involutions_on_grids_and_objects(g in grids()) {
        let v = Value::grid(g);
        let obj = p("asobject", vec![v.clone()]);
        for m in ["hmirror", "vmirror", "dmirror", "cmirror"] {
            prop_assert_eq!(&p(m, vec![p(m, vec![v.clone()])]), &v, "{} on a grid", m);
            prop_assert_eq!(&p(m, vec![p(m, vec![obj.clone()])]), &obj, "{} on an object", m);
        }
        // Mirroring the grid and mirroring its object agree.
        prop_assert_eq!(p("asobject", vec![p("dmirror", vec![v.clone()])]), p("dmirror", vec![obj]));
    }

    #[test]
    fn objects_partition_the_cells_into_connected_pieces(g in grids(), (univalued, diagonal, without_bg) in flags()) {
        let v = Value::grid(g.clone());
        let objs = p("objects", vec![v.clone(), Value::Bool(univalued), Value::Bool(diagonal), Value::Bool(without_bg)]);
        let bg = match p("mostcolor", vec![v.clone()]) { Value::Int(c) => c as Color, other => panic!("{other}") };
        let mut seen = vec![false; g.h * g.w];
        for obj in objs.members().unwrap() {
            let cells = arcbatch::dsl::prims::common::cells(&obj).unwrap();
            prop_assert!(!cells.is_empty());
            for c in cells.iter() {
                let k = c.i as usize * g.w + c.j as usize;
                prop_assert!(!seen[k], "cell {:?} is in two objects", c);
                seen[k] = true;
                prop_assert_eq!(c.color, g.get(c.i as usize, c.j as usize), "the colour is the grid's");
                if univalued {
                    prop_assert_eq!(c.color, cells[0].color);
                }
            }
            // Connected: a flood fill inside the object from its first cell reaches all of it.
            let locs: Vec<Loc> = cells.iter().map(|c| c.loc()).collect();
            let mut reached = vec![locs[0]];
            let mut stack = vec![locs[0]];
            while let Some(l) = stack.pop() {
                for n in &locs {
                    let (di, dj) = ((n.i - l.i).abs(), (n.j - l.j).abs());
                    let adjacent = if diagonal { di <= 1 && dj <= 1 } else { di + dj == 1 };
                    if adjacent && !reached.contains(n) {
                        reached.push(*n);
                        stack.push(*n);
                    }
                }
            }
            prop_assert_eq!(reached.len(), locs.len(), "object is not connected");
        }
        for (k, covered) in seen.iter().enumerate() {
            let is_bg = g.cells[k] == bg;
            prop_assert_eq!(*covered, !(without_bg && is_bg), "cell {} coverage", k);
        }
    }

    #[test]
    fn shift_there_and_back_is_the_identity(g in grids(), di in -40i64..40, dj in -40i64..40) {
        let obj = p("asobject", vec![Value::grid(g)]);
        let there = p("shift", vec![obj.clone(), Value::Pair(di, dj)]);
        prop_assert_eq!(&p("shift", vec![there.clone(), Value::Pair(-di, -dj)]), &obj);
        let ind = p("toindices", vec![obj.clone()]);
        prop_assert_eq!(p("toindices", vec![there]), p("shift", vec![ind, Value::Pair(di, dj)]));
    }

    #[test]
    fn painting_a_grid_object_on_a_canvas_rebuilds_the_grid(g in grids(), bg in 0i64..10) {
        let v = Value::grid(g.clone());
        let canvas = p("canvas", vec![Value::Int(bg), Value::Pair(g.h as i64, g.w as i64)]);
        prop_assert_eq!(&p("paint", vec![canvas, p("asobject", vec![v.clone()])]), &v);
        // And a grid's palette is its object's palette.
        prop_assert_eq!(p("palette", vec![v.clone()]), p("palette", vec![p("asobject", vec![v])]));
    }

    #[test]
    fn ofcolor_splits_the_grid_and_fill_restores_it(g in grids()) {
        let v = Value::grid(g.clone());
        let mut total = 0;
        let mut rebuilt = p("canvas", vec![Value::Int(0), Value::Pair(g.h as i64, g.w as i64)]);
        for c in 0..4 {
            let ind = p("ofcolor", vec![v.clone(), Value::Int(c)]);
            total += locs_of(&ind).len();
            prop_assert_eq!(p("colorcount", vec![v.clone(), Value::Int(c)]), Value::Int(locs_of(&ind).len() as i64));
            rebuilt = p("fill", vec![rebuilt, Value::Int(c), ind]);
        }
        prop_assert_eq!(total, g.h * g.w);
        prop_assert_eq!(rebuilt, v);
    }

    #[test]
    fn fill_underfill_cover_and_corners_of_any_patch_read_its_locations(
        g in grids(),
        points in proptest::collection::vec((-3i64..33, -3i64..33, 0i64..4), 0..60),
        form in 0..4u8,
        value in 0i64..10,
    ) {
        // The patch in each form a program may hand them: a tuple of locations with repeats
        // (what `merge` of a tuple of lines gives), an index set, a tuple of cells, an object.
        let loc = |&(i, j, _): &(i64, i64, i64)| Value::Pair(i, j);
        let cell = |&(i, j, c): &(i64, i64, i64)| Value::tuple(vec![Value::Int(c), Value::Pair(i, j)]);
        let patch = match form {
            0 => Value::tuple(points.iter().map(loc).collect()),
            1 => Value::set(points.iter().map(loc).collect()),
            2 => Value::tuple(points.iter().map(cell).collect()),
            _ => Value::set(points.iter().map(cell).collect()),
        };
        // The reference's loop: each distinct location inside the grid, in order.
        let mut locations: Vec<(i64, i64)> = points.iter().map(|&(i, j, _)| (i, j)).collect();
        locations.sort();
        locations.dedup();
        let inside = |&&(i, j): &&(i64, i64)| (0..g.h as i64).contains(&i) && (0..g.w as i64).contains(&j);
        let Value::Int(bg) = p("mostcolor", vec![Value::grid(g.clone())]) else { panic!("mostcolor") };
        for under in [false, true] {
            let mut expected = g.clone();
            for &(i, j) in locations.iter().filter(inside) {
                if !under || i64::from(g.get(i as usize, j as usize)) == bg {
                    expected.set(i as usize, j as usize, value as Color);
                }
            }
            let name = if under { "underfill" } else { "fill" };
            let filled = p(name, vec![Value::grid(g.clone()), Value::Int(value), patch.clone()]);
            prop_assert_eq!(filled, Value::grid(expected), "{} of {}", name, patch);
        }
        // `cover` is `fill` with the background; the corners are the extremes of the locations.
        let covered = p("fill", vec![Value::grid(g.clone()), Value::Int(bg), patch.clone()]);
        prop_assert_eq!(p("cover", vec![Value::grid(g.clone()), patch.clone()]), covered);
        if let (Some(&(top, _)), Some(&(bottom, _))) = (locations.first(), locations.last()) {
            let left = locations.iter().map(|l| l.1).min().unwrap_or_default();
            let right = locations.iter().map(|l| l.1).max().unwrap_or_default();
            prop_assert_eq!(p("ulcorner", vec![patch.clone()]), Value::Pair(top, left));
            prop_assert_eq!(p("lrcorner", vec![patch.clone()]), Value::Pair(bottom, right));
        }
    }

    #[test]
    fn a_grid_as_a_tuple_of_rows_behaves_like_the_grid(g in grids()) {
        let v = Value::grid(g);
        let rows = Value::tuple(v.members().unwrap());
        prop_assert_eq!(&rows, &v);
        for name in ["rot90", "hmirror", "asobject", "palette", "mostcolor", "trim", "compress"] {
            prop_assert_eq!(p(name, vec![rows.clone()]), p(name, vec![v.clone()]), "{} on the tuple form", name);
        }
    }
}
