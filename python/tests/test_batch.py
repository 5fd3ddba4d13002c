"""arcbatch.batch: the same results as calling the primitives one by one, on any pool."""

import os
import random
import select

import pytest

import arcbatch
from arcbatch import batch, dsl

from conftest import same

rng = random.Random(7)


def random_grid():
    h, w = rng.randint(1, 30), rng.randint(1, 30)
    return tuple(tuple(rng.choice((0, 0, 1, 2, 5)) for _ in range(w)) for _ in range(h))


GRIDS = [random_grid() for _ in range(200)]


@pytest.mark.parametrize("threads", [None, 1, 3])
def test_batched_primitives_equal_one_call_per_item(threads):
    for flags in [(True, False, True), (False, True, False)]:
        expected = [dsl.objects(g, *flags) for g in GRIDS]
        assert all(same(a, b) for a, b in zip(batch.objects(GRIDS, *flags, threads=threads), expected))
    assert batch.height(GRIDS, threads=threads) == [len(g) for g in GRIDS]
    cells = batch.map(dsl.compose(dsl.size, dsl.asindices), GRIDS, threads=threads)
    assert cells == [len(g) * len(g[0]) for g in GRIDS]
    assert batch.map(dsl.add, [], 1) == []


def test_batched_helpers_carry_names_and_docs():
    assert batch.objects.__name__ == "objects" and "in parallel" in batch.objects.__doc__
    assert batch.map.__doc__


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_builds_its_own_pool():
    assert batch.size([(1,)] * 8) == [1] * 8  # the parent's pool exists now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            ok = batch.size([(1, 2)] * 8) == [2] * 8
            os.write(write, b"ok" if ok else b"wrong")
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 30)
    answer = os.read(read, 16) if ready else b"hung"
    if not ready:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read)
    assert answer == b"ok"


def test_batch_takes_numpy_grids():
    np = pytest.importorskip("numpy")
    arrays = [np.array(g, dtype=np.uint8) for g in GRIDS[:20]]
    assert batch.vmirror(arrays) == [dsl.vmirror(g) for g in GRIDS[:20]]
    assert isinstance(arcbatch.batch.vmirror(arrays)[0], tuple)
