"""Normative decode() (§8), vectorised and chunked.

decode(i) follows §8.1 step by step in binary32: sparsity law first (masked
positions are +0.0 even under a NaN scale), then the scale chain outermost
first with one rounding per multiply, the poison law, the element, the zero
point, and the projection into ``dt``.  numpy's float32 ``*`` and ``-`` are
single IEEE operations, never fused, so every named step rounds once.

Work proceeds in chunks of whole (super-)groups in canonical order, so a
tensor of 10^8 elements costs the output array plus a bounded working set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from . import fmt
from .bits import unpack_codes as _unpack_bytes
from .check import grit_check
from .descriptor import Descriptor
from .errors import ERROR_FOR_STATUS, Detail, GritGradeError
from .fmt_array import decode_array, decode_table, encode_array
from .grade import Grade, registry
from .layout import (
    Geometry,
    geometry,
    is_canonical,
    split_payload,
    stored_sizes,
    to_canonical,
    to_canonical_codes,
)
from .placement import BLOCK_AOS
from .planes import Plane, PlaneBuf
from .tables import (
    CT_PAD8,
    F_HAS_ZP,
    F_MSB_FIRST,
    F_SPARSE,
    F_ZP_L1SCALED,
    F_ZP_MINUS1,
    FORMAT_TOKENS,
)

DEFAULT_CHUNK = 1 << 16  # elements per chunk: the working set stays in cache

class _Codes:
    """A canonical plane held as unpacked codes (after a relayout)."""

    __slots__ = ("codes", "nbytes")

    def __init__(self, codes: np.ndarray, nbytes: int) -> None:
        self.codes = codes
        self.nbytes = nbytes

    def __len__(self) -> int:
        return self.nbytes


# A canonical plane as decode reads it: packed bytes, or codes a relayout
# already unpacked (so decode does not pack them only to unpack them again).
CanonicalPlane = PlaneBuf | _Codes


def unpack_codes(plane: CanonicalPlane, count: int, width: int, pad8: bool = False,
                 msb_first: bool = False, start: int = 0) -> np.ndarray:
    """Codes of a plane that is either packed bytes or already-unpacked _Codes."""
    if isinstance(plane, _Codes):
        return plane.codes[start : start + count]
    return _unpack_bytes(plane, count, width, pad8, msb_first, start)


def resolve_grade(d: Descriptor, grades: Mapping[int, Grade] | None) -> Grade:
    g = (registry() if grades is None else grades).get(d.grade_id)
    if g is None:
        raise GritGradeError(Detail(
            message=f"grade_id {d.grade_id:#018x} does not resolve to a known grade", step=2))
    return g


def canonical_planes(
    d: Descriptor, shape: Sequence[int], payload: bytes | bytearray | memoryview,
    layouts: Mapping[int, str] | None = None,
) -> list[bytes | memoryview]:
    """The four canonical planes of a payload in ``d``'s placements (§3.6)."""
    if is_canonical(d):
        g = geometry(d, shape)
        sizes = [s.canonical_bytes if s.present else 0 for s in g.planes]
        return split_payload(memoryview(payload).cast("B"), sizes)
    return list(to_canonical(d, shape, payload, layouts))


def check_planes(d: Descriptor, shape: Sequence[int], planes: Sequence[CanonicalPlane],
                 grades: Mapping[int, Grade] | None) -> None:
    """Level-1 grit_check of canonical planes; raises the status's GritError."""
    _check_sizes(d, shape, [len(p) for p in planes], grades)


def _check_sizes(d: Descriptor, shape: Sequence[int], sizes: list[int],
                 grades: Mapping[int, Grade] | None) -> None:
    res = grit_check(d, shape, sizes, 1, grades=grades)
    if not res.ok:
        assert res.detail is not None
        raise ERROR_FOR_STATUS[res.status](res.detail)


def _project_dt(out: np.ndarray, g: Grade) -> np.ndarray:
    """§8.1 step 6: project binary32 into dt under (dr, ds)."""
    dt = g["dt"]
    if dt == "binary32":
        return out
    word = FORMAT_TOKENS[dt or "binary32"]
    nan = np.isnan(out)
    codes = encode_array(word, np.where(nan, 0, out), g["dr"] or "rne", g["ds"] or "satfinite")
    res = decode_array(word, codes)
    res[nan] = np.nan
    return res


def decode(
    d: Descriptor,
    shape: Sequence[int],
    payload: bytes | bytearray | memoryview | None = None,
    *,
    planes: Sequence[bytes | bytearray | memoryview] | None = None,
    grades: Mapping[int, Grade] | None = None,
    layouts: Mapping[int, str] | None = None,
    chunk: int = DEFAULT_CHUNK,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """decode() of §8: the logical binary32 array of ``shape``.

    Give either ``payload`` (data ‖ scale0 ‖ scale1 ‖ aux in the descriptor's
    placements; relayout happens here) or the four canonical ``planes``.
    """
    g = resolve_grade(d, grades)
    reg = {d.grade_id: g}
    if planes is None and payload is not None:
        grid = _byte_blocks(d, g, shape, payload, layouts)
        if grid is not None:
            return _decode_byte_blocks(d, reg, shape, grid, chunk, out)
    canon: Sequence[CanonicalPlane]
    if planes is not None:
        canon = planes
    elif payload is None:
        raise ValueError("decode needs a payload or planes")
    elif is_canonical(d):
        canon = canonical_planes(d, shape, payload, layouts)
    else:
        specs = geometry(d, shape).planes
        canon = [
            _Codes(p, specs[i].canonical_bytes) if isinstance(p, np.ndarray) else p
            for i, p in enumerate(to_canonical_codes(d, shape, payload, layouts))
        ]
    check_planes(d, shape, canon, reg)
    geo = geometry(d, shape)
    numel = geo.outer * geo.inner
    flat = np.empty(numel, dtype=np.float32) if out is None else out.reshape(-1)
    _decode_into(d, g, geo, canon, flat, chunk)
    cshape = tuple(s for i, s in enumerate(shape) if i != d.group_axis) + (shape[d.group_axis],)
    arr = flat.reshape(cshape)
    return np.moveaxis(arr, -1, d.group_axis)


def _byte_blocks(d: Descriptor, g: Grade, shape: Sequence[int],
                 payload: bytes | bytearray | memoryview,
                 layouts: Mapping[int, str] | None) -> np.ndarray | None:
    """The payload as a (blocks, scale0 ‖ data) byte grid when it is one-level
    BLOCK_AOS of whole-byte codes (ggml Q8_0: binary16 d then 32 int8), the
    case decode can read in place; None for anything else (the general path).

    BLOCK_AOS stores per level-0 group scale1 ‖ scale0 ‖ aux ‖ data
    (planes.BLOCK_AOS_ORDER); with one level, no aux and identity order
    inside the block, block b's data bytes are canonical elements
    b*k0 .. (b+1)*k0 (§5, docs/layouts.md), so no relayout is needed."""
    if (d.n_levels != 1 or d.flags & (F_SPARSE | F_HAS_ZP) or g["dt"] not in (None, "binary32")
            or d.placement_data != BLOCK_AOS or d.placement_scale != BLOCK_AOS
            or fmt.width(d.elem) != 8 or fmt.width(d.scale0) not in (8, 16)):
        return None
    geo = geometry(d, shape)
    sizes, aos = stored_sizes(d, shape, layouts)
    nb, sw = geo.n_blocks, fmt.width(d.scale0) // 8
    canonical = [s.canonical_bytes if s.present else 0 for s in geo.planes]
    if (not aos or nb == 0 or sizes != canonical or sizes[2] or sizes[3]
            or sizes[0] != nb * d.k0 or sizes[1] != nb * sw or len(payload) != sum(sizes)):
        return None  # the general path names what is wrong
    return np.frombuffer(payload, dtype=np.uint8).reshape(nb, sw + d.k0)


def _decode_byte_blocks(d: Descriptor, reg: Mapping[int, Grade], shape: Sequence[int],
                        grid: np.ndarray, chunk: int, out: np.ndarray | None) -> np.ndarray:
    """decode() over a ``_byte_blocks`` grid, chunk by chunk straight into the
    output: one binary32 multiply per element (§8.1 step 2 with one level),
    as the general path does, so the values are bit-identical to it."""
    k0, nb = d.k0, grid.shape[0]
    sw = grid.shape[1] - k0
    _check_sizes(d, shape, [nb * k0, nb * sw, 0, 0], reg)
    flat = np.empty(nb * k0, dtype=np.float32) if out is None else out.reshape(-1)
    dst = flat.reshape(nb, k0)
    codes = grid[:, :sw].view("<u2" if sw == 2 else np.uint8).reshape(nb)
    f = fmt.require_valid(d.elem)
    s8 = f.kind == "int" and not f.unsigned  # its code is its two's-complement value
    table = None if s8 else decode_table(d.elem)
    elem_finite = table is None or bool(np.isfinite(table).all())
    step = max(1, chunk // k0)
    for b0 in range(0, nb, step):
        b1 = min(nb, b0 + step)
        s = decode_array(d.scale0, codes[b0:b1])[:, None]
        e = grid[b0:b1, sw:]
        with np.errstate(invalid="ignore", over="ignore"):
            if table is None:
                np.multiply(e.view(np.int8), s, out=dst[b0:b1], dtype=np.float32)
            else:
                np.multiply(table[e], s, out=dst[b0:b1])
        if elem_finite and np.isfinite(s).all():
            continue  # finite times finite: no NaN to canonicalise
        res = dst[b0:b1]
        res[np.isnan(res)] = np.float32(np.nan)  # §1.2: the canonical NaN 0x7FC00000
    cshape = tuple(x for i, x in enumerate(shape) if i != d.group_axis) + (shape[d.group_axis],)
    return np.moveaxis(flat.reshape(cshape), -1, d.group_axis)


def _decode_into(d: Descriptor, g: Grade, geo: Geometry, planes: Sequence[CanonicalPlane],
                 flat: np.ndarray, chunk: int) -> None:
    numel = flat.size
    if numel == 0:
        return
    k0 = d.k0
    two = d.n_levels == 2
    span = k0 * (d.k1 if two and d.k1 else 1)
    if d.flags & F_SPARSE:
        span = int(np.lcm(span, d.sp_m))
    span = int(np.lcm(span, 8))
    step = max(span, chunk // span * span)
    sparse = bool(d.flags & F_SPARSE)
    has_zp = bool(d.flags & F_HAS_ZP)
    l1zp = bool(d.flags & F_ZP_L1SCALED)
    pad8 = d.container == CT_PAD8
    msb = bool(d.flags & F_MSB_FIRST)
    w_e = fmt.width(d.elem)
    mult = 2 if l1zp else 1
    cursor = 0  # stored-element cursor (sparse)
    s1_codes = None
    if two:
        spec1 = geo.planes[Plane.SCALE1]
        s1_codes = unpack_codes(planes[Plane.SCALE1], spec1.units * mult, spec1.width, False, False)
        s1_vals = decode_array(d.scale1, s1_codes).reshape(-1, mult)
    for e0 in range(0, numel, step):
        e1 = min(numel, e0 + step)
        n = e1 - e0
        g0a, g0b = e0 // k0, e1 // k0
        s0 = decode_array(d.scale0, unpack_codes(planes[Plane.SCALE0], g0b - g0a,
                                                 fmt.width(d.scale0), True, False, start=g0a))
        if two:
            if d.k1 == 0:
                g1 = np.zeros(g0b - g0a, dtype=np.int64)
            else:
                g1 = np.arange(g0a, g0b, dtype=np.int64) // d.k1
            S = (s1_vals[g1, 0] * s0).astype(np.float32)  # outermost first (§8.1 step 2)
        else:
            S = s0
        if sparse:
            m = d.sp_m
            q0, q1 = e0 // m, e1 // m
            meta = unpack_codes(planes[Plane.AUX], (q1 - q0) * d.sp_n,
                                geo.planes[Plane.AUX].width, False, False,
                                start=q0 * d.sp_n).reshape(q1 - q0, d.sp_n)
            hits = np.zeros((q1 - q0, m + 1), dtype=bool)
            rows = np.repeat(np.arange(q1 - q0), d.sp_n)
            idx = np.minimum(meta.reshape(-1), m)  # indices >= M name no position
            hits[rows, idx] = True
            mask = hits[:, :m].reshape(-1)
            kept = int(mask.sum())
            codes = unpack_codes(planes[Plane.DATA], kept, w_e, pad8, msb, start=cursor)
            cursor += kept
            e = np.zeros(n, dtype=np.float32)
            e[mask] = decode_array(d.elem, codes)
        else:
            e = decode_array(d.elem, unpack_codes(planes[Plane.DATA], n, w_e, pad8, msb, start=e0))
        S_g = S[:, None]  # one scale per level-0 group, broadcast over its k0 elements
        eg = e.reshape(-1, k0)
        with np.errstate(invalid="ignore", over="ignore"):
            if has_zp:
                zp = decode_array(d.zp_fmt, unpack_codes(planes[Plane.AUX], g0b - g0a,
                                                             fmt.width(d.zp_fmt), True, False,
                                                             start=g0a))
                if l1zp:
                    Z = (s1_vals[g1, 1] * zp).astype(np.float32)  # §8.1 step 5, zps=l1
                    res = (S_g * eg).astype(np.float32) - Z[:, None]
                else:
                    z = zp + np.float32(1) if d.flags & F_ZP_MINUS1 else zp
                    res = S_g * (eg - z[:, None]).astype(np.float32)
            else:
                res = S_g * eg
        res = res.astype(np.float32, copy=False).reshape(-1)
        nan = np.isnan(res)
        if nan.any():
            res[nan] = np.float32(np.nan)  # §1.2: the canonical NaN 0x7FC00000
        if sparse:
            res[~mask] = 0.0  # §8.3: +0.0 exactly, winning over poison
        flat[e0:e1] = _project_dt(res, g)


def decode_bits(arr: np.ndarray) -> list[str]:
    """binary32 bit patterns as 8-hex-digit strings (conformance vectors)."""
    return [f"{int(b):08x}" for b in np.ascontiguousarray(arr, dtype=np.float32).view(
        np.uint32).reshape(-1)]
