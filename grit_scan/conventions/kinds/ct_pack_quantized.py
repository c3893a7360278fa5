"""compressed-tensors pack-quantized: b-bit values stored as value + 2^(b-1)
in int32 words (``weight_packed``), float scales, ``weight_shape``."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts, not_representable
from .ct_nvfp4 import CT_SUFFIXES


class CtPackQuantized(Convention):
    name = "compressed-tensors-pack-quantized"
    precedence = 42  # any weight_packed NVFP4 and MXFP4 do not claim
    producers = "llm-compressor / compressed-tensors (W4A16, W8A16 packed)"
    versions_tested = "llmcompressor 0.14.0.1, compressed-tensors 0.19.0"
    suffixes = CT_SUFFIXES
    declared_as = ("format=pack-quantized", "quant_method=compressed-tensors")
    dtypes = ("I32",)
    conventions = ("compressed-tensors-pack-quantized",)
    planes = "data `weight_packed`, scale0 `weight_scale`, aux `weight_zero_point`"
    not_representable = ("§2.4", "offset-binary codes (value + 2^(b-1)): no v1 element "
                         "format decodes a biased integer without a zero-point plane")
    checks = ("format",)
    decode = "refused: offset-binary codes (§2.4)"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        # its scale beside it: a weight_packed without one is another
        # layout's (compressed-tensors' marlin-24 packs its scales as
        # scale_packed), or a scale lost, and is left unclaimed
        return ".weight_packed" in parts and ".weight_scale" in parts

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        packed = parts[".weight_packed"]
        not_representable(
            ctx, mod, packed, ctx.tensors[packed].shape, "compressed-tensors-pack-quantized",
            "§2.4", "compressed-tensors pack-quantized stores value + 2^(b-1) in int32 words "
            "(offset-binary codes); no v1 element format decodes a biased integer without a "
            "zero-point plane", list(parts.values()))
