//! The vectorised evaluation of function values against the scalar path, value by value: the
//! published solvers on their own training inputs and on inputs they were not written for
//! (other tasks' inputs, where errors and odd shapes are common), plus random closures over
//! random containers (proptest).
//!
//! The switch between the two is process-wide, so every comparison lives in this file's tests,
//! which take a lock around each switch.

mod shared;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arcbatch::dsl::column::{map, set_evaluation, Evaluation};
use arcbatch::dsl::{call, DslError, DslResult, Foreign, ForeignFn, Func, Loc, PrimId, Raised, Value};
use arcbatch::program::{parse_file, run_guarded, Program, RunError};
use arcbatch::run::arguments;
use arcbatch::tasks::{self, Task};
use proptest::prelude::*;

static MODE: Mutex<()> = Mutex::new(());

/// `f()` with the scalar path, always column-wise, and the default way (column-wise above a
/// few elements).
fn ways<T>(f: impl Fn() -> T) -> [T; 3] {
    let _lock = MODE.lock().unwrap_or_else(|e| e.into_inner());
    [Evaluation::Scalar, Evaluation::Columns, Evaluation::Auto].map(|way| {
        set_evaluation(way);
        f()
    })
}

/// `f()` with the scalar path, then always column-wise; the default way must give the
/// column-wise result too.
fn both<T: PartialEq + std::fmt::Debug>(f: impl Fn() -> T) -> (T, T) {
    let [scalar, columns, auto] = ways(f);
    assert_eq!(auto, columns, "the default way against column-wise");
    (scalar, columns)
}

/// A function's values over a column of elements, and the first error.
type Results = (Vec<Value>, Option<DslError>);

/// `f` over `xs` with the scalar path, then always column-wise (see [`both`]).
fn mapped(f: &Value, xs: &[Value]) -> (Results, Results) {
    both(|| {
        let m = map(f, &[xs]);
        (m.values, m.error)
    })
}

/// A run's outcome; `None` for a time-out (which depends on speed).
fn outcome(program: &Program, task: &Task, input: usize) -> Option<Result<Value, RunError>> {
    let example = task.examples().nth(input)?;
    let args = arguments(program, &task.train_pairs_value(), example);
    match run_guarded(program, &args, Some(Duration::from_millis(300))) {
        Err(RunError::Timeout { .. }) => None,
        outcome => Some(outcome),
    }
}

#[test]
fn published_solvers_agree_on_their_own_and_on_other_tasks_inputs() {
    let (Some(solvers), Some(training)) = (shared::shared("ref/arc-dsl/solvers.py"), shared::shared("arc/training"))
    else {
        return;
    };
    let source = std::fs::read_to_string(&solvers).unwrap();
    let programs = parse_file("solvers.py", &source).expect("the published solvers parse");
    let set = tasks::load(&training).unwrap();
    let by_id: std::collections::HashMap<&str, &Task> = set.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let (mut compared, mut raised, mut mismatches) = (0, 0, Vec::new());
    for (k, program) in programs.iter().enumerate() {
        let Some(own) = program.name.strip_prefix("solve_").and_then(|id| by_id.get(id)) else {
            continue;
        };
        // The solver's own task, and the first input of three other tasks.
        let mut runs: Vec<(&Task, usize)> = (0..own.examples().count()).map(|i| (*own, i)).collect();
        runs.extend((1..=3).map(|d| (&set.tasks[(k * 7 + d * 131) % set.tasks.len()], 0)));
        for (task, input) in runs {
            // A time-out depends on speed: such a run is not compared.
            let [Some(scalar), Some(vectorised), Some(auto)] = ways(|| outcome(program, task, input)) else {
                continue;
            };
            compared += 1;
            raised += usize::from(scalar.is_err());
            if scalar != vectorised || auto != vectorised {
                mismatches.push(format!(
                    "{} on {} input {input}: scalar {scalar:?}, vectorised {vectorised:?}, default {auto:?}",
                    program.name, task.id
                ));
            }
        }
    }
    assert!(
        compared > 2500 && raised > 100,
        "{compared} runs compared, {raised} raised"
    );
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

fn p(name: &str) -> Value {
    Value::prim(PrimId::of(name).unwrap())
}

/// Random function values: closures over a few primitives of integers, pairs and containers,
/// nested through the mapping primitives.
fn function() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(p("identity")),
        Just(p("first")),
        Just(p("last")),
        Just(p("size")),
        Just(p("increment")),
        Just(p("invert")),
        Just(p("double")),
        Just(p("even")),
        Just(p("sign")),
        Just(p("maximum")),
        Just(p("toivec")),
        Just(p("dneighbors")),
        Just(p("center")),
        (-3i64..4).prop_map(|k| call(&p("rbind"), &[p("add"), Value::Int(k)]).unwrap()),
        (-3i64..4).prop_map(|k| call(&p("lbind"), &[p("divide"), Value::Int(k)]).unwrap()),
        (-2i64..3, -2i64..3).prop_map(|(a, b)| call(&p("rbind"), &[p("subtract"), Value::Pair(a, b)]).unwrap()),
        // Sets built only to be counted, which the column engine fuses: size(op(x, S)) and
        // size(op(shift(x, v), S)) or size(op(shift(P, x), S)).
        (set_operation(), points()).prop_map(|(op, s)| {
            let counted = call(&p("rbind"), &[p(op), s]).unwrap();
            call(&p("compose"), &[p("size"), counted]).unwrap()
        }),
        (set_operation(), points(), -2i64..3, -2i64..3, points(), any::<bool>()).prop_map(
            |(op, s, a, b, pattern, offset_given)| {
                let shifted = match offset_given {
                    true => call(&p("rbind"), &[p("shift"), Value::Pair(a, b)]),
                    false => call(&p("lbind"), &[p("shift"), pattern]),
                };
                let counted = call(&p("rbind"), &[p(op), s]).unwrap();
                call(&p("chain"), &[p("size"), counted, shifted.unwrap()]).unwrap()
            }
        ),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        let built = |name: &'static str, args: Vec<Value>| call(&p(name), &args).unwrap();
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(move |(a, b)| built("compose", vec![a, b])),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(move |(a, b, c)| built("chain", vec![a, b, c])),
            (inner.clone(), inner.clone()).prop_map(move |(a, b)| built("fork", vec![p("add"), a, b])),
            (inner.clone(), inner.clone()).prop_map(move |(a, b)| built("fork", vec![p("astuple"), a, b])),
            // The same call twice, which the compiler makes one node.
            inner.clone().prop_map(move |f| {
                let again = built("compose", vec![p("increment"), f.clone()]);
                built("fork", vec![p("astuple"), f, again])
            }),
            (inner.clone(), -2i64..3).prop_map(move |(a, t)| built("matcher", vec![a, Value::Int(t)])),
            inner.clone().prop_map(move |f| built("lbind", vec![p("apply"), f])),
            inner.clone().prop_map(move |f| built("rbind", vec![p("sfilter"), f])),
            inner.clone().prop_map(move |f| built("rbind", vec![p("argmax"), f])),
            inner.clone().prop_map(move |f| built("rbind", vec![p("valmin"), f])),
            inner.clone().prop_map(move |f| built("rbind", vec![p("order"), f])),
            inner.clone().prop_map(move |f| built("lbind", vec![p("mapply"), f])),
            (inner.clone(), 1i64..4).prop_map(move |(f, n)| built("power", vec![f, Value::Int(n)])),
            // Over a constant container, with a closure of the element:
            // x -> best(C, y -> f(x + y)), where member-only work runs once per chunk, or
            // x -> best(C, y -> f(x) + y), where f(x) is computed inside the inner function
            // from the captured x (as `last` of the pair (y, x)) and runs once per container.
            (
                inner.clone(),
                prop::sample::select(vec!["valmax", "argmin", "sfilter", "apply", "order"]),
                0usize..3,
                any::<bool>(),
            )
                .prop_map(move |(f, best, c, captured_only)| {
                    let container = [
                        Value::tuple([0, 1, -1, 2].map(Value::Int).to_vec()),
                        Value::empty_tuple(),
                        Value::set(vec![Value::Pair(0, 1), Value::Pair(2, -1), Value::Pair(1, 1)]),
                    ][c]
                        .clone();
                    let shifted = if captured_only {
                        let plus = built("fork", vec![p("add"), built("compose", vec![f, p("last")]), p("first")]);
                        built(
                            "compose",
                            vec![
                                built("lbind", vec![p("compose"), plus]),
                                built("lbind", vec![p("rbind"), p("astuple")]),
                            ],
                        )
                    } else {
                        built(
                            "compose",
                            vec![
                                built("lbind", vec![p("compose"), f]),
                                built("lbind", vec![p("lbind"), p("add")]),
                            ],
                        )
                    };
                    // apply takes the function first: apply(g, C); the others best(C, g).
                    let over = match best {
                        "apply" => built("rbind", vec![p("apply"), container]),
                        _ => built("lbind", vec![p(best), container]),
                    };
                    built("compose", vec![over, shifted])
                }),
            // A closure built from the element: x -> apply(rbind(add, x), container).
            inner.clone().prop_map(move |f| {
                let bind = built("lbind", vec![p("rbind"), p("add")]);
                let mapped = built("lbind", vec![p("lbind"), p("apply")]);
                built(
                    "compose",
                    vec![
                        built("chain", vec![built("rbind", vec![mapped, Value::Pair(1, 0)]), bind, f]),
                        p("identity"),
                    ],
                )
            }),
        ]
    })
}

fn set_operation() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["difference", "intersection"])
}

/// Random index sets, empty ones included.
fn points() -> impl Strategy<Value = Value> {
    proptest::collection::vec((-3i64..4, -3i64..4), 0..6)
        .prop_map(|v| Value::set(v.into_iter().map(|(a, b)| Value::Pair(a, b)).collect()))
}

/// Random elements: integers, pairs, tuples and sets of integers or pairs, empty ones included.
fn element() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-4i64..5).prop_map(Value::Int),
        (-3i64..4, -3i64..4).prop_map(|(a, b)| Value::Pair(a, b)),
        proptest::collection::vec(-4i64..5, 0..4).prop_map(|v| Value::tuple(v.into_iter().map(Value::Int).collect())),
        proptest::collection::vec((-3i64..4, -3i64..4), 0..5)
            .prop_map(|v| Value::set(v.into_iter().map(|(a, b)| Value::Pair(a, b)).collect())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Values, and the error of the first failing element, are the scalar path's.
    #[test]
    fn random_closures_agree(f in function(), xs in proptest::collection::vec(element(), 0..12)) {
        let (scalar, vectorised) = mapped(&f, &xs);
        prop_assert_eq!(scalar, vectorised, "{}", f);
    }
}

/// `x -> best(x, y -> f(y + size(x)))`: a mapping over each element's own container, with a
/// value captured from the element, so that over containers that share members (the same
/// allocation, or equal numbers and pairs) the inner rows repeat and run once each.
fn over_own_members(f: Value, best: &str) -> Value {
    let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
    let shifted = built(
        "compose",
        vec![
            built("lbind", vec![p("compose"), f]),
            built("compose", vec![built("lbind", vec![p("lbind"), p("add")]), p("size")]),
        ],
    );
    match best {
        // apply and mapply take the function first.
        "apply" | "mapply" => built("fork", vec![p(best), shifted, p("identity")]),
        _ => built("fork", vec![p(best), p("identity"), shifted]),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Containers drawn from a small pool (so the rows of the inner function repeat across
    /// containers, by allocation and by value): values and the first error are the scalar
    /// path's, whether or not the repeats are remembered.
    #[test]
    fn repeated_rows_across_containers_agree(
        f in function(),
        best in prop::sample::select(vec!["valmin", "argmax", "sfilter", "apply", "mapply", "order"]),
        pool in proptest::collection::vec(element(), 1..5),
        picks in proptest::collection::vec(0usize..8, 0..40),
    ) {
        let g = over_own_members(f, best);
        let xs: Vec<Value> = picks.iter().map(|&k| pool[k % pool.len()].clone()).collect();
        let (scalar, vectorised) = mapped(&g, &xs);
        prop_assert_eq!(scalar, vectorised, "{}", g);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// The same, over more elements than the column engine runs as they are (2,048): each
    /// distinct element (its container with its captured value) runs once, and the others
    /// read its result; values and the first error are still the scalar path's.
    #[test]
    fn repeated_elements_agree(
        f in function(),
        best in prop::sample::select(vec!["valmin", "argmax", "sfilter", "apply", "mapply"]),
        pool in proptest::collection::vec(element(), 1..6),
        picks in proptest::collection::vec(0usize..8, 2048..2300),
    ) {
        let g = over_own_members(f, best);
        let xs: Vec<Value> = picks.iter().map(|&k| pool[k % pool.len()].clone()).collect();
        let (scalar, vectorised) = mapped(&g, &xs);
        prop_assert_eq!(scalar, vectorised, "{}", g);
    }
}

/// `x -> best(C, y -> f(y) + 100 // (x - 30))` over 40 elements and a constant container of
/// 1,000 members: 40,000 rows in three blocks, `f(y)` computed on the first block and read on
/// the others, and `100 // 0` raising in a later block; and `x -> best(C, y -> maximum(apply(100
/// // ·, (x - 30, f(y) + 1))))`, whose inner mapping over pairs meets 480 distinct pairs,
/// remembered from block to block. Values and the first error are the scalar path's.
#[test]
fn constant_containers_over_several_blocks_agree() {
    let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
    let container = Value::tuple((0..1000).map(|k| Value::Int(k * 7 % 23 - 11)).collect());
    let f = built("fork", vec![p("multiply"), p("sign"), p("identity")]);
    let hundred_over = built("lbind", vec![p("divide"), Value::Int(100)]);
    let shifted = built(
        "compose",
        vec![built("rbind", vec![p("subtract"), Value::Int(30)]), p("last")],
    );
    let of_member = built("compose", vec![f, p("first")]);
    let summed = built(
        "fork",
        vec![
            p("add"),
            of_member.clone(),
            built("compose", vec![hundred_over.clone(), shifted.clone()]),
        ],
    );
    let pair = built(
        "fork",
        vec![p("astuple"), shifted, built("compose", vec![p("increment"), of_member])],
    );
    let nested = built(
        "chain",
        vec![p("maximum"), built("lbind", vec![p("apply"), hundred_over]), pair],
    );
    for key in [summed, nested] {
        let per_element = built(
            "compose",
            vec![
                built("lbind", vec![p("compose"), key]),
                built("lbind", vec![p("rbind"), p("astuple")]),
            ],
        );
        for (best, raising) in [("valmin", true), ("argmax", true), ("apply", false), ("valmax", false)] {
            let over = match best {
                "apply" => built("rbind", vec![p("apply"), container.clone()]),
                _ => built("lbind", vec![p(best), container.clone()]),
            };
            let g = built("compose", vec![over, per_element.clone()]);
            let xs: Vec<Value> = (0..40).map(|x| Value::Int(if raising { x } else { x + 40 })).collect();
            let (scalar, vectorised) = mapped(&g, &xs);
            assert_eq!(scalar.1.is_some(), raising, "{g}: 100 // 0 raises only at x = 30");
            assert_eq!(scalar, vectorised, "{g}");
        }
    }
}

/// Repeated rows in more rows than one block of the column engine: what was met in an earlier
/// block is remembered, and an error met in a later block is still the scalar path's. The
/// containers are each their own allocation (holding the members of one of seven), so that
/// their rows repeat, or the seven shared, so that the elements themselves repeat, over two
/// blocks of elements.
#[test]
fn repeated_rows_over_several_blocks_agree() {
    let bind = |b: &str, f: &str, x: i64| call(&p(b), &[p(f), Value::Int(x)]).unwrap();
    let compose = |outer: Value, inner: Value| call(&p("compose"), &[outer, inner]).unwrap();
    let pool: Vec<Vec<Value>> = (0..7)
        .map(|k| (k..k + 12).map(|x| Value::Int(x - 60)).collect())
        .collect();
    let shared: Vec<Value> = pool.iter().cloned().map(Value::tuple).collect();
    // Containers of 12 members from a pool of 7: 84 distinct rows, over several blocks.
    // `100 // (member + 12)` raises only on the member -12, in the last container.
    for (n, distinct) in [(3_000, true), (20_000, false)] {
        let mut xs: Vec<Value> = (0..n)
            .map(|k| match distinct {
                true => Value::tuple(pool[k * 5 % 7].clone()),
                false => shared[k * 5 % 7].clone(),
            })
            .collect();
        xs.push(Value::tuple((-20..-8).map(Value::Int).collect()));
        for best in ["valmin", "apply", "sfilter"] {
            let g = over_own_members(compose(p("invert"), bind("lbind", "divide", 100)), best);
            let (scalar, vectorised) = mapped(&g, &xs);
            assert_eq!(scalar.0.len(), n, "{best}: the containers before the last have values");
            assert!(
                scalar.1.is_some(),
                "{best}: divide(100, 0) raises in the last container"
            );
            assert_eq!(scalar, vectorised, "{best}");
        }
    }
}

/// Members of the sets a best member is removed from: small integers (whose keys tie), a
/// boolean (equal to 1), pairs (whose keys are pairs) and a set (on which most keys raise).
fn set_member() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-3i64..4).prop_map(Value::Int),
        1 => Just(Value::Bool(true)),
        1 => (-2i64..3, -2i64..3).prop_map(|(a, b)| Value::Pair(a, b)),
        1 => Just(Value::set(vec![Value::Int(2)])),
    ]
}

/// Key functions of a set's members: integer keys with ties, keys that raise on some members
/// (`6 // 0`, `size` of a number), boolean keys, and pairs where the member is a pair.
fn member_key() -> impl Strategy<Value = Value> {
    let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
    prop::sample::select(vec![
        built("fork", vec![p("multiply"), p("sign"), p("identity")]),
        built("lbind", vec![p("divide"), Value::Int(6)]),
        built("rbind", vec![p("divide"), Value::Int(2)]),
        built("compose", vec![p("invert"), p("double")]),
        p("identity"),
        p("size"),
        p("even"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `m -> best(remove(m, S), f)`, and `m -> apply(l -> best(remove(m, S), y -> f(l + y)),
    /// (0, 1, 2))` where `remove` is captured from the outer kernel, for the four primitives
    /// that the column engine picks from `S`'s best two members when `S` is a set: values and
    /// the first error are the scalar path's, for members of `S` and values not in it, empty
    /// remainders, ties, keys that raise or are not integers, and tuples (not rewritten).
    #[test]
    fn best_of_a_set_without_one_member_agrees(
        best in prop::sample::select(vec!["valmin", "valmax", "argmin", "argmax"]),
        members in proptest::collection::vec(set_member(), 0..6),
        as_tuple in any::<bool>(),
        f in member_key(),
        captured in any::<bool>(),
        ms in proptest::collection::vec(set_member(), 0..12),
    ) {
        let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
        let container = if as_tuple { Value::tuple(members) } else { Value::set(members) };
        let removed = built("rbind", vec![p("remove"), container]);
        let g = if captured {
            let key = built(
                "compose",
                vec![built("lbind", vec![p("compose"), f]), built("lbind", vec![p("lbind"), p("add")])],
            );
            let bound = built("compose", vec![built("lbind", vec![p("lbind"), p(best)]), removed]);
            let per_location = built("compose", vec![built("rbind", vec![p("compose"), key]), bound]);
            let locations = Value::tuple((0..3).map(Value::Int).collect());
            built("compose", vec![built("rbind", vec![p("apply"), locations]), per_location])
        } else {
            built("compose", vec![built("rbind", vec![p(best), f]), removed])
        };
        let (scalar, vectorised) = mapped(&g, &ms);
        prop_assert_eq!(scalar, vectorised, "{}", g);
    }
}

/// `x -> y -> f(x + y)`: a closure of the element to map over a container.
fn shifted_by_element(f: Value) -> Value {
    let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
    built(
        "compose",
        vec![
            built("lbind", vec![p("compose"), f]),
            built("lbind", vec![p("lbind"), p("add")]),
        ],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// `x -> astuple(best(C, y -> f(x + y)), other(C, y -> g(x + y)))`, two mappings over the
    /// same constant container, which the column engine runs as one group of siblings (both
    /// functions in one inner kernel, what they compute alike computed once, the same function
    /// twice where `g` is `f`): values and the first error are the scalar path's, whether the
    /// functions raise or not, over tuples, sets and index sets (whose members the mappings
    /// build), empty ones included.
    #[test]
    fn sibling_mappings_over_one_container_agree(
        f in function(),
        g in prop::option::of(function()),
        best in prop::sample::select(vec!["valmax", "argmin", "sfilter", "apply", "order", "mfilter"]),
        other in prop::sample::select(vec!["valmin", "argmax", "sfilter", "apply", "mapply"]),
        c in 0usize..6,
        xs in proptest::collection::vec(element(), 0..12),
    ) {
        let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
        // Kept as they are: integers, the empty tuple, index sets (whose members the mappings
        // list), and a tuple and a set of mixed values, read in place.
        let container = [
            Value::tuple([0, 1, -1, 2].map(Value::Int).to_vec()),
            Value::empty_tuple(),
            Value::set(vec![Value::Pair(0, 1), Value::Pair(2, -1), Value::Pair(1, 1)]),
            Value::indices(vec![Loc { i: 0, j: 1 }, Loc { i: 1, j: -1 }]),
            Value::tuple(vec![Value::Int(1), Value::Pair(0, 1), Value::Int(-1)]),
            Value::set(vec![Value::Int(2), Value::Pair(1, 0), Value::Int(0)]),
        ][c]
            .clone();
        let over = |name: &str, f: Value| {
            let mapping = match name {
                // apply and mapply take the function first.
                "apply" | "mapply" => built("rbind", vec![p(name), container.clone()]),
                _ => built("lbind", vec![p(name), container.clone()]),
            };
            built("compose", vec![mapping, shifted_by_element(f)])
        };
        let second = over(other, g.unwrap_or_else(|| f.clone()));
        let h = built("fork", vec![p("astuple"), over(best, f), second]);
        let (scalar, vectorised) = mapped(&h, &xs);
        prop_assert_eq!(scalar, vectorised, "{}", h);
    }

    /// `m -> astuple(argmin(S, k(m)), best(remove(m, S), k(m)))` with `k(m) = y -> f(m + y)`:
    /// the summary of `S` that `best` picks from and the `argmin` are siblings over the same
    /// set with the same function, computed once. Values and the first error are the scalar
    /// path's, for members of `S` and values not in it, ties, and keys that raise.
    #[test]
    fn a_best_member_and_a_summary_of_one_set_agree(
        best in prop::sample::select(vec!["valmin", "valmax", "argmin", "argmax"]),
        members in proptest::collection::vec(set_member(), 0..6),
        f in member_key(),
        ms in proptest::collection::vec(set_member(), 0..12),
    ) {
        let built = |name: &str, args: Vec<Value>| call(&p(name), &args).unwrap();
        let set = Value::set(members);
        let key = shifted_by_element(f);
        let nearest = built("compose", vec![built("lbind", vec![p("argmin"), set.clone()]), key.clone()]);
        let without = built("fork", vec![p(best), built("rbind", vec![p("remove"), set]), key]);
        let h = built("fork", vec![p("astuple"), nearest, without]);
        let (scalar, vectorised) = mapped(&h, &ms);
        prop_assert_eq!(scalar, vectorised, "{}", h);
    }
}

/// PEP 479: a `StopIteration` raised by the function inside the reference's generator
/// expressions (`apply`, `mapply`, `sfilter`, `mfilter`, `papply`, `prapply`, `rapply`,
/// `extract`) is a `RuntimeError`; inside `max`/`sorted` (`argmax`, `valmin`, `order`) it stays,
/// on both paths and when flattened.
#[test]
fn stop_iteration_inside_a_generator_is_a_runtime_error() {
    // The empty container first, so that `extract` meets it before a match.
    let empty_first = Value::tuple(vec![Value::empty_tuple(), Value::tuple(vec![Value::Int(1)])]);
    let kind = |name: &str, args: Vec<Value>| match call(&p(name), &args) {
        Err(e) => e.python_name().to_string(),
        Ok(v) => panic!("{name} gave {v}"),
    };
    let (scalar, vectorised) = both(|| {
        let with_first = |name: &str, container_first: bool| {
            let args = if container_first {
                vec![empty_first.clone(), p("first")]
            } else {
                vec![p("first"), empty_first.clone()]
            };
            kind(name, args)
        };
        // Flattened: x -> apply(first, x) over a tuple holding the containers.
        let nested = call(&p("lbind"), &[p("apply"), p("first")]).unwrap();
        let outer = Value::tuple(vec![empty_first.clone()]);
        [
            with_first("apply", false),
            with_first("mapply", false),
            with_first("sfilter", true),
            with_first("mfilter", true),
            with_first("extract", true),
            with_first("argmax", true),
            with_first("valmin", true),
            with_first("order", true),
            kind("apply", vec![nested, outer]),
        ]
    });
    assert_eq!(scalar, vectorised);
    assert_eq!(
        scalar,
        [
            "RuntimeError",
            "RuntimeError",
            "RuntimeError",
            "RuntimeError",
            "RuntimeError",
            "StopIteration",
            "StopIteration",
            "StopIteration",
            "RuntimeError"
        ]
    );
}

/// A function that unfolds into more calls than a kernel may hold (`power` of `power` of
/// `power`: 729 million rotations) is not inlined whole: the kernel stays small, the deadline
/// stops it, and a shallower one gives the scalar path's result.
#[test]
fn deep_powers_are_bounded_and_exact() {
    let grid = Value::grid(arcbatch::dsl::Grid::new(1, 2, vec![1, 2]));
    let power = |f: Value, n: i64| call(&p("power"), &[f, Value::Int(n)]).unwrap();
    let endless = power(power(power(p("rot90"), 900), 900), 900);
    let start = std::time::Instant::now();
    let m = {
        let _deadline = arcbatch::dsl::func::Deadline::set(Some(Duration::from_millis(200)));
        map(&endless, &[&[grid.clone(), grid.clone()]])
    };
    assert_eq!(m.error, Some(arcbatch::dsl::DslError::Timeout));
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    let deep = power(power(p("rot90"), 90), 70);
    let (scalar, vectorised) = mapped(&deep, &[grid.clone(), grid.clone()]);
    assert_eq!(scalar, vectorised);
}

/// A container larger than one block of the column engine (`column::BLOCK`, 16,384 elements):
/// the values across blocks, and an error met in a later block, are the scalar path's.
#[test]
fn containers_of_several_blocks_agree() {
    let bind = |b: &str, f: &str, x: i64| call(&p(b), &[p(f), Value::Int(x)]).unwrap();
    let compose = |outer: Value, inner: Value| call(&p("compose"), &[outer, inner]).unwrap();
    let xs: Vec<Value> = (-20_000..20_000).map(Value::Int).collect();
    // 100 // x for x = -20000..: the element 0, in the second block, raises.
    let raising = compose(p("increment"), bind("lbind", "divide", 100));
    let (scalar, vectorised) = mapped(&raising, &xs);
    assert_eq!(scalar.0.len(), 20_000, "the elements before 0 have values");
    assert!(scalar.1.is_some(), "divide(100, 0) raises");
    assert_eq!(scalar, vectorised);
    let total = call(&p("fork"), &[p("add"), p("identity"), bind("rbind", "multiply", 3)]).unwrap();
    let (scalar, vectorised) = mapped(&total, &xs);
    assert_eq!(scalar.0.len(), xs.len());
    assert_eq!(scalar, vectorised);
}

/// `prapply` over more pairs than one block: its pairs go through the function a block of
/// rows at a time; the set, and the first error in the reference's loop order (over `b`
/// outside, `a` inside), are those of calling the function pair by pair.
#[test]
fn prapply_over_several_blocks_is_the_pairwise_loop() {
    let xs: Vec<Value> = (0..150).map(Value::Int).collect();
    // y = 0, where `divide` raises, is row 120 of `b`: past the first block of 109 rows.
    let ys: Vec<Value> = (-120..30).map(Value::Int).collect();
    let pairwise = |f: &Value| -> Result<Value, arcbatch::dsl::DslError> {
        let mut out = Vec::new();
        for y in &ys {
            for x in &xs {
                out.push(call(f, &[x.clone(), y.clone()])?);
            }
        }
        Ok(Value::set(out))
    };
    let (a, b) = (Value::tuple(xs.clone()), Value::tuple(ys.clone()));
    for f in [p("add"), p("divide"), p("astuple")] {
        let want = pairwise(&f);
        let (scalar, vectorised) = both(|| call(&p("prapply"), &[f.clone(), a.clone(), b.clone()]));
        assert_eq!(scalar, want, "{f}");
        assert_eq!(vectorised, want, "{f}");
    }
    assert!(pairwise(&p("divide")).is_err(), "divide(x, 0) raises");
}

/// A function of the embedding's ([`Foreign`]): counts its calls, and raises on `Int(13)`.
struct Recorder {
    calls: Mutex<Vec<Value>>,
}

impl Foreign for Recorder {
    fn call(&self, args: &[Value]) -> DslResult<Value> {
        self.calls.lock().unwrap().push(args[0].clone());
        match args[0] {
            Value::Int(13) => Err(DslError::Foreign(Arc::new(Raised {
                class: "ValueError".into(),
                message: "thirteen".into(),
                stop_iteration: false,
                exception: Box::new(()),
            }))),
            Value::Int(n) => Ok(Value::Int(n % 3)),
            _ => Ok(Value::None),
        }
    }
    fn arg_count(&self) -> Option<usize> {
        Some(1)
    }
    fn type_name(&self) -> &str {
        "function"
    }
    fn repr(&self) -> &str {
        "<recorder>"
    }
    fn id(&self) -> usize {
        self as *const Recorder as usize
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A foreign function, alone or inside closures the column engine would compile and memoise, is
/// called exactly as the reference calls a Python function: once per call, in order, the first
/// error stopping the rest; on every evaluation path.
#[test]
fn foreign_functions_are_called_as_the_reference_calls_them() {
    let items = |ns: &[i64]| Value::tuple(ns.iter().map(|&n| Value::Int(n)).collect());
    let run = |container: Value| {
        let recorder = Arc::new(Recorder {
            calls: Mutex::new(Vec::new()),
        });
        let foreign = Value::func(Func::Foreign(ForeignFn::new(recorder.clone())));
        // fork(add, f, f): the reference calls f twice per element; a kernel would call it once.
        let twice = call(&p("fork"), &[p("add"), foreign.clone(), foreign]).unwrap();
        // Raised errors are equal only to themselves: compared by their text.
        let mapped = call(&p("apply"), &[twice, container]).map_err(|e| e.to_string());
        let calls = recorder.calls.lock().unwrap().clone();
        (mapped, calls)
    };
    let many: Vec<i64> = (0..200).map(|k| k % 7).collect();
    let (scalar, columns) = both(|| run(items(&many)));
    assert_eq!(scalar, columns);
    let (mapped, calls) = scalar;
    let expected: Vec<Value> = many.iter().map(|&n| Value::Int((n % 3) * 2)).collect();
    assert_eq!(mapped, Ok(Value::tuple(expected)));
    let twice: Vec<Value> = many.iter().flat_map(|&n| [Value::Int(n), Value::Int(n)]).collect();
    assert_eq!(calls, twice);
    // The first element that raises stops the map: nothing after it is called.
    let (scalar, columns) = both(|| run(items(&[1, 13, 2])));
    assert_eq!(scalar, columns);
    let (mapped, calls) = scalar;
    assert_eq!(mapped, Err("ValueError: thirteen".to_string()));
    assert_eq!(calls, vec![Value::Int(1), Value::Int(1), Value::Int(13)]);
}
