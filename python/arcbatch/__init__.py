"""arcbatch: fast, bit-exact evaluation of Michael Hodel's ARC DSL, from Python.

- :mod:`arcbatch.dsl`: every primitive and constant, with the reference's Python types
  (``from arcbatch.dsl import *`` replaces ``from dsl import *`` and ``from constants import *``).
- :func:`arcbatch.run`: solver files on ARC tasks, as ``arcbatch run`` on the command line.
- :func:`arcbatch.batt`: many solvers merged and evaluated over all samples at once, as
  ``arcbatch batt``.
- :func:`arcbatch.profile`: static and dynamic profiles, as ``arcbatch profile``.
- :func:`arcbatch.solve`: programs found for tasks never seen and a Kaggle submission, as
  ``arcbatch solve``.
- :mod:`arcbatch.batch`: one DSL function over many grids, in parallel.
- :func:`arcbatch.jit`: a Python solver compiled once, then run entirely in Rust;
  :func:`arcbatch.jit_module` does it for every ``solve_*`` of a module.
- :mod:`arcbatch.ray` (``pip install 'arcbatch[ray]'``, imported on its own): ``batt``,
  ``solve`` and ``arcbatch search`` spread over a Ray cluster.

Every exception raised derives from :class:`ArcbatchError`; what a primitive raises is a
:class:`DslError` that also derives from the builtin the reference raises
(:class:`DslValueError` is a ``ValueError``, and so on).
"""

from typing import Any, Iterable

from . import batch, dsl
from ._arcbatch import (
    ArcbatchError,
    DslAttributeError,
    DslError,
    DslIndexError,
    DslKeyError,
    DslLimitError,
    DslRecursionError,
    DslRuntimeError,
    DslStopIteration,
    DslTimeoutError,
    DslTypeError,
    DslValueError,
    DslZeroDivisionError,
    Function,
    InputError,
    InternalError,
    JitFunction,
    __version__,
)
from ._jit import JitWarning, jit, jit_module
from ._run import batt, profile, run, solve


def grid(rows: Iterable[Iterable[Any]]) -> "dsl.Grid":
    """A grid (a tuple of row tuples) from a list of lists, a numpy array or a grid.

    >>> grid([[1, 2], [3, 4]])
    ((1, 2), (3, 4))
    """
    if hasattr(rows, "tolist"):
        rows = rows.tolist()
    return tuple(tuple(int(c) for c in row) for row in rows)


__all__ = [
    "ArcbatchError",
    "DslAttributeError",
    "DslError",
    "DslIndexError",
    "DslKeyError",
    "DslLimitError",
    "DslRecursionError",
    "DslRuntimeError",
    "DslStopIteration",
    "DslTimeoutError",
    "DslTypeError",
    "DslValueError",
    "DslZeroDivisionError",
    "Function",
    "InputError",
    "InternalError",
    "JitFunction",
    "JitWarning",
    "__version__",
    "batch",
    "dsl",
    "grid",
    "batt",
    "jit",
    "jit_module",
    "profile",
    "run",
    "solve",
]
