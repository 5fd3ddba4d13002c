"""arcbatch.jit: compiled solvers return and raise exactly what the uncompiled functions do (on
small cases, on every published solver and on generated mutants), keep their signature and
pickle; what cannot be compiled stays Python with one warning naming the line and why."""

import importlib.util
import inspect
import json
import multiprocessing
import pickle
import re
import subprocess
import warnings
from pathlib import Path

import pytest

import arcbatch
from arcbatch.dsl import *  # noqa: F401,F403 (the solvers below are written against it)

from conftest import same, shared
from test_solvers import cli_binary, grid

GRIDS = [((1, 2), (3, 4)), ((0, 0, 5), (5, 0, 0), (0, 5, 5)), ((7,),), tuple(tuple((i * j) % 10 for j in range(12)) for i in range(9))]


def define(tmp_path: Path, source: str, name: str = "solvers.py") -> dict:
    """The namespace of a solver file written under tmp_path and executed under its name."""
    path = tmp_path / name
    path.write_text("from arcbatch.dsl import *\n\n" + source)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def outcome(fn, *args):
    """What fn returns, or the class of what it raises."""
    try:
        return fn(*args)
    except arcbatch.DslError as e:
        return type(e)


def agree(a, b) -> bool:
    """Two outcomes are the same value, or the same exception class."""
    return a is b if isinstance(a, type) else same(a, b)


def assert_same_outcomes(plain, compiled, inputs) -> None:
    for args in inputs:
        a, b = outcome(plain, *args), outcome(compiled, *args)
        assert agree(a, b), (args, a, b)


def solve_flip(I):
    """Mirrors the grid and puts the mirror beside it."""
    x1 = vmirror(I)
    x2 = objects(I, T, F, T)
    x3 = compose(size, first)
    x4 = apply(x3, x2)
    x5 = hconcat(I, x1)
    O = branch(equality(size(x4), ONE), x5, rot90(x5))
    return O


def test_a_compiled_solver_keeps_its_signature_and_results():
    compiled = arcbatch.jit(solve_flip)
    assert isinstance(compiled, arcbatch.JitFunction)
    assert compiled.__name__ == "solve_flip" and compiled.__doc__ == solve_flip.__doc__
    assert compiled.__wrapped__ is solve_flip
    assert inspect.signature(compiled) == inspect.signature(solve_flip)
    assert compiled.first_line == solve_flip.__code__.co_firstlineno
    assert_same_outcomes(solve_flip, compiled, [(g,) for g in GRIDS])
    assert compiled(I=GRIDS[0]) == solve_flip(GRIDS[0])
    assert arcbatch.jit(compiled) is compiled


def test_calls_that_do_not_fit_the_signature_raise_type_error():
    compiled = arcbatch.jit(solve_flip)
    for args, kwargs, message in [
        ((GRIDS[0], GRIDS[0]), {}, "takes 1 positional argument but 2 were given"),
        ((), {}, "missing 1 required"),
        ((GRIDS[0],), {"I": GRIDS[0]}, "multiple values for argument 'I'"),
        ((), {"J": GRIDS[0]}, "unexpected keyword argument 'J'"),
    ]:
        with pytest.raises(TypeError, match=re.escape(message)):
            compiled(*args, **kwargs)
        with pytest.raises(TypeError):
            solve_flip(*args, **kwargs)


def test_errors_are_the_classes_the_uncompiled_function_raises(tmp_path):
    ns = define(tmp_path, "def solve_a(I):\n    x1 = first(I)\n    x2 = size(x1)\n    O = divide(x2, ZERO)\n    return O\n")
    compiled = arcbatch.jit(ns["solve_a"], strict=True)
    with pytest.raises(arcbatch.DslZeroDivisionError, match=r"divide \(.*solvers.py:6, in solve_a\)") as raised:
        compiled(GRIDS[0])
    assert isinstance(raised.value, ZeroDivisionError)
    assert_same_outcomes(ns["solve_a"], compiled, [((),), (5,), (GRIDS[1],), (((1,), (2,)),)])
    with pytest.raises(arcbatch.DslTypeError, match="not lists"):
        compiled([[1, 2]])


def test_steps_that_read_no_input_give_every_call_what_the_function_gives(tmp_path):
    # `x1`, `x2` and (in solve_f) `x4` read no input: a compiled function keeps their values from
    # one call to the next, and `x4`, which raises, raises again on every call that reaches it.
    ns = define(
        tmp_path,
        "def solve_k(I):\n    x1 = rbind(add, TWO)\n    x2 = canvas(FIVE, TWO_BY_TWO)\n    x3 = size(I)\n"
        "    x4 = x1(x3)\n    x5 = hconcat(I, x2)\n    x6 = greater(x3, TWO)\n    O = branch(x6, x5, x4)\n    return O\n\n\n"
        "def solve_f(I):\n    x1 = size(I)\n    x2 = decrement(x1)\n    x3 = divide(TEN, x2)\n    x4 = divide(TEN, ZERO)\n    return x4\n",
    )
    kept = arcbatch.jit(ns["solve_k"], strict=True)
    assert_same_outcomes(ns["solve_k"], kept, [(g,) for g in GRIDS + GRIDS[::-1]])
    failing = arcbatch.jit(ns["solve_f"], strict=True)
    for g in [GRIDS[2], GRIDS[0], GRIDS[2], GRIDS[1]]:
        # A grid of one row divides by zero at `x3` (line 17), the others at `x4` (line 18).
        with pytest.raises(arcbatch.DslZeroDivisionError, match=r"solvers.py:%d," % (17 if len(g) == 1 else 18)):
            failing(g)


def test_parameters_the_program_never_reads_are_not_converted(tmp_path):
    ns = define(tmp_path, "def solve(S, I, C):\n    O = vmirror(I)\n    return O\n")
    compiled = arcbatch.jit(ns["solve"], strict=True)
    assert compiled(["not", "a", "value"], GRIDS[0], C=None) == ns["solve"](["not", "a", "value"], GRIDS[0], None)


def test_a_time_limit_raises_dsl_timeout_error(tmp_path):
    ns = define(
        tmp_path,
        "def solve_slow(I):\n    x1 = asindices(I)\n    x2 = product(x1, x1)\n"
        "    x3 = apply(first, x2)\n    O = size(x3)\n    return O\n",
    )
    big = tuple(tuple(range(10)) * 3 for _ in range(30))
    with pytest.raises(arcbatch.DslTimeoutError, match="time limit of 1 ms"):
        arcbatch.jit(ns["solve_slow"], timeout_ms=1)(big)
    small = GRIDS[1]
    assert arcbatch.jit(ns["solve_slow"])(small) == ns["solve_slow"](small)
    limited = arcbatch.jit(arcbatch.jit(ns["solve_slow"]), timeout_ms=1)
    assert limited.timeout_ms == 1 and limited.__name__ == "solve_slow"


def test_compiled_functions_pickle():
    compiled = arcbatch.jit(solve_flip, timeout_ms=500)
    again = pickle.loads(pickle.dumps(compiled))
    assert isinstance(again, arcbatch.JitFunction) and again is not compiled
    assert (again.__name__, again.__qualname__, again.__doc__) == (compiled.__name__, compiled.__qualname__, compiled.__doc__)
    assert again.timeout_ms == 500 and again.program == compiled.program
    assert_same_outcomes(compiled, again, [(g,) for g in GRIDS])


def test_compiled_functions_run_in_other_processes():
    compiled = arcbatch.jit(solve_flip, strict=True)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.map(compiled, GRIDS) == [solve_flip(g) for g in GRIDS]


STEPS = "    x1 = objects(I, T, F, T)\n"


@pytest.mark.parametrize(
    "body, line, why",
    [
        (STEPS + "    if x1:\n        return I\n    return x1\n", 12, "Python control flow (`if`)"),
        (STEPS + "    for x in x1:\n        pass\n    return x1\n", 12, "Python control flow (`for`)"),
        (
            STEPS + "    x2 = apply(lambda o: size(x1), x1)\n    x1 = size(I)\n    return x2\n",
            12,
            "a lambda reading `x1`, which is assigned more than once",
        ),
        (STEPS + "    x2 = helper(x1)\n    return x2\n", 12, "`helper` is a Python helper"),
        (STEPS + "    x2 = add(ONE, BIG)\n    return x2\n", 12, "`BIG` is not a DSL primitive or constant"),
        (STEPS + "    x2 = add(TWO, size(x1))\n    return x2\n", 12, "`TWO` is 5 there, not arcbatch.dsl's TWO"),
        (STEPS + "    x2 = mirror(x1)\n    return x2\n", 12, "`mirror` is the DSL's vmirror under another name"),
        (STEPS + "    x2 = size(x3)\n    x3 = size(x1)\n    return x2\n", 12, "`x3` is used before it is assigned"),
        (STEPS + "    x2 = size(x1) + 1\n    return x2\n", 12, "has no DSL form"),
        (STEPS + "    x2 = astuple(*x1)\n    return x2\n", 12, "a starred argument"),
        (STEPS + "    x2, x3 = x1\n    return x2\n", 12, "is not a step"),
        ("    import os\n" + STEPS + "    return x1\n", 11, "an import inside the function"),
        # The parser's own errors are warned at the def, and name their line and column.
        (STEPS + "    x2 = fill(I, ONE)\n    return x2\n", 10, "solvers.py:12:10: fill takes 3 argument(s), 2 given"),
    ],
)
def test_what_cannot_be_compiled_stays_python_with_one_warning(tmp_path, body, line, why):
    # define() adds two lines: the def is line 10 of the file.
    ns = define(tmp_path, "BIG = 30\nTWO = 5\nmirror = vmirror\ndef helper(x):\n    return x\n\n\ndef solve_a(I):\n" + body)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = arcbatch.jit(ns["solve_a"])
    assert result is ns["solve_a"]
    assert [w.category for w in caught] == [arcbatch.JitWarning]
    message = str(caught[0].message)
    assert why in message and f"solve_a ({tmp_path / 'solvers.py'}, line {line})" in message, message
    assert (caught[0].filename, caught[0].lineno) == (str(tmp_path / "solvers.py"), line)
    with pytest.raises(arcbatch.InputError, match=re.escape(why)):
        arcbatch.jit(ns["solve_a"], strict=True)


def test_decorators_and_docstrings_are_read_past():
    @arcbatch.jit(strict=True)
    def shift_right(I):
        """A docstring
        over two lines."""
        x1 = shift(asobject(I), RIGHT)
        O = paint(I, x1)
        return O

    assert isinstance(shift_right, arcbatch.JitFunction)
    assert_same_outcomes(shift_right.__wrapped__, shift_right, [(g,) for g in GRIDS])


def test_a_closure_over_the_dsl_names_compiles():
    from arcbatch.dsl import ONE, rot90

    def rotates(I):
        x1 = rot90(I)
        O = downscale(x1, ONE)
        return O

    assert rotates.__code__.co_freevars == ("ONE", "rot90")
    assert_same_outcomes(rotates, arcbatch.jit(rotates, strict=True), [(g,) for g in GRIDS])


def test_source_that_is_not_the_code_run_is_not_compiled(tmp_path):
    path = tmp_path / "solvers.py"
    path.write_text("from arcbatch.dsl import *\ndef solve_a(I):\n    O = vmirror(I)\n    return O\n")
    namespace: dict = {}
    exec(compile(path.read_text().replace("vmirror", "hmirror"), str(path), "exec"), namespace)
    with pytest.raises(arcbatch.InputError, match="does not hold the code it runs"):
        arcbatch.jit(namespace["solve_a"], strict=True)
    exec("def solve_b(I):\n    O = vmirror(I)\n    return O\n", namespace)
    with pytest.raises(arcbatch.InputError, match="source is not available"):
        arcbatch.jit(namespace["solve_b"], strict=True)
    with pytest.raises(arcbatch.InputError, match="is not a Python function"):
        arcbatch.jit(vmirror, strict=True)


def test_jit_module_compiles_every_solver_in_place(tmp_path):
    ns = define(
        tmp_path,
        "def solve_a(I):\n    O = vmirror(I)\n    return O\n\n"
        "def solve_b(I):\n    if I:\n        return I\n    return I\n\n"
        "def other(I):\n    O = vmirror(I)\n    return O\n",
    )
    plain = dict(ns)
    with pytest.warns(arcbatch.JitWarning, match="solve_b"):
        done = arcbatch.jit_module(ns)
    assert set(done) == {"solve_a", "solve_b"}
    assert isinstance(ns["solve_a"], arcbatch.JitFunction) and ns["solve_b"] is plain["solve_b"]
    assert ns["other"] is plain["other"]
    with pytest.raises(arcbatch.InputError):
        arcbatch.jit_module([1, 2])


def test_jit_module_takes_an_imported_module(tmp_path):
    path = tmp_path / "my_solvers.py"
    path.write_text("from arcbatch.dsl import *\n\n\ndef solve_a(I):\n    O = rot90(I)\n    return O\n")
    spec = importlib.util.spec_from_file_location("my_solvers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    plain = module.solve_a
    assert arcbatch.jit_module(module, strict=True) == {"solve_a": module.solve_a}
    assert isinstance(module.solve_a, arcbatch.JitFunction) and module.solve_a.__module__ == "my_solvers"
    assert_same_outcomes(plain, module.solve_a, [(g,) for g in GRIDS])


def examples(training: Path, task: str) -> list:
    spec = json.loads((training / f"{task}.json").read_text())
    return [(grid(e["input"]), grid(e["output"])) for e in spec["train"] + spec["test"]]


def test_every_published_solver_compiles_and_gives_the_uncompiled_results():
    path = shared("ref/arc-dsl/solvers.py")
    training = shared("arc/training")
    source = path.read_text().replace("from dsl import *", "from arcbatch.dsl import *").replace("from constants import *", "")
    plain: dict = {}
    exec(compile(source, str(path), "exec"), plain)
    compiled = dict(plain)
    done = arcbatch.jit_module(compiled, strict=True)
    assert len(done) == 400 and all(isinstance(f, arcbatch.JitFunction) for f in done.values())
    unsolved, differing = [], []
    for name, solve in done.items():
        pairs = examples(training, name[len("solve_") :])
        outs = [outcome(solve, i) for i, _ in pairs]
        if not all(agree(outcome(plain[name], i), out) for (i, _), out in zip(pairs, outs)):
            differing.append(name)
        if outs != [o for _, o in pairs]:
            unsolved.append(name)
    assert differing == []
    assert unsolved == ["solve_e40b9e2f"], "the reference fails only e40b9e2f"


def mutant_solvers(batt: str) -> dict:
    """Each program of an `arcbatch gen --no-rewrites` file as a solver in the reference's
    syntax: {name: (task, source)}, with the steps its output and guards need, in order."""
    steps, solvers = {}, {}
    for line in batt.splitlines():
        if re.match(r"n\d+ = ", line):
            target, expression = line.split(" = ", 1)
            steps[target] = expression
        elif line.startswith("out "):
            head, origin = line[len("out ") :].split(" ; ")[:2]
            name, nodes = head.split(" = ")
            output, *guards = nodes.replace(" guards", "").split()
            needed, todo = set(), [output, *guards]
            while todo:
                node = todo.pop()
                if node in steps and node not in needed:
                    needed.add(node)
                    todo.extend(re.findall(r"\bn\d+\b", steps[node]))
            body = "".join(f"    {n} = {steps[n]}\n" for n in sorted(needed, key=lambda n: int(n[1:])))
            solver = name.replace("~", "_m")
            task = origin.split()[1][len("solve_") :]
            solvers[solver] = (task, f"def {solver}(I):\n{body}    return {output}\n")
    return solvers


def test_generated_mutants_compiled_give_the_uncompiled_results(tmp_path):
    library = shared("ref/arc-dsl/solvers.py")
    training = shared("arc/training")
    out = tmp_path / "mutants.batt"
    subprocess.run(
        [cli_binary(), "gen", "--library", library, "--count", "60", "--seed", "7", "--mutate", "0.3",
         "--mutants", "3", "--no-rewrites", "--out", out],
        check=True,
        capture_output=True,
    )
    solvers = mutant_solvers(out.read_text())
    assert len(solvers) >= 200
    source = "".join(s for _, s in solvers.values())
    ns = define(tmp_path, source, "mutants.py")
    compared = raised = 0
    for name, (task, _) in solvers.items():
        compiled = arcbatch.jit(ns[name], strict=True, timeout_ms=1000)
        for i, _ in examples(training, task):
            try:
                got = compiled(i)
            except arcbatch.DslTimeoutError:
                continue
            except arcbatch.DslError as e:
                got = type(e)
                raised += 1
            assert agree(outcome(ns[name], i), got), (name, task)
            compared += 1
    assert compared >= 800 and raised > 0
