"""The Grade (§4): parse, canonicalise, project, order.

A grade string is the complete numeric contract.  ``parse_grade`` follows
§4.4 exactly: strip whitespace, lowercase, accept any field order, map
aliases, drop defaults, and reject (rule 6) with a message naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from types import MappingProxyType

from . import fmt
from .errors import GritValueError
from .fnv import fnv1a64
from .tables import (
    ACCUMULATION_KEYS,
    CT_PAD8,
    DECODE_PROJECTION_KEYS,
    F_HAS_ZP,
    F_MSB_FIRST,
    F_SPARSE,
    F_ZP_L1SCALED,
    F_ZP_MINUS1,
    FORMAT_VALUED_KEYS,
    GRADE_KEYS,
    REGISTERED_GRADES,
    REQUIRED_KEYS,
    SP_META_BITS,
    SP_META_TOKENS,
    SP_ORDER_TOKENS,
)

KEY_ORDER: tuple[str, ...] = tuple(k for k, _, _ in GRADE_KEYS)
_KIND: dict[str, object] = {k: kind for k, kind, _ in GRADE_KEYS}
DEFAULTS: dict[str, str | None] = {k: d for k, _, d in GRADE_KEYS}
_WS = re.compile(r"\s+", re.UNICODE)
_INT = re.compile(r"[0-9]+")
_PAIRWISE = re.compile(r"pairwise\(([0-9]+)\)")
_INT_RANGES = {"k0": (1, 65535), "k1": (0, 65535)}


@dataclass(frozen=True)
class Frame:
    """The frame fields a grade implies (§7.3 step 2's list, in that order)."""

    n_levels: int
    flags: int
    elem: int
    scale0: int
    scale1: int
    zp_fmt: int
    k0: int
    k1: int
    sp_n: int
    sp_m: int
    sp_meta_fmt: int
    sp_order: int
    container: int


FRAME_FIELDS: tuple[str, ...] = tuple(Frame.__dataclass_fields__)


@dataclass(frozen=True)
class Grade:
    """A parsed, canonical grade.  ``values`` holds every key's canonical
    value in §4.2 order, with None for absent keys and defaults filled in."""

    values: tuple[str | None, ...]

    def __getitem__(self, key: str) -> str | None:
        return self.values[KEY_ORDER.index(key)]

    def get_int(self, key: str) -> int:
        v = self[key]
        return int(v) if v is not None else 0

    @cached_property
    def canonical(self) -> str:
        parts = []
        for key, val in zip(KEY_ORDER, self.values, strict=False):
            if val is None:
                continue
            if key == "esr" or val != DEFAULTS[key]:
                parts.append(f"{key}={val}")
        return "grit1(" + ",".join(parts) + ")"

    @cached_property
    def grade_id(self) -> int:
        """§6.2: FNV-1a-64 of the canonical string."""
        return fnv1a64(self.canonical.encode("utf-8"))

    @property
    def n_levels(self) -> int:
        return 2 if self["k1"] is not None else 1

    @property
    def has_zp(self) -> bool:
        return self["zp"] is not None

    @property
    def sparse(self) -> bool:
        return self["sp"] is not None

    @cached_property
    def decode_projection(self) -> str:
        """§4.5: gritdec1(...) with every applicable decode key spelled out."""
        parts = []
        for key in DECODE_PROJECTION_KEYS:
            if key in ("k1", "s1") and self.n_levels != 2:
                continue
            if key in ("zp", "zpc", "zps") and not self.has_zp:
                continue
            if key == "sp" and not self.sparse:
                continue
            parts.append(f"{key}={self[key]}")
        return "gritdec1(" + ",".join(parts) + ")"

    @cached_property
    def frame(self) -> Frame:
        """The frame fields this grade implies (§7.3 step 2)."""
        flags = 0
        if self.has_zp:
            flags |= F_HAS_ZP
        if self["zpc"] == "minus1":
            flags |= F_ZP_MINUS1
        if self.sparse:
            flags |= F_SPARSE
        if self["po"] == "msb":
            flags |= F_MSB_FIRST
        if self["zps"] == "l1":
            flags |= F_ZP_L1SCALED
        sp = sparsity(self)
        return Frame(
            n_levels=self.n_levels,
            flags=flags,
            elem=fmt.resolve_token(self["e"] or ""),
            scale0=fmt.resolve_token(self["s0"] or ""),
            scale1=fmt.resolve_token(self["s1"]) if self["s1"] else fmt.ABSENT,
            zp_fmt=fmt.resolve_token(self["zp"]) if self["zp"] else fmt.ABSENT,
            k0=self.get_int("k0"),
            k1=self.get_int("k1"),
            sp_n=sp[0] if sp else 0,
            sp_m=sp[1] if sp else 0,
            sp_meta_fmt=sp[2] if sp else 0,
            sp_order=sp[3] if sp else 0,
            container=CT_PAD8 if self["ct"] == "pad8" else 0,
        )

    @property
    def name(self) -> str | None:
        """The registered name (GRADE_MXFP4, ...) or None."""
        return _NAME_BY_CANONICAL.get(self.canonical)

    def __str__(self) -> str:
        return self.canonical


def sparsity(g: Grade) -> tuple[int, int, int, int] | None:
    """(n, m, meta_fmt, order) of a sparse grade."""
    v = g["sp"]
    if v is None:
        return None
    n, m, meta, order = v.split(":")
    return int(n), int(m), SP_META_TOKENS[meta], SP_ORDER_TOKENS[order]


def _split_top(body: str) -> list[str]:
    """Split on commas outside parentheses."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise GritValueError("unbalanced ')' in grade string")
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise GritValueError("unbalanced '(' in grade string")
    out.append("".join(cur))
    return out


def _canon_value(key: str, raw: str) -> str:
    kind = _KIND[key]
    if raw == "":
        raise GritValueError(f"key {key!r} has an empty value")
    if isinstance(kind, tuple) and raw in kind:
        return raw
    if key in FORMAT_VALUED_KEYS:
        try:
            word = fmt.resolve_token(raw)
        except GritValueError as exc:
            raise GritValueError(f"key {key!r}: {exc}") from None
        tok = fmt.name(word)
        if isinstance(kind, tuple) and tok not in kind:
            raise GritValueError(
                f"key {key!r} must be one of {', '.join(kind)}; got {raw!r}"
            )
        return tok
    if kind == "int":
        if not _INT.fullmatch(raw):
            raise GritValueError(f"key {key!r} needs a decimal integer; got {raw!r}")
        lo, hi = _INT_RANGES[key]
        n = int(raw)
        if not lo <= n <= hi:
            raise GritValueError(f"key {key!r} must be in {lo}..{hi}; got {n}")
        return str(n)
    if kind == "sp":
        return _canon_sp(raw)
    if kind == "ao":
        if raw in ("seq", "tree", "unspec"):
            return raw
        m = _PAIRWISE.fullmatch(raw)
        if m and int(m.group(1)) >= 1:
            return f"pairwise({int(m.group(1))})"
        raise GritValueError(
            f"key 'ao' must be seq, pairwise(K) with K >= 1, tree or unspec; got {raw!r}"
        )
    assert isinstance(kind, tuple)
    if raw not in kind:
        raise GritValueError(f"key {key!r} must be one of {', '.join(kind)}; got {raw!r}")
    return raw


def _canon_sp(raw: str) -> str:
    parts = raw.split(":")
    if len(parts) != 4:
        raise GritValueError(
            f"key 'sp' is N:M:meta:order (for example 2:4:u2:asclsb); got {raw!r}"
        )
    n_s, m_s, meta, order = parts
    if not (_INT.fullmatch(n_s) and _INT.fullmatch(m_s)):
        raise GritValueError(f"key 'sp': N and M must be decimal integers; got {raw!r}")
    n, m = int(n_s), int(m_s)
    if meta not in SP_META_TOKENS:
        raise GritValueError(f"key 'sp': metadata format must be u2 or u4; got {meta!r}")
    if order not in SP_ORDER_TOKENS:
        raise GritValueError(f"key 'sp': order must be unordered or asclsb; got {order!r}")
    bits = SP_META_BITS[SP_META_TOKENS[meta]]
    if not 1 <= n <= m <= 255:
        raise GritValueError(f"key 'sp': need 1 <= N <= M <= 255 (N survivors of M); got {n}:{m}")
    if m > 1 << bits:
        raise GritValueError(
            f"key 'sp': an index below M={m} does not fit {meta} metadata ({bits} bits)"
        )
    return f"{n}:{m}:{meta}:{order}"


def parse_grade(text: str) -> Grade:
    """Parse and canonicalise a grade string (§4.4)."""
    if not isinstance(text, str):
        raise GritValueError("a grade string must be text")
    return _parse_grade(text)


@lru_cache(maxsize=1024)
def _parse_grade(text: str) -> Grade:
    """parse_grade, memoised: a checkpoint's inferred tensors build the same
    few grade strings hundreds of thousands of times (docs/performance.md), and the
    result is immutable.  A bad string raises every time (lru_cache keeps no
    exceptions)."""
    s = _WS.sub("", text).lower()  # rules 1 and 2
    if not s.startswith("grit1(") or not s.endswith(")"):
        raise GritValueError("a grade string has the form grit1(key=value,...)")
    body = s[len("grit1(") : -1]
    found: dict[str, str] = {}
    if body:
        for field in _split_top(body):
            if field == "":
                raise GritValueError("empty field in grade string (stray comma)")
            key, sep, raw = field.partition("=")
            if not sep:
                raise GritValueError(f"field {field!r} is not key=value")
            if key not in _KIND:
                raise GritValueError(f"unknown key {key!r} (§4.4 rule 6)")
            if key in found:
                raise GritValueError(f"duplicate key {key!r} (§4.4 rule 6)")
            found[key] = _canon_value(key, raw)
    missing = [k for k in REQUIRED_KEYS if k not in found]
    if missing:
        raise GritValueError(
            "missing required key" + ("s " if len(missing) > 1 else " ") + ", ".join(missing)
            + " (§4.4 rule 6)"
        )
    if "k1" in found and "s1" not in found:
        raise GritValueError("key 'k1' without 's1' (§4.4 rule 6)")
    if "s1" in found and "k1" not in found:
        raise GritValueError("key 's1' without 'k1' (§4.4 rule 6)")
    for key in ("zpc", "zps"):
        if key in found and "zp" not in found:
            raise GritValueError(f"key {key!r} without 'zp' (§4.4 rule 6)")
    if found.get("zps") == "l1" and "k1" not in found:
        raise GritValueError("key 'zps=l1' without a level-1 scale (k1, s1) (§4.4 rule 6)")
    if "sp" in found and "zp" in found:
        raise GritValueError(
            "keys 'sp' and 'zp' cannot both be set: there is one aux plane (§3.3)"
        )
    values = tuple(found.get(k, DEFAULTS[k]) for k in KEY_ORDER)
    return Grade(values)


def canonicalize(text: str) -> str:
    return parse_grade(text).canonical


# --------------------------------------------------------------------------
# Registered grades, by name
# --------------------------------------------------------------------------


def _build_registered() -> dict[str, Grade]:
    return {name: parse_grade(s) for name, s in REGISTERED_GRADES.items()}


REGISTERED: Mapping[str, Grade] = MappingProxyType(_build_registered())
_NAME_BY_CANONICAL = {g.canonical: n for n, g in REGISTERED.items()}
GRADE_MXFP4 = REGISTERED["GRADE_MXFP4"]
GRADE_MXFP4_RNE = REGISTERED["GRADE_MXFP4_RNE"]
GRADE_NVF4 = REGISTERED["GRADE_NVF4"]
GRADE_NVF4_RTZ = REGISTERED["GRADE_NVF4_RTZ"]
GRADE_Q4KS = REGISTERED["GRADE_Q4KS"]
GRADE_I8S24 = REGISTERED["GRADE_I8S24"]


def by_name(name: str) -> Grade | None:
    """A registered grade by name, case-insensitively, with or without GRADE_."""
    key = name.strip().upper()
    if not key.startswith("GRADE_"):
        key = "GRADE_" + key
    return REGISTERED.get(key)


# Common names people use for grades, each with the grade it means.  An
# alias is not a registered name: MXFP8 (OCP MX v1.0, E4M3 elements with an
# E8M0 scale per 32) has a grade string but no grade_id of the six.
ALIASES: Mapping[str, str] = MappingProxyType({
    "NVFP4": "GRADE_NVF4",
    "NVFP4_RTZ": "GRADE_NVF4_RTZ",
    "Q4_K": "GRADE_Q4KS",
    "MXFP8": "grit1(e=e4m3,k0=32,s0=e8m0,esr=exp2floormaxabs)",
})
# names that mean several grades: resolve() says which to choose among
AMBIGUOUS: Mapping[str, str] = MappingProxyType({
    "FP8": "FP8 names a family, not one grade: its scale is per tensor, per channel or "
           "per block, in binary32 or bfloat16; give a grade string such as "
           "grit1(e=e4m3,k0=128,s0=binary32,esr=ratiomaxabs), or mxfp8",
})


def names() -> list[str]:
    """Every name ``resolve`` takes, lower case: the registered names
    (without GRADE_) then the aliases."""
    return ([n.removeprefix("GRADE_").lower() for n in REGISTERED]
            + [a.lower() for a in ALIASES])


def resolve(text: str) -> Grade:
    """A registered name (case-insensitive, with or without GRADE_), an
    alias (``nvfp4``, ``mxfp8``, ...) or a grade string.  A word that is
    none of them raises GritValueError listing the names."""
    g = by_name(text)
    if g is not None:
        return g
    key = text.strip().upper().removeprefix("GRADE_")
    alias = ALIASES.get(key)
    if alias is not None:
        return by_name(alias) or parse_grade(alias)
    if key in AMBIGUOUS:
        raise GritValueError(f"{AMBIGUOUS[key]} (grade names: {', '.join(names())})")
    if "(" not in text and text.strip().replace("_", "").replace("-", "").isalnum():
        raise GritValueError(f"unknown grade name {text.strip()!r}: the names are "
                             f"{', '.join(names())}; or give a grade string "
                             "grit1(key=value,...)")
    return parse_grade(text)


def registry(extra: Iterable[Grade] = ()) -> dict[int, Grade]:
    """grade_id -> Grade for the registered grades plus ``extra``."""
    out = {g.grade_id: g for g in REGISTERED.values()}
    for g in extra:
        out[g.grade_id] = g
    return out


# --------------------------------------------------------------------------
# §4.3 refinement and join (RECONSTRUCTION §4 [A])
# --------------------------------------------------------------------------
_TOP = {"ao": "unspec", "at": "unspec", "ar": "unspec", "asub": "any", "afma": "unspec"}


def _ao_rank(v: str) -> int:
    if v == "seq":
        return 0
    if v.startswith("pairwise("):
        return 1
    return 2 if v == "tree" else 3


def _axis_leq(key: str, a: str, b: str) -> bool:
    if a == b or b == _TOP[key]:
        return True
    if key == "ao":
        ra, rb = _ao_rank(a), _ao_rank(b)
        return ra < rb and not (ra == 1 and rb == 1)
    return False


def _axis_join(key: str, a: str, b: str) -> str:
    if _axis_leq(key, a, b):
        return b
    if _axis_leq(key, b, a):
        return a
    if key == "ao" and _ao_rank(a) <= 2 and _ao_rank(b) <= 2:
        return "tree"  # two distinct pairwise(k): their least upper bound
    return _TOP[key]


def _same_non_accumulation(a: Grade, b: Grade) -> str | None:
    for key in KEY_ORDER:
        if key in ACCUMULATION_KEYS:
            continue
        if a[key] != b[key]:
            return key
    return None


def refines(a: Grade, b: Grade) -> bool:
    """a ⊑ b: every behaviour a permits, b permits (§4.3)."""
    if _same_non_accumulation(a, b) is not None:
        return False
    return all(_axis_leq(k, a[k] or "", b[k] or "") for k in ACCUMULATION_KEYS)


def join(a: Grade, b: Grade) -> Grade:
    """a ⊔ b, pointwise on the accumulation axes; an error when other keys differ."""
    diff = _same_non_accumulation(a, b)
    if diff is not None:
        raise GritValueError(
            f"join is undefined: the grades differ in {diff!r} "
            f"({a[diff]} vs {b[diff]}), not only in the accumulation contract"
        )
    vals = list(a.values)
    for key in ACCUMULATION_KEYS:
        i = KEY_ORDER.index(key)
        vals[i] = _axis_join(key, a[key] or "", b[key] or "")
    return Grade(tuple(vals))
