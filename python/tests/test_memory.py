"""Memory: a call past its memory limit raises MemoryError (arcbatch.DslLimitError) and the next
call works; an interrupted conversion leaves nothing behind; under a limit on the address space
(RLIMIT_AS), mutants of the published solvers run call after call with alarms, none late, and
the process survives (python/bench/memory_stress.py on a small sample)."""

import json
import signal
import subprocess
import sys
import time

import pytest

import arcbatch
import arcbatch._arcbatch
from arcbatch import dsl
from conftest import REPO, shared
from test_solvers import cli_binary

GRID = tuple(tuple((i * 7 + j * 3) % 10 for j in range(20)) for i in range(20))


def test_a_call_past_its_memory_limit_raises_memory_error_and_the_next_works():
    indices = dsl.asindices(GRID)
    previous = dsl.set_memory_limit(1)
    try:
        # 160,000 pairs: about 4 MB.
        with pytest.raises(MemoryError, match="memory") as e:
            dsl.product(indices, indices)
        assert isinstance(e.value, arcbatch.DslLimitError)
        assert dsl.size(dsl.interval(0, 10, 1)) == 10
    finally:
        assert dsl.set_memory_limit(previous) == 1
    assert len(dsl.product(indices, indices)) == 160_000


def test_an_interrupted_conversion_leaves_no_memory_behind():
    class Alarm(Exception):
        pass

    def raise_alarm(signum, frame):
        raise Alarm()

    indices = dsl.asindices(dsl.hconcat(GRID, GRID))
    before = arcbatch._arcbatch.allocated_bytes()
    previous = signal.signal(signal.SIGALRM, raise_alarm)
    try:
        for _ in range(3):
            start = time.monotonic()
            with pytest.raises(Alarm):
                signal.setitimer(signal.ITIMER_REAL, 0.02)
                try:
                    # 36,541 distinct lines of up to 40 cells (of 640,000 pairs): over 0.1 s
                    # to build and convert into Python objects.
                    dsl.prapply(dsl.connect, indices, indices)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            assert time.monotonic() - start < 0.02 + 0.2
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert arcbatch._arcbatch.allocated_bytes() - before < 16 << 20


def test_mutants_under_an_address_space_limit_never_abort_or_hang():
    out = subprocess.run(
        [sys.executable, str(REPO / "python" / "bench" / "memory_stress.py"),
         "--reference", str(shared("ref/arc-dsl")), "--tasks", str(shared("arc/evaluation")),
         "--cli", str(cli_binary()), "--address-space-mb", "1024", "--count", "40", "--inputs", "5"],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["calls"] == summary["programs"] * 5 > 300, summary
    assert summary["worst_seconds_past_alarm"] < 1.0, summary
