//! The primitive registry: the single source of truth for every primitive's name, parameter
//! and result types, and implementation.
//!
//! The parser resolves names to a [`PrimId`] once, at load time; the interpreter, the batt
//! engine, the generator (which mutates programs by type) and the Python module all read the
//! same table. Each primitive family (`prims/*.rs`) contributes a `PRIMS` slice of
//! [`PrimSpec`]s; ids are positions in their concatenation, fixed at start-up.

use std::sync::LazyLock;

use hashbrown::HashMap;

use super::column::Mapping;
use super::error::DslResult;
use super::prims;
use super::value::Value;

/// The reference's type names (`arc_types.py`), as parameter and result types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    Any,
    Boolean,
    Integer,
    IntegerTuple,
    /// An integer or an integer pair.
    Numerical,
    IntegerSet,
    Grid,
    Cell,
    Object,
    Objects,
    Indices,
    IndicesSet,
    /// An object or an index set.
    Patch,
    /// An object or a grid.
    Element,
    /// A grid or a patch.
    Piece,
    Tuple,
    TupleTuple,
    FrozenSet,
    Container,
    ContainerContainer,
    Callable,
}

/// A primitive's implementation: takes exactly `arity` arguments (the caller checks).
pub type PrimFn = fn(&[Value]) -> DslResult<Value>;

/// One primitive.
pub struct PrimSpec {
    pub name: &'static str,
    pub params: &'static [Ty],
    pub ret: Ty,
    pub imp: PrimFn,
    /// One line on what it does, for `--list-primitives`, the `.pyi` stub and the docs.
    pub doc: &'static str,
    /// For the primitives that apply a function to each member of a container (`apply`,
    /// `sfilter`, `argmax`, ...): how, so that the column engine can apply it to the members of
    /// many containers at once.
    pub mapping: Option<&'static Mapping>,
}

impl PrimSpec {
    pub fn arity(&self) -> usize {
        self.params.len()
    }
}

/// Declares a [`PrimSpec`]: `prim!(name, [ParamTy, ...] -> RetTy, "doc")` for a function
/// `name(&[Value]) -> DslResult<Value>` in scope; `prim!(..., mapping = &M)` for a mapping
/// primitive described by `M`.
#[macro_export]
macro_rules! prim {
    ($name:ident, [$($p:ident),*] -> $r:ident, $doc:literal) => {
        $crate::prim!(@spec $name, [$($p),*] -> $r, $doc, None)
    };
    ($name:ident, [$($p:ident),*] -> $r:ident, $doc:literal, mapping = $m:expr) => {
        $crate::prim!(@spec $name, [$($p),*] -> $r, $doc, Some($m))
    };
    (@spec $name:ident, [$($p:ident),*] -> $r:ident, $doc:literal, $mapping:expr) => {
        $crate::dsl::registry::PrimSpec {
            name: stringify!($name),
            params: &[$($crate::dsl::registry::Ty::$p),*],
            ret: $crate::dsl::registry::Ty::$r,
            imp: $name,
            doc: $doc,
            mapping: $mapping,
        }
    };
}

/// The index of a primitive in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrimId(pub u16);

impl PrimId {
    pub fn spec(self) -> &'static PrimSpec {
        registry().specs[self.0 as usize]
    }

    /// The id of the primitive called `name`, if there is one.
    pub fn of(name: &str) -> Option<PrimId> {
        registry().by_name.get(name).copied()
    }

    /// The id of a primitive the code itself names (the column engine's known primitives, the
    /// cheap and fused ones): a name not registered is a bug in that code, and panics.
    pub fn builtin(name: &str) -> PrimId {
        PrimId::of(name).unwrap_or_else(|| panic!("primitive {name} is registered"))
    }
}

pub struct Registry {
    pub specs: Vec<&'static PrimSpec>,
    by_name: HashMap<&'static str, PrimId>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let specs: Vec<&'static PrimSpec> = prims::FAMILIES.iter().flat_map(|family| family.iter()).collect();
    let mut by_name = HashMap::new();
    for (k, spec) in specs.iter().enumerate() {
        let previous = by_name.insert(spec.name, PrimId(k as u16));
        assert!(previous.is_none(), "primitive {} is registered twice", spec.name);
    }
    Registry { specs, by_name }
});

pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    pub fn ids(&self) -> impl Iterator<Item = PrimId> + '_ {
        (0..self.specs.len()).map(|k| PrimId(k as u16))
    }

    /// Up to three registered names closest to `name`, for "did you mean" messages.
    pub fn similar(&self, name: &str) -> Vec<&'static str> {
        let mut scored: Vec<(usize, &'static str)> = self
            .specs
            .iter()
            .map(|s| (edit_distance(name, s.name), s.name))
            .filter(|(d, _)| *d <= 3)
            .collect();
        scored.sort();
        scored.into_iter().take(3).map(|(_, n)| n).collect()
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_and_suggest() {
        let id = PrimId::of("objects").expect("objects is registered");
        assert_eq!(id.spec().arity(), 4);
        assert!(registry().similar("objets").contains(&"objects"));
    }
}
