"""AutoAWQ GEMV: qweight [out, in·b/32] int32 (nibbles in natural order),
scales [out, W·32/b] float16 and qzeros [out, W] int32, where W is
``calculate_zeros_width``: the number of groups rounded up to a multiple of
32/b (and doubled for group 64, quadrupled for group 32); the padding
columns are zero.  The size equations are these widths, padding included
(``WQLinear_GEMV.__init__`` allocates them so, awq/modules/linear/gemv.py):
the §7.3 equations of the grade give the unpadded scale plane, so they are
recorded beside the padded ones, not held to the file."""

from __future__ import annotations

from typing import Any

from ...codec import descriptor as desc_mod
from ...codec.check import expected_plane_sizes
from ...codec.errors import GritError
from ...codec.grade import parse_grade
from ...issues.grit_check import AwqGemvSizes
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
    planes = ("data `qweight` [out, in/8] (LSB-first nibbles); scale0 `scales` [out, W·8] "
              "and aux `qzeros` [out, W], W = calculate_zeros_width (groups rounded up to a "
              "multiple of 8, then of 2 for group 64, 4 for group 32): the size equations "
              "hold with that padding, whose columns are zero")
    not_representable = ("§0.3(d)", "zero points packed densely in int32 words, and scales "
                         "and zero points padded past the last group")
    checks = ("bits", "group_size", "quant_method", "version")
    decode = ("refused (not representable); the grade it would have, "
              "grit1(e=u4,k0=g,s0=binary16,zp=u4,dt=binary16), decodes the unpadded planes "
              "equal to AutoAWQ's (q - z) · scales in float16; sizes held to AutoAWQ's GEMV "
              "widths, padding included")

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
        detail: dict[str, Any] = {"bits": bits, "group_size": group, "in": k, "out": out}
        if group is not None and group <= 65535:
            # AutoAWQ dequantises (q - z) · scales in float16: dt is the scale's dtype
            grade = parse_grade(f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits},"
                                "esr=affineminmax,dt=binary16)")
            width = zeros_width(k, group, pack)
            try:
                sizes = expected_plane_sizes(desc_mod.from_grade(grade, group_axis=1), (out, k))
                detail.update(predicted_scale=sizes.scale0, present_scale=t[sc].nbytes,
                              predicted_aux=sizes.aux, present_aux=t[qz].nbytes,
                              data_ok=sizes.data == t[qw].nbytes,
                              padded_ok=width == t[qz].shape[1])
            except GritError:
                pass
            # the GEMV size equations, padding included: qweight out·in/2 bytes,
            # scales out·W·pack float16, qzeros out·W int32
            want = (out * k * bits // 8, out * width * pack * 2, out * width * 4)
            have = (t[qw].nbytes, t[sc].nbytes, t[qz].nbytes)
            if width >= 0 and want != have:  # -1: a group AutoAWQ does not pad
                ctx.art.add(AwqGemvSizes(mod + ".weight", mod, out, k, group, width, want,
                                         have))
                return
        reason = (f"AWQ GEMV packs its {bits}-bit zero points densely ({pack} per int32 word) "
                  "and pads its scales and zero points past the last group "
                  "(calculate_zeros_width); GRIT v1 stores sub-byte zero points one per byte "
                  "(§3.4) and one scale per group, so the checkpoint is not byte-representable "
                  "(§0.3(d))")
        not_representable(ctx, mod, mod + ".weight", (out, k), "awq", "§0.3(d)", reason,
                          list(parts.values()), grade, group_axis=1,
                          planes=[ctx.ref(qw), ctx.ref(sc), None, ctx.ref(qz)], **detail)


def _bits(ctx: Ctx) -> int:
    db = (ctx.declared or {}).get("bits")
    return db if isinstance(db, int) and db in (2, 4, 8) else 4
