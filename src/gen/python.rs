//! A generated batt program as a Python module (`arcbatch gen --python FILE`), for people who
//! drive search from Python.
//!
//! The module holds one straight-line function over columns (one value for every sample, or
//! one per sample): each step is one call of the `arcbatch` module's batched operation
//! (`arcbatch.batch.<primitive>(values, *same_args, errors="return")`) where the step's first
//! argument varies and the others do not, and one `arcbatch.dsl` call per sample otherwise or
//! whenever the batched call raises (the CPU fallback). An error stays in its sample, as in
//! batt. `evaluate(tasks)` scores every program on every task, as `arcbatch batt --cross`:
//! the same (solver, task, correct, pairs); differs are not scored.

use std::fmt::Write;

use super::Generated;
use crate::batch::Group;
use crate::batt::merge::NodeOp;
use crate::program::ConstKey;

/// The helpers every generated module starts with.
const PRELUDE: &str = r#"from arcbatch import batch as _batch
from arcbatch import dsl as _dsl


class _Error:
    """An exception raised on one sample, held in its place."""

    def __init__(self, exc):
        self.exc = exc


def _call(f, args):
    if any(isinstance(a, _Error) for a in args):
        return next(a for a in args if isinstance(a, _Error))
    try:
        return f(*args)
    except Exception as exc:  # a DSL error stays in its sample
        return _Error(exc)


def _lane(col, k):
    return col[1] if col[0] == "one" else col[1][k]


def _per_lane(f, args, n):
    return ("each", [_call(f, [_lane(a, k) for a in args]) for k in range(n)])


def _step(name, args, n):
    """Primitive `name` on every sample: batched where only its first argument varies."""
    f = getattr(_dsl, name)
    if all(a[0] == "one" for a in args):
        return ("one", _call(f, [a[1] for a in args]))
    if args[0][0] == "each" and all(a[0] == "one" and not isinstance(a[1], _Error) for a in args[1:]):
        items = args[0][1]
        ok = [k for k in range(n) if not isinstance(items[k], _Error)]
        try:
            done = getattr(_batch, name)([items[k] for k in ok], *[a[1] for a in args[1:]], errors="return")
        except Exception:  # the CPU fallback: one call per sample
            return _per_lane(f, args, n)
        out = list(items)
        for k, v in zip(ok, done):
            out[k] = _Error(v) if isinstance(v, BaseException) else v
        return ("each", out)
    return _per_lane(f, args, n)


def _call_value(function, args, n):
    """A function value called on every sample."""
    return _per_lane(lambda f, *xs: f(*xs), [function] + args, n)


def _group(parts):
    bad = next((p for p in parts if isinstance(p, _Error)), None)
    return bad if bad is not None else tuple(parts)


def _zip_columns(columns, n):
    if all(c[0] == "one" for c in columns):
        return ("one", _group([c[1] for c in columns]))
    return ("each", [_group([_lane(c, k) for c in columns]) for k in range(n)])


def _objects_group(grid, modes, n):
    """objects of one grid for several modes, as the tuple of the results."""
    return _zip_columns([_step("o_g", [grid, ("one", m)], n) for m in modes], n)


def _samples_group(pairs, in_palettes, out_palettes, n):
    """apply(first, S), apply(last, S) and their palettes, as one tuple."""
    inputs = _step("apply", [("one", _dsl.first), pairs], n)
    outputs = _step("apply", [("one", _dsl.last), pairs], n)
    none = ("one", None)
    in_p = _step("mapply", [("one", _dsl.p_g), inputs], n) if in_palettes else none
    out_p = _step("mapply", [("one", _dsl.p_g), outputs], n) if out_palettes else none
    return _zip_columns([inputs, outputs, in_p, out_p], n)


def _pick(group, part, name, args, n):
    """Element `part` of a group, or the call it stands for where the group failed."""
    f = getattr(_dsl, name)

    def one(k):
        g = _lane(group, k)
        if isinstance(g, _Error):
            return _call(f, [_lane(a, k) for a in args])
        lane_args = [_lane(a, k) for a in args]
        bad = next((a for a in lane_args if isinstance(a, _Error)), None)
        return bad if bad is not None else g[part]

    if group[0] == "one" and all(a[0] == "one" for a in args):
        return ("one", one(0))
    return ("each", [one(k) for k in range(n)])


def _same(a, b):
    """Equality that tells bool from int and tuple from frozenset, as arcbatch does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _grid(rows):
    return tuple(tuple(r) for r in rows)


def evaluate(tasks):
    """Every program on every sample of `tasks` (task id -> ARC task dict, train and test
    pairs), scored: a list of {"solver", "task", "correct", "pairs"}, by task then program,
    as `arcbatch batt --cross --json` reports them."""
    ids = sorted(tasks)
    S, I, C, owner = [], [], [], []
    for t in ids:
        task = tasks[t]
        pairs = tuple((_grid(p["input"]), _grid(p["output"])) for p in task["train"])
        for p in task["train"] + task["test"]:
            S.append(pairs)
            I.append(_grid(p["input"]))
            C.append(_grid(p["output"]) if p.get("output") is not None else None)
            owner.append(t)
    outcomes = _run(len(I), ("each", S), ("each", I), ("each", C))
    matches = []
    for t in ids:
        lanes = [k for k in range(len(I)) if owner[k] == t and C[k] is not None]
        for name, _, _ in PROGRAMS:
            output, guards = outcomes[name]
            correct = 0
            for k in lanes:
                if any(isinstance(_lane(g, k), _Error) for g in guards):
                    continue
                if _same(_lane(output, k), C[k]):
                    correct += 1
            matches.append({"solver": name, "task": t, "correct": correct, "pairs": len(lanes)})
    return matches
"#;

/// A constant as a Python expression over `arcbatch.dsl`.
fn constant(c: &ConstKey) -> String {
    let text = c.to_string();
    if text.starts_with(|ch: char| ch.is_ascii_alphabetic()) {
        format!("_dsl.{text}")
    } else {
        text
    }
}

/// The Python module of a generated batt program; `comments` go in its docstring.
pub fn module(g: &Generated, comments: &[String]) -> String {
    let m = &g.merged;
    let mut out = String::from("\"\"\"A batt program of arcbatch gen, as Python; generated, do not edit.\n\n");
    for c in comments {
        let _ = writeln!(out, "{c}");
    }
    out += "\n`evaluate(tasks)` runs every program on every sample with arcbatch's batched operations.\n\"\"\"\n\n";
    out += PRELUDE;
    out += "\n\n# (name, origin, mutation or None) of each program, in order.\nPROGRAMS = [\n";
    for c in &g.candidates {
        let mutation = c
            .origin
            .mutation
            .as_ref()
            .map_or("None".to_string(), |m| format!("{m:?}"));
        let _ = writeln!(out, "    ({:?}, {:?}, {mutation}),", c.program.name, c.origin.from);
    }
    out += "]\n\n\ndef _run(n, S, I, C):\n";
    let name = |k: u32| match m.nodes[k as usize].op {
        NodeOp::Input(i) => format!("{i:?}"),
        _ => format!("v{k}"),
    };
    for (k, node) in m.nodes.iter().enumerate() {
        let args = |from: usize| {
            let a: Vec<String> = node.args[from..].iter().map(|&a| name(a)).collect();
            format!("[{}]", a.join(", "))
        };
        let expr = match &node.op {
            NodeOp::Input(_) => continue,
            NodeOp::Const(c) => format!("(\"one\", {})", constant(c)),
            NodeOp::Prim(id) => format!("_step({:?}, {}, n)", id.spec().name, args(0)),
            NodeOp::Call => format!("_call_value({}, {}, n)", name(node.args[0]), args(1)),
            NodeOp::Group(Group::Objects(modes)) => {
                format!("_objects_group({}, {modes:?}, n)", name(node.args[0]))
            }
            NodeOp::Group(Group::Samples {
                in_palettes,
                out_palettes,
            }) => format!(
                "_samples_group({}, {}, {}, n)",
                name(node.args[0]),
                py_bool(*in_palettes),
                py_bool(*out_palettes)
            ),
            NodeOp::Pick { part, prim } => format!(
                "_pick({}, {part}, {:?}, {}, n)",
                name(node.args[0]),
                prim.spec().name,
                args(1)
            ),
        };
        let _ = writeln!(out, "    v{k} = {expr}");
    }
    out += "    return {\n";
    for (s, c) in m.solvers.iter().zip(&g.candidates) {
        let guards: Vec<String> = s.outcome.guards.iter().map(|&g| name(g)).collect();
        let _ = writeln!(
            out,
            "        {:?}: ({}, [{}]),",
            c.program.name,
            name(s.outcome.output),
            guards.join(", ")
        );
    }
    out += "    }\n";
    out
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}
