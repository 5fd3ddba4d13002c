"""arcbatch.ray on a local Ray with 2 CPUs: batt gives arcbatch.batt's report, search harvests
what `arcbatch search` harvests, and a chunk whose worker dies is run again without changing
either. Skipped where Ray is not installed (`pip install 'arcbatch[ray]'`)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'arcbatch[ray]')")

import arcbatch  # noqa: E402
import arcbatch.ray  # noqa: E402

from conftest import REPO, shared  # noqa: E402
from test_solvers import cli_binary  # noqa: E402

# Cross mode on every training task takes minutes (the closing figure in the README); these
# many tasks keep the test to seconds.
CROSS_TASKS = 16
# The time budget per step and sample of the cross-mode runs: solve_d22278a0 has steps of
# about 2 s (the default budget) on some of these tasks, which a loaded machine decides either
# way; with a minute each, none reaches it.
CROSS_TIMEOUT_MS = 60_000
# The search's time budget per step and sample in these tests: the default 5 ms decides some
# candidates by the machine's load; 200 ms decides them all the same way in both runs.
SEARCH_TIMEOUT_MS = 200
SEARCH = dict(rounds=2, seed=3, count=32, mutate=0.2, mutants=1)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def training_subset(n: int) -> dict:
    """The first ``n`` training tasks (by id), as Python objects."""
    training = shared("arc/training")
    return {p.stem: json.loads(p.read_text()) for p in sorted(training.glob("*.json"))[:n]}


def without_seconds(report: dict) -> dict:
    return dict(report, seconds=None)


def test_batt_in_cross_mode_is_arcbatchs_batt():
    solvers = shared("ref/arc-dsl/solvers.py")
    tasks = training_subset(CROSS_TASKS)
    local = arcbatch.batt(solvers, tasks, cross=True, timeout_ms=CROSS_TIMEOUT_MS)
    distributed = arcbatch.ray.batt(solvers, tasks, cross=True, timeout_ms=CROSS_TIMEOUT_MS, chunks=7)
    assert without_seconds(distributed) == without_seconds(local)
    assert len(local["matches"]) == 400 * CROSS_TASKS
    # More chunks than solvers: each solver's tasks are cut too.
    few = "\n".join(["def solve_a(I):\n    O = vmirror(I)\n    return O\n", "def solve_b(I):\n    O = hmirror(I)\n    return O\n"])
    local = arcbatch.batt(few, tasks, cross=True)
    assert without_seconds(arcbatch.ray.batt(few, tasks, cross=True, chunks=5)) == without_seconds(local)


def test_batt_with_differs_on_every_training_task_is_arcbatchs_batt(tmp_path):
    training = shared("arc/training")
    solvers = shared("ref/arc-dsl/solvers.py")
    differs = tmp_path / "differs.py"
    differs.write_text("def differ_cells(S, I, C):\n    x1 = cellwise(I, C, NEG_ONE)\n    O = colorcount(x1, NEG_ONE)\n    return O\n")
    local = arcbatch.batt(solvers, training, differs=differs)
    distributed = arcbatch.ray.batt(solvers, training, differs=differs)
    assert without_seconds(distributed) == without_seconds(local)
    assert sum(m["correct"] == m["pairs"] for m in local["matches"]) == 399


def test_batt_takes_arcbatchs_backends():
    """Each chunk runs on the backend named, as arcbatch.batt does: the emulated GPU kernels give
    the CPU's report; an unknown name is refused on the driver, before any chunk runs."""
    solvers = shared("ref/arc-dsl/solvers.py")
    tasks = training_subset(CROSS_TASKS)
    local = arcbatch.batt(solvers, tasks, backend="cpu")
    for backend in ("emu", "cpu"):
        distributed = arcbatch.ray.batt(solvers, tasks, backend=backend, chunks=3, progress=False)
        assert without_seconds(distributed) == without_seconds(local), backend
    with pytest.raises(arcbatch.InputError, match='unknown backend "tpu"'):
        arcbatch.ray.batt(solvers, tasks, backend="tpu")


def test_bad_input_raises_input_error(tmp_path):
    tasks = training_subset(1)
    with pytest.raises(arcbatch.InputError, match="chunks must be at least 1"):
        arcbatch.ray.batt("def solve_a(I):\n    O = vmirror(I)\n    return O\n", tasks, chunks=0)
    with pytest.raises(arcbatch.InputError):
        arcbatch.ray.batt("def solve_a(I):\n    O = nosuchprimitive(I)\n    return O\n", tasks)
    with pytest.raises(arcbatch.InputError, match="no such file"):
        arcbatch.ray.search(library=tmp_path / "missing", tasks=tasks, out=tmp_path / "out")
    with pytest.raises(arcbatch.InputError, match="mutate"):
        arcbatch.ray.search(library=REPO / "dsl" / "solvers.py", tasks=tasks, out=tmp_path / "out", mutate=2.0)


def files(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def cli_search(tmp_path_factory):
    """What `arcbatch search` harvests from the published solvers on the training tasks."""
    out = tmp_path_factory.mktemp("cli") / "found"
    command = [cli_binary(), "search", "--library", shared("ref/arc-dsl/solvers.py"), "--tasks", shared("arc/training")]
    command += ["--out", out, "--timeout-ms", str(SEARCH_TIMEOUT_MS)]
    command += [a for k, v in SEARCH.items() for a in (f"--{k}", str(v))]
    subprocess.run(command, check=True, capture_output=True)
    return files(out)


def ray_search(out: Path) -> dict:
    report = arcbatch.ray.search(
        library=shared("ref/arc-dsl/solvers.py"),
        tasks=shared("arc/training"),
        out=out,
        timeout_ms=SEARCH_TIMEOUT_MS,
        chunks=5,
        **SEARCH,
    )
    assert len(report["rounds"]) == SEARCH["rounds"]
    return report


def test_search_harvests_what_the_cli_harvests(tmp_path, cli_search):
    report = ray_search(tmp_path / "found")
    assert files(tmp_path / "found") == cli_search
    assert report["known"] == 0 and report["solutions"] > 0
    # Run again on its own harvest: nothing is new.
    again = ray_search(tmp_path / "found")
    assert again["known"] == report["solutions"] and all(not r["new"] for r in again["rounds"])
    assert files(tmp_path / "found") == cli_search
    none = arcbatch.ray.search(library=REPO / "dsl" / "solvers.py", tasks=training_subset(1), out=tmp_path / "found", rounds=0)
    assert (none["rounds"], none["solutions"], none["tasks"]) == ([], report["solutions"], report["tasks"])


def test_a_chunk_whose_worker_dies_is_run_again(tmp_path, monkeypatch, cli_search):
    """The first chunk to start kills its worker (os._exit); Ray runs it again, and the
    results are still whole: batt's report and the search's harvest are unchanged."""
    for name in ("_batt_part", "_search_part"):
        marker = tmp_path / f"{name}-died"
        real = getattr(arcbatch.ray, name)

        def dies_once(*args, marker=marker, real=real):
            if not marker.exists():
                marker.touch()
                os._exit(1)
            return real(*args)

        monkeypatch.setattr(arcbatch.ray, name, dies_once)
    solvers = shared("ref/arc-dsl/solvers.py")
    tasks = training_subset(4)
    distributed = arcbatch.ray.batt(solvers, tasks, cross=True, timeout_ms=CROSS_TIMEOUT_MS, chunks=4)
    local = arcbatch.batt(solvers, tasks, cross=True, timeout_ms=CROSS_TIMEOUT_MS)
    assert without_seconds(distributed) == without_seconds(local)
    ray_search(tmp_path / "found")
    assert files(tmp_path / "found") == cli_search
    assert (tmp_path / "_batt_part-died").exists() and (tmp_path / "_search_part-died").exists()
