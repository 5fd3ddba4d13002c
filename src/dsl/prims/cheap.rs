//! The cheap primitives function values apply most (projections, arithmetic, comparisons),
//! named so that the column engine can call each one statically in its per-element loop: through
//! [`Cheap::with`], a loop written once is compiled for each of them with the primitive's own
//! code inlined, instead of calling every primitive through a function pointer. They are the
//! registered implementations themselves, so nothing here can differ from the registry.

use std::sync::LazyLock;

use super::{containers, grids, numbers, patches};
use crate::dsl::error::DslResult;
use crate::dsl::registry::{registry, PrimId};
use crate::dsl::value::Value;

/// Something to run with a primitive's implementation as a statically known function.
pub trait WithPrim {
    type Out;
    /// `imp` is called with `ARITY` arguments each time, or with any number where `ARITY` is 0:
    /// a loop compiled for one arity leaves out the paths of the others.
    fn run<const ARITY: usize>(self, imp: impl Fn(&[Value]) -> DslResult<Value>) -> Self::Out;
}

/// `Variant => family::function / arity`: each primitive with its number of arguments, which its
/// loops are compiled for (checked against the registry by the test below).
macro_rules! cheap {
    ($($variant:ident => $family:ident::$f:ident / $arity:literal),* $(,)?) => {
        /// A cheap primitive, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Cheap { $($variant),* }

        impl Cheap {
            pub const ALL: &'static [Cheap] = &[$(Cheap::$variant),*];

            /// The primitive's registered name.
            pub fn name(self) -> &'static str {
                match self { $(Cheap::$variant => stringify!($f)),* }
            }

            /// The number of arguments the primitive takes.
            pub fn arity(self) -> usize {
                match self { $(Cheap::$variant => $arity),* }
            }

            /// `work` run with this primitive's implementation.
            #[inline]
            pub fn with<W: WithPrim>(self, work: W) -> W::Out {
                match self { $(Cheap::$variant => work.run::<$arity>($family::$f)),* }
            }
        }
    };
}

cheap! {
    First => containers::first / 1,
    Last => containers::last / 1,
    Size => containers::size / 1,
    Maximum => containers::maximum / 1,
    Minimum => containers::minimum / 1,
    Contained => containers::contained / 2,
    Astuple => numbers::astuple / 2,
    Add => numbers::add / 2,
    Subtract => numbers::subtract / 2,
    Multiply => numbers::multiply / 2,
    Equality => numbers::equality / 2,
    Greater => numbers::greater / 2,
    Even => numbers::even / 1,
    Sign => numbers::sign / 1,
    Invert => numbers::invert / 1,
    Increment => numbers::increment / 1,
    Decrement => numbers::decrement / 1,
    Double => numbers::double / 1,
    Halve => numbers::halve / 1,
    Toivec => numbers::toivec / 1,
    Tojvec => numbers::tojvec / 1,
    Flip => numbers::flip / 1,
    Both => numbers::both / 2,
    Either => numbers::either / 2,
    Positive => numbers::positive / 1,
    Crement => numbers::crement / 1,
    Index => grids::index / 2,
    Center => grids::center / 1,
    Color => patches::color / 1,
}

static BY_ID: LazyLock<Vec<Option<Cheap>>> = LazyLock::new(|| {
    let mut table = vec![None; registry().specs.len()];
    for &c in Cheap::ALL {
        let id = PrimId::builtin(c.name());
        table[id.0 as usize] = Some(c);
    }
    table
});

impl Cheap {
    /// The primitive `id` if it is one of the cheap ones.
    pub fn of(id: PrimId) -> Option<Cheap> {
        BY_ID[id.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::{Cell, Loc};

    /// Calls the primitive it is given on fixed arguments.
    struct Call<'a>(&'a [Value]);

    impl WithPrim for Call<'_> {
        type Out = DslResult<Value>;
        fn run<const ARITY: usize>(self, imp: impl Fn(&[Value]) -> DslResult<Value>) -> DslResult<Value> {
            imp(self.0)
        }
    }

    /// Each cheap primitive is the registered one of its name: the same results and errors on
    /// every combination of values of the kinds they meet (and some they reject).
    #[test]
    fn each_cheap_primitive_is_the_registered_one() {
        let loc = |i, j| Loc { i, j };
        let samples = vec![
            Value::Int(3),
            Value::Int(-2),
            Value::Int(i64::MAX),
            Value::Bool(true),
            Value::Pair(1, -4),
            Value::LocPair(loc(0, 1), loc(2, 3)),
            Value::Cell(Cell { color: 5, i: 1, j: 2 }),
            Value::indices(vec![loc(0, 0), loc(1, 2)]),
            Value::object(vec![Cell { color: 2, i: 0, j: 1 }]),
            Value::empty_set(),
            Value::tuple(vec![Value::Int(1), Value::Int(2), Value::Int(7)]),
        ];
        for &cheap in Cheap::ALL {
            let spec = PrimId::of(cheap.name()).expect("registered").spec();
            assert_eq!(Cheap::of(PrimId::of(cheap.name()).unwrap()), Some(cheap));
            assert_eq!(cheap.arity(), spec.arity(), "{}'s arity", cheap.name());
            let mut compared = 0;
            let mut args = vec![Value::None; spec.arity()];
            let combinations = samples.len().pow(spec.arity() as u32);
            for mut k in 0..combinations {
                for a in args.iter_mut() {
                    *a = samples[k % samples.len()].clone();
                    k /= samples.len();
                }
                let (got, expected) = (cheap.with(Call(&args)), (spec.imp)(&args));
                match (&got, &expected) {
                    (Ok(g), Ok(e)) => assert_eq!(g, e, "{} of {args:?}", cheap.name()),
                    (Err(g), Err(e)) => assert_eq!(g.to_string(), e.to_string(), "{} of {args:?}", cheap.name()),
                    _ => panic!("{} of {args:?}: {got:?} against {expected:?}", cheap.name()),
                }
                compared += 1;
            }
            assert!(
                compared >= samples.len(),
                "{} compared on {compared} argument lists",
                cheap.name()
            );
        }
    }
}
