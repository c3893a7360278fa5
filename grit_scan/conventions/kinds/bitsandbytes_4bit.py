"""bitsandbytes 4-bit (NF4, FP4): packed codes in ``weight`` U8, per-block
``absmax`` (optionally itself quantised: ``nested_absmax``,
``nested_quant_map``), the codebook ``quant_map`` and the serialised
``quant_state``."""

from __future__ import annotations

from math import prod
from typing import Any

from ...issues.grit_check import BitsandbytesSizes
from ..base import Convention, Ctx, Parts, not_representable

_PARTS = frozenset((".weight.quant_map", ".weight.absmax",
                    ".weight.quant_state.bitsandbytes__nf4",
                    ".weight.quant_state.bitsandbytes__fp4"))


class Bitsandbytes4bit(Convention):
    name = "bitsandbytes-4bit"
    precedence = 30
    producers = "bitsandbytes through transformers `BitsAndBytesConfig(load_in_4bit=True)`"
    versions_tested = "bitsandbytes 0.50.2, transformers 5.17.0"
    suffixes = (".weight.quant_state.bitsandbytes__nf4", ".weight.quant_state.bitsandbytes__fp4",
                ".weight.nested_quant_map", ".weight.nested_absmax", ".weight.quant_map",
                ".weight.absmax")
    declared_as = ("quant_method=bitsandbytes",)
    dtypes = ("U8", "F32")
    conventions = ("bitsandbytes-nf4", "bitsandbytes-fp4", "bitsandbytes-4-bit")
    planes = "data `weight`; the codebook `quant_map` has no plane"
    not_representable = ("§0.3(b)", "decodes through a lookup table stored with the tensor "
                         "(a codebook)")
    checks = ("quant_method",)
    decode = ("refused: a codebook format (§0.3(b)); the size equations (two codes a byte, "
              "one absmax per power-of-two block, 16-entry quant_map, double quant's nested "
              "absmax per 256) are checked first")

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        return not _PARTS.isdisjoint(parts)

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        kind = "nf4" if ".weight.quant_state.bitsandbytes__nf4" in parts else (
            "fp4" if ".weight.quant_state.bitsandbytes__fp4" in parts else "4-bit")
        w = parts.get(".weight", mod)
        sizes = _sizes(ctx, parts)
        if isinstance(sizes, str):
            ctx.art.add(BitsandbytesSizes(w, kind, sizes))
            return
        not_representable(
            ctx, mod, w, ctx.tensors[w].shape if w in ctx.tensors else (),
            f"bitsandbytes-{kind}", "§0.3(b)",
            f"bitsandbytes {kind} decodes through a lookup table stored with the tensor "
            "(quant_map): a codebook format, which GRIT v1 has no element class for (§0.3(b))",
            list(parts.values()), None, group_axis=-1, **sizes)


def _n(ctx: Ctx, name: str | None) -> int | None:
    return prod(ctx.tensors[name].shape) if name else None


def _sizes(ctx: Ctx, parts: Parts) -> dict[str, Any] | str:
    """The size equations of bitsandbytes' 4-bit serialisation
    (bitsandbytes.functional.quantize_4bit, QuantState.as_dict): two codes a
    byte in ``weight``; one ``absmax`` per block of a power-of-two size
    (64 by default); a 16-entry ``quant_map``; with double quant, U8
    ``absmax`` codes, one ``nested_absmax`` per 256 of them and a 256-entry
    ``nested_quant_map``.  The equations that hold, or why one fails."""
    g = parts.get
    codes = 2 * (_n(ctx, g(".weight")) or 0)
    blocks = _n(ctx, g(".weight.absmax"))
    qmap = _n(ctx, g(".weight.quant_map"))
    if not codes or not blocks:
        return {}  # not enough parts to hold to an equation
    if qmap is not None and qmap != 16:
        return f"quant_map holds {qmap} entries; a 4-bit codebook has 16"
    size, rest = divmod(codes, blocks)
    if rest or size < 16 or size & (size - 1):
        return (f"{codes:,} codes in {blocks:,} absmax blocks: the block size is not a power "
                "of two (quantize_4bit's blocksize)")
    out: dict[str, Any] = {"codes": codes, "blocksize": size, "blocks": blocks}
    nested, nmap = _n(ctx, g(".weight.nested_absmax")), _n(ctx, g(".weight.nested_quant_map"))
    if nested is not None:
        want = -(-blocks // 256)
        if nested != want or ctx.dtype(g(".weight.absmax")) != "U8" or nmap not in (None, 256):
            return (f"double quant: {blocks:,} absmax codes need {want} nested_absmax values "
                    f"(one per 256) and a 256-entry nested_quant_map; the file holds {nested} "
                    f"and {nmap}")
        out["nested_blocks"] = nested
    return out
