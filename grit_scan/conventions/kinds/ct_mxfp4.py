"""compressed-tensors mxfp4-pack-quantized: ``weight_packed`` U8 (two E2M1
codes a byte) and ``weight_scale`` U8 E8M0 per 32."""

from __future__ import annotations

from ...codec.grade import GRADE_MXFP4
from ..base import Convention, Ctx, Parts, new_q, same
from .ct_nvfp4 import CT_SUFFIXES


class CtMxfp4(Convention):
    name = "compressed-tensors-mxfp4"
    precedence = 41
    producers = "llm-compressor / compressed-tensors (`MXFP4` scheme)"
    versions_tested = "fixtures/conventions (layout from compressed-tensors 0.19.0)"
    suffixes = CT_SUFFIXES
    declared_as = ("format=mxfp4-pack-quantized", "quant_method=compressed-tensors")
    dtypes = ("U8",)
    conventions = ("compressed-tensors-mxfp4",)
    planes = "data `weight_packed`, scale0 `weight_scale`"
    grade = "GRADE_MXFP4"
    checks = ("format", "group_size")
    decode = "equal to the OCP MX definition"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        packed, sc = parts.get(".weight_packed"), parts.get(".weight_scale")
        return bool(packed and ctx.dtype(packed) == "U8" and sc and ctx.dtype(sc) == "U8")

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        packed, scale = parts[".weight_packed"], parts[".weight_scale"]
        d = ctx.tensors[packed]
        if len(d.shape) != 2:
            return
        shape = same((d.shape[0], d.shape[1] * 2))
        q = new_q(ctx, mod, mod + ".weight", shape, GRADE_MXFP4, "compressed-tensors-mxfp4",
                  planes=[ctx.ref(packed), ctx.ref(scale), None, None])
        ctx.add(q, packed, scale)
