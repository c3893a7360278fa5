"""The output formats of ``grit scan`` and how a report is rendered."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .policy import ExitPolicy


class OutputFormat(str, enum.Enum):
    """``--output-format`` values (docs/cli.md)."""

    CONCISE = "concise"  # one line per finding, grouped by file (the default)
    FULL = "full"  # artifacts, explanations, fixes and explain diffs
    JSON = "json"  # docs/json-report.md
    SARIF = "sarif"  # SARIF 2.1.0 for code scanning
    GITHUB = "github"  # GitHub Actions workflow annotations
    GROUPED = "grouped"  # the same finding on many files collapses into one line

    def __str__(self) -> str:
        return self.value

    @property
    def is_document(self) -> bool:
        """A single JSON document (no trailing text lines)."""
        return self in (OutputFormat.JSON, OutputFormat.SARIF)


@dataclass(frozen=True)
class RenderOptions:
    """How a report is rendered: exit policy, --statistics and colour."""

    policy: ExitPolicy = ExitPolicy.GRADED
    statistics: bool = False
    color: bool | None = None  # None: decide from the stream and NO_COLOR / FORCE_COLOR
    width: int | None = None  # None: the terminal's (COLUMNS honoured), unbounded when piped
