"""The package itself: the generated stub is up to date, and the docstring examples run."""

import doctest

import pytest

import arcbatch
import arcbatch._jit
import arcbatch._run
import arcbatch._stubgen
import arcbatch.batch
import arcbatch.dsl

from conftest import REPO


def test_the_dsl_stub_is_up_to_date():
    stub = REPO / "python" / "arcbatch" / "dsl.pyi"
    assert stub.read_text() == arcbatch._stubgen.render(), (
        "python/arcbatch/dsl.pyi is stale: python -m arcbatch._stubgen > python/arcbatch/dsl.pyi"
    )


@pytest.mark.parametrize("module", [arcbatch, arcbatch.dsl, arcbatch.batch, arcbatch._run, arcbatch._jit], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0
