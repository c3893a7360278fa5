"""bitsandbytes LLM.int8: ``weight`` I8 and ``SCB``, the per-row absmax."""

from __future__ import annotations

from ..base import Convention, Ctx, Parts, not_representable


class BitsandbytesInt8(Convention):
    name = "bitsandbytes-int8"
    precedence = 60
    producers = "bitsandbytes through transformers `BitsAndBytesConfig(load_in_8bit=True)`"
    versions_tested = "bitsandbytes 0.50.2, transformers 5.17.0"
    suffixes = (".SCB", ".weight_format")
    declared_as = ("quant_method=bitsandbytes",)
    dtypes = ("I8", "F32")
    conventions = ("bitsandbytes-int8",)
    planes = "data `weight`; `SCB` is an absmax, not a scale"
    not_representable = ("§8.1", "decodes (q·SCB)·(1/127): the 1/127 factor is in no plane")
    checks = ("quant_method",)
    decode = "refused: the 1/127 factor is in no plane (§8.1)"

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        w = parts.get(".weight")
        return bool(w and ctx.dtype(w) == "I8" and parts.get(".SCB"))

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        w = parts[".weight"]
        not_representable(
            ctx, mod, w, tuple(ctx.tensors[w].shape), "bitsandbytes-int8", "§8.1",
            "bitsandbytes LLM.int8 stores the per-row absmax (SCB), not a scale: it decodes "
            "(q·SCB)·(1/127) (int8_vectorwise_dequant). The 1/127 factor is in no plane, and "
            "§8.1 multiplies the scale levels together before the element, so even a second "
            "level holding 1/127 would round differently; GRIT v1 cannot express these bytes "
            "exactly", list(parts.values()))
