"""arcbatch.dsl as a stand-in for the reference's modules: names, constants, function values."""

import pytest

import arcbatch
from arcbatch import dsl
from arcbatch.dsl import *  # noqa: F403 (what a user's solvers.py does)

from conftest import same


def test_every_primitive_and_constant_is_there():
    names = [name for name, _, _, _ in arcbatch._arcbatch.signatures()]
    assert len(names) == 162
    for name in names + ["objects", "o_g", "p_g"]:
        assert isinstance(getattr(dsl, name), arcbatch.Function), name
        assert name in dsl.__all__
    assert (ZERO, TEN, NEG_TWO, T, F) == (0, 10, -2, True, False)  # noqa: F405
    assert same(DOWN, (1, 0)) and same(THREE_BY_THREE, (3, 3)) and same(UP_RIGHT, (-1, 1))  # noqa: F405
    assert same(T, True) and same(F, False)  # noqa: F405
    assert [getattr(dsl, f"R{k}") for k in range(8)] == list(range(8))
    # The reference's type names come along, as with `from dsl import *`.
    assert dsl.Grid and dsl.Objects and dsl.Tuple and dsl.Callable


def test_primitives_compute_with_python_values():
    grid = ((1, 0, 0), (0, 1, 0), (2, 2, 0))
    assert same(dsl.vmirror(grid), ((0, 0, 1), (0, 1, 0), (0, 2, 2)))
    objs = dsl.objects(grid, True, True, True)
    assert same(
        objs,
        frozenset({frozenset({(1, (0, 0)), (1, (1, 1))}), frozenset({(2, (2, 0)), (2, (2, 1))})}),
    )
    assert same(dsl.ofcolor(grid, 2), frozenset({(2, 0), (2, 1)}))
    assert same(dsl.index(grid, (5, 5)), None)
    assert same(dsl.shape(grid), (3, 3))
    assert same(dsl.palette(grid), frozenset({0, 1, 2}))
    assert same(dsl.even(4), True)
    assert same(dsl.add((1, 2), 3), (4, 5))
    assert same(dsl.divide(-7, 2), -4)  # floor division, as Python
    assert same(dsl.interval(0, 0, 1), ())
    assert same(dsl.canvas(3, (2, 0)), ((), ()))


def test_function_values_are_callable_and_pass_back():
    size_of_first = dsl.compose(dsl.size, dsl.first)
    assert isinstance(size_of_first, arcbatch.Function)
    assert size_of_first(((1, 2, 3),)) == 3
    assert size_of_first.arity == 1 and not size_of_first.is_primitive
    assert dsl.size.is_primitive and dsl.size.__name__ == "size" and dsl.objects.arity == 4
    assert repr(size_of_first) == "<arcbatch.Function compose(size, first)>"
    add_three = dsl.rbind(dsl.add, 3)
    assert same(dsl.apply(add_three, (1, 2)), (4, 5))
    assert same(dsl.apply(add_three, frozenset({1, 2})), frozenset({4, 5}))
    assert same(dsl.sfilter(frozenset({1, 2, 3, 4}), dsl.even), frozenset({2, 4}))
    assert dsl.power(dsl.rot90, 4)(((1, 2),)) == ((1, 2),)
    # Function values are DSL values too: in containers, as results, compared by structure.
    assert same(dsl.first((dsl.size, dsl.first)), dsl.size)
    assert dsl.compose(dsl.size, dsl.first) == size_of_first
    assert len({dsl.size, dsl.size, size_of_first}) == 2
    assert same(dsl.rapply(frozenset({dsl.size, dsl.first}), (7, 8)), frozenset({2, 7}))


def test_primitives_pickle_by_name():
    import pickle

    assert pickle.loads(pickle.dumps(dsl.objects)) is dsl.objects
    assert pickle.loads(pickle.dumps((dsl.size, 3))) == (dsl.size, 3)
    with pytest.raises(TypeError, match="only primitives can be pickled"):
        pickle.dumps(dsl.compose(dsl.size, dsl.first))


def test_what_is_no_dsl_value_is_refused_with_a_clear_type_error():
    with pytest.raises(arcbatch.DslTypeError, match="DSL values are tuples, not lists") as e:
        dsl.size([1, 2])
    assert isinstance(e.value, TypeError) and isinstance(e.value, arcbatch.ArcbatchError)
    with pytest.raises(arcbatch.DslTypeError, match="returned a float, which the DSL cannot hold"):
        dsl.apply(lambda x: x / 2, (1, 2))


def test_a_solver_in_the_reference_style_runs():
    source = (
        "from arcbatch.dsl import *\n"
        "def solve(I):\n"
        "    x1 = objects(I, T, F, T)\n"
        "    x2 = argmax(x1, size)\n"
        "    x3 = recolor(TWO, x2)\n"
        "    O = paint(I, x3)\n"
        "    return O\n"
    )
    namespace = {}
    exec(source, namespace)
    assert namespace["solve"](((1, 1, 0), (0, 0, 3))) == ((2, 2, 0), (0, 0, 3))


def test_numpy_arrays_are_grids():
    np = pytest.importorskip("numpy")
    array = np.array([[1, 0, 2], [3, 4, 5]], dtype=np.uint8)
    assert same(dsl.identity(array), ((1, 0, 2), (3, 4, 5)))
    assert same(dsl.vmirror(array), ((2, 0, 1), (5, 4, 3)))
    assert same(dsl.identity(np.array([[7]], dtype=np.int64)), ((7,),))
    assert same(dsl.identity(np.zeros((0, 3), dtype=np.uint8)), ())
    assert same(dsl.add(np.int64(2), np.uint8(3)), 5)
    assert same(dsl.identity(np.bool_(True)), True)
    assert same(arcbatch.grid(array), ((1, 0, 2), (3, 4, 5)))
    # A later change to the array is seen: arrays are never cached.
    array[0, 0] = 9
    assert dsl.index(array, (0, 0)) == 9


def test_grid_helper_turns_lists_into_grids():
    assert same(arcbatch.grid([[1, 2], [3, 4]]), ((1, 2), (3, 4)))
    assert same(dsl.hmirror(arcbatch.grid([[1], [2]])), ((2,), (1,)))
