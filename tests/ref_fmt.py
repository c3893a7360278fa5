"""An independent §2.4/§2.5 reference for grit_fmt_t, in exact rationals.

Written from the spec text (§2.1 bit layout, §2.4 pseudo-code, §2.5 ladder
and RNE; RECONSTRUCTION.md §3 for p and nan_enc) and sharing no code with
grit_scan.codec.fmt.  test_ref_fmt.py cross-checks it against numpy and
ml_dtypes on every format they know, so it can serve as the oracle for the
library's scalar and vectorised codecs and for the conformance vectors.
"""

import bisect
import functools
import math
from fractions import Fraction


def fields(word):
    return dict(bias_ovr=word >> 15 & 1, unsigned=word >> 14 & 1, szero=word >> 13 & 1,
                nan_enc=word >> 11 & 3, has_inf=word >> 10 & 1, p=word >> 5 & 31, wm1=word & 31)


def spec_valid(word):
    """The structural constraints the spec states for a format word: not
    ABSENT, no 1-bit format (§2.1), bias_ovr == 0 and nan_enc != 3 (§7.3
    step 1), and a floating-point p that leaves at least one exponent bit."""
    f = fields(word)
    if word == 0 or f["wm1"] == 0 or f["bias_ovr"] or f["nan_enc"] == 3:
        return False
    if f["p"] in (0, 31):
        return True
    return f["wm1"] + 1 - (0 if f["unsigned"] else 1) - (f["p"] - 1) >= 1


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


def sign_bit(word, code):
    """The code's sign per §2.4 (integers: two's complement; exponent-only
    formats have none)."""
    f = fields(word)
    w = f["wm1"] + 1
    if f["unsigned"] or f["p"] == 0:
        return False
    return bool(code >> (w - 1) & 1)


def f32_round(v):
    """Exact rational -> binary32, IEEE round-to-nearest-even, overflow to Inf,
    gradual underflow (bit-level: 23 fraction bits, emin -126, 2^-149 step)."""
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    a = abs(v)
    top = a.numerator.bit_length() - a.denominator.bit_length()  # 2^top <= a < 2^(top+2)
    if a < Fraction(2) ** top:
        top -= 1
    elif a >= Fraction(2) ** (top + 1):
        top += 1
    if top > 128:
        return sign * math.inf
    if top < -151:
        return sign * 0.0
    q = max(top - 23, -149)
    n = round(a / Fraction(2) ** q)  # Fraction.__round__ is half-to-even
    r = Fraction(n) * Fraction(2) ** q
    if r >= Fraction(2) ** 128:
        return sign * math.inf
    return sign * float(r)


def ref_f32(word, code):
    """fmt_decode(word, code) as a binary32-valued Python float: NaN, signed
    Inf, signed zero (§1.3) and RNE into binary32 when the format's range
    exceeds binary32's."""
    neg = sign_bit(word, code)
    try:
        v = ref_decode(word, code)
    except Tiny:
        return -0.0 if neg else 0.0
    except Huge:
        return -math.inf if neg else math.inf
    if v is None:
        return math.nan
    if isinstance(v, str):
        return -math.inf if neg else math.inf
    if v == 0:
        return -0.0 if neg else 0.0
    return f32_round(v)


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


@functools.cache
def ref_mags(word):
    return [m for m, _ in ref_ladder(word)]


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


def _round_int(r, rounding):
    """A rational to an integer under §1.4's five modes (IEEE 754 §4.3)."""
    if rounding == "rne":
        return round(r)  # Fraction.__round__: half to even
    if rounding == "rtz":
        return math.trunc(r)
    if rounding == "rna":
        n = math.floor(abs(r) + Fraction(1, 2))
        return -n if r < 0 else n
    return math.ceil(r) if rounding == "rup" else math.floor(r)


def ref_encode(word, x, rounding="rne", sat="satfinite"):
    """fmt_encode for the cases the spec pins, else None.

    Integers (any width): round per mode, clamp to §1.5's range under
    satfinite.  Floating-point and exponent-only formats of width <= 8: on
    the §2.5 ladder, an exact rung is its code, between two rungs rne
    takes the nearer (tie: even code), rna the nearer (tie: larger
    magnitude), rtz the smaller magnitude, rup/rdn the one toward +/-Inf;
    beyond the last rung satfinite gives the last rung (§2.5 step 3); the
    sign bit is ORed in for signed formats (step 5).  Not covered (None):
    NaN, overflow under es=ieee, directed rounding below an exponent-only
    ladder or of a negative value into an unsigned format."""
    f = fields(word)
    w = f["wm1"] + 1
    if math.isnan(x):
        return None
    neg = math.copysign(1.0, x) < 0
    if f["p"] == 31:
        lo, hi = (0, 2**w - 1) if f["unsigned"] else (-(2 ** (w - 1) - 1), 2 ** (w - 1) - 1)
        if not math.isfinite(x) and sat != "satfinite":
            return None
        n = _round_int(Fraction(x), rounding) if math.isfinite(x) else (hi if x > 0 else lo)
        if not lo <= n <= hi:
            if sat != "satfinite":
                return None
            n = min(max(n, lo), hi)
        return n & (2**w - 1)
    if w > 8 or (neg and f["unsigned"] and rounding != "rne"):
        return None
    lad = ref_ladder(word)
    a = abs(Fraction(x)) if math.isfinite(x) else None
    if a is None or a > lad[-1][0]:
        if sat != "satfinite":
            return None
        code = lad[-1][1]
    elif a < lad[0][0]:
        if rounding != "rne":
            return None
        code = lad[0][1]
    else:
        i = bisect.bisect_right(ref_mags(word), a) - 1
        lo = lad[i]
        if lo[0] == a:
            code = lo[1]
        else:
            hi = lad[i + 1]
            below, above = a - lo[0], hi[0] - a
            up = {"rne": above < below or (above == below and lo[1] % 2 == 1),
                  "rna": above <= below, "rtz": False, "rup": not neg, "rdn": neg}[rounding]
            code = hi[1] if up else lo[1]
    if neg and not f["unsigned"]:
        code |= 1 << (w - 1)
    return code


def same_f32(a, b):
    """Bit-identical binary32 values, any NaN matching any NaN."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)
