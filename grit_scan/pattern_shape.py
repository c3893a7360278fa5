"""The shape of a ``re:`` config pattern, as far as backtracking goes.

What a config pattern may cost is read from its shape: the repeats,
alternations, groups and backreferences that Python's own regular
expression parser builds from it (its alternatives' common prefixes moved
out, alternatives of one character each made a character set, a
non-capturing group under a repeat unwrapped, as that parser does).  The
parser itself is private to the re module, so the shape is read here, from a
pattern re.compile has accepted; tests/test_public_apis.py holds it to that
parser's tree on many thousands of generated patterns.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any, NamedTuple

_CLASS_ESCAPES = frozenset("dDsSwW")
_ANCHOR_ESCAPES = frozenset("AZbB")
_OCTAL = frozenset("01234567")
_HEX = MappingProxyType({"x": 2, "u": 4, "U": 8})


class _Repeat(NamedTuple):
    lo: int
    hi: int | None  # None: unbounded
    items: list[Any]
    mode: str  # "" greedy, "?" lazy, "+" possessive: a different repeat to the parser


class _Branch(NamedTuple):
    alternatives: list[list[Any]]


class _Group(NamedTuple):  # a group, capturing or not; a lookaround (walked the same)
    kind: str  # "group" | "assert" | "atomic"
    items: list[Any]
    plain: bool  # non-capturing and without flags: unwrapped when repeated


def _same(a: Any, b: Any) -> bool:
    """Whether the parser takes two items for the same: leaves only (its
    repeats, groups and alternations hold sub-patterns, which never compare
    equal)."""
    return not isinstance(a, (_Repeat, _Branch, _Group)) and a == b


class _Shape:
    """A recursive-descent reading of a pattern that ``re.compile`` accepted,
    into the tree of repeats, alternations, groups and leaves that Python's
    own parser builds (alternatives' common prefixes moved out, alternatives
    of one character each made a character set, as it does)."""

    def __init__(self, text: str, verbose: bool) -> None:
        self.s = text
        self.i = 0
        self.verbose = verbose

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        return c

    def sub(self, verbose: bool) -> list[Any]:
        """Alternatives up to a closing parenthesis or the end."""
        saved, self.verbose = self.verbose, verbose
        alternatives = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            alternatives.append(self.seq())
        self.verbose = saved
        if len(alternatives) == 1:
            return alternatives[0]
        out: list[Any] = []
        while all(alternatives) and all(_same(a[0], alternatives[0][0]) for a in alternatives):
            out.append(alternatives[0][0])
            alternatives = [a[1:] for a in alternatives]
        if all(len(a) == 1 and isinstance(a[0], tuple) and a[0][0] in ("lit", "in")
               and not isinstance(a[0], (_Repeat, _Branch, _Group)) for a in alternatives):
            out.append(("in", "|".join(repr(a[0]) for a in alternatives)))
        else:
            out.append(_Branch(alternatives))
        return out

    def seq(self) -> list[Any]:
        items: list[Any] = []
        while True:
            self.skip_verbose()
            c = self.peek()
            if c in ("", "|", ")"):
                return items
            if c in "*+?{":
                if not self.quantifier(items):
                    self.i += 1
                    items.append(("lit", "{"))
                continue
            item = self.atom()
            if item is not None:  # a comment or the global flags add nothing
                items.append(item)

    def skip_verbose(self) -> None:
        while self.verbose:
            c = self.peek()
            if c.isspace() and c:
                self.i += 1
            elif c == "#":
                while self.peek() not in ("", "\n"):
                    self.i += 1
            else:
                return

    def quantifier(self, items: list[Any]) -> bool:
        c = self.take()
        if c == "*":
            lo, hi = 0, None
        elif c == "+":
            lo, hi = 1, None
        elif c == "?":
            lo, hi = 0, 1
        else:  # "{": a repeat count, or a literal brace
            if self.peek() == "}":
                self.i -= 1
                return False
            start = self.i
            lo_s = hi_s = ""
            while self.peek().isdigit() and self.peek().isascii():
                lo_s += self.take()
            if self.peek() == ",":
                self.i += 1
                while self.peek().isdigit() and self.peek().isascii():
                    hi_s += self.take()
            else:
                hi_s = lo_s
            if self.peek() != "}":
                self.i = start - 1
                return False
            self.i += 1
            lo = int(lo_s) if lo_s else 0
            hi = int(hi_s) if hi_s else None
        mode = ""
        if self.peek() in ("?", "+") and self.peek():
            mode = self.take()  # lazy or possessive
        item = items.pop()
        inner = item.items if isinstance(item, _Group) and item.plain else [item]
        items.append(_Repeat(lo, hi, inner, mode))
        return True

    def atom(self) -> Any | None:
        c = self.take()
        if c == "[":
            return self.char_class()
        if c == ".":
            return ("any",)
        if c in "^$":
            return ("at", c)
        if c == "\\":
            return self.escape()
        if c == "(":
            return self.group()
        return ("lit", c)

    def char_class(self) -> Any:
        start = self.i
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        if self.peek() == "]":
            self.i += 1
        while self.peek() != "]":
            if self.take() == "\\":
                self.i += 1
        body = self.s[start:self.i]
        self.i += 1
        if not negate and len(body) == 1:
            return ("lit", body)
        return ("not-in" if negate else "in", body)

    def escape(self) -> Any:
        c = self.take()
        if c in _CLASS_ESCAPES:
            return ("in", "\\" + c)
        if c in _ANCHOR_ESCAPES:
            return ("at", "\\" + c)
        if c in _HEX:
            self.i += _HEX[c]
        elif c == "N" and self.peek() == "{":
            self.i = self.s.index("}", self.i) + 1
        elif c == "0":
            for _ in range(2):
                if self.peek() in _OCTAL and self.peek():
                    self.i += 1
        elif c.isdigit():
            if self.peek().isdigit():
                d = self.take()
                if c in _OCTAL and d in _OCTAL and self.peek() in _OCTAL and self.peek():
                    self.i += 1
                    return ("lit", "\\" + self.s[self.i - 3:self.i])
            return ("groupref",)
        return ("lit", "\\" + c)

    def group(self) -> Any | None:
        kind, plain, verbose = "group", False, self.verbose
        if self.peek() == "?":
            self.i += 1
            c = self.take()
            if c == "P":
                if self.take() == "=":
                    self.i = self.s.index(")", self.i) + 1
                    return ("groupref",)
                self.i = self.s.index(">", self.i) + 1
            elif c == ":":
                plain = True
            elif c == "#":
                self.i = self.s.index(")", self.i) + 1
                return None
            elif c in "=!":
                kind = "assert"
            elif c == "<":
                self.i += 1  # "<=" or "<!"
                kind = "assert"
            elif c == ">":
                kind = "atomic"
            elif c == "(":
                self.i = self.s.index(")", self.i) + 1
                self.sub(verbose)
                self.i += 1
                return ("groupref",)
            else:  # flags: global (checked by the caller) or scoped
                flags = c
                while self.peek() != ":" and self.peek() != ")":
                    flags += self.take()
                if self.take() == ")":
                    return None  # global flags (at the start only)
                on, _, off = flags.partition("-")
                verbose = (verbose or "x" in on) and "x" not in off
        items = self.sub(verbose)
        self.i += 1  # ")"
        return _Group(kind, items, plain)


def _walk(items: list[Any], inside_repeat: bool, open_repeats: list[int]) -> str | None:
    """Why a pattern of this shape may backtrack exponentially, or None;
    counts its unbounded repeats into ``open_repeats``."""
    for it in items:
        if isinstance(it, _Repeat):
            unbounded = it.hi is None or it.hi > 64
            many = unbounded or (it.hi or 0) > 1
            if inside_repeat and many:
                return "a nested quantifier"
            if unbounded:
                open_repeats[0] += 1
            why = _walk(it.items, inside_repeat or many, open_repeats)
        elif isinstance(it, _Branch):
            if inside_repeat:
                return "an alternation inside a quantifier"
            why = None
            for alt in it.alternatives:
                why = why or _walk(alt, inside_repeat, open_repeats)
        elif isinstance(it, _Group):
            why = _walk(it.items, inside_repeat, open_repeats) if it.kind != "atomic" else None
        elif it[0] == "groupref":
            return "a backreference"
        else:
            why = None
        if why:
            return why
    return None


def tree(pattern: str) -> list[Any]:
    """The shape of a pattern (``re.compile`` raises on one it refuses)."""
    verbose = bool(re.compile(pattern).flags & re.VERBOSE)
    return _Shape(pattern, verbose).sub(verbose)


def backtracking(pattern: str, open_repeats: list[int]) -> str | None:
    """Why ``pattern`` may backtrack exponentially (a nested quantifier, an
    alternation inside a quantifier, a backreference), or None; its
    unbounded repeats are counted into ``open_repeats``.  Raises what
    ``re.compile`` raises on a pattern it refuses."""
    return _walk(tree(pattern), False, open_repeats)
