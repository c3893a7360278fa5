"""Vectorised grit_fmt_t decode and encode (§2.4, §2.5) over numpy arrays.

The same rules as the scalar reference forms in fmt.py (fmt_decode,
fmt_encode), applied to whole arrays of codes or values; equality with the
scalar forms is tested (tests/test_fmt_array.py).  The scalar module stays
numpy-light and is the specification; this module is the fast path the
plane decoders and encoders use.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import GritValueError
from .fmt import (
    BINARY32,
    CANONICAL_NAN_BITS,
    Fmt,
    RoundingArg,
    SaturationArg,
    _max_finite_code,
    _nan_code,
    _overflow_code,
    ladder,
    name,
    require_modes,
    require_valid,
)
from .tables import Rounding, Saturation

Codes = npt.NDArray[np.integer[Any]]  # format codes, any integer dtype
Values = npt.NDArray[np.floating[Any]]  # binary32 or binary64 inputs
F32s = npt.NDArray[np.float32]
F64s = npt.NDArray[np.float64]
I64s = npt.NDArray[np.int64]
U32s = npt.NDArray[np.uint32]
Bools = npt.NDArray[np.bool_]


@lru_cache(maxsize=256)
def decode_table(word: int) -> F32s:
    """All 2**w decoded values as float32, for w <= 16 (vectorised decode)."""
    f = require_valid(word)
    if f.width > 16:
        raise GritValueError(
            f"decode_table is for formats of width <= 16; {name(word)} is {f.width}")
    out = _decode_wide(f, np.arange(1 << f.width, dtype=np.uint64))
    out[np.isnan(out)] = np.float32(np.nan)
    out.setflags(write=False)
    return out


def decode_array(word: int, codes: Codes) -> F32s:
    """fmt_decode over an array of codes; returns float32 (NaN canonical)."""
    f = require_valid(word)
    codes = np.asarray(codes)
    if f.kind == "int" and f.unsigned and f.width <= 16 and codes.dtype in (np.uint8, np.uint16):
        # an unsigned integer code is its value: exact in binary32
        return codes.astype(np.float32) if (
            codes.dtype == np.uint8 and f.width == 8) else (
            codes & codes.dtype.type((1 << f.width) - 1)).astype(np.float32)
    if f.width <= 16 and codes.dtype in (np.uint8, np.uint16):
        if (codes.dtype == np.uint8 and f.width >= 8) or f.width == 16:
            return decode_table(word)[codes]
        masked: F32s = decode_table(word)[codes & codes.dtype.type((1 << f.width) - 1)]
        return masked
    c = codes.astype(np.uint64, copy=False) & np.uint64((1 << f.width) - 1)
    if f.width <= 16:
        return decode_table(word)[c.astype(np.intp)]
    if word == BINARY32:
        out = c.astype(np.uint32).view(np.float32).copy()
        out[np.isnan(out)] = np.float32(np.nan)
        return out
    return _decode_wide(f, c)


def _decode_wide(f: Fmt, c: Codes) -> F32s:
    """Vectorised §2.4 for any format (exact in binary64, then RNE to binary32).

    Used directly for formats wider than 16 bits and to build the decode
    tables of narrower ones; tests compare it with the scalar _decode_exact."""
    w = f.width
    with np.errstate(over="ignore", invalid="ignore"):
        if f.kind == "int":
            v = c.astype(np.int64)
            if not f.unsigned:
                v = np.where(v >= 1 << (w - 1), v - (1 << w), v)
            return v.astype(np.float64).astype(np.float32)
        if f.kind == "exp":
            e = c.astype(np.int64) - f.bias
            v = np.ldexp(1.0, np.clip(e, -1100, 1100).astype(np.int32))
            if f.nan_enc != 0:
                v = np.where(c == (1 << w) - 1, np.nan, v)
            return v.astype(np.float32)
        mb, eb, bias = f.m_bits, f.e_bits, f.bias
        m = (c & np.uint64((1 << mb) - 1)).astype(np.int64)
        e = ((c >> np.uint64(mb)) & np.uint64((1 << eb) - 1)).astype(np.int64)
        s = np.zeros_like(m) if f.unsigned else ((c >> np.uint64(mb + eb)) & np.uint64(1)).astype(
            np.int64)
        sub = e == 0
        mant = np.where(sub, m, m | (1 << mb)).astype(np.float64)
        ex = np.where(sub, 1 - bias - mb, e - bias - mb)
        v = np.ldexp(mant, np.clip(ex, -1200, 1100).astype(np.int32))
        top = e == (1 << eb) - 1
        if f.has_inf:
            v = np.where(top, np.where(m == 0, np.inf, np.nan), v)
        elif f.nan_enc == 1:
            v = np.where(top & (m == (1 << mb) - 1), np.nan, v)
        elif f.nan_enc == 2:
            v = np.where(top & (m != 0), np.nan, v)
        v = np.where(s == 1, -v, v)
        return v.astype(np.float32)


def encode_array(word: int, x: Values, rounding: RoundingArg = Rounding.RNE,
                 saturation: SaturationArg = Saturation.SATFINITE) -> U32s:
    """fmt_encode over an array of binary32/binary64 values; returns uint32 codes.

    NaN inputs give the format's NaN code (an error for a format without
    one, as in the scalar form).
    """
    f = require_valid(word)
    require_modes(rounding, saturation)
    a64 = np.asarray(x, dtype=np.float64)
    nan = np.isnan(a64)
    if f.kind == "int":
        if nan.any():
            raise GritValueError(f"{name(word)} has no NaN encoding (§2.5 step 1)")
        return _encode_int_array(f, a64, rounding)
    if word == BINARY32 and rounding == Rounding.RNE:
        out = a64.astype(np.float32).view(np.uint32).astype(np.uint32)
        if saturation == Saturation.SATFINITE:
            big = np.isinf(a64)
            out = np.where(big, np.where(a64 > 0, 0x7F7FFFFF, 0xFF7FFFFF), out).astype(np.uint32)
        out[nan] = CANONICAL_NAN_BITS
        return out
    neg = np.signbit(a64)
    a = np.abs(a64)
    cmax = _max_finite_code(f)
    finite = np.isfinite(a)
    if f.width <= 8 and rounding == Rounding.RNE and saturation == Saturation.SATFINITE:
        return _sign_and_nan(word, _encode_ladder_rne(word, np.where(finite, a, np.inf)), neg, nan)
    mag = _encode_magnitude_array(f, np.where(finite, a, 0.0), rounding, neg)
    over = (mag > cmax) | ~finite
    if saturation == Saturation.SATFINITE:
        res = np.where(over, cmax, mag)
    else:
        directed_down = np.zeros_like(over)
        if rounding == Rounding.RTZ:
            directed_down[:] = True
        elif rounding == Rounding.RDN:
            directed_down = ~neg
        elif rounding == Rounding.RUP:
            directed_down = neg
        directed_down = directed_down & finite
        res = np.where(over, np.where(directed_down, cmax, _overflow_code(f, cmax)), mag)
    return _sign_and_nan(word, res.astype(np.int64), neg, nan)


def _sign_and_nan(word: int, res: I64s, neg: Bools, nan: Bools) -> U32s:
    """Set the sign bit of signed formats and put the NaN code where the input was NaN."""
    f = require_valid(word)
    if not f.unsigned:
        res = np.where(neg, res | (1 << (f.width - 1)), res)
    if nan.any():
        code = _nan_code(f)
        if code is None:
            raise GritValueError(f"{name(word)} has no NaN encoding (§2.5 step 1)")
        res = np.where(nan, code, res)
    return res.astype(np.uint32)


@lru_cache(maxsize=256)
def _ladder_arrays(word: int) -> tuple[F64s, I64s, F64s]:
    lad = ladder(word)
    mags = np.array([m for m, _ in lad], dtype=np.float64)
    codes = np.array([c for _, c in lad], dtype=np.int64)
    return mags, codes, (mags[:-1] + mags[1:]) / 2  # midpoints: exact in binary64


def _encode_ladder_rne(word: int, a: F64s) -> I64s:
    """§2.5 steps 3-4 literally, for narrow formats: the nearest rung, exact
    ties to the even code, saturating at the last rung (satfinite)."""
    mags, codes, mids = _ladder_arrays(word)
    if not mids.size:  # one finite rung (e.g. a 2-bit E1M0 with Inf): everything saturates to it
        return np.full(a.shape, codes[0], dtype=codes.dtype)
    idx = np.searchsorted(mids, a, side="left")  # mids[idx-1] < a <= mids[idx]
    at = np.minimum(idx, mids.size - 1)
    tie = (idx < mids.size) & (a == mids[at])
    idx = idx + (tie & (codes[np.minimum(idx, codes.size - 1)] % 2 == 1))
    nearest: I64s = codes[np.minimum(idx, codes.size - 1)]
    return nearest


def _round_up(
    rounding: RoundingArg, inexact: Bools, half: F64s, neg: Bools, lo_odd: Bools
) -> Bools:
    """Whether a magnitude between two rungs rounds to the upper one.
    ``inexact``: strictly above the lower rung; ``half``: -1/0/+1 for below,
    at or above the midpoint; ties-to-even go to the even *code* (§1.4)."""
    if rounding == Rounding.RTZ:
        return np.zeros(inexact.shape, dtype=bool)
    if rounding == Rounding.RUP:
        return inexact & ~neg
    if rounding == Rounding.RDN:
        return inexact & neg
    if rounding == Rounding.RNA:
        at_or_above: Bools = half >= 0
        return at_or_above
    nearest_up: Bools = (half > 0) | ((half == 0) & lo_odd)
    return nearest_up


def _round_array(n: F64s, rounding: RoundingArg, neg: Bools, code_lo: I64s) -> F64s:
    """Round non-negative magnitudes n to integers (as float64) under
    ``rounding``; exact ties go to the even *code* (code_lo is floor's code)."""
    lo = np.floor(n)
    frac = n - lo
    return lo + _round_up(rounding, frac > 0, np.sign(frac - 0.5), neg, code_lo % 2 == 1)


def _encode_magnitude_array(f: Fmt, a: F64s, rounding: RoundingArg, neg: Bools) -> I64s:
    """Vectorised _encode_magnitude: magnitudes >= 0 -> sign-cleared codes (int64)."""
    mant, ex = np.frexp(a)
    e_floor = ex.astype(np.int64) - 1
    zero = a == 0
    if f.kind == "exp":
        lo = e_floor + f.bias
        sig = mant * 2.0  # in [1, 2): the rung below is lo, the one above lo + 1
        up = _round_up(rounding, sig > 1.0, np.sign(sig - 1.5), neg, lo % 2 == 1)
        code = np.maximum(lo + up, 0)
        return np.where(zero, 0, code)
    mb, bias = f.m_bits, f.bias
    emin = 1 - bias
    sub = e_floor < emin
    shift = np.where(sub, mb - emin, mb - e_floor)
    n = np.ldexp(a, shift.astype(np.int32))
    base = np.where(sub, 0, (e_floor + bias) << mb)
    offset = np.where(sub, 0, 1 << mb)
    code_lo = base + np.floor(n).astype(np.int64) - offset
    k = _round_array(n, rounding, neg, code_lo)
    code = base + k.astype(np.int64) - offset
    return np.where(zero, 0, code)


def _encode_int_array(f: Fmt, a: F64s, rounding: RoundingArg) -> U32s:
    w = f.width
    lo, hi = (0, (1 << w) - 1) if f.unsigned else (-((1 << (w - 1)) - 1), (1 << (w - 1)) - 1)
    neg = a < 0
    m = np.abs(a)
    finite = np.isfinite(m)
    mm = np.minimum(np.where(finite, m, 0.0), float(1 << 40))  # clamped below anyway
    k = _round_array(mm, rounding, neg, np.floor(mm).astype(np.int64))
    v = np.where(neg, -k, k)
    v = np.where(finite, v, np.where(a > 0, hi, lo))
    v = np.clip(v, lo, hi).astype(np.int64)
    return (v & ((1 << w) - 1)).astype(np.uint32)

