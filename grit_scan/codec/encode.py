"""Normative encode() (§9) with the per-grade rules of §10.

encode(values, grade) projects binary32 values into a grade's planes, in
ROW_MAJOR placement.  Supported shapes (docs/spec-notes.md):

* one scale level, any esr: exp2floormaxabs / exp2ceilmaxabs /
  exp2rnemaxabs (§9.2), ratiomaxabs (§9.4), affineminmax with a shared zero
  point (§9.3);
* two scale levels with esr=ratiomaxabs (the NVF4 shape, §10.3) or
  affineminmax with zps=l1 (the Q4KS shape, §10.2);
* N:M sparsity (the I8S24 selection, §10.4) in front of any one-level rule.

The universal rules of §9.1 hold throughout: binary32 RNE arithmetic, poison
on encode, the all-zero group, exact floor/ceil/rne of log2 from the
exponent and significand, and amax used unmodified.  Work proceeds in chunks
of whole (super-)groups, so memory stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import fmt
from .bits import pack_codes
from .descriptor import Descriptor, from_grade
from .errors import GritValueError
from .fmt_array import decode_array, encode_array
from .grade import Grade, sparsity
from .tables import SP_META_BITS

F32 = np.float32
DEFAULT_CHUNK = 1 << 20


@dataclass(frozen=True)
class Encoded:
    """An encoded tensor: its descriptor, shape and four planes."""

    desc: Descriptor
    shape: tuple[int, ...]
    planes: tuple[bytes, bytes, bytes, bytes]

    @property
    def plane_bytes(self) -> list[int]:
        return [len(p) for p in self.planes]

    @property
    def payload(self) -> bytes:
        return b"".join(self.planes)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _words(g: Grade) -> dict[str, int]:
    fr = g.frame
    return {"e": fr.elem, "s0": fr.scale0, "s1": fr.scale1, "zp": fr.zp_fmt}


def _maxnorm(word: int) -> float:
    """Largest finite magnitude (§9.4: 6 for E2M1, 448 for E4M3, 127 for s8)."""
    return fmt.max_finite(word)


def _emax(word: int) -> int:
    """Maximum exponent of an element format (2 for E2M1, §9.2)."""
    m = _maxnorm(word)
    return int(np.frexp(np.float64(m))[1]) - 1


def _pow2_range(word: int) -> tuple[int, int]:
    """Exponents X for which 2^X is exactly representable in a scale format."""
    f = fmt.unpack(word)
    if f.kind == "exp":
        return -f.bias, (fmt._max_finite_code(f)) - f.bias
    if f.kind == "int":
        hi = _maxnorm(word)
        return 0, int(np.frexp(np.float64(hi))[1]) - 1
    lo = 1 - f.bias - f.m_bits
    hi = int(np.frexp(np.float64(_maxnorm(word)))[1]) - 1
    return lo, hi


def _one_code(word: int, value: float, rounding: str = "rne", sat: str = "satfinite") -> int:
    return int(fmt.fmt_encode(word, value, rounding, sat))


def _smallest_positive_code(word: int) -> int:
    f = fmt.unpack(word)
    if f.kind == "exp":
        return 0
    return 1


def _floor_log2(amax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact floor(log2 amax) and significand f in [1, 2) (§9.1 rule 4)."""
    mant, ex = np.frexp(amax.astype(np.float64))
    return ex.astype(np.int64) - 1, mant * 2.0


def _exp_rule(esr: str, amax: np.ndarray) -> np.ndarray:
    """floor / ceil / rne of log2(amax), exactly (§9.2)."""
    e_floor, f = _floor_log2(amax)
    if esr == "exp2floormaxabs":
        return e_floor
    if esr == "exp2ceilmaxabs":
        return np.where(f == 1.0, e_floor, e_floor + 1)
    if esr == "exp2rnemaxabs":
        # f^2 > 2 is exact in binary64 for a binary32 significand; a true tie
        # (f = sqrt 2) cannot occur.
        return np.where(f * f > 2.0, e_floor + 1, e_floor)
    raise GritValueError(f"{esr} is not an exponent rule")


def _encode_elems(word: int, x: np.ndarray, es: str) -> np.ndarray:
    """§9.1 rule 5: element projection with fmt_encode_rne under es."""
    return encode_array(word, x, "rne", es)


def _zero_codes(word: int, v: np.ndarray) -> np.ndarray:
    """The (signed) zero code of each value: encoding of ±0."""
    return encode_array(word, np.where(np.signbit(v), -0.0, 0.0), "rne", "satfinite")


# --------------------------------------------------------------------------
# the rule families, each on (n_groups, group_len) blocks of binary32 values
# --------------------------------------------------------------------------


def _one_level(g: Grade, v: np.ndarray) -> dict[str, np.ndarray]:
    """v: (G, k) values of G level-0 groups. Returns codes per plane."""
    w = _words(g)
    esr = g["esr"] or ""
    er, es = g["er"] or "rne", g["es"] or "satfinite"
    G = v.shape[0]
    bad = ~np.isfinite(v).all(axis=1)  # poison on encode (§9.1 rule 2)
    vf = np.where(np.isfinite(v), v, F32(0)).astype(F32)  # poisoned groups are overwritten
    a = np.abs(np.where(np.isfinite(v), v, 0)).astype(F32)
    amax = a.max(axis=1) if v.shape[1] else np.zeros(G, F32)
    zero = (amax == 0) & ~bad
    one = _one_code(w["s0"], 1.0)
    out: dict[str, np.ndarray] = {}
    if esr.startswith("exp2"):
        lo, hi = _pow2_range(w["s0"])
        X = np.clip(_exp_rule(esr, np.where(zero | bad, 1.0, amax)) - _emax(w["e"]), lo, hi)
        scale_val = np.ldexp(np.float64(1.0), X.astype(np.int32)).astype(F32)
        s_codes = encode_array(w["s0"], scale_val, "rne", "satfinite")
        S = scale_val
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            # an all-zero group divides ±0 by its (amax := 1) scale: the codes are
            # fmt_encode_rne(v), the signed zeros (§10.1 step 2)
            q = _encode_elems(w["e"], (vf / S[:, None]).astype(F32), es)
        s_codes = np.where(zero, one, s_codes)
    elif esr == "ratiomaxabs":
        with np.errstate(over="ignore", under="ignore"):
            ratio = (amax / F32(_maxnorm(w["e"]))).astype(F32)
        s_codes = encode_array(w["s0"], ratio, er, es)
        S = decode_array(w["s0"], s_codes)
        # A zero scale is never emitted (§10.4): the smallest positive code.
        tiny = (S == 0) & ~zero
        s_codes = np.where(tiny, _smallest_positive_code(w["s0"]), s_codes)
        s_codes = np.where(zero, one, s_codes)
        S = decode_array(w["s0"], s_codes)  # re-read the stored scale
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            q = _encode_elems(w["e"], (vf / S[:, None]).astype(F32), es)
        zero_codes = _zero_codes(w["e"], v)
        q = np.where(zero[:, None], zero_codes, q)
    elif esr == "affineminmax":
        if not g.has_zp:
            raise GritValueError("esr=affineminmax needs a zero point (zp=...) (§9.3)")
        fe = fmt.unpack(w["e"])
        if fe.kind != "int" or not fe.unsigned:
            raise GritValueError("esr=affineminmax needs unsigned integer elements")
        qmax = (1 << fe.width) - 1
        fin = np.where(np.isfinite(v), v, 0).astype(F32)
        lo = np.minimum(F32(0), fin.min(axis=1)).astype(F32)
        hi = np.maximum(F32(0), fin.max(axis=1)).astype(F32)
        with np.errstate(over="ignore"):
            step = ((hi - lo).astype(F32) / F32(qmax)).astype(F32)
        s_codes = encode_array(w["s0"], step, er, es)
        S = decode_array(w["s0"], s_codes)
        tiny = (S == 0) & ~zero
        s_codes = np.where(tiny, _smallest_positive_code(w["s0"]), s_codes)
        s_codes = np.where(zero, one, s_codes)
        S = decode_array(w["s0"], s_codes)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            zf = (-lo / S).astype(F32)
        zf = np.where(zero, F32(0), zf)
        minus1 = g["zpc"] == "minus1"
        zstore = encode_array(w["zp"], (zf - F32(1)) if minus1 else zf, "rne", "satfinite")
        z = decode_array(w["zp"], zstore) + (F32(1) if minus1 else F32(0))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t = ((vf / S[:, None]).astype(F32) + z[:, None]).astype(F32)
        q = encode_array(w["e"], np.where(np.isfinite(t), t, 0), "rne", "satfinite")
        out["zp"] = np.where(bad, 0, zstore)
    else:
        raise GritValueError(f"unknown esr {esr!r}")
    nan = fmt._nan_code(fmt.unpack(w["s0"]))
    if bad.any():
        if nan is None:
            raise GritValueError(
                f"grade {g.canonical}: input holds NaN/Inf but scale format {fmt.name(w['s0'])} "
                "has no NaN code to poison the group with (§9.1 rule 2)")
        s_codes = np.where(bad, nan, s_codes)
        q = np.where(bad[:, None], 0, q)
    out["s0"] = s_codes.astype(np.uint32)
    out["e"] = q.astype(np.uint32)
    return out


def _two_level_ratio(g: Grade, v: np.ndarray, sT_in: float | None) -> dict[str, np.ndarray]:
    """The NVF4 shape (§10.3): v is (B, k1*k0) level-1 blocks (B == 1 and
    ``sT_in`` precomputed for a per-tensor scale, k1 = 0)."""
    w = _words(g)
    er, es = g["er"] or "rne", g["es"] or "satfinite"
    k0 = g.get_int("k0")
    B = v.shape[0]
    maxe = F32(_maxnorm(w["e"]))
    if sT_in is None:
        fin = np.abs(np.where(np.isfinite(v), v, 0)).astype(F32)
        amax1 = fin.max(axis=1) if v.shape[1] else np.zeros(B, F32)
        sT = _level1_ratio(g, amax1)
    else:
        sT = np.full(B, sT_in, dtype=F32)
    s1_codes = encode_array(w["s1"], sT, er, es)
    sT = decode_array(w["s1"], s1_codes)  # store, then re-read (§10.3 step 1)
    blocks = v.reshape(B, -1, k0)
    bad = ~np.isfinite(blocks).all(axis=2)
    bamax = np.abs(np.where(np.isfinite(blocks), blocks, 0)).astype(F32).max(axis=2)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        r = ((bamax / maxe).astype(F32) / sT[:, None]).astype(F32)
    s0 = encode_array(w["s0"], np.where(np.isfinite(r), r, 0), er, es)
    s0 = np.where(bamax == 0, _one_code(w["s0"], 1.0), s0)
    S = (sT[:, None] * decode_array(w["s0"], s0)).astype(F32)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        x = (blocks / S[:, :, None]).astype(F32)
    q = _encode_elems(w["e"], np.where(np.isfinite(x), x, 0), es)
    q = np.where((S == 0)[:, :, None], _zero_codes(w["e"], blocks), q)  # ±0 when S == 0
    nan = fmt._nan_code(fmt.unpack(w["s0"]))
    if bad.any():
        if nan is None:
            raise GritValueError(f"scale format {fmt.name(w['s0'])} has no NaN code (§9.1)")
        s0 = np.where(bad, nan, s0)
        q = np.where(bad[:, :, None], 0, q)
    return {"s1": s1_codes.astype(np.uint32), "s0": s0.reshape(-1).astype(np.uint32),
            "e": q.reshape(-1).astype(np.uint32)}


def _level1_ratio(g: Grade, amax: np.ndarray) -> np.ndarray:
    """sT = f32(f32(amax / maxnorm_e) / maxnorm_s0); amax == 0 -> 1.0;
    underflow to 0 -> the smallest positive binary32 subnormal (§10.3 step 1)."""
    w = _words(g)
    with np.errstate(under="ignore"):
        sT = ((amax / F32(_maxnorm(w["e"]))).astype(F32) / F32(_maxnorm(w["s0"]))).astype(F32)
    sT = np.where(amax == 0, F32(1.0), sT)
    return np.where((sT == 0) & (amax != 0), np.float32(2.0**-149), sT).astype(F32)


def _two_level_affine(g: Grade, v: np.ndarray) -> dict[str, np.ndarray]:
    """The Q4KS shape (§10.2): v is (B, k1*k0) super-blocks."""
    w = _words(g)
    er, es = g["er"] or "rne", g["es"] or "satfinite"
    k0 = g.get_int("k0")
    for key in ("e", "s0", "zp"):
        f = fmt.unpack(w[key])
        if f.kind != "int" or not f.unsigned:
            raise GritValueError(f"two-level affineminmax needs unsigned integer {key}")
    qmax = F32((1 << fmt.unpack(w["e"]).width) - 1)
    smax = F32((1 << fmt.unpack(w["s0"]).width) - 1)
    zmax = F32((1 << fmt.unpack(w["zp"]).width) - 1)
    B = v.shape[0]
    sub = v.reshape(B, -1, k0)
    bad = ~np.isfinite(v).all(axis=1)
    fin = np.where(np.isfinite(sub), sub, 0).astype(F32)
    lo = np.minimum(F32(0), fin.min(axis=2)).astype(F32)
    hi = np.maximum(F32(0), fin.max(axis=2)).astype(F32)
    with np.errstate(over="ignore"):  # hi - lo may overflow to Inf: es saturates below
        step = ((hi - lo).astype(F32) / qmax).astype(F32)
    off = (-lo).astype(F32)
    with np.errstate(over="ignore"):
        d_codes = encode_array(w["s1"], (step.max(axis=1) / smax).astype(F32), er, es)
        m_codes = encode_array(w["s1"], (off.max(axis=1) / zmax).astype(F32), er, es)
    d = decode_array(w["s1"], d_codes)  # re-read after the round trip (§10.2 note)
    dmin = decode_array(w["s1"], m_codes)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sc_f = np.where(d[:, None] == 0, 0, (step / d[:, None]).astype(F32))
        m_f = np.where(dmin[:, None] == 0, 0, (off / dmin[:, None]).astype(F32))
    sc = np.clip(np.rint(np.where(np.isfinite(sc_f), sc_f, smax)), 0, smax)
    m = np.clip(np.rint(np.where(np.isfinite(m_f), m_f, zmax)), 0, zmax)
    S = (d[:, None] * sc.astype(F32)).astype(F32)
    Z = (dmin[:, None] * m.astype(F32)).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = ((fin + Z[:, :, None]).astype(F32) / S[:, :, None]).astype(F32)
    q = np.where(S[:, :, None] == 0, 0, np.clip(np.rint(np.where(np.isfinite(t), t, 0)), 0, qmax))
    if bad.any():
        nan = fmt._nan_code(fmt.unpack(w["s1"]))
        if nan is None:
            raise GritValueError(f"scale format {fmt.name(w['s1'])} has no NaN code (§9.1)")
        d_codes = np.where(bad, nan, d_codes)
        m_codes = np.where(bad, 0, m_codes)
        sc = np.where(bad[:, None], 0, sc)
        m = np.where(bad[:, None], 0, m)
        q = np.where(bad[:, None, None], 0, q)
    s1 = np.stack([d_codes, m_codes], axis=1).reshape(-1)
    return {"s1": s1.astype(np.uint32), "s0": sc.reshape(-1).astype(np.uint32),
            "zp": m.reshape(-1).astype(np.uint32), "e": q.reshape(-1).astype(np.uint32)}


def _select_sparse(v: np.ndarray, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """§10.4 selection per group of m: keep the n largest magnitudes, NaN
    largest of all, ties to the lower index; returns (kept values in
    ascending logical order (Q, n), kept indices ascending (Q, n))."""
    quads = v.reshape(-1, m)
    Q = quads.shape[0]
    mag = np.abs(quads.astype(np.float64))
    nan = np.isnan(quads)
    # sort key: NaN first, then larger magnitude, then lower index
    order = np.lexsort((np.broadcast_to(np.arange(m), (Q, m)),
                        -np.where(nan, 0, mag), ~nan), axis=1)
    keep = np.sort(order[:, :n], axis=1)
    vals = np.take_along_axis(quads, keep, axis=1)
    return vals, keep


# --------------------------------------------------------------------------
# encode
# --------------------------------------------------------------------------


def encode(
    values: np.ndarray,
    grade: Grade,
    group_axis: int | None = None,
    *,
    chunk: int = DEFAULT_CHUNK,
    note: int = 0,
) -> Encoded:
    """encode(vals, grade) -> planes in ROW_MAJOR placement (§9)."""
    x = np.asarray(values, dtype=np.float32)
    shape = tuple(int(s) for s in x.shape)
    if not shape:
        raise GritValueError("encode needs a tensor of rank >= 1")
    ga = len(shape) - 1 if group_axis is None else group_axis
    if not 0 <= ga < len(shape):
        raise GritValueError(f"group_axis {ga} is outside rank {len(shape)}")
    desc = from_grade(grade, group_axis=ga, note=note)
    k0 = grade.get_int("k0")
    if shape[ga] % k0:
        raise GritValueError(f"shape[{ga}] = {shape[ga]} is not a multiple of k0 = {k0} (§3.7)")
    vc = np.ascontiguousarray(np.moveaxis(x, ga, -1)).reshape(-1)
    sp = sparsity(grade)
    two = grade.n_levels == 2
    k1 = grade.get_int("k1")
    esr = grade["esr"]
    if sp is not None:
        m = sp[1]
        if shape[ga] % m:
            raise GritValueError(f"shape[{ga}] = {shape[ga]} is not a multiple of sp_m = {m}")
        if two:
            raise GritValueError("encode of sparse two-level grades is not defined in v1")
    if two and esr == "ratiomaxabs":
        kind = "ratio2"
    elif two and esr == "affineminmax" and grade["zps"] == "l1":
        kind = "affine2"
    elif two:
        raise GritValueError(
            f"encode with two scale levels is defined for esr=ratiomaxabs (§10.3) and "
            f"affineminmax with zps=l1 (§10.2); not for esr={esr}")
    else:
        kind = "one"
    numel = vc.size
    span = k0 * (k1 if two and k1 else 1)
    if sp is not None:
        span = int(np.lcm(span, sp[1]))
    span = int(np.lcm(span, 8))
    step = max(span, chunk // span * span)
    sT = None
    if kind == "ratio2" and k1 == 0 and numel:
        amax = F32(0)
        for a in range(0, numel, step):
            part = vc[a : a + step]
            fin = np.abs(part[np.isfinite(part)])
            if fin.size:
                amax = max(amax, fin.max())
        sT = float(_level1_ratio(grade, np.array([amax], dtype=F32))[0])
    parts: dict[str, list[np.ndarray]] = {"e": [], "s0": [], "s1": [], "zp": [], "meta": []}
    for a in range(0, numel, step):
        block = vc[a : a + step]
        if sp is not None:
            kept, idx = _select_sparse(block, sp[0], sp[1])
            parts["meta"].append(idx.reshape(-1).astype(np.uint32))
            grp = kept.reshape(-1, k0 * sp[0] // sp[1])
            res = _one_level(grade, grp)
        elif kind == "one":
            res = _one_level(grade, block.reshape(-1, k0))
        elif kind == "ratio2":
            per = k1 * k0 if k1 else block.size  # k1 = 0: the chunk shares the one sT
            res = _two_level_ratio(grade, block.reshape(-1, per), sT)
            if k1 == 0 and parts["s1"]:
                res.pop("s1")
        else:
            res = _two_level_affine(grade, block.reshape(-1, k1 * k0))
        for key, val in res.items():
            parts[key].append(val)
    fr = grade.frame
    def join(k: str) -> np.ndarray:
        if not parts[k]:
            return np.zeros(0, np.uint32)
        return np.concatenate([p.reshape(-1) for p in parts[k]])

    data = pack_codes(join("e"), fmt.width(fr.elem), fr.container == 1, grade["po"] == "msb")
    s0 = pack_codes(join("s0"), fmt.width(fr.scale0), True)
    s1 = pack_codes(join("s1"), fmt.width(fr.scale1), False) if two else b""
    if sp is not None:
        aux = pack_codes(join("meta"), SP_META_BITS[fr.sp_meta_fmt], False)
    elif grade.has_zp:
        aux = pack_codes(join("zp"), fmt.width(fr.zp_fmt), True)
    else:
        aux = b""
    if two and k1 == 0 and numel == 0:
        s1 = pack_codes(encode_array(fr.scale1, np.array([1.0], F32)), fmt.width(fr.scale1))
    return Encoded(desc, shape, (data, s0, s1, aux))


def requantize(values: np.ndarray, grade: Grade, group_axis: int | None = None) -> Encoded:
    """L4's only spelling of a group-axis transpose: encode decoded values anew."""
    return encode(values, grade, group_axis)

