"""JSON text to Python values: the standard library's answer, sooner.

``loads(text)`` returns exactly what ``json.loads(text, parse_constant=...)``
returns, and raises what it raises.  msgspec's decoder (a maintained,
fuzzed C parser, about 1.7x faster here on safetensors headers and
indexes) is asked first; wherever it refuses the text (NaN, Infinity,
1e400, a lone surrogate escape, a byte-order mark, anything malformed) the
standard library parses it, so every error message and every value it
accepts but msgspec does not are the standard library's.  Where both accept
a text they build the same value: tests/test_json_text.py holds that on
generated documents and on every JSON file under fixtures/.

Duplicate keys: both keep the last, so callers that must refuse them prove
their absence the way they did with ``json.loads``
(``safetensors_reader._loads_plain``).  Measured in docs/performance.md
("Stop 36", JSON).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["FAST_FROM", "loads"]

# Texts this long or longer go to msgspec first.  Importing msgspec costs
# about 13 ms of a process's start-up (it imports typing_extensions,
# datetime, decimal, uuid...) and saves about 3.4 ms a megabyte of JSON, so
# a scan of small files never imports it; a header of ~600 tensors or a
# sharded model's index does.
FAST_FROM = 64 * 1024


def loads(text: str | bytes, parse_constant: Callable[[str], Any] | None = None,
          fast_from: int = FAST_FROM) -> Any:
    """``json.loads(text, parse_constant=parse_constant)``, decoded by msgspec
    when the text is at least ``fast_from`` long and msgspec accepts it (it
    accepts no constant, so ``parse_constant`` only ever reaches the
    standard library)."""
    if len(text) >= fast_from:
        import msgspec  # see FAST_FROM: only where it pays for its import

        try:
            return msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError):
            pass
    return json.loads(text, parse_constant=parse_constant)
