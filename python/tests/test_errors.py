"""Bad inputs raise arcbatch.ArcbatchError subclasses with clear messages; nothing crashes."""

import pytest

import arcbatch
from arcbatch import batch, dsl


@pytest.mark.parametrize(
    "call, error, builtin, message",
    [
        (lambda: dsl.objects([[1]], True, True, True), arcbatch.DslTypeError, TypeError, "tuples, not lists"),
        (lambda: dsl.add(1.5, 1), arcbatch.DslTypeError, TypeError, "cannot use float 1.5"),
        (lambda: dsl.size("abc"), arcbatch.DslTypeError, TypeError, "cannot use str"),
        (lambda: dsl.identity({"a": 1}), arcbatch.DslTypeError, TypeError, "cannot use dict"),
        (lambda: dsl.objects(5, True, True, True), arcbatch.DslTypeError, TypeError, "objects: TypeError"),
        (lambda: dsl.objects(((1,),), True), arcbatch.DslTypeError, TypeError, "expected 4 argument"),
        (lambda: dsl.size(container=()), arcbatch.DslTypeError, TypeError, "positional arguments only"),
        (lambda: dsl.first(()), arcbatch.DslStopIteration, StopIteration, "first: StopIteration"),
        # PEP 479: StopIteration raised inside the reference's generator expressions.
        (lambda: dsl.apply(dsl.first, ((1,), ())), arcbatch.DslRuntimeError, RuntimeError, "apply: RuntimeError"),
        (lambda: dsl.sfilter(((1,), ()), dsl.first), arcbatch.DslRuntimeError, RuntimeError, "generator raised"),
        (lambda: dsl.argmax(((1,), ()), dsl.first), arcbatch.DslStopIteration, StopIteration, "argmax"),
        (lambda: dsl.divide(1, 0), arcbatch.DslZeroDivisionError, ZeroDivisionError, "divide"),
        (lambda: dsl.argmax((), dsl.size), arcbatch.DslValueError, ValueError, "argmax: ValueError"),
        (lambda: dsl.cellwise(((3, 3), (3, 3)), ((1, 8, 8),), 9), arcbatch.DslIndexError, IndexError, "cellwise"),
        (lambda: dsl.leastcommon(frozenset({8})), arcbatch.DslAttributeError, AttributeError, "leastcommon"),
        (lambda: dsl.identity(2**64), arcbatch.DslLimitError, MemoryError, "does not fit in 64 bits"),
        (lambda: dsl.power(dsl.rot90, 0), arcbatch.DslRecursionError, RecursionError, "power"),
        (lambda: dsl.compose(dsl.size, 5)(1), arcbatch.DslTypeError, TypeError, "not callable"),
    ],
)
def test_bad_dsl_calls_raise(call, error, builtin, message):
    with pytest.raises(error, match=message) as e:
        call()
    assert isinstance(e.value, builtin)
    assert isinstance(e.value, arcbatch.DslError) and isinstance(e.value, arcbatch.ArcbatchError)


def test_deep_nesting_is_refused_not_a_crash():
    value = ()
    for _ in range(10_000):
        value = (value, 1)
    with pytest.raises(arcbatch.DslLimitError, match="nested deeper than 100 levels"):
        dsl.identity(value)
    nested = dsl.identity(())
    with pytest.raises(arcbatch.DslLimitError):
        for _ in range(200):
            nested = dsl.astuple(nested, 1)


def test_numpy_arrays_of_the_wrong_shape_or_dtype():
    np = pytest.importorskip("numpy")
    with pytest.raises(arcbatch.DslTypeError, match="2 dimensions"):
        dsl.identity(np.zeros((2, 2, 2), dtype=np.uint8))
    with pytest.raises(arcbatch.DslTypeError, match="integer dtype"):
        dsl.identity(np.zeros((2, 2)))
    with pytest.raises(arcbatch.DslLimitError, match="colour 1099511627776"):
        dsl.identity(np.full((1, 1), 2**40))
    assert dsl.identity(np.full((1, 1), 300)) == ((300,),)


def test_the_hierarchy():
    assert issubclass(arcbatch.DslError, arcbatch.ArcbatchError)
    for name, builtin in [
        ("DslTypeError", TypeError),
        ("DslValueError", ValueError),
        ("DslIndexError", IndexError),
        ("DslKeyError", KeyError),
        ("DslZeroDivisionError", ZeroDivisionError),
        ("DslStopIteration", StopIteration),
        ("DslRecursionError", RecursionError),
        ("DslRuntimeError", RuntimeError),
        ("DslAttributeError", AttributeError),
        ("DslTimeoutError", TimeoutError),
    ]:
        cls = getattr(arcbatch, name)
        assert issubclass(cls, arcbatch.DslError) and issubclass(cls, builtin), name
        assert cls.__module__ == "arcbatch" and cls.__doc__
    assert issubclass(arcbatch.InputError, ValueError) and issubclass(arcbatch.InputError, arcbatch.ArcbatchError)
    assert issubclass(arcbatch.InternalError, RuntimeError)


def test_batch_errors_raise_or_take_the_items_place():
    grids = [((1,),), "not a grid"]
    with pytest.raises(arcbatch.DslTypeError, match="cannot use str"):
        batch.size(grids)
    results = batch.first([(1, 2), (), (3,)], errors="return")
    assert results[0] == 1 and results[2] == 3
    assert isinstance(results[1], arcbatch.DslStopIteration) and "item 1" in str(results[1])
    with pytest.raises(arcbatch.DslStopIteration, match=r"first \(item 1\)"):
        batch.first([(1, 2), ()])
    with pytest.raises(arcbatch.InputError, match="errors must be one of"):
        batch.size([()], errors="ignore")
    with pytest.raises(arcbatch.InputError, match="threads must be at least 1"):
        batch.size([()], threads=0)
    with pytest.raises(arcbatch.DslTypeError, match="DSL function value"):
        batch.map(len, [()])
    with pytest.raises(arcbatch.DslTypeError, match="an iterable of items"):
        batch.size(5)
    with pytest.raises(arcbatch.InputError, match="timeout_ms must be a non-negative int"):
        batch.size([()], timeout_ms=-1)


def test_a_runaway_batch_item_times_out_alone():
    slow = dsl.power(dsl.power(dsl.power(dsl.rot90, 900), 900), 900)
    results = batch.map(slow, [((1, 2),)], errors="return", timeout_ms=50)
    assert isinstance(results[0], arcbatch.DslTimeoutError)
    assert isinstance(results[0], TimeoutError)


def test_function_values_nested_too_deep_are_refused_not_a_crash():
    f = dsl.identity
    with pytest.raises(arcbatch.DslRecursionError, match="function value nested deeper than 400"):
        for _ in range(100_000):
            f = dsl.compose(f, dsl.identity)
    assert f(1) == 1  # the deepest one handed out still works
    assert batch.map(f, [1, 2]) == [1, 2]  # on the pool's threads too
    # Shared parts are looked at once: this doubles its paths at every level (2**300 of them).
    g = dsl.identity
    for _ in range(300):
        g = dsl.compose(g, g)
    assert g.arity == 1
    # Spelling it out stops early; errors name it briefly; comparing it to itself is instant.
    assert len(repr(g)) < 250 and len(g.__name__) <= 200 and hash(g) == hash(g) and g == g
    with pytest.raises(arcbatch.DslTypeError, match=r"size: TypeError: expected .*, got function compose"):
        dsl.size(g)


def test_a_function_value_built_deep_in_one_call_is_refused_not_a_crash():
    deep = dsl.power(dsl.power(dsl.lbind(dsl.compose, dsl.identity), 900), 900)
    with pytest.raises(arcbatch.DslRecursionError):
        deep(dsl.identity)
    nested_tuples = dsl.power(dsl.power(dsl.lbind(dsl.astuple, 1), 900), 900)
    with pytest.raises(arcbatch.DslLimitError, match="nested deeper than 100"):
        nested_tuples(2)
