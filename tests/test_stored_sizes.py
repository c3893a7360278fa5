"""Plane sizes without unit permutations (issue 15).

``stored_sizes`` checks a descriptor's placements and collects their byte
forms (BlockAos, PackK4, Pad) without building the permutations, so that a
header-only scan never imports numpy.  Its sizes and refusals must be exactly
those of the layouts built with numpy: the expected values here are the
bytes ``from_canonical`` actually writes through the numpy-built layouts, the
refusals those layouts raise, and, for ggml's block types, the block structs
of ggml-common.h and gguf-py's ``GGML_QUANT_SIZES``."""

import itertools
import math

import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from grit_scan.codec import descriptor as D
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.errors import GritError
from grit_scan.codec.layout import from_canonical, geometry, plane_layouts, stored_sizes
from grit_scan.parsers.ggml_types import MAPPINGS

# ggml-common.h: bytes of each plane in one block, in data, scale0, scale1,
# aux order (the descriptor's planes; BlockAos interleaves them per block)
#   block_mxfp4 { uint8_t e; uint8_t qs[QK_MXFP4/2]; }            QK_MXFP4 = 32
#   block_q8_0  { ggml_half d; int8_t qs[QK8_0]; }                QK8_0 = 32
#   block_q4_K  { ggml_half d, dmin; uint8_t scales[12]; uint8_t qs[QK_K/2]; }  QK_K = 256
GGML_BLOCK_PLANES = {
    "MXFP4": (16, 1, 0, 0),
    "Q8_0": (32, 2, 0, 0),
    "Q4_K": (128, 12, 4, 0),
}

# ggml shapes in numpy order: the last axis is the row (ne0), a whole
# number of blocks
ROW_BLOCKS = (1, 2, 3, 7, 16)
OUTER = ((), (1,), (3,), (2, 5), (4, 1, 3))


def test_every_mapped_ggml_type_has_its_block_struct():
    assert {m.name for m in MAPPINGS.values()} == set(GGML_BLOCK_PLANES)


@pytest.mark.parametrize("code", sorted(MAPPINGS), ids=lambda c: MAPPINGS[c].name)
def test_ggml_stored_sizes_are_the_block_arithmetic(code):
    m = MAPPINGS[code]
    blk_elems, blk_bytes = GGML_QUANT_SIZES[GGMLQuantizationType(code)]
    per_block = GGML_BLOCK_PLANES[m.name]
    assert sum(per_block) == blk_bytes
    for outer, nb in itertools.product(OUTER, ROW_BLOCKS):
        shape = (*outer, nb * blk_elems)
        d = m.descriptor(len(shape) - 1)
        blocks = math.prod(shape) // blk_elems
        sizes, aos = stored_sizes(d, shape, m.layouts)
        assert aos  # ggml stores every type as an array of block structs
        assert sizes == [blocks * b for b in per_block], shape
        assert sum(sizes) == math.prod(shape) // blk_elems * blk_bytes
        assert len(_written(d, shape, m.layouts)) == sum(sizes)


@pytest.mark.parametrize("code", sorted(MAPPINGS), ids=lambda c: MAPPINGS[c].name)
def test_ggml_row_not_a_whole_number_of_blocks_is_refused_alike(code):
    m = MAPPINGS[code]
    blk_elems, _ = GGML_QUANT_SIZES[GGMLQuantizationType(code)]
    for shape in ((blk_elems + 1,), (3, blk_elems // 2), (2, 3 * blk_elems - 8)):
        d = m.descriptor(len(shape) - 1)
        assert _outcome(d, shape, m.layouts, arrays=False) == _outcome(d, shape, m.layouts)
        with pytest.raises(GritError):
            stored_sizes(d, shape, m.layouts)


# Every constructor, registered words and expressions, with shapes that
# divide and shapes that do not (each refusal is a message of its own).
EXPRESSIONS = (
    "RowMajor", "ColMajor", "Tile(RowMajor,[16,16])", "Tile(ColMajor,[4,8])",
    "Tile(RowMajor,[3])", "Tile(Perm([1,0]),[4])", "Tile(RowMajor,[2,2,2])",
    "Interleave(RowMajor,4)", "Interleave(ColMajor,3)", "Swizzle(2,1,3)", "Swizzle(1,0,0)",
    "Swizzle128x4", "Perm([1,0])", "Perm([2,0,1])", "Perm([0,2,4,6,1,3,5,7])", "Pad(8)",
    "Pad(64)", "Compose(Perm([1,0]),Pad(16))", "Compose(ColMajor,Tile(RowMajor,[2,2]))",
    "Compose(Perm([1,0]),Compose(ColMajor,Tile(RowMajor,[2,2])))",
    "Tile(Compose(Perm([1,0]),ColMajor),[2,4])", "Tile(BlockAos,[2])", "BlockAos",
    "Compose(Perm([1,0]),BlockAos)", "Compose(PackK4,BlockAos)", "PackK4",
    "Compose(Pad(8),BlockAos)", "Opaque(acme,00ff)",
)
REGISTERED = (P.ROW_MAJOR, P.COL_MAJOR, P.TILE_16X16, P.SWIZZLE_128X4B, P.BLOCK_AOS,
              P.PACK_K4_12B, P.LINEAR_META)
GRADES = {"mxfp4": G.GRADE_MXFP4, "nvf4": G.GRADE_NVF4, "q4ks": G.GRADE_Q4KS,
          "i8s24": G.GRADE_I8S24}
SHAPES = ((64,), (4, 64), (8, 256), (128, 64), (3, 96), (256, 32), (2, 4, 64), (16, 16, 32))


def _layouts():
    words = {P.layout_word(t): t for t in EXPRESSIONS}
    return words, list(words) + list(REGISTERED)


def _outcome(d, shape, layouts, arrays=True):
    """What plane_layouts makes of ``d`` on ``shape``: the refusal (type and
    message), or each plane's byte-level attributes."""
    try:
        pls = plane_layouts(d, geometry(d, shape), layouts, arrays=arrays)
    except GritError as exc:
        return type(exc), str(exc)
    return [None if pl is None else vars(pl.attrs) for pl in pls]


def _written(d, shape, layouts):
    """The payload from_canonical writes through the numpy-built layouts."""
    planes = [bytes(s.canonical_bytes) if s.present else b"" for s in geometry(d, shape).planes]
    return from_canonical(d, shape, planes, layouts)


@pytest.mark.parametrize("grade", sorted(GRADES))
def test_sizing_refuses_and_sizes_as_the_built_layouts(grade):
    layouts, words = _layouts()
    base = {ga: D.from_grade(GRADES[grade], group_axis=ga) for ga in (0, 1, 2)}
    refused = sized = 0
    for shape in SHAPES:
        for ga in {0, len(shape) - 1}:
            for data, scale in itertools.product(words, repeat=2):
                meta = scale if base[ga].has_aux else None
                d = base[ga].with_placements(data, scale, meta)
                want = _outcome(d, shape, layouts)
                assert _outcome(d, shape, layouts, arrays=False) == want, (shape, ga, d)
                try:
                    sizes, aos = stored_sizes(d, shape, layouts)
                except GritError as exc:
                    refused += 1
                    assert (type(exc), str(exc)) == want
                    continue
                sized += 1
                assert isinstance(want, list)
                assert aos == bool(want[0] and want[0]["aos"])
                assert sum(sizes) == len(_written(d, shape, layouts)), (shape, ga, d)
    # the catalogue exercises both outcomes
    assert refused and sized
