"""DeepSeek-style / transformers FineGrainedFP8: FP8 ``weight`` with
``weight_scale_inv`` per 2-D block (``weight_block_size``)."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ..scales import FP8
from ._fp8 import infer_fp8


class FineGrainedFp8(Convention):
    name = "fp8-weight-scale-inv"
    precedence = 70  # before the FP8 of weight_scale
    producers = "DeepSeek V3 checkpoints, transformers `FineGrainedFP8Config`"
    versions_tested = "transformers 5.17.0 FineGrainedFP8 (128x128); DeepSeek-V3 layout"
    suffixes = (".weight_scale_inv",)
    declared_as = ("quant_method=fp8",)
    dtypes = ("F8_E4M3", "F32", "BF16")
    conventions = ("fp8-block", "fp8-per-channel", "fp8-per-tensor", "fp8-per-group")
    planes = "data `weight`, scale0 `weight_scale_inv`"
    not_representable = ("§3.7", "2-D blocks: GRIT v1 groups are runs along one axis "
                         "(a single block row is per-group, and representable); one scale "
                         "over more than one row likewise (§3.7, §3.1)")
    checks = ("quant_method", "weight_block_size")
    decode = "equal where representable (a single block row); 2-D blocks refused (§3.7)"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        w = parts.get(".weight")
        return bool(w and ctx.dtype(w) in FP8 and parts.get(".weight_scale_inv"))

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_fp8(ctx, mod, parts[".weight"], parts[".weight_scale_inv"], parts,
                  "weight_scale_inv")
