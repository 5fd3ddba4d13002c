"""Every primitive of the reference's dsl.py against arcbatch.dsl on unusual arguments: the
values search mutants hand primitives they were not written for (tuples as patches, a tuple of
cells as a grid, integers where containers go, empty sets, pairs of grids), every combination
for primitives of one and two arguments, a seeded sample for three.

    python python/bench/primitive_fuzz.py [--reference ../shared/ref/arc-dsl] [--samples 300]

A call agrees when both return equal values or raise the same builtin exception class (as
``differential.py`` judges a program). A call that differs is run again by the reference with
every set iterated in arcbatch's canonical order: agreeing then, it is counted as ``order``
(CPython's hash order, not a defect); differing still, as a mismatch. Printed: per primitive
with mismatches, their count and the first example. Exit status 1 on any mismatch.
"""

import argparse
import inspect
import itertools
import random
import signal
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import differential  # noqa: E402 (the harness's reference loading and judging)

SHARED = Path(__file__).resolve().parents[3] / "shared"

GRID = tuple(tuple((i * 7 + j) % 10 for j in range(5)) for i in range(4))
VALUES = [
    0, 1, 2, -1, True, (1, 2), (0, 0), (), frozenset(), GRID,
    ((1, 2), (3, 3), (2, 6)),
    ((5, (1, 2)), (5, (3, 3)), (6, (2, 6))),
    frozenset({(1, 2), (3, 3)}),
    frozenset({(5, (1, 2)), (6, (0, 0))}),
    ((1, 2, 3), (4, 5, 6)),
    (1, 2, 3),
    frozenset({1, 2}),
    ((1, 2),),
    frozenset({frozenset({(1, 1)}), frozenset({(2, 2), (2, 3)})}),
    (GRID, GRID),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, default=SHARED / "ref" / "arc-dsl")
    parser.add_argument("--samples", type=int, default=300, help="argument triples per primitive of three")
    parser.add_argument("--limit", type=float, default=1.0, help="seconds per call and side")
    args = parser.parse_args()
    reference = differential.reference_namespace(args.reference)
    canonical = differential.canonical_reference_namespace(args.reference)
    port = differential.arcbatch_namespace()
    signal.signal(signal.SIGALRM, differential._alarm)
    rng = random.Random(0)
    counts: Counter = Counter()
    mismatches: Counter = Counter()
    examples = {}
    for name in sorted(port):
        function = reference.get(name)
        if not inspect.isfunction(function):
            continue
        arity = len(inspect.signature(function).parameters)
        if arity in (1, 2):
            calls = list(itertools.product(VALUES, repeat=arity))
        elif arity == 3:
            calls = [tuple(rng.choice(VALUES) for _ in range(3)) for _ in range(args.samples)]
        else:
            continue
        for call in calls:
            run = lambda namespace: differential.outcome(lambda _: namespace[name](*call), None, args.limit)  # noqa: E731
            expected = run(reference)
            if expected[0] == "timeout":
                counts["reference timeouts"] += 1
                continue
            got = run(port)
            if differential.agree(expected, got):
                counts["agree"] += 1
            elif differential.agree(run(canonical), got):
                counts["order"] += 1
            else:
                counts["mismatches"] += 1
                mismatches[name] += 1
                examples.setdefault(name, (call, differential.describe(expected, 90), differential.describe(got, 90)))
    for name, n in mismatches.most_common():
        call, expected, got = examples[name]
        print(f"{name}: {n} | {differential.describe(('value', call), 90)} | reference {expected} | arcbatch {got}")
    print(dict(counts))
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
