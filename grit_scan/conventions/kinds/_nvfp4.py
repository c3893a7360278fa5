"""What compressed-tensors' and ModelOpt's NVFP4 share: E2M1 pairs with the
even column in the low nibble, one E4M3 scale per 16, and a per-tensor F32
global scale (a multiplier in ModelOpt, a divisor in compressed-tensors)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ...codec.grade import GRADE_NVF4
from ...issues.grit_check import Nvfp4DataShape
from ..base import Ctx, new_q, not_representable, same


def infer_nvfp4(ctx: Ctx, mod: str, data: str, scale: str, glob: str | None, who: str,
                acts: Sequence[str] = ()) -> None:
    """NVFP4 (compressed-tensors nvfp4-pack-quantized, ModelOpt): E2M1 pairs
    with the even column in the low nibble, one E4M3 scale per 16, and a
    per-tensor F32 global scale.

    ModelOpt's ``weight_scale_2`` is a multiplier (decode
    ``e2m1 * (weight_scale * weight_scale_2)``): exactly GRADE_NVF4's scale1
    (§10.3).  compressed-tensors' ``weight_global_scale`` is a divisor
    (decode ``x * (weight_scale / weight_global_scale)``, forward.py
    ``_dequantize``); §8.1 only multiplies scale levels, and 1/global is in
    no plane, so those bytes get no grade (never the registered one, which
    would decode them weight_global_scale² times too large).

    ``acts``: the module's activation scales (ModelOpt ``input_scale``,
    compressed-tensors ``input_global_scale``), parts of the quantised
    module, as FP8's ``input_scale`` is (never counted as unquantised
    tensors of their own)."""
    d = ctx.tensors[data]
    if len(d.shape) != 2:
        ctx.art.add(Nvfp4DataShape(mod, data, tuple(d.shape)))
        return
    shape = same((d.shape[0], d.shape[1] * 2))
    if who == "compressed-tensors" and glob is not None:
        not_representable(ctx, mod, mod + ".weight", shape, "compressed-tensors-nvfp4", "§8.1",
                 "compressed-tensors stores weight_global_scale as a DIVISOR: it decodes "
                 "x·(weight_scale / weight_global_scale) (global = 448·6/amax); GRIT's level-1 "
                 "scale is a MULTIPLIER (§8.1: S = scale1·scale0, outermost first) and "
                 "1/weight_global_scale is in no plane, so these bytes have no exact GRIT v1 "
                 "descriptor (read as GRADE_NVF4 they would decode weight_global_scale² times "
                 "too large; ModelOpt's weight_scale_2 is the multiplier NVF4 means)",
                 [data, scale, glob, *acts],
                 planes=[ctx.ref(data), ctx.ref(scale), ctx.ref(glob), None],
                 would_be=str(GRADE_NVF4),
                 actual_group_size=_group(shape, ctx.tensors[scale].shape))
        return
    # ModelOpt's data tensor is MODULE.weight: its name string serves (memory)
    name = data if who == "modelopt" else mod + ".weight"
    notes: tuple[str, ...] = ()
    if glob is None:
        notes = ("the per-tensor global scale tensor is missing: decode would use a "
                 "wrong scale (transformers#48372)",)
    ctx.add(new_q(ctx, mod, name, shape, GRADE_NVF4, sys.intern(f"{who}-nvfp4"),
                  planes=[ctx.ref(data), ctx.ref(scale), ctx.ref(glob) if glob else None, None],
                  notes=notes),
            data, scale, glob or "", *acts)



def _group(shape: tuple[int, ...], sshape: tuple[int, ...]) -> int | None:
    """The run of values one scale covers along the row (16 in NVFP4), from
    the shapes: the bytes' group size, whatever a config declares."""
    if len(sshape) != 2 or not sshape[1] or shape[-1] % sshape[1]:
        return None
    return shape[-1] // sshape[1]
