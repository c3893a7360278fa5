"""AutoAWQ GEMM: qweight [in, out·b/32] int32 with the [0,2,4,6,1,3,5,7]
nibble interleave, scales [groups, out] float16, qzeros [groups, out·b/32]."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts
from ._packed_int import SUFFIXES, infer_packed, packed_bits


class Awq(Convention):
    name = "awq"
    precedence = 20
    producers = "AutoAWQ (GEMM)"
    versions_tested = "autoawq 0.2.9"
    suffixes = SUFFIXES
    declared_as = ("quant_method=awq",)
    dtypes = ("I32", "F16")
    conventions = ("awq",)
    planes = "data `qweight` (Perm([0,2,4,6,1,3,5,7]) nibbles), scale0 `scales`, aux `qzeros`"
    not_representable = ("§0.3(d)", "zero points packed densely in int32 words; v1 stores "
                         "sub-byte zero points one per byte")
    checks = ("bits", "group_size", "quant_method")
    decode = "refused (not representable); sizes checked against the §7.3 equations"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        qw, sc = parts.get(".qweight"), parts.get(".scales")
        if not (qw and sc):
            return False
        w, s = ctx.tensors[qw].shape, ctx.tensors[sc].shape
        if len(w) != 2 or len(s) != 2:
            return False
        found = packed_bits(ctx, parts, tuple(w), tuple(s))
        return found is not None and found[0] == "awq"

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        infer_packed(ctx, mod, parts)
