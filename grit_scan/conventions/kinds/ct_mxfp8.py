"""compressed-tensors mxfp8-quantized: F8 ``weight``, one U8 E8M0
``weight_scale`` per 32 along the row (OCP MX with an FP8 element)."""

from __future__ import annotations

from ...codec.grade import parse_grade
from ...issues import shape
from ...issues.notes import UnknownLayout
from ..base import Convention, Ctx, Parts, new_q
from ..scales import FP8
from .ct_nvfp4 import CT_SUFFIXES


class CtMxfp8(Convention):
    name = "compressed-tensors-mxfp8"
    precedence = 71
    producers = "llm-compressor / compressed-tensors (`MXFP8` scheme)"
    versions_tested = "fixtures/conventions (layout from compressed-tensors 0.19.0)"
    suffixes = CT_SUFFIXES
    declared_as = ("format=mxfp8-quantized", "quant_method=compressed-tensors")
    dtypes = ("F8_E4M3", "F8_E5M2", "U8")
    conventions = ("compressed-tensors-mxfp8",)
    planes = "data `weight`, scale0 `weight_scale`"
    grade = "grit1(e=e4m3|e5m2, k0=row / scales, s0=e8m0)"
    checks = ("format", "group_size")
    decode = "equal to the OCP MX definition"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        w, sc = parts.get(".weight"), parts.get(".weight_scale")
        return bool(w and ctx.dtype(w) in FP8 and sc and ctx.dtype(sc) == "U8")

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        _infer(ctx, mod, parts[".weight"], parts[".weight_scale"])


def _infer(ctx: Ctx, mod: str, w: str, sc: str) -> None:
    """compressed-tensors mxfp8-quantized: F8 elements, one U8 E8M0 scale per
    32 along the row (OCP MX): MX with an FP8 element, expressible (§2.6)."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    if len(wt.shape) != 2 or len(st.shape) != 2 or st.shape[0] != wt.shape[0] or (
            st.shape[1] == 0 or wt.shape[1] % st.shape[1]
            or not 1 <= wt.shape[1] // st.shape[1] <= 65535):
        ctx.art.add(UnknownLayout(mod, w, f"an F8 weight {shape(wt.shape)} with a U8 scale "
                                  f"{shape(st.shape)}", "an MX layout"))
        return
    elem = "e4m3" if wt.dtype == "F8_E4M3" else "e5m2"
    k0 = wt.shape[1] // st.shape[1]
    g = parse_grade(f"grit1(e={elem},k0={k0},s0=e8m0,esr=exp2floormaxabs)")
    q = new_q(ctx, mod, w, tuple(wt.shape), g, "compressed-tensors-mxfp8",
              planes=[ctx.ref(w), ctx.ref(sc), None, None])
    ctx.add(q, w, sc)
