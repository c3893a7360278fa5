"""FP8 weights with a float ``weight_scale`` per tensor, channel, group or
single block row (compressed-tensors float-quantized, ModelOpt FP8,
fbgemm_fp8), or 2-D blocks (not representable)."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ..scales import FP8
from ._fp8 import infer_fp8


class Fp8(Convention):
    name = "fp8"
    precedence = 72  # after MXFP8's U8 scale
    producers = ("llm-compressor / compressed-tensors (FP8, FP8_DYNAMIC, FP8_BLOCK), "
                 "ModelOpt FP8, fbgemm_fp8")
    versions_tested = "llmcompressor 0.14.0.1, compressed-tensors 0.19.0"
    suffixes = (".weight_scale", ".input_scale")
    declared_as = ("format=float-quantized", "format=naive-quantized",
                   "quant_method=compressed-tensors", "quant_method=fp8",
                   "quant_method=fbgemm_fp8", "quant_algo=FP8")
    dtypes = ("F8_E4M3", "F8_E5M2", "F32", "F16", "BF16")
    conventions = ("fp8-per-tensor", "fp8-per-channel", "fp8-per-group", "fp8-block")
    planes = ("data `weight`, scale0 `weight_scale` (a single block row repeated per row); "
              "per-tensor: no plan, the bytes are one scale")
    grade = ("grit1(e=e4m3|e5m2, k0=row length or group, s0=scale dtype); one scale over "
             "more than one row (per-tensor) and 2-D blocks: not representable (§3.7, §3.1)")
    checks = ("format", "group_size", "weight_block_size")
    decode = ("equal to the producer's w · scale in the scale's dtype where described; "
              "per-tensor and 2-D blocks refused (no descriptor)")

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        w = parts.get(".weight")
        return bool(w and ctx.dtype(w) in FP8 and parts.get(".weight_scale"))

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_fp8(ctx, mod, parts[".weight"], parts[".weight_scale"], parts)
