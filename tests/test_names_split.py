"""split_names (the batched split used once per stored tensor, issue 15)
gives what split_name gives, name by name: the longest known suffix."""

from hypothesis import given
from hypothesis import strategies as st

from grit_scan.names import SUFFIXES, split_name, split_names

# names built from the pieces the suffixes are made of, so that long and
# short suffixes, bare suffixes and suffix-like text all come up
PIECES = sorted({p for s in SUFFIXES for p in s.replace("_", " _").replace(".", " .").split()}
                | {".", "_", "", "0", ".0", "model", ".layers", "weight", "scales", "é"})


@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=40))
def test_split_names_is_split_name_each(names: list[str]) -> None:
    assert list(split_names(names)) == [split_name(n) for n in names]


def test_longest_suffix_and_edges() -> None:
    """Expected splits written out from the suffix table (names.SUFFIXES)."""
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
def test_grouping_is_split_name_per_name_both_paths(names: list[str]) -> None:
    from grit_scan.parsers import conventions

    want = _grouped_by_python(names)
    # the pure-Python path (positions not 0, 1, 2, ...: an iterator)
    assert list(conventions._group(names, iter(range(len(names)))).items()) == want
    # the compiled path, where the helper is built
    assert list(conventions._group(names, range(len(names))).items()) == want


def test_compiled_grouping_is_used_and_agrees() -> None:
    import pytest

    from grit_scan.names import DOT_SUFFIX_ENDS, ONE_COMPONENT, TAIL_SUFFIXES
    from grit_scan.parsers import conventions

    if conventions._compiled is None:
        pytest.skip("the compiled helper is not built")
    names = ["m.a.weight", "m.a.weight_scale", "m.b_blocks", "odd", "m.a.qweight.x"]
    tables = (ONE_COMPONENT, DOT_SUFFIX_ENDS, TAIL_SUFFIXES)
    got = conventions._compiled.group_modules(names, *tables, split_name)
    assert list(got.items()) == _grouped_by_python(names)
    calls: list[str] = []

    def spy(name: str) -> tuple[str, str]:
        calls.append(name)
        return split_name(name)

    conventions._compiled.group_modules(names, *tables, spy)
    # a name without a dot and one whose last component ends a dot suffix
    # (".weight.absmax" ends in "absmax") go to Python; the rest stay in C
    assert calls == ["odd"]
    conventions._compiled.group_modules(["m.x.absmax", "m.b_blocks", "m.c"], *tables, spy)
    assert calls == ["odd", "m.x.absmax"]
    with pytest.raises(TypeError):
        conventions._compiled.group_modules(["odd"], *tables, lambda n: n)
