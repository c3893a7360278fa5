"""ModelOpt NVFP4: ``weight`` U8 (two E2M1 codes a byte), ``weight_scale``
F8_E4M3 per 16, ``weight_scale_2`` F32, the multiplier NVF4's scale1 means."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ._nvfp4 import infer_nvfp4


class ModeloptNvfp4(Convention):
    name = "modelopt-nvfp4"
    precedence = 50
    producers = "NVIDIA ModelOpt (`NVFP4_DEFAULT_CFG`, hf_quant_config.json)"
    versions_tested = "nvidia-modelopt 0.47.0"
    suffixes = (".weight_scale", ".weight_scale_2", ".input_scale")
    declared_as = ("quant_algo=NVFP4", "quant_method=modelopt")
    dtypes = ("U8", "F8_E4M3", "F32")
    conventions = ("modelopt-nvfp4",)
    planes = "data `weight`, scale0 `weight_scale`, scale1 `weight_scale_2`"
    grade = "GRADE_NVF4"
    checks = ("quant_algo", "group_size")
    decode = "equal to ModelOpt's dequantisation (e2m1 · weight_scale · weight_scale_2)"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        return (ctx.dtype(parts.get(".weight")) == "U8"
                and ctx.dtype(parts.get(".weight_scale")) == "F8_E4M3")

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_nvfp4(ctx, mod, parts.get(".weight") or "", parts.get(".weight_scale") or "",
                    parts.get(".weight_scale_2"), "modelopt",
                    [parts[s] for s in (".input_scale",) if s in parts])
