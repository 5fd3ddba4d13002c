"""Differential test: the reference's dsl.py (CPython) against arcbatch.dsl, on the same programs
over inputs they were not written for, compared call by call.

    python python/bench/differential.py --reference ../shared/ref/arc-dsl \\
        --tasks ../shared/arc/evaluation [--mutants 64] [--jobs 2] [--limit 0.5] [--json out.json]

Programs: every ``solve_<id>`` of the reference's ``solvers.py`` (``--solvers`` names another
file; ``--skip`` leaves some out, by default a64e4611, whose reference takes seconds a call),
plus, with ``--mutants N``, the mutants ``arcbatch gen --mutate`` makes of N of them (``--cli``
names the ``arcbatch`` binary; ``--mutants-only`` leaves the solvers out). ``--per-program K``
draws K inputs per program instead of all (seeded by ``--seed``). Inputs: every train and test input of every task under
``--tasks`` (the evaluation tasks: none of the solvers was written for them).

One call is one program on one input, run by the reference and by arcbatch, each under a
``SIGALRM`` time limit (``--limit`` seconds), in worker processes with a memory limit. The two
agree when both return equal values (strictly: ``True`` is not ``1``, a tuple not a frozenset;
two function values agree), or both raise the same builtin exception class (arcbatch's
``DslValueError`` is a ``ValueError``), or the reference runs out of memory where arcbatch
raises ``DslLimitError``. A call where the reference runs out of time is not compared; one where
only arcbatch does is counted apart.

CPython iterates a frozenset in hash order, arcbatch in its canonical order (DESIGN.md §3), so
``first``, ``argmax`` ties, ``totuple`` or ``paint`` of overlapping cells can differ on inputs a
solver was not written for (a set of function values, CPython orders by their addresses, so even
the reference's own runs may differ). A call that differs is therefore run once more by the reference's
own code with every set iterated in the canonical order (its dsl.py rewritten, see
``canonical_reference_namespace``; function values ordered by their closures, ``function_key``): agreeing with that is counted as ``order``, differing from
it too is a mismatch, a defect of arcbatch. For each mismatch the first step whose values differ
is found by running both step by step. Exit status 1 on any mismatch.
"""

import argparse
import ast
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import arcbatch
import arcbatch.dsl

# The reference's memory: enough for every legitimate call, little enough that a runaway
# canvas raises MemoryError instead of taking the machine down.
REFERENCE_MEMORY = 4 << 30


@dataclass
class Program:
    """A program of one input ``I``: assignments ``name = callee(args)``, then its result."""

    name: str
    source: str


class Timeout(Exception):
    """The SIGALRM limit of one call."""


# Whether the SIGALRM handler raises: a signal that arrives as the call ends is ignored.
_armed = False


def _alarm(signum, frame):
    if _armed:
        raise Timeout()


# ----- programs ---------------------------------------------------------------------------


def solver_programs(path: Path) -> List[Program]:
    """Every ``solve_<id>(I)`` of a solver file in the reference's syntax."""
    text = path.read_text()
    tree = ast.parse(text)
    return [
        Program(node.name, ast.get_source_segment(text, node))
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("solve_")
    ]


def batt_programs(text: str) -> List[Program]:
    """The programs of a batt text file (``arcbatch gen --no-rewrites``): for each ``out`` line,
    the steps it uses and guards, in step order. Programs that read ``S`` or ``C`` are left out."""
    steps: Dict[str, Tuple[int, str, List[str]]] = {}
    programs = []
    for line in text.splitlines():
        if line.startswith("n"):
            target, call = line.split(" = ", 1)
            names = [n.id for n in ast.walk(ast.parse(call)) if isinstance(n, ast.Name)]
            steps[target] = (len(steps), call, names)
        elif line.startswith("out "):
            head = line[len("out "):].split(" ; ")[0]
            name, rest = head.split(" = ", 1)
            operand, *guards = rest.replace(" guards ", " ").split()
            needed, todo = set(), [operand, *guards]
            while todo:
                n = todo.pop()
                if n in steps and n not in needed:
                    needed.add(n)
                    todo.extend(steps[n][2])
            names = {m for n in needed for m in steps[n][2]} | {operand}
            if names & {"S", "C"}:
                continue
            body = [f"    {n} = {steps[n][1]}" for n in sorted(needed, key=lambda n: steps[n][0])]
            safe = "prog_" + "".join(c if c.isalnum() else "_" for c in name)
            programs.append(Program(name, "\n".join([f"def {safe}(I):", *body, f"    return {operand}"])))
    return programs


def mutant_programs(cli: Path, solvers: Path, count: int, seed: int) -> List[Program]:
    """``count`` solvers of ``solvers`` mutated by ``arcbatch gen`` (two mutants each), the
    mutants only."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mutants.batt"
        subprocess.run(
            [str(cli), "gen", "--library", str(solvers), "--count", str(count), "--seed", str(seed),
             "--mutate", "0.25", "--mutants", "2", "--no-rewrites", "--out", str(out)],
            check=True, capture_output=True,
        )
        return [p for p in batt_programs(out.read_text()) if "~" in p.name]


# ----- the two implementations ----------------------------------------------------------


def reference_namespace(directory: Path) -> Dict[str, Any]:
    """The reference's primitives and constants (its dsl.py and constants.py)."""
    sys.path.insert(0, str(directory))
    try:
        import constants  # noqa: the reference's own module
        import dsl  # noqa: the reference's own module
    finally:
        sys.path.remove(str(directory))
    if not Path(dsl.__file__).resolve().is_relative_to(directory.resolve()):
        raise SystemExit(f"imported {dsl.__file__}, not the reference's dsl.py in {directory}")
    return {**vars(constants), **vars(dsl)}


# Builtins whose result depends on the order their first argument iterates in.
ITERATING = {"all", "any", "enumerate", "frozenset", "iter", "list", "max", "min", "set", "sorted", "sum", "tuple"}
# Builtins whose result depends on the order every argument iterates in (``map``'s first
# argument is a function, wrapping it changes nothing).
ITERATING_ALL = {"map", "zip"}


class _CanonicalIteration(ast.NodeTransformer):
    """Wraps every place the reference's code iterates a value (``for``, comprehensions, the
    builtins of ``ITERATING`` and ``ITERATING_ALL``, ``*x``) in ``_canonical(...)``."""

    @staticmethod
    def wrap(node: ast.expr) -> ast.expr:
        return ast.Call(ast.Name("_canonical", ast.Load()), [node], [])

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self.wrap(node.iter)
        return node

    def visit_comprehension(self, node):
        self.generic_visit(node)
        node.iter = self.wrap(node.iter)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ITERATING and node.args:
            node.args[0] = self.wrap(node.args[0])
        elif isinstance(node.func, ast.Name) and node.func.id in ITERATING_ALL:
            node.args = [a if isinstance(a, ast.Starred) else self.wrap(a) for a in node.args]
        return node

    def visit_Starred(self, node):
        self.generic_visit(node)
        node.value = self.wrap(node.value)
        return node


def canonical_key(v) -> tuple:
    """arcbatch's canonical order (src/dsl/value.rs): None < numbers < tuples < sets <
    functions; tuples lexicographically, sets by their sorted members, functions as
    ``function_key`` says."""
    if v is None:
        return (0,)
    if isinstance(v, int):
        return (1, int(v))
    if isinstance(v, tuple):
        return (2, tuple(canonical_key(m) for m in v))
    if isinstance(v, (set, frozenset)):
        return (3, tuple(sorted(canonical_key(m) for m in v)))
    return (4, function_key(v))


# arcbatch orders function values by their structure (`Func`'s derived order in
# src/dsl/func.rs): primitives first, in registry order, then the closures by builder in this
# order, each by its parts; the reference's closures keep their parts in closure cells.
_PRIMITIVE_RANK = {name: k for k, name in enumerate(arcbatch._arcbatch.primitives())}
_CLOSURE_PARTS = {
    "compose": ("outer", "inner"),
    "chain": ("h", "g", "f"),
    "fork": ("outer", "a", "b"),
    "matcher": ("function", "target"),
    "rbind": ("function", "fixed"),
    "lbind": ("function", "fixed"),
}
_CLOSURE_RANK = {name: k + 1 for k, name in enumerate(_CLOSURE_PARTS)}


def function_key(f) -> tuple:
    """A reference function value's place in arcbatch's order of function values. Closures the
    port builds differently (``power``'s nested ``compose``) rank after all others, unordered."""
    qualname = getattr(f, "__qualname__", "")
    if qualname in _PRIMITIVE_RANK:
        return (0, _PRIMITIVE_RANK[qualname])
    builder = qualname.split(".<locals>.", 1)[0]
    code, cells = getattr(f, "__code__", None), getattr(f, "__closure__", None) or ()
    if builder in _CLOSURE_PARTS and code is not None:
        parts = dict(zip(code.co_freevars, (c.cell_contents for c in cells)))
        if all(p in parts for p in _CLOSURE_PARTS[builder]):
            return (_CLOSURE_RANK[builder], tuple(canonical_key(parts[p]) for p in _CLOSURE_PARTS[builder]))
    return (len(_CLOSURE_RANK) + 1,)


def _canonical(x):
    return sorted(x, key=canonical_key) if isinstance(x, (set, frozenset)) else x


def canonical_reference_namespace(directory: Path) -> Dict[str, Any]:
    """The reference's dsl.py with every set iterated in arcbatch's canonical order instead of
    CPython's hash order (DESIGN.md §3): the same code, the one designed difference removed."""
    path = directory / "dsl.py"
    tree = ast.fix_missing_locations(_CanonicalIteration().visit(ast.parse(path.read_text())))
    namespace = {**reference_namespace(directory), "_canonical": _canonical}
    exec(compile(tree, str(path), "exec"), namespace)
    return namespace


def arcbatch_namespace() -> Dict[str, Any]:
    return {name: getattr(arcbatch.dsl, name) for name in arcbatch.dsl.__all__}


def compile_program(program: Program, namespace: Dict[str, Any]):
    scope = dict(namespace)
    exec(compile(program.source, program.name, "exec"), scope)
    return scope[program.source.split("(", 1)[0][len("def "):]]


# ----- one call -------------------------------------------------------------------------


def outcome(function, grid, limit: float) -> Tuple[str, Any]:
    """``("value", v)``, ``("raised", exception)`` or ``("timeout", None)``."""
    global _armed
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        try:
            return "value", function(grid)
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Timeout:
        return "timeout", None
    except Exception as e:  # noqa: what the program raised is the outcome
        return "raised", e


def same(a, b) -> bool:
    """Python equality that also tells ``True`` from ``1`` and a tuple from a frozenset, at
    every level; two function values are alike (their calls are compared where they are made)."""
    if callable(a) and callable(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, frozenset):
        if a != b:
            # Function values are alike but never equal across the two implementations.
            return len(a) == len(b) and _functions_alike(a) == _functions_alike(b)
        members = {m: m for m in b}
        return all(same(m, members[m]) for m in a)
    return a == b


def _functions_alike(v):
    """``v`` with every function value replaced by one marker (a set of them, as a frozenset)."""
    if callable(v):
        return "<function>"
    if isinstance(v, tuple):
        return tuple(_functions_alike(m) for m in v)
    if isinstance(v, frozenset):
        return frozenset(_functions_alike(m) for m in v)
    return v


def agree(reference: Tuple[str, Any], port: Tuple[str, Any]) -> bool:
    (rk, rv), (pk, pv) = reference, port
    if rk == "value" and pk == "value":
        return same(rv, pv)
    if rk == "raised" and pk == "raised":
        if isinstance(rv, MemoryError):
            return isinstance(pv, (MemoryError, arcbatch.DslLimitError))
        return isinstance(pv, type(rv))
    return False


def describe(o: Tuple[str, Any], cut: int = 160) -> str:
    kind, v = o
    if kind == "raised":
        text = f"{type(v).__name__}: {v}"
    elif kind == "timeout":
        text = "timeout"
    else:
        text = repr(v)
    return text if len(text) <= cut else text[: cut - 3] + "..."


def first_divergence(program: Program, grid, namespaces, limit: float) -> str:
    """The first step of ``program`` on ``grid`` whose outcomes differ between two namespaces
    (a reference first, then arcbatch), run step by step."""
    function = ast.parse(program.source).body[0]
    scopes = [dict(ns, I=grid) for ns in namespaces]
    for statement in function.body:
        if isinstance(statement, ast.Return):
            return "the steps agree; the results differ"
        code = compile(ast.Module([statement], []), program.name, "exec")
        results = []
        for scope in scopes:
            results.append(outcome(lambda _: exec(code, scope) or scope[statement.targets[0].id], None, limit))
        if not agree(*results):
            return f"line {statement.lineno}: {ast.unparse(statement)}: reference {describe(results[0])}, arcbatch {describe(results[1])}"
        if results[0][0] != "value":
            break
    return "no step differs when run one by one"


# ----- the comparison -----------------------------------------------------------------


_STATE: Dict[str, Any] = {}
COUNTS = ("calls", "agree", "order", "reference_timeouts", "arcbatch_timeouts", "mismatches")
# How much longer than the reference the canonical-order reference may run.
CANONICAL_SLOWDOWN = 10
# How many calls of each program that differ only by the iteration order are listed.
ORDER_EXAMPLES = 2


def _init(reference_dir: Path, limit: float):
    resource.setrlimit(resource.RLIMIT_AS, (REFERENCE_MEMORY, resource.RLIM_INFINITY))
    signal.signal(signal.SIGALRM, _alarm)
    _STATE.update(
        namespaces=(reference_namespace(reference_dir), canonical_reference_namespace(reference_dir), arcbatch_namespace()),
        limit=limit,
    )


def compare_program(job: Tuple[Program, List[Tuple[str, Any]]]) -> Dict[str, Any]:
    """One program on every input: counts, and the mismatches found."""
    program, inputs = job
    namespaces, limit = _STATE["namespaces"], _STATE["limit"]
    reference, canonical, port = (compile_program(program, ns) for ns in namespaces)
    counts = dict.fromkeys(COUNTS, 0)
    mismatches, order, slow = [], [], []
    for where, grid in inputs:
        r = outcome(reference, grid, limit)
        counts["calls"] += 1
        if r[0] == "timeout":
            counts["reference_timeouts"] += 1
            continue
        p = outcome(port, grid, limit)
        if agree(r, p):
            counts["agree"] += 1
            continue
        if p[0] == "timeout":
            counts["arcbatch_timeouts"] += 1
            slow.append(where)
            continue
        # Sorting every set iterated costs the rewritten reference time: it gets more.
        c = outcome(canonical, grid, CANONICAL_SLOWDOWN * limit)
        if c[0] == "timeout":
            counts["reference_timeouts"] += 1
            continue
        found = {
            "program": program.name,
            "input": where,
            "reference": describe(r),
            "arcbatch": describe(p),
        }
        if agree(c, p):
            counts["order"] += 1
            if len(order) < ORDER_EXAMPLES:
                order.append({**found, "step": first_divergence(program, grid, namespaces[0::2], limit)})
        else:
            counts["mismatches"] += 1
            mismatches.append({**found, "canonical": describe(c), "step": first_divergence(program, grid, namespaces[1:], limit)})
    return {"program": program.name, "counts": counts, "mismatches": mismatches, "order": order, "arcbatch_timeouts": slow}


def task_inputs(directory: Path) -> List[Tuple[str, Any]]:
    """``(task:kind:k, grid)`` for every train and test input of every task file."""
    inputs = []
    for path in sorted(directory.glob("*.json")):
        task = json.loads(path.read_text())
        for kind in ("train", "test"):
            for k, pair in enumerate(task[kind]):
                inputs.append((f"{path.stem}:{kind}:{k}", tuple(map(tuple, pair["input"]))))
    return inputs


def compare(
    programs: List[Program],
    inputs: List[Tuple[str, Any]],
    reference_dir: Path,
    limit: float = 0.5,
    jobs: int = 1,
    per_program: Optional[int] = None,
    seed: int = 0,
) -> Dict[str, Any]:
    """Every program on every input (or on ``per_program`` inputs drawn with ``seed``)."""
    rng = random.Random(seed)
    work = [(p, inputs if per_program is None else rng.sample(inputs, per_program)) for p in programs]
    start = time.monotonic()
    # Worker processes even for one job: the limits and the handler stay out of the caller.
    with Pool(jobs, initializer=_init, initargs=(reference_dir, limit)) as pool:
        results = pool.map(compare_program, work, chunksize=1)
    return {
        "programs": len(programs),
        "seconds": round(time.monotonic() - start, 1),
        "counts": {k: sum(r["counts"][k] for r in results) for k in COUNTS},
        "mismatches": [m for r in results for m in r["mismatches"]],
        "order": [m for r in results for m in r["order"]],
        "arcbatch_timeouts": {r["program"]: r["arcbatch_timeouts"] for r in results if r["arcbatch_timeouts"]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True, help="the folder of the reference's dsl.py")
    parser.add_argument("--tasks", type=Path, required=True, help="the tasks whose inputs are used")
    parser.add_argument("--solvers", type=Path, help="solver file (default: the reference's solvers.py)")
    parser.add_argument("--skip", nargs="*", default=["solve_a64e4611"], help="programs left out")
    parser.add_argument("--only", nargs="*", help="only these programs")
    parser.add_argument("--mutants", type=int, default=0, help="mutate this many solvers (two mutants each)")
    parser.add_argument("--mutants-only", action="store_true", help="leave the solvers themselves out")
    parser.add_argument("--cli", type=Path, default=Path("target/release/arcbatch"), help="the arcbatch binary")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-program", type=int, help="inputs drawn per program (default: all)")
    parser.add_argument("--limit", type=float, default=0.5, help="seconds per call and side")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--json", type=Path, help="write the full report here")
    args = parser.parse_args()
    solvers = args.solvers or args.reference / "solvers.py"
    programs = [] if args.mutants_only else solver_programs(solvers)
    if args.mutants:
        programs += mutant_programs(args.cli, solvers, args.mutants, args.seed)
    programs = [p for p in programs if p.name not in args.skip and (not args.only or p.name in args.only)]
    report = compare(programs, task_inputs(args.tasks), args.reference, args.limit, args.jobs, args.per_program, args.seed)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    for m in report["order"][:10]:
        print(f"order {m['program']} on {m['input']}: {m['step']}")
    for m in report["mismatches"][:50]:
        print(f"MISMATCH {m['program']} on {m['input']}: reference (canonical order) {m['canonical']}; arcbatch {m['arcbatch']}\n    {m['step']}")
    for name, where in report["arcbatch_timeouts"].items():
        print(f"arcbatch timeout (the reference finished): {name} on {', '.join(where[:5])}")
    print(json.dumps({"programs": report["programs"], "seconds": report["seconds"], **report["counts"]}))
    sys.exit(1 if report["mismatches"] else 0)


if __name__ == "__main__":
    main()
