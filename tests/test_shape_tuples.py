"""Issue 15: a table's shapes are built from its flat dimensions and ranks
by ``_fnv.shape_tuples`` when the compiled helper is there.  It must give
each tensor's shape as written, equal shapes as one shared tuple, and
refuse ranks that do not account for the dimensions exactly."""

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.artifact import TensorTable, shape_list

_fnv = pytest.importorskip("grit_scan.codec._fnv")

DIM = st.one_of(st.integers(0, 8), st.integers(0, 2**63 - 1))
SHAPES = st.lists(st.lists(DIM, max_size=6).map(tuple), max_size=60)


def _columns(shapes: list[tuple[int, ...]]) -> tuple[array, array]:
    return array("q", [d for s in shapes for d in s]), array("B", map(len, shapes))


@settings(max_examples=300, deadline=None)
@given(SHAPES, st.randoms(use_true_random=False))
def test_each_shape_as_written_and_equal_ones_shared(shapes, rnd) -> None:
    # repeat some shapes, as a model repeats a handful for every layer
    shapes = shapes + [rnd.choice(shapes) for _ in range(len(shapes))] if shapes else []
    dims, ranks = _columns(shapes)
    got = _fnv.shape_tuples(dims, ranks)
    assert got == shapes and all(type(t) is tuple for t in got)
    first: dict[tuple[int, ...], tuple[int, ...]] = {}
    for t in got:
        assert first.setdefault(t, t) is t  # one object per distinct shape
    assert shape_list(list(dims), list(ranks)) == shapes  # the Python path agrees


def test_ranks_must_account_for_every_dimension() -> None:
    with pytest.raises(ValueError, match="more dimensions"):
        _fnv.shape_tuples(array("q", [1, 2]), array("B", [3]))
    with pytest.raises(ValueError, match="left over"):
        _fnv.shape_tuples(array("q", [1, 2, 3]), array("B", [2]))
    with pytest.raises(ValueError, match="int64"):
        _fnv.shape_tuples(b"\0" * 7, b"")
    assert _fnv.shape_tuples(array("q"), array("B")) == []
    assert _fnv.shape_tuples(array("q"), array("B", [0, 0])) == [(), ()]


def test_a_table_keeps_its_shapes_once_built() -> None:
    shapes = [(4, 8), (4,), (4, 8), ()]
    dims, ranks = _columns(shapes)
    t = TensorTable(["a", "b", "c", "d"], ["F32"] * 4, dims, list(ranks), [0, 128, 144, 272],
                    [128, 16, 128, 4], [128, 16, 128, 4])
    got = t.shapes()
    assert got == shapes and got[0] is got[2]
    assert t.shapes() is got  # built once
    assert [r.shape for r in t.rows()] == shapes
