"""An element-by-element transliteration of §8.1 (with §3.5 packing, §3.7
grouping and §3.8 sparsity metadata), written independently of
grit_scan.codec.decode and used as its oracle.  Slow on purpose: one
Python loop per element, no shared vectorised code."""

import math

import numpy as np

from grit_scan.codec import fmt


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
            S = fmt.fmt_decode(d.scale1, get_code(planes[2], g1 * mult, w(d.scale1),
                                                   w(d.scale1), False))
            S = f32(S * fmt.fmt_decode(d.scale0, get_code(planes[1], g0, w(d.scale0), cw0,
                                                         False)))
        else:
            S = fmt.fmt_decode(d.scale0, get_code(planes[1], g0, w(d.scale0), cw0, False))
        if math.isnan(S):
            out_c[lin] = np.nan
            continue
        e = fmt.fmt_decode(d.elem, get_code(planes[0], idx, we, cwe, msb))
        if math.isnan(e):
            out_c[lin] = np.nan
            continue
        if has_zp:
            zc = get_code(planes[3], g0, w(d.zp_fmt), cwz, False)
            if l1zp:
                zs = fmt.fmt_decode(d.scale1, get_code(planes[2], g1 * 2 + 1, w(d.scale1),
                                                        w(d.scale1), False))
                Z = f32(zs * fmt.fmt_decode(d.zp_fmt, zc))
                if math.isnan(Z):
                    out_c[lin] = np.nan
                    continue
                v = f32(f32(S * e) - Z)
            else:
                z = fmt.fmt_decode(d.zp_fmt, zc)
                if minus1:
                    z = f32(z + 1)
                v = f32(S * f32(e - z))
        else:
            v = f32(S * e)
        out_c[lin] = v
    return np.moveaxis(out_c.reshape(cshape), -1, ga)


def project(values, word, dr, ds):
    out = []
    for v in values.reshape(-1):
        if math.isnan(v):
            out.append(np.nan)
        else:
            out.append(fmt.fmt_decode(word, fmt.fmt_encode(word, float(v), dr, ds)))
    return np.array(out, dtype=np.float32).reshape(values.shape)
