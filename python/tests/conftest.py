"""Shared helpers of the Python tests: where the repository and ``../shared`` are.

``../shared`` (the golden corpus and the ARC data) sits beside the checkout, or where
``ARCBATCH_SHARED`` says; the project keeps no copy. Without it, the tests that need it are
skipped with a note; under ``CI=true`` its absence fails them instead, as in the Rust tests.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared(sub: str) -> Path:
    """The path of ``sub`` inside the shared folder; skips (fails under CI) when missing."""
    root = Path(os.environ.get("ARCBATCH_SHARED") or REPO.parent / "shared")
    path = root / sub
    if path.exists():
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{path} is missing, and under CI=true tests that need it may not be skipped")
    pytest.skip(f"{path} not found (set ARCBATCH_SHARED)")


def same(a, b) -> bool:
    """Equality that also tells bool from int and tuple from frozenset, at every level."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, frozenset):
        return canonical(a) == canonical(b)
    return a == b


def canonical(v) -> str:
    """The golden corpus's canonical text of a value (bools first, sets sorted by text)."""
    from arcbatch import Function

    if v is True or v is False:
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, tuple):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, frozenset):
        return '{"fs":[' + ",".join(sorted(canonical(x) for x in v)) + "]}"
    if isinstance(v, Function):
        return '{"fn":"' + v.__name__ + '"}'
    raise TypeError(f"not a DSL value: {v!r}")
