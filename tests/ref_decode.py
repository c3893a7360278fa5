"""An element-by-element transliteration of §8.1 (with §3.5 packing, §3.7
grouping and §3.8 sparsity metadata), written independently of
grit_scan.codec.decode and used as its oracle.  Slow on purpose: one
Python loop per element, no shared vectorised code.  Element, scale and
zero-point values come from ref_fmt (exact rationals from §2.4, checked
against numpy/ml_dtypes in test_ref_fmt.py), never from grit_scan.codec.fmt."""

import math

import numpy as np
from ref_fmt import ref_f32


def get_code(buf, k, width, cw, msb):
    """Code k of a plane: stream bits [k*cw, k*cw + width)."""
    v = 0
    for j in range(width):
        b = k * cw + j
        byte = buf[b // 8]
        if msb:
            bit = (byte >> (7 - b % 8)) & 1
            v |= bit << (width - 1 - j)
        else:
            bit = (byte >> (b % 8)) & 1
            v |= bit << j
    return v


def f32(x):
    return float(np.float32(x))


def ref_decode(d, shape, planes):
    w = lambda word: (word & 31) + 1  # noqa: E731
    ga = d.group_axis
    cshape = [s for i, s in enumerate(shape) if i != ga] + [shape[ga]]
    numel = int(np.prod(shape))
    out_c = np.zeros(numel, dtype=np.float32)
    sparse = bool(d.flags & 0x04)
    has_zp = bool(d.flags & 0x01)
    l1zp = bool(d.flags & 0x20)
    minus1 = bool(d.flags & 0x02)
    msb = bool(d.flags & 0x08)
    we = w(d.elem)
    cwe = 8 if d.container == 1 and we <= 8 else we
    cw0 = 8 if w(d.scale0) <= 8 else w(d.scale0)
    cwz = 8 if w(d.zp_fmt) <= 8 else w(d.zp_fmt)
    mult = 2 if l1zp else 1
    metabits = {1: 2, 2: 4}.get(d.sp_meta_fmt, 0)
    stored = 0
    for lin in range(numel):
        g0 = lin // d.k0
        g1 = 0 if d.k1 == 0 else g0 // d.k1
        if sparse:
            quad, j = divmod(lin, d.sp_m)
            keep = {get_code(planes[3], quad * d.sp_n + s, metabits, metabits, False)
                    for s in range(d.sp_n)}
            if j not in keep:
                out_c[lin] = 0.0  # sparsity law
                continue
            idx = stored
            stored += 1
        else:
            idx = lin
        if d.n_levels == 2:
            S = ref_f32(d.scale1, get_code(planes[2], g1 * mult, w(d.scale1),
                                                   w(d.scale1), False))
            S = f32(S * ref_f32(d.scale0, get_code(planes[1], g0, w(d.scale0), cw0,
                                                         False)))
        else:
            S = ref_f32(d.scale0, get_code(planes[1], g0, w(d.scale0), cw0, False))
        if math.isnan(S):
            out_c[lin] = np.nan
            continue
        e = ref_f32(d.elem, get_code(planes[0], idx, we, cwe, msb))
        if math.isnan(e):
            out_c[lin] = np.nan
            continue
        if has_zp:
            zc = get_code(planes[3], g0, w(d.zp_fmt), cwz, False)
            if l1zp:
                zs = ref_f32(d.scale1, get_code(planes[2], g1 * 2 + 1, w(d.scale1),
                                                        w(d.scale1), False))
                Z = f32(zs * ref_f32(d.zp_fmt, zc))
                if math.isnan(Z):
                    out_c[lin] = np.nan
                    continue
                v = f32(f32(S * e) - Z)
            else:
                z = ref_f32(d.zp_fmt, zc)
                if minus1:
                    z = f32(z + 1)
                v = f32(S * f32(e - z))
        else:
            v = f32(S * e)
        out_c[lin] = v
    return np.moveaxis(out_c.reshape(cshape), -1, ga)


def project(values, word, dr, ds):
    """§8.1 step 6 into binary16 (0x356F) under dr in {rne, rtz} with
    ds=satfinite: numpy's IEEE RNE cast, stepped one ulp toward zero where
    it rounded away from zero (rtz), saturating at 65504.  Other targets
    are not covered: extend this before adding them to a test."""
    if word != 0x356F or dr not in ("rne", "rtz") or ds != "satfinite":
        raise NotImplementedError((hex(word), dr, ds))
    out = []
    for v in values.reshape(-1).astype(np.float32):
        if math.isnan(v):
            out.append(np.nan)
            continue
        with np.errstate(over="ignore"):
            h = np.float16(v)
        if dr == "rtz" and abs(float(h)) > abs(float(v)):
            h = np.nextafter(h, np.float16(0))
        if np.isinf(h):
            h = np.float16(math.copysign(65504.0, float(v)))
        out.append(float(h))
    return np.array(out, dtype=np.float32).reshape(values.shape)
