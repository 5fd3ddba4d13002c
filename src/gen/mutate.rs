//! Well-typed mutations of a program, by the registry's parameter and result types.
//!
//! Each argument of each step is mutated with probability `rate`, and so is each primitive a
//! step calls. A mutated argument becomes, chosen uniformly among what fits:
//!
//! - an earlier variable (a parameter or an earlier step) whose type fits: the same type as
//!   the argument's, or one that is both a subtype of the parameter's declared type and of the
//!   argument's (an `Object` where a `Patch` stood). Variables of unknown type (results of
//!   calling a function value) are never chosen, nor replaced by variables, and `C` (the
//!   expected output) is never read;
//! - a constant of the same kind: a colour (0 to 9) for a colour (the colour arguments of
//!   `fill`, `recolor`, `canvas`, ...), `R0`..`R7` for `o_g`'s mode, another small integer
//!   for any other integer, the other boolean, a direction for a direction, a pair constant
//!   for any other pair;
//! - a primitive of the same signature for a primitive passed as a function value.
//!
//! A called primitive becomes another of exactly the same signature. Every mutant is thus
//! well-typed as far as the types say; what still fails at run time fails in its lane.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crate::dsl::constants::CONSTANTS;
use crate::dsl::registry::Ty;
use crate::dsl::{registry, PrimId};
use crate::program::{Callee, ConstKey, Operand, Program};
use crate::rng::Rng;

/// A mutated program and what was changed, one entry per change.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub program: Program,
    pub changes: Vec<String>,
}

/// Primitives by signature (parameter types and result type), each group sorted.
/// A primitive's parameter types and result type.
type Signature = (Vec<Ty>, Ty);

static BY_SIGNATURE: LazyLock<BTreeMap<Signature, Vec<PrimId>>> = LazyLock::new(|| {
    let mut groups: BTreeMap<Signature, Vec<PrimId>> = BTreeMap::new();
    for id in registry().ids() {
        let spec = id.spec();
        groups.entry((spec.params.to_vec(), spec.ret)).or_default().push(id);
    }
    groups
});

/// The other primitives with `id`'s signature.
fn same_signature(id: PrimId) -> Vec<PrimId> {
    let spec = id.spec();
    BY_SIGNATURE[&(spec.params.to_vec(), spec.ret)]
        .iter()
        .copied()
        .filter(|&o| o != id)
        .collect()
}

/// Arguments that hold a colour: (primitive, argument position).
const COLOUR_ARGS: &[(&str, usize)] = &[
    ("fill", 1),
    ("underfill", 1),
    ("recolor", 0),
    ("ofcolor", 1),
    ("colorcount", 1),
    ("colorfilter", 1),
    ("canvas", 0),
    ("switch", 1),
    ("switch", 2),
    ("replace", 1),
    ("replace", 2),
    ("cellwise", 2),
];

/// The unit steps and diagonals.
const DIRECTIONS: &[(i64, i64)] = &[(1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, -1), (-1, 1), (1, -1)];

/// Whether a value of type `a` may stand where `b` is expected.
fn is_sub(a: Ty, b: Ty) -> bool {
    use Ty::*;
    a == b
        || b == Any
        || matches!(
            (a, b),
            (Integer | IntegerTuple, Numerical)
                | (IntegerTuple | Grid | TupleTuple, Tuple)
                | (Grid, TupleTuple | Element | Piece)
                | (Object, Patch | Element | Piece)
                | (Indices | Patch, Piece)
                | (Indices, Patch)
                | (Object | Indices | Patch | Objects | IndicesSet | IntegerSet, FrozenSet)
                | (Objects | IndicesSet | TupleTuple, ContainerContainer)
                | (
                    Tuple
                        | TupleTuple
                        | IntegerTuple
                        | Grid
                        | FrozenSet
                        | Object
                        | Indices
                        | Patch
                        | Objects
                        | IndicesSet
                        | IntegerSet
                        | ContainerContainer,
                    Container
                )
        )
}

/// Whether a variable of type `cand` may replace an argument of type `cur` declared `declared`.
fn fits(cand: Ty, cur: Ty, declared: Ty) -> bool {
    cand != Ty::Any && cur != Ty::Any && (cand == cur || (is_sub(cand, declared) && is_sub(cand, cur)))
}

/// The type of each parameter, then of each step.
fn types(p: &Program) -> (Vec<Ty>, Vec<Ty>) {
    let params = p
        .params
        .iter()
        .map(|n| match n.as_str() {
            "S" => Ty::Tuple,
            _ => Ty::Grid,
        })
        .collect();
    let steps = p
        .steps
        .iter()
        .map(|s| match s.callee {
            Callee::Prim(id) => id.spec().ret,
            Callee::Value(_) => Ty::Any,
        })
        .collect();
    (params, steps)
}

/// The constants that may replace constant `c`, argument `pos` of a call of `callee`.
fn constant_choices(c: &ConstKey, callee: Option<&str>, pos: usize) -> Vec<ConstKey> {
    let ints = |range: std::ops::RangeInclusive<i64>| range.map(ConstKey::Int).collect::<Vec<_>>();
    let choices = match c {
        ConstKey::Bool(b) => vec![ConstKey::Bool(!b)],
        ConstKey::Int(_) => match callee {
            Some("o_g") if pos == 1 => ints(0..=7),
            Some(name) if COLOUR_ARGS.contains(&(name, pos)) => ints(0..=9),
            _ => ints(-2..=10),
        },
        ConstKey::Pair(a, b) if DIRECTIONS.contains(&(*a, *b)) => {
            DIRECTIONS.iter().map(|&(a, b)| ConstKey::Pair(a, b)).collect()
        }
        ConstKey::Pair(..) => {
            let mut pairs: Vec<ConstKey> = CONSTANTS
                .iter()
                .filter_map(|(_, k)| ConstKey::from_value(&k.value()))
                .filter(|k| matches!(k, ConstKey::Pair(..)))
                .collect();
            pairs.sort();
            pairs.dedup();
            pairs
        }
        ConstKey::Prim(id) => same_signature(*id).into_iter().map(ConstKey::Prim).collect(),
    };
    choices.into_iter().filter(|k| k != c).collect()
}

/// A mutant of `p`: each argument and each called primitive mutated with probability `rate`.
/// `None` when nothing was changed (no draw hit, or nothing fitted where one did).
pub fn mutate(p: &Program, rate: f64, rng: &mut Rng) -> Option<Mutant> {
    let (param_types, step_types) = types(p);
    let mut out = p.clone();
    let mut changes = Vec::new();
    for k in 0..p.steps.len() {
        let step = &p.steps[k];
        let callee = match step.callee {
            Callee::Prim(id) => Some(id),
            Callee::Value(_) => None,
        };
        if let Some(id) = callee {
            if rng.chance(rate) {
                let others = same_signature(id);
                if !others.is_empty() {
                    let new = *rng.pick(&others);
                    out.steps[k].callee = Callee::Prim(new);
                    changes.push(format!("{}: {} -> {}", step.target, id.spec().name, new.spec().name));
                }
            }
        }
        for (pos, arg) in step.args.iter().enumerate() {
            if !rng.chance(rate) {
                continue;
            }
            let declared = callee.map_or(Ty::Any, |id| id.spec().params[pos]);
            let type_of = |op: &Operand| match op {
                Operand::Param(i) => param_types[*i as usize],
                Operand::Step(s) => step_types[*s as usize],
                Operand::Const(ConstKey::Prim(_)) => Ty::Callable,
                Operand::Const(ConstKey::Bool(_)) => Ty::Boolean,
                Operand::Const(ConstKey::Int(_)) => Ty::Integer,
                Operand::Const(ConstKey::Pair(..)) => Ty::IntegerTuple,
            };
            let current = type_of(arg);
            let mut choices: Vec<Operand> = (0..p.params.len())
                .filter(|&i| p.params[i] != "C")
                .map(|i| Operand::Param(i as u8))
                .chain((0..k).map(|s| Operand::Step(s as u32)))
                .filter(|cand| cand != arg && fits(type_of(cand), current, declared))
                .collect();
            if let Operand::Const(c) = arg {
                let name = callee.map(|id| id.spec().name);
                choices.extend(constant_choices(c, name, pos).into_iter().map(Operand::Const));
            }
            if choices.is_empty() {
                continue;
            }
            let new = rng.pick(&choices).clone();
            changes.push(format!(
                "{} arg {}: {} -> {}",
                step.target,
                pos + 1,
                p.operand_name(arg),
                p.operand_name(&new)
            ));
            out.steps[k].args[pos] = new;
        }
    }
    (!changes.is_empty()).then_some(Mutant { program: out, changes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::parse_program;

    const SRC: &str = "def solve_a(I):\n    x1 = objects(I, T, F, T)\n    x2 = colorfilter(x1, TWO)\n    x3 = shift(x2, DOWN)\n    x4 = rot90(I)\n    O = fill(x4, FOUR, x3)\n    return O\n";

    #[test]
    fn mutants_keep_kinds_and_types() {
        let p = parse_program("t.py", SRC).unwrap();
        let mut rng = Rng::new(3);
        let mut seen = 0;
        for _ in 0..200 {
            let Some(m) = mutate(&p, 0.5, &mut rng) else { continue };
            seen += 1;
            assert_eq!(m.program.steps.len(), p.steps.len());
            let s = &m.program.steps;
            // Flags stay booleans, colours colours, directions directions.
            for a in &s[0].args[1..] {
                assert!(matches!(a, Operand::Const(ConstKey::Bool(_))), "{}", m.program);
            }
            assert!(
                matches!(s[1].args[1], Operand::Const(ConstKey::Int(0..=9))),
                "{}",
                m.program
            );
            if let Operand::Const(ConstKey::Pair(a, b)) = s[2].args[1] {
                assert!(DIRECTIONS.contains(&(a, b)));
            }
            // The grid argument of fill is a grid: I or x4, never an object set.
            assert!(
                matches!(s[4].args[0], Operand::Param(0) | Operand::Step(3)),
                "{}",
                m.program
            );
            // The mutant parses back.
            parse_program("t.py", &m.program.to_string()).unwrap_or_else(|e| panic!("{e}\n{}", m.program));
            assert!(!m.changes.is_empty());
        }
        assert!(seen > 150);
        assert!(mutate(&p, 0.0, &mut rng).is_none());
    }

    #[test]
    fn primitives_are_replaced_by_ones_of_the_same_signature() {
        let rot90 = PrimId::of("rot90").unwrap();
        let others = same_signature(rot90);
        assert!(others.contains(&PrimId::of("rot180").unwrap()));
        assert!(others
            .iter()
            .all(|o| o.spec().params == [Ty::Grid] && o.spec().ret == Ty::Grid));
    }
}
