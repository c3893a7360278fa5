"""Tensor-name grammar and declared scope: pure functions shared by the
parsers (which infer conventions from names) and the rules (which compare
the declared scope with what is quantised).  No I/O.

``Declared`` is the normalised form of a checkpoint's declared quantisation
(config.json ``quantization_config``, quantize_config.json,
hf_quant_config.json): method, bits, group size, format, ignore list.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress
from operator import itemgetter, methodcaller, not_
from typing import Any

# Budgets on config patterns (their Budget records live in
# parsers/budgets.py, which docs/reliability.md tabulates).  Python's re
# backtracks: a nested quantifier such as (a+)+b doubles its time with every
# character of the name, so such patterns are refused rather than run, and
# names longer than MAX_NAME_CHARS are never matched.
MAX_PATTERN_CHARS = 1024
MAX_NAME_CHARS = 1024
MAX_OPEN_REPEATS = 2  # unbounded repeats in one pattern: time is at most n^2

Declared = dict[str, Any]

# The suffixes of a module's own weight and bias.  Each convention declares
# the suffixes of its other parts in its own module (conventions/kinds/), and
# conventions/suffixes.py puts every convention's table together.
GENERIC_SUFFIXES = (".weight", ".bias")


class SuffixTable:
    """(module, suffix) splits of stored tensor names over a set of known
    suffixes: the longest known suffix a name ends in."""

    __slots__ = ("suffixes", "_by_last", "_tails", "_one", "_tails_undotted")

    def __init__(self, suffixes: Iterable[str]) -> None:
        self.suffixes = tuple(dict.fromkeys(suffixes))
        dots = sorted((s for s in self.suffixes if s.startswith(".")), key=len, reverse=True)
        # dot suffixes by their last component, longest first: a name's last
        # component picks the few candidates (a split runs once per stored tensor)
        by_last: dict[str, tuple[str, ...]] = {}
        for suf in dots:
            last = suf.rsplit(".", 1)[1]
            by_last[last] = by_last.get(last, ()) + (suf,)
        self._by_last = by_last
        self._tails = tuple(s for s in self.suffixes if not s.startswith("."))
        # no other suffix holds a dot: a name's last component alone says
        # which of them it ends in (``split_columns``)
        self._tails_undotted = not any("." in t for t in self._tails)
        # last component -> suffix, where the only known suffix ending in that
        # component is the component itself (".weight", ".weight_scale", ...):
        # a name with such a last component, and text before its dot, splits there
        self._one = {last: sufs[0] for last, sufs in by_last.items()
                     if len(sufs) == 1 and sufs[0] == "." + last}

    def split(self, name: str) -> tuple[str, str]:
        """(module, suffix) of a stored tensor name: the longest known suffix.

        Two dot suffixes that both match a name end in the same component and
        one ends the other, so the longest in characters is the longest in
        components."""
        for suf in self._by_last.get(name[name.rfind(".") + 1:], ()):
            if len(name) > len(suf) and name.endswith(suf):
                return name[: -len(suf)], suf
        for s in self._tails:
            if name.endswith(s) and len(name) > len(s):
                return name[: -len(s)], s
        return name, ""

    def split_all(self, names: Sequence[str]) -> Iterator[tuple[str, str]]:
        """``map(self.split, names)``."""
        return zip(*self.split_columns(names))

    def split_columns(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """(modules, suffixes) of ``names``, as ``split`` gives each: the
        usual name, whose last component alone is a known suffix, in C-level
        passes over all of them (a stored tensor each, 400k in a large
        model), every other name by ``split``."""
        parts = list(map(_RPARTITION, names))
        mods = list(map(_HEAD, parts))
        lasts = list(map(_LAST, parts))
        del parts
        sufs: list[Any] = list(map(self._one.get, lasts))
        # the usual split holds where the last component is such a suffix
        # and text comes before its dot; else ``split`` decides, but for a
        # last component no dot suffix ends in, what it finds is the first
        # other suffix that component ends in (no such suffix holds a dot),
        # asked once per distinct component (every name of gpt-oss's
        # ``*_blocks`` and of a convention none knows)
        tails: dict[str, str] = {}
        by_last, undotted = self._by_last, self._tails_undotted
        for i in compress(range(len(mods)), map(not_, map(all, zip(mods, sufs)))):
            last, name = lasts[i], names[i]
            tail = None
            if undotted and last not in by_last:
                tail = tails.get(last)
                if tail is None:
                    tail = tails[last] = next((t for t in self._tails if last.endswith(t)), "")
            if tail is None or len(name) <= len(tail):
                # (a name no longer than that suffix: ``split`` tries the next)
                mods[i], sufs[i] = self.split(name)
            elif tail:
                mods[i], sufs[i] = name[:-len(tail)], tail
            else:
                mods[i], sufs[i] = name, ""
        return mods, sufs


_RPARTITION = methodcaller("rpartition", ".")
_HEAD, _LAST = itemgetter(0), itemgetter(2)


@functools.lru_cache(maxsize=4096)
def pattern_refused(pattern: str) -> str | None:
    """Why a config pattern is not matched at all (a budget), or None."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"it is {len(pattern):,} characters (pattern_chars budget {MAX_PATTERN_CHARS:,})"
    if not pattern.startswith("re:"):
        return None
    from .pattern_shape import backtracking  # only where a config has a re: pattern

    open_repeats = [0]
    try:
        why = backtracking(pattern[3:], open_repeats)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        return f"it is not a regular expression ({exc})"
    budget = "pattern_chars"  # its record says what shapes of pattern it refuses
    if why is None and open_repeats[0] > MAX_OPEN_REPEATS:
        why = f"{open_repeats[0]} unbounded quantifiers (at most {MAX_OPEN_REPEATS})"
        budget = "pattern_open_repeats"
    return (f"{why}: Python's backtracking matcher could take exponential or high "
            f"polynomial time on a module name (the {budget} budget)") if why else None


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def pattern_matches(pattern: str, module: str) -> bool:
    """How the loaders match ignore / modules_to_not_convert / exclude_modules.
    A refused pattern (``pattern_refused``) matches nothing; the config
    reader reports it."""
    if pattern_refused(pattern) or len(module) > MAX_NAME_CHARS:
        return False
    if pattern.startswith("re:"):
        try:
            return _compiled(pattern[3:]).match(module) is not None
        except re.error:
            return False
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, pattern + ".*")
    return module == pattern or module.endswith("." + pattern) or pattern in module.split(".")


# What matching a config's ignore patterns against one call's module names
# may cost, in units (parsers/budgets.py ``pattern_work``).  A re: pattern
# with two unbounded repeats is matched by Python's backtracking engine in
# time quadratic in the name (``MAX_OPEN_REPEATS``): about 5 us on a
# 64-character name built to make it backtrack, 33 us at 256 and 356 us at
# 900, where a real module name takes a fraction of a microsecond.  Such a
# pattern costs 1 + (length / 16)^2 units a name, any other 1 + length / 64
# (about 0.1-0.3 us of matching a unit at worst); a call may spend
# ``PATTERN_UNITS_PER_NAME`` a name plus ``PATTERN_UNITS_FIXED``, so a
# crafted name costs a few times its parse at most, and a real model's
# names fit many patterns.  Names past the budget are not matched, and
# whoever asked says so.
PATTERN_UNITS_PER_NAME = 64
PATTERN_UNITS_FIXED = 100_000


@functools.lru_cache(maxsize=4096)
def _open_repeats(regex: str) -> int:
    """The unbounded repeats of a regular expression ``re.compile`` accepts."""
    from .pattern_shape import backtracking

    n = [0]
    try:
        backtracking(regex, n)
    except (re.error, RecursionError, OverflowError, ValueError):
        return MAX_OPEN_REPEATS
    return n[0]


def _glob(pattern: str, module: str) -> bool:
    return fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, pattern + ".*")


class IgnoreMatcher:
    """A config's ignore patterns, matched against many module names at
    once within the ``pattern_work`` budget.

    By default it matches as ``pattern_matches`` does (the transformers
    integrations: a ``re:`` pattern by ``re.match``, a glob, else the name,
    a dotted tail or a component); with ``compressed_tensors``, as that
    library matches its ``ignore`` list (``_match_name`` in
    compressed_tensors/utils/match.py: ``re:`` and ``re.match``, else the
    exact name; an entry naming a module class, ``Linear``, is matched by
    class there, which names do not tell, so here it matches only a module
    named so).  Refused patterns match nothing (``pattern_refused``), and
    names past ``MAX_NAME_CHARS`` match no pattern."""

    __slots__ = ("_plain", "_rx", "_ct")

    def __init__(self, patterns: Iterable[str], compressed_tensors: bool = False) -> None:
        self._ct = compressed_tensors
        self._plain: dict[str, None] = {}  # the plain names (a set, in their order)
        self._rx: list[tuple[str, Callable[[str], object], bool]] = []
        for p in patterns:
            if pattern_refused(p):
                continue
            if p.startswith("re:"):
                try:
                    rx = _compiled(p[3:])
                except re.error:
                    continue
                self._rx.append((p, rx.match, _open_repeats(p[3:]) >= 2))
            elif not compressed_tensors and any(c in p for c in "*?["):
                self._rx.append((p, functools.partial(_glob, p), False))
            else:
                self._plain[p] = None

    def __bool__(self) -> bool:
        return bool(self._plain or self._rx)

    def heads(self) -> tuple[str, ...] | None:
        """What the name of a tensor under a module compressed-tensors'
        plain names match starts with (``name + "."``), when there are only
        plain names; None: a ``re:`` pattern may match anything.  A caller
        holding tensor names finds the few worth splitting into their
        module with one ``startswith`` a name (a 200,000-module model)."""
        if not self._ct or self._rx:
            return None
        return tuple(p + "." for p in self._plain)

    def _plain_hit(self, module: str) -> str | None:
        plain = self._plain
        if module in plain:
            return module
        if self._ct:
            return None
        parts = module.split(".")
        for k in range(1, len(parts)):
            tail = ".".join(parts[k:])
            if tail in plain:
                return tail
        return next((c for c in parts if c in plain), None)

    def match(self, modules: Sequence[str]) -> tuple[dict[int, str], list[int]]:
        """(position -> a pattern that matches it, for each of ``modules``
        one does (a plain name before any ``re:`` pattern or glob, those in
        their order); the positions not matched for want of budget, in
        order).  A position in neither matches no pattern."""
        hit: dict[int, str] = {}
        # a name past name_chars is never matched (``pattern_matches``)
        every: Sequence[int] = range(len(modules))
        if modules and max(map(len, modules)) > MAX_NAME_CHARS:
            every = [i for i, m in enumerate(modules) if len(m) <= MAX_NAME_CHARS]
        if self._plain:
            if self._ct:
                plain = self._plain
                for i in compress(every, map(plain.__contains__, map(modules.__getitem__,
                                                                     every))):
                    hit[i] = modules[i]
            else:
                for i in every:
                    got = self._plain_hit(modules[i])
                    if got is not None:
                        hit[i] = got
        left = [i for i in every if i not in hit] if self._rx else []
        budget = PATTERN_UNITS_FIXED + PATTERN_UNITS_PER_NAME * len(modules)
        unknown: list[int] = []
        for k, (p, match, quadratic) in enumerate(self._rx):
            if not left:
                break
            lens = [len(modules[i]) for i in left]
            costs = ([1 + ((n * n) >> 8) for n in lens] if quadratic
                     else [1 + (n >> 6) for n in lens])
            rest: list[int] = []
            if sum(costs) > budget:
                # as many as the budget allows, in order: the others are not
                # matched, by this pattern or the ones after it
                n, spent = 0, 0
                while n < len(costs) and spent + costs[n] <= budget:
                    spent += costs[n]
                    n += 1
                left, rest = left[:n], left[n:]
            budget -= sum(costs[:len(left)])
            found = [i for i in left if match(modules[i])]
            for i in found:
                hit[i] = p
            done = set(found)
            left = [i for i in left if i not in done]
            if rest:
                # those this pattern did not match are still open to the
                # patterns after it, which the budget does not reach
                unknown = sorted((left if k + 1 < len(self._rx) else []) + rest)
                break
        return hit, unknown
