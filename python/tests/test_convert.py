"""Conversions round-trip: any DSL value handed to the module comes back identical (type for
type, bool for bool), through a primitive and through a batch."""

import random

import pytest

from arcbatch import batch, dsl

from conftest import same

rng = random.Random(20240601)


def random_grid():
    h, w = rng.randint(1, 30), rng.randint(1, 30)
    colours = rng.sample(range(10), rng.randint(1, 4))
    return tuple(tuple(rng.choice(colours) for _ in range(w)) for _ in range(h))


def random_loc(spread=40):
    return (rng.randint(-spread, spread), rng.randint(-spread, spread))


def random_indices():
    return frozenset(random_loc() for _ in range(rng.randint(0, 60)))


def random_object():
    return frozenset((rng.randint(0, 9), random_loc()) for _ in range(rng.randint(0, 60)))


def random_atom():
    return rng.choice([rng.randint(-(2**62), 2**62), rng.randint(-300, 300), True, False, None])


def random_value(depth=0):
    kind = rng.randint(0, 9 if depth < 3 else 1)
    if kind == 0:
        return random_atom()
    if kind == 1:
        return random_loc(10**9)
    if kind == 2:
        return random_grid()
    if kind == 3:
        return random_indices()
    if kind == 4:
        return random_object()
    if kind == 5:
        return frozenset(random_object() for _ in range(rng.randint(0, 5)))
    if kind == 6:
        return tuple(random_value(depth + 1) for _ in range(rng.randint(0, 4)))
    if kind == 7:
        return frozenset(random_atom() for _ in range(rng.randint(0, 6)))
    if kind == 8:
        return rng.choice([dsl.size, dsl.compose(dsl.size, dsl.first), dsl.rbind(dsl.add, 3)])
    return frozenset(random_value(depth + 1) for _ in range(rng.randint(0, 3)))


SPECIAL = [
    (),
    ((),),
    ((), ()),
    frozenset(),
    frozenset({frozenset()}),
    (True, 1),
    (1, True),
    (0, (0, 0)),
    ((0, 1), (2, 3)),  # a tuple of locations, shaped like a 2x2 grid
    ((1, 2, 3),),
    ((300, 1),),
    ((2**40, 1),),  # does not fit a grid cell: stays a tuple of tuples
    frozenset({(0, (0, 0)), (1, 2)}),  # mixed cells and locations
    frozenset({True, 2}),
    frozenset({(True, False)}),
    (None, (None,)),
    2**63 - 1,
    -(2**63),
    ((((((((((1,),),),),),),),),),),
]


@pytest.mark.parametrize("value", SPECIAL, ids=repr)
def test_special_values_round_trip(value):
    assert same(dsl.identity(value), value)


def test_random_values_round_trip():
    values = [random_value() for _ in range(3000)]
    for v in values:
        assert same(dsl.identity(v), v), v
    for v, back in zip(values, batch.identity(values)):
        assert same(back, v), v


def test_values_round_trip_inside_containers_built_by_the_dsl():
    for _ in range(300):
        a, b = random_value(), random_value()
        assert same(dsl.astuple(a, b), (a, b))
        assert same(dsl.initset(a), frozenset({a}))
        assert same(dsl.first(dsl.astuple(a, b)), a)


def test_results_are_fresh_python_objects_of_the_reference_types():
    grid = random_grid()
    objs = dsl.objects(grid, False, False, False)
    assert type(objs) is frozenset
    for obj in objs:
        assert type(obj) is frozenset
        for cell in obj:
            assert type(cell) is tuple and type(cell[0]) is int and type(cell[1]) is tuple
    rows = dsl.vmirror(grid)
    assert type(rows) is tuple and all(type(r) is tuple for r in rows)
