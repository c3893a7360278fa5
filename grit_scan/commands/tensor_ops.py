"""FILE::TENSOR operands (decode, explain) — resolved through the readers."""

from __future__ import annotations

from pathlib import Path

from ..cli import UsageError


def decode_tensor(spec: str, out: Path | None, as_json: bool) -> None:
    raise UsageError("FILE::TENSOR operands need the checkpoint readers, which are not "
                     "available in this version")
