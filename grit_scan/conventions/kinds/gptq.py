"""GPTQ (AutoGPTQ, GPTQModel): qweight [in·b/32, out] int32, scales
[groups, out] float16, qzeros [groups, out·b/32] int32, g_idx [in]; v1
(``checkpoint_format`` "gptq") stores each zero point minus one."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ._packed_int import SUFFIXES, infer_packed


class Gptq(Convention):
    name = "gptq"
    precedence = 21  # after AWQ: any qweight AWQ's shapes do not claim
    producers = "AutoGPTQ, GPTQModel"
    versions_tested = "auto_gptq 0.7.1; GPTQModel 7.7.0 pack_original"
    suffixes = SUFFIXES
    declared_as = ("quant_method=gptq",)
    dtypes = ("I32", "F16")
    conventions = ("gptq",)
    planes = "data `qweight`, scale0 `scales`, aux `qzeros` (g_idx: act-order)"
    not_representable = ("§0.3(d)", "zero points packed densely in int32 words; v1 stores "
                         "sub-byte zero points one per byte (act-order: §0.3(c))")
    checks = ("bits", "group_size", "desc_act", "checkpoint_format", "quant_method")
    decode = "refused (not representable); sizes checked against the §7.3 equations"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        return ".qweight" in parts

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_packed(ctx, mod, parts)
