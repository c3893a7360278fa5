"""Error types of the GRIT codec.

§7.1: the five statuses are exhaustive.  In Python the must-use result is an
exception (RECONSTRUCTION §8): one ``GritError`` subclass per failing status.
Everything else the codec refuses (a malformed grade string, an invalid format
word, a refused relayout) is a ``GritValueError``.  Every exception the codec
raises on purpose derives from ``GritError``; anything else is a bug.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Status(enum.IntEnum):
    """grit_status_t (§7.1)."""

    OK = 0
    SIZE_MISMATCH = 1
    GRADE_UNKNOWN = 2
    PLACEMENT_UNKNOWN = 3
    DIGEST_MISMATCH = 4

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Status.OK: "OK",
    Status.SIZE_MISMATCH: "SizeMismatch",
    Status.GRADE_UNKNOWN: "GradeUnknown",
    Status.PLACEMENT_UNKNOWN: "PlacementUnknown",
    Status.DIGEST_MISMATCH: "DigestMismatch",
}


@dataclass(frozen=True)
class Detail:
    """grit_detail_t: a human-readable message plus the numbers behind it."""

    message: str
    step: int | None = None
    expected: Any = None
    actual: Any = None
    plane: int | None = None
    clause: str | None = None
    cause: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class GritError(Exception):
    """Base of every error the project raises on purpose."""


class GritValueError(GritError, ValueError):
    """A value the codec cannot accept: bad grade string, format word, layout..."""


class GritCheckError(GritError):
    """A failed boundary check; ``status`` and ``detail`` say which and why."""

    status: Status = Status.OK

    def __init__(self, detail: Detail) -> None:
        super().__init__(detail.message)
        self.detail = detail


class GritSizeError(GritCheckError):
    status = Status.SIZE_MISMATCH


class GritGradeError(GritCheckError):
    status = Status.GRADE_UNKNOWN


class GritLayoutError(GritCheckError):
    status = Status.PLACEMENT_UNKNOWN


class GritDigestError(GritCheckError):
    status = Status.DIGEST_MISMATCH


ERROR_FOR_STATUS: dict[Status, type[GritCheckError]] = {
    Status.SIZE_MISMATCH: GritSizeError,
    Status.GRADE_UNKNOWN: GritGradeError,
    Status.PLACEMENT_UNKNOWN: GritLayoutError,
    Status.DIGEST_MISMATCH: GritDigestError,
}
