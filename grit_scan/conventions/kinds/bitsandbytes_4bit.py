"""bitsandbytes 4-bit (NF4, FP4): packed codes in ``weight`` U8, per-block
``absmax`` (optionally itself quantised: ``nested_absmax``,
``nested_quant_map``), the codebook ``quant_map`` and the serialised
``quant_state``."""

from __future__ import annotations

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
    decode = "refused: a codebook format (§0.3(b))"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        return not _PARTS.isdisjoint(parts)

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        kind = "nf4" if ".weight.quant_state.bitsandbytes__nf4" in parts else (
            "fp4" if ".weight.quant_state.bitsandbytes__fp4" in parts else "4-bit")
        w = parts.get(".weight", mod)
        not_representable(
            ctx, mod, w, ctx.tensors[w].shape if w in ctx.tensors else (),
            f"bitsandbytes-{kind}", "§0.3(b)",
            f"bitsandbytes {kind} decodes through a lookup table stored with the tensor "
            "(quant_map): a codebook format, which GRIT v1 has no element class for (§0.3(b))",
            list(parts.values()))
