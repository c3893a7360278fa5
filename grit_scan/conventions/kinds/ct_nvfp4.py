"""compressed-tensors nvfp4-pack-quantized: ``weight_packed`` U8 (two E2M1
codes a byte), ``weight_scale`` F8_E4M3 per 16, ``weight_global_scale`` F32."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ._nvfp4 import infer_nvfp4

# the parts of compressed-tensors' formats (int, float, pack and NVFP4)
CT_SUFFIXES = (".weight_packed", ".weight_scale", ".weight_global_scale",
               ".input_global_scale", ".weight_zero_point", ".weight_shape",
               ".weight_g_idx", ".input_scale")


class CtNvfp4(Convention):
    name = "compressed-tensors-nvfp4"
    precedence = 40
    producers = "llm-compressor / compressed-tensors (`NVFP4` scheme)"
    versions_tested = "llmcompressor 0.14.0.1, compressed-tensors 0.19.0"
    suffixes = CT_SUFFIXES
    declared_as = ("format=nvfp4-pack-quantized", "quant_method=compressed-tensors")
    dtypes = ("U8", "F8_E4M3", "F32")
    conventions = ("compressed-tensors-nvfp4",)
    planes = "data `weight_packed`, scale0 `weight_scale`, scale1 `weight_global_scale`"
    not_representable = ("§8.1", "weight_global_scale is a divisor; GRIT's level-1 scale "
                         "multiplies")
    checks = ("format", "group_size")
    decode = "refused: 1/weight_global_scale is in no plane (§8.1)"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        packed, sc = parts.get(".weight_packed"), parts.get(".weight_scale")
        return bool(packed and ctx.dtype(packed) == "U8" and sc
                    and ctx.dtype(sc) == "F8_E4M3")

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_nvfp4(ctx, mod, parts[".weight_packed"], parts[".weight_scale"],
                    parts.get(".weight_global_scale"), "compressed-tensors",
                    [parts[s] for s in (".input_global_scale", ".input_scale") if s in parts])
