"""§5 placements: classes, registered words, layout expressions, class-0x8 hashing."""

import pytest
from ref_ids import fnv1a

from grit_scan.codec import placement as P
from grit_scan.codec.errors import GritValueError


def test_registered_words_a1():
    assert P.ROW_MAJOR == 0x1000000000000001
    assert P.COL_MAJOR == 0x1000000000000002
    assert P.SWIZZLE_128X4B == 0x1000000000000003
    assert P.TILE_16X16 == 0x1000000000000004
    assert P.BLOCK_AOS == 0x1000000000000005
    assert P.LINEAR_META == 0x1000000000000011
    assert P.META_M16N8K32 == 0x1000000000000012
    assert P.PACK_K4_12B == 0x1000000000000020


@pytest.mark.parametrize("word,ok", [
    (0, True), (P.ROW_MAJOR, True), (P.PACK_K4_12B, True), (0x1000000000000006, False),
    (0x8000000000000000, True), (0x8FFFFFFFFFFFFFFF, True), (0xFFFFFFFFFFFFFFFF, True),
    (0x0000000000000001, False), (0x2000000000000001, False), (0x7000000000000000, False),
    (0x9000000000000000, False), (0xE000000000000000, False),
])
def test_classes(word, ok):
    assert (P.placement_problem(word) is None) == ok


@pytest.mark.parametrize("text,canon", [
    ("RowMajor", "RowMajor"),
    (" rowmajor ( ) ", "RowMajor"),
    ("COLMAJOR", "ColMajor"),
    ("Tile(RowMajor, [16, 16])", "Tile(RowMajor,[16,16])"),
    ("interleave( colmajor , 4 )", "Interleave(ColMajor,4)"),
    ("Swizzle(3, 4, 3)", "Swizzle(3,4,3)"),
    ("Perm([0,2,4,6,1,3,5,7])", "Perm([0,2,4,6,1,3,5,7])"),
    ("Pad(128)", "Pad(128)"),
    ("Compose(Perm([1,0]), Tile(RowMajor,[16,16]))", "Compose(Perm([1,0]),Tile(RowMajor,[16,16]))"),
    ("Opaque(NVIDIA, 00FFab)", "Opaque(nvidia,00ffab)"),
    ("Pad(0128)", "Pad(128)"),
])
def test_canonical_layouts(text, canon):
    assert P.canonical_layout(text) == canon


def test_class_8_word_is_fnv_of_canonical_text():
    text = "Tile(RowMajor,[16,16])"
    want = (0x8 << 60) | (fnv1a(text.encode(), 64) & ((1 << 60) - 1))
    assert P.layout_word("tile( rowmajor,[16,16] )") == want
    assert P.placement_class(want) == 0x8
    assert P.placement_problem(want) is None


@pytest.mark.parametrize("bad", [
    "", "Foo", "Tile(RowMajor)", "Tile(RowMajor,[0,16])", "Perm([0,0])", "Perm([1,2])",
    "Interleave(RowMajor,0)", "Pad(0)", "RowMajor,", "Compose(RowMajor)", "Opaque(x,abc)",
    "Tile(RowMajor,[16,16]", "Swizzle(-1,2,3)", "(" * 100,
    "Compose(" * 40 + "RowMajor" + ",RowMajor)" * 40,
])
def test_bad_layouts(bad):
    with pytest.raises(GritValueError):
        P.parse_layout(bad)
    with pytest.raises(GritValueError):  # refused again: a refusal is not remembered
        P.parse_layout(bad)


def test_a_text_is_parsed_once():
    """Issue 15: every plane of every distinct (descriptor, shape) asks for
    its layout; a text is parsed once and its (immutable) node shared, and
    a non-text is refused before it reaches the memo (unhashable)."""
    text = "Compose(Perm([1,0,3,2]),BlockAos)"
    a = P.parse_layout(text)
    assert P.parse_layout(text) is a and a.text == text
    assert P.parse_layout(" " + text) == a
    with pytest.raises(GritValueError, match="must be text"):
        P.parse_layout(["RowMajor"])  # type: ignore[arg-type]
    # a long text is parsed each time, never kept (a hostile file's many
    # long expressions cannot fill memory)
    long = "Perm([" + ",".join(map(str, reversed(range(400)))) + "])"
    assert len(long) > P.MEMO_CHARS
    b = P.parse_layout(long)
    assert P.parse_layout(long) == b and P.parse_layout(long) is not b


def test_names():
    assert P.placement_name(P.ROW_MAJOR) == "ROW_MAJOR"
    assert P.placement_name(0) == "UNSPECIFIED"
    w = P.layout_word("RowMajor")
    assert P.placement_name(w, {w: "RowMajor"}) == "EXPR RowMajor"
    assert "not supplied" in P.placement_name(w)
    assert P.by_name("pack_k4_12b") == P.PACK_K4_12B
