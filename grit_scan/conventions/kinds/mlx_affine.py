"""MLX affine quantisation (``mlx-lm convert -q``): ``weight`` U32 [out,
in·b/32] with b-bit codes packed little end first into one continuous bit
stream of 32-bit words (3- and 6-bit codes straddle words), and ``scales``
and ``biases`` [out, in/g] in the model's float dtype; it decodes
``scales · q + biases`` per group (mlx.core.dequantize)."""

from __future__ import annotations

from typing import Any

from ..base import Convention, Ctx, Parts, not_representable, same
from ..scales import SCALE_TOKENS


class MlxAffine(Convention):
    name = "mlx-affine"
    precedence = 80
    producers = "mlx-lm (`mlx_lm.convert -q`, mode affine)"
    versions_tested = "mlx 0.32.4, mlx-lm 0.32.2 (bits 3/4/6, groups 32/64/128)"
    suffixes = (".scales", ".biases")
    declared_as = ("mode=affine",)
    dtypes = ("U32", "BF16", "F16", "F32")
    conventions = ("mlx-affine",)
    planes = "data `weight` (U32 bit stream), `scales` and `biases` per group"
    not_representable = ("§8.4", "a float bias per group added after scaling "
                         "(scales · q + biases): neither §8.4 law")
    checks = ("bits", "group_size", "mode")
    decode = "refused: the per-group float bias is neither §8.4 zero-point law"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        return (ctx.dtype(parts.get(".weight")) == "U32"
                and ctx.dtype(parts.get(".scales")) in SCALE_TOKENS
                and ctx.dtype(parts.get(".biases")) in SCALE_TOKENS)

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        w, sc = parts[".weight"], parts[".scales"]
        ws, ss = ctx.tensors[w].shape, ctx.tensors[sc].shape
        detail: dict[str, Any] = {}
        shape: tuple[int, ...] = tuple(ws)
        dg = (ctx.declared or {}).get("group_size")
        if len(ws) == 2 and len(ss) == 2 and ws[0] == ss[0] and isinstance(dg, int) and dg > 0:
            k = ss[1] * dg  # the input width the scales cover at the declared group size
            bits, rest = divmod(32 * ws[1], k) if k else (0, 1)
            if not rest and bits:
                shape = same((ws[0], k))
                detail.update(actual_bits=bits, group_size=dg, **{"in": k, "out": ws[0]})
        not_representable(
            ctx, mod, w, shape, "mlx-affine", "§8.4",
            "MLX affine quantisation adds a float bias per group after scaling (scales·q + "
            "biases): §8.4's zps=shared subtracts an integer zero point before scaling, and "
            "zps=l1 subtracts a zero-point code scaled by a level-1 [S1, Z1] pair the file "
            "does not hold, so the biases have no exact GRIT v1 plane",
            list(parts.values()), None, group_axis=-1, **detail)
