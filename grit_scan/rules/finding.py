"""A finding: what the rules say about one file, tensor or group of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .kinds import INFO, severity


@dataclass
class Finding:
    kind: str
    path: str
    message: str
    tensor: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    severity: str = ""

    def __post_init__(self) -> None:
        if not self.severity:
            self.severity = severity(self.kind)

    @property
    def counts(self) -> bool:
        """Info findings never change the exit code."""
        return self.severity != INFO

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "severity": self.severity, "path": self.path,
                "tensor": self.tensor, "message": self.message, "detail": _plain(self.detail)}


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_plain(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)
