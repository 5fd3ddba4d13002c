"""Times arcbatch.run against the command line's `arcbatch run` on the same inputs.

    python python/bench/run_vs_cli.py SOLVERS TASKS --cli target/release/arcbatch [--threads N]

Each is run --repeat times, alternating; the medians of the wall time (the Python call; the
CLI process, start-up included) and of the report's own "seconds" are compared.
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import arcbatch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("solvers", type=Path)
    parser.add_argument("tasks", type=Path)
    parser.add_argument("--cli", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    walls = {"arcbatch.run": [], "CLI": []}
    seconds = {"arcbatch.run": [], "CLI": []}
    with tempfile.TemporaryDirectory() as tmp:
        report_path = Path(tmp) / "report.json"
        command = [args.cli, "run", "--solvers", args.solvers, "--tasks", args.tasks]
        command += ["--threads", str(args.threads), "--json", report_path]
        for _ in range(args.repeat):
            start = time.perf_counter()
            report = arcbatch.run(args.solvers, args.tasks, threads=args.threads)
            walls["arcbatch.run"].append(time.perf_counter() - start)
            seconds["arcbatch.run"].append(report["seconds"])
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            walls["CLI"].append(time.perf_counter() - start)
            seconds["CLI"].append(json.loads(report_path.read_text())["seconds"])
    for name in walls:
        print(
            f"{name}: wall {statistics.median(walls[name]) * 1e3:.1f} ms, "
            f"report seconds {statistics.median(seconds[name]) * 1e3:.1f} ms (medians of {args.repeat})"
        )
    ratio = statistics.median(walls["arcbatch.run"]) / statistics.median(walls["CLI"])
    print(f"arcbatch.run / CLI, wall: {ratio:.3f}")


if __name__ == "__main__":
    main()
