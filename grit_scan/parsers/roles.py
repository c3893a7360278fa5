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
from collections.abc import Callable
from functools import lru_cache

from . import budgets

_NUMBER = r"(?<=\.)\d+(?=\.|$)"  # compiled by _mapper, not at import (start-up, issue 15)

_ALIASES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
            "gpt_oss": "gpt-oss", "gpt-oss": "gpt-oss", "gemma": "gemma", "gemma2": "gemma2",
            "phi3": "phi3", "deepseek_v3": "deepseek2", "deepseek_v2": "deepseek2"}


@lru_cache(maxsize=32)
def _name_map(arch_name: str, n_layers: int = budgets.NAME_MAP_LAYERS.value) -> object | None:
    import gguf  # here, not at the top: only a model with an architecture needs it

    arch_by_name = {name: arch for arch, name in gguf.MODEL_ARCH_NAMES.items()}
    arch = arch_by_name.get(_ALIASES.get(arch_name, arch_name))
    if arch is None:
        return None
    try:
        return gguf.get_tensor_name_map(arch, max(1, n_layers))
    except Exception:  # noqa: BLE001 - gguf raises assorted errors for odd archs
        return None


def role_function(model_type: str | None, n_layers: int | None) -> Callable[[str], str]:
    """A module/tensor name -> role mapper for one checkpoint (``n_layers``
    is accepted for callers but never sizes the map).  gguf's map is built
    when the first name is mapped: a model with nothing quantised never
    asks, and never imports gguf (issue 15)."""
    mapper: list[Callable[[str], str | None] | None] = []

    def role(module: str) -> str:
        base = module
        if base.endswith(".weight"):
            base = base[:-7]
        if base.endswith(".bias"):
            base = base[:-5]
        if not mapper:
            tmap = _name_map(model_type) if model_type else None
            mapper.append(_mapper(tmap) if tmap is not None else None)
        mapped_role = mapper[0]
        if mapped_role is not None:
            mapped = mapped_role(base)
            if mapped is not None:
                return mapped
        return base + ".weight"

    return role


def _mapper(tmap: object) -> Callable[[str], str | None]:
    """Module base name -> its role (the gguf tensor name + ".weight")
    through ``tmap`` (a gguf TensorNameMap for layer 0), or None.  Called
    once per quantised module (issue 15: a 400k-tensor tree), so the usual
    path is a dict lookup, one regex search and a memoised lookup."""

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

    known = table.__contains__ if isinstance(table, dict) else None
    number = re.compile(_NUMBER)

    def mapped_role(base: str) -> str | None:
        if known is None or known(base):
            hit = lookup_fast(base)
            if hit is not None:
                return hit + ".weight"
        for m in number.finditer(base):
            s, e = m.span()
            got = around_zero(base[:s] + "0" + base[e:])
            if got is not None:
                # the layer back in the first component that is "0"
                return got[0] + base[s:e] + got[1]
        return None

    return mapped_role


def gguf_role(name: str) -> str:
    return name
