"""The two exit policies (§13), ``--fail-on`` and the exit codes the CLI
uses outside them.

``--fail-on`` names the findings that make the exit non-zero, under either
policy: severities (``structural``, ``disagreement``, ``warning``), kind
names, codes or code prefixes (``GRIT1``).  Findings outside it are still
reported; they only stop counting.  Without it every non-info finding counts.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from ..codec.errors import GritValueError
from ..rules.codes import Kind
from ..rules.finding import Finding, Severity
from ..rules.registry import parse_selection, rule


class ExitPolicy(str, enum.Enum):
    GRADED = "graded"  # 0 clean, 1 structural, 2 disagreement, 3 warnings, 4 nothing parsed
    SIMPLE = "simple"  # 0 clean, 1 any finding, 2 nothing parsed

    def __str__(self) -> str:
        return self.value


GRADED_CODE = {Severity.STRUCTURAL: 1, Severity.DISAGREEMENT: 2, Severity.WARNING: 3}
NOTHING_PARSED = {ExitPolicy.GRADED: 4, ExitPolicy.SIMPLE: 2}
EXIT_INTERNAL = 70  # an internal error escaped containment (a bug)
EXIT_INTERRUPTED = 130
COUNTING = frozenset(GRADED_CODE)  # info never changes the exit code


@dataclass(frozen=True)
class FailOn:
    """Which findings make the exit non-zero: these severities, plus these
    kinds whatever their severity.  The default is every counting severity."""

    severities: frozenset[Severity] = COUNTING
    kinds: frozenset[Kind] = frozenset()

    def fails(self, f: Finding) -> bool:
        return f.counts and (f.severity in self.severities or f.kind in self.kinds)

    @property
    def is_default(self) -> bool:
        return self.severities == COUNTING and not self.kinds

    def to_json(self) -> list[str]:
        """Severities in severity order, then kind names."""
        return ([s.value for s in Severity if s in self.severities]
                + sorted(k.value for k in self.kinds))


def parse_fail_on(text: str | Iterable[str] | None, option: str = "--fail-on") -> FailOn:
    """``structural,disagreement``, ``GRIT1,artifact_drift``: severities,
    kind names, codes or code prefixes, comma-separated.  ``None``: the
    default (every counting severity)."""
    if text is None:
        return FailOn()
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text)]
    items = [t for t in items if t]
    if not items:
        raise GritValueError(f"{option}: give at least one severity, kind or code")
    severities: set[Severity] = set()
    rest: list[str] = []
    for item in items:
        sev = next((s for s in Severity if s.value == item.lower()), None)
        if sev is Severity.INFO:
            raise GritValueError(f"{option}: info findings never change the exit code")
        if sev is not None:
            severities.add(sev)
        else:
            rest.append(item)
    kinds = (parse_selection(rest, option) or frozenset()) if rest else frozenset()
    info = sorted(k.value for k in kinds if rule(k).severity is Severity.INFO)
    if info:
        raise GritValueError(f"{option}: {', '.join(info)} is info: info findings never "
                             "change the exit code")
    return FailOn(frozenset(severities), frozenset(kinds))


def exit_codes(findings: Iterable[Finding], parsed_any: bool,
               fail_on: FailOn = FailOn()) -> dict[str, int]:
    """§13: both policies' codes, counting only the findings ``fail_on``
    names.  Info findings never count."""
    if not parsed_any:
        return {p.value: NOTHING_PARSED[p] for p in ExitPolicy}
    counting = {f.severity for f in findings if fail_on.fails(f)}
    graded = min((GRADED_CODE[s] for s in counting), default=0)
    return {ExitPolicy.GRADED.value: graded, ExitPolicy.SIMPLE.value: 1 if counting else 0}
