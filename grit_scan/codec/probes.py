"""Level-3 decode-sanity probes (§7.6): advisory warnings, never a status.

Samples min(64, n_groups0) level-0 groups spread evenly over the tensor and
looks for what a structurally valid but semantically lying descriptor shows:
scale codes that are NaN, an E8M0 scale plane with no dynamic range, and
integer element codes that never approach their range (the wrong scale rule).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import fmt
from .bits import unpack_codes
from .descriptor import Descriptor
from .fmt_array import decode_array
from .layout import geometry
from .planes import Plane
from .tables import CT_PAD8, F_MSB_FIRST, F_SPARSE, FORMAT_TOKENS

SAMPLES = 64
MIN_RANGE_SAMPLE = 32  # fewer groups than this can share one exponent by chance
E8M0 = FORMAT_TOKENS["e8m0"]


def sample_groups(n_groups0: int, samples: int = SAMPLES) -> np.ndarray:
    k = min(samples, n_groups0)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.linspace(0, n_groups0 - 1, k).round().astype(np.int64))


def probe(d: Descriptor, shape: Sequence[int], planes: Sequence[bytes | memoryview],
          value_bits: int | None = None) -> list[str]:
    """Warnings for canonical planes that already passed level 2.

    ``value_bits``: the width of the values a convention stores in each
    element code when it is narrower than the code (int4 values sign-extended
    in s8 bytes): the reach of the codes is judged against that range, not
    the container's."""
    geo = geometry(d, shape)
    n_groups0 = geo.planes[Plane.SCALE0].units
    groups = sample_groups(n_groups0)
    if groups.size == 0:
        return []
    warnings: list[str] = []
    w_s0 = fmt.width(d.scale0)
    s_codes = np.concatenate([unpack_codes(planes[Plane.SCALE0], 1, w_s0, True, False, start=int(g))
                              for g in groups])
    s_vals = decode_array(d.scale0, s_codes)
    nan = int(np.isnan(s_vals).sum())
    if nan:
        warnings.append(f"{nan} of {groups.size} sampled level-0 scales are NaN: those groups "
                        "decode to NaN (poisoned)")
    if d.scale0 == E8M0 and groups.size >= MIN_RANGE_SAMPLE and np.unique(s_codes).size == 1:
        warnings.append(f"all {groups.size} sampled E8M0 scales are code {int(s_codes[0])}: "
                        "no dynamic range (a constant-filled scale plane, or not E8M0 at all?)")
    ef = fmt.unpack(d.elem)
    if ef.kind == "int":
        k0 = d.k0
        per_group = k0 * d.sp_n // d.sp_m if d.flags & F_SPARSE else k0
        codes = np.concatenate([
            unpack_codes(planes[Plane.DATA], per_group, ef.width, d.container == CT_PAD8,
                         bool(d.flags & F_MSB_FIRST), start=int(g) * per_group)
            for g in groups])
        vals = decode_array(d.elem, codes)
        width = value_bits if value_bits is not None and 1 < value_bits < ef.width else ef.width
        top = float((1 << width) - 1 if ef.unsigned else (1 << (width - 1)) - 1)
        reach = float(np.abs(vals).max()) if vals.size else 0.0
        if reach < top / 2:
            held = "" if width == ef.width else f" ({width}-bit values)"
            warnings.append(f"sampled {fmt.name(d.elem)} codes{held} never exceed {reach:g} "
                            f"of a range of {top:g}: the scale rule may be wrong")
    return warnings
