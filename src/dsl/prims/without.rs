//! `valmin`, `valmax`, `argmin` and `argmax` of a set with one member removed,
//! `valmin(remove(m, S), f)`, for many `m` and one `S` and `f`, without applying `f` to `S`'s
//! members again for each `m`. solve_d22278a0 computes `valmin(remove(o, objects), distance to
//! l)` for every object `o` and location `l`: |objects|² x |locations| keys, where the
//! summaries below need |objects| x |locations|.
//!
//! Where every key `f` gives on `S`'s members is an integer, the result for any `m` follows from
//! the first member with the best key, `B`: `remove(m, S)` still holds `B` unless `m == B` (a set
//! holds no two equal members, so `m` takes out one at most), and then its first best member is
//! the next member with `B`'s key, or else the first with the next best key. [`Without::best_two`]
//! is the mapping that computes that summary of `S` under `f`, which does not depend on `m` (the
//! column engine computes it once for all the `m` of a location), and [`Without::run`] picks
//! the result for one `m` from it. Anything else (a key that is not an integer, a key that
//! raised, no member left, not a set) is left to the primitive itself on `remove(m, S)`, so that
//! every result and error is the primitive's.

use std::sync::LazyLock;

use crate::dsl::column::{Mapped, Mapping};
use crate::dsl::error::DslResult;
use crate::dsl::registry::PrimId;
use crate::dsl::value::{Items, Value};

/// One of `valmax`, `valmin`, `argmax` and `argmin`, applied to `remove(m, S)` for a set `S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Without {
    prim: PrimId,
    /// Whether the best key is the largest, and whether the result is the member rather than
    /// its key.
    max: bool,
    item: bool,
}

static WITHOUT: LazyLock<[Without; 4]> = LazyLock::new(|| {
    let of = |name, max, item| Without {
        prim: PrimId::builtin(name),
        max,
        item,
    };
    [
        of("valmax", true, false),
        of("valmin", false, false),
        of("argmax", true, true),
        of("argmin", false, true),
    ]
});

/// The summaries of a set under a function, for the smallest and for the largest key.
static BEST_TWO: [Mapping; 2] = [
    Mapping {
        container: 0,
        function: 1,
        members: no_members,
        combine: |set, members, keys| best_two(set, members, keys, false),
        generator: false,
    },
    Mapping {
        container: 0,
        function: 1,
        members: no_members,
        combine: |set, members, keys| best_two(set, members, keys, true),
        generator: false,
    },
];

/// What a summary lists for a container that is not a non-empty tuple or set (the column engine
/// reads those members in place): nothing, since only a set's members are summarised.
fn no_members(_: &Value, _: &mut Vec<Value>) -> DslResult<()> {
    Ok(())
}

/// The summary of a set under a function, from the keys of its members: the first member with
/// the best key and that key, then the member and key that take their place without it, where
/// one is left (`(B, key)` or `(B, key, next, next's key)`, a tuple only [`Without::run`]
/// reads); `None` where the primitive itself must decide. The time limit raises, as it would
/// have in the primitive.
fn best_two(set: &Value, members: &[Value], keys: &mut Mapped, max: bool) -> DslResult<Value> {
    if let Some(e) = keys.error.take() {
        return if e.is_transient() { Err(e) } else { Ok(Value::None) };
    }
    let ints: Option<Vec<i64>> = keys
        .values
        .iter()
        .map(|k| match k {
            Value::Int(x) => Some(*x),
            _ => None,
        })
        .collect();
    // Not a set, a key that is not an integer, or keys short of the members (a member of an
    // earlier set raised, and this set's keys were never computed).
    let (Value::Set(_), Some(keys)) = (set, ints.filter(|k| k.len() == members.len())) else {
        return Ok(Value::None);
    };
    let Some(first) = first_best(&keys, 0..keys.len(), max) else {
        return Ok(Value::None);
    };
    // Without it: the next member with its key, or else the first of the best of the others.
    let next = (first + 1..keys.len())
        .find(|&k| keys[k] == keys[first])
        .or_else(|| first_best(&keys, (0..keys.len()).filter(|&k| keys[k] != keys[first]), max));
    let mut summary = vec![members[first].clone(), Value::Int(keys[first])];
    if let Some(k) = next {
        summary.extend([members[k].clone(), Value::Int(keys[k])]);
    }
    Ok(Value::Tuple(Items::new(summary)))
}

/// The first of `candidates` whose key no later one beats (larger for `max`, smaller
/// otherwise), as Python's `max` and `min` keep it.
fn first_best(keys: &[i64], candidates: impl Iterator<Item = usize>, max: bool) -> Option<usize> {
    candidates.reduce(|best, k| {
        let beats = if max {
            keys[k] > keys[best]
        } else {
            keys[k] < keys[best]
        };
        if beats {
            k
        } else {
            best
        }
    })
}

impl Without {
    /// `id` applied to `remove(m, S)`, where `id` is one of the four primitives.
    pub fn of(id: PrimId) -> Option<Without> {
        WITHOUT.iter().find(|w| w.prim == id).copied()
    }

    /// The mapping whose result for a set `S` and function `f` (applied to `S`'s members) is
    /// the summary [`Without::run`] reads. It raises only the time limit.
    pub fn best_two(self) -> &'static Mapping {
        &BEST_TWO[usize::from(self.max)]
    }

    /// The primitive on `remove(m, S)` and `f`, from the arguments `(summary of S under f, m,
    /// remove(m, S), f)`.
    pub fn run(self, args: &[Value]) -> DslResult<Value> {
        let (summary, removed) = (&args[0], &args[1]);
        let picked = match summary {
            Value::Tuple(best) => match &best[..] {
                [first, key, ..] if removed != first => Some((first, key)),
                [_, _, next, key] => Some((next, key)),
                _ => None,
            },
            _ => None,
        };
        match picked {
            Some((item, key)) => Ok(if self.item { item } else { key }.clone()),
            None => (self.prim.spec().imp)(&args[2..4]),
        }
    }
}
