"""ggml tensor types as GRIT descriptors (research: gguf-ggml-internals.md).

A mapping is claimed only where GRIT decode through it equals
``gguf.quants.dequantize`` bit for bit (tests/test_ggml_crosscheck.py); the
one designed divergence (MXFP4 scale 0xFF: NaN in GRIT, 2^127 in ggml) is
asserted by the tests and named in docs/spec-notes.md.  Every other type is
reported as not representable in GRIT v1, with its reason.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..codec import descriptor as desc_mod
from ..codec.grade import GRADE_MXFP4, GRADE_Q4KS, Grade, parse_grade
from ..codec.placement import BLOCK_AOS, UNSPECIFIED, expression_word, layout_word
from . import gguf_tables
from .gguf_constants import constants


def _types() -> dict[int, tuple[str, tuple[int, int] | None]]:
    """gguf's type table: each ``GGMLQuantizationType`` code, its name and
    its (elements, bytes) per block (``GGML_QUANT_SIZES``; None where gguf
    has none), from the shipped copy when it was made from the installed
    gguf (gguf_tables.py: no ``import gguf``), else from gguf itself."""
    shipped = gguf_tables.ggml_types()
    if shipped is not None:
        return shipped
    c = constants()
    return {t.value: (t.name, c.GGML_QUANT_SIZES.get(t)) for t in c.GGMLQuantizationType}


TYPES: Mapping[int, tuple[str, tuple[int, int] | None]] = MappingProxyType(_types())
CODE: Mapping[str, int] = MappingProxyType({name: code for code, (name, _) in TYPES.items()})

# Layout expressions for ggml block structs (docs/layouts.md, §5.3): ggml
# stores each block as its scales then its quants (BlockAos), MXFP4 and Q4_K
# split a 32/64-element run into low and high nibbles (the Perm), and Q4_K
# packs its 6-bit scales and mins into 12 bytes (PackK4).  Their words are
# ordinary class-0x8 hashes of the canonical text, so the codec resolves them
# only through the layouts mapping a QTensor carries (WELL_KNOWN_LAYOUTS).
GGML_MXFP4_DATA = "Compose(Perm([" + ",".join(
    str(j + 16 * h) for j in range(16) for h in range(2)) + "]),BlockAos)"
GGML_Q4K_DATA = "Compose(Perm([" + ",".join(
    str(32 * h + b) for b in range(32) for h in range(2)) + "]),BlockAos)"
GGML_Q4K_SCALE = "Compose(PackK4,BlockAos)"
WELL_KNOWN_LAYOUTS: dict[int, str] = {
    expression_word(t): t for t in (GGML_MXFP4_DATA, GGML_Q4K_DATA, GGML_Q4K_SCALE, "BlockAos")
}

# Q8_0: d (binary16) then 32 int8 codes; y = q * d.  Unregistered, decode-exact.
GRADE_GGML_Q8_0: Grade = parse_grade("grit1(e=s8,k0=32,s0=binary16,esr=ratiomaxabs)")

UNQUANTISED = {0: "F32", 1: "F16", 30: "BF16", 24: "I8", 25: "I16", 26: "I32", 27: "I64",
               28: "F64"}


@dataclass(frozen=True)
class GgmlMapping:
    """A ggml block type's GRIT grade, placements and layouts (its descriptor per rank)."""

    type_code: int
    name: str
    grade: Grade
    placement_data: int
    placement_scale: int
    placement_meta: int
    layouts: dict[int, str]

    def descriptor(self, group_axis: int, producer: str | None = None) -> desc_mod.Descriptor:
        return desc_mod.from_grade(
            self.grade, group_axis=group_axis, placement_data=self.placement_data,
            placement_scale=self.placement_scale, placement_meta=self.placement_meta,
            note=desc_mod.make_note(producer=producer) if producer else 0)


def _expr(text: str) -> tuple[int, dict[int, str]]:
    w = layout_word(text)
    return w, {w: text}


def _mappings() -> dict[int, GgmlMapping]:
    mx_data, mx_l = _expr(GGML_MXFP4_DATA)
    q4_data, q4_l = _expr(GGML_Q4K_DATA)
    q4_scale, q4_sl = _expr(GGML_Q4K_SCALE)
    return {
        CODE["MXFP4"]: GgmlMapping(CODE["MXFP4"], "MXFP4", GRADE_MXFP4, mx_data, BLOCK_AOS,
                                   UNSPECIFIED, mx_l),
        CODE["Q8_0"]: GgmlMapping(CODE["Q8_0"], "Q8_0", GRADE_GGML_Q8_0, BLOCK_AOS, BLOCK_AOS,
                                  UNSPECIFIED, {}),
        CODE["Q4_K"]: GgmlMapping(CODE["Q4_K"], "Q4_K", GRADE_Q4KS, q4_data, q4_scale, q4_scale,
                                  {**q4_l, **q4_sl}),
    }


MAPPINGS: dict[int, GgmlMapping] = _mappings()

# Why every other quantised type is outside GRIT v1 (§0.3 and §8).
NOT_REPRESENTABLE: dict[str, str] = {
    "Q4_0": "offset-binary codes (q - 8) with the (j, j+16) nibble split: no v1 element "
            "format decodes a biased integer without a zero-point plane",
    "Q4_1": "min-plus-scale (y = q*d + m): the min is added, not a zero point times a scale",
    "Q5_0": "offset-binary 5-bit codes split across qs and a qh bit plane",
    "Q5_1": "5-bit codes in split bit planes with min-plus-scale",
    "Q8_1": "intermediate type with a stored sum; no dequantisation defined",
    "Q2_K": "scale and min packed as 4-bit nibbles in 16x16 sub-blocks with super d/dmin at "
            "the end of the block",
    "Q3_K": "3-bit codes split across qs and an hmask bit plane, 6-bit scales offset by 32",
    "Q5_K": "5-bit codes split across qs and a qh bit plane (split bit planes)",
    "Q6_K": "6-bit codes split across ql and qh bit planes, offset by 32 (offset-binary)",
    "Q8_K": "intermediate type with block sums; no dequantisation defined",
    "IQ2_XXS": "codebook (grid) format (§0.3b)", "IQ2_XS": "codebook (grid) format (§0.3b)",
    "IQ3_XXS": "codebook (grid) format (§0.3b)", "IQ1_S": "codebook (grid) format (§0.3b)",
    "IQ4_NL": "non-linear codebook (kvalues_iq4nl) (§0.3b)", "IQ3_S": "codebook format (§0.3b)",
    "IQ2_S": "codebook format (§0.3b)", "IQ4_XS": "non-linear codebook (§0.3b)",
    "IQ1_M": "codebook format (§0.3b)",
    "TQ1_0": "ternary base-3 packing (§0.3b: not an arithmetic element format)",
    "TQ2_0": "ternary 2-bit codes offset by one (q - 1)",
    "NVFP4": "ggml's NVFP4 reads its UE4M3 block scale times 0.5 and decodes 0x7F as zero, "
             "where GRIT's E4M3 decodes 0x7F as NaN (§8.2)",
    "Q1_0": "sign-bit format (y = ±d): no v1 element format",
    "Q2_0": "2-bit codes offset by one (q - 1) without a zero-point plane",
}


@functools.lru_cache(maxsize=1024)
def type_name(code: int) -> str:
    # memoised (as block_size): an enum lookup per tensor was a visible part of
    # reading a 100k-tensor GGUF (docs/performance.md)
    got = TYPES.get(code)
    if got is not None:
        return got[0]
    return {41: "Q1_0", 42: "Q2_0"}.get(code, f"type {code}")


@functools.lru_cache(maxsize=1024)
def block_size(code: int) -> tuple[int, int] | None:
    """(elements, bytes) per block, or None for an unknown/removed type."""
    got = TYPES.get(code)
    if got is not None and got[1] is not None:
        return got[1]
    return {41: (128, 18), 42: (64, 18)}.get(code)


@functools.lru_cache(maxsize=1)
def block_table() -> bytes:
    """(elements, bytes) per block of every type code below 64, as two
    little-endian u32 each, (0, 0) for an unknown or removed type: what the
    tensor-info walk (gguf_reader) checks each entry's type against."""
    return b"".join(struct.pack("<II", *(block_size(c) or (0, 0))) for c in range(64))
