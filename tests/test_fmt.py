"""§2 grit_fmt_t: words, validity, decode of every code, the ladder and encode.

Oracles: the spec's tables (A.1-A.3), numpy's IEEE binary16, the binary32
bit layout (bfloat16 = top half, e5m2 = top byte of binary16), and a direct
transliteration of the §2.4/§2.5 pseudo-code in ref_fmt.py (``ref_decode``,
``ref_encode_rne``) that shares no code with grit_scan.codec.fmt.
"""

import math
import random
import struct

import numpy as np
import pytest
import spec_values as S
from hypothesis import given, settings
from hypothesis import strategies as st
from ref_fmt import fields, ref_decode, ref_encode_rne, ref_f32, ref_ladder, same_f32

from grit_scan.codec import fmt, fmt_array
from grit_scan.codec.errors import GritValueError

# ---------------------------------------------------------------- references


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
    got = fmt_array.decode_table(0x356F)
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
        table = fmt_array.decode_table(word)
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
    want = ref_f32(word, code)  # exact rational, RNE into binary32, signed zero/Inf
    assert same_f32(got, want), (hex(word), code, got, want)
    if math.isnan(want):
        assert fmt.f32_bits(got) == 0x7FC00000  # §1.2 canonical NaN


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
    words = {**S.FORMAT_WORDS_A1, **S.FORMAT_WORDS_A}  # A.1 / RECONSTRUCTION §3 words
    for alias, tok in S.ALIASES.items():
        assert fmt.resolve_token(alias) == words[tok]
        assert fmt.resolve_token(alias.upper()) == words[tok]
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
