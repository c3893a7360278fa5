"""compressed-tensors int-quantized (W8A8, W4A8, W4AFP8): integer values one
per I8 byte, a float scale per tensor / channel / group, and (asymmetric) a
``weight_zero_point``."""

from __future__ import annotations

from math import prod

from ...codec.grade import parse_grade
from ...issues import shape
from ...issues.notes import UnknownLayout
from ...names import Declared
from ..base import Convention, Ctx, Parts, new_q, not_representable
from ..scales import SCALE_TOKENS, dt_field, scale_layout
from .ct_nvfp4 import CT_SUFFIXES


class CtInt(Convention):
    name = "compressed-tensors-int"
    precedence = 61
    producers = "llm-compressor / compressed-tensors (W8A8, W4A8, W4AFP8 int-quantized)"
    versions_tested = "llmcompressor 0.14.0.1, compressed-tensors 0.19.0"
    suffixes = CT_SUFFIXES
    declared_as = ("format=int-quantized", "quant_method=compressed-tensors")
    dtypes = ("I8", "F32", "F16", "BF16")
    conventions = ("compressed-tensors-int",)
    planes = "data `weight`, scale0 `weight_scale`, aux `weight_zero_point`"
    grade = "grit1(e=s8, k0=per tensor / channel / group, s0=scale dtype[, zp=s8])"
    checks = ("format", "group_size")
    decode = "equal to compressed-tensors' (q - zp) · scale in the scale's dtype"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        w = parts.get(".weight")
        return bool(w and ctx.dtype(w) == "I8" and parts.get(".weight_scale"))

    @classmethod
    def value_bits(cls, declared: Declared | None) -> int | None:
        # a declared b < 8 (W4A8, W4AFP8): b-bit values sign-extended in each s8 byte
        bits = (declared or {}).get("bits")
        return bits if isinstance(bits, int) and 1 < bits < 8 else None

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        _infer(ctx, mod, parts[".weight"], parts[".weight_scale"], parts)


def _infer(ctx: Ctx, mod: str, w: str, sc: str, parts: Parts) -> None:
    """compressed-tensors int-quantized (W8A8, W4A8, W4AFP8): integer values one
    per I8 byte, a float scale per tensor / channel / group, and (asymmetric)
    a weight_zero_point; decode ``(q - zp) * scale`` in the scale's dtype.

    Every width is ``e=s8``: a declared 4-bit scheme stores each value
    sign-extended in its byte, which is exactly that s8 code (the narrower
    ``e=s4,ct=pad8`` would make the descriptor depend on the config, which a
    single-file decode does not read).  Zero points: an I8 plane is ``zp=s8``; a sub-byte zero
    point stored sign-extended is not the zero-extended CT_PAD8 §3.4 requires."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    sdt = SCALE_TOKENS.get(st.dtype)
    lay = scale_layout(wt.shape[0], wt.shape[1], tuple(st.shape)) if (
        len(wt.shape) == 2 and sdt is not None and 0 not in wt.shape) else None
    if lay is None or sdt is None:
        ctx.art.add(UnknownLayout(mod, w, f"an I8 weight {shape(wt.shape)} with a {st.dtype} "
                                  f"scale {shape(st.shape)}", "an int-quantized layout"))
        return
    # Always s8: the descriptor must not depend on the config (decode of one file
    # reads none), and every b-bit value sign-extended into an int8 byte is that s8.
    bits = (ctx.declared or {}).get("bits")
    zp = parts.get(".weight_zero_point")
    names = [w, sc] + ([zp] if zp else [])
    if zp is not None and (ctx.tensors[zp].dtype != "I8"
                           or prod(ctx.tensors[zp].shape) != prod(st.shape)):
        not_representable(ctx, mod, w, tuple(wt.shape), "compressed-tensors-int", "§3.4",
             f"{bits or 8}-bit asymmetric int-quantized: weight_zero_point "
             f"{ctx.tensors[zp].dtype} {list(ctx.tensors[zp].shape)} holds sign-extended "
             "sub-byte zero points; §3.4 stores sub-byte zero points zero-extended (CT_PAD8)",
             names)
        return
    zpf, esr = (",zp=s8", "affineminmax") if zp else ("", "ratiomaxabs")
    g = parse_grade(f"grit1(e=s8,k0={lay.k0},s0={sdt}{zpf}{dt_field(sdt)},esr={esr})")
    notes: tuple[str, ...] = ()
    if isinstance(bits, int) and bits < 8:
        notes = (f"{bits}-bit values stored one per byte, sign-extended: each byte is "
                 "the s8 code of its value",)
    q = new_q(ctx, mod, w, tuple(wt.shape), g, "compressed-tensors-int",
              planes=[ctx.ref(w), ctx.ref(sc, lay.broadcast), None,
                      ctx.ref(zp, lay.broadcast) if zp else None], notes=notes)
    ctx.add(q, *names)
