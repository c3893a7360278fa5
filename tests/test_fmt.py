"""§2 grit_fmt_t: words, validity, decode of every code, the ladder and encode.

Oracles: the spec's tables (A.1-A.3), numpy's IEEE binary16, the binary32
bit layout (bfloat16 = top half, e5m2 = top byte of binary16), and a direct
transliteration of the §2.4/§2.5 pseudo-code below (``ref_decode``,
``ref_encode_rne``) that shares no code with grit_scan.codec.fmt.
"""

import bisect
import functools
import math
import random
import struct
from fractions import Fraction

import numpy as np
import pytest
import spec_values as S
from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.codec import fmt
from grit_scan.codec.errors import GritValueError

# ---------------------------------------------------------------- references


def fields(word):
    return dict(bias_ovr=word >> 15 & 1, unsigned=word >> 14 & 1, szero=word >> 13 & 1,
                nan_enc=word >> 11 & 3, has_inf=word >> 10 & 1, p=word >> 5 & 31, wm1=word & 31)


class Tiny(Exception):
    """The exact value is far below binary32's range (|v| < 2^-2000)."""


class Huge(Exception):
    """The exact value is far above binary32's range (|v| > 2^2000)."""


def pow2(k):
    if k < -2000:
        raise Tiny
    if k > 2000:
        raise Huge
    return Fraction(2) ** k


def ref_decode(word, code):
    """§2.4 verbatim, in exact rationals (None = NaN, 'inf'/'-inf')."""
    f = fields(word)
    w = f["wm1"] + 1
    code &= (1 << w) - 1
    if f["p"] == 31:
        if f["unsigned"]:
            return Fraction(code)
        if code >= 2 ** (w - 1):
            code -= 2 ** w
        return Fraction(code)
    if f["p"] == 0:
        if f["nan_enc"] != 0 and code == 2 ** w - 1:
            return None
        return pow2(code - (2 ** (w - 1) - 1))
    m_bits = f["p"] - 1
    e_bits = w - (0 if f["unsigned"] else 1) - m_bits
    bias = 2 ** (e_bits - 1) - 1
    m = code & (2 ** m_bits - 1)
    e = (code >> m_bits) & (2 ** e_bits - 1)
    s = 0 if f["unsigned"] else (code >> (m_bits + e_bits)) & 1
    if e == 2 ** e_bits - 1:
        if f["has_inf"]:
            v = "inf" if m == 0 else None
        elif f["nan_enc"] == 1 and m == 2 ** m_bits - 1:
            v = None
        elif f["nan_enc"] == 2 and m != 0:
            v = None
        else:
            v = (1 + Fraction(m, 2 ** m_bits)) * pow2(e - bias)
    elif e == 0:
        v = Fraction(m, 2 ** m_bits) * pow2(1 - bias) if m else Fraction(0)
    else:
        v = (1 + Fraction(m, 2 ** m_bits)) * pow2(e - bias)
    if v is None:
        return None
    if v == "inf":
        return "-inf" if s else "inf"
    return -v if s else v


@functools.cache
def ref_ladder(word):
    f = fields(word)
    w = f["wm1"] + 1
    span = 2 ** (w - (0 if f["unsigned"] else 1))
    out = []
    for c in range(span):
        v = ref_decode(word, c)
        if isinstance(v, Fraction):
            out.append((abs(v), c))
    return sorted(out)


def ref_encode_rne(word, x):
    """§2.5 steps 1-5 with satfinite, for finite non-NaN x (width <= 8)."""
    f = fields(word)
    w = f["wm1"] + 1
    lad = ref_ladder(word)
    mags = ref_mags(word)
    neg = math.copysign(1.0, x) < 0
    a = abs(Fraction(x)) if math.isfinite(x) else None
    if a is None or a >= lad[-1][0]:
        code = lad[-1][1]
    elif a < lad[0][0]:
        code = lad[0][1]  # below the ladder (only exponent-only formats)
    else:
        i = bisect.bisect_right(mags, a) - 1  # ladder[i].mag <= a < ladder[i+1].mag
        lo, hi = lad[i], lad[i + 1]
        if a - lo[0] < hi[0] - a:
            code = lo[1]
        elif a - lo[0] > hi[0] - a:
            code = hi[1]
        else:
            code = lo[1] if lo[1] % 2 == 0 else hi[1]
    if neg and not f["unsigned"]:
        code |= 1 << (w - 1)
    return code


@functools.cache
def ref_mags(word):
    return [m for m, _ in ref_ladder(word)]


def valid_words(max_width=8):
    for word in range(1, 1 << 16):
        if fmt.is_valid(word) and (word & 31) + 1 <= max_width:
            yield word


def f32_of(frac):
    """Fraction -> float via binary64 (exact for the values compared here)."""
    return float(frac)


# ---------------------------------------------------------------- words

REGISTERED_WORDS = set(S.FORMAT_WORDS_A1.values()) | set(S.FORMAT_WORDS_A.values())


def test_registered_words_are_a1_and_reconstruction():
    for tok, word in {**S.FORMAT_WORDS_A1, **S.FORMAT_WORDS_A}.items():
        assert fmt.resolve_token(tok) == word
        assert fmt.name(word) == tok
        assert fmt.is_valid(word)


def test_a1_words_unpack_to_their_description():
    e2m1 = fmt.unpack(0x2043)
    assert (e2m1.width, e2m1.kind, e2m1.m_bits, e2m1.e_bits, e2m1.bias) == (4, "float", 1, 2, 1)
    e8m0 = fmt.unpack(0x4807)
    assert (e8m0.unsigned, e8m0.kind, e8m0.width, e8m0.nan_enc) == (1, "exp", 8, 1)
    b16 = fmt.unpack(0x356F)
    assert (b16.has_inf, b16.nan_enc, b16.m_bits, b16.e_bits, b16.bias) == (1, 2, 10, 5, 15)
    assert fmt.unpack(0x03E7).kind == "int" and fmt.unpack(0x43E3).unsigned == 1


@pytest.mark.parametrize("word", [0x1234, 0x2043, 0xFFFF, 0x8001])
def test_pack_unpack_round_trip(word):
    assert fmt.pack(fmt.unpack(word)) == word


@pytest.mark.parametrize("word,why", [
    (0x0000, "ABSENT"),
    (0x2040, "1-bit"),
    (0x2043 | 0x8000, "bias_ovr"),
    (0x2043 | 0x1800, "nan_enc = 3"),
    (0x2083, "exponent bit"),  # 4-bit signed float, p=4 (3 mantissa bits): no exponent
])
def test_invalid_words(word, why):
    assert why in (fmt.problem(word) or "")
    with pytest.raises(GritValueError):
        fmt.fmt_decode(word, 0)


# ---------------------------------------------------------------- decode


def test_e2m1_table_a2():
    assert [fmt.fmt_decode(0x2043, c) for c in range(16)] == S.E2M1
    assert math.copysign(1, fmt.fmt_decode(0x2043, 8)) == -1


def test_e8m0_a3():
    for c in range(255):
        assert fmt.fmt_decode(0x4807, c) == 2.0 ** (c - 127)
    assert math.isnan(fmt.fmt_decode(0x4807, 255))
    assert fmt.fmt_decode(0x4807, 0x7F) == 1.0
    assert fmt.fmt_decode_bits(0x4807, 0) == 0x00400000  # 2^-127, a binary32 subnormal


def test_e4m3_a3():
    d = lambda c: fmt.fmt_decode(0x2887, c)  # noqa: E731
    assert d(0x00) == 0.0 and math.copysign(1, d(0x80)) == -1 and d(0x80) == 0
    assert d(0x01) == 0.001953125
    assert d(0x38) == 1.0
    assert d(0x7E) == 448.0
    assert math.isnan(d(0x7F)) and math.isnan(d(0xFF))
    nans = [c for c in range(256) if math.isnan(d(c))]
    assert nans == [0x7F, 0xFF]


def test_binary16_every_code_matches_numpy():
    codes = np.arange(1 << 16, dtype=np.uint16)
    want = codes.view(np.float16).astype(np.float32)
    got = fmt.decode_table(0x356F)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all()
    assert all(fmt.fmt_decode_bits(0x356F, c) == 0x7FC00000 for c in (0x7C01, 0xFE00, 0xFFFF))


def test_bfloat16_every_code_is_top_half_of_binary32():
    for c in range(0, 1 << 16, 7):
        want = struct.unpack("<f", struct.pack("<I", c << 16))[0]
        got = fmt.fmt_decode(0x350F, c)
        assert (math.isnan(got) and math.isnan(want)) or got == want and (
            math.copysign(1, got) == math.copysign(1, want))


def test_e5m2_every_code_is_top_byte_of_binary16():
    for c in range(256):
        want = float(np.array([c << 8], dtype=np.uint16).view(np.float16)[0])
        got = fmt.fmt_decode(0x3467, c)
        assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(
            1, got) == math.copysign(1, want))


def test_integer_decode():
    assert [fmt.fmt_decode(0x03E3, c) for c in (0, 7, 8, 15)] == [0, 7, -8, -1]
    assert [fmt.fmt_decode(0x43E3, c) for c in (0, 15)] == [0, 15]
    assert fmt.fmt_decode(0x03E7, 0x80) == -128  # asymmetric minimum stays decodable (§1.5)


def test_every_code_of_every_valid_narrow_word_matches_reference():
    """§2.4 for every valid word of width <= 8 and every code."""
    n = 0
    for word in valid_words(8):
        table = fmt.decode_table(word)
        for code in range(1 << ((word & 31) + 1)):
            ref = ref_decode(word, code)
            got = float(table[code])
            if ref is None:
                assert math.isnan(got), (hex(word), code)
            elif isinstance(ref, str):
                assert got == (math.inf if ref == "inf" else -math.inf)
            else:
                with np.errstate(over="ignore"):
                    want = float(np.float32(f32_of(ref)))
                assert got == want, (hex(word), code, got, want)
                if ref == 0:
                    sign_neg = (code >> (word & 31)) & 1 and not (word >> 14 & 1)
                    # a negative-zero code keeps its sign (§1.3)
                    if fields(word)["p"] not in (0, 31) and sign_neg:
                        assert math.copysign(1, got) == -1
            n += 1
    assert n > 10000


@given(st.integers(min_value=1, max_value=0xFFFF), st.integers(min_value=0, max_value=2**32 - 1))
@settings(max_examples=2000)
def test_decode_any_valid_word_any_code(word, code):
    if not fmt.is_valid(word):
        return
    got = fmt.fmt_decode(word, code)
    try:
        ref = ref_decode(word, code)
    except Tiny:
        assert got == 0.0
        return
    except Huge:
        assert math.isinf(got)
        return
    if ref is None:
        assert fmt.f32_bits(got) == 0x7FC00000
    elif isinstance(ref, str):
        assert math.isinf(got)
    else:
        if abs(ref) >= Fraction(2) ** 128:
            want = math.inf if ref > 0 else -math.inf
        elif abs(ref) < Fraction(2) ** -160:
            want = 0.0 if ref >= 0 else -0.0
        else:
            with np.errstate(over="ignore"):
                want = float(np.float32(float(ref)))
        assert got == want


# ---------------------------------------------------------------- ladder / encode


def test_ladder_e2m1():
    assert fmt.ladder(0x2043) == [(0.0, 0), (0.5, 1), (1.0, 2), (1.5, 3), (2.0, 4), (3.0, 5),
                                  (4.0, 6), (6.0, 7)]


def test_tie_check_10_1():
    for x, code in S.TIE_CHECK:
        assert fmt.fmt_encode_rne(0x2043, x) == code
        assert fmt.fmt_encode_rne(0x2043, -x) == code | 8


def test_negative_zero_encodes_to_negative_zero_code():
    assert fmt.fmt_encode_rne(0x2043, -0.0) == 8  # §10.1 step 2
    assert fmt.fmt_encode_rne(0x2887, -0.0) == 0x80


def test_nan_encodes_to_canonical_nan_code():
    assert fmt.fmt_encode_rne(0x2887, math.nan) == 0x7F
    assert fmt.fmt_encode_rne(0x4807, math.nan) == 0xFF
    assert fmt.fmt_encode_rne(0x356F, math.nan) == 0x7E00
    with pytest.raises(GritValueError):
        fmt.fmt_encode_rne(0x2043, math.nan)  # E2M1 has no NaN (§8.2)


def _probe_values(word, rng):
    lad = [float(m) for m, _ in ref_ladder(word)]
    idx = range(len(lad))
    if word not in REGISTERED_WORDS and len(lad) > 24:  # every rung of registered words
        idx = sorted(set(range(8)) | set(range(len(lad) - 8, len(lad)))
                     | set(rng.sample(range(len(lad)), 8)))
    vals = set()
    for i in idx:
        m = lad[i]
        vals.update({m, m * 1.0000001, m * 0.9999999, m * 2, m / 2})
        if i + 1 < len(lad):
            mid = (m + lad[i + 1]) / 2
            vals.update({mid, np.nextafter(mid, 0), np.nextafter(mid, math.inf)})
    vals.update({0.0, 1e-30, 1e30, math.inf})
    return sorted(float(v) for v in vals if v == v)


def test_encode_rne_matches_ladder_reference_for_every_narrow_float_word():
    n = 0
    rng = random.Random(1234)
    for word in valid_words(8):
        if fields(word)["p"] == 31:
            continue
        for x in _probe_values(word, rng):
            for v in (x, -x):
                want = ref_encode_rne(word, v)
                assert fmt.fmt_encode_rne(word, v) == want, (hex(word), v)
                n += 1
    assert n > 50000


@given(st.floats(width=32, allow_nan=False))
def test_binary16_encode_is_ieee(x):
    with np.errstate(over="ignore"):
        want = int(np.array([x], dtype=np.float32).astype(np.float16).view(np.uint16)[0])
    assert fmt.to_binary16(x) == want
    sat = fmt.fmt_encode_rne(0x356F, x, "satfinite")
    if math.isfinite(float(np.float16(0)) + abs(x)) and abs(x) < 65520:
        assert sat == want
    elif abs(x) >= 65520:
        assert sat & 0x7FFF == 0x7BFF  # satfinite: max finite 65504


@given(st.floats(width=32, allow_nan=False))
def test_bfloat16_encode_is_rne_of_the_top_half(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    want = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    assert fmt.to_bfloat16(x) == want


@given(st.floats(allow_nan=False, allow_infinity=True, width=32))
def test_binary32_is_identity(x):
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    assert fmt.to_binary32(x) == bits
    assert fmt.from_binary32(bits) == x


def test_integer_encode_clamps_symmetrically_1_5():
    s8 = 0x03E7
    assert fmt.fmt_encode_rne(s8, -1000.0) == (-127) & 0xFF  # never -128
    assert fmt.fmt_encode_rne(s8, 1000.0) == 127
    assert fmt.fmt_encode_rne(s8, 2.5) == 2 and fmt.fmt_encode_rne(s8, 3.5) == 4  # ties even
    assert fmt.fmt_encode_rne(s8, -2.5) == (-2) & 0xFF
    assert fmt.fmt_encode_rne(0x43E3, 16.0) == 15 and fmt.fmt_encode_rne(0x43E3, -3.0) == 0
    assert fmt.fmt_encode_rne(s8, -math.inf) == (-127) & 0xFF


def test_ieee_saturation_overflows_to_inf_or_nan():
    assert fmt.fmt_encode(0x3467, 1e9, "rne", "ieee") == 0x7C  # e5m2 +Inf
    assert fmt.fmt_encode(0x3467, 1e9, "rne", "satfinite") == 0x7B
    assert fmt.fmt_encode(0x2887, 1e9, "rne", "ieee") == 0x7F  # e4m3: no Inf -> NaN
    assert fmt.fmt_encode(0x2887, 1e9, "rtz", "ieee") == 0x7E  # rtz overflow keeps max
    assert fmt.fmt_encode(0x2887, 464.0, "rne", "ieee") == 0x7E  # below max+ulp/2
    assert fmt.fmt_encode(0x2887, 480.0, "rne", "ieee") == 0x7F  # tie past max -> overflow


def test_directed_roundings():
    e4m3 = 0x2887
    x = 1.01  # between 1.0 (0x38) and 1.125 (0x39)
    assert fmt.fmt_encode(e4m3, x, "rtz") == 0x38
    assert fmt.fmt_encode(e4m3, x, "rup") == 0x39
    assert fmt.fmt_encode(e4m3, x, "rdn") == 0x38
    assert fmt.fmt_encode(e4m3, -x, "rup") == 0xB8
    assert fmt.fmt_encode(e4m3, -x, "rdn") == 0xB9
    assert fmt.fmt_encode(e4m3, 1.0625, "rna") == 0x39  # tie away from zero
    assert fmt.fmt_encode(e4m3, 1.0625, "rne") == 0x38  # tie to even


def test_aliases_and_rejections():
    for alias, tok in S.ALIASES.items():
        assert fmt.resolve_token(alias) == fmt.resolve_token(tok)
        assert fmt.resolve_token(alias.upper()) == fmt.resolve_token(tok)
    for bad, clause in S.REJECTED.items():
        with pytest.raises(GritValueError) as ei:
            fmt.resolve_token(bad)
        assert clause in str(ei.value)
    with pytest.raises(GritValueError, match="two formats"):
        fmt.resolve_token("fp8")


def test_fnuz_error_names_the_real_format():
    with pytest.raises(GritValueError) as ei:
        fmt.resolve_token("e4m3fnuz")
    msg = str(ei.value)
    assert "e4m3fnuz is not e4m3" in msg and "bias 8" in msg and "§0.3a" in msg
