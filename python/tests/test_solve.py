"""arcbatch.solve: programs found for tasks never seen, as `arcbatch solve` finds them; the
submission, the library, bad input, and arcbatch.ray.solve's chunks joining into the same."""

import json
import subprocess

import pytest

import arcbatch

from conftest import REPO
from test_solvers import cli_binary

# Programs evaluated per task at most: the runs stop on this, not on time, so they are the same
# on any machine and any number of threads or Ray workers. 20 000 finds 2 of the 6 demo
# tasks, 40 000 finds 3, 80 000 finds 4 (in about a second).
MAX_CANDIDATES = 80_000
# A budget the runs above never reach.
MINUTES = 30.0

MIRROR = "def solve_anything(I):\n    O = vmirror(I)\n    return O\n"
TASK = {
    "train": [{"input": [[1, 0]], "output": [[0, 1]]}, {"input": [[2, 2, 0]], "output": [[0, 2, 2]]}],
    "test": [{"input": [[3, 0, 0]]}],
}


def demo_tasks() -> dict:
    """The demo task files, by id (their test outputs included)."""
    return {p.stem: json.loads(p.read_text()) for p in sorted((REPO / "dsl" / "demo").glob("*.json"))}


@pytest.fixture(scope="module")
def demo_solved() -> dict:
    """arcbatch.solve on the embedded demo tasks (no tasks given), without a library."""
    return arcbatch.solve(minutes=MINUTES, max_candidates=MAX_CANDIDATES)


def test_the_demo_tasks_are_solved_without_their_test_outputs(demo_solved):
    tasks = demo_tasks()
    assert set(demo_solved) == {"report", "submission", "skipped"} and demo_solved["skipped"] == []
    submission, report = demo_solved["submission"], demo_solved["report"]
    assert set(submission) == set(tasks) == set(report["results"])
    hit = 0
    for task_id, task in tasks.items():
        entries = submission[task_id]
        assert len(entries) == len(task["test"])
        assert all(set(e) == {"attempt_1", "attempt_2"} for e in entries)
        assert all(isinstance(g, list) and all(isinstance(row, list) for row in g) for e in entries for g in e.values())
        hit += all(ex["output"] in entry.values() for ex, entry in zip(task["test"], entries))
    assert hit >= 3, f"only {hit} demo tasks hit"
    assert report["tasks"] == len(tasks) and report["with_candidate"] >= hit
    for entry in report["results"].values():
        assert entry["error"] is None and entry["evaluations"] <= MAX_CANDIDATES
        assert all(c["program"].startswith("def solve_") for c in entry["chosen"])


def test_the_submission_is_the_command_lines(demo_solved, tmp_path):
    path = tmp_path / "cli.json"
    command = [cli_binary(), "solve", "--submission", path, "--max-candidates", str(MAX_CANDIDATES)]
    subprocess.run(command + ["--minutes", str(MINUTES)], check=True, capture_output=True)
    assert json.loads(path.read_text()) == demo_solved["submission"]


def test_the_submission_file_is_written_and_a_library_solver_comes_first(tmp_path):
    path = tmp_path / "submission.json"
    result = arcbatch.solve(TASK, library=MIRROR, max_candidates=1000, threads=1, submission=path)
    assert json.loads(path.read_text()) == result["submission"]
    assert result["submission"]["task"][0]["attempt_1"] == [[0, 0, 3]]
    chosen = result["report"]["results"]["task"]["chosen"]
    assert chosen[0]["origin"] == "library solver solve_anything"
    assert chosen[0]["program"].startswith("def solve_task(I):")
    # The same library from a file, and from a folder of them.
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "mirror.py").write_text(MIRROR)
    for library in (tmp_path / "library" / "mirror.py", tmp_path / "library"):
        again = arcbatch.solve(TASK, library=library, max_candidates=1000)
        assert again["report"]["results"]["task"]["chosen"] == chosen


def test_bad_input_raises_what_run_raises(tmp_path):
    with pytest.raises(arcbatch.ArcbatchError) as run_missing:
        arcbatch.run(tmp_path / "missing.py", TASK)
    with pytest.raises(arcbatch.InputError, match="missing.py.*No such file") as solve_missing:
        arcbatch.solve(TASK, library=tmp_path / "missing.py")
    assert type(solve_missing.value) is type(run_missing.value)
    with pytest.raises(arcbatch.InputError, match="cannot read"):
        arcbatch.solve(tmp_path / "missing")
    with pytest.raises(arcbatch.InputError, match='<library>:2:9: unknown name "vmiror"'):
        arcbatch.solve(TASK, library=MIRROR.replace("vmirror", "vmiror"))
    for minutes in (-1, float("inf"), float("nan"), "1", True):
        with pytest.raises(arcbatch.InputError, match="minutes must be a finite number of at least 0"):
            arcbatch.solve(TASK, minutes=minutes)
    with pytest.raises(arcbatch.InputError, match="max_candidates must be a non-negative int, got -1"):
        arcbatch.solve(TASK, max_candidates=-1)
    with pytest.raises(arcbatch.InputError, match="threads must be at least 1"):
        arcbatch.solve(TASK, threads=0)
    with pytest.raises(arcbatch.ArcbatchError, match="unknown backend"):
        arcbatch.solve(TASK, backend="tpu")


def test_the_emulated_backend_gives_the_cpus_submission(demo_solved):
    emu = arcbatch.solve(minutes=MINUTES, max_candidates=MAX_CANDIDATES, backend="emu")
    assert emu["submission"] == demo_solved["submission"]
    assert without_seconds(emu["report"]["results"]) == without_seconds(demo_solved["report"]["results"])
    assert emu["report"]["values"] == demo_solved["report"]["values"]


def test_a_task_without_test_inputs_gets_its_reason_and_an_empty_entry():
    result = arcbatch.solve({"empty": dict(TASK, test=[])}, max_candidates=100)
    assert result["report"]["results"]["empty"]["error"] == "the task has no test inputs"
    assert result["submission"] == {"empty": []}


def without_seconds(results: dict) -> dict:
    return {task: dict(entry, seconds=None) for task, entry in results.items()}


@pytest.fixture
def local_ray():
    """A local Ray with 2 CPUs, as test_ray.py's; skipped where Ray is not installed."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'arcbatch[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_chunks_join_into_the_same_submission(demo_solved, local_ray, tmp_path):
    import arcbatch.ray

    path = tmp_path / "submission.json"
    distributed = arcbatch.ray.solve(workers=4, minutes=MINUTES, max_candidates=MAX_CANDIDATES, submission=path, progress=False)
    assert distributed["submission"] == demo_solved["submission"]
    assert json.loads(path.read_text()) == demo_solved["submission"]
    assert list(distributed["submission"]) == sorted(demo_tasks())
    local, joined = demo_solved["report"], distributed["report"]
    assert {k: joined[k] for k in arcbatch.ray.SOLVE_COUNTS} == {k: local[k] for k in arcbatch.ray.SOLVE_COUNTS}
    assert without_seconds(joined["results"]) == without_seconds(local["results"])
    with pytest.raises(arcbatch.InputError, match="workers must be at least 1"):
        arcbatch.ray.solve(workers=0)
