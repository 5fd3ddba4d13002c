//! Sibling mappings over one container, run as one nested evaluation.
//!
//! A function often maps several closures over the same constant container:
//! solve_d22278a0's `fork(intersection, sfilter(locations, f), sfilter(locations, g))` for each
//! object, or `argmin(objects, distance(l, .))` beside `valmin(remove(o, objects), distance(l,
//! .))` for each location. Run one after the other, each lays out the container's members
//! again and computes what the others compute too (the same offsets, the same distances). A
//! [`Siblings`] plan groups a kernel's [`Node::Nested`] nodes over the same constant
//! container, compiles each group's functions into one inner kernel with an output per
//! function (the builder makes a call made twice on the same nodes one node, so what they
//! compute alike is computed once), and orders the kernel's nodes so that each group runs as
//! one unit: after everything its members read, before everything that reads them.
//!
//! # Errors stay exact
//!
//! That order is not the reference's, and a group computes every member's function on every
//! element, where the reference may have stopped at an earlier member's error. Every function
//! value is pure, so where nothing raises the values are the same in any order. The plan is
//! therefore only taken where nothing raises: at the first failure of any node or group, its
//! values are dropped and the kernel runs again in its own order, node after node, which gives
//! each element the reference's first error (see the column engine's doc). A kernel whose plan
//! failed runs in its own order for its next [`RETRY_SIBLINGS`] evaluations. (A key that
//! raises on a member of a summarised set counts as a failure here, though the summary leaves
//! it to the primitive and the kernel's own order may not fail.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU32, Ordering};

use smallvec::SmallVec;

use super::{
    clear_columns, empty_columns, laid_out, reads, skipped, Builder, Column, Kept, Kernel, Nested, Node, NodeId,
    Rebinding, Shape,
};
use crate::dsl::value::Value;

/// Evaluations after a failed one that run in the kernel's own order.
const RETRY_SIBLINGS: u32 = 16;

/// A kernel's groups of sibling mappings and the order of its nodes that runs each as one.
pub(super) struct Siblings {
    order: Vec<Unit>,
    groups: Vec<Group>,
    /// How many more evaluations run in the kernel's own order (see the module doc).
    skip: AtomicU32,
}

impl Clone for Siblings {
    fn clone(&self) -> Siblings {
        Siblings {
            order: self.order.clone(),
            groups: self.groups.clone(),
            skip: AtomicU32::new(self.skip.load(Ordering::Relaxed)),
        }
    }
}

/// One step of a [`Siblings`] order: a node of the kernel, or a group (by index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Node(usize),
    Group(usize),
}

/// Mapping nodes over the same constant container, and their mappings and functions as one
/// nested node whose inner kernel has an output per member.
#[derive(Clone)]
struct Group {
    members: Vec<NodeId>,
    nested: Nested,
    /// Whether the members' mappings list a container's members with the same function, so
    /// that they lay out the same members from any container. Functions at different
    /// addresses may differ on some containers (`valmax` lists `0` for an empty one, a
    /// summary lists nothing but a set's members): such a group runs as one only over a
    /// non-empty tuple or set, which every mapping reads in place, and member by member over
    /// anything else.
    same_listing: bool,
}

impl Siblings {
    /// The plan of the kernel `builder` is finishing, if it has mapping nodes to group.
    pub(super) fn plan(builder: &Builder<'_>) -> Option<Siblings> {
        let mut candidates: Vec<(NodeId, Vec<(NodeId, NodeId)>)> = Vec::new();
        for &(n, function) in &builder.functions {
            let Node::Nested(nested) = &builder.nodes[n as usize] else {
                continue;
            };
            if !matches!(builder.nodes[nested.container as usize], Node::Const(_)) {
                continue;
            }
            match candidates.iter_mut().find(|(c, _)| *c == nested.container) {
                Some((_, members)) => members.push((n, function)),
                None => candidates.push((nested.container, vec![(n, function)])),
            }
        }
        let mut accepted: Vec<Vec<NodeId>> = Vec::new();
        let mut functions: Vec<Vec<NodeId>> = Vec::new();
        // The order of the groups accepted so far; none while there is none.
        let mut ordered = None;
        for (_, members) in candidates.into_iter().filter(|(_, m)| m.len() > 1) {
            accepted.push(members.iter().map(|&(n, _)| n).collect());
            match order(&builder.nodes, &accepted) {
                Some(o) => {
                    ordered = Some(o);
                    functions.push(members.iter().map(|&(_, f)| f).collect());
                }
                // A member reads another, however indirectly, or the groups read each other.
                None => {
                    accepted.pop();
                }
            }
        }
        let order = ordered?;
        let groups = accepted
            .into_iter()
            .zip(functions)
            .map(|(members, functions)| Group::compile(builder, members, &functions))
            .collect();
        Some(Siblings {
            order,
            groups,
            skip: AtomicU32::new(0),
        })
    }

    /// Every node's column over `n` elements, run in this plan's order, or `None` where
    /// anything raised (the kernel then runs in its own order: see the module doc).
    pub(super) fn eval(
        &self,
        kernel: &Kernel,
        columns: &[&[Value]],
        n: usize,
        mut kept: Option<&mut Kept>,
    ) -> Option<Vec<Column>> {
        if skipped(&self.skip) {
            return None;
        }
        let mut values = empty_columns(kernel.nodes.len());
        let whole = self.order.iter().all(|&unit| match unit {
            Unit::Node(k) => kernel
                .run_node(k, &mut values, columns, n, kept.as_deref_mut())
                .is_none(),
            Unit::Group(g) => self.groups[g].run(kernel, &mut values, columns, n, kept.as_deref_mut()),
        });
        if whole {
            return Some(values);
        }
        self.skip.store(RETRY_SIBLINGS, Ordering::Relaxed);
        clear_columns(&mut values);
        None
    }

    /// Whether every group's kernel may be cached (see [`Kernel::cacheable`]).
    pub(super) fn cacheable(&self) -> bool {
        self.groups.iter().all(|g| g.nested.inner.cacheable())
    }

    /// Replaces the constants `rebinding` pairs in every group's kernel.
    pub(super) fn rebind(&mut self, rebinding: &Rebinding) {
        for group in &mut self.groups {
            group.nested.inner.rebind(rebinding);
        }
    }

    /// How many groups the plan has, and how many members in all.
    #[cfg(test)]
    pub(super) fn grouped(&self) -> (usize, usize) {
        (self.groups.len(), self.groups.iter().map(|g| g.members.len()).sum())
    }

    /// Whether a grouped run failed within the last [`RETRY_SIBLINGS`] evaluations.
    #[cfg(test)]
    pub(super) fn failed_lately(&self) -> bool {
        self.skip.load(Ordering::Relaxed) > 0
    }

    /// Each group's inner kernel.
    #[cfg(test)]
    pub(super) fn inner_kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.groups.iter().map(|g| &g.nested.inner)
    }
}

impl Group {
    /// The group of the mapping nodes `members` (of `builder`'s kernel), whose functions are the
    /// nodes `functions`: one inner kernel computing every function on (member, captured
    /// values...), compiled as each member's own was.
    fn compile(builder: &Builder<'_>, members: Vec<NodeId>, functions: &[NodeId]) -> Group {
        let mappings: SmallVec<[_; 1]> = members
            .iter()
            .map(|&n| match &builder.nodes[n as usize] {
                Node::Nested(nested) => nested.mappings[0],
                _ => unreachable!("a group's members are mapping nodes"),
            })
            .collect();
        let container = match &builder.nodes[members[0] as usize] {
            Node::Nested(nested) => nested.container,
            _ => unreachable!("a group's members are mapping nodes"),
        };
        // Compared by address: the same address is the same code, which lists alike.
        let same_listing = mappings
            .iter()
            .all(|m| m.members as usize == mappings[0].members as usize);
        // Whether compiling read a container was recorded when each member was compiled alone.
        let (nested, _) = builder.compile_nested(mappings, container, functions);
        Group {
            members,
            nested,
            same_listing,
        }
    }

    /// Runs the members on the elements `0..live`, as one where they run on the same rows and
    /// lay out the same members, else one by one; stores their columns in `values`. Whether
    /// nothing raised.
    fn run(
        &self,
        kernel: &Kernel,
        values: &mut [Column],
        columns: &[&[Value]],
        live: usize,
        mut kept: Option<&mut Kept>,
    ) -> bool {
        let shape = kernel.shape(self.members[0] as usize, kept.as_deref());
        let same_rows = self
            .members
            .iter()
            .all(|&k| kernel.shape(k as usize, kept.as_deref()) == shape);
        let all_kept = matches!(shape, Shape::Tiled(_))
            && self
                .members
                .iter()
                .all(|&k| kept.as_deref().is_some_and(|s| s.tiled(k as usize).is_some()));
        let same_members = self.same_listing
            || matches!(values[self.nested.container as usize].get(columns, 0),
                Value::Tuple(items) | Value::Set(items) if !items.is_empty());
        let count = match shape {
            Shape::Rows => Some(live),
            Shape::Tiled(m) => Some(m.min(live)),
            // A mapping node is never laid out by block (see `Kernel::shape`).
            Shape::Blocked(_) => None,
        };
        let Some(count) = count.filter(|_| same_rows && same_members && !all_kept) else {
            return self.members.iter().all(|&k| {
                kernel
                    .run_node(k as usize, values, columns, live, kept.as_deref_mut())
                    .is_none()
            });
        };
        let Some(outs) = self.nested.eval_group(values, columns, count) else {
            return false;
        };
        for (&k, out) in self.members.iter().zip(outs) {
            values[k as usize] = laid_out(k as usize, shape, Column::Values(out), true, kept.as_deref_mut());
        }
        true
    }
}

/// An order of the nodes in which each group of `groups` runs as one unit: every node and
/// group after all that it reads, the kernel's own order where nothing moves; `None` where
/// there is none (a member reads another, however indirectly).
fn order(nodes: &[Node], groups: &[Vec<NodeId>]) -> Option<Vec<Unit>> {
    let n = nodes.len();
    let mut unit_of: Vec<Unit> = (0..n).map(Unit::Node).collect();
    for (g, members) in groups.iter().enumerate() {
        for &m in members {
            unit_of[m as usize] = Unit::Group(g);
        }
    }
    let index = |u: Unit| match u {
        Unit::Node(k) => k,
        Unit::Group(g) => n + g,
    };
    let mut waiting = vec![0usize; n + groups.len()];
    let mut readers: Vec<Vec<Unit>> = vec![Vec::new(); n + groups.len()];
    let mut cycle = false;
    for (k, node) in nodes.iter().enumerate() {
        reads(node, |r| {
            let (from, to) = (unit_of[r as usize], unit_of[k]);
            if from == to {
                cycle = true;
            } else {
                readers[index(from)].push(to);
                waiting[index(to)] += 1;
            }
        });
    }
    if cycle {
        return None;
    }
    // The ready units, the one whose first node comes first taken first.
    let first = |u: Unit| match u {
        Unit::Node(k) => k,
        Unit::Group(g) => groups[g][0] as usize,
    };
    let units: Vec<Unit> = (0..n)
        .filter(|&k| matches!(unit_of[k], Unit::Node(_)))
        .map(Unit::Node)
        .chain((0..groups.len()).map(Unit::Group))
        .collect();
    let mut ready: BinaryHeap<Reverse<(usize, usize)>> = units
        .iter()
        .filter(|&&u| waiting[index(u)] == 0)
        .map(|&u| Reverse((first(u), index(u))))
        .collect();
    let unit_at = |i: usize| if i < n { Unit::Node(i) } else { Unit::Group(i - n) };
    let mut ordered = Vec::with_capacity(units.len());
    while let Some(Reverse((_, i))) = ready.pop() {
        let unit = unit_at(i);
        ordered.push(unit);
        for &reader in &readers[i] {
            let r = index(reader);
            waiting[r] -= 1;
            if waiting[r] == 0 {
                ready.push(Reverse((first(reader), r)));
            }
        }
    }
    (ordered.len() == units.len()).then_some(ordered)
}
