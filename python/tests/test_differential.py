"""The differential test on a sample: the reference's dsl.py and arcbatch.dsl on published
solvers and their mutants, over evaluation inputs none of them was written for
(python/bench/differential.py runs the full comparison)."""

import random
import sys

from conftest import REPO, shared
from test_solvers import cli_binary

sys.path.insert(0, str(REPO / "python" / "bench"))
import differential  # noqa: E402 (the harness lives with the benches)

SOLVERS = 24
MUTATED = 6
INPUTS_PER_PROGRAM = 4
SEED = 14


def test_reference_and_arcbatch_agree_on_foreign_inputs():
    reference = shared("ref/arc-dsl")
    inputs = differential.task_inputs(shared("arc/evaluation"))
    solvers = differential.solver_programs(reference / "solvers.py")
    rng = random.Random(SEED)
    programs = rng.sample([p for p in solvers if p.name != "solve_a64e4611"], SOLVERS)
    programs += differential.mutant_programs(cli_binary(), reference / "solvers.py", MUTATED, SEED)
    report = differential.compare(programs, inputs, reference, limit=0.5, jobs=2, per_program=INPUTS_PER_PROGRAM, seed=SEED)
    counts = report["counts"]
    assert counts["calls"] == len(programs) * INPUTS_PER_PROGRAM
    assert counts["agree"] > counts["calls"] // 2, counts
    found = "\n".join(f"{m['program']} on {m['input']}: {m['step']}" for m in report["mismatches"])
    assert not report["mismatches"], f"{len(report['mismatches'])} mismatches:\n{found}"
    assert counts["arcbatch_timeouts"] == 0, report["arcbatch_timeouts"]


def test_the_canonical_reference_is_the_reference_up_to_iteration_order():
    reference = differential.canonical_reference_namespace(shared("ref/arc-dsl"))
    palette = frozenset({3, 8, 0})
    # CPython iterates it in hash order (8 lands in slot 0 of an 8-slot table), arcbatch and the
    # rewritten reference in ascending order.
    assert tuple(palette) == (8, 0, 3)
    assert differential._canonical(palette) == [0, 3, 8]
    assert reference["totuple"](palette) == (0, 3, 8)
    assert reference["first"](frozenset({(1, (2, 0)), (1, (0, 2))})) == (1, (0, 2))
    grid = ((0, 8), (3, 0))
    assert reference["vmirror"](grid) == ((8, 0), (0, 3))
    plain = differential.reference_namespace(shared("ref/arc-dsl"))
    assert differential.same(reference["objects"](grid, True, False, True), plain["objects"](grid, True, False, True))


def test_same_is_strict():
    assert not differential.same((1,), (True,))
    assert not differential.same(frozenset({1}), frozenset({True}))
    assert not differential.same((1, 2), frozenset({1, 2}))
    assert differential.same(frozenset({(1, (0, 0))}), frozenset({(1, (0, 0))}))
    assert differential.same(frozenset({len}), frozenset({abs}))
    assert not differential.same(frozenset({len, 1}), frozenset({abs, 2}))



def test_the_canonical_reference_orders_function_values_as_arcbatch_does():
    """A set of function values (solve_36d67576's compositions of mirrors) is iterated in
    arcbatch's order of function values, read from the reference's closures."""
    import arcbatch.dsl as port

    reference = differential.canonical_reference_namespace(shared("ref/arc-dsl"))

    def functions(ns):
        mirrors = [ns[n] for n in ("vmirror", "cmirror", "hmirror", "dmirror")]
        built = [ns["compose"](f, g) for f in mirrors for g in mirrors]
        built += [ns["rbind"](ns["shift"], (1, 0)), ns["lbind"](ns["add"], 2), ns["rbind"](ns["add"], 1)]
        built += [ns["fork"](ns["combine"], mirrors[0], mirrors[1]), ns["chain"](*mirrors[:3])]
        return ns["totuple"](frozenset(built + mirrors))

    def spelled(f):
        """A reference function as arcbatch's ``__name__`` spells one."""
        builder = f.__qualname__.split(".<locals>.", 1)[0]
        if builder not in differential._CLOSURE_PARTS:
            return f.__qualname__
        parts = dict(zip(f.__code__.co_freevars, (c.cell_contents for c in f.__closure__)))
        shown = [spelled(v) if callable(v) else repr(v) for v in (parts[p] for p in differential._CLOSURE_PARTS[builder])]
        return f"{builder}({', '.join(shown)})"

    ours = [f.__name__ for f in functions(vars(port))]
    assert len(ours) == 16 + 3 + 2 + 4
    assert [spelled(f) for f in functions(reference)] == ours
