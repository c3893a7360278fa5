"""A finding: what a rule says about one file, tensor or group of them.

``Severity`` orders the exit codes of §13; ``Finding`` is frozen, so a
renderer or a consumer of the library can never change what a rule said.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .codes import Kind


class Severity(str, enum.Enum):
    """The four severity classes, most serious first (§13)."""

    STRUCTURAL = "structural"
    DISAGREEMENT = "disagreement"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def code_class(self) -> int:
        """The hundreds digit of the codes of this class (GRIT1xx structural)."""
        return _RANK[self] + 1

    def __str__(self) -> str:
        return self.value


_RANK = {s: i for i, s in enumerate(Severity)}


class Detail(dict[str, Any]):
    """A finding's detail: a read-only dict of plain JSON values (str, int,
    float, bool, None, lists, dicts), so ``json.dumps(finding.detail)``
    works and no consumer can change what a rule said."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a finding's detail is read-only")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]
    __ior__ = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickles (sweep's worker processes)
        return (Detail, (dict(self),))


_EMPTY = Detail()


def _frozen(d: Mapping[str, Any] | None) -> Detail:
    return Detail(plain(d)) if d else _EMPTY


@dataclass(frozen=True)
class Finding:
    """One finding.  Build it with ``Rule.finding`` so code, kind and
    severity always come from the rule that raised it."""

    code: str
    kind: Kind
    severity: Severity
    path: str
    message: str
    tensor: str | None = None
    detail: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if type(self.detail) is not Detail:
            object.__setattr__(self, "detail", _frozen(self.detail))

    @property
    def counts(self) -> bool:
        """Info findings never change the exit code."""
        return self.severity is not Severity.INFO

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "kind": self.kind.value, "severity": self.severity.value,
                "path": self.path, "tensor": self.tensor, "message": self.message,
                "detail": plain(self.detail)}


_STR = frozenset((str,))


def plain(v: Any) -> Any:
    """A JSON-ready copy of a detail value (mappings, sequences, bytes as hex)."""
    t = type(v)
    if t is str or t is int or v is None:
        return v  # the usual leaves, without the ABC checks below (docs/performance.md)
    if (t is list or t is tuple) and set(map(type, v)) <= _STR:
        return list(v)  # a list of names
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [plain(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)
