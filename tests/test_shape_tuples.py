"""A table's shapes are built from its flat dimensions and ranks
(``artifact.shape_list``): each tensor's shape as written, equal shapes as
one shared tuple."""

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.artifact import TensorTable, shape_list

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
    for got in (shape_list(dims, ranks), shape_list(list(dims), list(ranks))):
        assert got == shapes and all(type(t) is tuple for t in got)
        first: dict[tuple[int, ...], tuple[int, ...]] = {}
        for t in got:
            assert first.setdefault(t, t) is t  # one object per distinct shape


def test_a_table_keeps_its_shapes_once_built() -> None:
    shapes = [(4, 8), (4,), (4, 8), ()]
    dims, ranks = _columns(shapes)
    t = TensorTable(["a", "b", "c", "d"], ["F32"] * 4, dims, list(ranks), [0, 128, 144, 272],
                    [128, 16, 128, 4], [128, 16, 128, 4])
    got = t.shapes()
    assert got == shapes and got[0] is got[2]
    assert t.shapes() is got  # built once
    assert [r.shape for r in t.rows()] == shapes
