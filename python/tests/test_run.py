"""arcbatch.run: solver files on tasks given as paths or as Python objects."""

import json
import sys
import threading
import types
import warnings

import pytest

import arcbatch

MIRROR = "def solve_task(I):\n    O = vmirror(I)\n    return O\n"
TASK = {
    "train": [{"input": [[1, 0]], "output": [[0, 1]]}, {"input": [[2, 2, 0]], "output": [[0, 2, 2]]}],
    "test": [{"input": [[3, 0]], "output": [[0, 3]]}],
}


def test_a_task_given_as_python_objects():
    report = arcbatch.run(MIRROR, TASK)
    assert set(report) == {"solved", "tasks", "pairs", "correct_pairs", "seconds", "results"}
    assert (report["solved"], report["tasks"], report["pairs"], report["correct_pairs"]) == (1, 1, 3, 3)
    entry = report["results"]["task"]
    assert entry["solved"] and entry["error"] is None and entry["correct"] == entry["pairs"] == 3
    assert isinstance(entry["micros"], int) and isinstance(entry["nanos"], int) and isinstance(report["seconds"], float)
    assert entry["micros"] == entry["nanos"] // 1000


def test_tasks_by_id_with_tuple_and_numpy_grids(tmp_path):
    tasks = {"a": TASK, "b": {"train": [{"input": ((5, 0),), "output": ((0, 5),)}], "test": []}}
    np = sys.modules.get("numpy")
    if np is not None:
        tasks["c"] = {"train": [{"input": np.array([[7, 0]]), "output": np.array([[0, 7]])}], "test": []}
    solvers = tmp_path / "solvers.py"
    solvers.write_text("".join(MIRROR.replace("solve_task", f"solve_{t}") for t in tasks))
    report = arcbatch.run(solvers, tasks, threads=1)
    assert report["solved"] == len(tasks)


def test_paths_modules_and_submission(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t1.json").write_text(json.dumps(TASK))
    (tmp_path / "tasks" / "t2.json").write_text(json.dumps(TASK))
    source = MIRROR.replace("solve_task", "solve_t1") + "def solve_t2(I):\n    O = hmirror(I)\n    return O\n"
    (tmp_path / "mysolvers.py").write_text("from arcbatch.dsl import *\n" + source)
    module = types.ModuleType("mysolvers")
    module.__file__ = str(tmp_path / "mysolvers.py")
    submission = tmp_path / "submission.json"
    for solvers in (str(tmp_path / "mysolvers.py"), tmp_path / "mysolvers.py", module):
        report = arcbatch.run(solvers, tmp_path / "tasks", submission=submission)
        assert report["results"]["t1"]["solved"] and not report["results"]["t2"]["solved"]
    written = json.loads(submission.read_text())
    assert written["t1"] == [{"attempt_1": [[0, 3]], "attempt_2": [[0, 3]]}]
    assert written["t2"] == [{"attempt_1": [[3, 0]], "attempt_2": [[3, 0]]}]


def test_failures_are_reported_per_task():
    source = (
        "def solve_task(I):\n    x1 = first(I)\n    O = first(x1)\n    return O\n"
        "def solve_slow(I):\n    x1 = power(rot90, 900)\n    x2 = power(x1, 900)\n"
        "    x3 = power(x2, 900)\n    O = x3(I)\n    return O\n"
    )
    report = arcbatch.run(source, {"task": TASK, "slow": TASK}, timeout_ms=50)
    assert report["results"]["task"]["error"] is None and report["results"]["task"]["correct"] == 0
    assert report["results"]["slow"]["error"] == "time limit exceeded (at line 9)"


def test_bad_inputs_raise_input_errors_with_the_cli_messages(tmp_path):
    with pytest.raises(arcbatch.InputError, match=r'<solvers>:2:9: unknown name "vmiror"; similar primitives: vmirror'):
        arcbatch.run(MIRROR.replace("vmirror", "vmiror"), TASK)
    with pytest.raises(arcbatch.InputError, match=r"vmirror takes 1 argument\(s\), 2 given"):
        arcbatch.run(MIRROR.replace("vmirror(I)", "vmirror(I, I)"), TASK)
    with pytest.raises(arcbatch.InputError, match="supported are"):
        arcbatch.run("def solve_task(X):\n    return X\n", TASK)
    with pytest.raises(arcbatch.InputError, match="No such file"):
        arcbatch.run(tmp_path / "missing.py", TASK)
    with pytest.raises(arcbatch.InputError, match="cannot read"):
        arcbatch.run(MIRROR, tmp_path / "missing")
    with pytest.raises(arcbatch.InputError, match="tasks must be a path or a dict"):
        arcbatch.run(MIRROR, [TASK])
    with pytest.raises(arcbatch.InputError, match="is not a grid"):
        arcbatch.run(MIRROR, {"train": [{"input": {1, 2}}], "test": []})
    with pytest.raises(arcbatch.InputError, match="threads must be at least 1"):
        arcbatch.run(MIRROR, TASK, threads=0)
    with pytest.raises(arcbatch.InputError, match="timeout_ms must be a non-negative int, got -5"):
        arcbatch.run(MIRROR, TASK, timeout_ms=-5)
    with pytest.raises(arcbatch.InputError, match="threads must be a non-negative int"):
        arcbatch.run(MIRROR, TASK, threads=1.5)
    with pytest.raises(ValueError):  # InputError is a ValueError too
        arcbatch.run(MIRROR, 5)


def test_bad_tasks_are_skipped_with_a_warning():
    tasks = {"task": TASK, "ragged": {"train": [{"input": [[1, 2], [3]], "output": [[1]]}], "test": []}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = arcbatch.run(MIRROR, tasks)
    assert report["tasks"] == 1 and report["solved"] == 1
    assert [str(w.message) for w in caught] == [
        "arcbatch: skipped: <tasks>: task ragged: train[0].input: ragged grid: row 1 has 1 cells, row 0 has 2"
    ]


def test_runs_from_several_python_threads():
    results = []
    threads = [threading.Thread(target=lambda: results.append(arcbatch.run(MIRROR, TASK)["solved"])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [1, 1, 1, 1]


def test_batt_runs_on_every_backend_with_the_same_report():
    """batt and profile take the command line's backends; the emulated GPU kernels, through the
    whole device path, give the CPU's matches on the published solvers' own tasks."""
    from conftest import shared

    solvers, training = shared("ref/arc-dsl/solvers.py"), shared("arc/training")
    tasks = {p.stem: json.loads(p.read_text()) for p in sorted(training.glob("*.json"))[:40]}
    reports = {b: arcbatch.batt(solvers, tasks, backend=b, threads=2) for b in ("cpu", "emu", "auto")}
    matches = {b: r["matches"] for b, r in reports.items()}
    assert len(matches["cpu"]) == 40 and sum(m["correct"] for m in matches["cpu"]) > 100
    assert matches["emu"] == matches["cpu"] and matches["auto"] == matches["cpu"]
    profile = arcbatch.profile(solvers, tasks, backend="emu")
    assert profile["backend"] == "emu" and profile["profile"]
    solver_names = {row["solver"] for row in profile["solvers"]}
    assert solver_names == {f"solve_{t}" for t in tasks}
    assert abs(sum(row["share"] for row in profile["solvers"]) - 1) < 1e-9
    assert arcbatch.profile(solvers, tasks, backend="cpu")["backend"] == "cpu"


def test_an_unknown_backend_is_an_input_error_naming_the_backends():
    with pytest.raises(arcbatch.InputError, match='unknown backend "tpu" .auto, cpu, gpu, emu.'):
        arcbatch.batt(MIRROR, TASK, backend="tpu")
    with pytest.raises(arcbatch.InputError, match="backend must be a str"):
        arcbatch.profile(MIRROR, TASK, backend=3)
