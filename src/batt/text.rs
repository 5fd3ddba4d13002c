//! The batt text format: a merged DAG written out one line per step, which `arcbatch batt
//! --solvers FILE` runs as it is (recognised by its first line) and `arcbatch gen` writes.
//!
//! ```text
//! # arcbatch batt 1
//! # any comment lines (gen writes the command that made the file)
//! n1 = objects(I, T, F, T)
//! n2 = compose(size, first)
//! n3 = n2(n1)
//! n4 = fill(I, FOUR, n1)
//! out solve_a = n4 guards n2 n3 ; from solve_a dsl/solvers.py:12 ; original
//! out solve_a~1 = n3 ; from solve_a dsl/solvers.py:12 ; mutation x3: fill -> underfill
//! ```
//!
//! - The first line is exactly `# arcbatch batt 1`; later lines starting with `#` and blank
//!   lines are comments.
//! - A step line `nK = CALLEE(ARGS)` defines node `nK` (numbered from 1, in order; a step
//!   reads only earlier nodes). `CALLEE` is a primitive, or a node holding a function value.
//!   An argument is a node, an input (`S` the task's training pairs, `I` the sample's input,
//!   `C` its expected output), a named constant (`T`, `FIVE`, `DOWN`, `R3`), an integer, or a
//!   primitive as a function value.
//! - A group step `nK = @objects(GRID; M1, M2, ...)` computes `objects` of one grid for
//!   several modes `M = 4*univalued + 2*diagonal + without_bg` in one batched operation; its
//!   value is the tuple of the results. A group step `nK = @samples(S; P)` computes the
//!   training inputs `apply(first, S)`, outputs `apply(last, S)` and, for each `P` among
//!   `in`, `out`, their palettes `mapply(p_g, ...)`, in one step.
//! - A pick step `nK = nG[J] else CALL` is element `J` of group `nG`; where the group failed
//!   on a sample, `CALL` (what the element stands for) is computed on its own, so the result
//!   is always exactly the call's.
//! - An output line `out NAME = OPERAND [guards NODE ...] ; from ORIGIN ; WHAT` names one
//!   program's result: its operand, the steps it computes but does not use (the interpreter
//!   still fails when one raises, and so does batt), where it came from, and `original` or
//!   `mutation DESCRIPTION`. A name `solve_<id>~K` is the K-th mutant of `solve_<id>`; without
//!   `--cross` it runs on task `<id>`.
//! - A differ line `differ NAME = OPERAND [guards NODE ...]` after an output line is one
//!   differ's score of that output (`arcbatch gen --differs`); every output has the same
//!   differs, in the same order. `arcbatch batt --differs` adds more.

use std::collections::HashMap;
use std::fmt::Write;

use smallvec::SmallVec;

use super::merge::{Builder, Group, Input, MergeError, Merged, NodeId, NodeOp, Outcome};
use crate::dsl::constants::constant;
use crate::dsl::PrimId;
use crate::program::{ConstKey, Program};

/// The first line of every batt text file.
pub const HEADER: &str = "# arcbatch batt 1";

/// Where one output of a batt program came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The solver and its place (`solve_a dsl/solvers.py:12`).
    pub from: String,
    /// What was mutated, or `None` for the solver as written.
    pub mutation: Option<String>,
}

/// Why a batt text file cannot be read, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// A problem on line `line` (from 1) of `file`.
    #[error("{file}:{line}: {problem}")]
    Line {
        file: String,
        line: usize,
        problem: TextProblem,
    },
    /// A problem of the file as a whole, found at its end.
    #[error("{file}: {problem}")]
    File { file: String, problem: TextProblem },
    /// A differ given to run on every output takes other parameters than `(S, I, C)`.
    #[error(transparent)]
    Differ(#[from] MergeError),
}

/// What is wrong with a batt text line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextProblem {
    #[error("a batt text file starts with {HEADER:?}")]
    Header,
    /// Not the syntax of the line's kind: what was expected.
    #[error("expected {0}")]
    Expected(&'static str),
    #[error("expected {expected}, found {found:?}")]
    Found { expected: &'static str, found: String },
    #[error("a differ line follows an output line")]
    DifferFirst,
    #[error("steps come before the output lines")]
    StepAfterOutputs,
    #[error("{0:?}: a step is named nK, once")]
    StepName(String),
    #[error("bad element index {0:?}")]
    ElementIndex(String),
    #[error("unknown primitive {0:?}")]
    UnknownPrimitive(String),
    #[error("unknown primitive or node {0:?}")]
    UnknownCallee(String),
    #[error("unknown name {0:?} (not an earlier node, input, constant or primitive)")]
    UnknownName(String),
    /// A pick's fallback call with the wrong number of arguments.
    #[error("{prim} takes {arity} argument(s)")]
    PickArity { prim: String, arity: usize },
    #[error("{prim} takes {arity} argument(s), {given} given")]
    Arity { prim: String, arity: usize, given: usize },
    #[error(transparent)]
    Group(#[from] GroupError),
    /// An output whose differ lines name other differs than the first output's.
    #[error("output {output} has differs [{}], the first output [{}]", names.join(", "), first.join(", "))]
    DifferNames {
        output: String,
        names: Vec<String>,
        first: Vec<String>,
    },
}

/// Whether a file's text is in the batt text format (by its first line).
pub fn is_batt_text(source: &str) -> bool {
    source.lines().next().is_some_and(|l| l.trim_end() == HEADER)
}

/// Writes a merged DAG in the batt text format: `comments` as `#` lines after the header,
/// then every step node, then one output line per solver with its origin.
pub fn write(merged: &Merged, origins: &[Origin], comments: &[String]) -> String {
    let mut out = format!("{HEADER}\n");
    for c in comments {
        let _ = writeln!(out, "# {c}");
    }
    let names = node_names(merged);
    for k in 0..merged.nodes.len() {
        if let Some(line) = step_line(merged, &names, k) {
            let _ = writeln!(out, "{line}");
        }
    }
    for (s, origin) in merged.solvers.iter().zip(origins) {
        let _ = write!(out, "out {} = {}", s.name, names[s.outcome.output as usize]);
        if !s.outcome.guards.is_empty() {
            let guards: Vec<&str> = s.outcome.guards.iter().map(|&g| names[g as usize].as_str()).collect();
            let _ = write!(out, " guards {}", guards.join(" "));
        }
        let what = match &origin.mutation {
            Some(m) => format!("mutation {m}"),
            None => "original".to_string(),
        };
        let _ = writeln!(out, " ; from {} ; {what}", origin.from);
        for (name, d) in merged.differ_names.iter().zip(&s.differs) {
            let _ = write!(out, "differ {name} = {}", names[d.output as usize]);
            if !d.guards.is_empty() {
                let guards: Vec<&str> = d.guards.iter().map(|&g| names[g as usize].as_str()).collect();
                let _ = write!(out, " guards {}", guards.join(" "));
            }
            out.push('\n');
        }
    }
    out
}

/// The name of every node in the text format: its input (`I`), its constant (`FIVE`), or
/// `nK` for the K-th step.
pub fn node_names(merged: &Merged) -> Vec<String> {
    let mut steps = 0;
    merged
        .nodes
        .iter()
        .map(|node| match &node.op {
            NodeOp::Input(i) => format!("{i:?}"),
            NodeOp::Const(c) => c.to_string(),
            _ => {
                steps += 1;
                format!("n{steps}")
            }
        })
        .collect()
}

/// Node `k`'s line in the text format (`n4 = fill(I, FOUR, n1)`), given [`node_names`];
/// `None` for inputs and constants, which have no line.
pub fn step_line(merged: &Merged, names: &[String], k: usize) -> Option<String> {
    let node = &merged.nodes[k];
    let name = &names[k];
    let arg = |a: usize| names[node.args[a] as usize].as_str();
    let args = |from: usize| (from..node.args.len()).map(arg).collect::<Vec<_>>().join(", ");
    Some(match &node.op {
        NodeOp::Prim(id) => format!("{name} = {}({})", id.spec().name, args(0)),
        NodeOp::Call => format!("{name} = {}({})", arg(0), args(1)),
        NodeOp::Group(g) => format!("{name} = @{}({}; {})", g.kind(), arg(0), group_parts(g)),
        NodeOp::Pick { part, prim } => format!("{name} = {}[{part}] else {}({})", arg(0), prim.spec().name, args(1)),
        NodeOp::Input(_) | NodeOp::Const(_) => return None,
    })
}

/// A group step's parts (after the `;`): the objects modes, or which palettes.
fn group_parts(group: &Group) -> String {
    match group {
        Group::Objects(modes) => modes.iter().map(u8::to_string).collect::<Vec<_>>().join(", "),
        Group::Samples {
            in_palettes,
            out_palettes,
        } => [(*in_palettes, "in"), (*out_palettes, "out")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Reads a group step's kind ([`Group::kind`]) and parts ([`group_parts`]) back.
fn parse_group(kind: &str, parts: &str) -> Result<Group, GroupError> {
    let parts: Vec<&str> = parts.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    match kind {
        "objects" => parts
            .iter()
            .map(|p| match p.parse::<u8>() {
                Ok(m) if m < 8 => Ok(m),
                _ => Err(GroupError::ObjectsMode(p.to_string())),
            })
            .collect::<Result<_, _>>()
            .map(Group::Objects),
        "samples" => {
            if let Some(bad) = parts.iter().find(|p| !["in", "out"].contains(p)) {
                return Err(GroupError::SamplesPart(bad.to_string()));
            }
            Ok(Group::Samples {
                in_palettes: parts.contains(&"in"),
                out_palettes: parts.contains(&"out"),
            })
        }
        other => Err(GroupError::Kind(other.to_string())),
    }
}

/// Why a group step's text names no group.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GroupError {
    #[error("bad objects mode {0:?} (0 to 7)")]
    ObjectsMode(String),
    #[error("bad samples part {0:?} (in, out)")]
    SamplesPart(String),
    #[error("unknown group @{0} (@objects, @samples)")]
    Kind(String),
}

/// Reads a batt text file into a merged DAG (identical steps merged again, so a file written
/// by hand may repeat itself), adding an instance of each differ per output.
pub fn parse(file: &str, source: &str, differs: &[Program]) -> Result<(Merged, Vec<Origin>), TextError> {
    let mut reader = Reader {
        b: Builder::new(differs, true)?,
        pending: None,
        differ_names: None,
        names: HashMap::new(),
        origins: Vec::new(),
        steps: 0,
    };
    for i in [Input::S, Input::I, Input::C] {
        let node = reader.b.input(i);
        reader.names.insert(format!("{i:?}"), node);
    }
    let mut lines = source.lines().enumerate();
    let at = |line: usize| {
        move |problem| TextError::Line {
            file: file.to_string(),
            line,
            problem,
        }
    };
    if !lines.next().is_some_and(|(_, l)| l.trim_end() == HEADER) {
        return Err(at(1)(TextProblem::Header));
    }
    for (k, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        reader.line(line).map_err(at(k + 1))?;
    }
    reader.flush().map_err(|problem| TextError::File {
        file: file.to_string(),
        problem,
    })?;
    let mut b = reader.b;
    b.count_steps(reader.steps);
    let mut merged = b.finish();
    let mut names = reader.differ_names.unwrap_or_default();
    names.append(&mut merged.differ_names);
    merged.differ_names = names;
    Ok((merged, reader.origins))
}

/// An output line read, with its differ lines: name, outcome, (differ name, outcome).
type PendingOutput = (String, Outcome, Vec<(String, Outcome)>);

struct Reader<'d> {
    b: Builder<'d>,
    /// The output being read (its differ lines may follow): name, outcome, differs.
    pending: Option<PendingOutput>,
    /// The differ names of the file, from its first output.
    differ_names: Option<Vec<String>>,
    names: HashMap<String, NodeId>,
    origins: Vec<Origin>,
    /// Step lines read.
    steps: usize,
}

impl Reader<'_> {
    fn line(&mut self, line: &str) -> Result<(), TextProblem> {
        if let Some(rest) = line.strip_prefix("out ") {
            self.flush()?;
            return self.output(rest);
        }
        if let Some(rest) = line.strip_prefix("differ ") {
            let (name, outcome) = self.outcome(rest)?;
            return match &mut self.pending {
                Some((_, _, differs)) => {
                    differs.push((name.to_string(), outcome));
                    Ok(())
                }
                None => Err(TextProblem::DifferFirst),
            };
        }
        if self.pending.is_some() {
            return Err(TextProblem::StepAfterOutputs);
        }
        let (target, expr) = line
            .split_once(" = ")
            .ok_or(TextProblem::Expected("`nK = CALL(...)` or `out NAME = ...`"))?;
        let target = target.trim();
        if !target.starts_with('n') || self.names.contains_key(target) {
            return Err(TextProblem::StepName(target.to_string()));
        }
        let node = self.step(expr.trim())?;
        self.steps += 1;
        self.names.insert(target.to_string(), node);
        Ok(())
    }

    /// The node of a step expression.
    fn step(&mut self, expr: &str) -> Result<NodeId, TextProblem> {
        if let Some((pick, call)) = expr.split_once(" else ") {
            let (group, part) = pick
                .strip_suffix(']')
                .and_then(|p| p.split_once('['))
                .ok_or(TextProblem::Expected("`nG[J] else CALL`"))?;
            let part: u8 = part.parse().map_err(|_| TextProblem::ElementIndex(part.to_string()))?;
            let (callee, args) = split_call(call)?;
            let prim = PrimId::of(callee).ok_or_else(|| TextProblem::UnknownPrimitive(callee.to_string()))?;
            let mut nodes: SmallVec<[NodeId; 4]> = SmallVec::new();
            nodes.push(self.operand(group)?);
            for a in args {
                nodes.push(self.operand(a)?);
            }
            if nodes.len() != prim.spec().arity() + 1 {
                return Err(TextProblem::PickArity {
                    prim: callee.to_string(),
                    arity: prim.spec().arity(),
                });
            }
            return Ok(self.b.node(NodeOp::Pick { part, prim }, nodes));
        }
        if let Some(group) = expr.strip_prefix('@') {
            let (kind, args) = group
                .strip_suffix(')')
                .and_then(|g| g.split_once('('))
                .ok_or(TextProblem::Expected("`@KIND(ARG; PARTS)`"))?;
            let (arg, parts) = args
                .split_once(';')
                .ok_or(TextProblem::Expected("`;` between the argument and the parts"))?;
            let group = parse_group(kind, parts.trim())?;
            let arg = self.operand(arg.trim())?;
            return Ok(self.b.node(NodeOp::Group(group), SmallVec::from_slice(&[arg])));
        }
        let (callee, args) = split_call(expr)?;
        let mut nodes: SmallVec<[NodeId; 4]> = SmallVec::new();
        let op = match self.names.get(callee) {
            Some(&f) => {
                nodes.push(f);
                NodeOp::Call
            }
            None => NodeOp::Prim(PrimId::of(callee).ok_or_else(|| TextProblem::UnknownCallee(callee.to_string()))?),
        };
        for a in args {
            nodes.push(self.operand(a)?);
        }
        if let NodeOp::Prim(id) = op {
            if nodes.len() != id.spec().arity() {
                return Err(TextProblem::Arity {
                    prim: callee.to_string(),
                    arity: id.spec().arity(),
                    given: nodes.len(),
                });
            }
        }
        Ok(self.b.node(op, nodes))
    }

    /// A node, an input, a constant, an integer or a primitive.
    fn operand(&mut self, token: &str) -> Result<NodeId, TextProblem> {
        if let Some(&n) = self.names.get(token) {
            return Ok(n);
        }
        let key = if let Some(v) = constant(token) {
            ConstKey::from_value(&v)
        } else if let Ok(n) = token.parse::<i64>() {
            Some(ConstKey::Int(n))
        } else {
            PrimId::of(token).map(ConstKey::Prim)
        };
        let key = key.ok_or_else(|| TextProblem::UnknownName(token.to_string()))?;
        Ok(self.b.node(NodeOp::Const(key), SmallVec::new()))
    }

    /// Adds the output read last, with its differs (the same names as every other output's).
    fn flush(&mut self) -> Result<(), TextProblem> {
        let Some((name, outcome, differs)) = self.pending.take() else {
            return Ok(());
        };
        let names: Vec<String> = differs.iter().map(|(n, _)| n.clone()).collect();
        let expected = self.differ_names.get_or_insert_with(|| names.clone());
        if *expected != names {
            return Err(TextProblem::DifferNames {
                output: name,
                names,
                first: expected.clone(),
            });
        }
        self.b
            .push_solver_with(name, outcome, differs.into_iter().map(|(_, o)| o).collect());
        Ok(())
    }

    /// `NAME = OPERAND [guards N ...]`.
    fn outcome<'l>(&mut self, text: &'l str) -> Result<(&'l str, Outcome), TextProblem> {
        let (name, value) = text
            .split_once(" = ")
            .ok_or(TextProblem::Expected("`NAME = OPERAND`"))?;
        let mut value = value.split_whitespace();
        let output = self.operand(value.next().ok_or(TextProblem::Expected("the output's operand"))?)?;
        let guards = match value.next() {
            None => Vec::new(),
            Some("guards") => value.map(|g| self.operand(g)).collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(TextProblem::Found {
                    expected: "`guards` or `;`",
                    found: other.to_string(),
                })
            }
        };
        Ok((name.trim(), Outcome { output, guards }))
    }

    /// `NAME = OPERAND [guards N ...] ; from ORIGIN ; original|mutation DESCRIPTION`.
    fn output(&mut self, rest: &str) -> Result<(), TextProblem> {
        let mut fields = rest.split(" ; ");
        let (name, outcome) = self.outcome(fields.next().unwrap_or_default())?;
        let from = fields
            .next()
            .and_then(|f| f.strip_prefix("from "))
            .ok_or(TextProblem::Expected("`; from ORIGIN`"))?;
        let mutation = match fields.next() {
            None | Some("original") => None,
            Some(m) => Some(
                m.strip_prefix("mutation ")
                    .ok_or(TextProblem::Expected("`; original` or `; mutation DESCRIPTION`"))?
                    .to_string(),
            ),
        };
        self.pending = Some((name.to_string(), outcome, Vec::new()));
        self.origins.push(Origin {
            from: from.to_string(),
            mutation,
        });
        Ok(())
    }
}

/// `callee(a, b, c)` into the callee and its arguments.
fn split_call(expr: &str) -> Result<(&str, Vec<&str>), TextProblem> {
    let (callee, args) = expr
        .strip_suffix(')')
        .and_then(|e| e.split_once('('))
        .ok_or_else(|| TextProblem::Found {
            expected: "a call `f(...)`",
            found: expr.to_string(),
        })?;
    let args = if args.trim().is_empty() {
        Vec::new()
    } else {
        args.split(',').map(str::trim).collect()
    };
    Ok((callee.trim(), args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::parse_file;

    #[test]
    fn written_text_reads_back_to_the_same_dag() {
        let src = "def solve_a(I):\n    x1 = objects(I, T, F, T)\n    x2 = compose(size, first)\n    x3 = x2(x1)\n    O = fill(I, FOUR, x1)\n    return O\n\
                   def solve_b(S, I, C):\n    x1 = objects(I, T, F, T)\n    return I\n";
        let programs = parse_file("t.py", src).unwrap();
        let refs: Vec<&Program> = programs.iter().collect();
        let merged = super::super::merge::merge(&refs, &[], true).unwrap();
        let origins = vec![
            Origin {
                from: "solve_a t.py:1".into(),
                mutation: None,
            },
            Origin {
                from: "solve_b t.py:7".into(),
                mutation: Some("x1: rot90 -> rot180".into()),
            },
        ];
        let text = write(&merged, &origins, &["made by a test".into()]);
        assert!(is_batt_text(&text));
        assert!(text.contains("n1 = objects(I, T, F, T)\n"), "{text}");
        assert!(
            text.contains("out solve_a = n4 guards n2 n3 ; from solve_a t.py:1 ; original\n"),
            "{text}"
        );
        assert!(text.contains("out solve_b = I guards n1 ; from solve_b t.py:7 ; mutation x1: rot90 -> rot180\n"));
        let (back, read_origins) = parse("t.batt", &text, &[]).unwrap();
        assert_eq!(read_origins, origins);
        assert_eq!(write(&back, &read_origins, &["made by a test".into()]), text);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(
            "t.batt",
            &format!("{HEADER}\nn1 = rot90(I)\nn2 = fill(n1, FOUR)\n"),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("t.batt:3: fill takes 3 argument(s), 2 given"), "{e}");
        let e = parse("t.batt", &format!("{HEADER}\nn1 = rot90(n7)\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("t.batt:2: unknown name \"n7\""), "{e}");
        assert_eq!(
            parse("t.batt", "def solve(I):\n", &[]).unwrap_err(),
            TextError::Line {
                file: "t.batt".into(),
                line: 1,
                problem: TextProblem::Header
            }
        );
    }
}
