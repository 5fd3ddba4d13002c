"""Type stub of the native module ``arcbatch._arcbatch`` (python/src/), the thin layer over the
Rust crate. Users import from :mod:`arcbatch` and :mod:`arcbatch.dsl`, not from here."""

import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

__version__: str

class Function:
    """A DSL function value: a primitive, or what ``compose``, ``rbind``, ... return."""

    def __call__(self, *args: Any) -> Any: ...
    @property
    def arity(self) -> int:
        """The number of arguments it takes."""
    @property
    def __name__(self) -> str:
        """A primitive's name, or the closure spelled out (``compose(size, first)``)."""
    @property
    def is_primitive(self) -> bool:
        """True for a primitive of the registry."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class JitFunction:
    """A solver compiled by ``arcbatch.jit``: its source, parsed once, run by the interpreter."""

    def __init__(self, source: str, file: str, first_line: int = 1, timeout_ms: Optional[int] = None) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    @property
    def source(self) -> str:
        """The source it was compiled from (one ``def``)."""
    @property
    def file(self) -> str:
        """The file the source came from."""
    @property
    def first_line(self) -> int:
        """The line of ``file`` the source starts on."""
    @property
    def timeout_ms(self) -> Optional[int]:
        """The time limit of each call (``None``: no limit)."""
    @property
    def program(self) -> str:
        """The compiled program, in the reference's syntax."""

class ArcbatchError(Exception): ...
class DslError(ArcbatchError): ...
class DslTypeError(DslError, TypeError): ...
class DslValueError(DslError, ValueError): ...
class DslIndexError(DslError, IndexError): ...
class DslKeyError(DslError, KeyError): ...
class DslZeroDivisionError(DslError, ZeroDivisionError): ...
class DslStopIteration(DslError, StopIteration): ...
class DslRecursionError(DslError, RecursionError): ...
class DslRuntimeError(DslError, RuntimeError): ...
class DslAttributeError(DslError, AttributeError): ...
class DslLimitError(DslError): ...
class DslTimeoutError(DslError, TimeoutError): ...
class InputError(ArcbatchError, ValueError): ...
class InternalError(ArcbatchError, RuntimeError): ...

def primitives() -> Dict[str, Function]:
    """``{name: Function}`` for every primitive, in registry order."""

def constants() -> Dict[str, Union[bool, int, Tuple[int, int]]]:
    """``{name: value}`` for every constant."""

def signatures() -> List[Tuple[str, List[str], str, str]]:
    """``[(name, [parameter types], result type, doc)]`` for every primitive."""

def run(
    solvers_path: Optional[Union[str, os.PathLike[str]]] = None,
    solvers_source: Optional[str] = None,
    tasks_path: Optional[Union[str, os.PathLike[str]]] = None,
    tasks_json: Optional[str] = None,
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
) -> Tuple[str, str, List[str]]:
    """Runs solvers on tasks: (JSON report, JSON submission, tasks skipped)."""

def batt(
    solvers_path: Optional[Union[str, os.PathLike[str]]] = None,
    solvers_source: Optional[str] = None,
    tasks_path: Optional[Union[str, os.PathLike[str]]] = None,
    tasks_json: Optional[str] = None,
    differs_path: Optional[Union[str, os.PathLike[str]]] = None,
    differs_source: Optional[str] = None,
    cross: bool = False,
    no_merge: bool = False,
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
    backend: str = "auto",
    memory_mb: int = 512,
) -> Tuple[str, List[str]]:
    """Merges solvers and evaluates them over all samples: (JSON report, tasks skipped)."""

def profile(
    solvers_path: Optional[Union[str, os.PathLike[str]]] = None,
    solvers_source: Optional[str] = None,
    tasks_path: Optional[Union[str, os.PathLike[str]]] = None,
    tasks_json: Optional[str] = None,
    cross: bool = False,
    timeout_ms: int = 2000,
    threads: Optional[int] = None,
    backend: str = "auto",
) -> Tuple[str, List[str]]:
    """The static (no tasks) or dynamic profile of a solver file: (JSON, tasks skipped)."""

def solve(
    tasks_path: Optional[Union[str, os.PathLike[str]]] = None,
    tasks_json: Optional[str] = None,
    minutes: float = 1.0,
    library_path: Optional[Union[str, os.PathLike[str]]] = None,
    library_source: Optional[str] = None,
    max_candidates: Optional[int] = None,
    memory_mb: int = 1024,
    threads: Optional[int] = None,
    backend: str = "cpu",
) -> Tuple[str, str, List[str]]:
    """Programs for tasks never seen (no tasks: the demo's): (JSON report, JSON submission, tasks skipped)."""

def map(
    function: Function,
    items: Iterable[Any],
    args: Tuple[Any, ...],
    raise_errors: bool = True,
    threads: Optional[int] = None,
    timeout_ms: Optional[int] = None,
) -> List[Any]:
    """``[function(item, *args) for item in items]`` in parallel."""

def set_time_limit(seconds: Optional[float]) -> Optional[float]:
    """Sets the time limit of each later DSL call of this thread; returns the one replaced."""

def set_memory_limit(mb: Optional[int]) -> Optional[int]:
    """Sets the memory limit, in MB, of each later DSL call; returns the one replaced."""

def allocated_bytes() -> int:
    """The bytes the Rust side of the module holds now, as counted."""

def tasks_wire(
    tasks_path: Optional[Union[str, os.PathLike[str]]] = None, tasks_json: Optional[str] = None
) -> Tuple[str, List[str]]:
    """Tasks (no tasks: the demo's) loaded here as a JSON task list to ship to other processes:
    (text, tasks skipped)."""

def library_files(path: Union[str, os.PathLike[str]]) -> List[Tuple[str, str]]:
    """A library's solver files as ``[(name, source)]``, as ``arcbatch search --library`` reads them."""

class BattParts:
    """A batt run evaluated part by part (a range of its solvers on a range of its tasks)."""
    def __init__(
        self,
        solvers: Tuple[str, str],
        tasks: str,
        differs: Optional[Tuple[str, str]] = None,
        cross: bool = False,
        backend: str = "auto",
    ) -> None: ...
    def shape(self) -> Dict[str, int]:
        """``solvers``, ``tasks``, ``steps_total``, ``steps_merged`` and ``lanes`` of the whole run."""
    def run(
        self, solvers: Tuple[int, int], tasks: Tuple[int, int], timeout_ms: int = 2000, threads: Optional[int] = None
    ) -> Tuple[List[Tuple[int, int]], str]:
        """The part's matches: their (task, solver) places in the whole report, and the JSON list."""

class SearchRounds:
    """The rounds of ``arcbatch search``: generated here, evaluated in parts, harvested here."""
    def __init__(
        self,
        library: List[Tuple[str, str]],
        name: Union[str, os.PathLike[str]],
        tasks: str,
        count: int = 32,
        seed: int = 0,
        mutate: float = 0.0,
        mutants: int = 1,
        rewrite: bool = True,
        timeout_ms: int = 5,
        max_size: int = 50000,
        memory_mb: int = 512,
        early_exit: bool = True,
    ) -> None: ...
    @property
    def library_size(self) -> int: ...
    @property
    def task_count(self) -> int: ...
    def label(self, round: int) -> str:
        """The round's label in progress lines and harvested notes."""
    def programs(self, round: int) -> int:
        """The number of programs of round ``round`` (from 0)."""
    def evaluate(self, round: int, programs: Tuple[int, int], threads: Optional[int] = None) -> str:
        """Programs ``programs`` of the round on every task, under the search's budgets (JSON text)."""
    def open(self, out: Union[str, os.PathLike[str]]) -> Tuple[int, int]:
        """Opens the output folder; the solutions already there, and the tasks they solve."""
    def harvest(self, round: int, parts: List[str]) -> Dict[str, Any]:
        """Joins the round's parts, in order, and harvests them; the round's counts."""
