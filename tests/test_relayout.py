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


# ------------------------------------------------------------------ physical orders
# Expected stored bytes written out from the placement definitions
# (RECONSTRUCTION §7, §3.5 packing after the placement, §3.6 payload order)
# and from ggml's block structs (research §2 / gguf-py), not from layout.py.

U8 = G.parse_grade("grit1(e=u8,k0=2,s0=u8,esr=ratiomaxabs)")  # one byte per code


def u8_desc(data, scale, ga=1):
    return D.from_grade(U8, group_axis=ga, placement_data=data, placement_scale=scale)


# shape (2, 4): data codes 0..7 row-major, scale0 codes 10..13 (groups of 2 along axis 1)
U8_PLANES = [bytes(range(8)), bytes([10, 11, 12, 13]), b"", b""]


@pytest.mark.parametrize("data,scale,want", [
    (P.ROW_MAJOR, P.ROW_MAJOR, [0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13]),
    # COL_MAJOR: axis 0 fastest; scale0 is logically (2, 2)
    (P.COL_MAJOR, P.ROW_MAJOR, [0, 4, 1, 5, 2, 6, 3, 7, 10, 11, 12, 13]),
    (P.COL_MAJOR, P.COL_MAJOR, [0, 4, 1, 5, 2, 6, 3, 7, 10, 12, 11, 13]),
    # BLOCK_AOS: per group, scale0 then the group's data
    (P.BLOCK_AOS, P.BLOCK_AOS, [10, 0, 1, 11, 2, 3, 12, 4, 5, 13, 6, 7]),
])
def test_small_placements_by_hand(data, scale, want):
    d = u8_desc(data, scale)
    assert list(from_canonical(d, (2, 4), U8_PLANES)) == want
    assert to_canonical(d, (2, 4), bytes(want)) == U8_PLANES


def test_col_major_sub_byte_packing_follows_the_placement():
    """§3.5: packing runs in physical order, so COL_MAJOR pairs (0,c) with (1,c)."""
    g = G.parse_grade("grit1(e=u4,k0=2,s0=u8,esr=ratiomaxabs)")
    d = D.from_grade(g, group_axis=1, placement_data=P.COL_MAJOR)
    codes = [1, 2, 3, 4, 5, 6, 7, 8]  # (2, 4) row-major
    data = bytes([1 | 2 << 4, 3 | 4 << 4, 5 | 6 << 4, 7 | 8 << 4])
    scale = bytes([9, 9, 9, 9])
    assert codes == [b >> s & 15 for b in data for s in (0, 4)]
    want = bytes([1 | 5 << 4, 2 | 6 << 4, 3 | 7 << 4, 4 | 8 << 4]) + scale
    assert from_canonical(d, (2, 4), [data, scale, b"", b""]) == want


def test_tile_16x16_by_hand():
    """16x16 tiles, row-major inside and across: (r, c) of a 32x32 plane is
    stored at ((r//16)*2 + c//16)*256 + (r%16)*16 + c%16."""
    d = u8_desc(P.TILE_16X16, P.ROW_MAJOR)
    data = bytes(r * 7 + c * 3 & 0xFF for r in range(32) for c in range(32))
    scale = bytes(i & 0xFF for i in range(32 * 16))
    phys = from_canonical(d, (32, 32), [data, scale, b"", b""])
    for (r, c), off in [((0, 0), 0), ((0, 15), 15), ((1, 0), 16), ((0, 16), 256),
                        ((15, 31), 256 + 255), ((16, 0), 512), ((17, 17), 768 + 17),
                        ((31, 31), 1023)]:
        assert phys[off] == data[r * 32 + c], (r, c, off)
    assert all(phys[((r // 16) * 2 + c // 16) * 256 + (r % 16) * 16 + c % 16] == data[r * 32 + c]
               for r in range(32) for c in range(32))
    assert phys[1024:] == scale


def _mxfp4_block_bytes(e, codes):
    """ggml block_mxfp4 {uint8 e; uint8 qs[16]}: qs[j] = code[j] | code[j+16] << 4."""
    return bytes([e]) + bytes(codes[j] | codes[j + 16] << 4 for j in range(16))


def test_ggml_mxfp4_placement_gives_gguf_bytes():
    """Canonical GRIT MXFP4 planes relayouted to the ggml placement are
    byte-for-byte what gguf-py's quantize writes for the same values."""
    from gguf import GGMLQuantizationType, quants

    from grit_scan.parsers.ggml_types import MAPPINGS

    rows, nblk = 3, 4
    r = np.random.default_rng(5)
    # no zero codes (ggml has no -0) and a +-6 in every block pins the scale
    codes = r.choice([c for c in range(16) if c not in (0, 8)], size=(rows, nblk, 32))
    codes[:, :, 5] = 7
    exps = r.integers(120, 135, size=(rows, nblk))
    e2m1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    vals = np.array([[[(-1) ** (c >> 3) * e2m1[c & 7] * 2.0 ** (int(exps[i, b]) - 127)
                       for c in codes[i, b]] for b in range(nblk)] for i in range(rows)],
                    np.float32).reshape(rows, nblk * 32)
    want = b"".join(_mxfp4_block_bytes(int(exps[i, b]), codes[i, b].tolist())
                    for i in range(rows) for b in range(nblk))
    gguf_bytes = quants.quantize(vals, GGMLQuantizationType.MXFP4).tobytes()
    assert gguf_bytes == want  # the hand-built struct is what gguf writes
    data = bytes(int(a) | int(b) << 4 for a, b in codes.reshape(-1, 2))  # §3.5 LSB-first
    planes = [data, bytes(exps.reshape(-1).astype(np.uint8)), b"", b""]
    m = MAPPINGS[GGMLQuantizationType.MXFP4.value]
    d = m.descriptor(group_axis=1)
    assert from_canonical(d, (rows, nblk * 32), planes, m.layouts) == gguf_bytes
    assert to_canonical(d, (rows, nblk * 32), gguf_bytes, m.layouts) == planes


def _q4k_block_bytes(d16, dmin16, sc, mn, q):
    """ggml block_q4_K {half d; half dmin; uint8 scales[12]; uint8 qs[128]},
    scales packed as get_scale_min_k4 reads them, element 64c+l in the low
    nibble and 64c+32+l in the high nibble of qs[32c+l]."""
    s = [0] * 12
    for j in range(4):
        s[j] = sc[j] | (sc[j + 4] >> 4) << 6
        s[j + 4] = mn[j] | (mn[j + 4] >> 4) << 6
        s[j + 8] = (sc[j + 4] & 0xF) | (mn[j + 4] & 0xF) << 4
    qs = [q[64 * c + i] | q[64 * c + 32 + i] << 4 for c in range(4) for i in range(32)]
    return d16.tobytes() + dmin16.tobytes() + bytes(s) + bytes(qs)


def test_ggml_q4_k_placement_gives_ggml_block_bytes():
    """Canonical GRADE_Q4KS planes relayouted to the ggml Q4_K placement are
    the block_q4_K bytes built from the struct definition; gguf-py's
    dequantize of those bytes confirms the struct reading."""
    from gguf import GGMLQuantizationType, quants

    from grit_scan.parsers.ggml_types import MAPPINGS

    rows, nblk = 2, 3
    r = np.random.default_rng(9)
    d16 = r.uniform(1e-3, 1e-1, (rows, nblk)).astype(np.float16)
    dm16 = r.uniform(1e-3, 1e-1, (rows, nblk)).astype(np.float16)
    sc = r.integers(0, 64, (rows, nblk, 8))
    mn = r.integers(0, 64, (rows, nblk, 8))
    q = r.integers(0, 16, (rows, nblk, 256))
    blocks = [_q4k_block_bytes(d16[i, b], dm16[i, b], sc[i, b].tolist(), mn[i, b].tolist(),
                               q[i, b].tolist()) for i in range(rows) for b in range(nblk)]
    raw = b"".join(blocks)
    # y = f32(d*sc)*q - f32(dmin*m), per sub-block of 32 (research §2, Q4_K)
    S_ = (d16.astype(np.float32)[..., None] * sc.astype(np.float32))
    Z_ = (dm16.astype(np.float32)[..., None] * mn.astype(np.float32))
    want_vals = (np.repeat(S_, 32, -1) * q.astype(np.float32) - np.repeat(Z_, 32, -1))
    got_vals = quants.dequantize(np.frombuffer(raw, np.uint8).reshape(rows, -1),
                                 GGMLQuantizationType.Q4_K)
    assert same(got_vals, want_vals.reshape(rows, -1))
    planes = [bytes(int(a) | int(b) << 4 for a, b in q.reshape(-1, 2)),  # u4, LSB-first
              bytes(sc.reshape(-1).astype(np.uint8)),  # u6 scales, one per byte (§3.4)
              np.stack([d16, dm16], -1).tobytes(),  # [S1, Z1] per super-block (§8.4)
              bytes(mn.reshape(-1).astype(np.uint8))]  # u6 mins, the zero-point plane
    m = MAPPINGS[GGMLQuantizationType.Q4_K.value]
    d = m.descriptor(group_axis=1)
    assert from_canonical(d, (rows, nblk * 256), planes, m.layouts) == raw
    assert to_canonical(d, (rows, nblk * 256), raw, m.layouts) == planes
