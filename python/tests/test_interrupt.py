"""Long calls stop within milliseconds of a signal whose handler raises (a harness's SIGALRM
timer, Ctrl-C's SIGINT), raise that handler's exception and leave the module usable; the
per-call time limit of ``arcbatch.dsl``."""

import os
import signal
import subprocess
import time

import pytest

import arcbatch
from arcbatch import batch, dsl
from arcbatch.dsl import power, rot90

GRID = ((1, 2), (3, 4))


def endless_solver(I):
    x1 = power(rot90, 900)
    x2 = power(x1, 900)
    x3 = power(x2, 900)
    O = x3(I)
    return O


ENDLESS_JIT = arcbatch.jit(endless_solver, strict=True)
# 900**3 rotations of a 2x2 grid: minutes, in one call.
ENDLESS = dsl.power(dsl.power(dsl.power(dsl.rot90, 900), 900), 900)
ENDLESS_SOLVER = """def solve_task(I):
    x1 = power(rot90, 900)
    x2 = power(x1, 900)
    x3 = power(x2, 900)
    O = x3(I)
    return O
"""
TASK = {"train": [{"input": [[1, 2], [3, 4]], "output": [[1, 2], [3, 4]]}], "test": [{"input": [[1, 2], [3, 4]], "output": [[1, 2], [3, 4]]}]}
# How long after the signal the call must have raised.
PROMPT = 0.05
DELAY = 0.05


class Alarm(Exception):
    """What a harness's SIGALRM handler raises."""


def raise_alarm(signum, frame):
    raise Alarm()


@pytest.fixture
def alarm_handler():
    previous = signal.signal(signal.SIGALRM, raise_alarm)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def elapsed_after_signal(call, expected, send_signal):
    """Runs ``call``, sends the signal after DELAY, and returns how long after the signal the
    call raised ``expected``."""
    start = time.monotonic()
    sender = send_signal()
    with pytest.raises(expected):
        call()
    late = time.monotonic() - start - DELAY
    if sender is not None:
        sender.wait()
    return late


def alarm():
    signal.setitimer(signal.ITIMER_REAL, DELAY)
    return None


def sigint():
    # From another process, as a terminal would: a Python thread could not run while the call
    # holds the GIL.
    return subprocess.Popen(["sh", "-c", f"sleep {DELAY}; kill -INT {os.getpid()}"])


LONG_CALLS = {
    "dsl": lambda: ENDLESS(GRID),
    "dsl-primitive": lambda: dsl.apply(ENDLESS, frozenset({GRID})),
    "jit": lambda: ENDLESS_JIT(GRID),
    "batch": lambda: batch.map(ENDLESS, [GRID] * 4),
    "run": lambda: arcbatch.run(ENDLESS_SOLVER, TASK, timeout_ms=600_000),
    "batt": lambda: arcbatch.batt(ENDLESS_SOLVER, TASK, timeout_ms=600_000),
}


GRID_30 = tuple(tuple((i * j) % 10 for j in range(30)) for i in range(30))


def test_sigalrm_stops_the_conversion_of_a_huge_result_and_the_module_goes_on(alarm_handler):
    # 810,000 pairs of locations: built in milliseconds, converted in most of a second, and
    # what was converted before the signal is freed at the next call, not before raising.
    x = dsl.asindices(GRID_30)
    late = elapsed_after_signal(lambda: dsl.product(x, x), Alarm, alarm)
    assert late < PROMPT, f"raised {late * 1000:.0f} ms after SIGALRM"
    assert dsl.size(dsl.interval(0, 10, 1)) == 10


def test_sigalrm_stops_the_conversion_of_a_huge_argument_and_the_module_goes_on(alarm_handler):
    # A million pairs: most of a second to read into a DSL value.
    pairs = frozenset((i, -i) for i in range(1_000_000))
    late = elapsed_after_signal(lambda: dsl.size(pairs), Alarm, alarm)
    assert late < PROMPT, f"raised {late * 1000:.0f} ms after SIGALRM"
    assert dsl.size(dsl.interval(0, 10, 1)) == 10


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_sigalrm_stops_a_long_call_and_the_module_goes_on(alarm_handler, name):
    late = elapsed_after_signal(LONG_CALLS[name], Alarm, alarm)
    assert late < PROMPT, f"{name} raised {late * 1000:.0f} ms after SIGALRM"
    assert dsl.rot90(GRID) == ((3, 1), (4, 2))
    assert batch.map(dsl.rot90, [GRID]) == [((3, 1), (4, 2))]
    assert arcbatch.run(ENDLESS_SOLVER.replace("x3(I)", "x1(I)"), TASK)["solved"] == 1


@pytest.mark.parametrize("name", ["dsl", "batch", "run", "jit"])
def test_sigint_raises_keyboard_interrupt_promptly(name):
    late = elapsed_after_signal(LONG_CALLS[name], KeyboardInterrupt, sigint)
    assert late < PROMPT, f"{name} raised {late * 1000:.0f} ms after SIGINT"
    assert dsl.size(dsl.interval(0, 10, 1)) == 10


def test_a_handler_that_returns_lets_the_call_go_on():
    seen = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        # 810,000 rotations: long enough for the timer to fire inside the call.
        assert dsl.power(dsl.power(dsl.rot90, 900), 900)(GRID) == GRID
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert seen == [signal.SIGALRM]


def test_the_time_limit_bounds_each_call_of_this_thread():
    with dsl.time_limit(0.05):
        start = time.monotonic()
        with pytest.raises(arcbatch.DslTimeoutError, match="time limit exceeded"):
            ENDLESS(GRID)
        assert time.monotonic() - start < 0.05 + PROMPT
        # Each call has the whole limit.
        assert dsl.rot90(GRID) == ((3, 1), (4, 2))
    assert dsl.set_time_limit(None) is None
    assert dsl.set_time_limit(2.5) is None
    assert dsl.set_time_limit(None) == 2.5
    with pytest.raises(arcbatch.InputError, match="non-negative"):
        dsl.set_time_limit(-1)
