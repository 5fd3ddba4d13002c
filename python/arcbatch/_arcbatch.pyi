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
) -> Tuple[str, List[str]]:
    """The static (no tasks) or dynamic profile of a solver file: (JSON, tasks skipped)."""

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
