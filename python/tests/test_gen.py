"""The Python module `arcbatch gen --python` writes (generated/dsl.py): it imports, runs on the
demo tasks with arcbatch's batched operations, and scores every program on every task exactly
as `arcbatch batt --cross` scores the batt text file generated beside it."""

import importlib.util
import json
import subprocess

from conftest import REPO
from test_solvers import cli_binary


def load_generated():
    spec = importlib.util.spec_from_file_location("generated_dsl", REPO / "generated" / "dsl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def demo_tasks():
    return {p.stem: json.loads(p.read_text()) for p in sorted((REPO / "dsl" / "demo").glob("*.json"))}


def test_generated_module_scores_as_batt_does(tmp_path):
    module = load_generated()
    got = module.evaluate(demo_tasks())
    report = tmp_path / "batt.json"
    subprocess.run(
        [str(cli_binary()), "batt", "--solvers", str(REPO / "generated" / "dsl.batt"),
         "--tasks", str(REPO / "dsl" / "demo"), "--cross", "--json", str(report)],
        check=True, capture_output=True,
    )
    expected = json.loads(report.read_text())["matches"]

    def key(m):
        return (m["task"], m["solver"], m["correct"], m["pairs"])

    assert len(got) == len(module.PROGRAMS) * len(demo_tasks())
    assert sorted(map(key, got)) == sorted(map(key, expected))
    assert any(m["correct"] == m["pairs"] for m in got)


def test_the_fallback_gives_the_same_outputs(monkeypatch):
    """With every batched call failing, the per-sample fallback gives the same scores."""
    module = load_generated()
    tasks = demo_tasks()
    batched = module.evaluate(tasks)

    class Broken:
        def __getattr__(self, name):
            def fail(*args, **kwargs):
                raise RuntimeError("no batched operations here")
            return fail

    monkeypatch.setattr(module, "_batch", Broken())
    assert module.evaluate(tasks) == batched
