"""Tensor-name grammar and declared scope: pure functions shared by the
parsers (which infer conventions from names) and the rules (which compare
the declared scope with what is quantised).  No I/O.

``Declared`` is the normalised form of a checkpoint's declared quantisation
(config.json ``quantization_config``, quantize_config.json,
hf_quant_config.json): method, bits, group size, format, ignore list.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

Declared = dict[str, Any]

# Longest first: the suffixes that attach a stored tensor to its module.
SUFFIXES = (
    ".weight.quant_state.bitsandbytes__nf4", ".weight.quant_state.bitsandbytes__fp4",
    ".weight.nested_quant_map", ".weight.nested_absmax", ".weight.quant_map", ".weight.absmax",
    ".weight_global_scale", ".input_global_scale", ".weight_zero_point", ".weight_scale_inv",
    ".weight_scale_2", ".weight_packed", ".weight_scale", ".weight_shape", ".weight_g_idx",
    ".weight_format", ".input_scale", ".qweight", ".qzeros", ".scales", ".g_idx", ".weight",
    ".bias", ".SCB", "_blocks", "_scales", ".blocks",
)
_DOT_SUFFIXES = {s for s in SUFFIXES if s.startswith(".")}
_US_SUFFIXES = tuple(s for s in SUFFIXES if not s.startswith("."))
_MAX_DOTS = max(s.count(".") for s in _DOT_SUFFIXES)


def split_name(name: str) -> tuple[str, str]:
    """(module, suffix) of a stored tensor name: the longest known suffix."""
    parts = name.split(".")
    for k in range(min(_MAX_DOTS, len(parts) - 1), 0, -1):
        suf = "." + ".".join(parts[-k:])
        if suf in _DOT_SUFFIXES and len(name) > len(suf):
            return name[: -len(suf)], suf
    for s in _US_SUFFIXES:
        if name.endswith(s) and len(name) > len(s):
            return name[: -len(s)], s
    return name, ""


def pattern_matches(pattern: str, module: str) -> bool:
    """How the loaders match ignore / modules_to_not_convert / exclude_modules."""
    if pattern.startswith("re:"):
        try:
            return re.match(pattern[3:], module) is not None
        except re.error:
            return False
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(module, pattern) or fnmatch.fnmatchcase(module, pattern + ".*")
    return module == pattern or module.endswith("." + pattern) or pattern in module.split(".")


def applies(declared: Declared | None, module: str) -> bool:
    """True when the declared quantisation covers ``module`` (not ignored)."""
    if declared is None:
        return False
    return not any(pattern_matches(p, module) for p in declared.get("ignore", []))
