"""Operand roles: one name for "the same operand" across files and tools.

A GGUF tensor's role is its name (``blk.0.attn_q.weight``).  A Hugging Face
module is mapped to the same GGUF name through gguf's TensorNameMap when the
architecture is known from config.json; otherwise its role is the module
name plus ``.weight``.  Mapping is best effort and never fails.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import gguf

_ARCH_BY_NAME = {name: arch for arch, name in gguf.MODEL_ARCH_NAMES.items()}
_ALIASES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
            "gpt_oss": "gpt-oss", "gpt-oss": "gpt-oss", "gemma": "gemma", "gemma2": "gemma2",
            "phi3": "phi3", "deepseek_v3": "deepseek2", "deepseek_v2": "deepseek2"}


@lru_cache(maxsize=32)
def _name_map(arch_name: str, n_layers: int) -> object | None:
    arch = _ARCH_BY_NAME.get(_ALIASES.get(arch_name, arch_name))
    if arch is None:
        return None
    try:
        return gguf.get_tensor_name_map(arch, max(1, n_layers))
    except Exception:  # noqa: BLE001 - gguf raises assorted errors for odd archs
        return None


def role_function(model_type: str | None, n_layers: int | None) -> Callable[[str], str]:
    """A module/tensor name -> role mapper for one checkpoint."""
    tmap = _name_map(model_type, n_layers or 1) if model_type else None

    def role(module: str) -> str:
        base = module
        for suf in (".weight", ".bias"):
            if base.endswith(suf):
                base = base[: -len(suf)]
        if tmap is not None:
            try:
                mapped = tmap.get_name(base)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001
                mapped = None
            if mapped:
                return f"{mapped}.weight"
        return f"{base}.weight"

    return role


def gguf_role(name: str) -> str:
    return name
