"""§5.4 laws for every relayoutable placement: L1 decode invariance, L2
composition and identity; refusals for OPAQUE (L3), unresolvable
expressions and unsupported words."""

import itertools

import numpy as np
import pytest
import spec_values as S

from grit_scan.codec import descriptor as D
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.decode import decode
from grit_scan.codec.encode import encode
from grit_scan.codec.errors import GritLayoutError
from grit_scan.codec.layout import (
    _pack_k4,
    _unpack_k4,
    from_canonical,
    relayout,
    to_canonical,
)

F32 = np.float32
rng = np.random.default_rng(0)


def expr(text):
    w = P.layout_word(text)
    return w, {w: text}


def place(enc, data=None, scale=None, meta=None):
    return enc.desc.with_placements(data, scale, meta)


def same(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return ((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))).all()


# (grade, shape, group_axis, data, scale, meta, layouts)
def cases():
    mx = G.GRADE_MXFP4
    nv = G.GRADE_NVF4
    q4 = G.GRADE_Q4KS
    i8 = G.GRADE_I8S24
    out = []
    out.append(("COL_MAJOR data", mx, (16, 64), 1, P.COL_MAJOR, None, None, {}))
    out.append(("COL_MAJOR both", mx, (16, 64), 1, P.COL_MAJOR, P.COL_MAJOR, None, {}))
    out.append(("TILE_16X16", mx, (32, 512), 1, P.TILE_16X16, P.TILE_16X16, None, {}))
    out.append(("SWIZZLE_128X4B scale", nv, (128, 64), 1, None, P.SWIZZLE_128X4B, None, {}))
    out.append(("BLOCK_AOS", mx, (4, 64), 1, P.BLOCK_AOS, P.BLOCK_AOS, None, {}))
    out.append(("BLOCK_AOS two levels", nv, (4, 64), 1, P.BLOCK_AOS, P.BLOCK_AOS, None, {}))
    out.append(("BLOCK_AOS q4ks", q4, (2, 256), 1, P.BLOCK_AOS, P.BLOCK_AOS, P.BLOCK_AOS, {}))
    out.append(("BLOCK_AOS sparse", i8, (2, 64), 1, P.BLOCK_AOS, P.BLOCK_AOS, P.BLOCK_AOS, {}))
    out.append(("PACK_K4_12B", q4, (2, 512), 1, None, P.PACK_K4_12B, P.PACK_K4_12B, {}))
    out.append(("LINEAR_META", i8, (2, 64), 1, None, None, P.LINEAR_META, {}))
    w, lay = expr("Perm([0,2,4,6,1,3,5,7])")  # AWQ's interleave
    out.append(("Perm (AWQ)", mx, (2, 64), 1, w, None, None, lay))
    w, lay = expr("Interleave(RowMajor,4)")
    out.append(("Interleave", mx, (8, 64), 1, w, w, None, lay))
    w, lay = expr("Swizzle(2,1,3)")
    out.append(("Swizzle", mx, (4, 64), 1, w, None, None, lay))
    w, lay = expr("Tile(ColMajor,[4,8])")
    out.append(("Tile(ColMajor)", mx, (8, 256), 1, w, w, None, lay))
    w, lay = expr("Pad(64)")
    out.append(("Pad", mx, (3, 32), 1, w, w, None, lay))
    w, lay = expr("Compose(Perm([1,0]),Compose(ColMajor,Tile(RowMajor,[2,2])))")
    out.append(("Compose", mx, (4, 64), 1, w, None, None, lay))
    w, lay = expr("Compose(PackK4,BlockAos)")
    w2, lay2 = expr("Compose(Perm([" + ",".join(str(32 * h + b) for b in range(32)
                                                for h in range(2)) + "]),BlockAos)")
    out.append(("ggml Q4_K", q4, (2, 256), 1, w2, w, w, {**lay, **lay2}))
    return out


CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_l1_decode_invariance(case):
    _, g, shape, ga, data, scale, meta, lay = case
    v = (rng.standard_normal(shape) * 3).astype(F32)
    enc = encode(v, g, ga)
    target = place(enc, data, scale, meta)
    moved = relayout(enc.desc, shape, enc.payload, target, lay)
    want = decode(enc.desc, shape, enc.payload)
    got = decode(target, shape, moved, layouts=lay)
    assert same(got, want)
    # relayouting a non-identity placement actually moves bytes
    assert to_canonical(target, shape, moved, lay) == list(enc.planes)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_l2_identity(case):
    _, g, shape, ga, data, scale, meta, lay = case
    v = (rng.standard_normal(shape)).astype(F32)
    enc = encode(v, g, ga)
    target = place(enc, data, scale, meta)
    moved = relayout(enc.desc, shape, enc.payload, target, lay)
    assert relayout(target, shape, moved, target, lay) == moved


def test_l2_composition():
    g = G.GRADE_MXFP4
    shape = (32, 512)
    v = rng.standard_normal(shape).astype(F32)
    enc = encode(v, g, 1)
    wp, lay = expr("Perm([0,2,4,6,1,3,5,7])")
    placements = [(P.ROW_MAJOR, P.ROW_MAJOR), (P.COL_MAJOR, P.COL_MAJOR),
                  (P.TILE_16X16, P.TILE_16X16), (wp, P.ROW_MAJOR), (P.BLOCK_AOS, P.BLOCK_AOS)]
    for (a, b, c) in itertools.permutations(placements, 3):
        d0 = enc.desc.with_placements(*a)
        d1 = enc.desc.with_placements(*b)
        d2 = enc.desc.with_placements(*c)
        p0 = relayout(enc.desc, shape, enc.payload, d0, lay)
        via = relayout(d1, shape, relayout(d0, shape, p0, d1, lay), d2, lay)
        direct = relayout(d0, shape, p0, d2, lay)
        assert via == direct


def test_swizzle_128x4b_offsets_from_reconstruction_7():
    """offset = (r mod 32)·16 + ((r div 32) mod 4)·4 + (c mod 4); tiles row-major."""
    g = G.GRADE_NVF4
    shape = (256, 128)  # scale plane: 256 x 8 E4M3 codes
    enc = encode(rng.standard_normal(shape).astype(F32), g, 1)
    target = enc.desc.with_placements(scale=P.SWIZZLE_128X4B)
    moved = relayout(enc.desc, shape, enc.payload, target)
    canon = np.frombuffer(enc.planes[1], np.uint8).reshape(256, 8)
    phys = np.frombuffer(moved[len(enc.planes[0]) : len(enc.planes[0]) + 2048], np.uint8)
    for r, c in [(0, 0), (1, 0), (31, 3), (32, 0), (100, 5), (127, 7), (128, 0), (255, 7)]:
        tile = (r // 128) * 2 + c // 4
        off = tile * 512 + (r % 32) * 16 + ((r // 32) % 4) * 4 + (c % 4)
        assert phys[off] == canon[r, c]


def test_pack_k4_round_trip_and_layout():
    sc = rng.integers(0, 64, 64).astype(np.uint32)
    m = rng.integers(0, 64, 64).astype(np.uint32)
    packed = np.frombuffer(_pack_k4(sc, m), np.uint8)
    assert packed.size == 96
    s2, m2 = _unpack_k4(packed, 64)
    assert (s2 == sc).all() and (m2 == m).all()
    # ggml get_scale_min_k4 for j < 4: sc = q[j] & 63, m = q[j+4] & 63
    assert packed[0] & 63 == sc[0] and packed[4] & 63 == m[0]
    # j >= 4: sc = (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4)
    assert (packed[8] & 0xF) | ((packed[0] >> 6) << 4) == sc[4]
    assert (packed[8] >> 4) | ((packed[4] >> 6) << 4) == m[4]


def test_stored_sizes_of_ggml_blocks():
    from grit_scan.codec.layout import stored_sizes
    from grit_scan.parsers.ggml_types import MAPPINGS

    for code, per_block in ((39, 17), (8, 34), (12, 144)):
        m = MAPPINGS[code]
        blk = 256 if code == 12 else 32
        d = m.descriptor(group_axis=1)
        sizes, aos = stored_sizes(d, [3, 4 * blk], m.layouts)
        assert aos and sum(sizes) == 3 * 4 * per_block


@pytest.mark.parametrize("word,match", [
    (P.OPAQUE, "OPAQUE"),
    (0xF000000000001234, "OPAQUE"),
    (P.META_M16N8K32, "unsupported"),
    (P.layout_word("Tile(RowMajor,[8,8])"), "not supplied"),
    (P.UNSPECIFIED, "not asserted"),
])
def test_refusals(word, match):
    enc = encode(rng.standard_normal((16, 64)).astype(F32), G.GRADE_MXFP4, 1)
    d = enc.desc.with_placements(data=word)
    with pytest.raises(GritLayoutError, match=match):
        from_canonical(d, (16, 64), enc.planes)
    with pytest.raises(GritLayoutError):
        to_canonical(d, (16, 64), enc.payload)


def test_opaque_expression_refused():
    w, lay = expr("Opaque(nvidia,00ff)")
    enc = encode(rng.standard_normal((4, 64)).astype(F32), G.GRADE_MXFP4, 1)
    with pytest.raises(GritLayoutError, match="L3"):
        from_canonical(enc.desc.with_placements(data=w), (4, 64), enc.planes, lay)


def test_col_major_refused_on_group_axis_0():
    enc = encode(rng.standard_normal((64, 4)).astype(F32), G.GRADE_MXFP4, 0)
    with pytest.raises(GritLayoutError, match="L4"):
        from_canonical(enc.desc.with_placements(data=P.COL_MAJOR), (64, 4), enc.planes)


def test_wrong_expression_text_refused():
    w = P.layout_word("Tile(RowMajor,[4,4])")
    enc = encode(rng.standard_normal((4, 64)).astype(F32), G.GRADE_MXFP4, 1)
    with pytest.raises(GritLayoutError, match="does not hash"):
        from_canonical(enc.desc.with_placements(data=w), (4, 64), enc.planes,
                       {w: "Tile(RowMajor,[2,2])"})


def test_desc_a4_meta_unspecified_without_aux_is_fine():
    d = D.from_hex(S.A4_HEX["GRADE_MXFP4"])
    assert decode(d, [32], bytes(17)).tolist() == [0.0] * 32
