//! The compact tuple variants (`Pair`, `Cell`, `LocPair`, `CellPair`, `Ints`) against the same
//! tuples boxed member by member: every primitive of one or two arguments gives the same
//! result, or an error of the same kind, whichever form it is handed (proptest). The boxed form
//! is what the generic code paths read, so this checks each compact fast path against them.
//! Sets built through `Value::set` (of locations, of cells, of index sets: the unboxed and
//! bitmap sorts) are checked against their boxed members sorted by the generic comparison.

use std::mem::discriminant;

use arcbatch::dsl::value::Items;
use arcbatch::dsl::{registry, Grid, Value};
use proptest::prelude::*;

/// A tuple shape, built either boxed at every level or through the compacting constructors.
#[derive(Clone, Debug)]
enum Shape {
    Int(i64),
    Tuple(Vec<Shape>),
    Set(Vec<Shape>),
}

impl Shape {
    fn compact(&self) -> Value {
        match self {
            Shape::Int(n) => Value::Int(*n),
            Shape::Tuple(items) => Value::tuple(items.iter().map(Shape::compact).collect()),
            Shape::Set(items) => Value::set(items.iter().map(Shape::compact).collect()),
        }
    }

    fn boxed(&self) -> Value {
        match self {
            Shape::Int(n) => Value::Int(*n),
            Shape::Tuple(items) => Value::Tuple(Items::new(items.iter().map(Shape::boxed).collect())),
            Shape::Set(items) => {
                let mut members: Vec<Value> = items.iter().map(Shape::boxed).collect();
                members.sort();
                members.dedup();
                Value::Set(Items::new(members))
            }
        }
    }
}

fn int() -> impl Strategy<Value = Shape> {
    (-2i64..12).prop_map(Shape::Int)
}

fn loc() -> impl Strategy<Value = Shape> {
    (int(), int()).prop_map(|(i, j)| Shape::Tuple(vec![i, j]))
}

fn cell() -> impl Strategy<Value = Shape> {
    (int(), loc()).prop_map(|(c, l)| Shape::Tuple(vec![c, l]))
}

/// A number near 0, or one at an edge of what a member of a set of index sets or objects
/// packs into for its sort (21 bits for a cell's fields, 32 for a location's), or just past it.
fn wide_int() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => -2i64..3,
        1 => prop::sample::select(vec![
            -(1 << 20) - 1,
            -(1 << 20),
            (1 << 20) - 1,
            1 << 20,
            i32::MIN.into(),
            i32::MAX.into(),
        ]),
    ]
    .prop_map(Shape::Int)
}

fn wide_cell() -> impl Strategy<Value = Shape> {
    (wide_int(), wide_int(), wide_int()).prop_map(|(c, i, j)| Shape::Tuple(vec![c, Shape::Tuple(vec![i, j])]))
}

/// The shapes the compact variants cover, and containers of them.
fn shapes() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        proptest::collection::vec(int(), 1..7).prop_map(Shape::Tuple),
        loc(),
        cell(),
        (loc(), loc()).prop_map(|(a, b)| Shape::Tuple(vec![a, b])),
        (cell(), cell()).prop_map(|(a, b)| Shape::Tuple(vec![a, b])),
        // Index sets (empty ones too): a set of them sorts them as slices of locations.
        proptest::collection::vec(loc(), 0..4).prop_map(Shape::Set),
    ];
    prop_oneof![
        3 => leaf.clone(),
        1 => proptest::collection::vec(leaf.clone(), 0..5).prop_map(Shape::Tuple),
        1 => proptest::collection::vec(leaf, 0..5).prop_map(Shape::Set),
    ]
}

/// What a call gives, comparable across the two forms: the value (strictly, by its spelling
/// too) or the kind of error.
fn outcome(name: &str, args: &[Value]) -> Result<(Value, String), String> {
    let id = arcbatch::dsl::PrimId::of(name).expect("registered");
    match (id.spec().imp)(args) {
        Ok(v) => {
            let text = v.to_string();
            Ok((v, text))
        }
        Err(e) => Err(format!("{:?}", discriminant(&e))),
    }
}

/// Other arguments to pair the shapes with.
fn partners() -> Vec<Value> {
    vec![
        Value::Int(1),
        Value::Int(0),
        Value::Pair(1, 2),
        Value::grid(Grid::new(2, 3, vec![0, 1, 2, 3, 1, 0])),
        Value::prim(arcbatch::dsl::PrimId::of("first").expect("registered")),
        Value::prim(arcbatch::dsl::PrimId::of("size").expect("registered")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_primitive_reads_a_compact_tuple_as_the_boxed_one(shape in shapes()) {
        let (compact, boxed) = (shape.compact(), shape.boxed());
        prop_assert_eq!(&compact, &boxed);
        prop_assert_eq!(compact.to_string(), boxed.to_string());
        let partners = partners();
        for id in registry().ids() {
            let spec = id.spec();
            match spec.arity() {
                1 => prop_assert_eq!(
                    outcome(spec.name, std::slice::from_ref(&compact)),
                    outcome(spec.name, std::slice::from_ref(&boxed)),
                    "{} on {}", spec.name, boxed
                ),
                2 => {
                    for other in &partners {
                        prop_assert_eq!(
                            outcome(spec.name, &[compact.clone(), other.clone()]),
                            outcome(spec.name, &[boxed.clone(), other.clone()]),
                            "{} on {}, {}", spec.name, boxed, other
                        );
                        prop_assert_eq!(
                            outcome(spec.name, &[other.clone(), compact.clone()]),
                            outcome(spec.name, &[other.clone(), boxed.clone()]),
                            "{} on {}, {}", spec.name, other, boxed
                        );
                    }
                }
                _ => {}
            }
        }
    }

    /// Many index sets or objects, most of them small or empty (what `prapply(connect, ..)`
    /// and `apply(fork(recolor, color, ..), ..)` make), some with numbers at the edges of
    /// their sort's packed keys or past them (sorted unpacked), and large sets of locations,
    /// cells or numbers (the bitmap sort; numbers past `i32` by comparison): sorted as the
    /// boxed members are.
    #[test]
    fn sets_of_index_sets_or_objects_and_large_sets_sort_as_boxed(
        lines in proptest::collection::vec(proptest::collection::vec(loc(), 0..5), 0..60),
        objects in proptest::collection::vec(proptest::collection::vec(cell(), 0..5), 0..60),
        wide_lines in proptest::collection::vec(
            proptest::collection::vec((wide_int(), wide_int()).prop_map(|(i, j)| Shape::Tuple(vec![i, j])), 0..4),
            0..60,
        ),
        wide_objects in proptest::collection::vec(proptest::collection::vec(wide_cell(), 0..4), 0..60),
        many_locs in proptest::collection::vec(loc(), 0..200),
        many_cells in proptest::collection::vec(cell(), 0..200),
        many_ints in proptest::collection::vec(int(), 0..200),
        wide_ints in proptest::collection::vec(any::<i64>().prop_map(Shape::Int), 0..60),
    ) {
        let shapes = [
            Shape::Set(many_ints),
            Shape::Set(wide_ints),
            Shape::Set(lines.into_iter().map(Shape::Set).collect()),
            Shape::Set(objects.into_iter().map(Shape::Set).collect()),
            Shape::Set(wide_lines.into_iter().map(Shape::Set).collect()),
            Shape::Set(wide_objects.into_iter().map(Shape::Set).collect()),
            Shape::Set(many_locs),
            Shape::Set(many_cells),
        ];
        for shape in shapes {
            let (compact, boxed) = (shape.compact(), shape.boxed());
            prop_assert_eq!(&compact, &boxed);
            prop_assert_eq!(compact.to_string(), boxed.to_string());
        }
    }

    #[test]
    fn compact_and_boxed_tuples_order_alike(a in shapes(), b in shapes()) {
        prop_assert_eq!(a.compact().cmp(&b.compact()), a.boxed().cmp(&b.boxed()));
        prop_assert_eq!(a.compact().cmp(&b.boxed()), a.boxed().cmp(&b.compact()));
    }
}

/// `paint` walks a tuple of cells in the tuple's own order, so the later of two cells on one
/// location wins, as in the reference's loop: a compact pair of cells the same as a boxed one.
#[test]
fn paint_walks_a_compact_pair_of_cells_in_its_own_order() {
    let cell = |c, i, j| Shape::Tuple(vec![Shape::Int(c), Shape::Tuple(vec![Shape::Int(i), Shape::Int(j)])]);
    let cells = Shape::Tuple(vec![cell(2, 0, 0), cell(1, 0, 0)]);
    assert!(matches!(cells.compact(), Value::CellPair(..)));
    let grid = Value::grid(Grid::new(1, 1, vec![0]));
    let painted = Value::grid(Grid::new(1, 1, vec![1]));
    for form in [cells.compact(), cells.boxed()] {
        assert_eq!(
            outcome("paint", &[grid.clone(), form]),
            Ok((painted.clone(), "((1,),)".to_string()))
        );
    }
}
