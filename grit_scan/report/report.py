"""The scan report: the one model the CLI renders and the library returns.

Renderers live beside it (``json_format``, ``text``, ``sarif``); the exit
policy is ``policy``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..artifact import Artifact, ScanInput
from ..rules.finding import Finding, Severity
from .policy import ExitPolicy, FailOn, exit_codes


@dataclass(frozen=True)
class Report:
    """A scan's artifacts, findings and messages: what every format renders."""

    roots: list[str]
    deep: bool
    artifacts: list[Artifact]
    findings: list[Finding]
    skipped: list[dict[str, str]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # e.g. the --deep slow-path note
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)
    tracebacks: list[str] = field(default_factory=list, repr=False)  # --debug only
    fail_on: FailOn = field(default_factory=FailOn)  # which findings set the exit code
    # what --select/--ignore or a config file hid, by what hid it:
    # {"by": "grit.toml", "count": 12, "kinds": {"size_mismatch": 10, ...}}
    ignored: list[dict[str, Any]] = field(default_factory=list)

    @property
    def parsed_any(self) -> bool:
        return any(a.parsed and a.format.is_checkpoint for a in self.artifacts)

    @property
    def exit_codes(self) -> dict[str, int]:
        """Both exit codes: ``{"graded": ..., "simple": ...}`` (exit-codes.md)."""
        return exit_codes(self.findings, self.parsed_any, self.fail_on)

    @property
    def exit_code(self) -> int:
        """The graded exit code (what ``grit scan`` exits with by default)."""
        return self.exit_codes[ExitPolicy.GRADED.value]

    def exit_code_for(self, policy: ExitPolicy | str = ExitPolicy.GRADED) -> int:
        """The exit code under ``policy`` (``"graded"`` or ``"simple"``)."""
        return self.exit_codes[ExitPolicy(policy).value]

    @property
    def summary(self) -> dict[str, Any]:
        """The ``--json`` document's ``summary``: files, parsed, tensors,
        quantized, findings by severity, and the summary line as ``text``."""
        from .json_format import summary

        return summary(self)

    def __repr__(self) -> str:
        s = self.summary
        by = ", ".join(f"{n} {k}" for k, n in s["findings"].items() if n)
        return (f"Report(roots={self.roots!r}, files={s['files']}, "
                f"findings={len(self.findings)}{f' ({by})' if by else ''}, "
                f"exit_codes={self.exit_codes})")

    def by_severity(self) -> dict[Severity, list[Finding]]:
        out: dict[Severity, list[Finding]] = {s: [] for s in Severity}
        for f in self.findings:
            out[f.severity].append(f)
        return out

    def to_json(self, lazy: bool = False) -> dict[str, Any]:
        """The ``--json`` document (docs/json-report.md).  With ``lazy``,
        each artifact's ``tensors`` is a read-only sequence whose records are
        built when iterated (``json_format.dump`` writes it as it goes)."""
        from .json_format import to_json

        return to_json(self, lazy)


def ignored_counts(hidden: list[tuple[str, list[Finding]]]) -> list[dict[str, Any]]:
    """``Report.ignored`` from (what hid them, the findings hidden): kinds
    most frequent first."""
    out: list[dict[str, Any]] = []
    for by, fs in hidden:
        if not fs:
            continue
        counts: dict[str, int] = {}
        for f in fs:
            counts[f.kind.value] = counts.get(f.kind.value, 0) + 1
        kinds = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        out.append({"by": by, "count": len(fs), "kinds": kinds})
    return out


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.severity.rank, f.path, f.kind.value,
                                           f.tensor or "", f.message))


def from_scan(scan: ScanInput, findings: list[Finding], messages: list[str] | None = None
              ) -> Report:
    skipped = [{"path": str(i.detail.get("path", "")), "reason": i.message,
                "kind": str(i.detail.get("kind", "other"))} for i in scan.skipped]
    return Report(roots=list(scan.roots), deep=scan.deep, artifacts=list(scan.artifacts),
                  findings=sort_findings(findings), skipped=skipped,
                  messages=list(messages or []),
                  declared={k: {x: y for x, y in v.items() if x not in ("raw", "all")}
                            for k, v in scan.declared.items()})
