"""The summary every output format ends with, and the next step.

"Found 7 findings: 1 structural, 3 disagreements, 3 warnings in 3 of 3
files", what was not audited, what was ignored, and the one command to run
next (the ``grit explain`` a finding suggests, or ``grit rule KIND`` for the
most serious finding).  Every renderer imports this module; it imports
none of them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..artifact import Artifact, Format
from ..rules.finding import Finding, Severity

if TYPE_CHECKING:
    from .report import Report


def listed(report: Report) -> list[Artifact]:
    """The artifacts a report lists: configs and manifests (metadata, not
    artifacts) only when they could not be read."""
    return [a for a in report.artifacts
            if a.format not in (Format.CONFIG, Format.MANIFEST) or not a.parsed]


_NOUN = {Severity.STRUCTURAL: ("structural", "structural"),
         Severity.DISAGREEMENT: ("disagreement", "disagreements"),
         Severity.WARNING: ("warning", "warnings"),
         Severity.INFO: ("info", "info")}


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def files_total(report: Report) -> int:
    return len(listed(report))


def summary_line(report: Report) -> str:
    """``Found 7 findings: 1 structural, 3 disagreements, 3 warnings in 3 of 5 files``
    (findings on folders, models or paths that were not read are counted
    apart: ``... in 4 of 4 files and on 1 other path``), then the weight
    files that were not audited, by name (``; not audited:
    pytorch_model.bin (pickle) (audit pickles with ...)``)."""
    files = {a.path for a in listed(report)}
    total = len(files)
    fs = report.findings
    if not fs:
        if not total:
            return "No checkpoint found: no file was read" + _not_audited_text(report)
        return f"No findings in {_plural(total, 'file', 'files')}" + _not_audited_text(report)
    counts = Counter(f.severity for f in fs)
    parts = [_plural(counts[s], *_NOUN[s]) for s in Severity if counts[s]]
    # files are counted as files: a finding on a folder or a model (the
    # quantizations listing) or on a path that was not read is told apart
    paths = {f.path for f in fs}
    on_files = len(paths & files)
    metadata = {a.path for a in report.artifacts} - files  # configs and manifests
    extra = [_plural(n, *what) for n, what in (
        (len((paths - files) & metadata), ("config or manifest file",
                                           "config or manifest files")),
        (len(paths - files - metadata), ("other path", "other paths"))) if n]
    if not total:
        where = "; no file was read"
    elif on_files or not extra:
        where = f" in {on_files} of {_plural(total, 'file', 'files')}"
        where += "".join(f" and on {e}" for e in extra)
    else:
        where = f" on {' and '.join(extra)} ({_plural(total, 'file', 'files')} read)"
    return (f"Found {_plural(len(fs), 'finding', 'findings')}: {', '.join(parts)}{where}"
            + _not_audited_text(report))


NOT_AUDITED_SHOWN = 3  # unaudited weight files a summary line names
PICKLE_SCANNER = "a pickle scanner such as modelscan or fickling"
_WEIGHT_KIND = {"pickle": "pickle", "other_weights": "other weights format"}


def not_audited(report: Report) -> list[dict[str, str]]:
    """Weight files the scan skipped because they are not safetensors or
    GGUF (pickles, .pt, .bin, .onnx, ...): ``{"path", "kind"}`` each."""
    return [{"path": s["path"], "kind": s["kind"]} for s in report.skipped
            if s.get("kind") in _WEIGHT_KIND]


def _not_audited_text(report: Report) -> str:
    items = not_audited(report)
    if not items:
        return ""
    shown = ", ".join(f"{i['path']} ({_WEIGHT_KIND[i['kind']]})"
                      for i in items[:NOT_AUDITED_SHOWN])
    more = (f" and {len(items) - NOT_AUDITED_SHOWN} more" if len(items) > NOT_AUDITED_SHOWN
            else "")
    pickles = any(i["kind"] == "pickle" for i in items)
    return (f"; not audited: {shown}{more}"
            + (f" (audit pickles with {PICKLE_SCANNER})" if pickles else ""))


def ignored_lines(report: Report) -> list[str]:
    """``12 findings ignored by grit.toml: 10 inferred_descriptor, 2
    size_mismatch``: one line per option or config file that hid findings,
    so a verdict changed by configuration always says so."""
    lines = []
    for g in report.ignored:
        kinds = ", ".join(f"{n} {k}" for k, n in g["kinds"].items())
        lines.append(f"{_plural(g['count'], 'finding', 'findings')} ignored by {g['by']}: "
                     f"{kinds}")
    return lines


def next_step(report: Report) -> str | None:
    """What to run next: the exact command a finding of the most serious class
    suggests (``grit explain ...``), else ``grit rule KIND`` for the first one."""
    fs = report.findings
    if not fs:
        return None
    worst = min(f.severity.rank for f in fs)
    for f in fs:
        fix = f.detail.get("suggested_fix")
        if f.severity.rank == worst and isinstance(fix, str) and fix.startswith("grit "):
            return fix
    return f"grit rule {fs[0].kind.value}"


def statistics(findings: list[Finding]) -> list[dict[str, Any]]:
    """Counts per kind, most frequent first (as ``ruff --statistics``)."""
    counts = Counter((f.code, f.kind.value, f.severity.value) for f in findings)
    return [{"code": c, "kind": k, "severity": s, "count": n}
            for (c, k, s), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))]
