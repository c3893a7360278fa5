"""The two exit policies (§13) and the exit codes the CLI uses outside them."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from ..rules.finding import Finding, Severity


class ExitPolicy(str, enum.Enum):
    GRADED = "graded"  # 0 clean, 1 structural, 2 disagreement, 3 warnings, 4 nothing parsed
    SIMPLE = "simple"  # 0 clean, 1 any finding, 2 nothing parsed

    def __str__(self) -> str:
        return self.value


GRADED_CODE = {Severity.STRUCTURAL: 1, Severity.DISAGREEMENT: 2, Severity.WARNING: 3}
NOTHING_PARSED = {ExitPolicy.GRADED: 4, ExitPolicy.SIMPLE: 2}
EXIT_INTERNAL = 70  # an internal error escaped containment (a bug)
EXIT_INTERRUPTED = 130


def exit_codes(findings: Iterable[Finding], parsed_any: bool) -> dict[str, int]:
    """§13: both policies' codes.  Info findings never count."""
    if not parsed_any:
        return {p.value: NOTHING_PARSED[p] for p in ExitPolicy}
    counting = {f.severity for f in findings if f.counts}
    graded = min((GRADED_CODE[s] for s in counting), default=0)
    return {ExitPolicy.GRADED.value: graded, ExitPolicy.SIMPLE.value: 1 if counting else 0}
