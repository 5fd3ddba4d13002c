//! What the enumerator knows of a value's type: the [`Kind`] of a column, read from the
//! values it holds, and the [`Sig`]nature of a function value, read from the registry's
//! parameter and result types. The registry's types ([`Ty`]) are the reference's loose
//! `arc_types.py` names; [`accepts`] turns each into the set of kinds it admits.

use crate::dsl::{PrimId, Ty, Value};

/// The runtime kind of a value, as the enumerator types arguments by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Grid,
    Int,
    Bool,
    /// An integer pair: a location, a shape, a direction.
    Pair,
    /// A cell `(colour, (i, j))` of an object.
    Cell,
    Indices,
    Object,
    /// A set of objects.
    Objects,
    /// A set of index sets.
    IndicesSet,
    /// A set of integers (a palette).
    IntSet,
    /// A tuple of grids (`hsplit`, `vsplit`).
    Grids,
    /// A function value.
    Func,
}

/// A set of kinds, one bit each.
pub type Kinds = u16;

/// Every kind but functions: what `Any` admits (the enumerator never compares functions).
const VALUES: Kinds = (1 << 11) - 1;

impl Kind {
    pub fn bit(self) -> Kinds {
        1 << self as u8
    }

    /// The kind of one value; `Some(None)` for an empty container, which fits any container
    /// kind; `None` for a value the enumerator does not use.
    pub fn of(v: &Value) -> Option<Option<Kind>> {
        Some(Some(match v {
            Value::Bool(_) => Kind::Bool,
            Value::Int(_) => Kind::Int,
            Value::Pair(..) => Kind::Pair,
            Value::Cell(_) => Kind::Cell,
            Value::Grid(g) if g.h > 0 && g.w > 0 => Kind::Grid,
            Value::Indices(l) if l.is_empty() => return Some(None),
            Value::Indices(_) => Kind::Indices,
            Value::Object(c) if c.is_empty() => return Some(None),
            Value::Object(_) => Kind::Object,
            Value::Func(_) => Kind::Func,
            Value::Set(items) => match items.first() {
                None => return Some(None),
                Some(first) => match Kind::of(first)?? {
                    Kind::Object => Kind::Objects,
                    Kind::Indices => Kind::IndicesSet,
                    Kind::Int => Kind::IntSet,
                    _ => return None,
                },
            },
            Value::Tuple(items) if !items.is_empty() && items.iter().all(|g| matches!(g, Value::Grid(_))) => {
                Kind::Grids
            }
            _ => return None,
        }))
    }

    /// The kind of a column: every value's, where they agree (empty containers fit any kind
    /// of container); `None` where they do not, or where every value is empty.
    pub fn of_column(col: &[Value]) -> Option<Kind> {
        let mut kind = None;
        for v in col {
            match (Kind::of(v)?, kind) {
                (None, _) => {}
                (Some(k), None) => kind = Some(k),
                (Some(k), Some(seen)) if k == seen => {}
                _ => return None,
            }
        }
        let kind = kind?;
        let empty_fits = kind.member().is_some() || kind == Kind::Object;
        (empty_fits || col.iter().all(|v| Kind::of(v) == Some(Some(kind)))).then_some(kind)
    }

    /// The kind of a container's members.
    pub fn member(self) -> Option<Kind> {
        Some(match self {
            Kind::Objects => Kind::Object,
            Kind::IndicesSet => Kind::Indices,
            Kind::Indices => Kind::Pair,
            Kind::Object => Kind::Cell,
            Kind::IntSet => Kind::Int,
            Kind::Grids => Kind::Grid,
            _ => return None,
        })
    }
}

/// The kinds a parameter or result type admits.
pub fn accepts(ty: Ty) -> Kinds {
    use Kind as K;
    let sets = K::Indices.bit() | K::Object.bit() | K::Objects.bit() | K::IndicesSet.bit() | K::IntSet.bit();
    match ty {
        Ty::Any => VALUES,
        Ty::Boolean => K::Bool.bit(),
        Ty::Integer => K::Int.bit(),
        Ty::IntegerTuple => K::Pair.bit(),
        Ty::Numerical => K::Int.bit() | K::Pair.bit(),
        Ty::IntegerSet => K::IntSet.bit(),
        Ty::Grid => K::Grid.bit(),
        Ty::Cell => K::Cell.bit(),
        Ty::Object => K::Object.bit(),
        Ty::Objects => K::Objects.bit(),
        Ty::Indices => K::Indices.bit(),
        Ty::IndicesSet => K::IndicesSet.bit(),
        Ty::Patch => K::Object.bit() | K::Indices.bit(),
        Ty::Element => K::Object.bit() | K::Grid.bit(),
        Ty::Piece => K::Grid.bit() | K::Object.bit() | K::Indices.bit(),
        Ty::Tuple => K::Pair.bit() | K::Grids.bit(),
        Ty::TupleTuple => 0,
        Ty::FrozenSet => sets,
        Ty::Container => sets | K::Grids.bit(),
        Ty::ContainerContainer => K::Objects.bit() | K::IndicesSet.bit() | K::Grids.bit(),
        Ty::Callable => K::Func.bit(),
    }
}

/// Whether a value of type `produced` may be an argument of type `wanted`.
pub fn fits(produced: Ty, wanted: Ty) -> bool {
    accepts(produced) & accepts(wanted) != 0
}

/// The signature of a function value: its parameters' and result's types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sig {
    pub arity: u8,
    pub params: [Ty; 3],
    pub ret: Ty,
}

impl Sig {
    /// A primitive's signature, for primitives of one to three parameters.
    pub fn of_prim(id: PrimId) -> Option<Sig> {
        let spec = id.spec();
        let n = spec.params.len();
        if !(1..=3).contains(&n) {
            return None;
        }
        let mut params = [Ty::Any; 3];
        params[..n].copy_from_slice(spec.params);
        Some(Sig {
            arity: n as u8,
            params,
            ret: spec.ret,
        })
    }

    /// A one-parameter function `param -> ret`.
    pub fn unary(param: Ty, ret: Ty) -> Sig {
        Sig {
            arity: 1,
            params: [param, Ty::Any, Ty::Any],
            ret,
        }
    }

    /// The function with its first (`left`) or last parameter fixed.
    pub fn bound(self, left: bool) -> Sig {
        let n = self.arity as usize;
        let mut params = [Ty::Any; 3];
        let rest = if left {
            &self.params[1..n]
        } else {
            &self.params[..n - 1]
        };
        params[..n - 1].copy_from_slice(rest);
        Sig {
            arity: self.arity - 1,
            params,
            ret: self.ret,
        }
    }

    /// Whether it takes one argument of this kind.
    pub fn takes(&self, kind: Kind) -> bool {
        self.arity == 1 && accepts(self.params[0]) & kind.bit() != 0
    }

    /// Whether its result may be of a kind in `kinds`.
    pub fn returns(&self, kinds: Kinds) -> bool {
        accepts(self.ret) & kinds != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::shared::Shared;
    use crate::dsl::{Grid, Loc};

    #[test]
    fn columns_agree_on_one_kind_and_empty_containers_fit() {
        let idx = Value::indices(vec![Loc { i: 0, j: 1 }]);
        let empty = Value::indices(vec![]);
        assert_eq!(Kind::of_column(&[idx.clone(), empty.clone()]), Some(Kind::Indices));
        assert_eq!(Kind::of_column(&[empty.clone(), empty]), None);
        assert_eq!(Kind::of_column(&[idx, Value::Int(1)]), None);
        let grid = Value::Grid(Shared::new(Grid::filled(2, 2, 0)));
        assert_eq!(Kind::of_column(&[grid.clone(), grid]), Some(Kind::Grid));
    }

    #[test]
    fn signatures_bind_and_check() {
        let colorcount = Sig::of_prim(PrimId::of("colorcount").unwrap()).unwrap();
        let counted = colorcount.bound(false);
        assert!(counted.takes(Kind::Object) && counted.takes(Kind::Grid) && !counted.takes(Kind::Int));
        assert!(counted.returns(Kind::Int.bit()));
        assert!(fits(Ty::Patch, Ty::Indices) && !fits(Ty::Grid, Ty::Patch));
    }
}
