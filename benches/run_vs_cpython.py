"""`arcbatch run --threads 1` against the reference's dsl.py in CPython, per task, same pairs.

    python3 benches/run_vs_cpython.py [--cli target/release/arcbatch [--cli OTHER ...]] [--shared ../shared] [--repeat 3] [--rounds 1] [--cold] [--json F]

Every `solve_<id>` of the reference's solvers.py runs on all train and test pairs of training
task `<id>`: in CPython (the reference's own dsl.py, best of --repeat runs in a row per task,
in one process) and through the CLI the same way (`arcbatch run --threads 1 --repeat N
--json`: best of N runs in a row per task, in one process, as the report's per-task micros).
With --cold, each run is a process of its own on both sides and each task runs once per
process (the best of --repeat processes): every task then starts with cold caches, and a
CPython solver runs before its interpreter has specialised its code. The CLI's cold times are
then reported twice: against CPython's cold times (the same measurement on both sides) and
against its warm ones (best of --repeat in a row, as without --cold), which no cold run can
have. With --rounds N, both sides are timed N times, alternated, and each task keeps
its best time on each side: on a machine whose speed moves from minute to minute, a slow
phase then costs both sides alike or neither. With several --cli builds, each round times
CPython and then each build in turn, each build reported against the same CPython times: the
way to compare builds on a machine whose speed moves. The builds' order within a round is
reversed every other round (give an even --rounds): the build timed second in every round of
one set came out 15 % slower even on tasks where the builds did not differ. Prints, per build,
the totals with and without a64e4611 (whose `occurrences` dominates CPython's total), the
ratio of that total in each round on its own (how far it moves with the machine), the
median ratio per task, the median over the tasks where CPython takes >= 0.3 ms, the ratio by
CPython-time bucket, and the slowest ratios.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


# The task whose `occurrences` dominates CPython's total, left out of the headline total.
HEAVY = "a64e4611"


def as_grid(rows):
    return tuple(tuple(r) for r in rows)


def time_reference(ref: Path, tasks: Path, repeat: int) -> dict:
    """Best-of-`repeat` CPython seconds per task id, for every solver whose task exists."""
    if str(ref) not in sys.path:
        sys.path.insert(0, str(ref))
    import solvers  # noqa: E402  (the reference's module, from `ref`)

    times = {}
    for name in sorted(dir(solvers)):
        if not name.startswith("solve_"):
            continue
        task_id = name[len("solve_"):]
        path = tasks / f"{task_id}.json"
        if not path.exists():
            continue
        task = json.loads(path.read_text())
        inputs = [as_grid(e["input"]) for e in task["train"] + task["test"]]
        solve = getattr(solvers, name)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for grid in inputs:
                try:
                    solve(grid)
                except Exception:
                    pass
            best = min(best, time.perf_counter() - start)
        times[task_id] = best
    return times


def time_reference_cold(ref: Path, tasks: Path, repeat: int) -> dict:
    """CPython seconds per task id with every task run once per fresh process (the best of
    `repeat` processes), as `time_cli` times a cold CLI."""
    best: dict = {}
    for _ in range(repeat):
        child = [sys.executable, __file__, "--cpython-pass", str(ref), str(tasks)]
        times = json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout)
        for task_id, seconds in times.items():
            best[task_id] = min(best.get(task_id, float("inf")), seconds)
    return best


def time_cli(cli: Path, solvers: Path, tasks: Path, repeat: int, cold: bool) -> dict:
    """Best-of-`repeat` arcbatch seconds per task id (the report's own per-task time): runs in
    a row in one process, or with `cold` one run per process."""
    best: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        processes, in_a_row = (repeat, 1) if cold else (1, repeat)
        for _ in range(processes):
            command = [cli, "run", "--threads", "1", "--repeat", str(in_a_row), "--solvers", solvers,
                       "--tasks", tasks, "--json", report]
            subprocess.run(command, check=True, capture_output=True)
            for task_id, result in json.loads(report.read_text())["results"].items():
                # Builds before the report had `nanos` give whole microseconds only.
                seconds = result["nanos"] / 1e9 if "nanos" in result else result["micros"] / 1e6
                best[task_id] = min(best.get(task_id, float("inf")), seconds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", type=Path, action="append", help="an arcbatch binary (default target/release/arcbatch); several: builds compared, alternated")
    parser.add_argument("--shared", type=Path, default=Path("../shared"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="time both sides this many times, alternated; keep each task's best on each side")
    parser.add_argument("--cold", action="store_true", help="arcbatch: one process per run (cold caches)")
    parser.add_argument("--json", type=Path, help="write the per-task seconds of both sides here")
    parser.add_argument("--cpython-pass", nargs=2, metavar=("REF", "TASKS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cpython_pass:
        # A child of --cold: each task once in this fresh process, the seconds as JSON.
        ref, tasks = map(Path, args.cpython_pass)
        print(json.dumps(time_reference(ref, tasks, 1)))
        return
    ref = args.shared / "ref" / "arc-dsl"
    tasks = args.shared / "arc" / "training"
    for needed in (ref / "solvers.py", tasks):
        if not needed.exists():
            sys.exit(f"missing {needed}: this benchmark needs the reference and the ARC data in --shared")

    builds = args.cli or [Path("target/release/arcbatch")]
    cpython: dict = {}
    cpython_cold: dict = {}
    ours: dict = {b: {} for b in builds}

    def keep_best(best: dict, times: dict) -> None:
        for task_id, seconds in times.items():
            best[task_id] = min(best.get(task_id, float("inf")), seconds)

    # Each round's times as well, for the spread of the ratio from round to round.
    by_round: dict = {"cpython": [], "cpython_cold": [], **{b: [] for b in builds}}

    def timed(side, best: dict, times: dict) -> None:
        by_round[side].append(times)
        keep_best(best, times)

    for r in range(max(args.rounds, 1)):
        timed("cpython", cpython, time_reference(ref, tasks, args.repeat))
        if args.cold:
            timed("cpython_cold", cpython_cold, time_reference_cold(ref, tasks, args.repeat))
        # Every other round the other way round: a build's place in a round showed once.
        for b in builds if r % 2 == 0 else builds[::-1]:
            timed(b, ours[b], time_cli(b, ref / "solvers.py", tasks, args.repeat, args.cold))
    for b in builds:
        if len(builds) > 1:
            print(f"== {b}")
        if args.cold:
            print("-- against CPython cold (each task once per fresh process, as arcbatch):")
            report(cpython_cold, ours[b], args)
            report_rounds(by_round["cpython_cold"], by_round[b])
            print(f"-- against CPython warm (best of {args.repeat} in a row in one process):")
        report(cpython, ours[b], args)
        if not args.cold:
            report_rounds(by_round["cpython"], by_round[b])
    if args.json:
        # One build: its seconds as "arcbatch"; several: under their paths.
        name = (lambda b: "arcbatch") if len(builds) == 1 else str
        common = sorted(set(cpython).intersection(*(set(ours[b]) for b in builds)))
        cold = (lambda t: {"cpython_cold": cpython_cold[t]}) if args.cold else (lambda t: {})
        rows = {t: {"cpython": cpython[t], **cold(t), **{name(b): ours[b][t] for b in builds}} for t in common}
        args.json.write_text(json.dumps(rows, indent=1))


def totals(cpython: dict, ours: dict, heavy: bool) -> tuple:
    """CPython's and the build's seconds summed over the tasks both timed, with or without HEAVY."""
    common = [t for t in set(cpython) & set(ours) if heavy or t != HEAVY]
    return sum(cpython[t] for t in common), sum(ours[t] for t in common)


def report_rounds(cpython_rounds: list, our_rounds: list) -> None:
    """The total without HEAVY of each round on its own (CPython's of that round against the
    build's): how far the ratio moves with the machine within one run."""
    if len(our_rounds) < 2:
        return
    ratios = []
    for py_round, our_round in zip(cpython_rounds, our_rounds):
        py, rs = totals(py_round, our_round, False)
        ratios.append(py / max(rs, 1e-9))
    print(f"total without {HEAVY}, round by round: {min(ratios):.1f}x to {max(ratios):.1f}x "
          f"({', '.join(f'{r:.1f}' for r in ratios)})")


def report(cpython: dict, ours: dict, args) -> None:
    """One build's totals, medians, ratios by CPython-time bucket and lowest ratios."""
    common = sorted(set(cpython) & set(ours))
    ratio = {t: cpython[t] / max(ours[t], 1e-7) for t in common}

    py_all, rs_all = totals(cpython, ours, True)
    py_rest, rs_rest = totals(cpython, ours, False)
    mode = "arcbatch one process per run, cold" if args.cold else "runs in a row in one process, both sides"
    rounds = f", over {args.rounds} alternated rounds" if args.rounds > 1 else ""
    print(f"tasks timed: {len(common)} (best of {args.repeat} each side{rounds}; {mode})")
    print(f"total:                   CPython {py_all * 1e3:9.1f} ms   arcbatch {rs_all * 1e3:7.1f} ms   {py_all / rs_all:6.1f}x")
    print(f"total without {HEAVY}: CPython {py_rest * 1e3:9.1f} ms   arcbatch {rs_rest * 1e3:7.1f} ms   {py_rest / rs_rest:6.1f}x")
    print(f"median per task: {statistics.median(ratio.values()):.1f}x")
    big = [t for t in common if cpython[t] >= 0.3e-3]
    print(f"median over the {len(big)} tasks where CPython takes >= 0.3 ms: {statistics.median(ratio[t] for t in big):.1f}x")
    for lo, hi in [(0, 0.05e-3), (0.05e-3, 0.3e-3), (0.3e-3, 2e-3), (2e-3, float("inf"))]:
        ids = [t for t in common if lo <= cpython[t] < hi]
        if ids:
            print(f"  CPython {lo * 1e3:.2f}-{hi * 1e3:.2f} ms: {len(ids):3d} tasks, median {statistics.median(ratio[t] for t in ids):6.1f}x")
    slowest = sorted(common, key=lambda t: ratio[t])[:8]
    print("lowest ratios: " + ", ".join(f"{t} {ratio[t]:.1f}x ({cpython[t] * 1e6:.0f}/{ours[t] * 1e6:.0f} µs)" for t in slowest))


if __name__ == "__main__":
    main()
