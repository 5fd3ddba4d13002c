//! The enumerator's only prior: how often the published solvers of the ARC *training* tasks
//! call each primitive (arc-dsl's `solvers.py`, whole-word occurrences of each name). A
//! primitive used often costs less, so programs built of common primitives are reached first.
//! Nothing here is tuned to any evaluation task. `tests/solve.rs` recounts the table from
//! `../shared/ref/arc-dsl/solvers.py` where it is present.

use crate::dsl::PrimId;

/// `(primitive, uses in the published training solvers)`, most used first.
#[rustfmt::skip]
pub const USES: &[(&str, u32)] = &[
    ("compose", 293), ("fork", 279), ("lbind", 263), ("fill", 252), ("objects", 237),
    ("rbind", 231), ("mapply", 208), ("apply", 193), ("ofcolor", 183), ("first", 168),
    ("shift", 153), ("paint", 145), ("chain", 129), ("astuple", 128), ("size", 118),
    ("sfilter", 101), ("last", 82), ("branch", 80), ("merge", 77), ("color", 75), ("identity", 72),
    ("subgrid", 66), ("argmax", 64), ("canvas", 64), ("replace", 64), ("colorfilter", 63),
    ("recolor", 61), ("combine", 60), ("difference", 59), ("shoot", 59), ("subtract", 59),
    ("ulcorner", 58), ("matcher", 55), ("add", 51), ("width", 50), ("multiply", 49),
    ("normalize", 48), ("vconcat", 47), ("vmirror", 47), ("leastcolor", 45), ("center", 44),
    ("equality", 44), ("initset", 44), ("height", 43), ("connect", 42), ("crop", 42),
    ("interval", 40), ("mfilter", 40), ("decrement", 39), ("hmirror", 39), ("hconcat", 38),
    ("toindices", 36), ("dmirror", 35), ("insert", 35), ("intersection", 35), ("remove", 35),
    ("underfill", 35), ("neighbors", 33), ("argmin", 32), ("palette", 32), ("asobject", 31),
    ("extract", 31), ("greater", 31), ("shape", 30), ("sizefilter", 29), ("upscale", 29),
    ("order", 27), ("contained", 26), ("outbox", 26), ("flip", 25), ("rot90", 24), ("tojvec", 24),
    ("toobject", 24), ("cover", 23), ("mostcolor", 23), ("numcolors", 23), ("pair", 23),
    ("uppermost", 23), ("colorcount", 22), ("asindices", 21), ("occurrences", 21), ("power", 21),
    ("invert", 20), ("papply", 20), ("product", 20), ("toivec", 20), ("tophalf", 19),
    ("double", 18), ("increment", 18), ("leftmost", 18), ("vfrontier", 18), ("vline", 18),
    ("backdrop", 17), ("hfrontier", 17), ("bottomhalf", 16), ("fgpartition", 16), ("hline", 16),
    ("lefthalf", 16), ("other", 16), ("urcorner", 16), ("box", 15), ("dneighbors", 15),
    ("lrcorner", 15), ("rot270", 15), ("delta", 14), ("index", 14), ("rot180", 14),
    ("cmirror", 13), ("either", 13), ("hsplit", 13), ("inbox", 12), ("portrait", 12),
    ("prapply", 12), ("righthalf", 12), ("switch", 12), ("gravitate", 11), ("manhattan", 11),
    ("maximum", 11), ("move", 11), ("totuple", 11), ("adjacent", 10), ("bordering", 10),
    ("partition", 10), ("vsplit", 10), ("both", 9), ("corners", 9), ("downscale", 9), ("even", 9),
    ("halve", 9), ("llcorner", 9), ("positive", 9), ("repeat", 9), ("dedupe", 8), ("hupscale", 8),
    ("valmax", 8), ("divide", 7), ("hperiod", 7), ("lowermost", 7), ("mpapply", 7),
    ("position", 7), ("rapply", 7), ("trim", 7), ("vmatching", 7), ("cellwise", 6),
    ("compress", 6), ("crement", 6), ("minimum", 6), ("rightmost", 6), ("vperiod", 6),
    ("ineighbors", 5), ("square", 5), ("vupscale", 5), ("frontiers", 4), ("hmatching", 4),
    ("mostcommon", 4), ("valmin", 4), ("centerofmass", 3), ("leastcommon", 3), ("sign", 3),
    ("underpaint", 3),
];

/// Primitives the enumerator leaves out, and why: each is either covered by others it does
/// enumerate, builds values whose size grows with the product of its arguments' (a search
/// would spend its budget there), or needs what the enumerator does not type (binary function
/// values, tuples of arbitrary values).
pub const LEFT_OUT: &[&str] = &[
    // The same value as an argument; `chain` is `compose` twice.
    "identity",
    "chain",
    // Products and pairwise applications: quadratic in their arguments.
    "product",
    "prapply",
    "papply",
    "mpapply",
    "rapply",
    "power",
    "occurrences",
    // Tuples the enumerator does not type.
    "interval",
    "repeat",
    "totuple",
    "dedupe",
    "pair",
    "order",
    "initset",
    "insert",
    // The search dialect's spellings of `objects` and `palette`.
    "o_g",
    "p_g",
];

/// A primitive's cost in the enumeration: 1 for the most used, up to 4 for the rarely used.
pub fn cost(id: PrimId) -> u8 {
    let name = id.spec().name;
    let uses = USES.iter().find(|(n, _)| *n == name).map_or(0, |(_, k)| *k);
    match uses {
        150.. => 1,
        40..=149 => 2,
        10..=39 => 3,
        _ => 4,
    }
}

/// Whether the enumerator builds calls of this primitive.
pub fn enumerated(id: PrimId) -> bool {
    !LEFT_OUT.contains(&id.spec().name)
}
