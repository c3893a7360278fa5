"""The independent §2 reference (ref_fmt) agrees with numpy and ml_dtypes.

ref_fmt is the oracle for the library's format codecs, so it is checked
here against third-party implementations of every format they know:
numpy's IEEE binary16/binary32 and integer casts, and ml_dtypes' bfloat16,
OCP FP8/FP6/FP4 and E8M0 types.  No grit_scan code is imported.
"""

import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ref_fmt import f32_round, ref_encode_rne, ref_f32, same_f32

E2M1, E4M3, E5M2, E2M3, E3M2, E8M0 = 0x2043, 0x2887, 0x3467, 0x2085, 0x2065, 0x4807
BINARY16, BFLOAT16, BINARY32 = 0x356F, 0x350F, 0x371F
U2, U4, U6, U8, S4, S8 = 0x43E1, 0x43E3, 0x43E5, 0x43E7, 0x03E3, 0x03E7


def ml(name):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    return getattr(ml_dtypes, name)


def third_party(word):
    """(dtype whose raw codes are the format's codes, code width in bits)."""
    return {
        BINARY16: (np.float16, 16), S8: (np.int8, 8), U8: (np.uint8, 8),
        BFLOAT16: (lambda: ml("bfloat16"), 16), E4M3: (lambda: ml("float8_e4m3fn"), 8),
        E5M2: (lambda: ml("float8_e5m2"), 8), E2M3: (lambda: ml("float6_e2m3fn"), 6),
        E3M2: (lambda: ml("float6_e3m2fn"), 6), E2M1: (lambda: ml("float4_e2m1fn"), 4),
        E8M0: (lambda: ml("float8_e8m0fnu"), 8), S4: (lambda: ml("int4"), 4),
        U4: (lambda: ml("uint4"), 4),
    }[word]


def dtype_of(word):
    dt, width = third_party(word)
    if not isinstance(dt, type):
        dt = dt()
    return np.dtype(dt), width


@pytest.mark.parametrize("word", [BINARY16, BFLOAT16, E4M3, E5M2, E2M3, E3M2, E2M1, E8M0,
                                  S8, U8, S4, U4])
def test_every_code_matches_third_party(word):
    dt, width = dtype_of(word)
    if width == 16:  # every exponent and sign, a spread of mantissas (incl. the extremes)
        raw = np.array([hi << 8 | lo for hi in range(256)
                        for lo in (0, 1, 2, 0x40, 0x55, 0x7F, 0x80, 0xC1, 0xFE, 0xFF)], np.uint16)
    else:
        raw = np.arange(1 << width, dtype=np.uint8)
    want = raw.view(dt).astype(np.float32)
    for code, w in zip(raw.tolist(), want.tolist()):
        assert same_f32(ref_f32(word, code), w), (hex(word), code, ref_f32(word, code), w)


def test_binary32_codes_match_the_ieee_bit_layout():
    rng = np.random.default_rng(7)
    codes = list(rng.integers(0, 2**32, 5000)) + [0, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
                                                   0x7F800000, 0x7F800001, 0x7FC00000,
                                                   0x80000000, 0x80000001, 0xFF800000]
    for c in codes:
        want = struct.unpack("<f", struct.pack("<I", int(c)))[0]
        assert same_f32(ref_f32(BINARY32, int(c)), want), hex(c)


def test_spec_worked_values():
    """§2.4 / A.2 / A.3 values written out by hand."""
    assert [ref_f32(E2M1, c) for c in range(8)] == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert ref_f32(E4M3, 0x7E) == 448 and math.isnan(ref_f32(E4M3, 0x7F))
    assert ref_f32(E4M3, 0x01) == 2.0 ** -9
    assert ref_f32(E8M0, 0) == 2.0 ** -127 and ref_f32(E8M0, 0x7F) == 1.0
    assert math.isnan(ref_f32(E8M0, 0xFF))
    assert ref_f32(S4, 8) == -8 and ref_f32(U6, 63) == 63 and ref_f32(U2, 3) == 3
    assert math.copysign(1, ref_f32(E2M1, 8)) == -1


@given(st.floats(allow_nan=False, allow_infinity=False))
@settings(max_examples=1000)
def test_rational_to_binary32_matches_numpy(x):
    """f32_round is IEEE RNE: numpy's binary64 -> binary32 cast is too."""
    with np.errstate(over="ignore"):
        want = float(np.float32(x))
    assert same_f32(f32_round(Fraction(x)) if x else x, want)


def test_rational_to_binary32_ties_and_edges():
    one = Fraction(1)
    ulp = Fraction(1, 2**23)
    assert f32_round(one + ulp / 2) == 1.0  # tie to even
    assert f32_round(one + ulp * 3 / 2) == float(one + 2 * ulp)
    assert f32_round(Fraction(2) ** -150) == 0.0  # tie below the least subnormal
    assert f32_round(Fraction(3, 2) * Fraction(2) ** -149) == 2.0 ** -148
    big = (2 - Fraction(1, 2**24)) * Fraction(2) ** 127  # max + half ulp: ties away to Inf
    assert f32_round(big) == math.inf and f32_round(-big) == -math.inf


@pytest.mark.parametrize("word,name", [(E4M3, "float8_e4m3fn"), (E5M2, "float8_e5m2"),
                                       (E2M3, "float6_e2m3fn"), (E3M2, "float6_e3m2fn"),
                                       (E2M1, "float4_e2m1fn")])
def test_ref_encode_rne_matches_ml_dtypes_in_range(word, name):
    """§2.5 ladder RNE is IEEE RNE for every value up to the largest finite."""
    dt = ml(name)
    rng = np.random.default_rng(word)
    top = float(np.finfo(dt).max)
    xs = np.concatenate([rng.uniform(-top, top, 3000), rng.standard_normal(3000),
                         rng.standard_normal(500) * float(np.finfo(dt).smallest_subnormal) * 4,
                         np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)])
    xs = xs.astype(np.float32)
    xs = xs[np.isfinite(xs) & (np.abs(xs) <= top)]
    # midpoints between adjacent codes exercise ties-to-even
    codes = np.arange(1 << dtype_of(word)[1], dtype=np.uint8).view(dt).astype(np.float32)
    fin = np.sort(codes[np.isfinite(codes)])
    xs = np.concatenate([xs, ((fin[1:] + fin[:-1]) / 2).astype(np.float32)])
    want = xs.astype(dt).view(np.uint8)
    for x, w in zip(xs.tolist(), want.tolist()):
        assert ref_encode_rne(word, x) == w, (hex(word), x, w)
