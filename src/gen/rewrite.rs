//! Generation-time rewrites of a merged DAG, which keep every result identical:
//!
//! - `objects(g, ...)` / `o_g(g, R)` steps on the same grid node with different flags become
//!   one group step (`@objects(g; modes)`, the backend's `objects_modes`, which packs the grids
//!   once for all modes) and one pick per former step;
//! - the sample-extraction pattern `apply(first, S)`, `apply(last, S)`, `mapply(p_g, ...)`
//!   of those becomes one group step (`@samples(S; ...)`) and picks.
//!
//! A pick takes its element from the group, and where the group failed on a sample it
//! computes the step it replaced, so the rewritten DAG gives exactly what the original gives.

use std::collections::BTreeMap;

use smallvec::SmallVec;

use crate::batt::merge::{Group, Input, Level, Merged, Node, NodeId, NodeOp, Outcome};
use crate::dsl::PrimId;
use crate::program::ConstKey;

/// The `objects` mode of a step, when it is `objects(g, flags)` or `o_g(g, R)` with constant
/// flags.
fn objects_mode(m: &Merged, node: &Node) -> Option<u8> {
    let NodeOp::Prim(id) = node.op else { return None };
    let constant = |k: usize| match &m.nodes[node.args[k] as usize].op {
        NodeOp::Const(c) => Some(c.clone()),
        _ => None,
    };
    match id.spec().name {
        "objects" => {
            let mut mode = 0;
            for k in 1..4 {
                let ConstKey::Bool(b) = constant(k)? else { return None };
                mode = mode * 2 + b as u8;
            }
            Some(mode)
        }
        "o_g" => match constant(1)? {
            ConstKey::Int(r @ 0..=7) => Some(r as u8),
            _ => None,
        },
        _ => None,
    }
}

/// Which part of the sample-extraction pattern a step is: 0 `apply(first, S)`, 1
/// `apply(last, S)`, 2 and 3 `mapply(p_g, ·)` of those.
fn samples_part(m: &Merged, node: &Node, parts: &BTreeMap<NodeId, u8>) -> Option<u8> {
    let NodeOp::Prim(id) = node.op else { return None };
    if !matches!(id.spec().name, "apply" | "mapply") {
        return None;
    }
    let name_of = |k: usize| match m.nodes[node.args[k] as usize].op {
        NodeOp::Const(ConstKey::Prim(f)) => Some(f.spec().name),
        _ => None,
    };
    let arg1 = node.args[1];
    match (id.spec().name, name_of(0)?) {
        ("apply", "first") if m.nodes[arg1 as usize].op == NodeOp::Input(Input::S) => Some(0),
        ("apply", "last") if m.nodes[arg1 as usize].op == NodeOp::Input(Input::S) => Some(1),
        ("mapply", "p_g") => match parts.get(&arg1) {
            Some(&p @ (0 | 1)) => Some(p + 2),
            _ => None,
        },
        _ => None,
    }
}

/// The DAG with both rewrites applied (the same DAG when neither pattern occurs).
pub fn rewrite(m: &Merged) -> Merged {
    // Objects steps by grid node, and the parts of the sample pattern present.
    let mut by_grid: BTreeMap<NodeId, Vec<u8>> = BTreeMap::new();
    let mut modes: Vec<Option<u8>> = vec![None; m.nodes.len()];
    let mut samples: BTreeMap<NodeId, u8> = BTreeMap::new();
    for (k, node) in m.nodes.iter().enumerate() {
        if let Some(mode) = objects_mode(m, node) {
            modes[k] = Some(mode);
            by_grid.entry(node.args[0]).or_default().push(mode);
        } else if let Some(part) = samples_part(m, node, &samples) {
            samples.insert(k as NodeId, part);
        }
    }
    for ms in by_grid.values_mut() {
        ms.sort_unstable();
        ms.dedup();
    }
    by_grid.retain(|_, ms| ms.len() > 1);
    let group_samples = samples.len() > 1;

    let mut out = Merged {
        nodes: Vec::with_capacity(m.nodes.len()),
        solvers: Vec::new(),
        differ_names: m.differ_names.clone(),
        steps_total: m.steps_total,
    };
    let push = |out: &mut Merged, op: NodeOp, args: SmallVec<[NodeId; 4]>| {
        let level = args
            .iter()
            .map(|&a| out.nodes[a as usize].level)
            .max()
            .unwrap_or(Level::Const);
        out.nodes.push(Node { op, args, level });
        out.nodes.len() as NodeId - 1
    };
    let mut new_id: Vec<NodeId> = Vec::with_capacity(m.nodes.len());
    let mut groups: BTreeMap<NodeId, NodeId> = BTreeMap::new();
    let mut samples_group: Option<NodeId> = None;
    for (k, node) in m.nodes.iter().enumerate() {
        let args: SmallVec<[NodeId; 4]> = node.args.iter().map(|&a| new_id[a as usize]).collect();
        let NodeOp::Prim(prim) = node.op else {
            let id = match node.op {
                NodeOp::Input(_) | NodeOp::Const(_) => {
                    out.nodes.push(node.clone());
                    out.nodes.len() as NodeId - 1
                }
                _ => push(&mut out, node.op.clone(), args),
            };
            new_id.push(id);
            continue;
        };
        let grouped = |out: &mut Merged, group: NodeId, part: u8, prim: PrimId, args: SmallVec<[NodeId; 4]>| {
            let mut pick_args: SmallVec<[NodeId; 4]> = SmallVec::from_slice(&[group]);
            pick_args.extend(args);
            push(out, NodeOp::Pick { part, prim }, pick_args)
        };
        let id = match (modes[k], by_grid.get(&node.args[0])) {
            (Some(mode), Some(ms)) => {
                let grid = args[0];
                let group = *groups.entry(node.args[0]).or_insert_with(|| {
                    push(
                        &mut out,
                        NodeOp::Group(Group::Objects(ms.clone())),
                        SmallVec::from_slice(&[grid]),
                    )
                });
                let part = ms.iter().position(|&x| x == mode).unwrap_or_default() as u8;
                grouped(&mut out, group, part, prim, args)
            }
            _ => match samples.get(&(k as NodeId)) {
                Some(&part) if group_samples => {
                    let group = *samples_group.get_or_insert_with(|| {
                        let s = out
                            .nodes
                            .iter()
                            .position(|n| n.op == NodeOp::Input(Input::S))
                            .unwrap_or_default() as NodeId;
                        let g = Group::Samples {
                            in_palettes: samples.values().any(|&p| p == 2),
                            out_palettes: samples.values().any(|&p| p == 3),
                        };
                        push(&mut out, NodeOp::Group(g), SmallVec::from_slice(&[s]))
                    });
                    grouped(&mut out, group, part, prim, args)
                }
                _ => push(&mut out, node.op.clone(), args),
            },
        };
        new_id.push(id);
    }
    let map = |o: &Outcome| Outcome {
        output: new_id[o.output as usize],
        guards: o.guards.iter().map(|&g| new_id[g as usize]).collect(),
    };
    for s in &m.solvers {
        let mut s = s.clone();
        s.outcome = map(&s.outcome);
        s.differs = s.differs.iter().map(map).collect();
        out.solvers.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batt::merge::merge;
    use crate::program::parse_file;

    #[test]
    fn objects_on_one_grid_and_the_sample_pattern_become_groups() {
        let src = "def solve(S, I, C):\n    x1 = o_g(I, R5)\n    x2 = objects(I, T, F, T)\n    x3 = o_g(I, R1)\n    x4 = apply(first, S)\n    x5 = apply(last, S)\n    x6 = mapply(p_g, x5)\n    x7 = o_g(x3, R0)\n    return x6\n";
        let ps = parse_file("t.py", src).unwrap();
        let m = rewrite(&merge(&[&ps[0]], &[], true).unwrap());
        let groups: Vec<&Group> = m
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                NodeOp::Group(g) => Some(g),
                _ => None,
            })
            .collect();
        assert_eq!(
            groups,
            [
                &Group::Objects(vec![1, 5]),
                &Group::Samples {
                    in_palettes: false,
                    out_palettes: true
                }
            ]
        );
        let picks = m.nodes.iter().filter(|n| matches!(n.op, NodeOp::Pick { .. })).count();
        assert_eq!(picks, 6, "x7, alone on its grid, stays a plain step");
        assert_eq!(m.nodes.iter().filter(|n| n.level == Level::Task).count(), 5);
    }
}
