"""Every table the GRIT v1 text lost, in one place.

The normative spec (GRIT-v1-spec.txt) refers to tables that did not survive.
RECONSTRUCTION.md restores them; entries marked [V] are verified facts,
entries marked [A] are adopted readings.  Each table lives here exactly once,
so a corrected table is a one-line change.  docs/spec-notes.md lists them.

Nothing in this module computes anything: it is data.
"""

from __future__ import annotations

from enum import Enum, IntEnum

# --------------------------------------------------------------------------
# RECONSTRUCTION §3 — registered format tokens.  Words marked [V] come from
# Appendix A.1; the [A] words are computed from the §2.1 bit layout.
# --------------------------------------------------------------------------
FORMAT_TOKENS: dict[str, int] = {
    "e2m1": 0x2043,  # [V]
    "e4m3": 0x2887,  # [V] OCP E4M3 (fn): bias 7, no Inf, 0x7F/0xFF NaN
    "e5m2": 0x3467,  # [A] IEEE-like: has_inf, nan_enc=2
    "e2m3": 0x2085,  # [A] FP6
    "e3m2": 0x2065,  # [A] FP6
    "e8m0": 0x4807,  # [V] unsigned exponent-only, 0xFF NaN
    "binary16": 0x356F,  # [V]
    "bfloat16": 0x350F,  # [A]
    "binary32": 0x371F,  # [V]
    "u2": 0x43E1,  # [V]
    "u4": 0x43E3,  # [V]
    "u6": 0x43E5,  # [V]
    "u8": 0x43E7,  # [V]
    "s4": 0x03E3,  # [V]
    "s8": 0x03E7,  # [V]
}

# RECONSTRUCTION §3 — aliases [A], case-insensitive, mapped before
# canonicalising (§4.4 rule 4).
FORMAT_ALIASES: dict[str, str] = {
    "fp4": "e2m1", "fp4_e2m1": "e2m1", "float4_e2m1fn": "e2m1",
    "fp8_e4m3": "e4m3", "e4m3fn": "e4m3", "float8_e4m3fn": "e4m3",
    "fp8_e5m2": "e5m2", "float8_e5m2": "e5m2",
    "fp6_e2m3": "e2m3",
    "fp6_e3m2": "e3m2",
    "ue8m0": "e8m0", "e8m0fnu": "e8m0", "float8_e8m0fnu": "e8m0",
    "fp16": "binary16", "f16": "binary16", "half": "binary16", "float16": "binary16",
    "bf16": "bfloat16",
    "fp32": "binary32", "f32": "binary32", "float": "binary32",
    "float32": "binary32", "single": "binary32",
    "uint2": "u2", "uint4": "u4", "uint6": "u6", "uint8": "u8",
    "int4": "s4", "i4": "s4",
    "int8": "s8", "i8": "s8",
}

_FNUZ = (
    "is not {near}: it uses exponent bias {bias} and a single NaN code in place of "
    "negative zero; GRIT v1 cannot express FNUZ formats (§0.3a)"
)

# RECONSTRUCTION §3 — rejected aliases [A]: each maps to a *different* format
# than the token it resembles, so §4.4 rule 4 makes it an error.  The value is
# the reason, naming the real format.
REJECTED_ALIASES: dict[str, str] = {
    "e4m3fnuz": "e4m3fnuz " + _FNUZ.format(near="e4m3", bias=8),
    "float8_e4m3fnuz": "float8_e4m3fnuz " + _FNUZ.format(near="e4m3", bias=8),
    "e5m2fnuz": "e5m2fnuz " + _FNUZ.format(near="e5m2", bias=16),
    "float8_e5m2fnuz": "float8_e5m2fnuz " + _FNUZ.format(near="e5m2", bias=16),
    "e4m3b11fnuz": "e4m3b11fnuz "
    + _FNUZ.format(near="e4m3", bias=11),
    "nf4": "nf4 is a 16-entry codebook (NormalFloat4), not an arithmetic format; "
    "GRIT v1 has no codebook element class (§0.3b)",
    "fp4_nf4": "fp4_nf4 is the NF4 codebook, not e2m1; GRIT v1 has no codebook "
    "element class (§0.3b)",
    "fp8": "fp8 names two formats (e4m3 and e5m2); spell the one you mean",
}

# --------------------------------------------------------------------------
# §1.4 / §4.2 — rounding and saturation modes.  str enums: a member equals its
# grade-string spelling ("rne" == Rounding.RNE), so grade values, CLI options
# and JSON keep their strings and plain strings stay accepted everywhere.
# --------------------------------------------------------------------------
class Rounding(str, Enum):
    RNE = "rne"  # to nearest, ties to the even code (§1.4)
    RTZ = "rtz"  # toward zero
    RNA = "rna"  # to nearest, ties away from zero
    RUP = "rup"  # toward +Inf
    RDN = "rdn"  # toward -Inf

    def __str__(self) -> str:  # the grade spelling, on every Python version
        return self.value


class Saturation(str, Enum):
    SATFINITE = "satfinite"  # overflow clamps to the largest finite value
    IEEE = "ieee"  # overflow gives Inf, or NaN where the format has no Inf

    def __str__(self) -> str:
        return self.value


# --------------------------------------------------------------------------
# RECONSTRUCTION §4 — the 23 grade keys in canonical order [A; order
# constrained by the six [V] grade strings].  Each entry: key -> (kind,
# default).  default None = absent/required (see REQUIRED_KEYS).
# kinds: "fmt" a format token, "int" decimal, or a tuple of allowed words;
# "sp", "ao" are structured values parsed by grade.py.
# --------------------------------------------------------------------------
GRADE_KEYS: tuple[tuple[str, object, str | None], ...] = (
    ("e", "fmt", None),
    ("k0", "int", None),
    ("s0", "fmt", None),
    ("k1", "int", None),
    ("s1", "fmt", None),
    ("zp", "fmt", None),
    ("zpc", ("plain", "minus1"), "plain"),
    ("zps", ("shared", "l1"), "shared"),
    ("sp", "sp", None),
    ("ct", ("dense", "pad8"), "dense"),
    ("po", ("lsb", "msb"), "lsb"),
    ("er", tuple(r.value for r in Rounding), "rne"),
    ("es", tuple(s.value for s in Saturation), "satfinite"),
    ("et", ("binary32",), "binary32"),
    ("esr", ("exp2floormaxabs", "exp2ceilmaxabs", "exp2rnemaxabs", "affineminmax",
             "ratiomaxabs"), None),
    ("dr", ("rne", "rtz"), "rne"),
    ("ds", tuple(s.value for s in Saturation), "satfinite"),
    ("dt", ("binary32", "binary16", "bfloat16"), "binary32"),
    ("ao", "ao", "unspec"),
    ("at", ("binary32", "binary16", "unspec"), "unspec"),
    ("ar", ("rne", "rtz", "unspec"), "unspec"),
    ("asub", ("preserve", "ftz", "any"), "any"),
    ("afma", ("unfused", "fused", "unspec"), "unspec"),
)
REQUIRED_KEYS = ("e", "k0", "s0", "esr")
# Keys 1-11 representation, 12-15 encode projection, 16-18 decode projection,
# 19-23 accumulation contract (§4.2).
REPRESENTATION_KEYS = ("e", "k0", "s0", "k1", "s1", "zp", "zpc", "zps", "sp", "ct", "po")
ENCODE_KEYS = ("er", "es", "et", "esr")
DECODE_KEYS = ("dr", "ds", "dt")
ACCUMULATION_KEYS = ("ao", "at", "ar", "asub", "afma")
# §4.5: the keys that influence decode().
DECODE_PROJECTION_KEYS = (
    "e", "k0", "s0", "k1", "s1", "zp", "zpc", "zps", "sp", "ct", "po", "dr", "ds", "dt",
)
# Keys whose value is a format token and so go through the alias table.
FORMAT_VALUED_KEYS = ("e", "s0", "s1", "zp", "et", "dt", "at")
SP_META_TOKENS = {"u2": 1, "u4": 2}  # GRIT_SPMETA_U2 / _U4 (A.1)
SP_META_BITS = {1: 2, 2: 4}
SP_ORDER_TOKENS = {"unordered": 0, "asclsb": 1}  # GRIT_SPORDER_* (A.1)

# RECONSTRUCTION §1 — the six registered grades [V].
REGISTERED_GRADES: dict[str, str] = {
    "GRADE_MXFP4": "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)",
    "GRADE_MXFP4_RNE": "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2rnemaxabs)",
    "GRADE_NVF4": "grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)",
    "GRADE_NVF4_RTZ": "grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,er=rtz,esr=ratiomaxabs)",
    "GRADE_Q4KS": "grit1(e=u4,k0=32,s0=u6,k1=8,s1=binary16,zp=u6,zps=l1,esr=affineminmax)",
    "GRADE_I8S24": "grit1(e=s8,k0=32,s0=binary16,sp=2:4:u2:asclsb,esr=ratiomaxabs)",
}
# Appendix A.1 ids, used by the tests and as a load-time self-check.
REGISTERED_GRADE_IDS: dict[str, int] = {
    "GRADE_MXFP4": 0x2370EE9EE454A183,
    "GRADE_Q4KS": 0x1C600DE02594FB55,
    "GRADE_NVF4": 0x00FF6F4C2870831E,
    "GRADE_I8S24": 0xBBBB283A2539EBE8,
    "GRADE_MXFP4_RNE": 0x254285E10D6068C8,
    "GRADE_NVF4_RTZ": 0x006C3850A3F42DEA,
}

# --------------------------------------------------------------------------
# Appendix A.1 — descriptor constants [V].
# --------------------------------------------------------------------------
GRIT_MAGIC = 0x31545247
GRIT_HDR_BYTES = 64
GRIT_VERSION = 1
F_HAS_ZP = 0x01
F_ZP_MINUS1 = 0x02
F_SPARSE = 0x04
F_MSB_FIRST = 0x08
F_INTERLEAVED = 0x10
F_ZP_L1SCALED = 0x20
F_RESERVED = 0xC0
FLAG_NAMES = {
    F_HAS_ZP: "HAS_ZP", F_ZP_MINUS1: "ZP_MINUS1", F_SPARSE: "SPARSE",
    F_MSB_FIRST: "MSB_FIRST", F_INTERLEAVED: "INTERLEAVED", F_ZP_L1SCALED: "ZP_L1SCALED",
}
CT_DENSE = 0
CT_PAD8 = 1
SPMETA_NONE = 0
SPMETA_U2 = 1
SPMETA_U4 = 2
SPORDER_UNORDERED = 0
SPORDER_ASC_LSB = 1

# --------------------------------------------------------------------------
# RECONSTRUCTION §6 — note layout [A].
# --------------------------------------------------------------------------
NOTE_ASSUMED = 0x00000001  # bit 0 (A.1)
NOTE_RESERVED_MASK = 0x0000FFFE  # bits 1..15: written 0, ignored on read
NOTE_PRODUCER_SHIFT = 16  # bits 16..31: FNV1a64(producer) & 0xFFFF; 0 = unknown
NOTE_PRODUCER_MASK = 0xFFFF

# --------------------------------------------------------------------------
# RECONSTRUCTION §7 — placements [A except the A.1 words].
# --------------------------------------------------------------------------
PLACEMENT_UNSPECIFIED = 0x0000000000000000
PLACEMENT_CLASS_REGISTERED = 0x1
PLACEMENT_CLASS_EXPRESSION = 0x8
PLACEMENT_CLASS_OPAQUE = 0xF
REGISTERED_PLACEMENTS: dict[str, int] = {
    "ROW_MAJOR": 0x1000000000000001,
    "COL_MAJOR": 0x1000000000000002,
    "SWIZZLE_128X4B": 0x1000000000000003,
    "TILE_16X16": 0x1000000000000004,
    "BLOCK_AOS": 0x1000000000000005,
    "LINEAR_META": 0x1000000000000011,
    "META_M16N8K32": 0x1000000000000012,
    "PACK_K4_12B": 0x1000000000000020,
}

# --------------------------------------------------------------------------
# RECONSTRUCTION §9 — supersedes edges [A, projections V].
# --------------------------------------------------------------------------
SUPERSEDES_EDGES: tuple[tuple[str, str, str, str], ...] = (
    ("GRADE_MXFP4_RNE", "GRADE_MXFP4", "decode",
     "shared-exponent rounding differs only on encode; decode projections identical"),
    ("GRADE_NVF4_RTZ", "GRADE_NVF4", "decode",
     "block-scale rounding differs only on encode; decode projections identical"),
)

# --------------------------------------------------------------------------
# RECONSTRUCTION §8 — check levels [A].
# --------------------------------------------------------------------------
class CheckLevel(IntEnum):
    """How much of §7.3 grit_check runs; an int, as --level takes it."""

    NONE = 0  # witness erased: nothing checked
    STRUCTURE = 1  # steps 1-4: header, grade, placements, sizes (no plane bytes)
    CONTENT = 2  # steps 1-5: also the §6.5 digest over the plane bytes
    PROBES = 3  # level 2 plus the advisory §7.6 probes
