"""Batched DSL calls: one function over a list of values (usually grids), in parallel.

The work runs on arcbatch's thread pool with the GIL released, so other Python threads go on
meanwhile. Every primitive has a batched form here that varies its first argument:
``batch.objects(grids, T, F, T)`` is ``[objects(g, T, F, T) for g in grids]``.
Use it as ``from arcbatch import batch`` (the module defines ``map``, which a star import
would let shadow the builtin).

>>> from arcbatch import batch
>>> from arcbatch.dsl import T, F, ONE, add
>>> batch.size([((1, 2),), ((1,), (2,), (3,))])
[1, 3]
>>> [len(objs) for objs in batch.objects([((1, 0), (0, 1)), ((1, 1), (0, 0))], T, F, T)]
[2, 1]
>>> batch.map(add, [1, 2, 3], ONE)
[2, 3, 4]
"""

from typing import Any, Iterable, List, Optional

from . import _arcbatch
from ._arcbatch import Function, InputError
from ._run import _check_counts

_ERRORS = ("raise", "return")


def map(
    function: Function,
    items: Iterable[Any],
    *args: Any,
    errors: str = "raise",
    threads: Optional[int] = None,
    timeout_ms: Optional[int] = None,
) -> List[Any]:
    """``[function(item, *args) for item in items]``, computed in parallel.

    Parameters
    ----------
    function
        A DSL function value: a primitive (``arcbatch.dsl.objects``) or what ``compose``,
        ``rbind``, ... return.
    items
        The values for the first argument: grids, patches, any DSL values.
    *args
        The other arguments, the same for every item.
    errors
        ``"raise"`` (the default): the first item that fails raises its
        :class:`arcbatch.DslError`. ``"return"``: the exception object takes that item's place
        in the result and the others are still computed.
    threads
        Worker threads; the default is the shared pool (``ARCBATCH_THREADS`` or all cores).
    timeout_ms
        A time limit per item (:class:`arcbatch.DslTimeoutError` past it).
    """
    if errors not in _ERRORS:
        raise InputError(f"errors must be one of {_ERRORS}, got {errors!r}")
    _check_counts(threads=threads, timeout_ms=timeout_ms)
    return _arcbatch.map(function, items, args, errors == "raise", threads, timeout_ms)


def _batched(primitive: Function):
    def batched(items, *args, errors="raise", threads=None, timeout_ms=None):
        return map(primitive, items, *args, errors=errors, threads=threads, timeout_ms=timeout_ms)

    name = primitive.__name__
    batched.__name__ = batched.__qualname__ = name
    batched.__doc__ = (
        f"``[{name}(item, *args) for item in items]`` in parallel; "
        f"see :func:`arcbatch.batch.map` for the keyword arguments."
    )
    return batched


globals().update({name: _batched(p) for name, p in _arcbatch.primitives().items()})
