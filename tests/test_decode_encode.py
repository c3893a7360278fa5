"""§8 decode and §9/§10 encode: worked examples, laws and rules."""

import math

import numpy as np
import pytest
import spec_values as S
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from ref_decode import project, ref_decode

from grit_scan.codec import descriptor as D
from grit_scan.codec import fmt
from grit_scan.codec import grade as G
from grit_scan.codec.check import expected_plane_sizes
from grit_scan.codec.decode import decode
from grit_scan.codec.encode import _exp_rule, encode
from grit_scan.codec.errors import GritSizeError, GritValueError

F32 = np.float32


def bits(a):
    a = np.ascontiguousarray(a, dtype=F32)
    return a.view(np.uint32)


def same(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return ((bits(a) == bits(b)) | (np.isnan(a) & np.isnan(b))).all()


# ------------------------------------------------------------------ worked examples


def test_b1_both_directions():
    enc = encode(np.array(S.B1_INPUTS, F32), G.GRADE_MXFP4)
    assert enc.payload == S.B1_PAYLOAD and enc.plane_bytes == S.B1_PLANE_BYTES
    assert enc.desc.hex() == S.A4_HEX["GRADE_MXFP4"]
    out = decode(D.from_hex(S.A4_HEX["GRADE_MXFP4"]), [32], S.B1_PAYLOAD)
    assert same(out, np.array(S.B1_DECODE, F32))
    assert np.signbit(out[8])  # -0.25 ties to the even code, keeping its sign


def test_b2_both_directions():
    vals = np.array([3.0, 0.0, 0.0, 1.0] * 8, F32)
    enc = encode(vals, G.GRADE_I8S24)
    data, s0, s1, aux = enc.planes
    assert data == bytes([0x7F, 0x2A] * 8)
    assert s0 == bytes.fromhex("0c26")  # 0x260c little-endian
    assert aux == bytes.fromhex("cccccccc") and s1 == b""
    assert enc.plane_bytes == S.B2_PLANE_BYTES
    out = decode(D.from_hex(S.A4_HEX["GRADE_I8S24"]), [32], enc.payload)
    assert out[:4].tolist() == [2.99981689453125, 0.0, 0.0, 0.9920654296875]
    assert (bits(out[1::4]) == 0).all() and (bits(out[2::4]) == 0).all()  # +0.0 exactly


# ------------------------------------------------------------------ laws


def test_poison_law_mxfp4():
    for bad in (np.nan, np.inf, -np.inf):
        v = np.linspace(-3, 3, 64).astype(F32)
        v[40] = bad
        enc = encode(v, G.GRADE_MXFP4)
        assert enc.planes[1] == bytes([enc.planes[1][0], 0xFF])  # second block poisoned
        assert enc.planes[0][16:] == bytes(16)  # all 32 codes 0
        out = decode(enc.desc, [64], enc.payload)
        assert np.isnan(out[32:]).all() and not np.isnan(out[:32]).any()
        assert (bits(out[32:]) == 0x7FC00000).all()  # canonical NaN (§1.2)


def test_sparsity_law_wins_over_poison():
    d = D.from_hex(S.A4_HEX["GRADE_I8S24"])
    payload = bytes([0x7F, 0x2A] * 8) + bytes.fromhex("007e") + b"\xcc" * 4  # NaN scale
    out = decode(d, [32], payload)
    assert np.isnan(out[0::4]).all() and np.isnan(out[3::4]).all()
    assert (bits(out[1::4]) == 0).all() and (bits(out[2::4]) == 0).all()


def test_encode_keeps_nan_through_sparsification():
    v = np.array([0.1, np.nan, 5.0, 3.0] + [1, 2, 3, 4] * 7, F32)
    enc = encode(v, G.GRADE_I8S24)
    out = decode(enc.desc, [32], enc.payload)
    assert np.isnan(out[1]) and np.isnan(out[2])  # NaN kept, group poisoned
    assert bits(out[0]) == 0 and bits(out[3]) == 0  # masked: +0.0
    assert enc.planes[1] == bytes.fromhex("007e")


def test_selection_ties_to_lower_index():
    v = np.array([2.0, -2.0, 2.0, 1.0] + [0.0] * 28, F32)
    enc = encode(v, G.GRADE_I8S24)
    assert enc.planes[3][0] & 0xF == 0b0100  # indices {0, 1}: idx0=0, idx1=1


def test_nvf4_wide_dynamic_range_underflows_to_signed_zeros():
    v = np.zeros(32, F32)
    v[:16] = np.linspace(-2000, 2000, 16)
    v[16:] = np.array([1e-4, -1e-4] * 8, F32)  # ~2^-24 of the tensor amax
    enc = encode(v, G.GRADE_NVF4)
    assert enc.planes[1][1] == 0x00  # the block's E4M3 scale underflows to zero
    out = decode(enc.desc, [32], enc.payload)
    assert (out[16:] == 0).all()
    assert (np.signbit(out[16:]) == np.signbit(v[16:])).all()  # signs preserved


def test_nvf4_per_tensor_scale_rule():
    v = np.zeros(32, F32)
    v[0] = 1e-42  # amax so small that sT underflows -> 2^-149 (§10.3 step 1)
    enc = encode(v, G.GRADE_NVF4)
    assert np.frombuffer(enc.planes[2], "<u4")[0] == 0x00000001
    v[0] = 0.0
    enc = encode(v, G.GRADE_NVF4)
    assert np.frombuffer(enc.planes[2], "<f4")[0] == 1.0  # amax == 0 -> sT = 1.0


def ref_q4ks_block(v):
    """§10.2 transliterated per super-block with numpy scalars (binary32 RNE,
    binary16 via numpy's IEEE conversion)."""
    f = np.float32
    sub = v.reshape(8, 32)
    steps, offs = [], []
    for s in sub:
        lo = min(f(0), s.min())
        hi = max(f(0), s.max())
        steps.append(f(f(hi - lo) / f(15)))
        offs.append(f(-lo))
    d = np.float16(f(max(steps) / f(63)))
    dmin = np.float16(f(max(offs) / f(63)))
    dv, mv = f(d), f(dmin)  # re-read after the binary16 round trip
    sc = [0 if dv == 0 else int(min(63, max(0, np.rint(f(st / dv))))) for st in steps]
    m = [0 if mv == 0 else int(min(63, max(0, np.rint(f(of / mv))))) for of in offs]
    q = []
    for j, s in enumerate(sub):
        Sj = f(dv * f(sc[j]))
        Zj = f(mv * f(m[j]))
        for x in s:
            q.append(0 if Sj == 0 else int(min(15, max(0, np.rint(f(f(x + Zj) / Sj))))))
    return d, dmin, sc, m, q


def test_q4ks_rereads_d_and_dmin():
    rng = np.random.default_rng(4)
    v = (rng.standard_normal(512) * 3).astype(F32)
    enc = encode(v, G.GRADE_Q4KS)
    s1 = np.frombuffer(enc.planes[2], "<u2").reshape(-1, 2)
    for b in range(2):
        d, dmin, sc, m, q = ref_q4ks_block(v[256 * b : 256 * (b + 1)])
        assert s1[b, 0] == d.view(np.uint16) and s1[b, 1] == dmin.view(np.uint16)
        assert list(enc.planes[1][8 * b : 8 * b + 8]) == sc
        assert list(enc.planes[3][8 * b : 8 * b + 8]) == m
        data = np.frombuffer(enc.planes[0][128 * b : 128 * (b + 1)], np.uint8)
        got_q = np.empty(256, np.uint8)
        got_q[0::2], got_q[1::2] = data & 0xF, data >> 4
        assert got_q.tolist() == q


def test_q4ks_poison():
    v = np.ones(256, F32)
    v[7] = np.inf
    enc = encode(v, G.GRADE_Q4KS)
    assert enc.planes[2] == bytes.fromhex("007e0000")  # d = NaN, dmin = 0
    assert set(enc.planes[0]) == {0} and set(enc.planes[1]) == {0} and set(enc.planes[3]) == {0}
    assert np.isnan(decode(enc.desc, [256], enc.payload)).all()


# ------------------------------------------------------------------ exp2 rules (§9.2)


@pytest.mark.parametrize("amax,floor_,ceil_,rne_", [
    (4.0, 2, 2, 2),           # exact power of two: all three agree
    (5.0, 2, 3, 2),           # f = 1.25, f^2 = 1.5625 < 2
    (6.0, 2, 3, 3),           # f = 1.5,  f^2 = 2.25 > 2
    (1.4142135, 0, 1, 0),     # just below sqrt 2 in binary32
    (1.4142137, 0, 1, 1),     # just above
    (2.0**-126, -126, -126, -126),
    (2.0**-149, -149, -149, -149),  # subnormal: from the significand, not log2
    (3.0 * 2.0**-140, -139, -138, -138),
    (0.99999994, -1, 0, 0),   # the largest binary32 below 1
    (3.4028235e38, 127, 128, 128),
])
def test_exp2_rules_direct(amax, floor_, ceil_, rne_):
    a = np.array([amax], F32)
    assert _exp_rule("exp2floormaxabs", a)[0] == floor_
    assert _exp_rule("exp2ceilmaxabs", a)[0] == ceil_
    assert _exp_rule("exp2rnemaxabs", a)[0] == rne_


@given(st.floats(min_value=2.0**-149, max_value=2.0**127, width=32))
def test_exp2_floor_and_ceil_against_exact_arithmetic(x):
    a = np.array([x], F32)
    m, e = math.frexp(float(a[0]))
    fl = e - 1
    assert _exp_rule("exp2floormaxabs", a)[0] == fl
    assert 2.0**fl <= float(a[0]) < 2.0 ** (fl + 1)
    ce = _exp_rule("exp2ceilmaxabs", a)[0]
    assert 2.0 ** (ce - 1) < float(a[0]) <= 2.0**ce


def test_exp2ceilmaxabs_grade_encodes_with_the_ceiling():
    g = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2ceilmaxabs)")
    v = np.zeros(32, F32)
    v[0] = 5.0  # floor 2, ceil 3 -> X = 3 - 2 = 1
    assert encode(v, g).planes[1] == bytes([127 + 1])
    v[0] = 4.0  # power of two: X = 0
    assert encode(v, g).planes[1] == bytes([127])
    assert encode(v, G.GRADE_MXFP4).planes[1] == bytes([127])


def test_mx_clamp():
    v = np.full(32, 1e-44, F32)  # floor(log2) = -146 -> X clamps at -127
    enc = encode(v, G.GRADE_MXFP4)
    assert enc.planes[1] == bytes([0])
    assert (decode(enc.desc, [32], enc.payload) == 0).all()


finite_f32 = st.floats(min_value=-(2.0**100), max_value=2.0**100, width=32)


@pytest.mark.parametrize("g", [
    G.GRADE_MXFP4,
    G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2ceilmaxabs)"),
    G.parse_grade("grit1(e=e4m3,k0=16,s0=e8m0,esr=exp2floormaxabs)"),
])
@settings(max_examples=60, deadline=None)
@given(vals=hnp.arrays(F32, 64, elements=finite_f32))
def test_encode_decode_encode_fixed_point_exp2(g, vals):
    """encode∘decode∘encode is a fixed point: byte for byte for the floor
    rule; in decoded values for the ceil rule (which may pick a smaller
    exponent that represents the same values exactly)."""
    reg = G.registry([g])
    first = encode(vals, g)
    back = decode(first.desc, [64], first.payload, grades=reg)
    second = encode(back, g)
    assert same(decode(second.desc, [64], second.payload, grades=reg), back)
    if g["esr"] == "exp2floormaxabs":
        # bytes too, except a group that underflowed to all zeros: the
        # all-zero rule (§9.1 rule 3) then stores scale 1.0
        k0 = g.get_int("k0")
        live = [i for i in range(64 // k0) if (back[i * k0 : (i + 1) * k0] != 0).any()]
        assert [second.planes[1][i] for i in live] == [first.planes[1][i] for i in live]
        if len(live) == 64 // k0:
            assert second.payload == first.payload


def test_exp2rne_is_not_idempotent_counterexample():
    """Finding: the rne exponent rule is not a fixed point.  amax = 1.2500001·2^54
    rounds its exponent down (f < √2); the element 5.0000004 then rounds up to
    6, the decoded amax 1.5·2^54 has f > √2, and the re-encode picks exponent
    55, under which 2^51 ties to 0.  Pinned so nobody 'fixes' it silently."""
    v = np.full(64, 1.1259e15, F32)
    v[0] = 2.2518e16
    first = encode(v, G.GRADE_MXFP4_RNE)
    back = decode(first.desc, [64], first.payload)
    second = encode(back, G.GRADE_MXFP4_RNE)
    again = decode(second.desc, [64], second.payload)
    assert first.planes[1][0] == 127 + 52 and second.planes[1][0] == 127 + 53
    assert back[1] == 2.0**51 and again[1] == 0.0


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("name", list(G.REGISTERED))
def test_every_grade_keeps_nan_zero_sign_and_sparsity(name):
    g = G.REGISTERED[name]
    n = 512
    v = (np.random.default_rng(9).standard_normal(n) * 2).astype(F32)
    v[0:32] = -0.0  # an all-(negative)-zero group
    v[300] = np.nan  # in the second Q4KS super-block
    enc = encode(v, g)
    d2 = D.from_hex(enc.desc.hex())  # through the descriptor bytes
    out = decode(d2, [n], enc.payload, grades=G.registry([g]))
    assert np.isnan(out[300])
    if g.sparse:
        # every masked position is +0.0; the zero group's survivors keep -0.0
        kept = np.zeros(n, bool)
        meta = np.frombuffer(enc.planes[3], np.uint8)
        for q in range(n // 4):
            nib = (int(meta[q // 2]) >> (4 * (q % 2))) & 0xF
            kept[4 * q + (nib & 3)] = kept[4 * q + (nib >> 2)] = True
        assert (bits(out[~kept]) == 0).all()
    assert (out[:32] == 0).all()
    # §1.3: -0.0 survives where the element format has a negative-zero code
    # (e2m1); s8 and u4 have none, so the zero is +0.0 there
    assert np.signbit(out[:32]).all() == (fmt.unpack(g.frame.elem).kind == "float")


def test_dt_projection():
    g = G.parse_grade("grit1(e=e4m3,k0=4,s0=binary32,dt=bfloat16,esr=ratiomaxabs)")
    d = D.from_grade(g)
    data = bytes([0x38, 0x39, 0x3A, 0x3B])  # 1.0, 1.125, 1.25, 1.375
    scale = np.array([1.0 + 2**-20], "<f4").tobytes()
    out = decode(d, [4], data + scale, grades=G.registry([g]))
    raw = np.array([1.0, 1.125, 1.25, 1.375], F32) * F32(1.0 + 2**-20)
    # bfloat16 RNE at the bit level: round binary32's low half away, ties to even
    b = raw.view(np.uint32).astype(np.uint64)
    want = (((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(F32)
    assert same(out, want)
    assert same(want, [1.0, 1.125, 1.25, 1.375])  # 2^-20 is far below bfloat16's 2^-7 ulp


@pytest.mark.parametrize("dr,want", [
    ("rne", [1 + 2**-10, 1.125 + 2**-10, -(1 + 2**-10), 0.0]),
    ("rtz", [1.0, 1.125, -1.0, 0.0]),
])
def test_dt_binary16_projection_rounding(dr, want):
    """scale = 1 + 3·2^-12 is 0.75 of a binary16 ulp above 1: RNE rounds the
    products up to the next binary16, RTZ truncates them (values by hand)."""
    g = G.parse_grade(f"grit1(e=e4m3,k0=4,s0=binary32,dt=binary16,dr={dr},esr=ratiomaxabs)")
    data = bytes([0x38, 0x39, 0xB8, 0x00])  # 1.0, 1.125, -1.0, 0.0
    scale = np.array([1.0 + 3 * 2**-12], "<f4").tobytes()
    out = decode(D.from_grade(g), [4], data + scale, grades=G.registry([g]))
    assert same(out, want)


# ------------------------------------------------------------------ general decode


VARIETY = [
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)", (2, 64), 1),
    ("grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)", (32, 3), 0),
    ("grit1(e=u4,k0=32,s0=u6,k1=8,s1=binary16,zp=u6,zps=l1,esr=affineminmax)", (2, 256), 1),
    ("grit1(e=s8,k0=32,s0=binary16,sp=2:4:u2:asclsb,esr=ratiomaxabs)", (3, 32), 1),
    ("grit1(e=s4,k0=8,s0=binary16,zp=u4,zpc=minus1,esr=affineminmax)", (4, 2, 8), 2),
    ("grit1(e=e3m2,k0=4,s0=e4m3,ct=pad8,esr=ratiomaxabs)", (8, 3), 0),
    ("grit1(e=e3m2,k0=4,s0=e4m3,esr=ratiomaxabs)", (3, 8), 1),
    ("grit1(e=u4,k0=16,s0=bfloat16,po=msb,esr=ratiomaxabs)", (2, 32), 1),
    ("grit1(e=e5m2,k0=8,s0=e8m0,k1=2,s1=binary16,esr=ratiomaxabs)", (2, 32), 1),
    ("grit1(e=s8,k0=8,s0=e8m0,sp=2:8:u4:unordered,esr=ratiomaxabs)", (16, 2), 0),
    ("grit1(e=0x03e5,k0=4,s0=u8,esr=ratiomaxabs)", (2, 2, 4), 2),
    ("grit1(e=e2m1,k0=4,s0=e8m0,dt=binary16,dr=rtz,esr=exp2floormaxabs)", (2, 8), 1),
    ("grit1(e=u2,k0=4,s0=binary32,zp=e4m3,esr=affineminmax)", (4, 4), 0),
    ("grit1(e=e2m1,k0=4,s0=e4m3,k1=0,s1=binary16,zp=u4,zps=l1,esr=affineminmax)", (2, 8), 1),
    ("grit1(e=binary16,k0=2,s0=u2,esr=ratiomaxabs)", (3, 4), 1),
]


@pytest.mark.parametrize("text,shape,ga", VARIETY)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decode_matches_elementwise_reference(text, shape, ga, seed):
    g = G.parse_grade(text)
    d = D.from_grade(g, group_axis=ga)
    sizes = expected_plane_sizes(d, shape)
    rng = np.random.default_rng(seed)
    planes = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes.as_list()]
    if seed == 0 and d.scale0 == 0x4807:
        planes[1] = bytes([0x7F] * len(planes[1]))  # some ordinary scales too
    if g.sparse and g["sp"].endswith("asclsb"):
        planes[3] = b"\xcc" * len(planes[3])  # valid ordered metadata
    got = decode(d, shape, planes=planes, grades=G.registry([g]), chunk=64)
    want = ref_decode(d, shape, planes)
    if g["dt"] != "binary32":
        want = project(want, fmt.FORMAT_TOKENS[g["dt"]], g["dr"], g["ds"])
    assert got.shape == tuple(shape)
    assert same(got, want)


def test_decode_refuses_wrong_sizes():
    d = D.from_hex(S.A4_HEX["GRADE_MXFP4"])
    with pytest.raises(GritSizeError) as ei:
        decode(d, [32], S.B1_PAYLOAD[:-1])
    assert ei.value.detail.plane == 1
    with pytest.raises(GritSizeError):
        decode(d, [32], S.B1_PAYLOAD + b"\x00")


def test_encode_refusals():
    with pytest.raises(GritValueError):
        encode(np.zeros(33, F32), G.GRADE_MXFP4)  # not a multiple of k0
    g = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,k1=2,s1=binary16,esr=exp2floormaxabs)")
    with pytest.raises(GritValueError, match="two scale levels"):
        encode(np.zeros(64, F32), g)
    u6 = G.parse_grade("grit1(e=e2m1,k0=32,s0=u6,esr=ratiomaxabs)")
    with pytest.raises(GritValueError, match="NaN"):
        encode(np.full(32, np.nan, F32), u6)


def test_chunking_does_not_change_results():
    v = np.random.default_rng(2).standard_normal((8, 512)).astype(F32)
    for g in G.REGISTERED.values():
        a = encode(v, g, 1)
        b = encode(v, g, 1, chunk=256)
        assert a.payload == b.payload
        assert same(decode(a.desc, v.shape, a.payload),
                    decode(a.desc, v.shape, a.payload, chunk=256))
