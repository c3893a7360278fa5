"""AutoAWQ GEMV: qweight [out, in·b/32] int32 (nibbles in natural order),
scales [out, W·32/b] float16 and qzeros [out, W] int32, where W is
``calculate_zeros_width``: the number of groups rounded up to a multiple of
32/b (and doubled for group 64, quadrupled for group 32); the padding
columns are zero."""

from __future__ import annotations

from ...codec import descriptor as desc_mod
from ...codec.check import expected_plane_sizes
from ...codec.errors import GritError
from ...codec.grade import parse_grade
from ..base import Convention, Ctx, Parts, not_representable
from ._packed_int import SUFFIXES


def zeros_width(in_features: int, group: int, pack: int) -> int:
    """AutoAWQ's ``calculate_zeros_width`` (awq/modules/linear/gemv.py)."""
    mult = 1 if group >= 128 else (2 if group == 64 else 4 if group == 32 else 0)
    if not mult:
        return -1

    def up(c: int, d: int) -> int:
        return (c + d - 1) // d

    return up(up(in_features // group, pack), mult) * mult


class AwqGemv(Convention):
    name = "awq-gemv"
    precedence = 19  # before AWQ GEMM: the GEMV shapes are not GEMM's
    producers = "AutoAWQ (GEMV, `version: gemv`)"
    versions_tested = "autoawq 0.2.9"
    suffixes = SUFFIXES
    declared_as = ("quant_method=awq", "version=gemv")
    dtypes = ("I32", "F16")
    conventions = ("awq",)
    planes = ("data `qweight` [out, in/8], scale0 `scales` and aux `qzeros`, both padded "
              "to calculate_zeros_width")
    not_representable = ("§0.3(d)", "zero points packed densely in int32 words, and scales "
                         "and zero points padded past the last group")
    checks = ("bits", "group_size", "quant_method", "version")
    decode = "refused (not representable); sizes checked against AutoAWQ's GEMV widths"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        qw, sc, qz = parts.get(".qweight"), parts.get(".scales"), parts.get(".qzeros")
        if not (qw and sc and qz):
            return False
        w, s, z = (tuple(ctx.tensors[n].shape) for n in (qw, sc, qz))
        if len(w) != 2 or len(s) != 2 or len(z) != 2 or not (w[0] == s[0] == z[0]):
            return False
        pack = 32 // _bits(ctx)
        gemv = (ctx.declared or {}).get("version") == "gemv"
        return s[1] == z[1] * pack and (gemv or w[1] != s[1])

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        qw, sc, qz = parts[".qweight"], parts[".scales"], parts[".qzeros"]
        t = ctx.tensors
        bits = _bits(ctx)
        pack = 32 // bits
        out, words = t[qw].shape
        k = words * pack
        dg = (ctx.declared or {}).get("group_size")
        group = dg if isinstance(dg, int) and dg > 0 and k % dg == 0 else None
        grade = None
        detail: dict[str, object] = {"bits": bits, "group_size": group, "in": k, "out": out}
        if group is not None and group <= 65535:
            grade = parse_grade(f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits},"
                                "esr=affineminmax)")
            width = zeros_width(k, group, pack)
            try:
                sizes = expected_plane_sizes(desc_mod.from_grade(grade, group_axis=1), (out, k))
                detail.update(predicted_scale=sizes.scale0, present_scale=t[sc].nbytes,
                              predicted_aux=sizes.aux, present_aux=t[qz].nbytes,
                              data_ok=sizes.data == t[qw].nbytes,
                              padded_ok=width == t[qz].shape[1])
            except GritError:
                pass
        reason = (f"AWQ GEMV packs its {bits}-bit zero points densely ({pack} per int32 word) "
                  "and pads its scales and zero points past the last group "
                  "(calculate_zeros_width); GRIT v1 stores sub-byte zero points one per byte "
                  "(§3.4) and one scale per group, so the checkpoint is not byte-representable "
                  "(§0.3(d))")
        q = not_representable(ctx, mod, mod + ".weight", (out, k), "awq", "§0.3(d)", reason,
                              list(parts.values()), grade, group_axis=1, **detail)
        q.planes = [ctx.ref(qw), ctx.ref(sc), None, ctx.ref(qz)]


def _bits(ctx: Ctx) -> int:
    db = (ctx.declared or {}).get("bits")
    return db if isinstance(db, int) and db in (2, 4, 8) else 4
