"""gpt-oss MXFP4: ``*_blocks`` U8 [..., G, 16] and ``*_scales`` U8 [..., G]."""

from __future__ import annotations

from ...codec.grade import GRADE_MXFP4
from ...issues.grit_check import MxBlocksShape
from ..base import Convention, Ctx, Parts, new_q, same


class GptOssMxfp4(Convention):
    name = "gpt-oss-mxfp4"
    precedence = 10
    producers = "OpenAI gpt-oss (transformers `Mxfp4Config` checkpoints)"
    versions_tested = "fixtures/conventions (layout from transformers' loader)"
    suffixes = ("_blocks", "_scales", ".blocks", ".scales")
    declared_as = ("quant_method=mxfp4",)
    dtypes = ("U8",)
    conventions = ("gpt-oss-mxfp4",)
    planes = "data `_blocks`, scale0 `_scales`"
    grade = "GRADE_MXFP4"
    checks = ("quant_method",)
    decode = "equal to the OCP MX definition (E2M1 codes times 2^(e-127))"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        g = parts.get
        blocks = g("_blocks") or g(".blocks")
        scales = g("_scales") or (g(".scales") if ctx.dtype(g(".scales")) == "U8" else None)
        return bool(blocks and scales and ctx.dtype(blocks) == "U8")

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        g = parts.get
        blocks = g("_blocks") or g(".blocks") or ""
        scales = g("_scales") or g(".scales") or ""
        b, s = ctx.tensors[blocks], ctx.tensors[scales]
        if len(b.shape) < 2 or b.shape[-1] != 16:
            ctx.art.add(MxBlocksShape(mod, blocks, tuple(b.shape)))
            return
        shape = same(tuple(b.shape[:-2]) + (b.shape[-2] * 32,))
        notes: tuple[str, ...] = ()
        if tuple(b.shape[:-1]) != tuple(s.shape):
            notes = (f"blocks.shape[:-1] {list(b.shape[:-1])} != scales.shape "
                     f"{list(s.shape)} (transformers asserts they are equal)",)
        ctx.add(new_q(ctx, mod, mod, shape, GRADE_MXFP4, "gpt-oss-mxfp4",
                      planes=[ctx.ref(blocks), ctx.ref(scales), None, None], notes=notes),
                blocks, scales)
