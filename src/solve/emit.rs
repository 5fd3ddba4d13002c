//! A node of the enumeration as a solver in the reference's own syntax: `def solve_<id>(I):`,
//! one `xN = primitive(...)` step per call node it depends on, `O = ...`, `return O`. The text
//! runs under `arcbatch run` and under CPython's `dsl.py` (constants by the names of
//! `constants.py`, other integer pairs built by `astuple`).

use std::collections::HashMap;
use std::fmt::Write;

use super::enumerate::{Enumerator, Expr, Finish, Found};
use super::pieces::Ink;
use crate::dsl::Value;
use crate::program::ConstKey;

/// The solver computing a candidate, named `solve_<name>`.
pub fn program_text(e: &Enumerator, found: &Found, name: &str) -> String {
    let mut emitter = Emitter {
        e,
        names: HashMap::new(),
        steps: Vec::new(),
    };
    let mut out = emitter.operand(found.node);
    match &found.finish {
        Finish::Exact => {}
        Finish::Recolour(map) => {
            for (from, to) in map.replacements() {
                let (from, to) = (
                    emitter.constant(&Value::Int(from.into())),
                    emitter.constant(&Value::Int(to.into())),
                );
                out = emitter.step(format!("replace({out}, {from}, {to})"));
            }
        }
        Finish::Pieces(pieces) => {
            for piece in pieces {
                let patch = emitter.operand(piece.patch);
                out = match piece.ink {
                    Ink::Fill { colour } => {
                        let colour = emitter.operand(colour);
                        emitter.step(format!("fill({out}, {colour}, {patch})"))
                    }
                    Ink::Paint => emitter.step(format!("paint({out}, {patch})")),
                };
            }
        }
        Finish::Tiles { across, blocks } => {
            let mut rows = Vec::new();
            for row in blocks.chunks(*across) {
                let mut joined = emitter.operand(row[0]);
                for &b in &row[1..] {
                    let next = emitter.operand(b);
                    joined = emitter.step(format!("hconcat({joined}, {next})"));
                }
                rows.push(joined);
            }
            out = rows[0].clone();
            for row in &rows[1..] {
                out = emitter.step(format!("vconcat({out}, {row})"));
            }
        }
    }
    let mut text = format!("def solve_{name}(I):\n");
    for (target, call) in &emitter.steps {
        let target = if *target == out { "O" } else { target };
        writeln!(text, "    {target} = {call}").expect("writing to a String");
    }
    if out == "I" {
        text.push_str("    O = identity(I)\n");
    }
    text.push_str("    return O\n");
    text
}

struct Emitter<'e> {
    e: &'e Enumerator,
    /// The operand naming each node already written.
    names: HashMap<u32, String>,
    /// `(target, call)` in order.
    steps: Vec<(String, String)>,
}

impl Emitter<'_> {
    fn operand(&mut self, node: u32) -> String {
        if let Some(name) = self.names.get(&node) {
            return name.clone();
        }
        let name = match &self.e.nodes[node as usize].expr {
            Expr::Input => "I".to_string(),
            Expr::Prim(id) => id.spec().name.to_string(),
            Expr::Const(v) => self.constant(v),
            Expr::Call(id, args) => {
                let args: Vec<String> = args.iter().map(|&a| self.operand(a)).collect();
                self.step(format!("{}({})", id.spec().name, args.join(", ")))
            }
        };
        self.names.insert(node, name.clone());
        name
    }

    fn step(&mut self, call: String) -> String {
        let target = format!("x{}", self.steps.len() + 1);
        self.steps.push((target.clone(), call));
        target
    }

    /// A constant by its `constants.py` name (as programs are written back), an unnamed
    /// integer pair as an `astuple` step.
    fn constant(&mut self, v: &Value) -> String {
        let written = ConstKey::from_value(v).map_or_else(|| v.to_string(), |k| k.to_string());
        match v {
            Value::Pair(a, b) if written.starts_with('(') => {
                let (a, b) = (self.constant(&Value::Int(*a)), self.constant(&Value::Int(*b)));
                self.step(format!("astuple({a}, {b})"))
            }
            _ => written,
        }
    }
}
