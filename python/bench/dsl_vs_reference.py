"""Times a solver file on ARC tasks through arcbatch.dsl or through the reference's dsl.py.

    python python/bench/dsl_vs_reference.py SOLVERS TASK_DIR                 # arcbatch.dsl
    python python/bench/dsl_vs_reference.py SOLVERS TASK_DIR --reference DIR  # DIR/dsl.py

DIR holds the reference's dsl.py, constants.py and arc_types.py (from arc-dsl; not part of this
project). Each solve_<id> runs on every train and test input of task <id>; the total is the
time spent inside the solvers, summed over tasks (loading is not timed).
"""

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("solvers", type=Path)
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--reference", type=Path, help="a folder holding the reference's dsl.py")
    args = parser.parse_args()
    source = args.solvers.read_text()
    if args.reference is None:
        source = source.replace("from dsl import *", "from arcbatch.dsl import *")
        source = source.replace("from constants import *", "")
    else:
        sys.path.insert(0, str(args.reference))
    namespace: dict = {}
    exec(compile(source, str(args.solvers), "exec"), namespace)
    total, solved, tasks = 0.0, 0, 0
    for name, solve in namespace.items():
        path = args.tasks / f"{name[len('solve_'):]}.json"
        if not name.startswith("solve_") or not path.exists():
            continue
        task = json.loads(path.read_text())
        examples = [
            (tuple(map(tuple, e["input"])), tuple(map(tuple, e["output"])))
            for e in task["train"] + task["test"]
        ]
        ok = True
        start = time.perf_counter()
        for grid, expected in examples:
            try:
                ok &= solve(grid) == expected
            except Exception:
                ok = False
        total += time.perf_counter() - start
        solved += ok
        tasks += 1
    which = "reference dsl.py" if args.reference else "arcbatch.dsl"
    print(f"{which}: solved {solved} of {tasks} tasks; {total:.3f} s in the solvers")


if __name__ == "__main__":
    main()
