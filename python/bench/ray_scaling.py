"""arcbatch.ray.batt on a local Ray of 1 and of 2 CPUs, against arcbatch.batt on 1 and 2
threads, and the cost of one chunk.

    python python/bench/ray_scaling.py [--solvers ../shared/ref/arc-dsl/solvers.py] \\
        [--tasks ../shared/arc/training] [--timeout-ms 2000] [--chunks N]

Each run is ``batt(solvers, tasks, cross=True)``, timed from the call to the report (Ray
already started, its workers warm). Every Ray report's matches are compared with those of
``arcbatch.batt``: a match that differs only because one run hit the time budget per step and
sample and the other did not is counted apart (a step near the budget is decided by the
machine's load). The cost of a chunk: the solvers on the first task alone on a 1-CPU Ray, cut
into 64 chunks against 1 (the best of 3), per extra chunk.
"""

import argparse
import json
import time
from pathlib import Path

import ray

import arcbatch
import arcbatch.ray

TIMEOUT = "time limit exceeded"


def timed(f):
    started = time.perf_counter()
    out = f()
    return out, time.perf_counter() - started


def compare(reference: dict, other: dict) -> str:
    """Equal, or how many matches differ, and of those how many by a time budget only."""
    differ = [(a, b) for a, b in zip(reference["matches"], other["matches"]) if a != b]
    if len(reference["matches"]) != len(other["matches"]):
        return "different lengths"
    if not differ:
        return "equal"
    budget = sum(TIMEOUT in (a["error"], b["error"]) for a, b in differ)
    return f"{len(differ)} differ ({budget} by the time budget only: {sorted({a['solver'] for a, _ in differ})})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solvers", default="../shared/ref/arc-dsl/solvers.py")
    parser.add_argument("--tasks", default="../shared/arc/training")
    parser.add_argument("--timeout-ms", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=None, help="chunks per run (default: arcbatch.ray's)")
    args = parser.parse_args()
    rows = []
    reference = None
    for threads in (1, 2):
        report, seconds = timed(lambda: arcbatch.batt(args.solvers, args.tasks, cross=True, timeout_ms=args.timeout_ms, threads=threads))
        reference = reference or report
        rows.append((f"arcbatch.batt, {threads} thread(s)", seconds, compare(reference, report)))
    for cpus in (1, 2):
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR")
        # Starts the workers, so that their start is not timed.
        arcbatch.ray.batt("def solve_a(I):\n    O = vmirror(I)\n    return O\n", {"train": [{"input": [[1]], "output": [[1]]}], "test": []}, chunks=2 * cpus, progress=False)
        report, seconds = timed(
            lambda: arcbatch.ray.batt(args.solvers, args.tasks, cross=True, timeout_ms=args.timeout_ms, chunks=args.chunks, progress=False)
        )
        rows.append((f"arcbatch.ray.batt, {cpus} CPU(s)", seconds, compare(reference, report)))
        if cpus == 1:
            first = sorted(Path(args.tasks).glob("*.json"))[0]
            one = {first.stem: json.loads(first.read_text())}
            best = {}
            for chunks in (1, 64):
                best[chunks] = min(
                    timed(lambda: arcbatch.ray.batt(args.solvers, one, cross=True, timeout_ms=args.timeout_ms, chunks=chunks, progress=False))[1]
                    for _ in range(3)
                )
            per_chunk = (best[64] - best[1]) / 63
        ray.shutdown()
    print(f"{args.solvers} x {args.tasks}, cross, timeout {args.timeout_ms} ms per step and sample")
    print("| run | seconds | matches against arcbatch.batt, 1 thread |")
    print("|---|---|---|")
    for name, seconds, verdict in rows:
        print(f"| {name} | {seconds:.1f} | {verdict} |")
    print(f"cost of a chunk (1 CPU, the solvers on {first.stem}): {1000 * per_chunk:.1f} ms "
          f"(1 chunk {best[1]:.3f} s, 64 chunks {best[64]:.3f} s)")


if __name__ == "__main__":
    main()
