"""User code with Python callables, timed through the reference's dsl.py and arcbatch.dsl, and
the same code with DSL function values in place of the lambdas (arcbatch's fast way).

    python python/bench/callables_vs_reference.py [--reference ../shared/ref/arc-dsl] [--tasks ../shared/arc/evaluation]

Each variant runs on every train and test input of every task (best of --repeat passes). The
results are checked: arcbatch's two variants equal, and equal to the reference's, or where
they differ (a `mostcolor` tie), to the reference's with sets iterated in arcbatch's canonical
order; the count of those is printed.
"""

import argparse
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential  # noqa: E402 (the harness's reference loading and task inputs)

SHARED = Path(__file__).resolve().parents[3] / "shared"


def with_lambdas(M, I):
    objs = M.objects(I, True, False, True)
    big = M.sfilter(objs, lambda o: M.size(o) > 2)
    painted = M.paint(I, M.merge(M.apply(lambda o: M.recolor(M.increment(M.color(o)), o), big)))
    area = M.valmax(objs, lambda o: M.height(o) * M.width(o)) if objs else 0
    corners = M.apply(lambda o: M.add(M.ulcorner(o), (1, 1)), objs)
    return painted, area, corners


def with_dsl_functions(M, I):
    objs = M.objects(I, True, False, True)
    big = M.sfilter(objs, M.compose(M.rbind(M.greater, 2), M.size))
    painted = M.paint(I, M.merge(M.apply(M.fork(M.recolor, M.compose(M.increment, M.color), M.identity), big)))
    area = M.valmax(objs, M.fork(M.multiply, M.height, M.width)) if objs else 0
    corners = M.apply(M.compose(M.rbind(M.add, (1, 1)), M.ulcorner), objs)
    return painted, area, corners


def timed(program, M, grids, repeat):
    best, results = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        results = [program(M, g) for g in grids]
        best = min(best, time.perf_counter() - start)
    return best, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, default=SHARED / "ref" / "arc-dsl")
    parser.add_argument("--tasks", type=Path, default=SHARED / "arc" / "evaluation")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from arcbatch import dsl

    reference = types.SimpleNamespace(**differential.reference_namespace(args.reference))
    port = types.SimpleNamespace(**{n: getattr(dsl, n) for n in dir(dsl) if not n.startswith("_")})
    grids = [g for _, g in differential.task_inputs(args.tasks)]
    cpython, expected = timed(with_lambdas, reference, grids, args.repeat)
    lambdas, got = timed(with_lambdas, port, grids, args.repeat)
    functions, fast = timed(with_dsl_functions, port, grids, args.repeat)
    assert got == fast, "lambdas and DSL functions disagree in arcbatch"
    canonical = types.SimpleNamespace(**differential.canonical_reference_namespace(args.reference))
    differing = [k for k, (e, g) in enumerate(zip(expected, got)) if e != g]
    order = [k for k in differing if with_lambdas(canonical, grids[k]) == got[k]]
    assert order == differing, f"inputs {sorted(set(differing) - set(order))[:10]} differ from the reference"
    print(f"{len(grids)} inputs; {len(order)} results depend on CPython's set order (as the reference in canonical order)")
    print(f"reference dsl.py, lambdas:      {cpython * 1e3:8.1f} ms")
    print(f"arcbatch.dsl, lambdas:          {lambdas * 1e3:8.1f} ms  ({cpython / lambdas:.1f}x)")
    print(f"arcbatch.dsl, DSL functions:    {functions * 1e3:8.1f} ms  ({cpython / functions:.1f}x)")


if __name__ == "__main__":
    main()
