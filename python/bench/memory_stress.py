"""Memory stress: mutants of the published solvers through ``arcbatch.dsl`` in one process whose
address space is limited, each call under a ``SIGALRM`` time limit.

    python python/bench/memory_stress.py --reference ../shared/ref/arc-dsl \\
        --tasks ../shared/arc/evaluation [--address-space-mb 1024] [--mutate 0.5] [--count 400] \\
        [--inputs 15] [--limit 0.5] [--seed 0] [--cli target/release/arcbatch]

Programs: the mutants ``arcbatch gen --mutate`` makes of ``--count`` solvers of the reference's
``solvers.py`` (three mutants each). Inputs: ``--inputs`` train and test inputs drawn from the
tasks under ``--tasks`` (seeded). Every program runs on every input, in this process, under
``RLIMIT_AS`` of ``--address-space-mb`` (0: none) and an alarm of ``--limit`` seconds.

A call may return, raise what the program raises (a ``MemoryError`` among them: the module's
``DslLimitError`` when a value would not fit) or be stopped by its alarm; what must not happen
is a call that returns more than a second after its alarm, or the process dying (an abort on a
failed allocation, a hang). Prints one JSON line (calls, outcomes, the worst lateness past an
alarm, the Rust side's memory after the last call) and exits 1 if a call was more than a
second late.
"""

import argparse
import json
import random
import resource
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential import arcbatch_namespace, batt_programs, compile_program, task_inputs  # noqa: E402

LATE = 1.0


class Alarm(Exception):
    """The time limit of one call."""


def _alarm(signum, frame):
    raise Alarm()


def mutants(cli: Path, solvers: Path, count: int, mutate: float, seed: int):
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mutants.batt"
        subprocess.run(
            [str(cli), "gen", "--library", str(solvers), "--count", str(count), "--seed", str(seed),
             "--mutate", str(mutate), "--mutants", "3", "--no-rewrites", "--out", str(out)],
            check=True, capture_output=True,
        )
        return [p for p in batt_programs(out.read_text()) if "~" in p.name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="the folder of solvers.py")
    parser.add_argument("--tasks", type=Path, required=True)
    parser.add_argument("--cli", type=Path, default=Path("target/release/arcbatch"))
    parser.add_argument("--address-space-mb", type=int, default=1024)
    parser.add_argument("--mutate", type=float, default=0.5)
    parser.add_argument("--count", type=int, default=400, help="solvers mutated (three mutants each)")
    parser.add_argument("--inputs", type=int, default=15)
    parser.add_argument("--limit", type=float, default=0.5, help="the alarm of each call, in seconds")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    programs = mutants(args.cli, args.reference / "solvers.py", args.count, args.mutate, args.seed)
    inputs = task_inputs(args.tasks)
    inputs = random.Random(args.seed).sample(inputs, min(args.inputs, len(inputs)))
    if args.address_space_mb:
        limit = args.address_space_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import arcbatch._arcbatch

    namespace = arcbatch_namespace()
    functions = [compile_program(p, namespace) for p in programs]
    signal.signal(signal.SIGALRM, _alarm)
    outcomes, worst, calls = {}, 0.0, 0
    started = time.monotonic()
    for function in functions:
        for _, grid in inputs:
            start = time.monotonic()
            try:
                signal.setitimer(signal.ITIMER_REAL, args.limit)
                try:
                    function(grid)
                    outcome = "value"
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except Alarm:
                outcome = "alarm"
            except MemoryError:
                outcome = "MemoryError"
            except Exception as e:  # noqa: what the program raises is its outcome
                outcome = type(e).__name__
            worst = max(worst, time.monotonic() - start - args.limit)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            calls += 1
    print(json.dumps({
        "programs": len(functions),
        "inputs": len(inputs),
        "calls": calls,
        "address_space_mb": args.address_space_mb,
        "outcomes": dict(sorted(outcomes.items(), key=lambda kv: -kv[1])),
        "worst_seconds_past_alarm": round(worst, 3),
        "rust_mb_after": arcbatch._arcbatch.allocated_bytes() >> 20,
        "seconds": round(time.monotonic() - started, 1),
    }))
    sys.exit(1 if worst > LATE else 0)


if __name__ == "__main__":
    main()
