"""The placement word (§5) and the layout expression language (§5.3).

A placement is a 64-bit value: class nibble (bits 63..60) and payload.
Class 0x0 appears only in the all-zero word PLACEMENT_UNSPECIFIED, 0x1 is
a registered word, 0x8 the hash of a canonical layout expression, 0xF
opaque (RECONSTRUCTION §7).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from .errors import GritValueError
from .fnv import fnv1a64
from .tables import (
    PLACEMENT_CLASS_EXPRESSION,
    PLACEMENT_CLASS_OPAQUE,
    PLACEMENT_CLASS_REGISTERED,
    PLACEMENT_UNSPECIFIED,
    REGISTERED_PLACEMENTS,
)

ROW_MAJOR = REGISTERED_PLACEMENTS["ROW_MAJOR"]
COL_MAJOR = REGISTERED_PLACEMENTS["COL_MAJOR"]
SWIZZLE_128X4B = REGISTERED_PLACEMENTS["SWIZZLE_128X4B"]
TILE_16X16 = REGISTERED_PLACEMENTS["TILE_16X16"]
BLOCK_AOS = REGISTERED_PLACEMENTS["BLOCK_AOS"]
LINEAR_META = REGISTERED_PLACEMENTS["LINEAR_META"]
META_M16N8K32 = REGISTERED_PLACEMENTS["META_M16N8K32"]
PACK_K4_12B = REGISTERED_PLACEMENTS["PACK_K4_12B"]
UNSPECIFIED = PLACEMENT_UNSPECIFIED
OPAQUE = 0xFFFFFFFFFFFFFFFF  # §14: a legal, storable, non-relayoutable value

_NAME_BY_WORD = {w: n for n, w in REGISTERED_PLACEMENTS.items()}
_PAYLOAD_MASK = (1 << 60) - 1
MAX_EXPRESSION_CHARS = 65536
MAX_EXPRESSION_DEPTH = 32


def placement_class(word: int) -> int:
    return (word >> 60) & 0xF


def placement_problem(word: int) -> str | None:
    """Why §7.3 step 3 refuses ``word``, or None."""
    if not 0 <= word < 1 << 64:
        return f"{word:#x} is not a 64-bit placement word"
    if word == UNSPECIFIED:
        return None
    cls = placement_class(word)
    if cls == PLACEMENT_CLASS_REGISTERED:
        if word in _NAME_BY_WORD:
            return None
        return f"{word:#018x} is class 0x1 but not a registered placement"
    if cls in (PLACEMENT_CLASS_EXPRESSION, PLACEMENT_CLASS_OPAQUE):
        return None
    if cls == 0:
        return f"{word:#018x} has class 0x0 but is not the all-zero UNSPECIFIED word"
    return f"{word:#018x} has class {cls:#x}, which version 1 does not define"


def placement_name(word: int, layouts: Mapping[int, str] | None = None) -> str:
    """A human name: the registered name, UNSPECIFIED, OPAQUE, or the expression."""
    if word == UNSPECIFIED:
        return "UNSPECIFIED"
    if word in _NAME_BY_WORD:
        return _NAME_BY_WORD[word]
    cls = placement_class(word)
    if cls == PLACEMENT_CLASS_EXPRESSION:
        expr = (layouts or {}).get(word)
        return f"EXPR {expr}" if expr else f"EXPR {word:#018x} (expression not supplied)"
    if cls == PLACEMENT_CLASS_OPAQUE:
        return f"OPAQUE {word:#018x}"
    return f"UNKNOWN {word:#018x}"


def by_name(name: str) -> int:
    """A registered placement word by name (case-insensitive)."""
    key = name.strip().upper()
    if key == "UNSPECIFIED":
        return UNSPECIFIED
    if key in REGISTERED_PLACEMENTS:
        return REGISTERED_PLACEMENTS[key]
    raise GritValueError(f"unknown placement name {name!r}")


# --------------------------------------------------------------------------
# §5.3 layout expressions
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A node of a layout expression: constructor name plus arguments.

    Arguments are ints, tuples of ints, nested Layouts, or strings (the
    Opaque vendor and blob).  ``text`` is the canonical serialisation.
    """

    ctor: str
    args: tuple[object, ...] = ()

    @property
    def text(self) -> str:
        if not self.args and self.ctor in _NULLARY:
            return self.ctor
        return self.ctor + "(" + ",".join(_arg_text(a) for a in self.args) + ")"

    @property
    def word(self) -> int:
        return expression_word(self.text)

    def __str__(self) -> str:
        return self.text


def _arg_text(a: object) -> str:
    if isinstance(a, Layout):
        return a.text
    if isinstance(a, tuple):
        return "[" + ",".join(str(x) for x in a) + "]"
    return str(a)


# Constructor signatures: a tuple of argument kinds.
#   "P" a layout, "int" a non-negative integer, "list" a list of integers,
#   "vendor" an identifier, "hex" a hex blob.
_NULLARY = {
    "RowMajor": (),
    "ColMajor": (),
    # Project additions (RECONSTRUCTION §7 allows them; docs/layouts.md):
    # the registered words' meanings, usable inside Compose(...).
    "BlockAos": (),  # = BLOCK_AOS: planes interleaved per (super-)group
    "PackK4": (),  # = PACK_K4_12B: ggml get_scale_min_k4 packing of scale0 + aux
    "Swizzle128x4": (),  # = SWIZZLE_128X4B: 128x4 scale-factor tiles
}
SIGNATURES: dict[str, tuple[str, ...]] = {
    **_NULLARY,
    "Tile": ("P", "list"),
    "Interleave": ("P", "int"),
    "Swizzle": ("int", "int", "int"),
    "Perm": ("list",),
    "Pad": ("int",),
    "Compose": ("P", "P"),
    "Opaque": ("vendor", "hex"),
}
_CANON_CTOR = {k.lower(): k for k in SIGNATURES}
_TOKEN = re.compile(r"\s*(?:([A-Za-z0-9_.\-]+)|(.))", re.DOTALL)


class _Parser:
    def __init__(self, text: str) -> None:
        if len(text) > MAX_EXPRESSION_CHARS:
            raise GritValueError(f"layout expression longer than {MAX_EXPRESSION_CHARS} characters")
        self.toks: list[tuple[str, str]] = []
        for m in _TOKEN.finditer(text):
            word, punct = m.groups()
            if word is not None:
                self.toks.append(("int" if word.isdigit() else "id", word))
            elif punct is not None and not punct.isspace():
                self.toks.append(("p", punct))
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, kind: str, value: str | None = None) -> str:
        t = self.peek()
        if t is None or t[0] != kind or (value is not None and t[1] != value):
            want = value or kind
            got = "end of text" if t is None else repr(t[1])
            raise GritValueError(f"layout expression: expected {want}, got {got}")
        self.i += 1
        return t[1]

    def layout(self, depth: int = 0) -> Layout:
        if depth > MAX_EXPRESSION_DEPTH:
            raise GritValueError(f"layout expression nested deeper than {MAX_EXPRESSION_DEPTH}")
        raw = self.take("id")
        ctor = _CANON_CTOR.get(raw.lower())
        if ctor is None:
            raise GritValueError(f"layout expression: unknown constructor {raw!r}")
        sig = SIGNATURES[ctor]
        if not sig:
            t = self.peek()
            if t == ("p", "("):  # RowMajor() is accepted and canonicalised
                self.take("p", "(")
                self.take("p", ")")
            return Layout(ctor)
        self.take("p", "(")
        args: list[object] = []
        for n, kind in enumerate(sig):
            if n:
                self.take("p", ",")
            args.append(self.arg(kind, ctor, depth))
        self.take("p", ")")
        return _validate(Layout(ctor, tuple(args)))

    def arg(self, kind: str, ctor: str, depth: int) -> object:
        if kind == "P":
            return self.layout(depth + 1)
        if kind == "int":
            return int(self.take("int"))
        if kind == "list":
            self.take("p", "[")
            vals = [int(self.take("int"))]
            while self.peek() == ("p", ","):
                self.take("p", ",")
                vals.append(int(self.take("int")))
            self.take("p", "]")
            return tuple(vals)
        if kind == "vendor":
            return self.take("id").lower()
        if kind == "hex":
            t = self.peek()
            if t is None or t[0] not in ("id", "int"):
                raise GritValueError(f"layout expression: {ctor} needs a hex blob")
            self.i += 1
            blob = t[1].lower()
            if not re.fullmatch(r"[0-9a-f]*", blob) or len(blob) % 2:
                raise GritValueError(f"layout expression: {blob!r} is not an even-length hex blob")
            return blob
        raise AssertionError(kind)


def _validate(node: Layout) -> Layout:
    # The parser built ``args`` from SIGNATURES, so each constructor's
    # argument kinds are known here; the casts state them for the checker.
    c, a = node.ctor, node.args
    if c == "Tile" and (not a[1] or any(d < 1 for d in cast("tuple[int, ...]", a[1]))):
        raise GritValueError("layout expression: Tile dimensions must be >= 1")
    if c == "Interleave" and cast(int, a[1]) < 1:
        raise GritValueError("layout expression: Interleave needs n >= 1")
    if c == "Perm" and sorted(cast("tuple[int, ...]", a[0])) != list(
            range(len(cast("tuple[int, ...]", a[0])))):
        raise GritValueError("layout expression: Perm needs a permutation of 0..n-1")
    if c == "Pad" and cast(int, a[0]) < 1:
        raise GritValueError("layout expression: Pad needs align >= 1")
    return node


def parse_layout(text: str) -> Layout:
    """Parse and canonicalise a layout expression."""
    if not isinstance(text, str):
        raise GritValueError("a layout expression must be text")
    return _parse(text) if len(text) <= MEMO_CHARS else _parse_text(text)


def _parse_text(text: str) -> Layout:
    p = _Parser(text)
    node = p.layout()
    tail = p.peek()
    if tail is not None:
        raise GritValueError(f"layout expression: unexpected {tail[1]!r} after the end")
    return node


# A file's tensors share a handful of layout texts, asked for once per plane
# of every distinct (descriptor, shape): each parsed once (performance: a GGUF
# of 20,000 shapes parsed 80,000 times).  A Layout is immutable, and an
# expression that does not parse raises each time (lru_cache keeps no
# exception).  Only short texts are kept (ggml's longest is about 200
# characters), so a hostile file's long expressions cannot fill memory.
MEMO_CHARS = 1024
_parse = functools.lru_cache(maxsize=256)(_parse_text)


def canonical_layout(text: str) -> str:
    return parse_layout(text).text


def expression_word(canonical_text: str) -> int:
    """Class-0x8 word of a canonical expression (RECONSTRUCTION §7)."""
    return (PLACEMENT_CLASS_EXPRESSION << 60) | (
        fnv1a64(canonical_text.encode("utf-8")) & _PAYLOAD_MASK
    )


def layout_word(text: str) -> int:
    """Parse, canonicalise and hash in one step."""
    return expression_word(canonical_layout(text))
