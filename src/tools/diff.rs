//! `arcbatch diff`: the same merged program evaluated on two backends, every step's value
//! compared on every lane.
//!
//! Both evaluations keep every column ([`Plan::evaluate_all`]), so nothing is compared twice
//! and no step is skipped. Values compare with the golden corpus's strict equality
//! ([`strict_eq`]: `True` is not `1`, a tuple is not a frozenset), errors by their exception
//! and message. A mismatch whose arguments agree on that lane is a *root*: the step itself
//! computed something different there; the others inherit a root's difference. Roots are
//! reported first, in step order, which is the order a person debugging a kernel wants. Steps
//! are named and shown as in the batt text format ([`text`]). A value that one run did not
//! finish (its time limit, an interruption: [`DslError::is_transient`]) says nothing about the
//! backends, so it is counted apart and not compared; a search-size diff with a time limit
//! meets a few.

use std::fmt::Write;

use crate::batch::{Backend, LaneResult};
use crate::batt::eval::Column;
use crate::batt::merge::{Merged, NodeId};
use crate::batt::{text, Plan};
use crate::dsl::error::DslError;
use crate::golden::strict_eq;

use super::svg::{self, Picture};

/// One value that differs between the backends.
#[derive(Debug)]
pub struct Divergence {
    pub node: NodeId,
    /// The step as a line of the batt text format, `n57 = fill(n12, THREE, n40)`.
    pub step: String,
    /// The solvers whose result depends on the step (by name).
    pub solvers: Vec<String>,
    pub task: String,
    /// The sample, as `train[2]` or `test[0]`.
    pub sample: String,
    /// Each argument's value on this lane (from the first backend), as text.
    pub args: Vec<String>,
    pub a: LaneResult,
    pub b: LaneResult,
    /// Whether every argument agrees on this lane, so the step itself diverged.
    pub root: bool,
}

/// What a diff found.
#[derive(Debug)]
pub struct DiffReport {
    /// Steps compared (nodes evaluated on both backends).
    pub steps: usize,
    /// (step, lane) values compared.
    pub values: usize,
    /// (step, lane) values not compared because one run did not finish them (time limit).
    pub unfinished: usize,
    /// Values that differ.
    pub mismatches: usize,
    /// Of those, the roots.
    pub roots: usize,
    /// The first divergences: roots first, then the others, each group in step order, at most
    /// the limit given.
    pub divergences: Vec<Divergence>,
}

/// Whether two lane results are the same: strictly equal values, or errors with the same text.
fn same(a: &LaneResult, b: &LaneResult) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => strict_eq(x, y),
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

/// Whether a run stopped before computing this value (time limit, interruption).
fn unfinished(r: &LaneResult) -> bool {
    r.as_ref().err().is_some_and(DslError::is_transient)
}

/// Text of a lane result, cut to `max` characters.
pub fn shown(r: &LaneResult, max: usize) -> String {
    let full = match r {
        Ok(v) => v.to_string(),
        Err(e) => format!("error: {e}"),
    };
    if full.chars().count() <= max {
        return full;
    }
    let cut: String = full.chars().take(max).collect();
    format!("{cut}…")
}

/// The solvers whose output or guards depend on node `id`.
fn users_of(merged: &Merged, id: NodeId) -> Vec<String> {
    let mut out = Vec::new();
    for solver in &merged.solvers {
        let mut seen = vec![false; merged.nodes.len()];
        let mut stack: Vec<NodeId> = std::iter::once(solver.outcome.output)
            .chain(solver.outcome.guards.iter().copied())
            .collect();
        while let Some(n) = stack.pop() {
            if n == id {
                out.push(solver.name.clone());
                break;
            }
            if !std::mem::replace(&mut seen[n as usize], true) {
                stack.extend(merged.nodes[n as usize].args.iter().copied().filter(|&a| a >= id));
            }
        }
    }
    out
}

/// Evaluates `plan` on backends `a` and `b` and compares every step on every lane, keeping the
/// first `limit` divergences. `tick` is called once per node evaluated (both runs).
pub fn diff(plan: &Plan<'_>, a: &dyn Backend, b: &dyn Backend, limit: usize, tick: &(dyn Fn() + Sync)) -> DiffReport {
    let left = plan.evaluate_all(a, tick);
    let right = plan.evaluate_all(b, tick);
    let merged = &plan.merged;
    let names = text::node_names(merged);
    let lanes = plan.all_lanes();
    let mut report = DiffReport {
        steps: 0,
        values: 0,
        unfinished: 0,
        mismatches: 0,
        roots: 0,
        divergences: Vec::new(),
    };
    let mut others = Vec::new();
    for (k, node) in merged.nodes.iter().enumerate() {
        let (Some(ca), Some(cb), true) = (&left.columns[k], &right.columns[k], node.is_step()) else {
            continue;
        };
        report.steps += 1;
        for &t in ca.tasks() {
            let t = t as usize;
            for s in 0..lanes.samples(t) {
                let (va, vb) = (ca.get(t, s), cb.get(t, s));
                if unfinished(va) || unfinished(vb) {
                    report.unfinished += 1;
                    continue;
                }
                report.values += 1;
                if same(va, vb) {
                    continue;
                }
                report.mismatches += 1;
                let arg_columns: Vec<(&Column, &Column)> = node
                    .args
                    .iter()
                    .filter_map(|&x| {
                        Some((
                            left.columns[x as usize].as_deref()?,
                            right.columns[x as usize].as_deref()?,
                        ))
                    })
                    .collect();
                let root = arg_columns.iter().all(|(x, y)| same(x.get(t, s), y.get(t, s)));
                report.roots += usize::from(root);
                let wanted = if root {
                    report.divergences.len() < limit
                } else {
                    others.len() < limit
                };
                if !wanted {
                    continue;
                }
                let task = lanes.tasks[t];
                let divergence = Divergence {
                    node: k as NodeId,
                    step: text::step_line(merged, &names, k).unwrap_or_default(),
                    solvers: users_of(merged, k as NodeId),
                    task: task.id.clone(),
                    sample: if s < task.train.len() {
                        format!("train[{s}]")
                    } else {
                        format!("test[{}]", s - task.train.len())
                    },
                    args: arg_columns.iter().map(|(x, _)| shown(x.get(t, s), 160)).collect(),
                    a: va.clone(),
                    b: vb.clone(),
                    root,
                };
                if root {
                    report.divergences.push(divergence);
                } else {
                    others.push(divergence);
                }
            }
        }
    }
    let room = limit.saturating_sub(report.divergences.len());
    report.divergences.extend(others.into_iter().take(room));
    report
}

impl DiffReport {
    /// The report as text: one block per divergence shown, then the totals.
    pub fn text(&self, a: &str, b: &str) -> String {
        let mut out = String::new();
        for (n, d) in self.divergences.iter().enumerate() {
            let kind = if d.root { "root" } else { "inherited" };
            let _ = writeln!(out, "divergence {} ({kind}): {}", n + 1, d.step);
            let _ = writeln!(out, "  task {} {}; used by {}", d.task, d.sample, d.solvers.join(", "));
            for (k, arg) in d.args.iter().enumerate() {
                let _ = writeln!(out, "  arg {}: {arg}", k + 1);
            }
            let _ = writeln!(out, "  {a}: {}", shown(&d.a, 400));
            let _ = writeln!(out, "  {b}: {}", shown(&d.b, 400));
        }
        let _ = write!(
            out,
            "diff {a} vs {b}: {} steps, {} values compared; {} differ ({} roots)",
            self.steps, self.values, self.mismatches, self.roots
        );
        if self.unfinished > 0 {
            let _ = write!(out, "; {} not compared (a run hit its time limit)", self.unfinished);
        }
        out.push('\n');
        out
    }
}

impl Divergence {
    /// The divergence drawn as an SVG: the step and sample on top, then the value of each
    /// backend side by side (grids and patches as cells, with differing cells outlined in red;
    /// other values as text).
    pub fn svg(&self, a: &str, b: &str) -> String {
        let pictures = match (&self.a, &self.b) {
            (Ok(x), Ok(y)) => (Picture::of(x), Picture::of(y)),
            (Ok(x), Err(_)) => (Picture::of(x), None),
            (Err(_), Ok(y)) => (None, Picture::of(y)),
            _ => (None, None),
        };
        let width_of = |p: &Option<Picture>| p.as_ref().map_or(360, |p| (p.w * svg::CELL).max(360));
        let height_of = |p: &Option<Picture>| p.as_ref().map_or(40, |p| p.h * svg::CELL);
        let (wa, wb) = (width_of(&pictures.0), width_of(&pictures.1));
        let height = 90 + height_of(&pictures.0).max(height_of(&pictures.1)) + 20;
        let mut out = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"monospace\" font-size=\"12\">\n",
            wa + wb + 60
        );
        svg::text(
            &mut out,
            &[self.step.clone(), format!("task {} {}", self.task, self.sample)],
            20,
            20,
            120,
        );
        for (x, name, picture, other, value) in [
            (20, a, &pictures.0, &pictures.1, &self.a),
            (40 + wa, b, &pictures.1, &pictures.0, &self.b),
        ] {
            svg::text(&mut out, &[name.to_string()], x, 66, 40);
            match picture {
                Some(p) => svg::draw(&mut out, p, x, 80, other.as_ref()),
                None => svg::text(&mut out, &[shown(value, 50)], x, 92, 50),
            }
        }
        out.push_str("</svg>\n");
        out
    }
}
