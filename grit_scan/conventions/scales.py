"""What several conventions share about scale tensors: the safetensors
dtypes of scales and of FP8 weights, and how a 2-D weight's scale tensor maps
onto §3.7 groups along its last axis."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from math import prod

FP8 = {"F8_E4M3", "F8_E5M2"}
# safetensors dtype of a scale tensor -> GRIT format token (§2.6)
SCALE_TOKENS = {"F32": "binary32", "F16": "binary16", "BF16": "bfloat16"}
# the dtypes no convention quantises: a file or model of only these is
# counted, never inferred (the safetensors reader keeps the same set for its
# shortcut; tests/test_conventions_registry.py holds the two equal)
UNQUANTISED_FLOATS = frozenset({"F32", "F16", "BF16", "F64"})


@dataclass(frozen=True)
class ScaleLayout:
    """How a 2-D weight's scale tensor maps onto §3.7 groups along the last axis."""

    name: str  # per-tensor, per-channel, per-group, block-row
    k0: int
    broadcast: int  # how many times the stored scale bytes repeat to make scale0


@functools.lru_cache(maxsize=1024)
def scale_layout(rows: int, cols: int, sshape: tuple[int, ...]) -> ScaleLayout | None:
    """The scale layouts that are runs along the input axis.  A 2-D block
    scale ``[1, G]`` over a weight of ``rows`` > 1 rows (every row inside one
    block: compressed-tensors FP8_BLOCK k/v_proj, DeepSeek weight_scale_inv) is
    per-group along the row with every row's scales equal, so scale0 is the
    stored ``[1, G]`` repeated ``rows`` times.  Memoised: a pure function of
    shapes that a checkpoint repeats for every layer."""
    if rows <= 0 or cols <= 0:
        return None  # an empty weight has no group of k0 >= 1 (a grade's k0 is 1..65535)
    n = prod(sshape)
    out: ScaleLayout | None = None
    if len(sshape) == 2 and sshape[0] == 1 and sshape[1] > 1 and rows > 1:
        if cols % sshape[1] == 0:
            out = ScaleLayout("block-row", cols // sshape[1], rows)
    elif n == rows:
        out = ScaleLayout("per-channel", cols, 1)
    elif n == 1:
        out = ScaleLayout("per-tensor", cols, rows)
    elif n > rows and n % rows == 0 and cols % (n // rows) == 0:
        out = ScaleLayout("per-group", cols // (n // rows), 1)
    return out if out is not None and out.k0 <= 65535 else None


def dt_field(sdt: str) -> str:
    """The decode projection (§4.5 dt) of a convention whose decoder computes in
    the scale's dtype (torch: ``q.to(scale.dtype) * scale``): the binary32
    product projected once into that dtype gives the same bits, because it is
    exact in binary32 (≤ 8 + 8 significant bits) and rounded once (§8.1 step 6)."""
    return "" if sdt == "binary32" else f",dt={sdt}"
