"""`arcbatch solve` on ARC tasks as Kaggle gives them: test outputs hidden.

    python3 benches/solve_unseen.py [--cli target/release/arcbatch] [--split evaluation|DIR]
        [--shared ../shared] [--minutes 10] [--threads 2] [--library FILE] [--work DIR]

Converts `<shared>/arc/<split>/*.json` into Kaggle's `challenges.json` (train pairs and test
inputs only; the test outputs go to a separate `solutions.json` that the solver is never
given), runs `arcbatch solve --tasks challenges.json --submission submission.json` under
`/usr/bin/time -v` (wall time, peak memory), then `arcbatch score`. Prints one JSON line:
tasks, minutes, solved (pass@2), score, wall seconds, peak MB.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def convert(split_dir: Path, work: Path):
    challenges, solutions = {}, {}
    for f in sorted(split_dir.glob("*.json")):
        task = json.loads(f.read_text())
        challenges[f.stem] = {
            "train": task["train"],
            "test": [{"input": t["input"]} for t in task["test"]],
        }
        solutions[f.stem] = [t["output"] for t in task["test"]]
    # Nothing but the challenges in the folder the solver reads: no *_solutions.json beside it.
    (work / "in").mkdir(parents=True, exist_ok=True)
    (work / "in" / "challenges.json").write_text(json.dumps(challenges))
    (work / "solutions.json").write_text(json.dumps(solutions))
    return work / "in" / "challenges.json", work / "solutions.json"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="target/release/arcbatch")
    ap.add_argument("--shared", default="../shared")
    ap.add_argument("--split", default="evaluation")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--library")
    ap.add_argument("--work")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="solve-unseen-"))
    split = Path(args.split) if Path(args.split).is_dir() else Path(args.shared) / "arc" / args.split
    challenges, solutions = convert(split, work)
    submission = work / "submission.json"
    cmd = [args.cli, "solve", "--tasks", str(challenges), "--submission", str(submission),
           "--minutes", str(args.minutes), "--threads", str(args.threads), "--out", str(work / "programs")]
    if args.library:
        cmd += ["--library", args.library]
    run = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    sys.stderr.write(run.stdout[-3000:])
    if run.returncode != 0:
        sys.stderr.write(run.stderr[-3000:])
        sys.exit(run.returncode)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", run.stderr)
    h, m, s = (float(x) if x else 0.0 for x in wall.groups())
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", run.stderr).group(1))
    scored = subprocess.run([args.cli, "score", "--submission", str(submission), "--solutions", str(solutions)],
                            capture_output=True, text=True, check=True).stdout
    solved, tasks = map(int, re.search(r"(\d+) of (\d+) tasks solved", scored).groups())
    points = float(re.search(r"score ([\d.]+)", scored).group(1))
    print(json.dumps({"split": args.split, "tasks": tasks, "minutes": args.minutes, "threads": args.threads,
                      "library": args.library, "solved": solved, "score": points,
                      "wall_s": round(h * 3600 + m * 60 + s, 1), "peak_mb": round(peak_kb / 1024),
                      "work": str(work)}))


if __name__ == "__main__":
    main()
