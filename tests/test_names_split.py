"""split_names (the batched split used once per stored tensor) gives what
split_name gives, name by name: the longest known suffix of the table every
registered convention's suffixes make."""

from hypothesis import given
from hypothesis import strategies as st

from grit_scan.conventions import split_name, split_names
from grit_scan.conventions.suffixes import table

SUFFIXES = table().suffixes

# names built from the pieces the suffixes are made of, so that long and
# short suffixes, bare suffixes and suffix-like text all come up
PIECES = sorted({p for s in SUFFIXES for p in s.replace("_", " _").replace(".", " .").split()}
                | {".", "_", "", "0", ".0", "model", ".layers", "weight", "scales", "é"})


@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=40))
def test_split_names_is_split_name_each(names: list[str]) -> None:
    assert list(split_names(names)) == [split_name(n) for n in names]


def test_longest_suffix_and_edges() -> None:
    """Expected splits written out from the conventions' suffixes."""
    names = ["m.weight", "m.weight_scale_2", "m.weight.absmax", "m.x.weight.quant_map",
             ".weight", "weight", "m.blocks", "m_blocks", "m.qweight", "m.other", "m.",
             "a.b.weight_scale_inv"]
    assert list(split_names(names)) == [
        ("m", ".weight"), ("m", ".weight_scale_2"), ("m", ".weight.absmax"),
        ("m.x", ".weight.quant_map"), (".weight", ""), ("weight", ""), ("m", ".blocks"),
        ("m", "_blocks"), ("m", ".qweight"), ("m.other", ""), ("m.", ""),
        ("a.b", ".weight_scale_inv")]


NAMES = st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=40,
                 unique=True)


def _grouped_by_python(names: list[str]) -> list[tuple[str, tuple[object, ...]]]:
    """Module -> (suffix, position, ...) written out from split_name."""
    out: dict[str, tuple[object, ...]] = {}
    for g, name in enumerate(names):
        mod, suf = split_name(name)
        out[mod] = out.get(mod, ()) + (suf, g)
    return list(out.items())


@given(NAMES)
def test_grouping_is_split_name_per_name(names: list[str]) -> None:
    from grit_scan.conventions import engine

    want = _grouped_by_python(names)
    assert list(engine._group(names, iter(range(len(names)))).items()) == want
    assert list(engine._group(names, range(len(names))).items()) == want
    for chunk in (1, 3):  # names split a few at a time
        assert list(engine._group(names, iter(range(len(names))), chunk).items()) == want


def test_a_suffix_with_a_dot_inside_is_split_by_the_whole_name() -> None:
    """A suffix that does not start with a dot but holds one (``_x.y``)
    ends a name whose last component does not end in it: split_columns may
    not decide such a name by its last component alone."""
    from grit_scan.names import SuffixTable

    t = SuffixTable([".weight", "_x.y", "_z"])
    names = ["m_x.y", "a.m_x.y", "m.y", "m_z", "a.b_z", "_z", "a._z", "q.weight", "y"]
    want = [("m", "_x.y"), ("a.m", "_x.y"), ("m.y", ""), ("m", "_z"), ("a.b", "_z"),
            ("_z", ""), ("a.", "_z"), ("q", ".weight"), ("y", "")]
    assert [t.split(n) for n in names] == want
    assert list(t.split_all(names)) == want
