"""Small helpers shared by the command modules."""

from __future__ import annotations

import json
import sys
from typing import Any

from ._app import UsageError


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def parse_int_list(
    text: str, option: str, *, count: int | None = None, minimum: int | None = None
) -> list[int]:
    """Parse 'a,b,c' into integers, or raise a usage error naming the option."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    try:
        vals = [int(p, 0) for p in parts]
    except ValueError:
        raise UsageError(f"{option} takes comma-separated integers; got {text!r}") from None
    if count is not None and len(vals) != count:
        raise UsageError(f"{option} takes {count} integers; got {len(vals)}")
    if minimum is not None and any(v < minimum for v in vals):
        raise UsageError(f"{option}: values must be >= {minimum}")
    if option == "--shape" and not vals:
        raise UsageError("--shape needs at least one extent")
    return vals


def complete_tensor(incomplete: str) -> list[str]:
    """Shell completion of ``FILE::PREFIX``: ``FILE::NAME`` for each
    quantised tensor of FILE whose name starts with PREFIX (the header only is
    read; an unreadable file offers nothing)."""
    if "::" not in incomplete:
        return []
    path, _, prefix = incomplete.rpartition("::")
    if not path:
        return []
    from ..api import quantized_names

    return [f"{path}::{n}" for n in quantized_names(path) if n.startswith(prefix)]
