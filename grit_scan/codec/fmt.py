"""grit_fmt_t — the 16-bit format word (§2).

A format word is parameterised, not enumerated: this module decodes and
encodes *any* valid word, registered or not.  Values are carried as Python
floats holding an exact binary32 value; NaN is always the canonical quiet
NaN 0x7FC00000 when turned into bits (§1.2).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from .errors import GritValueError
from .tables import FORMAT_ALIASES, FORMAT_TOKENS, REJECTED_ALIASES, Rounding, Saturation

ABSENT = 0x0000
CANONICAL_NAN_BITS = 0x7FC00000
# A mode argument: the enum member or its grade spelling (§4.2 `er`, `es`).
RoundingArg = Rounding | str
SaturationArg = Saturation | str
# The accepted spellings, as plain strings (tables.Rounding / Saturation).
ROUNDINGS: tuple[str, ...] = tuple(r.value for r in Rounding)
SATURATIONS: tuple[str, ...] = tuple(s.value for s in Saturation)

_TOKEN_FOR_WORD = {w: t for t, w in FORMAT_TOKENS.items()}


@dataclass(frozen=True)
class Fmt:
    """The unpacked fields of a grit_fmt_t (§2.1)."""

    bias_ovr: int
    unsigned: int
    szero: int
    nan_enc: int
    has_inf: int
    p: int
    wm1: int

    @property
    def word(self) -> int:
        return pack(self)

    @property
    def width(self) -> int:
        return self.wm1 + 1

    @property
    def kind(self) -> str:
        """'int' (p = 31), 'exp' (p = 0, exponent-only) or 'float'."""
        if self.p == 31:
            return "int"
        if self.p == 0:
            return "exp"
        return "float"

    @property
    def m_bits(self) -> int:
        return self.p - 1 if self.kind == "float" else 0

    @property
    def sign_bits(self) -> int:
        return 0 if self.unsigned else 1

    @property
    def e_bits(self) -> int:
        if self.kind == "float":
            return self.width - self.sign_bits - self.m_bits
        if self.kind == "exp":
            return self.width
        return 0

    @property
    def bias(self) -> int:
        if self.kind == "float":
            return (1 << (self.e_bits - 1)) - 1 if self.e_bits >= 1 else 0
        if self.kind == "exp":
            return (1 << (self.width - 1)) - 1
        return 0


def width(word: int) -> int:
    """Code width in bits of a format word: wm1 + 1 (§2.1, bits 4..0).

    The one place the ``wm1`` field is read from a raw word, so plane
    geometry, the §7.3 size equations and the packers agree; no validation
    (an ABSENT word reads as width 1, which callers never use)."""
    return (word & 31) + 1


def unpack(word: int) -> Fmt:
    """Split a 16-bit word into its fields; no validation."""
    if not 0 <= word <= 0xFFFF:
        raise GritValueError(f"a format word is 16 bits; got {word:#x}")
    return Fmt(
        bias_ovr=(word >> 15) & 1,
        unsigned=(word >> 14) & 1,
        szero=(word >> 13) & 1,
        nan_enc=(word >> 11) & 3,
        has_inf=(word >> 10) & 1,
        p=(word >> 5) & 31,
        wm1=width(word) - 1,
    )


def pack(f: Fmt) -> int:
    """Join the fields back into a 16-bit word."""
    return (
        (f.bias_ovr & 1) << 15
        | (f.unsigned & 1) << 14
        | (f.szero & 1) << 13
        | (f.nan_enc & 3) << 11
        | (f.has_inf & 1) << 10
        | (f.p & 31) << 5
        | (f.wm1 & 31)
    )


def problem(word: int) -> str | None:
    """Why ``word`` is not a valid v1 format, or None when it is (§2.1-§2.3)."""
    if not 0 <= word <= 0xFFFF:
        return f"{word:#x} is not a 16-bit format word"
    if word == ABSENT:
        return "0x0000 is ABSENT, not a format"
    f = unpack(word)
    if f.wm1 == 0:
        return f"{word:#06x} is a 1-bit format; version 1 has none (§2.1)"
    if f.bias_ovr:
        return f"{word:#06x} sets bias_ovr; it must be 0 in version 1 (§2.1, §0.3a)"
    if f.nan_enc == 3:
        return f"{word:#06x} uses nan_enc = 3, which is reserved (§2.3)"
    if f.kind == "float" and f.e_bits < 1:
        return (
            f"{word:#06x} is a {f.width}-bit float with {f.m_bits} mantissa bits and "
            "no exponent bit; a float format needs at least one (§2.2)"
        )
    return None


def is_valid(word: int) -> bool:
    return problem(word) is None


def require_valid(word: int) -> Fmt:
    why = problem(word)
    if why is not None:
        raise GritValueError(why)
    return unpack(word)


def name(word: int) -> str:
    """The registered token of ``word`` or its 0xHHHH spelling."""
    if word == ABSENT:
        return "absent"
    return _TOKEN_FOR_WORD.get(word, f"{word:#06x}")


def resolve_token(token: str) -> int:
    """Map a format token (registered, alias or 0xHHHH) to its word (§4.4 rule 4)."""
    t = token.strip().lower()
    if t in REJECTED_ALIASES:
        raise GritValueError(REJECTED_ALIASES[t])
    t = FORMAT_ALIASES.get(t, t)
    if t in FORMAT_TOKENS:
        return FORMAT_TOKENS[t]
    if t.startswith("0x") and 3 <= len(t) <= 6:
        try:
            word = int(t, 16)
        except ValueError:
            word = -1
        if word >= 0:
            why = problem(word)
            if why:
                raise GritValueError(why)
            return word
    raise GritValueError(f"unknown format {token!r}")


# --------------------------------------------------------------------------
# binary32 helpers
# --------------------------------------------------------------------------


def f32(x: float) -> float:
    """Round a Python float to binary32 (RNE); overflow gives ±Inf (§1.1)."""
    import numpy as np  # here, not at the top: a scan imports this module, not numpy

    with np.errstate(over="ignore"):
        return float(np.float32(x))


def f32_bits(x: float) -> int:
    """The binary32 bit pattern of ``x`` (rounded RNE); NaN is canonical (§1.2)."""
    if math.isnan(x):
        return CANONICAL_NAN_BITS
    import numpy as np  # here, not at the top: a scan imports this module, not numpy

    with np.errstate(over="ignore"):
        return int(np.float32(x).view(np.uint32))


def bits_f32(bits: int) -> float:
    """The value of a binary32 bit pattern."""
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


# --------------------------------------------------------------------------
# §2.4 decode
# --------------------------------------------------------------------------


def _ldexp(mant: int, exp: int) -> float:
    """mant * 2**exp as binary64, saturating the exponent instead of raising."""
    if mant == 0:
        return 0.0
    if exp + mant.bit_length() > 1024:  # >= 2^1024: beyond binary64, so Inf
        return math.inf
    if exp + mant.bit_length() < -1200:
        return 0.0
    return math.ldexp(mant, exp)


def _decode_exact(f: Fmt, code: int) -> float:
    """The exact value of ``code`` as binary64 (exact for every value that
    binary32 can hold; see docs/spec-notes.md for the wide-format rule)."""
    w = f.width
    code &= (1 << w) - 1
    if f.kind == "int":
        if f.unsigned:
            return float(code)
        if code >= 1 << (w - 1):
            code -= 1 << w
        return float(code)
    if f.kind == "exp":
        if f.nan_enc != 0 and code == (1 << w) - 1:
            return math.nan
        return _ldexp(1, code - f.bias)
    mb, eb, bias = f.m_bits, f.e_bits, f.bias
    m = code & ((1 << mb) - 1)
    e = (code >> mb) & ((1 << eb) - 1)
    s = 0 if f.unsigned else (code >> (mb + eb)) & 1
    if e == (1 << eb) - 1 and f.has_inf:
        v = math.inf if m == 0 else math.nan
    elif e == (1 << eb) - 1 and f.nan_enc == 1 and m == (1 << mb) - 1:
        v = math.nan
    elif e == (1 << eb) - 1 and f.nan_enc == 2 and m != 0:
        v = math.nan
    elif e == 0:
        v = _ldexp(m, 1 - bias - mb)  # subnormal: (m / 2^mb) * 2^(1-bias)
    else:
        v = _ldexp((1 << mb) | m, e - bias - mb)  # (1 + m/2^mb) * 2^(e-bias)
    return -v if s else v


def fmt_decode(word: int, code: int) -> float:
    """§2.4: the binary32 value of ``code`` under ``word``.

    Exact for every value binary32 can represent (every registered format);
    a wider unregistered format's value is rounded RNE to binary32.
    """
    f = require_valid(word)
    return f32(_decode_exact(f, code))


def fmt_decode_bits(word: int, code: int) -> int:
    """fmt_decode as binary32 bits, NaN canonical."""
    return f32_bits(fmt_decode(word, code))


# --------------------------------------------------------------------------
# §2.5 the magnitude ladder and encode
# --------------------------------------------------------------------------


def _max_finite_code(f: Fmt) -> int:
    """The largest sign-cleared code that decodes to a finite value."""
    if f.kind == "int":
        return (1 << f.width) - 1 if f.unsigned else (1 << (f.width - 1)) - 1
    if f.kind == "exp":
        # §2.5 ranges over sign-cleared codes; the NaN code 2^w - 1 is among
        # them only for an unsigned exponent-only format.
        top = (1 << (f.width - f.sign_bits)) - 1
        return top - 1 if f.nan_enc != 0 and f.unsigned else top
    mb, eb = f.m_bits, f.e_bits
    top_exp = ((1 << eb) - 1) << mb
    if f.has_inf:
        return top_exp - 1
    if f.nan_enc == 1:
        return (top_exp | ((1 << mb) - 1)) - 1 if mb > 0 else top_exp - 1
    if f.nan_enc == 2:
        return top_exp
    return top_exp | ((1 << mb) - 1)


def _nan_code(f: Fmt) -> int | None:
    """The canonical NaN code of a format, None if it has none."""
    if f.kind == "int":
        return None
    if f.kind == "exp":
        return (1 << f.width) - 1 if f.nan_enc != 0 else None
    mb, eb = f.m_bits, f.e_bits
    top_exp = ((1 << eb) - 1) << mb
    if f.has_inf or f.nan_enc == 2:
        return top_exp | (1 << (mb - 1)) if mb > 0 else None  # quiet NaN
    if f.nan_enc == 1:
        return top_exp | ((1 << mb) - 1)
    return None


def _inf_code(f: Fmt) -> int | None:
    if f.kind == "float" and f.has_inf:
        return ((1 << f.e_bits) - 1) << f.m_bits
    return None


def ladder(word: int) -> list[tuple[float, int]]:
    """§2.5: (magnitude, code) of every sign-cleared finite code, ascending."""
    f = require_valid(word)
    if f.width > 8:
        raise GritValueError("the magnitude ladder is defined for formats of width <= 8")
    if f.kind == "int":
        raise GritValueError("integer formats are encoded by rounding and clamping (§2.5)")
    span = 1 << (f.width - f.sign_bits)
    pairs = []
    for code in range(span):
        v = _decode_exact(f, code)
        if math.isfinite(v):
            pairs.append((abs(v), code))
    pairs.sort()
    return pairs


def max_finite(word: int) -> float:
    """The largest finite value of a format."""
    f = require_valid(word)
    return f32(_decode_exact(f, _max_finite_code(f)))


def _round_int(n: float, rounding: RoundingArg, neg: bool) -> int:
    """Round a non-negative magnitude ``n`` to an integer under ``rounding``;
    ties-to-even is left to the caller (it depends on the code, §1.4)."""
    lo = math.floor(n)
    frac = n - lo
    if frac == 0:
        return lo
    if rounding == Rounding.RTZ:
        return lo
    if rounding == Rounding.RUP:
        return lo if neg else lo + 1
    if rounding == Rounding.RDN:
        return lo + 1 if neg else lo
    if frac > 0.5:
        return lo + 1
    if frac < 0.5:
        return lo
    return -1  # exact tie: caller decides


def _encode_magnitude(f: Fmt, a: float, rounding: RoundingArg, neg: bool) -> int:
    """Round a finite magnitude a >= 0 to a sign-cleared code, unbounded above."""
    if f.kind == "exp":
        if a == 0:
            return 0
        mant, ex = math.frexp(a)
        e_floor = ex - 1
        lo = e_floor + f.bias
        sig = mant * 2.0  # in [1, 2)
        if sig == 1.0:
            up = False
        elif rounding == Rounding.RTZ:
            up = False
        elif rounding == Rounding.RUP:
            up = not neg
        elif rounding == Rounding.RDN:
            up = neg
        elif sig > 1.5:
            up = True
        elif sig < 1.5:
            up = False
        elif rounding == Rounding.RNA:
            up = True
        else:
            up = lo % 2 == 1  # tie: to the even code
        code = lo + (1 if up else 0)
        return max(code, 0)  # below the ladder: its smallest rung
    mb, bias = f.m_bits, f.bias
    if a == 0:
        return 0
    mant, ex = math.frexp(a)
    e_floor = ex - 1
    emin = 1 - bias
    if e_floor < emin:  # subnormal range: quantum 2^(emin - mb)
        n = math.ldexp(a, mb - emin)
        base_code = 0
        offset = 0
    else:
        n = math.ldexp(a, mb - e_floor)  # in [2^mb, 2^(mb+1))
        base_code = (e_floor + bias) << mb
        offset = 1 << mb
    k = _round_int(n, rounding, neg)
    if k < 0:  # exact tie
        lo = math.floor(n)
        code_lo = base_code + lo - offset
        k = lo + 1 if (rounding == Rounding.RNA or code_lo % 2 == 1) else lo
    return base_code + k - offset


def require_modes(rounding: RoundingArg, saturation: SaturationArg) -> None:
    """Refuse a rounding or saturation that is not an §4.2 `er` / `es` word."""
    if rounding not in ROUNDINGS:
        raise GritValueError(f"unknown rounding {rounding!r}")
    if saturation not in SATURATIONS:
        raise GritValueError(f"unknown saturation {saturation!r}")


def fmt_encode(word: int, x: float, rounding: RoundingArg = Rounding.RNE,
               saturation: SaturationArg = Saturation.SATFINITE) -> int:
    """Project ``x`` into ``word`` (§2.5 generalised to the `er` roundings).

    ``rounding='rne'`` with either saturation is fmt_encode_rne.  NaN gives the
    format's canonical NaN code, and is an error for a format without one.
    """
    f = require_valid(word)
    require_modes(rounding, saturation)
    w = f.width
    if math.isnan(x):
        code = _nan_code(f)
        if code is None:
            raise GritValueError(f"{name(word)} has no NaN encoding (§2.5 step 1)")
        return code
    if f.kind == "int":
        return _encode_int(f, x, rounding)
    neg = math.copysign(1.0, x) < 0
    a = abs(x)
    cmax = _max_finite_code(f)
    if math.isinf(a):
        code = cmax
        if saturation == Saturation.IEEE:
            code = _overflow_code(f, cmax)
    else:
        code = _encode_magnitude(f, a, rounding, neg)
        if code > cmax:
            directed_down = rounding == Rounding.RTZ or (rounding == Rounding.RDN and not neg) or (
                rounding == Rounding.RUP and neg
            )
            keep = saturation == Saturation.SATFINITE or directed_down
            code = cmax if keep else _overflow_code(f, cmax)
    if neg and not f.unsigned:
        code |= 1 << (w - 1)
    return code


def _overflow_code(f: Fmt, cmax: int) -> int:
    """es=ieee overflow: Inf, else NaN where the format has no Inf, else saturate."""
    inf = _inf_code(f)
    if inf is not None:
        return inf
    nan = _nan_code(f)
    return nan if nan is not None else cmax


def _encode_int(f: Fmt, x: float, rounding: RoundingArg) -> int:
    """Integer encode: round, then clamp per §1.5 (never the asymmetric minimum)."""
    w = f.width
    if f.unsigned:
        lo, hi = 0, (1 << w) - 1
    else:
        lo, hi = -((1 << (w - 1)) - 1), (1 << (w - 1)) - 1
    if math.isinf(x):
        v = hi if x > 0 else lo
    else:
        neg = x < 0
        k = _round_int(abs(x), rounding, neg)
        if k < 0:
            fl = math.floor(abs(x))
            k = fl + 1 if (rounding == Rounding.RNA or fl % 2 == 1) else fl
        v = -k if neg else k
        v = min(max(v, lo), hi)
    return v & ((1 << w) - 1)


def fmt_encode_rne(word: int, x: float, sat: SaturationArg = Saturation.SATFINITE) -> int:
    """§2.5 fmt_encode_rne."""
    return fmt_encode(word, x, Rounding.RNE, sat)


# --------------------------------------------------------------------------
# binary16 / bfloat16 / binary32 conversions (ordinary IEEE conversion)
# --------------------------------------------------------------------------
BINARY16 = FORMAT_TOKENS["binary16"]
BFLOAT16 = FORMAT_TOKENS["bfloat16"]
BINARY32 = FORMAT_TOKENS["binary32"]


def to_binary16(x: float) -> int:
    return fmt_encode(BINARY16, x, Rounding.RNE, Saturation.IEEE)


def to_bfloat16(x: float) -> int:
    return fmt_encode(BFLOAT16, x, Rounding.RNE, Saturation.IEEE)


def to_binary32(x: float) -> int:
    return f32_bits(x)


def from_binary32(code: int) -> float:
    return bits_f32(code)
