"""``arcbatch.ray``: :func:`arcbatch.batt`, :func:`arcbatch.solve` and ``arcbatch search``
spread over a Ray cluster.

An optional extra (``pip install 'arcbatch[ray]'``); nothing else in arcbatch imports Ray.

- :func:`batt` returns exactly :func:`arcbatch.batt`'s report, computed by Ray tasks over
  chunks of the solvers (and of the tasks, when there are fewer solvers than chunks).
- :func:`solve` runs :func:`arcbatch.solve` on chunks of the tasks at once, each under the
  whole time budget, and joins their results in task order.
- :func:`search` runs the rounds of ``arcbatch search``, each round's programs evaluated in
  chunks over the cluster, and harvests into ``out`` exactly what the command harvests with
  the same arguments.

Each chunk is one call of the Rust engine (the GIL released) on a range of the programs; the
native module does the cutting and the joining (``_arcbatch.BattParts``,
``_arcbatch.SearchRounds``), so a part's results are those of the same programs in one run.
The tasks and programs go to the object store once per call (``ray.put``) and are parsed
once per worker process, not once per chunk. A chunk whose worker dies is run again by Ray
(``max_retries``); results are collected by chunk index, so a retry neither loses nor
duplicates any. Progress goes to stderr: chunk counts for :func:`batt`, a line per round for
:func:`search`.

With no ``address`` and no Ray running, ``ray.init()`` starts Ray on this machine.
"""

import json
import math
import os
import sys
import time
import warnings
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("arcbatch.ray needs Ray: pip install 'arcbatch[ray]'") from e

from . import _arcbatch, _run
from ._arcbatch import InputError
from ._run import (
    PathLike,
    _backend,
    _check_counts,
    _minutes,
    _program_args,
    _task_args,
    _tasks_or_demo,
    _warn_skipped,
    _write_submission,
)

Range = Tuple[int, int]

# Chunks per CPU of the cluster when `chunks` is not given. batt: enough for a slow chunk not
# to hold up the others much, few enough for the per-chunk cost to stay small. search: fewer,
# as a round's programs share steps only within a chunk (a solver and its mutants).
BATT_CHUNKS_PER_CPU = 16
SEARCH_CHUNKS_PER_CPU = 4
# The counts of arcbatch.solve's report, over its tasks: a joined report's are the chunks' sums.
SOLVE_COUNTS = ("tasks", "with_candidate", "evaluations", "values")


def batt(
    solvers: Union[PathLike, Any],
    tasks: Union[PathLike, Dict[str, Any]],
    cross: bool = False,
    differs: Optional[Union[PathLike, Any]] = None,
    timeout_ms: int = 2000,
    address: Optional[str] = None,
    chunks: Optional[int] = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
    progress: bool = True,
    backend: str = "auto",
) -> Dict[str, Any]:
    """:func:`arcbatch.batt`'s report, computed by Ray tasks.

    ``solvers``, ``tasks``, ``cross``, ``differs``, ``timeout_ms`` and ``backend`` are as for
    :func:`arcbatch.batt` (paths are read here, on the driver; each chunk runs on the backend
    of that name on its worker). The solvers (and, when there
    are fewer solvers than chunks, the tasks) are cut into ``chunks`` contiguous ranges
    (default: 16 per CPU of the cluster), each evaluated by one Ray task using
    ``cpus_per_task`` CPUs and as many threads. ``address`` is the cluster's (``ray.init``'s);
    Ray already running is used as it is. ``max_retries``: how many times a chunk whose
    worker died is run again. The report's ``seconds`` is the wall time of the whole call;
    everything else is :func:`arcbatch.batt`'s.
    """
    _check_counts(timeout_ms=timeout_ms, max_retries=max_retries)
    _check_positive(chunks=chunks, cpus_per_task=cpus_per_task)
    started = time.perf_counter()
    wire, _ = _tasks(_task_args(tasks))
    differ_source = None if differs is None else _source(differs, "differs")
    work = (_source(solvers, "solvers"), wire, differ_source, bool(cross), _backend(backend))
    shape = _arcbatch.BattParts(*work).shape()
    _connect(address)
    ranges = _cut(shape["solvers"], shape["tasks"], _chunks(chunks, BATT_CHUNKS_PER_CPU, cpus_per_task), bool(cross))
    shared = ray.put(work)
    calls = [(s, t, timeout_ms, cpus_per_task) for s, t in ranges]
    results = _gather(_batt_part, shared, calls, cpus_per_task, max_retries, "batt" if progress else None)
    keyed = [pair for keys, matches in results for pair in zip(keys, json.loads(matches))]
    keyed.sort(key=lambda pair: pair[0])
    return {
        "lanes": shape["lanes"],
        "matches": [m for _, m in keyed],
        "seconds": time.perf_counter() - started,
        "steps_merged": shape["steps_merged"],
        "steps_total": shape["steps_total"],
    }


def search(
    library: PathLike,
    tasks: Union[PathLike, Dict[str, Any]],
    out: PathLike,
    rounds: int = 10,
    seed: int = 0,
    count: int = 32,
    mutate: float = 0.0,
    mutants: int = 1,
    rewrite: bool = True,
    timeout_ms: int = 5,
    max_size: int = 50_000,
    memory_mb: int = 512,
    early_exit: bool = True,
    address: Optional[str] = None,
    chunks: Optional[int] = None,
    cpus_per_task: int = 1,
    max_retries: int = 3,
    progress: bool = True,
) -> Dict[str, Any]:
    """The rounds of ``arcbatch search``, each round's programs evaluated over the cluster.

    The arguments are the command's flags: ``arcbatch search --library LIBRARY --tasks TASKS
    --out OUT --rounds R --seed S --count C --mutate M --mutants K [--no-rewrites]
    --timeout-ms T --max-size N --memory MB [--no-early-exit]`` harvests into ``out``
    byte for byte what this does with the same values (``library`` given as the same path:
    the harvested notes name its files). The library and tasks are read here, on the driver,
    and ``out`` is written here. Each round's programs are generated here, cut into ``chunks``
    runs (default: 4 per CPU of the cluster), each evaluated by one Ray task on every task,
    and the results joined and harvested here. ``address``, ``cpus_per_task``,
    ``max_retries`` and ``progress`` are as for :func:`batt`. There is no ``--minutes``
    here.

    Returns ``{"known", "solutions", "tasks", "seconds", "rounds"}``: the solutions in
    ``out`` before and after, the tasks they solve, the wall time, and per round its counts
    (``programs``, ``steps``, ``evaluated``, ``program_samples``, ``alive``, ``chunks``,
    ``timed_out``, ``too_large``, ``equivalent``, ``solving``, ``novel``, ``new``: the new
    solutions as (task, file), ``solutions`` and ``tasks`` so far, ``seconds``).
    """
    _check_counts(
        rounds=rounds,
        seed=seed,
        count=count,
        mutants=mutants,
        timeout_ms=timeout_ms,
        max_size=max_size,
        memory_mb=memory_mb,
        max_retries=max_retries,
    )
    _check_positive(chunks=chunks, cpus_per_task=cpus_per_task)
    if isinstance(mutate, bool) or not isinstance(mutate, (int, float)):
        raise InputError(f"mutate must be a number in 0..1, got {mutate!r}")
    if not isinstance(library, (str, os.PathLike)):
        raise InputError(f"library must be a path, got {type(library).__name__}")
    started = time.perf_counter()
    name = os.fspath(library)
    work = {
        "library": _arcbatch.library_files(name),
        "name": name,
        "tasks": _tasks(_task_args(tasks))[0],
        "count": count,
        "seed": seed,
        "mutate": float(mutate),
        "mutants": mutants,
        "rewrite": bool(rewrite),
        "timeout_ms": timeout_ms,
        "max_size": max_size,
        "memory_mb": memory_mb,
        "early_exit": bool(early_exit),
    }
    driver = _arcbatch.SearchRounds(**work)
    if count > driver.library_size:
        warnings.warn(
            f"arcbatch: note: count {count} is more than the library's {driver.library_size} solvers; "
            "all are used each round",
            stacklevel=2,
        )
    known, solved = driver.open(os.fspath(out))
    _connect(address)
    n_chunks = _chunks(chunks, SEARCH_CHUNKS_PER_CPU, cpus_per_task)
    shared = ray.put(work)
    report: Dict[str, Any] = {"known": known, "rounds": []}
    for r in range(rounds):
        round_started = time.perf_counter()
        label = driver.label(r)
        ranges = _split(driver.programs(r), n_chunks)
        calls = [(r, programs, cpus_per_task) for programs in ranges]
        parts = _gather(_search_part, shared, calls, cpus_per_task, max_retries, None)
        done = driver.harvest(r, parts)
        done["seconds"] = time.perf_counter() - round_started
        report["rounds"].append(done)
        if progress:
            print(
                f"arcbatch.ray: search {label}: {done['programs']} programs in {len(ranges)} chunks, "
                f"{done['program_samples']} evaluated program-samples; {done['solving']} solving runs, "
                f"{len(done['new'])} new solutions ({done['novel']} novel), {done['equivalent']} equivalent "
                f"programs left out, budget hit by {done['timed_out']} (time) and {done['too_large']} (size); "
                f"{done['seconds']:.2f} s; found so far {done['solutions']} solutions for {done['tasks']} tasks",
                file=sys.stderr,
                flush=True,
            )
    last = report["rounds"][-1] if report["rounds"] else {"solutions": known, "tasks": solved}
    report["solutions"], report["tasks"] = last["solutions"], last["tasks"]
    report["seconds"] = time.perf_counter() - started
    return report


def solve(
    tasks: Optional[Union[PathLike, Dict[str, Any]]] = None,
    *,
    workers: Optional[int] = None,
    minutes: float = 1.0,
    library: Optional[Union[PathLike, Any]] = None,
    max_candidates: Optional[int] = None,
    memory_mb: int = 1024,
    cpus_per_task: int = 1,
    address: Optional[str] = None,
    max_retries: int = 3,
    submission: Optional[PathLike] = None,
    progress: bool = True,
) -> Dict[str, Any]:
    """:func:`arcbatch.solve`'s result, the tasks solved in ``workers`` chunks by Ray tasks.

    ``tasks``, ``library``, ``max_candidates`` and ``submission`` are as for
    :func:`arcbatch.solve`; the tasks and the library are read here, on the driver (a library
    folder's ``*.py`` files joined in path order), and the submission is written here. The
    tasks are cut into ``workers`` contiguous chunks (default: one per ``cpus_per_task`` CPUs
    of the cluster), each solved by one Ray task on ``cpus_per_task`` threads with the whole
    ``minutes`` and ``memory_mb``: the chunks run at once when the cluster has room for them
    all, so the call takes about ``minutes``. ``address``, ``max_retries`` and ``progress`` are
    as for :func:`batt`.

    The result joins the chunks' in task order: the submission and the report's ``results``
    are those of each chunk, the report's counts their sums and its ``seconds`` the wall time
    of the whole call. With ``max_candidates`` reached before ``minutes`` on every task, the
    submission is :func:`arcbatch.solve`'s with the same arguments.
    """
    _check_counts(max_candidates=max_candidates, memory_mb=memory_mb, max_retries=max_retries)
    _check_positive(workers=workers, cpus_per_task=cpus_per_task)
    started = time.perf_counter()
    wire, skipped = _tasks(_tasks_or_demo(tasks))
    listed = json.loads(wire)
    options = {
        "minutes": _minutes(minutes),
        "library": _library_source(library),
        "max_candidates": max_candidates,
        "memory_mb": memory_mb,
        "threads": cpus_per_task,
    }
    _connect(address)
    chunks = _split(len(listed), _chunks(workers, 1, cpus_per_task))
    shared = ray.put(options)
    calls = [({t["id"]: {"train": t["train"], "test": t["test"]} for t in listed[a:b]},) for a, b in chunks]
    parts = _gather(_solve_part, shared, calls, cpus_per_task, max_retries, "solve" if progress else None)
    reports = [part["report"] for part in parts]
    report: Dict[str, Any] = {key: sum(r[key] for r in reports) for key in SOLVE_COUNTS}
    report["seconds"] = time.perf_counter() - started
    report["results"] = {task: entry for r in reports for task, entry in r["results"].items()}
    joined = {task: attempts for part in parts for task, attempts in part["submission"].items()}
    if submission is not None:
        _write_submission(submission, json.dumps(joined, separators=(",", ":")))
    return {"report": report, "submission": joined, "skipped": skipped}


# On the workers: each worker process parses a call's shared work once, kept by its object's
# id (the last few calls' only).
_WORK: "OrderedDict[str, Any]" = OrderedDict()
_WORK_KEPT = 4


def _work(shared: List["ray.ObjectRef"], build: Callable[[Any], Any]) -> Any:
    """The parsed work of the object ``shared[0]`` (passed inside a list, so that Ray hands
    over the reference, not the value): built on this worker's first chunk of the call."""
    key = shared[0].hex()
    if key not in _WORK:
        _WORK[key] = build(ray.get(shared[0]))
        while len(_WORK) > _WORK_KEPT:
            _WORK.popitem(last=False)
    return _WORK[key]


def _batt_part(shared, solvers: Range, tasks: Range, timeout_ms: int, threads: int):
    """One chunk of :func:`batt`: (each match's (task, solver) place, the matches' JSON)."""
    parts = _work(shared, lambda work: _arcbatch.BattParts(*work))
    return parts.run(solvers, tasks, timeout_ms=timeout_ms, threads=threads)


def _search_part(shared, round: int, programs: Range, threads: int) -> str:
    """One chunk of a :func:`search` round: the evaluation of a run of its programs (JSON)."""
    rounds = _work(shared, lambda work: _arcbatch.SearchRounds(**work))
    return rounds.evaluate(round, programs, threads=threads)


def _solve_part(shared, tasks: Dict[str, Any]) -> Dict[str, Any]:
    """One chunk of :func:`solve`: :func:`arcbatch.solve` on its tasks."""
    return _run.solve(tasks, **ray.get(shared[0]))


def _gather(
    function: Callable[..., Any],
    shared: "ray.ObjectRef",
    calls: Sequence[tuple],
    cpus: int,
    retries: int,
    what: Optional[str],
) -> List[Any]:
    """``function(shared, *call)`` for each call, as Ray tasks; the results in call order.
    With ``what``, a line on stderr as chunks finish (at most one a second, and the last)."""
    remote = ray.remote(function).options(num_cpus=cpus, max_retries=retries, retry_exceptions=False)
    refs = [remote.remote([shared], *call) for call in calls]
    index = {ref: k for k, ref in enumerate(refs)}
    results: List[Any] = [None] * len(refs)
    started = last = time.perf_counter()
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            results[index[ref]] = ray.get(ref)
        now = time.perf_counter()
        if what and (now - last >= 1 or not pending):
            last = now
            done = len(refs) - len(pending)
            print(f"arcbatch.ray: {what}: {done}/{len(refs)} chunks done, {now - started:.1f} s", file=sys.stderr, flush=True)
    return results


def _check_positive(**counts: Optional[int]) -> None:
    """Raises InputError unless each count is None or an int of at least 1."""
    _check_counts(**counts)
    for name, n in counts.items():
        if n == 0:
            raise InputError(f"{name} must be at least 1, got 0")


def _connect(address: Optional[str]) -> None:
    """Ray as it runs, else ``ray.init(address)`` (with no address: on this machine)."""
    if not ray.is_initialized():
        ray.init(address=address)


def _chunks(chunks: Optional[int], per_cpu: int, cpus_per_task: int) -> int:
    """The chunks asked for, else ``per_cpu`` per task slot of the cluster."""
    if chunks is not None:
        return chunks
    slots = int(ray.cluster_resources().get("CPU", 1)) // cpus_per_task
    return per_cpu * max(1, slots)


def _split(n: int, parts: int) -> List[Range]:
    """``range(n)`` cut into at most ``parts`` contiguous ranges of about equal length."""
    parts = max(1, min(parts, n))
    return [(k * n // parts, (k + 1) * n // parts) for k in range(parts)] if n else []


def _cut(solvers: int, tasks: int, chunks: int, cross: bool) -> List[Tuple[Range, Range]]:
    """(solvers, tasks) ranges covering every pair once, about ``chunks`` of them. Without
    ``cross`` each solver has its own task: chunks of the solvers. With it, a grid: about
    as many runs of the tasks as of the solvers (more runs of the tasks when there are few
    solvers), so that a solver slow on every task (the published solve_d22278a0 is 60 % of
    the training run's time) is spread too."""
    if not cross or tasks <= 1:
        return [(s, (0, tasks)) for s in _split(solvers, chunks)]
    task_runs = min(tasks, math.isqrt(chunks - 1) + 1)
    solver_runs = _split(solvers, -(-chunks // task_runs))
    task_runs = min(tasks, -(-chunks // max(1, len(solver_runs))))
    return [(s, t) for s in solver_runs for t in _split(tasks, task_runs)]


def _source(programs: Union[PathLike, Any], what: str) -> Tuple[str, str]:
    """A program file given as a path, source text or module, as (name, source)."""
    args = _program_args(programs, what)
    if f"{what}_source" in args:
        return (f"<{what}>", args[f"{what}_source"])
    path = args[f"{what}_path"]
    try:
        with open(path, encoding="utf-8") as f:
            return (path, f.read())
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: {e}") from None


def _library_source(library: Optional[Union[PathLike, Any]]) -> Optional[str]:
    """The library as one source text, read here: source text as it is, a solver file's text,
    or a folder's ``*.py`` files joined in path order (the solvers ``arcbatch solve --library``
    reads from the folder, in the same order)."""
    if library is None:
        return None
    args = _program_args(library, "library")
    if "library_source" in args:
        return args["library_source"]
    path = args["library_path"]
    files = _arcbatch.library_files(path)
    if not files:
        raise InputError(f"{path}: the library folder holds no .py files")
    return "".join(text if text.endswith("\n") else text + "\n" for _, text in files)


def _tasks(task_args: Dict[str, str]) -> Tuple[str, List[str]]:
    """Tasks (given as the native call's arguments) loaded here as the native task list, and
    the problems met: tasks that cannot be loaded are skipped with a warning, as
    :func:`arcbatch.batt` skips them."""
    wire, skipped = _arcbatch.tasks_wire(**task_args)
    _warn_skipped(skipped, stacklevel=4)
    return wire, skipped
