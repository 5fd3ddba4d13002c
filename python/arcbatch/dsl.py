"""Every primitive and constant of the ARC DSL, with the reference's Python types.

``from arcbatch.dsl import *`` stands in for the reference's ``from dsl import *`` and
``from constants import *``: a ``solvers.py`` written for the reference runs unmodified, with
the same results. Grids are tuples of row tuples (a 2-D numpy integer array is accepted too),
patches are frozensets of ``(row, column)`` or ``(colour, (row, column))`` tuples, and results
come back as the same types.

Primitives are :class:`arcbatch.Function` values: call them, or pass them to ``compose``,
``rbind``, ``apply``, ... as the reference does. Any Python callable (a lambda, a ``def``, a
``functools.partial``, a builtin) works where the reference takes a function, and is called
back with the reference's arguments; DSL function values are faster there. A primitive that raises in the reference raises here too, as an
:class:`arcbatch.DslError` that also derives from the reference's exception class.

>>> from arcbatch.dsl import *
>>> vmirror(((1, 2), (3, 4)))
((2, 1), (4, 3))
>>> size(objects(((1, 0), (0, 1)), T, T, T))
1
>>> compose(size, first)(((1, 2, 3),))
3
>>> divide(1, 0)
Traceback (most recent call last):
...
arcbatch.DslZeroDivisionError: divide: ZeroDivisionError: integer division or modulo by zero

Calls can be interrupted: a signal handler that raises (Ctrl-C's ``KeyboardInterrupt``, a
``SIGALRM`` timer's exception) stops a running call within milliseconds, and the call raises
that exception. :func:`time_limit` bounds each call instead.
"""

import contextlib
import copyreg
from typing import Iterator, Optional

from . import _arcbatch
from .types import *  # noqa: F401,F403 (the reference's type names)
from .types import __all__ as _type_names

globals().update(_arcbatch.primitives())
globals().update(_arcbatch.constants())


def _primitive(name: str) -> "_arcbatch.Function":
    """The primitive called ``name`` (how primitives unpickle)."""
    return globals()[name]


def _reduce(function: "_arcbatch.Function"):
    """Primitives pickle by name (for multiprocessing); closures do not pickle."""
    if not function.is_primitive:
        raise TypeError(f"only primitives can be pickled, not {function!r}")
    return _primitive, (function.__name__,)


copyreg.pickle(_arcbatch.Function, _reduce)


def set_time_limit(seconds: Optional[float]) -> Optional[float]:
    """Limits every later call of a DSL function made from this thread to ``seconds`` (``None``
    lifts the limit): a call that runs longer raises :class:`arcbatch.DslTimeoutError`. The
    clock is read where interruption is checked (at least every few milliseconds of a long
    call). Returns the limit it replaces."""
    return _arcbatch.set_time_limit(seconds)


def set_memory_limit(mb: Optional[int]) -> Optional[int]:
    """Limits what every later DSL call (from any thread) may allocate to ``mb`` megabytes
    (``None`` lifts the limit): a call whose values would take more raises
    :class:`arcbatch.DslLimitError`, a ``MemoryError``, as the reference raises ``MemoryError``
    when memory runs out. The default is 2048, or half the address space where the process has
    a limit on it (``resource.RLIMIT_AS``), so that a giant value fails its call instead of the
    process. Returns the limit it replaces."""
    return _arcbatch.set_memory_limit(mb)


@contextlib.contextmanager
def time_limit(seconds: Optional[float]) -> Iterator[None]:
    """Within the ``with`` block, each DSL call of this thread runs at most ``seconds``.

    >>> with time_limit(0.5):
    ...     size(interval(0, 10, 1))
    10
    """
    previous = _arcbatch.set_time_limit(seconds)
    try:
        yield
    finally:
        _arcbatch.set_time_limit(previous)

__all__ = sorted(_arcbatch.primitives()) + sorted(_arcbatch.constants()) + list(_type_names)
