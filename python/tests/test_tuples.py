"""The tuple forms of the structural primitives (``python/src/tuples.rs``): a call of
``hmirror``, ``vconcat``, ``crop``, ... on tuples, from :mod:`arcbatch.dsl` or from a jit-compiled
solver made only of such steps, is done on the Python tuples themselves. Each is checked against
the core's own path (the same primitive inside a closure, whose calls always convert) and
against the reference's dsl.py, on grids, ragged and empty tuples, and on the values the tuple
forms leave to the core."""

import random
import signal
import sys

import pytest

import arcbatch
from arcbatch.dsl import *  # noqa: F403 (the solvers below are written in the DSL)
from arcbatch.dsl import compose, identity, lbind, rbind
from conftest import REPO, same, shared

sys.path.insert(0, str(REPO / "python" / "bench"))
import differential  # noqa: E402 (the harness lives with the benches)

UNARY = ["hmirror", "vmirror", "dmirror", "cmirror", "rot90", "rot180", "rot270", "tophalf", "bottomhalf", "lefthalf", "righthalf"]
BINARY = ["vconcat", "hconcat"]


def grids():
    """Rectangular grids of every small shape (empty ones too), ragged ones, wide colours."""
    rng = random.Random(7)
    out = [(), ((),), ((), ()), ((1, 2, 3), (4, 5), (6, 7, 8, 9)), ((1, 2), (3, 3, 3)), ((1, 1 << 40), (-300, 2))]
    for h in range(1, 6):
        for w in range(1, 6):
            out.append(tuple(tuple(rng.randrange(10) for _ in range(w)) for _ in range(h)))
    return out


def through_core(name):
    """The primitive called inside a closure: the core's own path, never the tuple form."""
    prim = getattr(arcbatch.dsl, name)
    if prim.arity == 2:
        return lambda a, b: lbind(prim, a)(b)
    if prim.arity == 3:
        return lambda a, b, c: rbind(lbind(prim, a), c)(b)
    return compose(identity, prim)


def outcome(f, *args):
    """``("value", v)`` or ``("raised", exception class)``."""
    try:
        return ("value", f(*args))
    except Exception as e:  # the class is compared
        return ("raised", type(e))


def agree(a, b):
    return a[0] == b[0] and (same(a[1], b[1]) if a[0] == "value" else a[1] is b[1])


CALLS = (
    [(name, (g,)) for name in UNARY for g in grids()]
    + [(name, (a, b)) for name in BINARY for a in grids()[:12] for b in grids()[:12]]
    + [
        ("crop", (g, start, dims))
        for g in grids()[3:14]
        for start in [(0, 0), (1, 1), (-2, -1), (2, -3), (5, 5)]
        for dims in [(2, 2), (1, 3), (0, 4), (-1, 2)]
    ]
    # Values the tuple forms leave to the core: rows that are no tuples, patches, odd pairs.
    + [(name, ((1, 2, 3),)) for name in UNARY]
    + [(name, (frozenset({(1, (0, 0)), (2, (1, 3))}),)) for name in UNARY]
    + [("hconcat", ((1, 2), (3, 4))), ("vconcat", ((1,), frozenset({2}))), ("crop", (((1, 2),), (0, 0, 0), (1, 1)))]
    + [("crop", (((1, 2),), (True, 0), (1, 1))), ("astuple", (False, -(1 << 62))), ("tojvec", (True,)), ("toivec", (-4,))]
)


# An int beyond 64 bits is the core's clear error (the reference computes with it): the same here.
BEYOND_64 = [("astuple", (1 << 70, 2)), ("tojvec", (-(1 << 64),))]


@pytest.mark.parametrize("name,args", CALLS + BEYOND_64, ids=[f"{n}-{k}" for k, (n, _) in enumerate(CALLS + BEYOND_64)])
def test_tuple_forms_give_what_the_core_gives(name, args):
    prim = getattr(arcbatch.dsl, name)
    assert agree(outcome(prim, *args), outcome(through_core(name), *args))


@pytest.fixture(scope="module")
def reference():
    previous = signal.signal(signal.SIGALRM, differential._alarm)
    yield differential.reference_namespace(shared("ref/arc-dsl"))
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name,args", CALLS, ids=[f"{n}-{k}" for k, (n, _) in enumerate(CALLS)])
def test_tuple_forms_give_what_the_reference_gives(reference, name, args):
    expected = differential.outcome(lambda _: reference[name](*args), None, 5)
    got = differential.outcome(lambda _: getattr(arcbatch.dsl, name)(*args), None, 5)
    assert differential.agree(expected, got), f"reference {differential.describe(expected)}, arcbatch {differential.describe(got)}"


def test_tuple_forms_take_cells_the_core_does_not_hold():
    """The reference never looks at the cells these move; neither do the tuple forms."""
    grid = (("a", None), (2.5, ()))
    assert hmirror(grid) == ((2.5, ()), ("a", None))
    assert dmirror(grid) == (("a", 2.5), (None, ()))
    assert crop(grid, (1, 0), (1, 1)) == ((2.5,),)
    with pytest.raises(arcbatch.DslTypeError):
        compose(identity, hmirror)(grid)


def solve_halves(I):
    x1 = bottomhalf(I)
    x2 = hmirror(x1)
    x3 = tojvec(ONE)
    x4 = crop(x2, x3, TWO_BY_TWO)
    O = vconcat(x4, x1)
    return O


def solve_mixed(I):
    x1 = hmirror(I)
    O = replace(x1, ONE, TWO)
    return O


def test_a_solver_made_of_tuple_steps_compiles_to_the_same_results():
    compiled = arcbatch.jit(solve_halves, strict=True)
    for g in grids() + [(("a", None), (2.5, ()), (1, 2))]:
        assert agree(outcome(compiled, g), outcome(solve_halves, g)), g
    # The core's errors where a step's arguments are no tuples.
    assert agree(outcome(compiled, frozenset({(1, 1)})), outcome(solve_halves, frozenset({(1, 1)})))
    mixed = arcbatch.jit(solve_mixed, strict=True)
    for g in grids():
        assert agree(outcome(mixed, g), outcome(solve_mixed, g)), g
