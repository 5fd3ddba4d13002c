"""The reference's type names (``arc_types.py``), for annotations.

``from arcbatch.dsl import *`` brings them in, as ``from dsl import *`` does with the
reference, together with the ``typing`` names the reference re-exports.
"""

from typing import Any, Callable, Container, FrozenSet, Iterable, List, Tuple, Union

Boolean = bool
Integer = int
# A location, direction or shape: (row, column) or (height, width).
IntegerTuple = Tuple[Integer, Integer]
Numerical = Union[Integer, IntegerTuple]
IntegerSet = FrozenSet[Integer]
# Rows of colours.
Grid = Tuple[Tuple[Integer]]
# (colour, (row, column))
Cell = Tuple[Integer, IntegerTuple]
Object = FrozenSet[Cell]
Objects = FrozenSet[Object]
Indices = FrozenSet[IntegerTuple]
IndicesSet = FrozenSet[Indices]
Patch = Union[Object, Indices]
Element = Union[Object, Grid]
Piece = Union[Grid, Patch]
TupleTuple = Tuple[Tuple]
ContainerContainer = Container[Container]

__all__ = [
    "Any",
    "Callable",
    "Container",
    "FrozenSet",
    "Iterable",
    "List",
    "Tuple",
    "Union",
    "Boolean",
    "Integer",
    "IntegerTuple",
    "Numerical",
    "IntegerSet",
    "Grid",
    "Cell",
    "Object",
    "Objects",
    "Indices",
    "IndicesSet",
    "Patch",
    "Element",
    "Piece",
    "TupleTuple",
    "ContainerContainer",
]
