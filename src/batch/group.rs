//! Groups: several calls on one argument computed as one batched step, which the generator's
//! rewrites (`src/gen/rewrite.rs`) put in a batt program: `objects` of one grid for several
//! flag sets, and the extraction of a task's training inputs, outputs and their palettes
//! from `S`.

use super::op::{Lane, Lanes};
use super::ops::call_prim;
use super::{Arg, Backend, LaneResult, Selection};
use crate::dsl::{DslError, PrimId, Value};

/// What a batt group step computes from its one argument.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// `objects` of a grid for each mode `4*univalued + 2*diagonal + without_bg`, in order.
    Objects(Vec<u8>),
    /// From `S`: `apply(first, S)`, `apply(last, S)`, then `mapply(p_g, ...)` of the inputs
    /// and of the outputs where asked (else `None` in their place): always four elements.
    Samples { in_palettes: bool, out_palettes: bool },
}

impl Group {
    /// The kind's name (`@objects`, `@samples` in the batt text format, [`crate::batt::text`],
    /// which also writes and reads its parts).
    pub fn kind(&self) -> &'static str {
        match self {
            Group::Objects(_) => "objects",
            Group::Samples { .. } => "samples",
        }
    }
}

/// A group of calls on one argument (a batt rewrite, [`Group`]) on `lanes` lanes: per lane,
/// the tuple of the calls' results, or an error where one of them failed (the picks then
/// compute their own call there, so a group's error is never a result).
pub fn call_group<B: Backend + ?Sized>(b: &B, group: &Group, arg: &Arg<'_>, lanes: usize) -> Vec<LaneResult> {
    let columns: Vec<Vec<LaneResult>> = match group {
        Group::Objects(modes) => {
            let mut batch = Lanes::default();
            let taken = Selection::new(lanes, |&k| match arg.get(k) {
                Value::Grid(g) => batch.push(Lane {
                    grid: Some(g),
                    ..Lane::default()
                }),
                _ => false,
            });
            let per_mode = b.objects_modes(&batch, modes);
            per_mode
                .into_iter()
                .map(|column| taken.merge(column, |k| Err(DslError::type_error("a grid", arg.get(k)))))
                .collect()
        }
        Group::Samples {
            in_palettes,
            out_palettes,
        } => {
            let prim = |name: &str| PrimId::of(name).expect("a registered primitive");
            let f = |name: &str| Value::prim(prim(name));
            let (first, last, p_g) = (f("first"), f("last"), f("p_g"));
            let inputs = call_prim(b, prim("apply"), &[Arg::Same(&first), arg.clone()], lanes);
            let outputs = call_prim(b, prim("apply"), &[Arg::Same(&last), arg.clone()], lanes);
            let palettes = |on: bool, of: &[LaneResult]| -> Vec<LaneResult> {
                if !on {
                    return vec![Ok(Value::None); lanes];
                }
                let ok = Selection::new(of.len(), |&k| of[k].is_ok());
                let values = ok.taken().iter().filter_map(|&k| of[k].as_ref().ok()).collect();
                let done = call_prim(b, prim("mapply"), &[Arg::Same(&p_g), Arg::Each(values)], ok.len());
                ok.merge(done, |k| of[k].clone())
            };
            let in_p = palettes(*in_palettes, &inputs);
            let out_p = palettes(*out_palettes, &outputs);
            vec![inputs, outputs, in_p, out_p]
        }
    };
    let mut columns: Vec<_> = columns.into_iter().map(Vec::into_iter).collect();
    (0..lanes)
        .map(|_| {
            let parts: Vec<LaneResult> = columns
                .iter_mut()
                .map(|c| c.next().unwrap_or(Ok(Value::None)))
                .collect();
            parts.into_iter().collect::<Result<Vec<_>, _>>().map(Value::tuple)
        })
        .collect()
}
