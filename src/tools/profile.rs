//! Profiles of programs. The static profile counts, over parsed programs, the steps that call
//! each primitive (the primitive in call position) and, separately, how often each primitive
//! is passed as an argument (a function value). The dynamic profile is what a batt run
//! measured ([`crate::batt::OpTime`]); this module renders both as a table, as JSON, and the
//! dynamic one as a horizontal bar chart in SVG.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::{json, Value as Json};

use super::svg::escape;
use crate::batch::group::Group;
use crate::batt::merge::{Merged, NodeOp};
use crate::batt::{OpTime, SolverTime};
use crate::program::{Callee, ConstKey, Operand, Program};

/// How many steps call each primitive, and how often each is passed as an argument.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StaticProfile {
    pub counts: BTreeMap<&'static str, usize>,
    pub refs: BTreeMap<&'static str, usize>,
}

/// Counts the primitives of the programs, step by step as written (a step two programs share
/// counts once per program).
pub fn static_profile(programs: &[Program]) -> StaticProfile {
    let mut p = StaticProfile::default();
    for step in programs.iter().flat_map(|prog| &prog.steps) {
        if let Callee::Prim(id) = step.callee {
            *p.counts.entry(id.spec().name).or_default() += 1;
        }
        for arg in &step.args {
            if let Operand::Const(ConstKey::Prim(id)) = arg {
                *p.refs.entry(id.spec().name).or_default() += 1;
            }
        }
    }
    p
}

/// Counts the primitives of a merged program, as a batt text file holds it: each step once,
/// a pick step as the call it stands for, a group step as `@objects` / `@samples`.
pub fn merged_profile(merged: &Merged) -> StaticProfile {
    let mut p = StaticProfile::default();
    for node in &merged.nodes {
        let called = match &node.op {
            NodeOp::Prim(id) | NodeOp::Pick { prim: id, .. } => Some(id.spec().name),
            NodeOp::Group(Group::Objects(_)) => Some("@objects"),
            NodeOp::Group(Group::Samples { .. }) => Some("@samples"),
            NodeOp::Input(_) | NodeOp::Const(_) | NodeOp::Call => None,
        };
        if let Some(name) = called {
            *p.counts.entry(name).or_default() += 1;
        }
        for &a in &node.args {
            if let NodeOp::Const(ConstKey::Prim(id)) = merged.nodes[a as usize].op {
                *p.refs.entry(id.spec().name).or_default() += 1;
            }
        }
    }
    p
}

/// Rows sorted by count, largest first, ties by name.
fn sorted(map: &BTreeMap<&'static str, usize>) -> Vec<(&'static str, usize)> {
    let mut rows: Vec<(&'static str, usize)> = map.iter().map(|(k, v)| (*k, *v)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    rows
}

impl StaticProfile {
    pub fn to_json(&self) -> Json {
        json!({"counts": self.counts, "refs": self.refs})
    }

    /// The table: primitive, steps calling it, times passed as an argument.
    pub fn table(&self) -> String {
        let mut out = format!("{:<16} {:>7} {:>7}\n", "primitive", "calls", "refs");
        let mut names: Vec<&'static str> = self.counts.keys().chain(self.refs.keys()).copied().collect();
        names.sort_by_key(|n| {
            (
                std::cmp::Reverse(self.counts.get(n).copied().unwrap_or(0)),
                std::cmp::Reverse(self.refs.get(n).copied()),
                *n,
            )
        });
        names.dedup();
        for n in names {
            let (c, r) = (
                self.counts.get(n).copied().unwrap_or(0),
                self.refs.get(n).copied().unwrap_or(0),
            );
            writeln!(out, "{n:<16} {c:>7} {r:>7}").expect("write to a String");
        }
        let total: usize = self.counts.values().sum();
        let top: Vec<String> = sorted(&self.counts)
            .iter()
            .take(5)
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        writeln!(
            out,
            "{total} steps call {} primitives; most called: {}",
            self.counts.len(),
            top.join(", ")
        )
        .expect("write to a String");
        out
    }
}

/// The dynamic profile as a table: calls, lanes, total and mean time, share, backend.
pub fn dynamic_table(rows: &[OpTime], backend: &str) -> String {
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    let mut out = format!(
        "{:<16} {:>7} {:>9} {:>11} {:>11} {:>7}  {}\n",
        "primitive", "calls", "lanes", "total ms", "mean µs", "share", "ran on"
    );
    for r in rows {
        writeln!(
            out,
            "{:<16} {:>7} {:>9} {:>11.3} {:>11.2} {:>6.1}%  {}",
            r.name,
            r.calls,
            r.lanes,
            r.seconds * 1e3,
            r.seconds * 1e6 / r.calls.max(1) as f64,
            100.0 * r.seconds / total.max(f64::MIN_POSITIVE),
            ran_on(r, backend)
        )
        .expect("write to a String");
    }
    out
}

fn ran_on(r: &OpTime, backend: &str) -> String {
    format!("{backend} ({})", if r.batched { "batched" } else { "per-lane loop" })
}

/// The dynamic profile as JSON.
pub fn dynamic_json(rows: &[OpTime], backend: &str) -> Json {
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    Json::Array(
        rows.iter()
            .map(|r| {
                json!({
                    "primitive": r.name,
                    "calls": r.calls,
                    "lanes": r.lanes,
                    "seconds": r.seconds,
                    "mean_seconds": r.seconds / r.calls.max(1) as f64,
                    "share": r.seconds / total.max(f64::MIN_POSITIVE),
                    "backend": ran_on(r, backend),
                })
            })
            .collect(),
    )
}

/// The solvers that cost a run most, at most `top` of them, as a table: time, share of the
/// run's steps, steps read and steps read by no other solver (see [`SolverTime`]).
pub fn solver_table(solvers: &[SolverTime], top: usize) -> String {
    let total: f64 = solvers.iter().map(|s| s.seconds).sum();
    let mut out = format!(
        "{:<24} {:>11} {:>7} {:>7} {:>7}\n",
        "solver", "total ms", "share", "steps", "own"
    );
    for s in solvers.iter().take(top) {
        writeln!(
            out,
            "{:<24} {:>11.3} {:>6.1}% {:>7} {:>7}",
            s.name,
            s.seconds * 1e3,
            100.0 * s.seconds / total.max(f64::MIN_POSITIVE),
            s.steps,
            s.own_steps
        )
        .expect("write to a String");
    }
    if solvers.len() > top {
        writeln!(out, "... and {} more solvers", solvers.len() - top).expect("write to a String");
    }
    out
}

/// Every solver's time as JSON, most expensive first.
pub fn solver_json(solvers: &[SolverTime]) -> Json {
    let total: f64 = solvers.iter().map(|s| s.seconds).sum();
    solvers
        .iter()
        .map(|s| {
            json!({
                "solver": s.name,
                "seconds": s.seconds,
                "share": s.seconds / total.max(f64::MIN_POSITIVE),
                "steps": s.steps,
                "own_steps": s.own_steps,
            })
        })
        .collect()
}

/// A duration in the unit that reads best: µs below a millisecond, else ms.
fn duration(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}

/// The dynamic profile as a horizontal bar chart: one bar per primitive, longest first, with
/// its total time and share.
pub fn dynamic_svg(rows: &[OpTime], title: &str) -> String {
    const ROW: usize = 22;
    const LABEL: usize = 150;
    const BAR: f64 = 520.0;
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    let longest = rows
        .iter()
        .map(|r| r.seconds)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let height = 50 + ROW * rows.len();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"13\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n\
         <rect x=\"{}\" y=\"12\" width=\"12\" height=\"12\" fill=\"#3b7dd8\"/><text x=\"{}\" y=\"23\">batched</text>\
         <rect x=\"{}\" y=\"12\" width=\"12\" height=\"12\" fill=\"#e08a2e\"/><text x=\"{}\" y=\"23\">per-lane loop</text>\n",
        LABEL + BAR as usize + 240,
        escape(title),
        LABEL + BAR as usize - 150,
        LABEL + BAR as usize - 134,
        LABEL + BAR as usize - 60,
        LABEL + BAR as usize - 44,
    );
    for (k, r) in rows.iter().enumerate() {
        let y = 40 + ROW * k;
        let w = (BAR * r.seconds / longest).max(1.0);
        let colour = if r.batched { "#3b7dd8" } else { "#e08a2e" };
        writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{LABEL}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{}\">{} ({:.1}%, {} calls)</text>",
            LABEL - 6,
            y + 15,
            escape(&r.name),
            ROW - 6,
            LABEL as f64 + w + 6.0,
            y + 15,
            duration(r.seconds),
            100.0 * r.seconds / total.max(f64::MIN_POSITIVE),
            r.calls
        )
        .expect("write to a String");
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::parse_file;

    #[test]
    fn counts_calls_and_references_separately() {
        let src = "def solve_a(I):\n    x1 = objects(I, T, F, T)\n    x2 = apply(size, x1)\n    x3 = compose(size, first)\n    O = x3(x1)\n    return O\n";
        let p = static_profile(&parse_file("t.py", src).unwrap());
        assert_eq!(p.counts.get("objects"), Some(&1));
        assert_eq!(p.counts.get("apply"), Some(&1));
        assert_eq!(p.counts.get("size"), None);
        assert_eq!(p.refs.get("size"), Some(&2));
        assert_eq!(p.refs.get("first"), Some(&1));
        assert_eq!(
            p.counts.values().sum::<usize>(),
            3,
            "the call of x3 calls no primitive by name"
        );
        assert!(p.table().contains("3 steps call 3 primitives"));
    }

    #[test]
    fn the_chart_has_one_bar_per_primitive() {
        let rows = vec![
            OpTime {
                name: "objects".into(),
                calls: 2,
                lanes: 20,
                seconds: 0.002,
                batched: true,
            },
            OpTime {
                name: "a<b".into(),
                calls: 1,
                lanes: 10,
                seconds: 0.001,
                batched: false,
            },
        ];
        let svg = dynamic_svg(&rows, "t");
        assert_eq!(svg.matches("<rect x=\"150\"").count(), 2, "one bar per primitive");
        assert!(svg.contains("a&lt;b") && svg.contains("66.7%") && svg.contains("2.00 ms") && svg.contains("1.00 ms"));
        assert!(svg.contains("per-lane loop"), "the legend names both colours");
        assert!(dynamic_table(&rows, "cpu").contains("cpu (per-lane loop)"));
    }
}
