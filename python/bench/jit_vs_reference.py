"""The published solvers three ways in one run: the reference's dsl.py, arcbatch.dsl, and
arcbatch.dsl compiled by arcbatch.jit_module.

    python python/bench/jit_vs_reference.py [--solvers FILE] [--tasks DIR] [--reference DIR] [--repeat 3]

The defaults are ../shared/ref/arc-dsl/solvers.py, ../shared/arc/training and
../shared/ref/arc-dsl (the reference's dsl.py, constants.py and arc_types.py: not part of this
project). Each solve_<id> runs on every train and test input of task <id>, the three ways in
turn, ``--repeat`` times (5 times as many for tasks the reference does in under a millisecond,
whose times are a few microseconds; once where one pass takes over a second). A task's time is
its best pass, on fresh input tuples each pass so that converting the input counts, with the
garbage collector off as timeit has it (a collection falling in a task of a few microseconds
would decide its ratio). Printed: tasks solved, whether the compiled outputs are those of
arcbatch.dsl, total seconds, and per way the median per-task speed-up over the reference, the
speed-up in total without a64e4611 (whose ``occurrences`` dominates every total), and the tasks
slower than the reference by more than 1.5x; then the cost of one call of a one-step solver,
which is mostly converting the grid in and out.
"""

import argparse
import gc
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
OUTLIER = "a64e4611"


def load(source: str, path: Path) -> Dict[str, Any]:
    """A solver file's namespace, executed under its own file name."""
    namespace: Dict[str, Any] = {}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace


def outcome(solve: Callable[[Any], Any], grid: Any) -> Any:
    """What the solver returns, or the name of the exception it raises."""
    try:
        return solve(grid)
    except Exception as e:  # a solver may raise on a pair it does not solve
        return ("raised", type(e).__name__)


def timed(solve: Callable[[Any], Any], inputs: List[List[List[int]]]) -> Tuple[float, List[Any]]:
    """Seconds for one pass over fresh tuples of the inputs, and the outcomes."""
    grids = [tuple(map(tuple, rows)) for rows in inputs]
    start = time.perf_counter()
    outs = [outcome(solve, g) for g in grids]
    return time.perf_counter() - start, outs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solvers", type=Path, default=SHARED / "ref" / "arc-dsl" / "solvers.py")
    parser.add_argument("--tasks", type=Path, default=SHARED / "arc" / "training")
    parser.add_argument("--reference", type=Path, default=SHARED / "ref" / "arc-dsl")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import arcbatch

    source = args.solvers.read_text()
    sys.path.insert(0, str(args.reference))
    ways = {"reference": load(source, args.solvers)}
    ours = source.replace("from dsl import *", "from arcbatch.dsl import *").replace("from constants import *", "")
    ways["arcbatch.dsl"] = load(ours, args.solvers)
    ways["arcbatch.jit"] = compiled = load(ours, args.solvers)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as fallbacks:
        warnings.simplefilter("always", arcbatch.JitWarning)
        arcbatch.jit_module(compiled)
    compile_seconds = time.perf_counter() - start

    gc.disable()
    seconds: Dict[str, Dict[str, float]] = {way: {} for way in ways}
    solved = {way: 0 for way in ways}
    pairs = identical = 0
    for name in sorted(n for n in ways["reference"] if n.startswith("solve_")):
        task_id = name[len("solve_") :]
        path = args.tasks / f"{task_id}.json"
        if not path.exists():
            continue
        task = json.loads(path.read_text())
        examples = task["train"] + task["test"]
        inputs = [e["input"] for e in examples]
        expected = [tuple(map(tuple, e["output"])) for e in examples]
        outs: Dict[str, List[Any]] = {}
        passes, rep = args.repeat, 0
        while rep < passes:
            for way, namespace in ways.items():
                if rep > 0 and seconds[way][task_id] > 1.0:
                    continue
                took, outs[way] = timed(namespace[name], inputs)
                seconds[way][task_id] = min(took, seconds[way].get(task_id, took))
            if rep == 0 and seconds["reference"][task_id] < 1e-3:
                passes = args.repeat * 5
            rep += 1
        for way in ways:
            solved[way] += outs[way] == expected
        pairs += len(examples)
        identical += sum(
            type(a) is type(b) and a == b for a, b in zip(outs["arcbatch.dsl"], outs["arcbatch.jit"])
        )

    tasks = len(seconds["reference"])
    print(f"{args.solvers} on {args.tasks}: {tasks} tasks, best of {args.repeat} passes ({args.repeat * 5} under 1 ms)")
    print(
        f"arcbatch.jit_module: {sum(isinstance(f, arcbatch.JitFunction) for n, f in compiled.items() if n.startswith('solve_'))} "
        f"solvers compiled in {compile_seconds:.2f} s, {len(fallbacks)} left as Python"
    )
    print(f"compiled outputs identical to arcbatch.dsl's on {identical} of {pairs} pairs")
    reference = seconds["reference"]
    for way in ways:
        mine = seconds[way]
        total = sum(mine.values())
        line = f"{way:13s} solved {solved[way]}/{tasks}  total {total:7.3f} s"
        if way != "reference":
            ratios = {t: reference[t] / mine[t] for t in mine}
            without = [t for t in mine if t != OUTLIER]
            speedup = sum(reference[t] for t in without) / sum(mine[t] for t in without)
            slower = sorted((t for t in mine if ratios[t] < 1 / 1.5), key=lambda t: ratios[t])
            line += (
                f"  median per task {statistics.median(ratios.values()):5.1f}x"
                f"  total without {OUTLIER} {speedup:5.1f}x"
                f"  slower than the reference by >1.5x: {len(slower)}"
            )
            if slower:
                line += " (" + ", ".join(f"{t} {ratios[t]:.2f}x" for t in slower[:8]) + ")"
        print(line)
    print("per call of solve_67a3c6ac (O = vmirror(I)) on a fresh grid, best of 5 x 2,000 calls:")
    for side in (3, 10, 30):
        rows = [[(i * 7 + j * 3) % 10 for j in range(side)] for i in range(side)]
        costs = "  ".join(f"{way} {per_call(ns['solve_67a3c6ac'], rows) * 1e6:5.2f} us" for way, ns in ways.items())
        print(f"  {side}x{side}: {costs}")


def per_call(solve: Callable[[Any], Any], rows: List[List[int]], calls: int = 2000) -> float:
    """Seconds per call of ``solve`` on fresh tuples of ``rows``, best of 5 rounds."""
    best = float("inf")
    for _ in range(5):
        grids = [tuple(map(tuple, rows)) for _ in range(calls)]
        start = time.perf_counter()
        for g in grids:
            solve(g)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


if __name__ == "__main__":
    main()
