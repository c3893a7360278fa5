"""Operand roles: one name for "the same operand" across files and tools.

A GGUF tensor's role is its name (``blk.0.attn_q.weight``).  A Hugging Face
module is mapped to the same GGUF name through gguf's TensorNameMap when the
architecture is known from config.json; otherwise its role is the module
name plus ``.weight``.  Mapping is best effort and never fails.

The map is built for one layer only (the ``name_map_layers`` budget,
docs/reliability.md): a name's numeric components are tried as the layer
number one at a time, mapped as layer 0, and the number put back.  Its cost
therefore never depends on config.json's ``num_hidden_layers``, which a
49-byte config could set to 100,000 (issue 16: 4 GB, 66 s).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import compress, repeat
from operator import add, and_, getitem, is_, itemgetter, or_
from typing import overload

from . import budgets, gguf_tables

_NUMBER = r"(?<=\.)\d+(?=\.|$)"  # compiled by _mapper, not at import (start-up)

_ALIASES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
            "gpt_oss": "gpt-oss", "gpt-oss": "gpt-oss", "gemma": "gemma", "gemma2": "gemma2",
            "phi3": "phi3", "deepseek_v3": "deepseek2", "deepseek_v2": "deepseek2"}


@lru_cache(maxsize=32)
def _name_map(arch_name: str, n_layers: int = budgets.NAME_MAP_LAYERS.value) -> object | None:
    # gguf's own map, as shipped in gguf_tables.json for the installed gguf
    # (importing gguf costs numpy, yaml and all of gguf: docs/performance.md)
    name = _ALIASES.get(arch_name, arch_name)
    if n_layers == 1:
        shipped = gguf_tables.name_map(name)
        if shipped is not None:
            return shipped or None
    # another gguf than the table's: ask it (here, not at the top: only a
    # model with an architecture needs it)
    from .gguf_constants import constants, tensor_mapping

    arch_by_name = {v: k for k, v in constants().MODEL_ARCH_NAMES.items()}
    arch = arch_by_name.get(name)
    if arch is None:
        return None
    try:
        tmap: object = tensor_mapping().get_tensor_name_map(arch, max(1, n_layers))
        return tmap
    except Exception:  # noqa: BLE001 - gguf raises assorted errors for odd archs
        return None


def role_function(model_type: str | None, n_layers: int | None) -> RoleMap:
    """A module/tensor name -> role mapper for one checkpoint (``n_layers``
    is accepted for callers but never sizes the map).  gguf's map is built
    when the first name is mapped: a model with nothing quantised never
    asks, and never imports gguf (docs/performance.md)."""
    return RoleMap(model_type)


class RoleMap:
    """``role(module)``, and ``role.many(modules)`` for many at once."""

    __slots__ = ("model_type", "_ready", "_mapped")

    def __init__(self, model_type: str | None) -> None:
        self.model_type = model_type
        self._ready = False
        self._mapped: _Mapped | None = None

    def _mapper(self) -> _Mapped | None:
        if not self._ready:
            tmap = _name_map(self.model_type) if self.model_type else None
            self._mapped = _Mapped(tmap) if tmap is not None else None
            self._ready = True
        return self._mapped

    def __call__(self, module: str) -> str:
        base = module
        if base.endswith(".weight"):
            base = base[:-7]
        if base.endswith(".bias"):
            base = base[:-5]
        mapped_role = self._mapper()
        if mapped_role is not None:
            mapped = mapped_role(base)
            if mapped is not None:
                return mapped
        return base + ".weight"

    def many(self, modules: Sequence[str]) -> list[str]:
        """``list(map(self, modules))``, with the usual names (one layer
        number, no ``.weight`` or ``.bias`` to drop) mapped by C-level maps
        (performance: one role per quantised module of a 400k-tensor tree)."""
        mapped = self._mapper()
        # a module ending in .weight or .bias (dropped first): found in one
        # pass over the names' lines (a line break in a name can only add a
        # false alarm, which maps one at a time, as a true one does)
        text = "\n".join(modules)
        if (mapped is None or ".weight\n" in text or ".bias\n" in text
                or text.endswith((".weight", ".bias"))):
            return list(map(self, modules))
        return mapped.many(modules, ".weight")


class _Mapped:
    """Module base name -> its role (the gguf tensor name + ".weight")
    through ``tmap`` (a gguf TensorNameMap for layer 0), or None.  Called
    once per quantised module (performance: a 400k-tensor tree), so the usual
    path is a dict lookup, one regex search and a memoised lookup."""

    __slots__ = ("lookup", "known", "number", "around_zero")

    def __init__(self, tmap: object) -> None:
        def lookup(base: str) -> str | None:
            try:
                got = tmap.get_name(base)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001
                return None
            return got if isinstance(got, str) and got else None

        # gguf's TensorNameMap.get_name(key) is mapping.get(key)[1]: read the
        # dict directly where it is one
        table = getattr(tmap, "mapping", None)
        if isinstance(table, dict):
            get = table.get

            def lookup_fast(base: str) -> str | None:
                got = get(base)
                if got is None:
                    return None
                name = got[1] if isinstance(got, tuple) and len(got) == 2 else None
                return name if isinstance(name, str) and name else None
        else:
            lookup_fast = lookup

        # Every layer's names map through the same layer-0 name: memoised, so a
        # 400k-tensor tree asks gguf's map once per distinct layer-0 name, as
        # (text before, text after) the layer number in the role.
        @lru_cache(maxsize=4096)
        def around_zero(zeroed: str) -> tuple[str, str] | None:
            hit = lookup_fast(zeroed)
            if hit is None or ".0." not in f".{hit}.":
                return None
            parts = hit.split(".")
            k = parts.index("0")
            return ".".join(parts[:k] + [""]), ".".join([""] + parts[k + 1:]) + ".weight"

        self.lookup = lookup_fast
        self.known: Callable[[str], bool] | None = (
            table.__contains__ if isinstance(table, dict) else None)
        self.number = re.compile(_NUMBER)
        self.around_zero = around_zero

    def __call__(self, base: str) -> str | None:
        if self.known is None or self.known(base):
            hit = self.lookup(base)
            if hit is not None:
                return hit + ".weight"
        for m in self.number.finditer(base):
            s, e = m.span()
            got = self.around_zero(base[:s] + "0" + base[e:])
            if got is not None:
                # the layer back in the first component that is "0"
                return got[0] + base[s:e] + got[1]
        return None

    @overload
    def many(self, bases: Sequence[str]) -> list[str | None]: ...

    @overload
    def many(self, bases: Sequence[str], suffix: str) -> list[str]: ...

    def many(self, bases: Sequence[str], suffix: str | None = None) -> list[str | None] | list[str]:
        """``list(map(self, bases))`` (with ``suffix``: a base without a
        role gets itself + ``suffix`` instead of None).  The bases gguf's map
        does not hold go through C-level maps: one regex pass over their
        lines for each one's first number, then that number zeroed looked
        up (memoised); the rest one at a time."""
        known = self.known
        split = _first_numbers(bases) if known is not None and bases else None
        if split is None:
            # no map to read, a line break in a name, or a name without a number
            return self._one_by_one(bases, range(len(bases)), [None] * len(bases), suffix)
        assert known is not None
        zeroed, digits, tails = split
        got = list(map(self.around_zero, zeroed))
        missing = list(map(is_, got, repeat(None))) if None in got else None
        if missing is not None:
            got = list(map(getitem, zip(got, repeat(("", ""))), missing))
        pairs: list[tuple[str, str]] = got  # type: ignore[assignment]  # no None in it
        out: list[str | None] = list(map(add, map(add, map(_FIRST, pairs), digits),
                                         map(_SECOND, pairs)))
        again = list(map(known, bases))  # gguf's map holds these: looked up as they are
        if missing is not None:
            # the first number gives no role: none, unless a later number
            # does (``tails`` starts with the dot after the first number)
            none: list[str | None] = ([None] * len(out) if suffix is None
                                      else list(map(add, bases, repeat(suffix))))
            out = list(map(getitem, zip(out, none), missing))
            search = self.number.search
            more = {t for t in set(compress(tails, missing)) if search(t) is not None}
            if more:
                again = list(map(or_, again, map(and_, missing, map(more.__contains__, tails))))
        return self._one_by_one(bases, compress(range(len(out)), again), out, suffix)

    def _one_by_one(self, bases: Sequence[str], idx: Iterable[int], out: list[str | None],
                    suffix: str | None) -> list[str | None]:
        """``out`` with each position of ``idx`` mapped by ``__call__``."""
        for i in idx:
            got = self(bases[i])
            out[i] = got if got is not None or suffix is None else bases[i] + suffix
        return out


def _first_numbers(names: Sequence[str]) -> tuple[Sequence[str], Sequence[str],
                                                   Sequence[str]] | None:
    """For each name, its first ``_NUMBER`` match: (the name with it
    replaced by "0", the match, the text after it), as three columns; None
    when a name has none.  One regex pass over the names' lines (None also
    when a name holds a line break)."""
    if not names:
        return [], [], []
    text = "\n".join(names)
    if text.count("\n") != len(names) - 1:
        return None
    parts = re.compile(_FIRST_NUMBER).findall(text)
    if len(parts) != len(names):
        return None
    heads, digits, tails = zip(*parts)
    return list(map(add, map(add, heads, repeat("0")), tails)), digits, tails


# each line's text before its first number that ``_NUMBER`` matches, the
# number, and the rest of the line
_FIRST_NUMBER = r"(?m)^([^\n]*?\.)(\d+)(?=\.|$)([^\n]*)$"


_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def gguf_role(name: str) -> str:
    return name
